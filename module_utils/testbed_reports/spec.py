# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checking a report specification (run.json's report key) before anything is rendered.

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

from ansible.module_utils.testbed_reports.base import ReportError
from ansible.module_utils.testbed_reports.findings import check_findings
from ansible.module_utils.testbed_reports.model import is_finite_number, name_list
from ansible.module_utils.testbed_reports.study import check_pivots, check_ranking


def _check_tables(tables):
    """``report.tables``: a list of {title, header: [..], rows: [[..]], notes: [..]} (cells as text)."""
    if tables is None:
        return
    if not isinstance(tables, list):
        raise ReportError(f"report.tables must be a list of {{title, header, rows}}, got {tables!r}")
    for number, table in enumerate(tables):
        where = f"report.tables[{number}]"
        if not isinstance(table, dict) or not isinstance(table.get("title"), str) or not table["title"].strip():
            raise ReportError(f"{where} must be a mapping with a non-empty title, header and rows")
        header, rows = table.get("header"), table.get("rows")
        if not isinstance(header, list) or not header:
            raise ReportError(f"{where}.header must be a non-empty list of column names")
        if not isinstance(rows, list) or any(not isinstance(r, list) or len(r) != len(header) for r in rows):
            raise ReportError(f"{where}.rows must be a list of rows with {len(header)} cells each (like the header)")
        if table.get("notes") is not None and not isinstance(table["notes"], list):
            raise ReportError(f"{where}.notes must be a list of sentences")
        _check_table_chart(table.get("chart"), f"{where}.chart")


def _check_table_chart(chart, where):
    """A table's optional line chart: {x_label, y_label, series: {label: [[x, y], ...]}} (y may be null)."""
    if chart is None:
        return
    series = chart.get("series") if isinstance(chart, dict) else None
    if not isinstance(series, dict) or not series:
        raise ReportError(f"{where} must be {{x_label, y_label, series: {{label: [[x, y], ...]}}}}")
    for label, points in series.items():
        if not isinstance(points, list) or not points or any(
                not isinstance(p, list) or len(p) != 2 or not is_finite_number(p[0])
                or not (p[1] is None or is_finite_number(p[1])) for p in points):
            raise ReportError(f"{where}.series[{label!r}] must be a non-empty list of [x, y] numbers (y may be null)")


def _check_where(where, what):
    if where is None:
        return {}
    if not isinstance(where, dict) or not all(isinstance(k, str) and k for k in where):
        raise ReportError(f"{what} must be a mapping key -> value (variant, a parameter or an extra field), "
                          f"got {where!r}")
    return where


def _check_hib(value, what):
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, bool) for v in value.values()):
        raise ReportError(f"{what} must be an object metric -> true/false")
    return value


def _check_sections(sections):
    if sections is None:
        return None
    if not isinstance(sections, list) or not sections:
        raise ReportError(f"report.sections must be a non-empty list of {{title, where, x, metrics}}, got {sections!r}")
    out, titles = [], set()
    for number, section in enumerate(sections):
        what = f"report.sections[{number}]"
        if not isinstance(section, dict) or not isinstance(section.get("title"), str) or not section["title"].strip():
            raise ReportError(f"{what} must be a mapping with a non-empty title")
        if section["title"] in titles:
            raise ReportError("{}.title {!r} is used twice; section titles name their charts".format(what, section["title"]))
        titles.add(section["title"])
        x = section.get("x")
        if x is not None and not isinstance(x, str):
            raise ReportError(f"{what}.x must be a parameter name or null, got {x!r}")
        out.append({"title": section["title"], "where": _check_where(section.get("where"), f"{what}.where"),
                    "x": x, "auto_x": "x" not in section, "metrics": name_list(section.get("metrics"), f"{what}.metrics"),
                    "higher_is_better": _check_hib(section.get("higher_is_better"), f"{what}.higher_is_better"),
                    "baseline_variant": section.get("baseline_variant"), "notes": section.get("notes") or []})
    return out


RELATIVE_KINDS = ("drop", "rise", "change")


def _check_relative(relative):
    if relative is None:
        return None
    what = "report.relative"
    if not isinstance(relative, dict) or not isinstance(relative.get("baseline_variant"), str):
        raise ReportError(f"{what} must be {{baseline_variant: <variant>, metrics: {{metric: drop|rise|change}}}}")
    metrics = relative.get("metrics")
    if not isinstance(metrics, dict) or not metrics or any(k not in RELATIVE_KINDS for k in metrics.values()):
        raise ReportError(f"{what}.metrics must map each metric to drop, rise or change, got {metrics!r}")
    columns = relative.get("columns") or {}
    if not isinstance(columns, dict) or not all(isinstance(c, dict) for c in columns.values()):
        raise ReportError(f"{what}.columns must map a column header to {{variant: text}}, got {columns!r}")
    notes = relative.get("notes") or []
    if not isinstance(notes, list):
        raise ReportError(f"{what}.notes must be a list of sentences")
    return {"baseline_variant": relative["baseline_variant"], "metrics": dict(metrics),
            "where": _check_where(relative.get("where"), f"{what}.where"),
            "title": relative.get("title"), "columns": columns, "notes": [str(n) for n in notes]}


