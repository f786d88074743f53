#!/usr/bin/env python3
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render a result-store run directory into a report.

    python scripts/testbed_report.py RUN_DIR [--format md,html,csv,png]
        [--x PARAM] [--metrics m1,m2] [--title T] [--baseline VARIANT] [--include-invalid]

Reads ``run.json`` and every ``<point-id>.json`` document in RUN_DIR (the
derived ``index.json`` is ignored) and writes, in RUN_DIR:

* ``report.md`` / ``report.html`` - tables per metric (rows = series, columns =
  the sweep parameter, cells ``mean ± ci95 (n)``), verdicts, baseline comparison
  with Welch p-values, highest valid x per series, environment;
* ``results.csv`` (one row per point) and ``summary.csv`` (per series × x × metric);
* ``charts/<metric>.png`` (matplotlib, Agg backend; skipped with a note when
  matplotlib is missing).

The report spec may come from run.json's ``report`` key::

    {"x": "rate", "metrics": ["reply_rate_per_s"], "higher_is_better": {"response_ms": false},
     "baseline_variant": "native", "title": "...", "notes": ["..."],
     "tables": [{"title": "...", "header": ["a", "b"], "rows": [["1", "2"]], "notes": ["..."]}]}

``tables`` are tables an experiment derived itself (cells already formatted),
shown after the notes.

Command-line options override it.  All statistics come from
``filter_plugins/testbed_stats.py``: one implementation of the maths.

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
_FILTERS = os.path.join(ROOT, "filter_plugins")
if _FILTERS not in sys.path:
    sys.path.insert(0, _FILTERS)

import testbed_stats as stats  # noqa: E402  (needs the sys.path entry above)

FORMATS = ("md", "html", "csv", "png")
INVALID_MARK = "\u26a0"  # ⚠
SIGNIFICANT_MARK = "\u2731"  # ✱
NOT_POINT_FILES = ("run.json", "index.json")
CONFIDENCE = 0.95


class ReportError(Exception):
    """Input that cannot produce a report; main() turns it into exit status 2."""


# ---------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------

def _load_json(path):
    with open(path, "r", encoding="utf-8") as handle:
        return json.load(handle)


def load_run(run_dir):
    """Return (run, docs, problems): run.json content, point documents, input notes."""
    if not os.path.isdir(run_dir):
        raise ReportError(f"{run_dir} is not a directory (give the run directory results/<experiment>/<run-id>)")
    problems = []
    run = {}
    run_path = os.path.join(run_dir, "run.json")
    if os.path.exists(run_path):
        try:
            run = _load_json(run_path)
        except (ValueError, OSError) as exc:
            raise ReportError(f"{run_path} is not readable JSON: {exc}") from None
        if not isinstance(run, dict):
            raise ReportError(f"{run_path} holds a {type(run).__name__}, expected a JSON object")
    else:
        problems.append("run.json is missing; experiment, plan and report settings are unknown.")

    docs = []
    for name in sorted(os.listdir(run_dir)):
        if not name.endswith(".json") or name.startswith(".") or name in NOT_POINT_FILES:
            continue
        path = os.path.join(run_dir, name)
        if not os.path.isfile(path):
            continue
        try:
            doc = _load_json(path)
        except (ValueError, OSError) as exc:
            problems.append(f"{name} is not readable JSON ({exc}); skipped.")
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
        if not isinstance(doc.get("valid"), bool):
            problems.append(f"{name} has no true/false validity verdict; counted as invalid.")
            doc["valid"] = False
            doc["reasons"] = list(doc.get("reasons") or []) + ["the document carries no validity verdict"]
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

    def __init__(self, run, docs, x=None, metrics=None, include_invalid=False):
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

        if x is None and varying:
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


def fmt_cell(cell):
    """``mean ± ci (n)``; ``mean (1)`` for a single value; blank without values; ⚠ when invalid."""
    if cell is None:
        return ""
    text = ""
    s = cell["summary"]
    if s is not None:
        if s["ci_half"] is None:
            text = "{} ({})".format(fmt_num(s["mean"], s["mean"]), s["n"])
        else:
            text = "{} \u00b1 {} ({})".format(fmt_num(s["mean"], s["mean"]), fmt_num(s["ci_half"], s["mean"]), s["n"])
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


# ---------------------------------------------------------------------------
# report content (a small block model rendered to Markdown and HTML)
# ---------------------------------------------------------------------------

