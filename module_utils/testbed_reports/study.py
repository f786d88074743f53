# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tables in a study's shape: a pivot (a parameter's values as rows, the variants as columns) and a
ranking of the variants per metric with the significance of each step between neighbours.

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md). Spec keys:

* ``report.pivots``: ``[{title, metric, rows: <parameter name>, where, notes, reference}]``: one
  table per item, a row per value of the parameter ``rows`` (e.g. the rate; ``repetition``: a row
  per repetition, each run shown), a column per variant
  (e.g. the scheduler) with mean ± half-width of the CI (n); ``reference`` ``{label, values: {row
  value: {variant: number}}}`` adds the study's cell under each measured one.
* ``report.ranking``: ``{metrics: [names], by: <parameter name or null>, where, title}``: per
  metric (and value of ``by``), the variants ordered best first by their mean (direction from
  ``report.higher_is_better``), each with the Welch test against the one ranked just above it; a
  final table gives each variant's mean rank over the values of ``by``.
"""

from ansible.module_utils.testbed_reports.base import CONFIDENCE, ReportError
from ansible.module_utils.testbed_reports.derived import finite_values, tool_sentence, used_docs, variant_order
from ansible.module_utils.testbed_reports.format import fmt_mean_ci, fmt_num, fmt_p, welch
from ansible.module_utils.testbed_reports.load import matches
from ansible.module_utils.testbed_reports.model import json_key, value_label
from ansible.module_utils.testbed_stats import core as stats


def _check_where(where, what):
    if where is None:
        return {}
    if not isinstance(where, dict):
        raise ReportError(f"{what} must be a mapping of parameter or variant to a value or a list of values")
    return where


def check_pivots(pivots):
    """``report.pivots`` normalised; ReportError naming the bad item."""
    if pivots is None:
        return []
    if not isinstance(pivots, list):
        raise ReportError(f"report.pivots must be a list of {{title, metric, rows}}, got {pivots!r}")
    out = []
    for number, item in enumerate(pivots):
        what = f"report.pivots[{number}]"
        if not isinstance(item, dict) or not isinstance(item.get("metric"), str) or not isinstance(item.get("rows"), str):
            raise ReportError(f"{what} must be a mapping with a metric name and rows (a parameter name)")
        reference = item.get("reference")
        if reference is not None and (not isinstance(reference, dict) or not isinstance(reference.get("values"), dict)):
            raise ReportError(f"{what}.reference must be {{label, values: {{row value: {{variant: number}}}}}}")
        notes = item.get("notes") or []
        if not isinstance(notes, list):
            raise ReportError(f"{what}.notes must be a list of sentences")
        out.append({"title": str(item.get("title") or f"{item['metric']}: {item['rows']} x variant"),
                    "metric": item["metric"], "rows": item["rows"], "notes": [str(n) for n in notes],
                    "where": _check_where(item.get("where"), f"{what}.where"), "reference": reference})
    return out


def check_ranking(ranking):
    """``report.ranking`` normalised (None when absent); ReportError naming the bad key."""
    if ranking is None:
        return None
    what = "report.ranking"
    if not isinstance(ranking, dict) or not isinstance(ranking.get("metrics"), list) or not ranking["metrics"] \
            or not all(isinstance(m, str) for m in ranking["metrics"]):
        raise ReportError(f"{what} must be a mapping with a non-empty list of metric names")
    by = ranking.get("by")
    if by is not None and not isinstance(by, str):
        raise ReportError(f"{what}.by must be a parameter name or null")
    return {"metrics": list(ranking["metrics"]), "by": by, "where": _check_where(ranking.get("where"), f"{what}.where"),
            "title": str(ranking.get("title") or "Ranking of the variants")}


def group_docs(docs, by):
    """{(variant, value of `by` as a JSON key): docs}, and the values of `by` in sorted order."""
    groups, values = {}, {}
    for doc in docs:
        value = None if not by else doc.get("repetition") if by == "repetition" else doc["parameters"].get(by)
        values.setdefault(json_key(value), value)
        groups.setdefault((doc["variant"], json_key(value)), []).append(doc)
    order = sorted(values, key=lambda k: (not isinstance(values[k], (int, float)), values[k] if isinstance(
        values[k], (int, float)) else str(values[k])))
    return groups, [(k, values[k]) for k in order]


def pivot_blocks(run, docs, pivot, units, include_invalid, tools=None):
    """One table in the study's shape: a row per value of pivot['rows'], a column per variant."""
    used = [d for d in used_docs(docs, include_invalid) if matches(d, pivot["where"])]
    groups, row_values = group_docs(used, pivot["rows"])
    variants = variant_order(run, used)
    metric, unit = pivot["metric"], units.get(pivot["metric"], "")
    reference = pivot["reference"] or {}
    ref_values = reference.get("values") or {}
    text = ("Rows: `{}`; columns: the variants; cells: mean \u00b1 half-width of the {:.0f} % CI (number of "
            "values) of `{}`{}.").format(pivot["rows"], CONFIDENCE * 100, metric, f" ({unit})" if unit else "")
    if ref_values:
        text += " Below each measured cell, in brackets: {}.".format(reference.get("label") or "the reference")
    sentence = tool_sentence(used, tools or {}, [metric])
    blocks = [("h", 2, pivot["title"]), ("p", f"{text} {sentence}".strip())]
    rows = []
    for key, value in row_values:
        line = [value_label(value)]
        refs = ref_values.get(str(value)) or ref_values.get(value) or {}
        for variant in variants:
            values = finite_values(groups.get((variant, key), []), metric)
            cell = fmt_mean_ci(stats.summary(values, confidence=CONFIDENCE)) if values else "\u2014"
            if variant in refs:
                cell += " [{}]".format(fmt_num(refs[variant], refs[variant]))
            line.append(cell)
        rows.append(line)
    blocks.append(("table", [pivot["rows"]] + variants, rows) if rows else ("p", "No point has this metric."))
    blocks.extend(_unmeasured_reference(reference, {str(value) for _key, value in row_values}, pivot["rows"]))
    blocks.extend(("p", note) for note in pivot["notes"])
    return blocks


