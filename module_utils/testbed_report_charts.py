# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Charts (matplotlib, Agg backend; skipped with a note when matplotlib is missing).

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

import os

from ansible.module_utils.testbed_report_base import CONFIDENCE
from ansible.module_utils.testbed_report_format import is_clipped, safe_file_name
from ansible.module_utils.testbed_report_model import is_finite_number, json_key, value_label
from ansible.module_utils.testbed_results import make_private_dirs, private_opener


def load_pyplot():
    """matplotlib.pyplot with the Agg backend, or None when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _save(fig, path):
    """The figure as PNG at ``path``, for its owner only (testbed_results.FILE_MODE)."""
    with open(path, "wb", opener=private_opener) as handle:
        fig.savefig(handle, format="png")


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
                    if not d["valid"] and is_finite_number(d["metrics"].get(metric))]
                if s or excluded:
                    half = (s["ci_half"] or 0.0) if s else 0.0
                    low = min(half, s["mean"]) if s and is_clipped(s, model.clip[metric]) else half
                    points.append((x, s["mean"] if s else None, (low, half), cell["n_invalid"] > 0, excluded))
            if points:
                series.append((model.label(skey), points))
        if not series:
            continue
        make_private_dirs(chart_dir)
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
                by_x = {json_key(p[0]): p for p in points}
                pos, means, errs, bad = [], [], [], []
                for gi, x in enumerate(groups):
                    p = by_x.get(json_key(x))
                    if p is None or p[1] is None:
                        continue
                    pos.append(gi - 0.4 + width * (index + 0.5))
                    means.append(p[1])
                    errs.append(p[2])
                    bad.append(p[3])
                bars = ax.bar(pos, means, width=width * 0.95, yerr=[[e[0] for e in errs], [e[1] for e in errs]],
                              capsize=4, label=label)
                for patch, is_bad in zip(bars, bad):
                    if is_bad:
                        patch.set_hatch("//")
                        patch.set_edgecolor("red")
                        marked = True
            ax.set_xticks(range(len(groups)))
            ax.set_xticklabels([value_label(x) if model.x else "" for x in groups])
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
        name = f"{prefix}{safe_file_name(metric)}.png"
        _save(fig, os.path.join(chart_dir, name))
        plt.close(fig)
        charts[metric] = f"charts/{name}"
    return charts


def write_table_chart(table, run_dir, plt, prefix):
    """A derived table's line chart (e.g. rebuild progress curves): charts/<prefix><title>.png."""
    chart = table["chart"]
    chart_dir = os.path.join(run_dir, "charts")
    make_private_dirs(chart_dir)
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
    name = f"{prefix}{safe_file_name(table['title'])}.png"
    _save(fig, os.path.join(chart_dir, name))
    plt.close(fig)
    return f"charts/{name}"