def build_blocks(model, spec, charts, chart_note):
    run = model.run
    docs = model.docs
    blocks = []
    add = blocks.append
    add(("h", 1, spec["title"]))
    n_invalid = sum(1 for d in docs if not d["valid"])
    facts = [
        "experiment: `%s`" % (run.get("experiment") or docs[0].get("experiment") or "?"),
        "run: `%s`" % (run.get("run_id") or docs[0].get("run_id") or "?"),
        f"points: {len(docs)} measured, {len(docs) - n_invalid} valid, {n_invalid} invalid",
    ]
    plan = run.get("plan")
    if isinstance(plan, (list, dict)) and plan:
        measured = {d["point_id"] for d in docs}
        ids = []
        for item in (plan.values() if isinstance(plan, dict) else plan):
            if isinstance(item, dict) and item.get("point_id"):
                ids.append(item["point_id"])
        if isinstance(plan, dict) and not ids:
            ids = list(plan)
        pending = [i for i in ids if i not in measured]
        if ids:
            incomplete = " (the run is incomplete)" if pending else ""
            facts.append(f"plan: {len(ids)} points, {len(pending)} pending{incomplete}")
    started = sorted(str(d["started_at"]) for d in docs if d.get("started_at"))
    finished = sorted(str(d["finished_at"]) for d in docs if d.get("finished_at"))
    if started and finished:
        facts.append(f"measured from {started[0]} to {finished[-1]}")
    facts.append("x axis: %s" % (f"`{model.x}`" if model.x else "none (one column per series)"))
    if model.dependent:
        facts.append("{} follow{} the x value".format(", ".join(f"`{d}`" for d in model.dependent),
                                                      "s" if len(model.dependent) == 1 else ""))
    if model.extra:
        facts.append("series = variant + {}".format(", ".join(f"`{e}`" for e in model.extra)))
    treatment = ("included in the statistics (--include-invalid)" if model.include_invalid
                 else "excluded from the statistics (see Verdicts)")
    facts.append(f"cells: mean \u00b1 half-width of the {CONFIDENCE * 100:.0f} % Student-t confidence interval "
                 f"(number of values); {INVALID_MARK} = the cell has invalid repetitions, {treatment}")
    add(("list", facts))
    notes = list(spec.get("notes") or []) + model.notes
    if chart_note:
        notes.append(chart_note)
    if notes:
        add(("h", 2, "Notes"))
        add(("list", notes))
    for table in spec.get("tables") or []:
        # Tables the experiment derived itself (already formatted), e.g. the NFV study's.
        add(("h", 2, table["title"]))
        add(("table", table["header"], table["rows"]))
        for note in table.get("notes") or []:
            add(("p", note))

    add(("h", 2, "Results"))
    xs = model.x_values
    header = ["series"] + ([_label(x) if model.x else "all points" for x in xs])
    if model.x:
        header[0] = f"series \\ {model.x}"
    if not model.metrics:
        add(("p", "No numeric metric to tabulate."))
    for metric in model.metrics:
        add(("h", 3, _metric_title(model, metric)))
        rows = []
        for skey in model.series:
            rows.append([model.label(skey)] + [fmt_cell(model.cell(skey, x, metric)) for x in xs])
        add(("table", header, rows))
        if metric in charts:
            add(("img", charts[metric], metric))

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
        add(("h", 2, f"Highest valid `{model.x}` per series"))
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

    if spec.get("baseline_variant"):
        blocks.extend(_baseline_blocks(model, spec))

    blocks.extend(_verdict_blocks(model))
    blocks.extend(_environment_blocks(model))
    return blocks


def _baseline_blocks(model, spec):
    base = spec["baseline_variant"]
    hib = spec.get("higher_is_better") or {}
    blocks = [("h", 2, f"Comparison with baseline `{base}`"),
              ("p", ("Change = (mean \u2212 baseline mean) / baseline mean \u00d7 100; p = two-sided Welch t test "
                    f"(needs two values on each side); {SIGNIFICANT_MARK} = significant at \u03b1 = 0.05."))]
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
                p, sig = None, ""
                if len(a["values"]) >= 2 and len(b["values"]) >= 2:
                    test = stats.welch_test(a["values"], b["values"], alpha=0.05)
                    p = test["p_value"]
                    sig = SIGNIFICANT_MARK if test["significant"] else "no"
                row = [model.label(skey), _label(x) if model.x else "", fmt_num(mb, mb), fmt_num(ma, ma),
                       change, fmt_p(p) if p is not None else "n/a", sig if p is not None else "n/a"]
                if direction is not None:
                    if sig == SIGNIFICANT_MARK:
                        row.append("better" if (ma > mb) == bool(direction) else "worse")
                    else:
                        row.append("no significant difference" if p is not None else "n/a")
                rows.append(row)
        blocks.append(("h", 3, _metric_title(model, metric)))
        if rows:
            blocks.append(("table", header, rows))
        else:
            blocks.append(("p", "No cell has values on both sides."))
    return blocks