def _unmeasured_reference(reference, measured_rows, rows_name):
    """The reference's rows that no point measured (e.g. the study's rates on a lab scaled down) as a
    table of their own, in the study's shape: a row per value, a column per variant it gives."""
    values = {str(k): v for k, v in (reference.get("values") or {}).items() if str(k) not in measured_rows}
    if not values:
        return []
    columns = []
    for cells in values.values():
        columns.extend(v for v in cells if v not in columns)
    keys = sorted(values, key=lambda k: (_number(k) is None, _number(k) or 0, k))
    rows = [[key] + [fmt_num(values[key][v], values[key][v]) if v in values[key] else "\u2014" for v in columns]
            for key in keys]
    label = reference.get("label") or "the reference"
    return [("p", f"{label[:1].upper()}{label[1:]} at the values of `{rows_name}` not measured here, as given:"),
            ("table", [rows_name] + columns, rows)]


def _number(text):
    try:
        return float(text)
    except ValueError:
        return None


def rank(docs, metric, higher_is_better):
    """Variants ordered best first by the mean of ``metric`` in ``docs``: [{variant, summary, values,
    p_value, significance}] where the test is against the variant ranked just above (None for the first)."""
    by_variant = {}
    for doc in docs:
        by_variant.setdefault(doc["variant"], []).append(doc)
    ranked = []
    for variant, here in by_variant.items():
        values = finite_values(here, metric)
        if values:
            ranked.append({"variant": variant, "values": values,
                           "summary": stats.summary(values, confidence=CONFIDENCE)})
    ranked.sort(key=lambda r: (-r["summary"]["mean"] if higher_is_better else r["summary"]["mean"], r["variant"]))
    for above, row in zip([None] + ranked, ranked):
        row["p_value"], row["significance"] = (None, "\u2014") if above is None else welch(row["values"], above["values"])[:2]
    # equal means share their places: shown as the first of them with "=", counted as their average
    start = 0
    while start < len(ranked):
        end = start
        while end + 1 < len(ranked) and ranked[end + 1]["summary"]["mean"] == ranked[start]["summary"]["mean"]:
            end += 1
        for row in ranked[start:end + 1]:
            row["place"] = "{}{}".format(start + 1, "=" if end > start else "")
            row["place_value"] = (start + end) / 2 + 1
        start = end + 1
    return ranked


def ranking_blocks(run, docs, ranking, higher_is_better, units, include_invalid):
    """Per metric (and value of `by`) the variants best first, the step to each from the one above
    tested; then the mean rank of each variant over the values of `by`."""
    used = [d for d in used_docs(docs, include_invalid) if matches(d, ranking["where"])]
    by = ranking["by"]
    groups, by_values = group_docs(used, by)
    blocks = [("h", 2, ranking["title"]),
              ("p", "Best first by the mean (equal means share a place: 3= ; the mean place counts them as the "
                    "average of the places they share); p = two-sided Welch t test of each variant against the one "
                    "ranked just above it, so a run of \"no\" means those places are not told apart by this run.")]
    mean_ranks = {}
    for metric in ranking["metrics"]:
        if metric not in higher_is_better:
            raise ReportError(f"report.ranking.metrics: {metric!r} has no direction in report.higher_is_better")
        unit = units.get(metric, "")
        table = []
        for key, value in by_values:
            here = [d for (v, k), ds in groups.items() if k == key for d in ds]
            for first, row in enumerate(rank(here, metric, higher_is_better[metric])):
                mean_ranks.setdefault((metric, row["variant"]), []).append(row["place_value"])
                table.append(([value_label(value)] if by else []) + [
                    row["place"], row["variant"], fmt_mean_ci(row["summary"]),
                    "\u2014" if first == 0 else (fmt_p(row["p_value"]) if row["p_value"] is not None else "n/a"),
                    row["significance"]])
        direction = "higher is better" if higher_is_better[metric] else "lower is better"
        blocks.append(("h", 3, "`{}`{} \u2014 {}".format(metric, f" ({unit})" if unit else "", direction)))
        blocks.append(("table", ([by] if by else []) + ["place", "variant", "mean", "p vs the place above", "significant"],
                       table) if table else ("p", "No point has this metric."))
    if by and len(by_values) > 1 and mean_ranks:
        variants = [v for v in variant_order(run, used) if any((m, v) in mean_ranks for m in ranking["metrics"])]
        rows = []
        for variant in variants:
            cells = []
            for metric in ranking["metrics"]:
                places = mean_ranks.get((metric, variant))
                cells.append("{:.1f} ({} of {})".format(sum(places) / len(places), len(places), len(by_values))
                             if places else "\u2014")
            rows.append([variant] + cells)
        rows.sort(key=lambda r: [float(c.split()[0]) if c != "\u2014" else float("inf") for c in r[1:]])
        blocks.append(("h", 3, f"Mean place over the values of `{by}`"))
        blocks.append(("table", ["variant"] + [f"`{m}`" for m in ranking["metrics"]], rows))
    return blocks
