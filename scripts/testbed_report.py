#!/usr/bin/env python3
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render a result-store run directory into a report, or compare two runs.

    python scripts/testbed_report.py RUN_DIR [--format md,html,csv,png]
        [--x PARAM] [--metrics m1,m2] [--title T] [--baseline VARIANT] [--include-invalid]
    python scripts/testbed_report.py --compare RUN_A RUN_B [--out DIR] [--include-invalid]

Reads ``run.json`` and every ``<point-id>.json`` document in RUN_DIR (through
``testbed_results.read_run_dir``; the derived ``index.json`` is ignored) and
writes, in RUN_DIR:

* ``report.md`` / ``report.html`` - tables per metric (rows = series, columns =
  the sweep parameter, cells ``mean ± ci95 (n)``), verdicts, baseline comparison
  with Welch p-values, highest valid x per series, environment;
* ``results.csv`` (one row per point) and ``summary.csv`` (per series × x × metric);
* ``charts/<metric>.png`` (matplotlib, Agg backend; skipped with a note when
  matplotlib is missing).

The report spec comes from run.json's ``report`` key (every key optional)::

    {"x": "rate", "metrics": ["reply_rate_per_s"], "higher_is_better": {"response_ms": false},
     "baseline_variant": "native", "title": "...", "notes": ["..."],
     "tables": [{"title": "...", "header": ["a", "b"], "rows": [["1", "2"]], "notes": ["..."],
                 "chart": {"x_label": "t [s]", "y_label": "progress [%]", "series": {"zfs": [[0, 0], [3, 100]]}}}],
     "sections": [{"title": "fio", "where": {"workload": "fio"}, "x": "iodepth", "metrics": ["iops"]}],
     "relative": {"baseline_variant": "native", "metrics": {"throughput_gbps": "drop", "rtt_ms": "rise"}},
     "overall_index": {"baseline_variant": "native", "metrics": ["iops", "cpu_time_s"],
                       "higher_is_better": {"cpu_time_s": false}},
     "reference": {"label": "study (their hardware)", "values": {"docker": {"iops": 1000}}}}

``tables`` are tables an experiment derived itself (cells already formatted), each
optionally with a line ``chart`` of its own series ([[x, y]], y null = a gap);
``sections`` split a multi-workload run (``where`` filters points by variant,
parameter or ``extra`` field); ``relative``, ``overall_index`` and ``reference``
derive the studies' tables from the points.  docs/architecture.md has the
details.  Command-line options override the spec.  All statistics come from
``filter_plugins/testbed_stats.py``: one implementation of the maths.

A point whose ``verdict`` is ``fault`` (a lab fault) is never a result: it is
listed under "Faults (re-measured)" only.

