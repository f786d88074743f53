# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Making a run's report: every format, written beside the run.

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

import os
import sys
import time

from ansible.module_utils.testbed_reports.base import FORMATS, ReportError
from ansible.module_utils.testbed_reports.blocks import Section, build_blocks
from ansible.module_utils.testbed_reports.charts import load_pyplot, write_charts, write_table_chart
from ansible.module_utils.testbed_reports.csv import write_results_csv, write_summary_csv, write_tidy_csv
from ansible.module_utils.testbed_reports.format import safe_file_name
from ansible.module_utils.testbed_reports.load import load_run, matches
from ansible.module_utils.testbed_reports.model import Model
from ansible.module_utils.testbed_reports.render import render_html, render_md
from ansible.module_utils.testbed_reports.spec import check_spec
from ansible.module_utils.testbed_reports.tex import render_tex
from ansible.module_utils.testbed_results import private_opener


def write_text_file(path, text):
    """``text`` to ``path`` via ``path.tmp`` + rename, for its owner only (testbed_results.FILE_MODE)."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", opener=private_opener) as handle:
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
                                    notes=sspec["notes"], prefix=f"{number + 1:02d}_{safe_file_name(sspec['title'])}__"))

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
                                                  heading=f"{section.title}: " if section.title else "",
                                                  spec=spec)
                    written.extend(os.path.join(run_dir, p) for p in section.charts.values())
            for number, table in enumerate(spec.get("tables") or []):
                if table.get("chart"):
                    table["chart_path"] = write_table_chart(table, run_dir, plt, f"table{number + 1:02d}_")
                    written.append(os.path.join(run_dir, table["chart_path"]))
    notes.append("generated {} by scripts/testbed_report.py".format(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
    blocks = build_blocks(run, docs, faults, spec, sections, notes)
    if "md" in formats:
        path = os.path.join(run_dir, "report.md")
        write_text_file(path, render_md(blocks, run_dir))
        written.append(path)
    if "html" in formats:
        path = os.path.join(run_dir, "report.html")
        write_text_file(path, render_html(blocks, spec["title"], run_dir))
        written.append(path)
    if "tex" in formats:
        text = render_tex(blocks, spec["title"])
        if text is not None:
            path = os.path.join(run_dir, "report-tables.tex")
            write_text_file(path, text)
            written.append(path)
    if "csv" in formats:
        path = os.path.join(run_dir, "results.csv")
        write_results_csv(all_docs, path + ".tmp")
        os.rename(path + ".tmp", path)
        written.append(path)
        path = os.path.join(run_dir, "results_tidy.csv")
        write_tidy_csv(all_docs, path + ".tmp")
        os.rename(path + ".tmp", path)
        written.append(path)
        path = os.path.join(run_dir, "summary.csv")
        write_summary_csv(sections, path + ".tmp", titled=spec["sections"] is not None)
        os.rename(path + ".tmp", path)
        written.append(path)
    for path in written:
        print(f"wrote {path}", file=out)
    return written
