# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's content as a small block model (headings, tables, lists), rendered to Markdown and HTML.

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

from ansible.module_utils.testbed_reports.base import CLIP_NOTE, CONFIDENCE, INVALID_MARK, SIGNIFICANT_MARK
from ansible.module_utils.testbed_reports.derived import (
    finite_values,
    overall_blocks,
    reference_blocks,
    relative_blocks,
)
from ansible.module_utils.testbed_reports.findings import findings_blocks
from ansible.module_utils.testbed_reports.format import (
    fmt_cell,
    fmt_num,
    fmt_p,
    is_clipped,
    metric_title,
    shorten,
    welch,
)
from ansible.module_utils.testbed_reports.model import value_label
from ansible.module_utils.testbed_reports.study import pivot_blocks, ranking_blocks
from ansible.module_utils.testbed_results.provenance import describe as describe_provenance
from ansible.module_utils.testbed_stats import core as stats


class Section:
    """One part of the report: a Model of the documents matching ``where`` and its settings."""

    def __init__(self, title, model, where, baseline, higher_is_better, notes=(), prefix=""):
        self.title = title
        self.model = model
        self.where = where
        self.baseline = baseline
        self.higher_is_better = higher_is_better
        self.notes = list(notes)
        self.prefix = prefix
        self.charts = {}


def build_blocks(run, docs, faults, spec, sections, notes):
    blocks = []
    add = blocks.append
    add(("h", 1, spec["title"]))
    measured = docs + faults
    n_invalid = sum(1 for d in docs if not d["valid"])
    points = f"points: {len(measured)} measured, {len(docs) - n_invalid} valid, {n_invalid} invalid"
    if faults:
        points += ", {} lab fault{} (not results; see Faults)".format(len(faults), "" if len(faults) == 1 else "s")
    facts = [
        "experiment: `%s`" % (run.get("experiment") or measured[0].get("experiment") or "?"),
        "run: `%s`" % (run.get("run_id") or measured[0].get("run_id") or "?"),
        points,
    ]
    plan = run.get("plan")
    if isinstance(plan, (list, dict)) and plan:
        ids_measured = {d["point_id"] for d in docs}
        ids = []
        for item in (plan.values() if isinstance(plan, dict) else plan):
            if isinstance(item, dict) and item.get("point_id"):
                ids.append(item["point_id"])
        if isinstance(plan, dict) and not ids:
            ids = list(plan)
        pending = [i for i in ids if i not in ids_measured]
        if ids:
            incomplete = " (the run is incomplete)" if pending else ""
            facts.append(f"plan: {len(ids)} points, {len(pending)} pending{incomplete}")
    started = sorted(str(d["started_at"]) for d in measured if d.get("started_at"))
    finished = sorted(str(d["finished_at"]) for d in measured if d.get("finished_at"))
    if started and finished:
        facts.append(f"measured from {started[0]} to {finished[-1]}")
    invocations = [i for i in run.get("invocations") or [] if isinstance(i, dict)]
    if invocations:
        earlier = len(invocations) - 1
        facts.append("code and command: " + describe_provenance(invocations[-1])
                     + (f" (and {earlier} earlier invocation{'s' if earlier > 1 else ''}: run.json invocations)"
                        if earlier else ""))
    include_invalid = sections[0].model.include_invalid
    if spec.get("sections") is None:
        model = sections[0].model
        facts.append("x axis: %s" % (f"`{model.x}`" if model.x else "none (one column per series)"))
        if model.dependent:
            facts.append("{} follow{} the x value".format(", ".join(f"`{d}`" for d in model.dependent),
                                                          "s" if len(model.dependent) == 1 else ""))
        if model.extra:
            facts.append("series = variant + {}".format(", ".join(f"`{e}`" for e in model.extra)))
    else:
        facts.append("sections: {}".format(", ".join(s.title for s in sections)))
    treatment = ("included in the statistics (--include-invalid)" if include_invalid
                 else "excluded from the statistics (see Verdicts)")
    facts.append(f"cells: mean \u00b1 half-width of the {CONFIDENCE * 100:.0f} % Student-t confidence interval "
                 f"(number of values); {INVALID_MARK} = the cell has invalid repetitions, {treatment}")
    add(("list", facts))
    if notes:
        add(("h", 2, "Notes"))
        add(("list", notes))
    for table in spec.get("tables") or []:
        # Tables the experiment derived itself (already formatted).
        add(("h", 2, table["title"]))
        add(("table", table["header"], table["rows"]))
        if table.get("chart_path"):
            add(("img", table["chart_path"], table["title"]))
        for note in table.get("notes") or []:
            add(("p", note))

    units = {}
    for section in sections:
        for name, unit in section.model.units.items():
            units.setdefault(name, unit)

    def clip(metric):
        return stats.non_negative_metric(metric) and all(v >= 0 for v in finite_values(docs, metric))

    if spec.get("relative"):
        blocks.extend(relative_blocks(run, docs, spec["relative"], spec.get("reference"), units, clip,
                                      include_invalid, spec["tools"]))
    if spec.get("overall_index"):
        blocks.extend(overall_blocks(run, docs, spec["overall_index"], include_invalid))
    if spec.get("reference"):
        shown = set((spec.get("relative") or {}).get("metrics") or {})
        blocks.extend(reference_blocks(run, docs, spec["reference"], units, include_invalid, shown))
    if spec.get("findings"):
        blocks.extend(findings_blocks(docs, spec["findings"], spec["higher_is_better"], units, include_invalid,
                                      spec["tools"]))
    for pivot in spec.get("pivots") or []:
        blocks.extend(pivot_blocks(run, docs, pivot, units, include_invalid, spec["tools"]))
    if spec.get("ranking"):
        blocks.extend(ranking_blocks(run, docs, spec["ranking"], spec["higher_is_better"], units, include_invalid))

    for section in sections:
        blocks.extend(_section_blocks(section, spec.get("sections") is not None))
    blocks.extend(_verdict_blocks(docs))
    if faults:
        blocks.extend(_fault_blocks(faults))
    blocks.extend(_environment_blocks(measured))
    return blocks