Exit status: 0 report written, 2 unusable input (no points, unknown x/metric...).
"""


import argparse
import csv
import html
import json
import math
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# One import convention (docs/architecture.md, "Python imports"): pure shared
# libraries live in a module_utils/ folder - the repository's, or a role's own -
# and are imported as ansible.module_utils.<name>, the name Ansible gives them in a
# module. On the controller every module_utils/ folder one to three levels above
# this file is put on that package's path; a collection build rewrites the imports.
import ansible.module_utils  # noqa: E402

for _up in (1, 2, 3):
    _dir = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * _up, "module_utils"))
    if os.path.isdir(_dir) and _dir not in ansible.module_utils.__path__:
        ansible.module_utils.__path__.append(_dir)

from ansible.module_utils import testbed_results as results  # noqa: E402
from ansible.module_utils import testbed_stats as stats  # noqa: E402

FORMATS = ("md", "html", "csv", "png")
INVALID_MARK = "\u26a0"  # ⚠
SIGNIFICANT_MARK = "\u2731"  # ✱
CLIPPED_MARK = "\u2021"  # ‡
CONFIDENCE = 0.95
VERDICTS = ("valid", "invalid", "fault")
REASON_CHARS = 160
CLIP_NOTE = (f"{CLIPPED_MARK} the {CONFIDENCE * 100:.0f} % interval reached below 0 for a metric that cannot be "
             "negative; its low end is shown clipped at 0 (+upper/\u2212lower; summary.csv keeps the raw interval).")


class ReportError(Exception):
    """Input that cannot produce a report; main() turns it into exit status 2."""


# ---------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------

def load_run(run_dir):
    """Return (run, docs, problems): run.json content, point documents, input notes.

    Reading is ``testbed_results.read_run_dir`` (the result store's own reader);
    this adds the report's checks.  Every document gets ``verdict`` (``valid``,
    ``invalid`` or ``fault``: its own optional field, else from ``valid``) and
    ``valid`` (true only for the verdict ``valid``).
    """
    if not os.path.isdir(run_dir):
        raise ReportError(f"{run_dir} is not a directory (give the run directory results/<experiment>/<run-id>)")
    found = results.read_run_dir(run_dir)
    if found["run_error"]:
        raise ReportError(found["run_error"])
    problems = []
    run = found["run"]
    if run is None:
        problems.append("run.json is missing; experiment, plan and report settings are unknown.")
        run = {}
    elif not isinstance(run, dict):
        raise ReportError("{} holds a {}, expected a JSON object".format(
            os.path.join(run_dir, "run.json"), type(run).__name__))

    docs = []
    for entry in found["files"]:
        name, doc = entry["name"], entry["doc"]
        if entry["error"] is not None:
            problems.append(f"{name} is not readable JSON ({entry['error']}); skipped.")
            continue
        if not isinstance(doc, dict) or "point_id" not in doc or not isinstance(doc.get("metrics"), dict):
            problems.append(f"{name} is not a point document (needs point_id and a metrics object); skipped.")
            continue
        if doc["point_id"] != name[:-5]:
            problems.append("{} holds point_id {!r}, which does not match its file name.".format(name, doc["point_id"]))
        if not isinstance(doc.get("parameters"), dict):
            if doc.get("parameters") is not None:
                problems.append(f"{name}: parameters is not an object; treated as empty.")
            doc["parameters"] = {}
        verdict = doc.get("verdict")
        if verdict is not None and verdict not in VERDICTS:
            problems.append("{}: verdict {!r} is not one of {}; its valid flag decides.".format(
                name, verdict, ", ".join(VERDICTS)))
            verdict = None
        if verdict is None:
            if not isinstance(doc.get("valid"), bool):
                problems.append(f"{name} has no true/false validity verdict; counted as invalid.")
                doc["valid"] = False
                doc["reasons"] = list(doc.get("reasons") or []) + ["the document carries no validity verdict"]
            verdict = "valid" if doc["valid"] else "invalid"
        elif isinstance(doc.get("valid"), bool) and doc["valid"] != (verdict == "valid"):
            problems.append(f"{name}: verdict {verdict!r} contradicts valid={str(doc['valid']).lower()}; "
                            "the verdict decides.")
        doc["verdict"] = verdict
        doc["valid"] = verdict == "valid"
        doc.setdefault("variant", "")
        doc["variant"] = "" if doc["variant"] is None else str(doc["variant"])
        docs.append(doc)
    if not docs:
        raise ReportError(f"no point documents in {run_dir} (expected <point-id>.json files with point_id and metrics); "
                          "nothing to report - has the run measured anything yet?")
    run_ids = sorted({str(d.get("run_id")) for d in docs})
    if len(run_ids) > 1:
        problems.append("documents come from {} runs ({}); they are reported together.".format(
            len(run_ids), ", ".join(run_ids)))
    if run.get("run_id") is not None and run_ids != [str(run["run_id"])]:
        problems.append("run.json names run {} but documents name {}.".format(run["run_id"], ", ".join(run_ids)))
    return run, docs, problems


def _lookup(doc, key):
    """(found, value) of a ``where`` key: variant, a parameter, an ``extra`` field (or parameters.k / extra.k)."""
    if key == "variant":
        return True, doc["variant"]
    for prefix, source in (("parameters.", doc["parameters"]), ("extra.", doc.get("extra"))):
        if key.startswith(prefix):
            return (isinstance(source, dict) and key[len(prefix):] in source,
                    source.get(key[len(prefix):]) if isinstance(source, dict) else None)
    if key in doc["parameters"]:
        return True, doc["parameters"][key]
    extra = doc.get("extra")
    if isinstance(extra, dict) and key in extra:
        return True, extra[key]
    return False, None


def matches(doc, where):
    """True when ``doc`` has every ``where`` key with that value (a list value: any of them)."""
    for key, wanted in (where or {}).items():
        found, value = _lookup(doc, key)
        if not found:
            return False
        options = wanted if isinstance(wanted, list) else [wanted]
        if _key(value) not in {_key(o) for o in options}:
            return False
    return True


# ---------------------------------------------------------------------------
# model: series x columns x metrics
# ---------------------------------------------------------------------------

def _key(value):
    """Hashable, order-stable key for a JSON value."""
    return json.dumps(value, sort_keys=True)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_finite_number(value):
    return _is_number(value) and not (isinstance(value, float) and (math.isnan(value) or math.isinf(value)))


def _label(value):
    if value is None:
        return "\u2014"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _as_list(value, what):
    if value is None:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ReportError(f"{what} must be a list of names, got {value!r}")


def _determined(docs, name, by):
    """True when parameter ``name`` has one value per (variant, value of ``by``)."""
    seen = {}
    for doc in docs:
        group = (doc["variant"], _key(doc["parameters"].get(by)))
        value = _key(doc["parameters"].get(name))
        if seen.setdefault(group, value) != value:
            return False
    return True


class Model:
    """Docs grouped by series (variant + other varying parameters) and x value."""

    def __init__(self, run, docs, x=None, metrics=None, include_invalid=False, auto_x=True):
        self.run = run
        self.docs = docs
        self.include_invalid = include_invalid
        self.notes = []

        params = {}
        for doc in docs:
            for name, value in doc["parameters"].items():
                params.setdefault(name, set()).add(_key(value))
        self.parameters = sorted(params)
        varying = [name for name in self.parameters
                   if len(params[name]) > 1 or any(name not in d["parameters"] for d in docs)]

        if x is None and varying and auto_x:
            # the x axis is the varying parameter that determines all the others (per variant)
            candidates = [p for p in varying
                          if all(_determined(docs, other, p) for other in varying if other != p)]
            if len(candidates) == 1:
                x = candidates[0]
                self.notes.append(f"x axis: `{x}`, chosen because the other varying parameters follow it "
                                  "(set report.x or --x to choose another).")
            elif len(candidates) > 1:
                self.notes.append("no x axis: {} vary together; set report.x or --x to pick one.".format(
                    ", ".join(f"`{c}`" for c in candidates)))
        if x is not None and x not in params:
            raise ReportError("x parameter {!r} is not a parameter of any point (parameters: {})".format(
                x, ", ".join(self.parameters) or "none"))
        self.x = x
        # Parameters that vary but follow (variant, x) - num_conns = rate x duration, say - are
        # listed, not turned into extra series.
        self.dependent = [name for name in varying if name != x and x and _determined(docs, name, x)]
        self.extra = [name for name in varying if name != x and name not in self.dependent]

        xs = {}
        for doc in docs:
            value = doc["parameters"].get(x) if x else None
            xs.setdefault(_key(value), value)
        present = [v for v in xs.values() if v is not None]
        self.x_numeric = bool(x) and bool(present) and all(_is_finite_number(v) for v in present)
        if self.x_numeric:
            self.x_values = sorted(present)
        else:
            self.x_values = sorted(present, key=_label)
        if None in xs.values():
            self.x_values.append(None)

        # series: variant + the other varying parameters, ordered like the plan
        order = self._variant_order()
        self.series = []
        self.series_info = {}
        self.cells = {}
        for doc in docs:
            extra = tuple((name, _key(doc["parameters"].get(name))) for name in self.extra)
            skey = (doc["variant"], extra)
            if skey not in self.series_info:
                label = doc["variant"] or "(no variant)"
                if self.extra:
                    label += " ({})".format(", ".join(
                        "{}={}".format(name, _label(doc["parameters"].get(name))) for name in self.extra))
                self.series_info[skey] = {"variant": doc["variant"], "label": label,
                                          "extra": {n: doc["parameters"].get(n) for n in self.extra}}
                self.series.append(skey)
            xk = _key(doc["parameters"].get(x) if x else None)
            self.cells.setdefault((skey, xk), []).append(doc)
        self.series.sort(key=lambda s: (order.get(s[0], len(order)), s[0], s[1]))
        self.variants = []
        for skey in self.series:
            if skey[0] not in self.variants:
                self.variants.append(skey[0])

        # metrics: numeric ones get statistics, the others a table of values
        found = {}
        for doc in docs:
            for name, value in doc["metrics"].items():
                kinds = found.setdefault(name, set())
                if value is None:
                    continue
                kinds.add("number" if _is_finite_number(value) else "other")
        wanted = _as_list(metrics, "metrics")
        if wanted is None:
            wanted = sorted(found)
        else:
            unknown = [m for m in wanted if m not in found]
            if unknown:
                raise ReportError("metric(s) {} not found in any point (metrics: {})".format(", ".join(unknown), ", ".join(sorted(found)) or "none"))
        self.metrics = [m for m in wanted if found[m] == {"number"}]
        self.text_metrics = [m for m in wanted if "other" in found[m]]
        empty = [m for m in wanted if not found[m]]
        if empty:
            self.notes.append("no point has a value for: {}.".format(", ".join(f"`{m}`" for m in empty)))
        self.units = {}
        for doc in docs:
            for name, unit in (doc.get("units") or {}).items():
                if unit and name not in self.units:
                    self.units[name] = unit
        # intervals shown clipped at 0: metrics whose name says they cannot be negative and none is
        self.clip = {m: stats.non_negative_metric(m) and all(
            d["metrics"].get(m) >= 0 for d in docs if _is_finite_number(d["metrics"].get(m)))
            for m in self.metrics}

    def _variant_order(self):
        order = {}
        plan = self.run.get("plan")
        if isinstance(plan, dict):
            plan = list(plan.values())
        if isinstance(plan, list):
            for item in plan:
                if isinstance(item, dict) and item.get("variant") is not None:
                    order.setdefault(str(item["variant"]), len(order))
        return order

    def label(self, skey):
        return self.series_info[skey]["label"]

    def cell_docs(self, skey, xvalue):
        return self.cells.get((skey, _key(xvalue)), [])

    def cell(self, skey, xvalue, metric):
        """Statistics of one table cell, or None when the cell has no point at all."""
        docs = self.cell_docs(skey, xvalue)
        if not docs:
            return None
        used = [d for d in docs if d["valid"] or self.include_invalid]
        values = [d["metrics"].get(metric) for d in used]
        values = [v for v in values if v is not None]
        result = {
            "docs": len(docs),
            "n_invalid": sum(1 for d in docs if not d["valid"]),
            "n_missing": len(used) - len(values),
            "values": values,
            "summary": stats.summary(values, confidence=CONFIDENCE) if values else None,
        }
        return result

    def unit(self, metric):
        return self.units.get(metric, "")


# ---------------------------------------------------------------------------
# formatting
# ---------------------------------------------------------------------------

def _decimals(reference):
    """Decimals that show about four significant digits of ``reference``."""
    reference = abs(reference)
    if reference == 0:
        return 2
    return max(0, min(6, 3 - math.floor(math.log10(reference))))


def fmt_num(value, reference=None):
    if value is None:
        return ""
    if isinstance(value, int) and reference is None:
        return str(value)
    decimals = _decimals(value if reference is None else reference)
    return f"{value:.{decimals}f}"


def fmt_mean_ci(s, clip=False):
    """``mean ± ci (n)``; ``mean +hi/−lo‡ (n)`` when the interval is clipped at 0; ``mean (1)``."""
    if s is None:
        return ""
    mean = s["mean"]
    if s["ci_half"] is None:
        return "{} ({})".format(fmt_num(mean, mean), s["n"])
    if clip and stats.clip_interval(s)["clipped"]:
        return "{} +{}/\u2212{}{} ({})".format(fmt_num(mean, mean), fmt_num(s["ci_half"], mean),
                                               fmt_num(mean, mean), CLIPPED_MARK, s["n"])
    return "{} \u00b1 {} ({})".format(fmt_num(mean, mean), fmt_num(s["ci_half"], mean), s["n"])


def is_clipped(s, clip):
    return bool(clip and s is not None and stats.clip_interval(s)["clipped"])


def fmt_cell(cell, clip=False):
    """``mean ± ci (n)``; ``mean (1)`` for a single value; blank without values; ⚠ when invalid."""
    if cell is None:
        return ""
    text = fmt_mean_ci(cell["summary"], clip)
    if cell["n_invalid"]:
        text = (text + " " + INVALID_MARK).strip()
    return text


def fmt_p(p):
    if p is None:
        return ""
    if p < 0.0001:
        return "<0.0001"
    return f"{p:.4f}"


def _metric_title(model, metric):
    unit = model.unit(metric)
    return f"`{metric}` ({unit})" if unit else f"`{metric}`"


def _safe_name(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "metric"


def _shorten(text, limit=REASON_CHARS):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "\u2026"


def welch(a_values, b_values):
    """Welch test of a against b as (p or None, significance cell, test result or None)."""
    if not a_values or not b_values:
        return None, "n/a", None
    test = stats.welch_test(a_values, b_values, alpha=0.05)
    if not test["testable"]:
        return None, "not testable", test
    return test["p_value"], SIGNIFICANT_MARK if test["significant"] else "no", test


# ---------------------------------------------------------------------------
# spec
# ---------------------------------------------------------------------------

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
                not isinstance(p, list) or len(p) != 2 or not _is_finite_number(p[0])
                or not (p[1] is None or _is_finite_number(p[1])) for p in points):
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
                    "x": x, "auto_x": "x" not in section, "metrics": _as_list(section.get("metrics"), f"{what}.metrics"),
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
            isinstance(v, dict) and all(_is_finite_number(r) and r > 0 for r in v.values())
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
            isinstance(v, dict) and all(_is_finite_number(n) for n in v.values())
            for v in reference["values"].values()):
        raise ReportError(f"{what} must be {{label: <text>, values: {{variant: {{metric: number}}}}}}")
    return {"label": str(reference.get("label") or "reference"), "values": reference["values"],
            "where": _check_where(reference.get("where"), f"{what}.where")}


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
    return spec


# ---------------------------------------------------------------------------
# derived tables: relative to a baseline, overall index, reference values
# ---------------------------------------------------------------------------

def _variant_order(run, docs):
    order = []
    plan = run.get("plan")
    if isinstance(plan, dict):
        plan = list(plan.values())
    for item in plan if isinstance(plan, list) else []:
        if isinstance(item, dict) and item.get("variant") is not None and str(item["variant"]) not in order:
            order.append(str(item["variant"]))
    for doc in docs:
        if doc["variant"] not in order:
            order.append(doc["variant"])
    return order


def _used(docs, include_invalid):
    return [d for d in docs if d["verdict"] != "fault" and (d["valid"] or include_invalid)]


def _values(docs, metric):
    return [d["metrics"].get(metric) for d in docs if _is_finite_number(d["metrics"].get(metric))]


def _params_label(params, names):
    return ", ".join(f"{n}={_label(params.get(n))}" for n in names)


def relative_rows(run, docs, rel, include_invalid=False):
    """Rows of report.relative: per metric, variant and parameter set, the mean vs the baseline's.

    Returns ``{"parameters": [varying parameter names], "rows": [{metric, kind, variant, parameters,
    summary, baseline_summary, pct, p_value, significance, welch}]}``; ``pct`` is
    ``pct_drop`` (kind drop) or ``pct_change`` (rise, change) of the means, None for the baseline
    itself or when a side has no value.  Parameter sets where no variant has the metric are left out.
    """
    base = rel["baseline_variant"]
    used = [d for d in _used(docs, include_invalid) if matches(d, rel["where"])]
    groups, psets = {}, {}
    for doc in used:
        pkey = _key(doc["parameters"])
        psets.setdefault(pkey, doc["parameters"])
        groups.setdefault((doc["variant"], pkey), []).append(doc)
    values_of = {}
    for doc in used:
        for name, value in doc["parameters"].items():
            values_of.setdefault(name, set()).add(_key(value))
    varying = sorted(n for n in values_of if len(values_of[n]) > 1 or any(n not in d["parameters"] for d in used))
    order = _variant_order(run, used)
    order = [base] + [v for v in order if v != base]
    rows = []
    for metric, kind in rel["metrics"].items():
        for pkey in sorted(psets, key=lambda k: _params_label(psets[k], varying)):
            if not any(_values(docs_here, metric) for (_v, k), docs_here in groups.items() if k == pkey):
                continue  # a parameter set (workload) without this metric
            base_values = _values(groups.get((base, pkey), []), metric)
            base_s = stats.summary(base_values, confidence=CONFIDENCE) if base_values else None
            for variant in order:
                here = groups.get((variant, pkey))
                if not here:
                    continue
                values = _values(here, metric)
                s = stats.summary(values, confidence=CONFIDENCE) if values else None
                row = {"metric": metric, "kind": kind, "variant": variant, "parameters": psets[pkey],
                       "summary": s, "values": values, "baseline_summary": base_s, "pct": None,
                       "p_value": None, "significance": "", "welch": None}
                if variant != base:
                    if s and base_s and base_s["mean"] != 0:
                        pct_of = stats.pct_drop if kind == "drop" else stats.pct_change
                        row["pct"] = pct_of(s["mean"], base_s["mean"])
                    row["p_value"], row["significance"], row["welch"] = welch(values, base_values)
                rows.append(row)
    return {"parameters": varying, "rows": rows}


def _relative_blocks(run, docs, rel, reference, units, clip, include_invalid):
    base = rel["baseline_variant"]
    data = relative_rows(run, docs, rel, include_invalid)
    variants = {r["variant"] for r in data["rows"]}
    if base not in variants:
        raise ReportError("report.relative.baseline_variant {!r} is not a variant of this run (variants: {})".format(
            base, ", ".join(_variant_order(run, docs))))
    blocks = [("h", 2, rel.get("title") or f"Relative to `{base}`"),
              ("p", ("Mean \u00b1 half-width of the {:.0f} % CI (number of values) of each variant; drop = (baseline "
                     "\u2212 mean) / baseline \u00d7 100 (pct_drop), rise and change = (mean \u2212 baseline) / baseline "
                     "\u00d7 100 (pct_change), of the means at the same parameters; p = two-sided Welch t test "
                     "against the baseline; {} = significant at \u03b1 = 0.05.").format(CONFIDENCE * 100, SIGNIFICANT_MARK))]
    ref_values = (reference or {}).get("values") or {}
    for metric, kind in rel["metrics"].items():
        rows = [r for r in data["rows"] if r["metric"] == metric]
        unit = units.get(metric, "")
        blocks.append(("h", 3, f"`{metric}` ({unit})" if unit else f"`{metric}`"))
        with_ref = any(metric in (ref_values.get(r["variant"]) or {}) for r in rows)
        extra = list(rel["columns"])
        header = ["variant"] + extra + data["parameters"] + ["mean", f"{kind} vs `{base}`", "p", "significant"]
        if with_ref:
            header.insert(len(extra) + len(data["parameters"]) + 2, reference["label"])
        table, clipped = [], False
        for r in rows:
            mean = fmt_mean_ci(r["summary"], clip(metric)) if r["summary"] else "no value"
            clipped = clipped or is_clipped(r["summary"], clip(metric))
            if r["variant"] == base:
                pct, p, sig = "\u2014", "\u2014", "\u2014"
            else:
                pct = "n/a" if r["pct"] is None else (f"{r['pct']:.1f} %" if kind == "drop" else f"{r['pct']:+.1f} %")
                p = fmt_p(r["p_value"]) if r["p_value"] is not None else "n/a"
                sig = r["significance"]
            line = [r["variant"]] + [_label(rel["columns"][c].get(r["variant"], "")) for c in extra]
            line += [_label(r["parameters"].get(n)) for n in data["parameters"]] + [mean]
            if with_ref:
                ref = (ref_values.get(r["variant"]) or {}).get(metric)
                line.append("" if ref is None else fmt_num(ref, ref))
            table.append(line + [pct, p, sig])
        if table:
            blocks.append(("table", header, table))
            if clipped:
                blocks.append(("p", CLIP_NOTE))
        else:
            blocks.append(("p", "No point has this metric."))
    blocks.extend(("p", note) for note in rel["notes"])
    return blocks


def overall_rows(run, docs, overall, include_invalid=False):
    """The overall index: per variant the ratio of its mean to the baseline's per item, their sum and mean.

    Ratios are ``ratio_to(mean, baseline mean)``, inverted for lower-is-better
    metrics by ``overall_index`` (so every ratio reads "fraction of the baseline's
    performance").  Returns ``{"baseline_means": {label: mean}, "variants": {variant:
    {"ratios": {label: ratio or None}, "index": overall_index result or None, "missing": [labels]}}}``.
    """
    base = overall["baseline_variant"]
    used = [d for d in _used(docs, include_invalid) if matches(d, overall["where"])]
    present = {d["variant"] for d in used}
    # a variant the spec's where leaves out (e.g. an emulated one) gets no column
    order = [v for v in _variant_order(run, used) if v != base and v in present]
    means = {}
    for item in overall["items"]:
        for variant in [base] + order:
            values = _values([d for d in used if d["variant"] == variant and matches(d, item["where"])], item["metric"])
            means[(variant, item["label"])] = stats.summary(values)["mean"] if values else None
    hib = {i["label"]: overall["higher_is_better"].get(i["metric"], True) for i in overall["items"]}
    labels = [i["label"] for i in overall["items"]]
    out = {"baseline_means": {label: means[(base, label)] for label in labels}, "variants": {}}
    for variant in order:
        raw, missing = {}, []
        for label in labels:
            value, reference = means[(variant, label)], means[(base, label)]
            if value is None or reference is None or reference == 0 or value <= 0:
                missing.append(label)
            else:
                raw[label] = stats.ratio_to(value, reference)
        index = None
        if not missing:
            index = stats.overall_index(raw, metrics=labels, higher_is_better=hib)
        ratios = {label: (index["ratios"][label] if index else
                          (raw[label] if hib[label] else 1.0 / raw[label]) if label in raw else None)
                  for label in labels}
        out["variants"][variant] = {"ratios": ratios, "index": index, "missing": missing}
    return out


def _overall_blocks(run, docs, overall, include_invalid):
    base = overall["baseline_variant"]
    data = overall_rows(run, docs, overall, include_invalid)
    if all(m is None for m in data["baseline_means"].values()):
        raise ReportError("report.overall_index.baseline_variant {!r} has no value for any of its metrics".format(base))
    variants = list(data["variants"])
    ref = overall["reference"]
    ref_variants = [v for v in variants if v in ref]
    labels = [i["label"] for i in overall["items"]]
    header = ["metric"] + variants + [f"{v} (reference)" for v in ref_variants]
    rows = []
    for item in overall["items"]:
        label = item["label"]
        lower = overall["higher_is_better"].get(item["metric"]) is False
        name = label + (" (lower is better: baseline / variant)" if lower else "")
        row = [name] + ["n/a" if data["variants"][v]["ratios"][label] is None
                        else f"{data['variants'][v]['ratios'][label]:.2f}" for v in variants]
        row += ["" if label not in ref[v] else f"{ref[v][label]:.2f}" for v in ref_variants]
        rows.append(row)
    ref_index = {}
    for v in ref_variants:
        if all(label in ref[v] for label in labels):
            ref_index[v] = stats.overall_index({label: ref[v][label] for label in labels}, metrics=labels)
    sums = ["sum (of {})".format(len(labels))]
    idx = ["overall index"]
    for v in variants:
        index = data["variants"][v]["index"]
        sums.append("n/a" if index is None else f"{index['sum']:.2f}")
        idx.append("n/a (no value: {})".format(", ".join(data["variants"][v]["missing"])) if index is None
                   else f"{index['index_pct']:.1f} %")
    for v in ref_variants:
        sums.append(f"{ref_index[v]['sum']:.2f}" if v in ref_index else "")
        idx.append(f"{ref_index[v]['index_pct']:.1f} %" if v in ref_index else "")
    rows += [sums, idx]
    return [("h", 2, overall.get("title") or f"Overall index relative to `{base}`"),
            ("p", ("Per metric the ratio of each variant's mean to the mean of `{}` (ratio_to), inverted for "
                   "lower-is-better metrics, so 1 = the baseline's performance; the overall index is the mean of "
                   "the ratios in % (overall_index).").format(base)),
            ("table", header, rows)]


def _reference_blocks(run, docs, reference, units, include_invalid, shown=()):
    """Measured means beside the reference values, for metrics the relative tables do not already show."""
    used = [d for d in _used(docs, include_invalid) if matches(d, reference["where"])]
    rows = []
    pooled = False
    for variant in [v for v in _variant_order(run, used) if v in reference["values"]] + \
            [v for v in reference["values"] if v not in {d["variant"] for d in used}]:
        for metric, ref in reference["values"][variant].items():
            if metric in shown:
                continue
            here = [d for d in used if d["variant"] == variant and _is_finite_number(d["metrics"].get(metric))]
            values = _values(here, metric)
            pooled = pooled or len({_key(d["parameters"]) for d in here}) > 1
            s = stats.summary(values, confidence=CONFIDENCE) if values else None
            unit = units.get(metric, "")
            rows.append([variant, f"`{metric}`" + (f" ({unit})" if unit else ""),
                         fmt_mean_ci(s) if s else "not measured", fmt_num(ref, ref),
                         f"{stats.pct_change(s['mean'], ref):+.1f} %" if s and ref != 0 else "n/a"])
    if not rows:
        return []
    blocks = [("h", 2, "Measured means beside {}".format(reference["label"])),
              ("p", ("The reference column holds numbers given in the report spec ({}), not measured here; "
                     "difference = (measured \u2212 reference) / reference \u00d7 100.").format(reference["label"])),
              ("table", ["variant", "metric", "measured mean", reference["label"], "difference"], rows)]
    if pooled:
        blocks.append(("p", "Some measured means pool several parameter sets (give report.reference.where to pick one)."))
    return blocks


# ---------------------------------------------------------------------------
# report content (a small block model rendered to Markdown and HTML)
# ---------------------------------------------------------------------------

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
        return stats.non_negative_metric(metric) and all(v >= 0 for v in _values(docs, metric))

    if spec.get("relative"):
        blocks.extend(_relative_blocks(run, docs, spec["relative"], spec.get("reference"), units, clip,
                                       include_invalid))
    if spec.get("overall_index"):
        blocks.extend(_overall_blocks(run, docs, spec["overall_index"], include_invalid))
    if spec.get("reference"):
        shown = set((spec.get("relative") or {}).get("metrics") or {})
        blocks.extend(_reference_blocks(run, docs, spec["reference"], units, include_invalid, shown))

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
        where = ", ".join("{} = {}".format(k, " or ".join(_label(o) for o in v) if isinstance(v, list) else _label(v))
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
    header = ["series"] + ([_label(x) if model.x else "all points" for x in xs])
    if model.x:
        header[0] = f"series \\ {model.x}"
    if not model.metrics:
        add(("p", "No numeric metric to tabulate."))
    for metric in model.metrics:
        add(("h", 3, _metric_title(model, metric)))
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
            add(("p", f"{_metric_title(model, metric)}: distinct values per cell."))
            rows = []
            for skey in model.series:
                row = [model.label(skey)]
                for x in xs:
                    values = sorted({_label(d["metrics"].get(metric)) for d in model.cell_docs(skey, x)
                                        if d["metrics"].get(metric) is not None})
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
            rows.append([model.label(skey), _label(max(good)) if good else "none",
                         _label(min(bad)) if bad else "none",
                         ", ".join(_label(x) for x in sorted(good + bad))])
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
                row = [model.label(skey), _label(x) if model.x else "", fmt_num(mb, mb), fmt_num(ma, ma),
                       change, fmt_p(p) if p is not None else "n/a", sig]
                if direction is not None:
                    if sig == SIGNIFICANT_MARK:
                        row.append("better" if (ma > mb) == bool(direction) else "worse")
                    elif p is not None:
                        row.append("no significant difference")
                    else:
                        row.append(sig)
                rows.append(row)
        blocks.append(("h", top + 1, _metric_title(model, metric)))
        if rows:
            blocks.append(("table", header, rows))
        else:
            blocks.append(("p", "No cell has values on both sides."))
    return blocks


def _point_label(doc):
    params = ", ".join(f"{k}={_label(v)}" for k, v in sorted(doc["parameters"].items()))
    return "`{}` ({}{}, repetition {})".format(doc["point_id"], doc["variant"] or "no variant",
                                          ", " + params if params else "", _label(doc.get("repetition")))


def _reasons(doc):
    return [str(r) for r in (doc.get("reasons") or [])] or ["no reason recorded"]


def _primary(doc):
    """The first reason, shortened, and how many more there are."""
    reasons = _reasons(doc)
    text = _shorten(reasons[0])
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
                _flatten(evidence, "", flat)
                lines += [f"evidence {k}: {v}" for k, v in flat.items()]
            elif isinstance(evidence, list):
                lines += [f"evidence: {_label(e)}" for e in evidence]
            else:
                lines.append(f"evidence: {_label(evidence)}")
        inner.append(("list", lines))
    blocks.append(("list", items))
    blocks.append(("details", "Reasons and evidence of the faults", inner))
    return blocks


def _flatten(value, prefix, out):
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            _flatten(value[key], f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        out[prefix] = ", ".join(_label(v) for v in value)
    else:
        out[prefix] = _label(value)


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
        _flatten(env, "", flat)
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


# ---------------------------------------------------------------------------
# renderers
# ---------------------------------------------------------------------------

def _md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_md(blocks):
    """Markdown; ``details`` blocks go to appendix sections at the end (Markdown cannot fold them)."""
    out, appendix = [], []
    for block in blocks:
        if block[0] == "details":
            appendix.append(("h", 2, f"Appendix: {block[1]}"))
            appendix.extend(block[2])
            out.append(f"Full text: see \u201cAppendix: {block[1]}\u201d below.\n")
            continue
        out.append(_md_block(block))
    out.extend(_md_block(block) for block in appendix)
    return "\n".join(out)


def _md_block(block):
    kind = block[0]
    if kind == "h":
        return "{} {}\n".format("#" * block[1], block[2])
    if kind == "p":
        return block[1] + "\n"
    if kind == "list":
        return "\n".join(f"- {item}" for item in block[1]) + "\n"
    if kind == "table":
        header, rows = block[1], block[2]
        lines = ["| {} |".format(" | ".join(_md_cell(h) for h in header)),
                 "|{}|".format("|".join([" --- "] + [" ---: "] * (len(header) - 1)))]
        lines.extend("| {} |".format(" | ".join(_md_cell(c) for c in row)) for row in rows)
        return "\n".join(lines) + "\n"
    if kind == "img":
        return f"![{block[2]}]({block[1]})\n"
    raise ValueError(f"unknown block {kind!r}")


def _inline_html(text):
    parts = str(text).split("`")
    out = []
    for index, part in enumerate(parts):
        escaped = html.escape(part)
        out.append(f"<code>{escaped}</code>" if index % 2 and index < len(parts) - 1 else escaped)
    return "".join(out)


CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; max-width: 72em;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #ccc; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #ddd; margin-top: 2em; }
table { border-collapse: collapse; margin: .8em 0; font-size: .92em; }
th, td { border: 1px solid #ccc; padding: .3em .6em; }
th { background: #f2f2f2; }
td { text-align: right; white-space: nowrap; }
td:first-child, th:first-child { text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
code { background: #f3f3f3; padding: 0 .2em; border-radius: 3px; }
img { max-width: 100%; border: 1px solid #eee; margin: .5em 0 1.5em; }
details { margin: .5em 0 1em; } summary { cursor: pointer; color: #555; }
"""


