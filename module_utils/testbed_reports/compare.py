# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Comparing two runs: per variant x parameters x metric measured in both.

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

import csv
import fnmatch
import os
import re
import sys

from ansible.module_utils.testbed_reports.base import ReportError
from ansible.module_utils.testbed_reports.blocks import flatten_dotted
from ansible.module_utils.testbed_reports.csv import csv_value
from ansible.module_utils.testbed_reports.derived import used_docs, variant_order
from ansible.module_utils.testbed_reports.format import fmt_num, fmt_p
from ansible.module_utils.testbed_reports.load import load_run
from ansible.module_utils.testbed_reports.make import write_text_file
from ansible.module_utils.testbed_reports.model import is_finite_number, json_key, value_label
from ansible.module_utils.testbed_reports.render import md_cell
from ansible.module_utils.testbed_results import make_private_dirs, private_opener
from ansible.module_utils.testbed_results.params import parameter_changes, show_value
from ansible.module_utils.testbed_stats import core as stats

COMPARE_FIELDS = ("variant", "parameters", "metric", "unit", "mean_a", "n_a", "mean_b", "n_b", "change_pct",
                  "p_value", "significant", "note")


ALPHA = 0.05
# Environment facts that differ between any two runs and say nothing about the setup.
_VOLATILE = ("controller.provenance", "controller.hostname")


def holm(p_values, alpha=ALPHA):
    """Holm-Bonferroni: which of ``p_values`` (None = not testable) are significant at family-wise ``alpha``.

    Sorted ascending, the i-th smallest (0-based, of m testable) is significant while
    p <= alpha / (m - i); the first that is not stops the procedure. Returns a list of
    True/False/None in the order given.
    """
    testable = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    result = [None if p is None else False for p in p_values]
    m = len(testable)
    for rank, (p, index) in enumerate(testable):
        if p > alpha / (m - rank):
            break
        result[index] = True
    return result


def _facts(docs):
    """Environment facts (flattened) -> the set of their values over a run's points, without volatile ones."""
    seen = {}
    for doc in docs:
        flat = {}
        flatten_dotted(doc.get("environment") or {}, "", flat)
        for key, value in flat.items():
            if not key.startswith(_VOLATILE):
                seen.setdefault(key, set()).add(value)
    return seen


def run_differences(run_a, docs_a, run_b, docs_b):
    """What makes two runs of the same experiment differ: ``{run_parameters: [...], environment: [...]}``.

    Each entry is ``(key, value in A, value in B)``; environment values are the
    points' distinct values joined.
    """
    changes = [(key, show_value(old), show_value(new)) for key, old, new in
               parameter_changes(run_a.get("run_parameters") or {}, run_b.get("run_parameters") or {})]
    facts_a, facts_b = _facts(docs_a), _facts(docs_b)
    environment = []
    for key in sorted(set(facts_a) | set(facts_b)):
        a, b = facts_a.get(key, set()), facts_b.get(key, set())
        if a != b:
            environment.append((key, "; ".join(sorted(a)) or "(absent)", "; ".join(sorted(b)) or "(absent)"))
    return {"run_parameters": changes, "environment": environment}