def _check_overall(overall):
    if overall is None:
        return None
    what = "report.overall_index"
    if not isinstance(overall, dict) or not isinstance(overall.get("baseline_variant"), str):
        raise ReportError(f"{what} must be {{baseline_variant: <variant>, metrics: [...], higher_is_better: {{...}}}}")
    items = overall.get("metrics")
    if not isinstance(items, list) or not items:
        raise ReportError(f"{what}.metrics must be a non-empty list of metric names or {{metric, label, where}}")
    out = []
    for number, item in enumerate(items):
        if isinstance(item, str):
            item = {"metric": item}
        if not isinstance(item, dict) or not isinstance(item.get("metric"), str):
            raise ReportError(f"{what}.metrics[{number}] must be a metric name or {{metric, label, where}}")
        out.append({"metric": item["metric"], "label": str(item.get("label") or item["metric"]),
                    "where": _check_where(item.get("where"), f"{what}.metrics[{number}].where")})
    labels = [i["label"] for i in out]
    if len(set(labels)) != len(labels):
        raise ReportError(f"{what}.metrics: labels must be unique (give a label to a metric used twice)")
    hib = _check_hib(overall.get("higher_is_better"), f"{what}.higher_is_better")
    reference = overall.get("reference")
    if reference is not None and (not isinstance(reference, dict) or not all(
            isinstance(v, dict) and all(is_finite_number(r) and r > 0 for r in v.values())
            for v in reference.values())):
        raise ReportError(f"{what}.reference must map variant -> {{label: ratio > 0}}")
    return {"baseline_variant": overall["baseline_variant"], "items": out, "higher_is_better": hib,
            "where": _check_where(overall.get("where"), f"{what}.where"), "reference": reference or {},
            "title": overall.get("title")}


def _check_reference(reference):
    if reference is None:
        return None
    what = "report.reference"
    if not isinstance(reference, dict) or not isinstance(reference.get("values"), dict) or not all(
            isinstance(v, dict) and all(is_finite_number(n) for n in v.values())
            for v in reference["values"].values()):
        raise ReportError(f"{what} must be {{label: <text>, values: {{variant: {{metric: number}}}}}}")
    relative = reference.get("relative") or {}
    if not isinstance(relative, dict) or not all(
            isinstance(v, dict) and all(is_finite_number(n) for n in v.values()) for v in relative.values()):
        raise ReportError(f"{what}.relative must be {{variant: {{metric: published drop or rise in %}}}}")
    return {"label": str(reference.get("label") or "reference"), "values": reference["values"],
            "relative": relative, "where": _check_where(reference.get("where"), f"{what}.where")}


def _check_tools(tools):
    tools = tools or {}
    if not isinstance(tools, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in tools.items()):
        raise ReportError(f"report.tools must map a metric name to the tool that measures it, got {tools!r}")
    return tools


def _check_labels(labels):
    labels = labels or {}
    if not isinstance(labels, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                               for k, v in labels.items()):
        raise ReportError("report.labels must map a metric or parameter name to its words on a chart's axis "
                          f"(with the unit, e.g. {{rate: 'Requested rate (connections/s)'}}), got {labels!r}")
    return labels


def check_spec(spec):
    """Validate and normalise a report spec (a copy); raise ReportError naming the bad key."""
    spec = dict(spec)
    if spec.get("notes") is not None and not isinstance(spec["notes"], list):
        spec["notes"] = [str(spec["notes"])]
    _check_tables(spec.get("tables"))
    spec["higher_is_better"] = _check_hib(spec.get("higher_is_better"), "report.higher_is_better")
    spec["sections"] = _check_sections(spec.get("sections"))
    spec["relative"] = _check_relative(spec.get("relative"))
    spec["overall_index"] = _check_overall(spec.get("overall_index"))
    spec["reference"] = _check_reference(spec.get("reference"))
    spec["pivots"] = check_pivots(spec.get("pivots"))
    spec["ranking"] = check_ranking(spec.get("ranking"))
    spec["findings"] = check_findings(spec.get("findings"))
    spec["tools"] = _check_tools(spec.get("tools"))
    spec["labels"] = _check_labels(spec.get("labels"))
    return spec