def _html_blocks(blocks):
    out = []
    for block in blocks:
        kind = block[0]
        if kind == "h":
            out.append("<h{0}>{1}</h{0}>".format(block[1], _inline_html(block[2])))
        elif kind == "p":
            out.append(f"<p>{_inline_html(block[1])}</p>")
        elif kind == "list":
            out.append("<ul>{}</ul>".format("".join(f"<li>{_inline_html(i)}</li>" for i in block[1])))
        elif kind == "table":
            out.append("<table><thead><tr>{}</tr></thead><tbody>".format("".join(
                f"<th>{_inline_html(h)}</th>" for h in block[1])))
            for row in block[2]:
                out.append("<tr>{}</tr>".format("".join(f"<td>{_inline_html(c)}</td>" for c in row)))
            out.append("</tbody></table>")
        elif kind == "img":
            out.append(f'<p><img src="{html.escape(block[1])}" alt="{html.escape(block[2])}"></p>')
        elif kind == "details":
            out.append(f"<details><summary>{_inline_html(block[1])}</summary>")
            out.extend(_html_blocks(block[2]))
            out.append("</details>")
    return out


def render_html(blocks, title):
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{html.escape(title)}</title>", f"<style>{CSS}</style>", "</head><body>"]
    out.extend(_html_blocks(blocks))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------