def compare_runs(run_a, run_b, include_invalid=False, metrics=None):
    """Rows comparing two run directories: per variant x parameters x metric measured in both.

    Both must be runs of the same experiment (ReportError otherwise).
    ``change_pct`` = pct_change(mean B, mean A) (None when mean A is 0); ``p_value``
    = Welch test of B against A; ``significant`` is ``yes``/``no`` after the
    Holm-Bonferroni correction over every testable cell (family-wise alpha 0.05),
    or ``not testable``; ``metrics`` limits the metrics compared.
    Returns ``(rows, info)`` with info = {a: {experiment, run_id, points}, b: {...}, only_a, only_b,
    tests, differences}.
    """
    loaded = []
    for run_dir in (run_a, run_b):
        run, docs, _problems = load_run(run_dir)
        loaded.append((run, used_docs(docs, include_invalid), docs))
    experiments = [run.get("experiment") or (docs[0].get("experiment") if docs else None) for run, _u, docs in loaded]
    if experiments[0] != experiments[1]:
        raise ReportError(f"{run_a} is a run of {experiments[0]} and {run_b} a run of {experiments[1]}: only two runs "
                          "of the same experiment can be compared")
    wanted = None if metrics is None else set(metrics)
    groups = []
    for _run, used, _docs in loaded:
        group = {}
        for doc in used:
            for metric, value in doc["metrics"].items():
                if is_finite_number(value) and (wanted is None or metric in wanted):
                    group.setdefault((doc["variant"], json_key(doc["parameters"]), metric), []).append(value)
        groups.append(group)
    if wanted is not None:
        known = {m for group in groups for _v, _p, m in group}
        missing = sorted(wanted - known)
        if missing:
            raise ReportError(f"--metrics names {', '.join(missing)}, which neither run measured as a number")
    units = {}
    params = {}
    for _run, used, _docs in loaded:
        for doc in used:
            params.setdefault(json_key(doc["parameters"]), doc["parameters"])
            for name, unit in (doc.get("units") or {}).items():
                units.setdefault(name, unit)
    order = variant_order(loaded[0][0], loaded[0][1])
    order += [v for v in variant_order(loaded[1][0], loaded[1][1]) if v not in order]
    common = sorted(set(groups[0]) & set(groups[1]),
                    key=lambda k: (order.index(k[0]) if k[0] in order else len(order), k[1], k[2]))
    rows = []
    for key in common:
        a, b = groups[0][key], groups[1][key]
        mean_a, mean_b = stats.summary(a)["mean"], stats.summary(b)["mean"]
        test = stats.welch_test(b, a, alpha=ALPHA)
        rows.append({
            "variant": key[0], "parameters": params[key[1]], "metric": key[2], "unit": units.get(key[2], ""),
            "mean_a": mean_a, "n_a": len(a), "mean_b": mean_b, "n_b": len(b),
            "change_pct": stats.pct_change(mean_b, mean_a) if mean_a != 0 else None,
            "p_value": test["p_value"] if test["testable"] else None,
            "note": test["reason"] or "",
        })
    for row, significant in zip(rows, holm([r["p_value"] for r in rows])):
        row["significant"] = "not testable" if significant is None else ("yes" if significant else "no")
    info = {}
    for name, (run, used, docs), run_dir in zip(("a", "b"), loaded, (run_a, run_b)):
        info[name] = {"dir": run_dir, "experiment": run.get("experiment") or docs[0].get("experiment") or "?",
                      "run_id": run.get("run_id") or docs[0].get("run_id") or "?", "points": len(used)}
    info["only_a"] = len(set(groups[0]) - set(groups[1]))
    info["only_b"] = len(set(groups[1]) - set(groups[0]))
    info["tests"] = sum(1 for r in rows if r["p_value"] is not None)
    info["differences"] = run_differences(loaded[0][0], loaded[0][2], loaded[1][0], loaded[1][2])
    return rows, info


def render_compare_md(rows, info):
    a, b = info["a"], info["b"]
    out = [f"# Compare run `{a['run_id']}` (A) with run `{b['run_id']}` (B)\n",
           "\n".join([f"- A: `{a['dir']}` ({a['experiment']}, {a['points']} points used)",
                      f"- B: `{b['dir']}` ({b['experiment']}, {b['points']} points used)",
                      "- change = (mean B \u2212 mean A) / mean A \u00d7 100; p = two-sided Welch t test of B "
                      f"against A; significant after the Holm-Bonferroni correction over the {info['tests']} "
                      "testable cells (family-wise \u03b1 = 0.05; not testable: a side has one value or both are "
                      "constant); valid points only",
                      f"- compared: {len(rows)} variant \u00d7 parameters \u00d7 metric cells measured in both; "
                      f"{info['only_a']} only in A, {info['only_b']} only in B"]) + "\n"]
    differences = info["differences"]
    for title, entries, none in (("Run parameters that differ", differences["run_parameters"],
                                  "The run parameters are the same."),
                                 ("Environment facts that differ", differences["environment"],
                                  "The recorded environments are the same.")):
        out.append(f"## {title}\n")
        if entries:
            out.append("| key | A | B |\n| --- | --- | --- |\n" + "\n".join(
                f"| `{key}` | {md_cell(a)} | {md_cell(b)} |" for key, a, b in entries) + "\n")
        else:
            out.append(none + "\n")
    out.append("## Cells\n")
    if not rows:
        out.append("No variant \u00d7 parameters \u00d7 metric is measured in both runs.\n")
        return "\n".join(out)
    header = ["variant", "parameters", "metric", "mean A", "n A", "mean B", "n B", "change %", "p", "significant"]
    table = ["| {} |".format(" | ".join(header)),
             "|{}|".format("|".join([" --- "] * 3 + [" ---: "] * (len(header) - 3)))]
    for r in rows:
        params = ", ".join(f"{k}={value_label(v)}" for k, v in sorted(r["parameters"].items()))
        metric = f"`{r['metric']}`" + (f" ({r['unit']})" if r["unit"] else "")
        cells = [r["variant"] or "(no variant)", params, metric, fmt_num(r["mean_a"], r["mean_a"]), str(r["n_a"]),
                 fmt_num(r["mean_b"], r["mean_a"]), str(r["n_b"]),
                 "n/a" if r["change_pct"] is None else f"{r['change_pct']:+.2f}",
                 "n/a" if r["p_value"] is None else fmt_p(r["p_value"]), r["significant"]]
        table.append("| {} |".format(" | ".join(md_cell(c) for c in cells)))
    out.append("\n".join(table) + "\n")
    return "\n".join(out)


