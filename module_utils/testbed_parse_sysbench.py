# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for the stdout report of sysbench 1.0/1.1 (``LC_ALL=C``).

``parse(text, source="<content>")`` returns the common parse result (see
``testbed_parse``).  Layout: akopytov/sysbench 1.0.20 and 1.1.0 (master)
``src/sysbench.c`` (common tail), ``src/db_driver.c`` (SQL statistics) and
``src/tests/*``; the versions and variants are listed in docs/parsers.md.

* 1.0 prints ``General statistics:`` / ``total time:``; 1.1 prints
  ``Throughput:`` / ``events/s (eps):`` / ``time elapsed:`` instead.  Both
  give ``total_time_s`` and ``total_events``.
* 1.1 ``fileio`` has its own summary (``read:  IOPS=... MiB/s``, ``write:``,
  ``fsync:``) and prints neither the total time, the event count nor the
  thread fairness: those metrics are null with a warning naming the version.
* A UTF-8 byte-order mark before the version line is ignored.

* ``test`` is ``cpu``, ``memory``, ``fileio`` or ``oltp`` (any Lua test that
  prints ``SQL statistics``), detected from the test-specific block.
* The latency percentile keeps the number sysbench printed: ``95th percentile``
  gives ``latency_p95_ms``, ``--percentile=99`` gives ``latency_p99_ms``;
  ``percentile stats: disabled`` (``--percentile=0``) gives no percentile metric.
* Any ``FATAL:`` line, or a report without ``General statistics:``, is a
  ParseError carrying sysbench's FATAL text.
* ``--report-interval`` lines are returned in ``details.intervals``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.testbed_parse import (
    INT,
    NUM,
    ParseError,
    invalidate,
    new_result,
    require_text,
    to_number,
    warn,
)

TOOL = "sysbench"

COMMON = (
    ("total_time_s", "'total time:' (1.0) or 'time elapsed:' (1.1)",
     r"^\s+(?:total time|time elapsed):\s+(%s)s\s*$" % NUM, False),
    ("total_events", "'total number of events:'", r"^\s+total number of events:\s+(%s)\s*$" % INT, True),
    ("latency_min_ms", "latency 'min:'", r"^\s+min:\s+(%s)\s*$" % NUM, False),
    ("latency_avg_ms", "latency 'avg:'", r"^\s+avg:\s+(%s)\s*$" % NUM, False),
    ("latency_max_ms", "latency 'max:'", r"^\s+max:\s+(%s)\s*$" % NUM, False),
    ("latency_sum_ms", "latency 'sum:'", r"^\s+sum:\s+(%s)\s*$" % NUM, False),
)
FAIRNESS = (r"^\s+events \(avg/stddev\):\s+(?P<fairness_events_avg>%s)/(?P<fairness_events_stddev>%s)\s*$\n"
            r"^\s+execution time \(avg/stddev\):\s+(?P<fairness_exec_time_avg_s>%s)/(?P<fairness_exec_time_stddev_s>%s)\s*$"
            % (NUM, NUM, NUM, NUM))

CPU = (("events_per_s", "'events per second:'", r"^\s+events per second:\s+(%s)\s*$" % NUM, False),)
MEMORY = (
    ("total_operations", "'Total operations:'", r"^Total operations: (%s) \(\s*%s per second\)\s*$" % (INT, NUM), True),
    ("operations_per_s", "'Total operations:'", r"^Total operations: %s \(\s*(%s) per second\)\s*$" % (INT, NUM), False),
    ("transferred_mib", "'MiB transferred'", r"^(%s) MiB transferred \(\s*%s MiB/sec\)\s*$" % (NUM, NUM), False),
    ("transfer_mib_s", "'MiB transferred'", r"^%s MiB transferred \(\s*(%s) MiB/sec\)\s*$" % (NUM, NUM), False),
)
FILEIO = (
    ("reads_per_s", "'reads/s:'", r"^\s+reads/s:\s+(%s)\s*$" % NUM, False),
    ("writes_per_s", "'writes/s:'", r"^\s+writes/s:\s+(%s)\s*$" % NUM, False),
    ("fsyncs_per_s", "'fsyncs/s:'", r"^\s+fsyncs/s:\s+(%s)\s*$" % NUM, False),
    ("read_mib_s", "'read, MiB/s:'", r"^\s+read, MiB/s:\s+(%s)\s*$" % NUM, False),
    ("written_mib_s", "'written, MiB/s:'", r"^\s+written, MiB/s:\s+(%s)\s*$" % NUM, False),
)
# sysbench 1.1 fileio (src/tests/fileio/sb_fileio.c file_report_cumulative)
FILEIO_11 = (
    ("reads_per_s", "'read:  IOPS='", r"^\s+read:\s+IOPS=(%s) %s MiB/s \(%s MB/s\)\s*$" % (NUM, NUM, NUM), False),
    ("read_mib_s", "'read:  IOPS='", r"^\s+read:\s+IOPS=%s (%s) MiB/s \(%s MB/s\)\s*$" % (NUM, NUM, NUM), False),
    ("writes_per_s", "'write: IOPS='", r"^\s+write:\s+IOPS=(%s) %s MiB/s \(%s MB/s\)\s*$" % (NUM, NUM, NUM), False),
    ("written_mib_s", "'write: IOPS='", r"^\s+write:\s+IOPS=%s (%s) MiB/s \(%s MB/s\)\s*$" % (NUM, NUM, NUM),
     False),
    ("fsyncs_per_s", "'fsync: IOPS='", r"^\s+fsync:\s+IOPS=(%s)\s*$" % NUM, False),
)
OLTP = (
    ("queries_read", "'read:'", r"^\s+read:\s+(%s)\s*$" % INT, True),
    ("queries_write", "'write:'", r"^\s+write:\s+(%s)\s*$" % INT, True),
    ("queries_other", "'other:'", r"^\s+other:\s+(%s)\s*$" % INT, True),
    ("queries_total", "'total:'", r"^\s+total:\s+(%s)\s*$" % INT, True),
    ("transactions", "'transactions:'", r"^\s+transactions:\s+(%s)\s+\(%s per sec\.\)\s*$" % (INT, NUM), True),
    ("transactions_per_s", "'transactions:'", r"^\s+transactions:\s+%s\s+\((%s) per sec\.\)\s*$" % (INT, NUM), False),
    ("queries", "'queries:'", r"^\s+queries:\s+(%s)\s+\(%s per sec\.\)\s*$" % (INT, NUM), True),
    ("queries_per_s", "'queries:'", r"^\s+queries:\s+%s\s+\((%s) per sec\.\)\s*$" % (INT, NUM), False),
    ("ignored_errors", "'ignored errors:'", r"^\s+ignored errors:\s+(%s)\s+\(%s per sec\.\)\s*$" % (INT, NUM), True),
    ("ignored_errors_per_s", "'ignored errors:'", r"^\s+ignored errors:\s+%s\s+\((%s) per sec\.\)\s*$" % (INT, NUM),
     False),
    ("reconnects", "'reconnects:'", r"^\s+reconnects:\s+(%s)\s+\(%s per sec\.\)\s*$" % (INT, NUM), True),
    ("reconnects_per_s", "'reconnects:'", r"^\s+reconnects:\s+%s\s+\((%s) per sec\.\)\s*$" % (INT, NUM), False),
)
TESTS = (
    # (test name, block header that identifies it, metric table)
    ("oltp", r"^SQL statistics:\s*$", OLTP),
    ("cpu", r"^CPU speed:\s*$", CPU),
    ("fileio", r"^File operations:\s*$", FILEIO),
    ("memory", r"^Total operations: ", MEMORY),
)
# Header of the common statistics block: 1.0 "General statistics:", 1.1 "Throughput:" + "events/s (eps):".
GENERAL = r"^(?:General statistics:|Throughput:(?=[ \t]*\n\s+events/s \(eps\):))[ \t]*$"
FILEIO_11_HEADER = r"^Throughput:(?=[ \t]*\n\s+read:\s+IOPS=)"
PERCENTILE = r"^\s+(?P<p>\d+(?:\.\d+)?)th percentile:\s+(?P<value>%s)\s*$" % NUM
INTERVAL = (r"^\[ *(?P<t_s>%s)s \] thds: (?P<threads>%s) (?P<rest>.*)$" % (NUM, INT))


def _block(text, start, end_pattern=r"^\S"):
    """Text of an indented block from ``start`` to the next unindented line."""
    following = re.search(end_pattern, text[start:], re.MULTILINE)
    return text[start:start + following.start()] if following else text[start:]


def _fill(metrics, table, text, source, where):
    for name, what, pattern, integer in table:
        match = re.search(pattern, text, re.MULTILINE)
        if match is None:
            raise ParseError(TOOL, source, "missing the %s line in the %s: the report is truncated or damaged"
                             % (what, where))
        metrics[name] = to_number(match.group(1), TOOL, source, name, integer=integer)


def _intervals(text, source):
    rows = []
    for match in re.finditer(INTERVAL, text, re.MULTILINE):
        row = {"t_s": to_number(match.group("t_s"), TOOL, source, "interval time"),
               "threads": to_number(match.group("threads"), TOOL, source, "interval threads", integer=True)}
        rest = match.group("rest")
        for key, name in (("tps", "tps"), ("qps", "qps"), ("eps", "eps"), ("err/s", "err_per_s"),
                          ("reconn/s", "reconn_per_s")):
            found = re.search(r"(?:^|\s)%s: (%s)" % (re.escape(key), NUM), rest)
            if found:
                row[name] = to_number(found.group(1), TOOL, source, "interval %s" % key)
        lat = re.search(r"lat \(ms,(?P<p>[\d.]+)%%\): (?P<v>%s)" % NUM, rest)
        if lat:
            row["lat_ms"] = to_number(lat.group("v"), TOOL, source, "interval latency")
            row["lat_percentile"] = lat.group("p")
        rwo = re.search(r"\(r/w/o: (%s)/(%s)/(%s)\)" % (NUM, NUM, NUM), rest)
        if rwo:
            row["read_qps"], row["write_qps"], row["other_qps"] = (
                to_number(v, TOOL, source, "interval r/w/o") for v in rwo.groups())
        rows.append(row)
    return rows


def parse(text, source="<content>"):
    """Parse one sysbench report; see the module docstring."""
    text = require_text(text, TOOL, source)
    text = text.lstrip("\ufeff")  # a UTF-8 byte-order mark written by some editors/loggers
    fatal = [line.strip() for line in re.findall(r"^FATAL: .*$", text, re.MULTILINE)]
    if fatal:
        hint = re.search(r"^WARNING: (Did you forget to run the prepare step\?)", text, re.MULTILINE)
        raise ParseError(TOOL, source, "sysbench failed: %s%s" % (
            " | ".join(fatal), " (%s)" % hint.group(1) if hint else ""))
    banner = re.search(r"^sysbench (?P<version>\d[\w.\-]*)", text, re.MULTILINE)
    version = banner.group("version") if banner else None
    if version and version.startswith("0."):
        raise ParseError(TOOL, source, "sysbench %s output (0.4/0.5 format) is not supported; use sysbench 1.x"
                         % version)
    if re.search(r"^\s+per-request statistics:\s*$|^\s+total time taken by event execution:", text, re.MULTILINE):
        raise ParseError(TOOL, source, "this is a sysbench 0.4/0.5 report ('per-request statistics:'), which is "
                                       "not supported; use sysbench 1.x")
    general = list(re.finditer(GENERAL, text, re.MULTILINE))
    fileio_11 = list(re.finditer(FILEIO_11_HEADER, text, re.MULTILINE))
    if not general and not fileio_11:
        if re.search(r"^Usage:\s*\n\s+sysbench \[options\]", text, re.MULTILINE):
            raise ParseError(TOOL, source, "this is sysbench's usage text (bad option or test name?), not a report")
        if banner:
            raise ParseError(TOOL, source, "missing the statistics block ('General statistics:' of 1.0, "
                                           "'Throughput:' of 1.1) after the 'sysbench %s' banner: sysbench stopped "
                                           "before its report (truncated, interrupted, or a 'prepare'/'cleanup' "
                                           "step's output)" % version)
        raise ParseError(TOOL, source, "missing 'General statistics:' (1.0) or 'Throughput:' (1.1): not a sysbench "
                                       "report (another tool's output?)")
    if len(general) + len(fileio_11) > 1:
        raise ParseError(TOOL, source, "holds several sysbench reports; give one report per parse")

    result = new_result(TOOL, source)
    metrics = result["metrics"]
    details = result["details"]
    details["version"] = version
    if general:
        anchor = general[0]
        layout = "1.0" if anchor.group(0).startswith("General") else "1.1"
    else:
        anchor = fileio_11[0]
        layout = "1.1-fileio"
    details["layout"] = layout
    if version and layout != "1.0" and version.startswith("1.0"):
        warn(result, "the banner says sysbench %s but the report has the 1.1 layout" % version)

    test = None
    head = text[:anchor.start()]
    if layout == "1.1-fileio":
        test = "fileio"
        _fill(metrics, FILEIO_11, text[anchor.start():], source, "1.1 fileio Throughput block")
    else:
        for name, header, table in TESTS:
            found = re.search(header, head, re.MULTILINE)
            if found:
                test = name
                _fill(metrics, table, head[found.start():], source, "%s results" % name)
                break
    metrics["test"] = test if test else "unknown"
    if test is None:
        warn(result, "unrecognised sysbench test (no cpu/memory/fileio/SQL block; sysbench 1.0's threads and mutex "
                     "tests print none and are not named in their output): only the common statistics were parsed")

    threads = re.search(r"^Number of threads: (%s)\s*$" % INT, text, re.MULTILINE)
    metrics["threads"] = to_number(threads.group(1), TOOL, source, "threads", integer=True) if threads else None

    tail = text[anchor.start():]
    latency = re.search(r"^Latency \(ms\):\s*$", tail, re.MULTILINE)
    if latency is None:
        raise ParseError(TOOL, source, "missing the 'Latency (ms):' block after '%s': the report is truncated"
                         % anchor.group(0).strip())
    general_block = tail[:latency.start()]
    latency_block = _block(tail, latency.end())
    if layout == "1.1-fileio":
        for name in ("total_time_s", "total_events"):
            metrics[name] = None
        warn(result, "sysbench %s fileio prints no total time, event count or threads fairness "
                     "(1.1 fileio summary layout): total_time_s, total_events and fairness_* are null"
             % (version or "1.1"))
    else:
        _fill(metrics, COMMON[:2], general_block, source,
              "General statistics" if layout == "1.0" else "Throughput block")
    _fill(metrics, COMMON[2:], latency_block, source, "Latency (ms) block")
    percentile = re.search(PERCENTILE, latency_block, re.MULTILINE)
    if percentile:
        name = "latency_p%s_ms" % percentile.group("p").replace(".", "_")
        metrics[name] = to_number(percentile.group("value"), TOOL, source, name)
        level = to_number(percentile.group("p"), TOOL, source, "percentile")
        details["latency_percentile"] = int(level) if float(level).is_integer() else level
    elif re.search(r"^\s+percentile stats:\s+disabled\s*$", latency_block, re.MULTILINE):
        details["latency_percentile"] = None
    else:
        raise ParseError(TOOL, source, "the 'Latency (ms):' block has no percentile line: the report is damaged")

    fairness = re.search(FAIRNESS, tail, re.MULTILINE)
    if layout == "1.1-fileio":
        for name in re.findall(r"\?P<(\w+)>", FAIRNESS):
            metrics[name] = None
    elif fairness is None:
        raise ParseError(TOOL, source, "missing the 'Threads fairness:' lines: the report is truncated")
    else:
        for name, value in fairness.groupdict().items():
            metrics[name] = to_number(value, TOOL, source, name)

    intervals = _intervals(text, source)
    if intervals:
        details["intervals"] = intervals

    _verdict(result)
    return result


def _verdict(result):
    m = result["metrics"]
    if m["total_events"] == 0:
        invalidate(result, "no events completed in %s s: nothing was measured" % m["total_time_s"])
    elif m["total_events"] is None and m.get("test") == "fileio" and not any(
            m.get(key) for key in ("reads_per_s", "writes_per_s", "fsyncs_per_s")):
        invalidate(result, "0 reads, writes and fsyncs per second: nothing was measured")
    if m.get("ignored_errors"):
        warn(result, "%d SQL errors were ignored (%s per s), e.g. deadlocks retried by the Lua script"
             % (m["ignored_errors"], m["ignored_errors_per_s"]))
    if m.get("reconnects"):
        warn(result, "%d reconnects to the database during the run" % m["reconnects"])
