# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Comparing two runs: per variant x parameters x metric measured in both.

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

import csv
import os
import sys

from ansible.module_utils import testbed_stats as stats
from ansible.module_utils.testbed_report_csv import _csv_value
from ansible.module_utils.testbed_report_derived import _used, _variant_order
from ansible.module_utils.testbed_report_format import fmt_num, fmt_p
from ansible.module_utils.testbed_report_load import load_run
from ansible.module_utils.testbed_report_make import _write_text
from ansible.module_utils.testbed_report_model import _is_finite_number, _key, _label
from ansible.module_utils.testbed_report_render import _md_cell

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