def _point_label(model, doc):
    params = ", ".join(f"{k}={_label(v)}" for k, v in sorted(doc["parameters"].items()))
    return "`{}` ({}{}, repetition {})".format(doc["point_id"], doc["variant"] or "no variant",
                                          ", " + params if params else "", _label(doc.get("repetition")))


def _verdict_blocks(model):
    blocks = [("h", 2, "Verdicts")]
    invalid = [d for d in model.docs if not d["valid"]]
    if not invalid:
        blocks.append(("p", f"All {len(model.docs)} points are valid."))
    else:
        blocks.append(("p", f"{len(invalid)} of {len(model.docs)} points are invalid:"))
        items = []
        for doc in invalid:
            reasons = [str(r) for r in (doc.get("reasons") or [])] or ["no reason recorded"]
            items.append("{} {}: {}".format(INVALID_MARK, _point_label(model, doc), "; ".join(reasons)))
        blocks.append(("list", items))
    warned = {}
    for doc in model.docs:
        for warning in doc.get("warnings") or []:
            warned.setdefault(str(warning), []).append(doc["point_id"])
    if warned:
        blocks.append(("h", 3, "Warnings"))
        blocks.append(("list", ["{} ({} point{}: {})".format(
            text, len(ids), "" if len(ids) == 1 else "s", ", ".join(f"`{i}`" for i in ids))
            for text, ids in warned.items()]))
    return blocks