def _section_blocks(section, titled):
    """Tables (and charts) of one section: today's Results at level 2 without sections."""
    model = section.model
    blocks = []
    add = blocks.append
    top = 3 if titled else 2
    if titled:
        add(("h", 2, section.title))
        where = ", ".join("{} = {}".format(k, " or ".join(value_label(o) for o in v) if isinstance(v, list) else value_label(v))
                          for k, v in section.where.items()) or "all points"
        facts = [f"points: {where} ({len(model.docs)} point{'' if len(model.docs) == 1 else 's'})",
                 "x axis: %s" % (f"`{model.x}`" if model.x else "none (one column per series)")]
        if model.dependent:
            facts.append("{} follow{} the x value".format(", ".join(f"`{d}`" for d in model.dependent),
                                                          "s" if len(model.dependent) == 1 else ""))
        if model.extra:
            facts.append("series = variant + {}".format(", ".join(f"`{e}`" for e in model.extra)))
        add(("list", facts + section.notes + model.notes))
        if not model.docs:
            add(("p", "No point matches this section yet."))
            return blocks
    else:
        add(("h", 2, "Results"))
    xs = model.x_values
    header = ["series"] + ([value_label(x) if model.x else "all points" for x in xs])
    if model.x:
        header[0] = f"series \\ {model.x}"
    if not model.metrics:
        add(("p", "No numeric metric to tabulate."))
    for metric in model.metrics:
        add(("h", 3, metric_title(model, metric)))
        rows, clipped = [], False
        for skey in model.series:
            cells = [model.cell(skey, x, metric) for x in xs]
            clipped = clipped or any(c and is_clipped(c["summary"], model.clip[metric]) for c in cells)
            rows.append([model.label(skey)] + [fmt_cell(c, model.clip[metric]) for c in cells])
        add(("table", header, rows))
        if clipped:
            add(("p", CLIP_NOTE))
        if metric in section.charts:
            add(("img", section.charts[metric], metric))

    if model.text_metrics:
        add(("h", 3, "Non-numeric metrics"))
        for metric in model.text_metrics:
            add(("p", f"{metric_title(model, metric)}: distinct values per cell."))
            rows = []
            for skey in model.series:
                row = [model.label(skey)]
                for x in xs:
                    present = [d["metrics"][metric] for d in model.cell_docs(skey, x)
                               if d["metrics"].get(metric) is not None]
                    values = sorted({value_label(value) for value in present})
                    row.append(", ".join(values))
                rows.append(row)
            add(("table", header, rows))

    if model.x_numeric:
        add(("h", top, f"Highest valid `{model.x}` per series"))
        add(("p", f"The largest `{model.x}` at which every repetition is valid, and the smallest at which one is not."))
        rows = []
        for skey in model.series:
            good, bad = [], []
            for x in xs:
                cell_docs = model.cell_docs(skey, x)
                if not cell_docs or x is None:
                    continue
                (good if all(d["valid"] for d in cell_docs) else bad).append(x)
            rows.append([model.label(skey), value_label(max(good)) if good else "none",
                         value_label(min(bad)) if bad else "none",
                         ", ".join(value_label(x) for x in sorted(good + bad))])
        add(("table", ["series", f"highest valid {model.x}", f"lowest {model.x} with invalid repetitions",
                       f"{model.x} tested"], rows))

    if section.baseline and section.baseline in model.variants and (not titled or len(model.variants) > 1):
        blocks.extend(_baseline_blocks(model, section.baseline, section.higher_is_better, top))
    return blocks


