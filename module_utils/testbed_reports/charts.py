# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Charts as PNG, SVG and PDF (matplotlib, Agg backend; skipped with a note when matplotlib is missing).

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

import os

from ansible.module_utils.testbed_reports.base import CONFIDENCE
from ansible.module_utils.testbed_reports.format import axis_label, is_clipped, safe_file_name, words
from ansible.module_utils.testbed_reports.model import is_finite_number, json_key, value_label
from ansible.module_utils.testbed_results import make_private_dirs, private_opener

CHART_FORMATS = ("png", "svg", "pdf")
PNG_DPI = 200


def load_pyplot():
    """matplotlib.pyplot with the Agg backend, or None when matplotlib is missing.

    SVG ids are salted with a constant and no file carries a date, so a chart of the same
    documents is the same file again (docs/example-report is checked in); an SVG's words are text."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    matplotlib.rcParams["svg.hashsalt"] = "testbed"
    matplotlib.rcParams["svg.fonttype"] = "none"   # the SVG's words stay text, to edit in a paper
    return plt


_NO_DATE = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}}


def _save(fig, chart_dir, base):
    """The figure as charts/<base>.png (PNG_DPI), .svg and .pdf, for its owner only
    (testbed_results.FILE_MODE); returns the PNG's path relative to the run."""
    for fmt in CHART_FORMATS:
        with open(os.path.join(chart_dir, f"{base}.{fmt}"), "wb", opener=private_opener) as handle:
            fig.savefig(handle, format=fmt, dpi=PNG_DPI if fmt == "png" else None, metadata=_NO_DATE[fmt])
    return f"charts/{base}.png"


def published_marks(spec, metric, x_param):
    """The study's published values of ``metric`` for a chart: ({(x key or None, variant): value}, label).

    From a study-shaped pivot of that metric whose rows are the chart's x (report.pivots[].reference:
    {label, values: {row: {column: value}}}), else from report.reference ({label, values: {variant:
    {metric: value}}}, one value per variant: None as the x key). ({}, None) when the study has none."""
    for pivot in (spec or {}).get("pivots") or []:
        reference = pivot.get("reference")
        if pivot.get("metric") == metric and reference and x_param and pivot.get("rows") == x_param:
            marks = {(str(row), str(column)): float(value)
                     for row, columns in (reference.get("values") or {}).items()
                     for column, value in columns.items() if is_finite_number(value)}
            if marks:
                return marks, str(reference.get("label") or "study")
    reference = (spec or {}).get("reference") or {}
    marks = {(None, str(variant)): float(metrics[metric])
             for variant, metrics in (reference.get("values") or {}).items()
             if is_finite_number(metrics.get(metric))}
    return (marks, str(reference.get("label") or "study")) if marks else ({}, None)


def _mark_for(marks, x, variant):
    if (None, variant) in marks:
        return marks[(None, variant)]
    return marks.get((value_label(x), variant))


def write_charts(model, run_dir, plt, prefix="", heading="", spec=None):
    """Write charts/<prefix><metric>.png, .svg and .pdf; return {metric: the PNG's relative path}.

    Axes and titles are in words with units (the spec's ``labels``, else testbed_reports.format.axis_label). Error bars are the
    confidence intervals, their low end clipped at 0 for metrics that cannot be negative (as in the
    tables). The study's published value (published_marks of ``spec``) is a hollow black diamond beside
    each of ours where the study has one."""
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
                series.append((model.label(skey), str(skey[0]), points))
        if not series:
            continue
        marks, marks_label = published_marks(spec, metric, model.x)
        labels = (spec or {}).get("labels") or {}
        published = []   # (position, value) of the study's figures, drawn after ours
        make_private_dirs(chart_dir)
        fig, ax = plt.subplots(figsize=(8, 4.8))
        marked = False
        if model.x_numeric:
            numeric_x = [x for x in model.x_values if x is not None]
            span = (max(numeric_x) - min(numeric_x)) or 1.0
            for index, (label, variant, points) in enumerate(series):
                # a small horizontal dodge keeps overlapping series visible
                dodge = (index - (len(series) - 1) / 2.0) * 0.008 * span
                shown = [p for p in points if p[0] is not None and p[1] is not None]
                line = ax.errorbar([p[0] + dodge for p in shown], [p[1] for p in shown],
                                   yerr=[[p[2][0] for p in shown], [p[2][1] for p in shown]], marker="o",
                                   capsize=4, label=label)
                color = line[0].get_color()
                published.extend((p[0] + dodge, _mark_for(marks, p[0], variant)) for p in shown)
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
            ax.set_xlabel(labels.get(model.x) or axis_label(model.x))
        else:
            groups = model.x_values
            width = 0.8 / len(series)
            for index, (label, variant, points) in enumerate(series):
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
                    published.append((pos[-1], _mark_for(marks, x, variant)))
                bars = ax.bar(pos, means, width=width * 0.95, yerr=[[e[0] for e in errs], [e[1] for e in errs]],
                              capsize=4, label=label)
                for patch, is_bad in zip(bars, bad):
                    if is_bad:
                        patch.set_hatch("//")
                        patch.set_edgecolor("red")
                        marked = True
            ax.set_xticks(range(len(groups)))
            ax.set_xticklabels([value_label(x) if model.x else "" for x in groups])
            ax.set_xlabel((labels.get(model.x) or axis_label(model.x)) if model.x else "all points")
        published = [p for p in published if p[1] is not None]
        if published:
            ax.scatter([p[0] for p in published], [p[1] for p in published], marker="D", s=60, facecolors="none",
                       edgecolors="black", linewidths=1.5, zorder=7, label=f"published: {marks_label}")
        unit = model.unit(metric)
        ax.set_ylabel(labels.get(metric) or axis_label(metric, unit))
        title = f"{heading}{words(metric, unit)}: mean and {CONFIDENCE * 100:.0f} % CI"
        if model.x:
            title += f" by {words(model.x).lower()}"
        if any(p[2][0] < p[2][1] for _series_label, _variant, points in series for p in points):
            title += " (clipped at 0)"
        if marked and not model.x_numeric:
            title += " (hatched: invalid repetitions)"
        ax.set_title(title, fontsize="medium")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
        fig.tight_layout()
        charts[metric] = _save(fig, chart_dir, f"{prefix}{safe_file_name(metric)}")
        plt.close(fig)
    return charts


def write_table_chart(table, run_dir, plt, prefix):
    """A derived table's line chart (e.g. rebuild progress curves): charts/<prefix><title>.png, .svg, .pdf."""
    chart = table["chart"]
    chart_dir = os.path.join(run_dir, "charts")
    make_private_dirs(chart_dir)
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for label, points in chart["series"].items():
        ax.plot([p[0] for p in points], [float("nan") if p[1] is None else p[1] for p in points],
                marker=".", label=str(label))
    ax.set_xlabel(str(chart.get("x_label") or "x"))
    ax.set_ylabel(str(chart.get("y_label") or "y"))
    ax.set_title(table["title"], fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    path = _save(fig, chart_dir, f"{prefix}{safe_file_name(table['title'])}")
    plt.close(fig)
    return path
