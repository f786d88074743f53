# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A study's stated findings beside this run's: a table "finding | the study | this run | computed from".

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md). Where a
study gives no table of numbers, only findings in words and ranges ("150-400 conn/s achieved",
"wrr is best", "NAT roughly doubles the latency", "~11.2-11.8 GB/s everywhere"), this puts each of
them beside the same quantity computed from this run's points, so the reader compares them row by
row. Spec key ``report.findings``: ``{title, label, notes, items: [item]}``, an item being
``{finding, study, value, metric, where, variant, baseline, by}``:

* ``finding``: what the row is about; ``study``: the study's figure as it gives it (text);
* ``value``: how this run's figure is computed from ``metric`` over the valid points matching
  ``where``: ``range`` (lowest and highest mean of a variant, one mean per variant and metric;
  ``metric`` may be a list; with ``by``, one mean per variant and value of that parameter),
  ``max`` / ``min`` / ``sum`` / ``mean`` (over the points' values),
  ``best`` (the variant with the best mean place, ranked per value of the parameter ``by``;
  the direction from ``report.higher_is_better``), ``change`` (the mean of ``variant`` against the
  mean of ``baseline`` in %, Welch-tested) or ``valid`` (valid points of all points matching ``where``).
"""

from ansible.module_utils.testbed_reports.base import CONFIDENCE, SIGNIFICANT_MARK, ReportError
from ansible.module_utils.testbed_reports.derived import finite_values, tool_sentence, used_docs
from ansible.module_utils.testbed_reports.format import fmt_num, fmt_p, welch
from ansible.module_utils.testbed_reports.load import matches
from ansible.module_utils.testbed_reports.model import value_label
from ansible.module_utils.testbed_reports.study import group_docs, rank
from ansible.module_utils.testbed_stats import core as stats

KINDS = ("range", "max", "min", "sum", "mean", "best", "change", "valid")
NOT_MEASURED = "\u2014 (not measured in this run)"


def _mean(values):
    return stats.summary(values)["mean"]


def check_findings(findings):
    """``report.findings`` normalised (None when absent); ReportError naming the bad item."""
    if findings is None:
        return None
    what = "report.findings"
    if not isinstance(findings, dict) or not isinstance(findings.get("items"), list) or not findings["items"]:
        raise ReportError(f"{what} must be {{title, label, items: [{{finding, study, value, metric, ...}}]}}")
    items = []
    for number, item in enumerate(findings["items"]):
        here = f"{what}.items[{number}]"
        if not isinstance(item, dict) or not isinstance(item.get("finding"), str) or item.get("study") is None:
            raise ReportError(f"{here} must be a mapping with a finding (text) and the study's figure (study)")
        kind = item.get("value")
        if kind not in KINDS:
            raise ReportError(f"{here}.value must be one of {', '.join(KINDS)}, got {kind!r}")
        metric = item.get("metric")
        metrics = metric if isinstance(metric, list) else [metric] if metric is not None else []
        if kind != "valid" and (not metrics or not all(isinstance(m, str) for m in metrics)):
            raise ReportError(f"{here}.metric must be a metric name (a list of names for value: range)")
        if len(metrics) > 1 and kind != "range":
            raise ReportError(f"{here}.metric: only value: range takes a list of metrics")
        if kind == "change" and not (isinstance(item.get("variant"), str) and isinstance(item.get("baseline"), str)):
            raise ReportError(f"{here}: value: change needs variant and baseline (variant names)")
        if item.get("by") is not None and (kind not in ("best", "range") or not isinstance(item["by"], str)):
            raise ReportError(f"{here}.by must be a parameter name (value: best or range only)")
        where = item.get("where") or {}
        if not isinstance(where, dict):
            raise ReportError(f"{here}.where must be a mapping of parameter or variant to a value or a list of values")
        items.append({"finding": item["finding"], "study": str(item["study"]), "value": kind, "metrics": metrics,
                      "where": where, "variant": item.get("variant"), "baseline": item.get("baseline"),
                      "by": item.get("by")})
    notes = findings.get("notes") or []
    if not isinstance(notes, list):
        raise ReportError(f"{what}.notes must be a list of sentences")
    return {"title": str(findings.get("title") or "The study's findings beside this run's"),
            "label": str(findings.get("label") or "the study"), "items": items, "notes": [str(n) for n in notes]}


def _with_unit(number, unit, whole=False):
    """``number unit``; a count (``whole``: max, min or sum of integers) without decimals nor unit; 1/s as /s."""
    text = str(int(number)) if whole else fmt_num(number, number)
    unit = {"count": "", "1/s": "/s"}.get(unit, unit)
    return f"{text} {unit}".rstrip()


def _where_text(where):
    return "; ".join(f"{k} = {', '.join(map(value_label, v)) if isinstance(v, list) else value_label(v)}"
                     for k, v in where.items())


def _finding(item, docs, all_docs, higher_is_better, units):
    """(this run's figure, how it was computed) for one item."""
    kind, metrics = item["value"], item["metrics"]
    metric = metrics[0] if metrics else None
    unit = units.get(metric, "") if metric else ""
    if kind == "valid":
        chosen = [d for d in all_docs if matches(d, item["where"])]
        if not chosen:
            return NOT_MEASURED, "valid points of the points measured"
        return (f"{sum(1 for d in chosen if d['valid'])} of {len(chosen)} points valid",
                "the points' validity verdicts (docs/experiments.md)")
    if kind == "change":
        base = finite_values([d for d in docs if d["variant"] == item["baseline"]], metric)
        other = finite_values([d for d in docs if d["variant"] == item["variant"]], metric)
        how = f"mean `{metric}` of {item['variant']} against {item['baseline']}"
        if not base or not other or _mean(base) == 0:
            return NOT_MEASURED, how
        mean_b, mean_o = _mean(base), _mean(other)
        p_value, significance, _test = welch(other, base)
        pct = stats.pct_change(mean_o, mean_b)
        test = f"p = {fmt_p(p_value)}, significant: {significance}" if p_value is not None else f"test: {significance}"
        return (f"{pct:+.1f} % ({item['variant']} {_with_unit(mean_o, unit)} against {item['baseline']} "
                f"{_with_unit(mean_b, unit)}; n = {len(other)}/{len(base)}; {test})", how)
    if kind == "best":
        return _best(item, docs, higher_is_better)
    if kind == "range":
        groups, _values = group_docs(docs, item["by"])
        means = [_mean(v) for name in metrics for v in (finite_values(ds, name) for ds in groups.values()) if v]
        how = "lowest and highest mean of a variant{} of {}".format(
            f" at a value of `{item['by']}`" if item["by"] else "", ", ".join(f"`{m}`" for m in metrics))
        if not means:
            return NOT_MEASURED, how
        low, high = min(means), max(means)
        return f"{fmt_num(low, high)}\u2013{_with_unit(high, unit)} ({len(means)} means)", how
    values = finite_values(docs, metric)
    how = f"{kind} of `{metric}` over the points"
    if not values:
        return NOT_MEASURED, how
    number = {"max": max, "min": min, "sum": sum, "mean": _mean}[kind](values)
    whole = kind != "mean" and all(isinstance(v, int) for v in values)
    return f"{_with_unit(number, unit, whole)} ({len(values)} points)", how


def _best(item, docs, higher_is_better):
    metric, by = item["metrics"][0], item["by"]
    how = "best mean place by `{}`{}".format(metric, f" over the values of `{by}`" if by else "")
    if metric not in higher_is_better:
        raise ReportError(f"report.findings: {metric!r} has no direction in report.higher_is_better")
    groups, by_values = group_docs(docs, by)
    places, leads = {}, []
    for key, _value in by_values:
        ranked = rank([d for (_v, k), ds in groups.items() if k == key for d in ds], metric, higher_is_better[metric])
        for row in ranked:
            places.setdefault(row["variant"], []).append(row["place_value"])
        if len(ranked) > 1:
            leads.append(ranked[1]["significance"])
    if not places:
        return NOT_MEASURED, how
    mean_place = {v: sum(p) / len(p) for v, p in places.items()}
    top = min(mean_place.values())
    best = sorted(v for v, p in mean_place.items() if p == top)
    text = "{} (mean place {:.1f}{})".format(" = ".join(best), top, f" over {len(by_values)} values of {by}" if by else "")
    testable = [mark for mark in leads if mark in (SIGNIFICANT_MARK, "no")]
    if testable:
        text += "; the first's lead over the second significant in {} of {}{}".format(
            testable.count(SIGNIFICANT_MARK), len(testable),
            f" ({len(leads) - len(testable)} not testable)" if len(testable) < len(leads) else "")
    elif leads:
        text += "; the lead over the second not testable (one value per variant: more repetitions tell them apart)"
    return text, how


def findings_blocks(docs, findings, higher_is_better, units, include_invalid, tools=None):
    """The findings table: a row per item."""
    used = used_docs(docs, include_invalid)
    rows = []
    for item in findings["items"]:
        chosen = [d for d in used if matches(d, item["where"])]
        ours, how = _finding(item, chosen, docs, higher_is_better, units)
        if item["where"]:
            how += f" ({_where_text(item['where'])})"
        sentence = tool_sentence(chosen, tools or {}, item["metrics"])
        if sentence:
            how += f"; {sentence[:1].lower()}{sentence[1:-1]}"
        rows.append([item["finding"], item["study"], ours, how])
    blocks = [("h", 2, findings["title"]),
              ("p", "Each row: a finding as {} states it, and the same quantity computed from this run's valid "
                    "points (how: the last column; tests: two-sided Welch at {:.0f} % confidence; every cell is in "
                    "the sections below).".format(findings["label"], CONFIDENCE * 100)),
              ("table", ["finding", findings["label"], "this run", "computed from"], rows)]
    blocks.extend(("p", note) for note in findings["notes"])
    return blocks