def _baseline_blocks(model, base, hib, top=2):
    blocks = [("h", top, f"Comparison with baseline `{base}`"),
              ("p", ("Change = (mean \u2212 baseline mean) / baseline mean \u00d7 100; p = two-sided Welch t test "
                     f"(needs two values on each side and some spread); {SIGNIFICANT_MARK} = significant at "
                     "\u03b1 = 0.05; not testable = a side has one value or both sides are constant."))]
    pairs = []
    for skey in model.series:
        if skey[0] == base:
            continue
        bkey = (base, skey[1])
        if bkey in model.series_info:
            pairs.append((skey, bkey))
    if not pairs:
        blocks.append(("p", "No series to compare with the baseline."))
        return blocks
    for metric in model.metrics:
        direction = hib.get(metric)
        header = ["series", model.x or "x", "baseline", "value", "change %", "p", "significant"]
        if direction is not None:
            header.append("verdict (%s is better)" % ("higher" if direction else "lower"))
        rows = []
        for skey, bkey in pairs:
            for x in model.x_values:
                a, b = model.cell(skey, x, metric), model.cell(bkey, x, metric)
                if not a or not b or not a["summary"] or not b["summary"]:
                    continue
                ma, mb = a["summary"]["mean"], b["summary"]["mean"]
                change = "" if mb == 0 else f"{stats.pct_change(ma, mb):+.2f}"
                p, sig, _test = welch(a["values"], b["values"])
                row = [model.label(skey), value_label(x) if model.x else "", fmt_num(mb, mb), fmt_num(ma, ma),
                       change, fmt_p(p) if p is not None else "n/a", sig]
                if direction is not None:
                    if sig == SIGNIFICANT_MARK:
                        row.append("better" if (ma > mb) == bool(direction) else "worse")
                    elif p is not None:
                        row.append("no significant difference")
                    else:
                        row.append(sig)
                rows.append(row)
        blocks.append(("h", top + 1, metric_title(model, metric)))
        if rows:
            blocks.append(("table", header, rows))
        else:
            blocks.append(("p", "No cell has values on both sides."))
    return blocks


def _point_label(doc):
    params = ", ".join(f"{k}={value_label(v)}" for k, v in sorted(doc["parameters"].items()))
    return "`{}` ({}{}, repetition {})".format(
        doc["point_id"], doc["variant"] or "no variant", ", " + params if params else "",
        value_label(doc.get("repetition")))


def _reasons(doc):
    return [str(r) for r in (doc.get("reasons") or [])] or ["no reason recorded"]


