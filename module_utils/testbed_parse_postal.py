# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for the per-minute report of ``postal`` (the SMTP benchmark, Debian 0.76).

``parse(text, source="<content>", max_error_pct=1.0)`` returns the common parse
result (see ``testbed_parse``).  postal prints a CSV header, then one line at
every wall-clock minute boundary (``HH:MM`` is the minute that just started)
with the counts of the interval since the previous line::

    time,messages,data(K),errors,connections,SSL connections
    14:51,6648,36246,0,6658,0
    14:52,10041,54320,1,10041,0

(the ``SSL connections`` column only in builds with TLS, as Debian's).  postal
never stops by itself and prints no total: it is bounded with ``timeout``, and
what it sent after the last minute boundary is never printed.  So:

* the first line covers only the part of a minute since the start: it counts
  in the totals but not in the rates;
* the rates (``*_per_min``, ``*_per_s``) are the mean over the full minutes
  (the second line on);
* postal's stdout is buffered: the header comes out with the first line, so
  a run that crossed no minute boundary printed nothing (ParseError; a bare
  header is ``valid: false``), one that crossed only one has no full minute
  (rates null, ``valid: false``): bound postal to at least 130 s
  (``timeout 190`` gives two full minutes or more).

``errors`` are the SMTP/connection errors postal counted; a share of errors
above ``max_error_pct`` of the messages (full minutes) makes the result invalid.

With ``log_duration_s`` the text is instead the ``postal.log`` postal writes in
its working directory: one line per message the server accepted
(``<md5> <from> <to>``; a refused connection writes none), so a run bounded
to ``log_duration_s`` seconds (``timeout``) gives ``messages`` and
``messages_per_min`` without waiting for minute boundaries. postal.log does
not carry the errors (``errors`` null, with a warning).
Versions and variants: docs/parsers.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.testbed_parse import (
    INT,
    ParseError,
    invalidate,
    new_result,
    require_text,
    to_number,
    warn,
)

TOOL = "postal"

HEADER = re.compile(r"^time,messages,data\(K\),errors,connections(?P<ssl>,SSL connections)?\s*$", re.MULTILINE)
LINE = re.compile(r"^(?P<time>\d{1,2}:\d{2}),(?P<values>%s(?:,%s)*)\s*$" % (INT, INT), re.MULTILINE)
COLUMNS = ("messages", "data_kib", "errors", "connections", "ssl_connections")


LOG_LINE = re.compile(r"^[0-9a-f]{32} <[^<>\s]*> <[^<>\s]*>$")


def parse_log(text, source, duration_s):
    """Parse postal.log (one line per accepted message) of a run bounded to ``duration_s``."""
    duration = to_number(duration_s, TOOL, source, "option log_duration_s")
    if not duration > 0:
        raise ParseError(TOOL, source, "option log_duration_s must be > 0, got %r" % (duration_s,))
    text = require_text(text, TOOL, source) if text else ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    bad = [line for line in lines if not LOG_LINE.match(line)]
    # The last line may be cut when timeout stopped postal while it wrote it.
    if bad and (len(bad) > 1 or bad[0] != lines[-1]):
        raise ParseError(TOOL, source, "not a postal.log: %d line(s) are not '<md5> <from> <to>', e.g. %r"
                         % (len(bad), bad[0][:80]))
    result = new_result(TOOL, source)
    metrics = result["metrics"]
    messages = len(lines) - len(bad)
    metrics["messages"] = messages
    metrics["messages_per_min"] = messages * 60.0 / duration
    metrics["messages_per_s"] = messages / duration
    metrics["errors"] = None
    metrics["window_s"] = duration
    result["details"]["kind"] = "postal.log"
    warn(result, "errors is null: postal.log lists accepted messages only (postal prints errors per minute on stdout)")
    if bad:
        warn(result, "ignored the last line, cut by the end of the run: %r" % bad[0][:80])
    if messages == 0:
        invalidate(result, "no message was accepted in %s s (postal.log is empty: the server refused or did not "
                           "answer)" % duration)
    return result


def parse(text, source="<content>", max_error_pct=1.0, log_duration_s=None):
    """Parse postal's stdout (or its postal.log with ``log_duration_s``); see the module docstring."""
    if log_duration_s is not None:
        return parse_log(text, source, log_duration_s)
    max_error_pct = to_number(max_error_pct, TOOL, source, "option max_error_pct")
    if isinstance(text, str) and not text.strip():
        raise ParseError(TOOL, source, "output is empty: postal buffers stdout and prints its header with the first "
                                       "per-minute line, so a run that crossed no minute boundary (or a postal "
                                       "killed before) leaves nothing; bound postal to at least 130 s")
    text = require_text(text, TOOL, source)
    header = HEADER.search(text)
    if header is None:
        if re.search(r"^Usage: postal ", text, re.MULTILINE):
            raise ParseError(TOOL, source, "this is postal's usage text (bad option, or a user list file that is "
                                           "missing?), not a report")
        problem = re.search(r"^(Can't .*|Unable .*)$", text, re.MULTILINE)
        if problem:
            raise ParseError(TOOL, source, "postal failed: %s" % problem.group(1).strip())
        raise ParseError(TOOL, source, "missing the 'time,messages,data(K),errors,connections' header: not postal "
                                       "output (or the output is empty/truncated)")
    ncols = 5 if header.group("ssl") else 4
    result = new_result(TOOL, source)
    metrics = result["metrics"]
    details = result["details"]
    details["ssl_column"] = bool(header.group("ssl"))
    minutes = []
    for match in LINE.finditer(text, header.end()):
        values = match.group("values").split(",")
        if len(values) != ncols:
            raise ParseError(TOOL, source, "line %r has %d values, the header announces %d"
                             % (match.group(0).strip(), len(values), ncols))
        row = {"time": match.group("time")}
        for name, value in zip(COLUMNS, values):
            row[name] = to_number(value, TOOL, source, name, integer=True)
        minutes.append(row)
    leftovers = [line.strip() for line in text[header.end():].splitlines()
                 if line.strip() and not LINE.match(line.strip())]
    if leftovers:
        warn(result, "ignored %d line(s) that are not per-minute lines: %s"
             % (len(leftovers), "; ".join(leftovers[:3])))
    details["minutes"] = minutes

    names = COLUMNS[:ncols]
    for name in names:
        metrics[name] = sum(row[name] for row in minutes) if minutes else None
    if ncols == 4:
        metrics["ssl_connections"] = None
        warn(result, "ssl_connections is null: this postal was built without TLS (no 'SSL connections' column)")
    metrics["lines"] = len(minutes)
    full = minutes[1:]
    metrics["full_minutes"] = len(full)
    for name in ("messages", "data_kib", "errors", "connections"):
        per_min = sum(row[name] for row in full) / len(full) if full else None
        metrics["%s_per_min" % name] = per_min
    metrics["messages_per_s"] = None if not full else metrics["messages_per_min"] / 60.0
    metrics["data_kib_s"] = None if not full else metrics["data_kib_per_min"] / 60.0
    full_messages = sum(row["messages"] for row in full)
    full_errors = sum(row["errors"] for row in full)
    metrics["error_pct"] = (100.0 * full_errors / (full_messages + full_errors)
                            if full and (full_messages + full_errors) else None)

    if not minutes:
        invalidate(result, "postal printed only its header: the run crossed no minute boundary (bound postal to at "
                           "least 130 s; it prints one line per wall-clock minute)")
    elif not full:
        invalidate(result, "postal printed one line only (the partial first minute): no full minute to compute a "
                           "rate from (bound postal to at least 130 s)")
    elif full_messages == 0:
        invalidate(result, "no message was sent in %d full minute(s)%s" % (
            len(full), " (%d errors)" % full_errors if full_errors else ""))
    elif metrics["error_pct"] > max_error_pct:
        invalidate(result, "%.2f %% of the SMTP transactions failed (%d errors, %d messages in the full minutes; "
                           "limit %s %%)" % (metrics["error_pct"], full_errors, full_messages, max_error_pct))
    elif full_errors:
        warn(result, "%d errors in the full minutes (%.3f %%)" % (full_errors, metrics["error_pct"]))
    return result