def write_compare_csv(rows, path):
    with open(path, "w", encoding="utf-8", newline="", opener=private_opener) as handle:
        writer = csv.writer(handle)
        writer.writerow(COMPARE_FIELDS)
        for r in rows:
            writer.writerow([csv_value(r[f]) for f in COMPARE_FIELDS])


_TOLERANCE = re.compile(r"^\s*([A-Za-z0-9_.*?\[\]-]+)\s*=\s*([+-])\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*$")


def parse_tolerance(text):
    """``METRIC=-N%`` (a drop beyond N % fails) or ``METRIC=+N%`` (a rise beyond N % fails) as a dict.

    METRIC is a metric's name, the name without its unit suffix (``throughput`` for
    ``throughput_gbps``) or a shell pattern (``*_ms``). ReportError names what is wrong.
    """
    match = _TOLERANCE.match(text or "")
    if not match:
        raise ReportError(f"--tolerance {text!r} is not METRIC=-N% or METRIC=+N% (for example throughput=-5% "
                          "fails a drop of more than 5 %, latency_ms=+10% a rise of more than 10 %)")
    return {"pattern": match.group(1), "direction": -1 if match.group(2) == "-" else 1,
            "pct": float(match.group(3)), "text": f"{match.group(1)}={match.group(2)}{match.group(3)}%"}


def _tolerance_matches(tolerance, metric):
    pattern = tolerance["pattern"]
    return metric == pattern or metric.startswith(pattern + "_") or fnmatch.fnmatchcase(metric, pattern)


def gate(rows, tolerances):
    """The cells that fail the regression gate, each with the tolerance it broke and why.

    A cell fails when its change is significant (``significant == 'yes'``, Welch with
    Holm-Bonferroni) and beyond the tolerance in the tolerance's direction. The first
    tolerance that matches a metric applies. A tolerance that matches no compared
    metric is an error (a typo would pass every run).
    """
    failures = []
    used = set()
    for row in rows:
        tolerance = next((t for t in tolerances if _tolerance_matches(t, row["metric"])), None)
        if tolerance is None:
            continue
        used.add(tolerance["text"])
        change = row["change_pct"]
        if change is None or row["significant"] != "yes":
            continue
        if change * tolerance["direction"] > tolerance["pct"]:
            failures.append(dict(row, tolerance=tolerance["text"],
                                 reason=f"{change:+.2f} % is significant and beyond {tolerance['text']}"))
    unused = [t["text"] for t in tolerances if t["text"] not in used]
    if unused:
        raise ReportError(f"--tolerance {', '.join(unused)} matches no metric measured in both runs; the metrics "
                          f"compared are {', '.join(sorted({r['metric'] for r in rows})) or 'none'}")
    return failures


def render_gate_md(failures, tolerances, cells):
    """The gate's verdict as Markdown: a line, then the table of the cells that fail it."""
    rules = ", ".join(t["text"] for t in tolerances)
    if not failures:
        return (f"\n## Regression gate: passed\n\nNo cell of {cells} changed significantly beyond its tolerance "
                f"({rules}).\n")
    out = [f"\n## Regression gate: FAILED ({len(failures)} of {cells} cells)\n",
           f"Tolerances: {rules}. A cell fails when its change is significant (Holm-Bonferroni, "
           "family-wise \u03b1 = 0.05) and beyond its tolerance.\n",
           "| variant | parameters | metric | mean A | mean B | change % | p | tolerance |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for r in failures:
        params = ", ".join(f"{k}={value_label(v)}" for k, v in sorted(r["parameters"].items()))
        metric = f"`{r['metric']}`" + (f" ({r['unit']})" if r["unit"] else "")
        cells_md = [r["variant"] or "(no variant)", params, metric, fmt_num(r["mean_a"], r["mean_a"]),
                    fmt_num(r["mean_b"], r["mean_a"]), f"{r['change_pct']:+.2f}", fmt_p(r["p_value"]),
                    r["tolerance"]]
        out.append("| {} |".format(" | ".join(md_cell(c) for c in cells_md)))
    return "\n".join(out) + "\n"


def compare(run_a, run_b, out_dir=None, include_invalid=False, out=None, metrics=None, tolerances=None):
    """Print the comparison of two runs as Markdown; with ``out_dir`` also write compare.md and compare.csv.

    With ``tolerances`` (parse_tolerance's dicts) the regression gate's verdict is appended;
    returns ``(rows, failures)``: the caller exits non-zero when failures is not empty.
    """
    rows, info = compare_runs(run_a, run_b, include_invalid=include_invalid, metrics=metrics)
    failures = gate(rows, tolerances) if tolerances else []
    text = render_compare_md(rows, info)
    if tolerances:
        text += render_gate_md(failures, tolerances, len(rows))
    (out or sys.stdout).write(text)
    if out_dir:
        make_private_dirs(out_dir)
        write_text_file(os.path.join(out_dir, "compare.md"), text)
        path = os.path.join(out_dir, "compare.csv")
        write_compare_csv(rows, path + ".tmp")
        os.rename(path + ".tmp", path)
    return rows, failures