def _primary(doc):
    """The first reason, shortened, and how many more there are."""
    reasons = _reasons(doc)
    text = shorten(reasons[0])
    if len(reasons) > 1:
        text += " (+{} more reason{})".format(len(reasons) - 1, "" if len(reasons) == 2 else "s")
    return text, len(reasons) > 1 or text != reasons[0]


def _verdict_blocks(docs):
    blocks = [("h", 2, "Verdicts")]
    invalid = [d for d in docs if not d["valid"]]
    if not invalid:
        blocks.append(("p", f"All {len(docs)} points are valid."))
    else:
        blocks.append(("p", f"{len(invalid)} of {len(docs)} points are invalid:"))
        items, full = [], []
        for doc in invalid:
            text, more = _primary(doc)
            items.append("{} {}: {}".format(INVALID_MARK, _point_label(doc), text))
            if more:
                full.append((doc, _reasons(doc)))
        blocks.append(("list", items))
        if full:
            inner = []
            for doc, reasons in full:
                inner.append(("p", _point_label(doc) + ":"))
                inner.append(("list", reasons))
            blocks.append(("details", "Full reasons of the invalid points", inner))
    warned = {}
    for doc in docs:
        for warning in doc.get("warnings") or []:
            warned.setdefault(str(warning), []).append(doc["point_id"])
    if warned:
        blocks.append(("h", 3, "Warnings"))
        blocks.append(("list", ["{} ({} point{}: {})".format(
            text, len(ids), "" if len(ids) == 1 else "s", ", ".join(f"`{i}`" for i in ids))
            for text, ids in warned.items()]))
    return blocks


def _fault_blocks(faults):
    blocks = [("h", 2, "Faults (re-measured)"),
              ("p", ("{} failed because of the lab, not the system under test (a lab fault): never in the "
                     "tables, charts or statistics; the plan measures {} again.").format(
                  "1 point" if len(faults) == 1 else f"{len(faults)} points", "it" if len(faults) == 1 else "them"))]
    items, inner = [], []
    for doc in faults:
        text, _more = _primary(doc)
        items.append("{}: {}".format(_point_label(doc), text))
        inner.append(("p", _point_label(doc) + ":"))
        evidence = doc.get("evidence")
        lines = list(_reasons(doc))
        if evidence not in (None, "", [], {}):
            if isinstance(evidence, dict):
                flat = {}
                flatten_dotted(evidence, "", flat)
                lines += [f"evidence {k}: {v}" for k, v in flat.items()]
            elif isinstance(evidence, list):
                lines += [f"evidence: {value_label(e)}" for e in evidence]
            else:
                lines.append(f"evidence: {value_label(evidence)}")
        inner.append(("list", lines))
    blocks.append(("list", items))
    blocks.append(("details", "Reasons and evidence of the faults", inner))
    return blocks


def flatten_dotted(value, prefix, out):
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            flatten_dotted(value[key], f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        out[prefix] = ", ".join(value_label(v) for v in value)
    else:
        out[prefix] = value_label(value)


def _environment_blocks(docs):
    blocks = [("h", 2, "Environment")]
    seen = {}
    with_env = 0
    for doc in docs:
        env = doc.get("environment")
        if not isinstance(env, dict) or not env:
            continue
        with_env += 1
        flat = {}
        # The invocation is in the report's header (code and command), not a fact of the machine.
        controller = env.get("controller")
        if isinstance(controller, dict) and "provenance" in controller:
            env = dict(env, controller={k: v for k, v in controller.items() if k != "provenance"})
        flatten_dotted(env, "", flat)
        for key, value in flat.items():
            seen.setdefault(key, {}).setdefault(value, 0)
            seen[key][value] += 1
    if not seen:
        blocks.append(("p", "No point document records its environment."))
        return blocks
    blocks.append(("p", (f"As recorded in the point documents ({with_env} of {len(docs)} carry an environment); "
                         "a fact with several values lists each with its number of points.")))
    rows = []
    for key in sorted(seen):
        values = seen[key]
        if len(values) == 1:
            (value, count), = values.items()
            rows.append([key, value, "all" if count == with_env else str(count)])
        else:
            for value in sorted(values):
                rows.append([key, value, str(values[value])])
    blocks.append(("table", ["fact", "value", "points"], rows))
    return blocks
