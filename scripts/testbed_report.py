#!/usr/bin/env python3
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render a result-store run directory into a report, or compare two runs.

    python scripts/testbed_report.py RUN_DIR [--format md,html,csv,png]
        [--x PARAM] [--metrics m1,m2] [--title T] [--baseline VARIANT] [--include-invalid]
    python scripts/testbed_report.py --compare RUN_A RUN_B [--out DIR] [--include-invalid]
                                     [--tolerance METRIC=-N% ...]   (exit 1 past a tolerance)

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
``module_utils/testbed_stats/core.py``: one implementation of the maths.

This file is only the command line: the report is the library
``module_utils/testbed_report_*.py``, one module per part (load, model,
format, spec, derived tables, blocks, render, csv, charts, make, compare).

A point whose ``verdict`` is ``fault`` (a lab fault) is never a result: it is
listed under "Faults (re-measured)" only.

Exit status: 0 report written, 2 unusable input (no points, unknown x/metric...).
"""

import argparse
import os
import sys

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

from ansible.module_utils.testbed_reports.base import FORMATS, ReportError  # noqa: E402
from ansible.module_utils.testbed_reports.compare import compare, parse_tolerance  # noqa: E402
from ansible.module_utils.testbed_reports.make import make_report  # noqa: E402
from ansible.module_utils.testbed_stats import core as stats  # noqa: E402


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="testbed-report", description="Render a testbed run directory into report.md/html, CSV and charts, "
        "or compare two runs (--compare RUN_A RUN_B).")
    parser.add_argument("run_dir", metavar="RUN_DIR", nargs="?", help="results/<experiment>/<run-id>")
    parser.add_argument("--compare", nargs=2, metavar=("RUN_A", "RUN_B"),
                        help="compare two run directories: per variant x parameters x metric in both, the means, "
                             "n, change %% and Welch p (Markdown on stdout)")
    parser.add_argument("--out", metavar="DIR", help="with --compare: also write compare.md and compare.csv in DIR")
    parser.add_argument("--tolerance", action="append", default=[], metavar="METRIC=-N%",
                        help="with --compare, the regression gate (repeatable): METRIC=-N%% fails a significant drop of "
                             "more than N %%, METRIC=+N%% a significant rise; METRIC is a metric, the metric without "
                             "its unit suffix (throughput for throughput_gbps) or a shell pattern; exit status 1 when "
                             "a cell fails, with the table that says why")
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
    if args.tolerance and not args.compare:
        parser.error("--tolerance goes with --compare (the gate compares a run with another)")
    if args.out and not args.compare:
        parser.error("--out goes with --compare (a report is written into RUN_DIR)")
    return args


def main(argv=None):
    args = parse_args(argv)
    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    try:
        if args.compare:
            metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
            tolerances = [parse_tolerance(text) for text in args.tolerance]
            _rows, failures = compare(args.compare[0], args.compare[1], out_dir=args.out,
                                      include_invalid=args.include_invalid, metrics=metrics, tolerances=tolerances)
            if failures:
                return 1
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
