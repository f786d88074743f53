# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for the stdout report of ApacheBench (``ab`` 2.3, ``LC_ALL=C``).

``parse(text, source="<content>", stderr=None, static_document=False)``
returns the common parse result (see ``testbed_parse``).  Layout: apache/httpd ``support/ab.c``
``output_results()`` of httpd 2.2.x and 2.4.x (both "Version 2.3"; 2.2 says
``Total POSTed``/``Total PUT`` where 2.4 says ``Total body sent``).  Other ab
versions (httpd 2.0's 2.0.40-dev) are a ParseError; see docs/parsers.md.  ab prints some lines only under conditions:

* ``(Connect: N, Receive: N, Length: N, Exceptions: N)`` only when
  ``Failed requests`` > 0: the ``failed_*`` breakdown is ``None`` otherwise.
* ``Write errors`` and ``Non-2xx responses`` only when non-zero: their absence
  *means* 0, so ``write_errors`` / ``non_2xx_responses`` are 0 then.
* ``Keep-Alive requests`` only with ``-k``: ``keepalive_requests`` is ``None``
  without it.
* The rates only when ``Time taken`` and ``Complete requests`` are non-zero,
  ``Connection Times`` only when requests completed, the percentile table only
  with more than one request and never with ``-d``: ``None`` when absent.
* ``Document Length: Variable`` (``-l``) gives ``document_length_bytes`` None.

ab counts a response whose body length differs from the first one's as a
``Length`` failure.  For a dynamic page that is benign (a warning); with
``static_document=True`` (the caller serves one fixed file) it means the
server sent truncated or different documents, and the point is invalid.

When ab hits an APR error it prints ``func: message (code)`` on stderr and its
stdout stops at ``Benchmarking ... (be patient)``; that is a ParseError naming
ab's message when the ``stderr`` text is given (or mixed into ``text``).
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

TOOL = "ab"

REQUIRED = (
    ("concurrency", "Concurrency Level:", r"^Concurrency Level:\s+(%s)\s*$" % INT, True),
    ("time_taken_s", "Time taken for tests:", r"^Time taken for tests:\s+(%s) seconds\s*$" % NUM, False),
    ("complete_requests", "Complete requests:", r"^Complete requests:\s+(%s)\s*$" % INT, True),
    ("failed_requests", "Failed requests:", r"^Failed requests:\s+(%s)\s*$" % INT, True),
    ("total_transferred_bytes", "Total transferred:", r"^Total transferred:\s+(%s) bytes\s*$" % INT, True),
    ("html_transferred_bytes", "HTML transferred:", r"^HTML transferred:\s+(%s) bytes\s*$" % INT, True),
)
COMPLETE = REQUIRED[2][2]
ZERO_WHEN_ABSENT = (
    ("write_errors", r"^Write errors:\s+(%s)\s*$" % INT),
    ("non_2xx_responses", r"^Non-2xx responses:\s+(%s)\s*$" % INT),
)
NONE_WHEN_ABSENT = (
    ("keepalive_requests", r"^Keep-Alive requests:\s+(%s)\s*$" % INT, True),
    ("total_body_sent_bytes", r"^Total (?:body sent|POSTed|PUT):\s+(%s)(?: bytes)?\s*$" % INT, True),
    ("requests_per_s", r"^Requests per second:\s+(%s) \[#/sec\] \(mean\)\s*$" % NUM, False),
    ("time_per_request_ms", r"^Time per request:\s+(%s) \[ms\] \(mean\)\s*$" % NUM, False),
    ("time_per_request_all_ms", r"^Time per request:\s+(%s) \[ms\] \(mean, across all concurrent requests\)\s*$" % NUM,
     False),
    ("transfer_rate_kb_s", r"^Transfer rate:\s+(%s) \[Kbytes/sec\] received\s*$" % NUM, False),
    ("sent_kb_s", r"^\s+(%s) kb/s sent\s*$" % NUM, False),
    ("total_kb_s", r"^\s+(%s) kb/s total\s*$" % NUM, False),
)
FAILED_BREAKDOWN = (r"^\s+\(Connect: (?P<failed_connect>%s), Receive: (?P<failed_receive>%s), "
                    r"Length: (?P<failed_length>%s), Exceptions: (?P<failed_exceptions>%s)\)\s*$" % (INT, INT, INT, INT))
TIME_ROWS = ("connect", "processing", "waiting", "total")
PERCENTILES = (50, 66, 75, 80, 90, 95, 98, 99, 100)
APR_ERROR = r"^(?P<func>[A-Za-z_][\w]*): (?P<message>.+?) \((?P<code>\d+)\)\s*$"
DETAILS = (
    ("version", r"^This is ApacheBench, Version (\S+)"),
    ("server_software", r"^Server Software:[ \t]*(.*?)\s*$"),
    ("server_hostname", r"^Server Hostname:[ \t]*(.*?)\s*$"),
    ("server_port", r"^Server Port:[ \t]*(.*?)\s*$"),
    ("ssl_protocol", r"^SSL/TLS Protocol:[ \t]*(.*?)\s*$"),
    ("document_path", r"^Document Path:[ \t]*(.*?)\s*$"),
    ("number_of_workers", r"^Number of workers:[ \t]*(.*?)\s*$"),
    ("concurrency_achieved", r"^Concurrency achieved:[ \t]*(.*?)\s*$"),
    ("rampup_delay", r"^Rampup delay:[ \t]*(.*?)\s*$"),
)


def _apr_failure(text, stderr):
    """ab's own error line(s) and 'Total of N requests completed' from stderr or the text."""
    found = []
    for chunk in (stderr or "", text):
        for match in re.finditer(APR_ERROR, chunk, re.MULTILINE):
            line = match.group(0).strip()
            if line not in found:
                found.append(line)
    completed = None
    for chunk in (stderr or "", text):
        match = re.search(r"^Total of (\d+) requests completed", chunk, re.MULTILINE)
        if match:
            completed = match.group(1)
    return found, completed


def _connection_times(text, result, source):
    metrics = result["metrics"]
    for row in TIME_ROWS:
        for col in ("min", "mean", "sd", "median", "max"):
            metrics["%s_%s_ms" % (row, col)] = None
    header = re.search(r"^Connection Times \(ms\)\s*\n(?P<columns>.*)\n", text, re.MULTILINE)
    if header is None:
        return False
    block = text[header.end():]
    five = "mean[+/-sd]" in header.group("columns")
    for row in TIME_ROWS:
        label = row.capitalize()
        if five:
            pattern = r"^%s:\s+(%s)\s+(%s)\s+(%s)\s+(%s)\s+(%s)\s*$" % (label, NUM, NUM, NUM, NUM, NUM)
            columns = ("min", "mean", "sd", "median", "max")
        else:  # ab -S: min avg max
            pattern = r"^%s:\s+(%s)\s+(%s)\s+(%s)\s*$" % (label, NUM, NUM, NUM)
            columns = ("min", "mean", "max")
        match = re.search(pattern, block, re.MULTILINE)
        if match is None:
            if row in ("connect", "total"):
                raise ParseError(TOOL, source, "the 'Connection Times (ms)' table has no '%s:' row: the report "
                                               "is truncated or damaged" % label)
            continue  # Processing/Waiting rows are absent in some ab builds' -S output
        for col, value in zip(columns, match.groups()):
            name = "%s_%s_ms" % (row, col)
            metrics[name] = to_number(value, TOOL, source, name, integer=col != "sd")
    return True


def _percentiles(text, result, source):
    metrics = result["metrics"]
    for pct in PERCENTILES:
        metrics["p%d_ms" % pct] = None
    header = re.search(r"^Percentage of the requests served within a certain time \(ms\)\s*$", text, re.MULTILINE)
    if header is None:
        return False
    block = text[header.end():]
    for match in re.finditer(r"^\s*(\d+)%%\s+(%s)(?: \(longest request\))?\s*$" % NUM, block, re.MULTILINE):
        pct = int(match.group(1))
        name = "p%d_ms" % pct
        if pct in PERCENTILES and metrics[name] is None:
            metrics[name] = to_number(match.group(2), TOOL, source, name, integer=True)
    if metrics["p100_ms"] is None:
        raise ParseError(TOOL, source, "the percentile table ends before its '100%' line: the report is truncated")
    return True


def parse(text, source="<content>", stderr=None, static_document=False):
    """Parse one ab report; see the module docstring."""
    if stderr is not None and not isinstance(stderr, str):
        raise ParseError(TOOL, source, "option stderr must be text, not %s" % type(stderr).__name__)
    if not isinstance(static_document, bool):
        raise ParseError(TOOL, source, "option static_document must be true or false, not %r" % (static_document,))
    if text is not None and isinstance(text, str) and not text.strip() and stderr:
        text = ""  # empty stdout: let the stderr message explain
    else:
        text = require_text(text, TOOL, source)

    complete = re.search(COMPLETE, text, re.MULTILINE)
    if complete is None:
        errors, completed = _apr_failure(text, stderr)
        if errors:
            raise ParseError(TOOL, source, "ab stopped before its report%s: %s" % (
                " after %s completed requests" % completed if completed else "", "; ".join(errors)))
        if re.search(r"^Benchmarking .*\(be patient\)", text, re.MULTILINE):
            raise ParseError(TOOL, source, "ab stopped after 'Benchmarking ... (be patient)' without a report "
                                           "(an APR error went to stderr; pass it as stderr to see it)")
        if re.search(r"^Usage: ab\b", text + "\n" + (stderr or ""), re.MULTILINE):
            raise ParseError(TOOL, source, "this is ab's usage text (bad option or URL?), not a report")
        if not text.strip():
            raise ParseError(TOOL, source, "output is empty (the tool printed nothing: bad option, crash, or "
                                           "wrong file?)")
        raise ParseError(TOOL, source, "missing the 'Complete requests:' line: not an ab report (another "
                                       "tool's output?) or cut before the results")
    if len(re.findall(COMPLETE, text, re.MULTILINE)) > 1:
        raise ParseError(TOOL, source, "holds several ab reports; give one report per parse")
    banner = re.search(r"^This is ApacheBench, Version (\S+)", text, re.MULTILINE)
    if banner and banner.group(1) != "2.3":
        raise ParseError(TOOL, source, "ab version %s is not supported (the parser knows ab 2.3, shipped with httpd "
                                       "2.2.x and 2.4.x; see docs/parsers.md)" % banner.group(1))

    result = new_result(TOOL, source)
    metrics = result["metrics"]
    for name, label, pattern, integer in REQUIRED:
        match = re.search(pattern, text, re.MULTILINE)
        if match is None:
            raise ParseError(TOOL, source, "missing the '%s' line: the report is truncated or damaged" % label)
        metrics[name] = to_number(match.group(1), TOOL, source, name, integer=integer)

    doclen = re.search(r"^Document Length:\s+(?:(?P<bytes>%s) bytes|(?P<variable>Variable))\s*$" % INT,
                       text, re.MULTILINE)
    metrics["document_length_bytes"] = (to_number(doclen.group("bytes"), TOOL, source, "document_length_bytes",
                                                  integer=True) if doclen and doclen.group("bytes") else None)
    result["details"]["document_length_variable"] = bool(doclen and doclen.group("variable"))

    breakdown = re.search(FAILED_BREAKDOWN, text, re.MULTILINE)
    for name in ("failed_connect", "failed_receive", "failed_length", "failed_exceptions"):
        metrics[name] = to_number(breakdown.group(name), TOOL, source, name, integer=True) if breakdown else None
    if metrics["failed_requests"] > 0 and breakdown is None:
        raise ParseError(TOOL, source, "'Failed requests: %d' is not followed by its (Connect, Receive, Length, "
                                       "Exceptions) breakdown: damaged report" % metrics["failed_requests"])
    for name, pattern in ZERO_WHEN_ABSENT:
        match = re.search(pattern, text, re.MULTILINE)
        metrics[name] = to_number(match.group(1), TOOL, source, name, integer=True) if match else 0
    for name, pattern, integer in NONE_WHEN_ABSENT:
        match = re.search(pattern, text, re.MULTILINE)
        metrics[name] = to_number(match.group(1), TOOL, source, name, integer=integer) if match else None

    done = metrics["complete_requests"]
    has_times = _connection_times(text, result, source)
    if done > 0 and not has_times:
        raise ParseError(TOOL, source, "missing the 'Connection Times (ms)' table although %d requests "
                                       "completed: the report is truncated" % done)
    has_percentiles = _percentiles(text, result, source)
    result["details"]["percentile_table"] = has_percentiles
    if not has_percentiles and done > 1:
        result["details"]["percentile_table_note"] = ("absent: ab was run with -d (or the report was cut after "
                                                      "the Connection Times table)")
    for name, pattern in DETAILS:
        match = re.search(pattern, text, re.MULTILINE)
        result["details"][name] = match.group(1) if match else None

    _verdict(result, text, static_document)
    return result


def _verdict(result, text, static_document):
    m = result["metrics"]
    done = m["complete_requests"]
    if done == 0:
        invalidate(result, "no request completed: nothing was measured")
    elif m["requests_per_s"] is None:
        invalidate(result, "ab printed no rates (time taken %s s): nothing usable was measured" % m["time_taken_s"])

    hard = [(label, m[name]) for label, name in (("Connect", "failed_connect"), ("Receive", "failed_receive"),
                                                 ("Exceptions", "failed_exceptions")) if m[name]]
    if hard:
        invalidate(result, "%d of %d requests failed (%s)" % (
            sum(n for _l, n in hard), done, ", ".join("%s %d" % pair for pair in hard)))
    if m["failed_length"] and static_document:
        invalidate(result, "%d of %d responses had a body length other than the first response's (%s bytes) although "
                           "the page is static: the server sent truncated or different documents"
                   % (m["failed_length"], done, m["document_length_bytes"]))
    elif m["failed_length"]:
        warn(result, "%d requests 'failed' on Length only: their body length differed from the first response's "
                     "(%s bytes). That is benign for dynamic pages (run ab -l to accept variable lengths) but "
                     "means the server did not send identical documents"
             % (m["failed_length"], m["document_length_bytes"]))
    if m["non_2xx_responses"]:
        invalidate(result, "%d of %d responses were not 2xx (ab does not count them as failed requests): the "
                           "server answered with errors or redirects" % (m["non_2xx_responses"], done))
    if m["write_errors"]:
        invalidate(result, "%d write errors (broken pipe) while sending requests" % m["write_errors"])
    for match in re.finditer(r"^(?:WARNING|ERROR): (The median and mean .*?)\n\s+(.*?)\s*$", text, re.MULTILINE):
        warn(result, "ab: %s %s" % (match.group(1).strip(), match.group(2).strip()))