def _csv_value(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def write_results_csv(docs, path):
    """One row per point document; a ``verdict`` column when some point is a lab fault."""
    fixed = ["run_id", "point_id", "variant"]
    parameters = sorted({p for d in docs for p in d["parameters"]})
    with_verdict = any(d["verdict"] == "fault" for d in docs)
    metric_names = sorted({m for d in docs for m in d["metrics"]})
    taken = set(fixed + ["repetition", "valid", "reasons"] + (["verdict"] if with_verdict else []))
    param_cols = [p if p not in taken else f"param_{p}" for p in parameters]
    taken.update(param_cols)
    metric_cols = [m if m not in taken else f"metric_{m}" for m in metric_names]
    header = fixed + param_cols + ["repetition", "valid"] + (["verdict"] if with_verdict else []) + metric_cols
    header.append("reasons")
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for doc in sorted(docs, key=lambda d: d["point_id"]):
            row = [doc.get("run_id"), doc["point_id"], doc["variant"]]
            row += [doc["parameters"].get(p) for p in parameters]
            row += [doc.get("repetition"), doc["valid"]] + ([doc["verdict"]] if with_verdict else [])
            row += [doc["metrics"].get(m) for m in metric_names]
            row.append("; ".join(str(r) for r in (doc.get("reasons") or [])))
            writer.writerow([_csv_value(v) for v in row])


SUMMARY_FIELDS = ("n", "mean", "stdev", "ci_half", "ci_low", "ci_high", "min", "median", "max", "cv_pct")


def write_summary_csv(sections, path, titled=False):
    """Per section x series x x x metric statistics (raw intervals, never clipped); a section column when titled."""
    header = ["series", "variant", "x_param", "x", "metric", "unit", "points", "n_invalid", "n_missing"]
    header = (["section"] if titled else []) + header + list(SUMMARY_FIELDS) + ["confidence"]
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for section in sections:
            model = section.model
            for metric in model.metrics:
                for skey in model.series:
                    for x in model.x_values:
                        cell = model.cell(skey, x, metric)
                        if cell is None:
                            continue
                        s = cell["summary"] or {}
                        row = [section.title] if titled else []
                        row += [model.label(skey), skey[0], model.x, x, metric, model.unit(metric), cell["docs"],
                                cell["n_invalid"], cell["n_missing"]]
                        row += [s.get(f) if s else (0 if f == "n" else None) for f in SUMMARY_FIELDS]
                        row.append(CONFIDENCE)
                        writer.writerow([_csv_value(v) for v in row])


# ---------------------------------------------------------------------------
# charts
# ---------------------------------------------------------------------------

def load_pyplot():
    """matplotlib.pyplot with the Agg backend, or None when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def write_charts(model, run_dir, plt, prefix="", heading=""):
    """Write charts/<prefix><metric>.png; return {metric: relative path}.

    Error bars are the confidence intervals, their low end clipped at 0 for
    metrics that cannot be negative (as in the tables)."""
    charts = {}
    chart_dir = os.path.join(run_dir, "charts")
    for metric in model.metrics:
        series = []
        for skey in model.series:
            points = []
            for x in model.x_values:
                cell = model.cell(skey, x, metric)
                if not cell:
                    continue
                s = cell["summary"]
                excluded = [] if model.include_invalid else [
                    d["metrics"].get(metric) for d in model.cell_docs(skey, x)
                    if not d["valid"] and _is_finite_number(d["metrics"].get(metric))]
                if s or excluded:
                    half = (s["ci_half"] or 0.0) if s else 0.0
                    low = min(half, s["mean"]) if s and is_clipped(s, model.clip[metric]) else half
                    points.append((x, s["mean"] if s else None, (low, half), cell["n_invalid"] > 0, excluded))
            if points:
                series.append((model.label(skey), points))
        if not series:
            continue
        if not os.path.isdir(chart_dir):
            os.makedirs(chart_dir)
        fig, ax = plt.subplots(figsize=(8, 4.8), dpi=100)
        marked = False
        if model.x_numeric:
            numeric_x = [x for x in model.x_values if x is not None]
            span = (max(numeric_x) - min(numeric_x)) or 1.0
            for index, (label, points) in enumerate(series):
                # a small horizontal dodge keeps overlapping series visible
                dodge = (index - (len(series) - 1) / 2.0) * 0.008 * span
                shown = [p for p in points if p[0] is not None and p[1] is not None]
                line = ax.errorbar([p[0] + dodge for p in shown], [p[1] for p in shown],
                                   yerr=[[p[2][0] for p in shown], [p[2][1] for p in shown]], marker="o",
                                   capsize=4, label=label)
                color = line[0].get_color()
                excluded = [(p[0] + dodge, v) for p in points if p[0] is not None for v in p[4]]
                if excluded:
                    ax.scatter([e[0] for e in excluded], [e[1] for e in excluded], marker="x", s=70,
                               color=color, linewidths=2, zorder=5,
                               label="%s: invalid repetition (excluded)" % label)
                    marked = True
                if model.include_invalid:
                    bad = [p for p in shown if p[3]]
                    if bad:
                        ax.scatter([p[0] + dodge for p in bad], [p[1] for p in bad], s=160, facecolors="none",
                                   edgecolors="red", zorder=6,
                                   label=None if marked else "mean includes invalid repetitions")
                        marked = True
            ax.set_xlabel(model.x)
        else:
            groups = model.x_values
            width = 0.8 / len(series)
            for index, (label, points) in enumerate(series):
                by_x = {_key(p[0]): p for p in points}
                pos, means, errs, bad = [], [], [], []
                for gi, x in enumerate(groups):
                    p = by_x.get(_key(x))
                    if p is None or p[1] is None:
                        continue
                    pos.append(gi - 0.4 + width * (index + 0.5))
                    means.append(p[1])
                    errs.append(p[2])
                    bad.append(p[3])
                bars = ax.bar(pos, means, width=width * 0.95, yerr=[[e[0] for e in errs], [e[1] for e in errs]],
                              capsize=4, label=label)
                for bar, is_bad in zip(bars, bad):
                    if is_bad:
                        bar.set_hatch("//")
                        bar.set_edgecolor("red")
                        marked = True
            ax.set_xticks(range(len(groups)))
            ax.set_xticklabels([_label(x) if model.x else "" for x in groups])
            if model.x:
                ax.set_xlabel(model.x)
        unit = model.unit(metric)
        ax.set_ylabel(f"{metric} [{unit}]" if unit else metric)
        title = f"{heading}{metric}: mean and {CONFIDENCE * 100:.0f} % CI"
        if any(p[2][0] < p[2][1] for _series_label, points in series for p in points):
            title += " (clipped at 0)"
        if marked and not model.x_numeric:
            title += " (hatched: invalid repetitions)"
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
        fig.tight_layout()
        name = f"{prefix}{_safe_name(metric)}.png"
        fig.savefig(os.path.join(chart_dir, name))
        plt.close(fig)
        charts[metric] = f"charts/{name}"
    return charts


def write_table_chart(table, run_dir, plt, prefix):
    """A derived table's line chart (e.g. rebuild progress curves): charts/<prefix><title>.png."""
    chart = table["chart"]
    chart_dir = os.path.join(run_dir, "charts")
    if not os.path.isdir(chart_dir):
        os.makedirs(chart_dir)
    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=100)
    for label, points in chart["series"].items():
        ax.plot([p[0] for p in points], [float("nan") if p[1] is None else p[1] for p in points],
                marker=".", label=str(label))
    ax.set_xlabel(str(chart.get("x_label") or "x"))
    ax.set_ylabel(str(chart.get("y_label") or "y"))
    ax.set_title(table["title"])
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    name = f"{prefix}{_safe_name(table['title'])}.png"
    fig.savefig(os.path.join(chart_dir, name))
    plt.close(fig)
    return f"charts/{name}"


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def _write_text(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.rename(tmp, path)


def make_report(run_dir, formats=FORMATS, x=None, metrics=None, title=None, baseline=None,
                include_invalid=False, out=sys.stdout):
    """Write the report files; return the list of paths written."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ReportError("unknown format(s) {} (choose from {})".format(", ".join(unknown), ", ".join(FORMATS)))
    run, all_docs, problems = load_run(run_dir)
    spec = run.get("report") or {}
    if not isinstance(spec, dict):
        raise ReportError(f"run.json key 'report' must be an object, got {spec!r}")
    spec = dict(spec)
    for key, value in (("x", x), ("metrics", metrics), ("title", title), ("baseline_variant", baseline)):
        if value is not None:
            spec[key] = value
    spec = check_spec(spec)
    faults = [d for d in all_docs if d["verdict"] == "fault"]
    docs = [d for d in all_docs if d["verdict"] != "fault"]
    if not docs:
        raise ReportError(f"every point document in {run_dir} is a lab fault; nothing to report until they are "
                          "measured again")
    if not spec.get("title"):
        spec["title"] = "{} \u2014 run {}".format(run.get("experiment") or docs[0].get("experiment") or "experiment",
                                             run.get("run_id") or docs[0].get("run_id") or "?")
    sections = []
    if spec["sections"] is None:
        model = Model(run, docs, x=spec.get("x"), metrics=spec.get("metrics"), include_invalid=include_invalid)
        if spec.get("baseline_variant") and spec["baseline_variant"] not in model.variants:
            raise ReportError("baseline variant {!r} is not a variant of this run (variants: {})".format(
                spec["baseline_variant"], ", ".join(model.variants)))
        sections.append(Section(None, model, {}, spec.get("baseline_variant"), spec["higher_is_better"]))
        notes = list(spec.get("notes") or []) + model.notes + problems
        model.notes = []
    else:
        notes = list(spec.get("notes") or []) + problems
        for number, sspec in enumerate(spec["sections"]):
            chosen = [d for d in docs if matches(d, sspec["where"])]
            if chosen:
                model = Model(run, chosen, x=sspec["x"], metrics=sspec["metrics"] or spec.get("metrics"),
                              include_invalid=include_invalid, auto_x=sspec["auto_x"])
            else:
                model = Model(run, docs[:1], x=None, metrics=[], include_invalid=include_invalid)
                model.docs = []
            hib = dict(spec["higher_is_better"])
            hib.update(sspec["higher_is_better"])
            sections.append(Section(sspec["title"], model, sspec["where"],
                                    sspec["baseline_variant"] or spec.get("baseline_variant"), hib,
                                    notes=sspec["notes"], prefix=f"{number + 1:02d}_{_safe_name(sspec['title'])}__"))

    written = []
    if "png" in formats:
        plt = load_pyplot()
        if plt is None:
            chart_note = f"charts were skipped: matplotlib is not installed for {sys.executable}."
            print(f"testbed-report: {chart_note}", file=sys.stderr)
            notes.append(chart_note)
        else:
            for section in sections:
                if section.model.docs:
                    section.charts = write_charts(section.model, run_dir, plt, prefix=section.prefix,
                                                  heading=f"{section.title}: " if section.title else "")
                    written.extend(os.path.join(run_dir, p) for p in section.charts.values())
            for number, table in enumerate(spec.get("tables") or []):
                if table.get("chart"):
                    table["chart_path"] = write_table_chart(table, run_dir, plt, f"table{number + 1:02d}_")
                    written.append(os.path.join(run_dir, table["chart_path"]))
    notes.append("generated {} by scripts/testbed_report.py".format(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
    blocks = build_blocks(run, docs, faults, spec, sections, notes)
    if "md" in formats:
        path = os.path.join(run_dir, "report.md")
        _write_text(path, render_md(blocks))
        written.append(path)
    if "html" in formats:
        path = os.path.join(run_dir, "report.html")
        _write_text(path, render_html(blocks, spec["title"]))
        written.append(path)
    if "csv" in formats:
        path = os.path.join(run_dir, "results.csv")
        write_results_csv(all_docs, path + ".tmp")
        os.rename(path + ".tmp", path)
        written.append(path)
        path = os.path.join(run_dir, "summary.csv")
        write_summary_csv(sections, path + ".tmp", titled=spec["sections"] is not None)
        os.rename(path + ".tmp", path)
        written.append(path)
    for path in written:
        print(f"wrote {path}", file=out)
    return written


# ---------------------------------------------------------------------------
# compare two runs
# ---------------------------------------------------------------------------

COMPARE_FIELDS = ("variant", "parameters", "metric", "unit", "mean_a", "n_a", "mean_b", "n_b", "change_pct",
                  "p_value", "significant", "note")


def compare_runs(run_a, run_b, include_invalid=False):
    """Rows comparing two run directories: per variant x parameters x metric measured in both.

    ``change_pct`` = pct_change(mean B, mean A) (None when mean A is 0); ``p_value``
    = Welch test of B against A; ``significant`` is ``yes``, ``no`` or ``not testable``.
    Returns ``(rows, info)`` with info = {a: {experiment, run_id, points}, b: {...}, only_a, only_b}.
    """
    loaded = []
    for run_dir in (run_a, run_b):
        run, docs, _problems = load_run(run_dir)
        loaded.append((run, _used(docs, include_invalid), docs))
    groups = []
    for _run, used, _docs in loaded:
        group = {}
        for doc in used:
            for metric, value in doc["metrics"].items():
                if _is_finite_number(value):
                    group.setdefault((doc["variant"], _key(doc["parameters"]), metric), []).append(value)
        groups.append(group)
    units = {}
    params = {}
    for _run, used, _docs in loaded:
        for doc in used:
            params.setdefault(_key(doc["parameters"]), doc["parameters"])
            for name, unit in (doc.get("units") or {}).items():
                units.setdefault(name, unit)
    order = _variant_order(loaded[0][0], loaded[0][1])
    order += [v for v in _variant_order(loaded[1][0], loaded[1][1]) if v not in order]
    common = sorted(set(groups[0]) & set(groups[1]),
                    key=lambda k: (order.index(k[0]) if k[0] in order else len(order), k[1], k[2]))
    rows = []
    for key in common:
        a, b = groups[0][key], groups[1][key]
        mean_a, mean_b = stats.summary(a)["mean"], stats.summary(b)["mean"]
        test = stats.welch_test(b, a, alpha=0.05)
        rows.append({
            "variant": key[0], "parameters": params[key[1]], "metric": key[2], "unit": units.get(key[2], ""),
            "mean_a": mean_a, "n_a": len(a), "mean_b": mean_b, "n_b": len(b),
            "change_pct": stats.pct_change(mean_b, mean_a) if mean_a != 0 else None,
            "p_value": test["p_value"],
            "significant": "not testable" if not test["testable"] else ("yes" if test["significant"] else "no"),
            "note": test["reason"] or "",
        })
    info = {}
    for name, (run, used, docs), run_dir in zip(("a", "b"), loaded, (run_a, run_b)):
        info[name] = {"dir": run_dir, "experiment": run.get("experiment") or docs[0].get("experiment") or "?",
                      "run_id": run.get("run_id") or docs[0].get("run_id") or "?", "points": len(used)}
    info["only_a"] = len(set(groups[0]) - set(groups[1]))
    info["only_b"] = len(set(groups[1]) - set(groups[0]))
    return rows, info


def render_compare_md(rows, info):
    a, b = info["a"], info["b"]
    out = [f"# Compare run `{a['run_id']}` (A) with run `{b['run_id']}` (B)\n",
           "\n".join([f"- A: `{a['dir']}` ({a['experiment']}, {a['points']} points used)",
                      f"- B: `{b['dir']}` ({b['experiment']}, {b['points']} points used)",
                      "- change = (mean B \u2212 mean A) / mean A \u00d7 100; p = two-sided Welch t test of B "
                      "against A; significant at \u03b1 = 0.05 (not testable: a side has one value or both are "
                      "constant); valid points only",
                      f"- compared: {len(rows)} variant \u00d7 parameters \u00d7 metric cells measured in both; "
                      f"{info['only_a']} only in A, {info['only_b']} only in B"]) + "\n"]
    if not rows:
        out.append("No variant \u00d7 parameters \u00d7 metric is measured in both runs.\n")
        return "\n".join(out)
    header = ["variant", "parameters", "metric", "mean A", "n A", "mean B", "n B", "change %", "p", "significant"]
    table = ["| {} |".format(" | ".join(header)),
             "|{}|".format("|".join([" --- "] * 3 + [" ---: "] * (len(header) - 3)))]
    for r in rows:
        params = ", ".join(f"{k}={_label(v)}" for k, v in sorted(r["parameters"].items()))
        metric = f"`{r['metric']}`" + (f" ({r['unit']})" if r["unit"] else "")
        cells = [r["variant"] or "(no variant)", params, metric, fmt_num(r["mean_a"], r["mean_a"]), str(r["n_a"]),
                 fmt_num(r["mean_b"], r["mean_a"]), str(r["n_b"]),
                 "n/a" if r["change_pct"] is None else f"{r['change_pct']:+.2f}",
                 "n/a" if r["p_value"] is None else fmt_p(r["p_value"]), r["significant"]]
        table.append("| {} |".format(" | ".join(_md_cell(c) for c in cells)))
    out.append("\n".join(table) + "\n")
    return "\n".join(out)


def write_compare_csv(rows, path):
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COMPARE_FIELDS)
        for r in rows:
            writer.writerow([_csv_value(r[f]) for f in COMPARE_FIELDS])


def compare(run_a, run_b, out_dir=None, include_invalid=False, out=None):
    """Print the comparison of two runs as Markdown; with ``out_dir`` also write compare.md and compare.csv."""
    rows, info = compare_runs(run_a, run_b, include_invalid=include_invalid)
    text = render_compare_md(rows, info)
    (out or sys.stdout).write(text)
    if out_dir:
        if not os.path.isdir(out_dir):
            os.makedirs(out_dir)
        _write_text(os.path.join(out_dir, "compare.md"), text)
        path = os.path.join(out_dir, "compare.csv")
        write_compare_csv(rows, path + ".tmp")
        os.rename(path + ".tmp", path)
    return rows


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="testbed-report", description="Render a testbed run directory into report.md/html, CSV and charts, "
        "or compare two runs (--compare RUN_A RUN_B).")
    parser.add_argument("run_dir", metavar="RUN_DIR", nargs="?", help="results/<experiment>/<run-id>")
    parser.add_argument("--compare", nargs=2, metavar=("RUN_A", "RUN_B"),
                        help="compare two run directories: per variant x parameters x metric in both, the means, "
                             "n, change %% and Welch p (Markdown on stdout)")
    parser.add_argument("--out", metavar="DIR", help="with --compare: also write compare.md and compare.csv in DIR")
    parser.add_argument("--format", default=",".join(FORMATS),
                        help="comma-separated outputs among {} (default: all)".format(",".join(FORMATS)))
    parser.add_argument("--x", help="the sweep parameter for table columns and the chart x axis")
    parser.add_argument("--metrics", help="comma-separated metrics to report (default: all)")
    parser.add_argument("--title", help="report title")
    parser.add_argument("--baseline", help="variant to compare the others with (Welch t test)")
    parser.add_argument("--include-invalid", action="store_true",
                        help="include invalid repetitions in the statistics (they are still marked)")
    args = parser.parse_args(argv)
    if args.compare and args.run_dir:
        parser.error("give either RUN_DIR or --compare RUN_A RUN_B, not both")
    if not args.compare and not args.run_dir:
        parser.error("give RUN_DIR (or --compare RUN_A RUN_B)")
    if args.out and not args.compare:
        parser.error("--out goes with --compare (a report is written into RUN_DIR)")
    return args


def main(argv=None):
    args = parse_args(argv)
    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    try:
        if args.compare:
            compare(args.compare[0], args.compare[1], out_dir=args.out, include_invalid=args.include_invalid)
        else:
            make_report(args.run_dir, formats=formats, x=args.x, metrics=args.metrics, title=args.title,
                        baseline=args.baseline, include_invalid=args.include_invalid)
    except ReportError as exc:
        print(f"testbed-report: error: {exc}", file=sys.stderr)
        return 2
    except stats.AnsibleFilterError as exc:
        print(f"testbed-report: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