def _flatten(value, prefix, out):
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            _flatten(value[key], f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        out[prefix] = ", ".join(_label(v) for v in value)
    else:
        out[prefix] = _label(value)


def _environment_blocks(model):
    blocks = [("h", 2, "Environment")]
    seen = {}
    with_env = 0
    for doc in model.docs:
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
    blocks.append(("p", (f"As recorded in the point documents ({with_env} of {len(model.docs)} carry an environment); "
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
    out = []
    for block in blocks:
        kind = block[0]
        if kind == "h":
            out.append("{} {}\n".format("#" * block[1], block[2]))
        elif kind == "p":
            out.append(block[1] + "\n")
        elif kind == "list":
            out.append("\n".join(f"- {item}" for item in block[1]) + "\n")
        elif kind == "table":
            header, rows = block[1], block[2]
            lines = ["| {} |".format(" | ".join(_md_cell(h) for h in header)),
                     "|{}|".format("|".join([" --- "] + [" ---: "] * (len(header) - 1)))]
            lines.extend("| {} |".format(" | ".join(_md_cell(c) for c in row)) for row in rows)
            out.append("\n".join(lines) + "\n")
        elif kind == "img":
            out.append(f"![{block[2]}]({block[1]})\n")
    return "\n".join(out)


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
"""


def render_html(blocks, title):
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{html.escape(title)}</title>", f"<style>{CSS}</style>", "</head><body>"]
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


def write_results_csv(model, path):
    fixed = ["run_id", "point_id", "variant"]
    metric_names = sorted({m for d in model.docs for m in d["metrics"]})
    taken = set(fixed + ["repetition", "valid", "reasons"])
    param_cols = [p if p not in taken else f"param_{p}" for p in model.parameters]
    taken.update(param_cols)
    metric_cols = [m if m not in taken else f"metric_{m}" for m in metric_names]
    header = fixed + param_cols + ["repetition", "valid"] + metric_cols + ["reasons"]
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for doc in sorted(model.docs, key=lambda d: d["point_id"]):
            row = [doc.get("run_id"), doc["point_id"], doc["variant"]]
            row += [doc["parameters"].get(p) for p in model.parameters]
            row += [doc.get("repetition"), doc["valid"]]
            row += [doc["metrics"].get(m) for m in metric_names]
            row.append("; ".join(str(r) for r in (doc.get("reasons") or [])))
            writer.writerow([_csv_value(v) for v in row])


SUMMARY_FIELDS = ("n", "mean", "stdev", "ci_half", "ci_low", "ci_high", "min", "median", "max", "cv_pct")


def write_summary_csv(model, path):
    header = ["series", "variant", "x_param", "x", "metric", "unit", "points", "n_invalid", "n_missing"]
    header += list(SUMMARY_FIELDS) + ["confidence"]
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for metric in model.metrics:
            for skey in model.series:
                for x in model.x_values:
                    cell = model.cell(skey, x, metric)
                    if cell is None:
                        continue
                    s = cell["summary"] or {}
                    row = [model.label(skey), skey[0], model.x, x, metric, model.unit(metric), cell["docs"],
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


def write_charts(model, run_dir, plt):
    """Write charts/<metric>.png; return {metric: relative path}."""
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
                    points.append((x, s["mean"] if s else None, (s["ci_half"] or 0.0) if s else 0.0,
                                   cell["n_invalid"] > 0, excluded))
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
                                   yerr=[p[2] for p in shown], marker="o", capsize=4, label=label)
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
                bars = ax.bar(pos, means, width=width * 0.95, yerr=errs, capsize=4, label=label)
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
        title = f"{metric}: mean and {CONFIDENCE * 100:.0f} % CI"
        if marked and not model.x_numeric:
            title += " (hatched: invalid repetitions)"
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
        fig.tight_layout()
        name = f"{_safe_name(metric)}.png"
        fig.savefig(os.path.join(chart_dir, name))
        plt.close(fig)
        charts[metric] = f"charts/{name}"
    return charts


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def _write_text(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.rename(tmp, path)


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


def make_report(run_dir, formats=FORMATS, x=None, metrics=None, title=None, baseline=None,
                include_invalid=False, out=sys.stdout):
    """Write the report files; return the list of paths written."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ReportError("unknown format(s) {} (choose from {})".format(", ".join(unknown), ", ".join(FORMATS)))
    run, docs, problems = load_run(run_dir)
    spec = run.get("report") or {}
    if not isinstance(spec, dict):
        raise ReportError(f"run.json key 'report' must be an object, got {spec!r}")
    spec = dict(spec)
    for key, value in (("x", x), ("metrics", metrics), ("title", title), ("baseline_variant", baseline)):
        if value is not None:
            spec[key] = value
    if spec.get("notes") is not None and not isinstance(spec["notes"], list):
        spec["notes"] = [str(spec["notes"])]
    _check_tables(spec.get("tables"))
    if spec.get("higher_is_better") is not None and not isinstance(spec["higher_is_better"], dict):
        raise ReportError("report.higher_is_better must be an object metric -> true/false")
    model = Model(run, docs, x=spec.get("x"), metrics=spec.get("metrics"), include_invalid=include_invalid)
    if spec.get("baseline_variant") and spec["baseline_variant"] not in model.variants:
        raise ReportError("baseline variant {!r} is not a variant of this run (variants: {})".format(spec["baseline_variant"], ", ".join(model.variants)))
    if not spec.get("title"):
        spec["title"] = "{} \u2014 run {}".format(run.get("experiment") or docs[0].get("experiment") or "experiment",
                                             run.get("run_id") or docs[0].get("run_id") or "?")
    model.notes.extend(problems)

    written = []
    charts = {}
    chart_note = None
    if "png" in formats:
        plt = load_pyplot()
        if plt is None:
            chart_note = f"charts were skipped: matplotlib is not installed for {sys.executable}."
            print(f"testbed-report: {chart_note}", file=sys.stderr)
        else:
            charts = write_charts(model, run_dir, plt)
            written.extend(os.path.join(run_dir, p) for p in charts.values())
    model.notes.append("generated {} by scripts/testbed_report.py".format(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
    blocks = build_blocks(model, spec, charts, chart_note)
    if "md" in formats:
        path = os.path.join(run_dir, "report.md")
        _write_text(path, render_md(blocks))
        written.append(path)
    if "html" in formats:
        path = os.path.join(run_dir, "report.html")
        _write_text(path, render_html(blocks, spec["title"]))
        written.append(path)
    if "csv" in formats:
        for name, writer in (("results.csv", write_results_csv), ("summary.csv", write_summary_csv)):
            path = os.path.join(run_dir, name)
            writer(model, path + ".tmp")
            os.rename(path + ".tmp", path)
            written.append(path)
    for path in written:
        print(f"wrote {path}", file=out)
    return written


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="testbed-report", description="Render a testbed run directory into report.md/html, CSV and charts.")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="results/<experiment>/<run-id>")
    parser.add_argument("--format", default=",".join(FORMATS),
                        help="comma-separated outputs among {} (default: all)".format(",".join(FORMATS)))
    parser.add_argument("--x", help="the sweep parameter for table columns and the chart x axis")
    parser.add_argument("--metrics", help="comma-separated metrics to report (default: all)")
    parser.add_argument("--title", help="report title")
    parser.add_argument("--baseline", help="variant to compare the others with (Welch t test)")
    parser.add_argument("--include-invalid", action="store_true",
                        help="include invalid repetitions in the statistics (they are still marked)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    try:
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
