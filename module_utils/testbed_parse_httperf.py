# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for the plain-text report of httperf (0.9.x; 0.8 unverified, see docs/parsers.md; ``LC_ALL=C``).

``parse(text, source="<content>", requested_rate=None, min_rate_ratio=0.9,
max_client_cpu_pct=95.0, max_error_pct=1.0)`` returns the common parse result
(see ``testbed_parse``).  The report layout is httperf's ``src/stat/basic.c``
``dump()``; every line of it is printed unconditionally, so every line is
required.  Values that httperf prints as ``0.0`` placeholders because nothing
was measured (connection times when no reply came back, reply-rate figures
with 0 samples) become ``None``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
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

TOOL = "httperf"

# httperf's event loop uses select(), whose fd_set holds FD_SETSIZE (1024 on
# Linux/glibc) descriptors; httperf caps its open-file limit there.
FD_SETSIZE = 1024

# A client at max_client_cpu_pct that achieved less than this share of the
# requested rate is CPU-bound.
CPU_RATE_RATIO = 0.97
# Share of failed connections (%) from which, with no client-resource error, the
# primary cause is that the service did not answer.
SERVICE_FAILED_PCT = 50.0

# One entry per report line: (what, pattern with named groups).  All anchored.
LINES = (
    ("'Total:' line", r"^Total: connections (?P<connections>%s) requests (?P<requests>%s) replies (?P<replies>%s) "
     r"test-duration (?P<test_duration_s>%s) s\s*$" % (INT, INT, INT, NUM)),
    ("'Connection rate:' line", r"^Connection rate: (?P<connection_rate_per_s>%s) conn/s \((?P<connection_period_ms>%s) ms/conn, "
     r"<=(?P<max_concurrent_connections>%s) concurrent connections\)\s*$" % (NUM, NUM, INT)),
    ("'Connection time [ms]: min ...' line", r"^Connection time \[ms\]: min (?P<connection_time_min_ms>%s) avg (?P<connection_time_ms>%s) "
     r"max (?P<connection_time_max_ms>%s) median (?P<connection_time_median_ms>%s) "
     r"stddev (?P<connection_time_stddev_ms>%s)\s*$" % (NUM, NUM, NUM, NUM, NUM)),
    ("'Connection time [ms]: connect' line", r"^Connection time \[ms\]: connect (?P<connect_time_ms>%s)\s*$" % NUM),
    ("'Connection length' line", r"^Connection length \[replies/conn\]: (?P<replies_per_connection>%s)\s*$" % NUM),
    ("'Request rate:' line", r"^Request rate: (?P<request_rate_per_s>%s) req/s \((?P<request_period_ms>%s) ms/req\)\s*$" % (NUM, NUM)),
    ("'Request size' line", r"^Request size \[B\]: (?P<request_size_bytes>%s)\s*$" % NUM),
    ("'Reply rate' line", r"^Reply rate \[replies/s\]: min (?P<reply_rate_min_per_s>%s) avg (?P<reply_rate_avg_per_s>%s) "
     r"max (?P<reply_rate_max_per_s>%s) stddev (?P<reply_rate_stddev_per_s>%s) "
     r"\((?P<reply_rate_samples>%s) samples\)\s*$" % (NUM, NUM, NUM, NUM, INT)),
    ("'Reply time' line", r"^Reply time \[ms\]: response (?P<response_time_ms>%s) transfer (?P<transfer_time_ms>%s)\s*$" % (NUM, NUM)),
    ("'Reply size' line", r"^Reply size \[B\]: header (?P<reply_size_header_bytes>%s) content (?P<reply_size_content_bytes>%s) "
     r"footer (?P<reply_size_footer_bytes>%s) \(total (?P<reply_size_total_bytes>%s)\)\s*$" % (NUM, NUM, NUM, NUM)),
    ("'Reply status' line", r"^Reply status: 1xx=(?P<status_1xx>%s) 2xx=(?P<status_2xx>%s) 3xx=(?P<status_3xx>%s) "
     r"4xx=(?P<status_4xx>%s) 5xx=(?P<status_5xx>%s)\s*$" % (INT, INT, INT, INT, INT)),
    ("'CPU time' line", r"^CPU time \[s\]: user (?P<client_cpu_user_s>%s) system (?P<client_cpu_system_s>%s) "
     r"\(user (?P<client_cpu_user_pct>%s)%% system (?P<client_cpu_system_pct>%s)%% "
     r"total (?P<client_cpu_total_pct>%s)%%\)\s*$" % (NUM, NUM, NUM, NUM, NUM)),
    ("'Net I/O' line", r"^Net I/O: (?P<net_io_kb_s>%s) KB/s \((?P<net_io_mbps>%s)\*10\^6 bps\)\s*$" % (NUM, NUM)),
)

ERRORS_1 = (r"^Errors: total (?P<errors_total>%s) client-timo (?P<errors_client_timo>%s) socket-timo (?P<errors_socket_timo>%s) "
            r"connrefused (?P<errors_connrefused>%s) connreset (?P<errors_connreset>%s)\s*$" % (INT, INT, INT, INT, INT))
ERRORS_2 = (r"^Errors: fd-unavail (?P<errors_fd_unavail>%s) addrunavail (?P<errors_addrunavail>%s) "
            r"ftab-full (?P<errors_ftab_full>%s) other (?P<errors_other>%s)\s*$" % (INT, INT, INT, INT))

INTEGER_METRICS = frozenset((
    "connections", "requests", "replies", "max_concurrent_connections", "reply_rate_samples",
    "status_1xx", "status_2xx", "status_3xx", "status_4xx", "status_5xx",
    "errors_total", "errors_client_timo", "errors_socket_timo", "errors_connrefused", "errors_connreset",
    "errors_fd_unavail", "errors_addrunavail", "errors_ftab_full", "errors_other",
))

# Averages over replies / completed connections: httperf prints 0.0 when it had nothing to average.
PER_REPLY_METRICS = (
    "connection_time_min_ms", "connection_time_ms", "connection_time_max_ms", "connection_time_median_ms",
    "connection_time_stddev_ms", "replies_per_connection", "response_time_ms", "transfer_time_ms",
    "reply_size_header_bytes", "reply_size_content_bytes", "reply_size_footer_bytes", "reply_size_total_bytes",
)
REPLY_RATE_METRICS = ("reply_rate_min_per_s", "reply_rate_avg_per_s", "reply_rate_max_per_s", "reply_rate_stddev_per_s")

COMMAND_LINE = r"^httperf (?P<args>--\S.*)$"
TOTAL_ANCHOR = r"^Total: connections "


def processes_per_host(rate, hosts, processes="auto", max_rate_per_process=1000):
    """httperf processes one client host runs for a total ``rate`` (conn/s) spread over ``hosts``.

    ``processes`` a whole number is taken as it is; ``auto`` gives enough processes that none
    exceeds ``max_rate_per_process`` conn/s (one httperf process is one select() loop on one core).
    The one definition of the rule: roles/lvs_client (what its load runner starts), the LVS
    fidelity check's hand commands and playbooks/lab-nic-stress.yml use it through the filter
    ``httperf_processes``. Raises ValueError naming the bad argument.
    """
    def number(value, what):
        try:
            out = float(value)
        except (TypeError, ValueError):
            raise ValueError("%s must be a number, got %r" % (what, value)) from None
        if not math.isfinite(out):
            raise ValueError("%s must be a finite number, got %r" % (what, value))
        return out

    if processes != "auto":
        count = number(processes, "processes (a whole number or auto)")
        if count < 1 or count != int(count):
            raise ValueError("processes must be auto or a whole number >= 1, got %r" % (processes,))
        return int(count)
    host_count = number(hosts, "hosts")
    limit = number(max_rate_per_process, "max_rate_per_process")
    total = number(rate, "rate")
    if host_count < 1 or limit <= 0 or total <= 0:
        raise ValueError("rate and max_rate_per_process must be > 0 and hosts >= 1, got rate %r, hosts %r, "
                         "max_rate_per_process %r" % (rate, hosts, max_rate_per_process))
    per_host = total / int(host_count) / limit
    return max(1, int(math.ceil(per_host)))


def _fmt(value):
    """Short human form of a number for reasons/warnings."""
    if isinstance(value, float):
        return ("%.1f" % value) if abs(value) >= 10 else ("%.3g" % value)
    return str(value)


def _number_option(value, name, source, check, rule, allow_none=False):
    """Validate a numeric option; ``check`` is a predicate, ``rule`` its wording."""
    if value is None and allow_none:
        return None
    try:
        number = to_number(value, TOOL, source, "option %s" % name)
    except ParseError:
        raise ParseError(TOOL, source, "option %s is %r, expected a finite number" % (name, value)) from None
    if not check(number):
        raise ParseError(TOOL, source, "option %s is %r; it must be %s" % (name, value, rule))
    return float(number)


def _command_line(text, source):
    """Options echoed on the first line of the report (None when absent)."""
    match = re.search(COMMAND_LINE, text, re.MULTILINE)
    if match is None:
        return None, {}
    options = {}
    for token in match.group("args").split():
        if not token.startswith("--"):
            continue
        name, _sep, value = token[2:].partition("=")
        options[name] = value if _sep else True
    return match.group(0).strip(), options


def parse(text, source="<content>", requested_rate=None, min_rate_ratio=0.9,
          max_client_cpu_pct=95.0, max_error_pct=1.0):
    """Parse one httperf report; see the module docstring."""
    text = require_text(text, TOOL, source)
    requested_rate = _number_option(requested_rate, "requested_rate", source, lambda v: v > 0,
                                    "a rate above 0 (conn/s)", allow_none=True)
    min_rate_ratio = _number_option(min_rate_ratio, "min_rate_ratio", source, lambda v: 0 < v <= 1,
                                    "above 0 and at most 1")
    max_client_cpu_pct = _number_option(max_client_cpu_pct, "max_client_cpu_pct", source, lambda v: v > 0,
                                        "above 0 (percent of one CPU)")
    max_error_pct = _number_option(max_error_pct, "max_error_pct", source, lambda v: 0 <= v <= 100,
                                   "between 0 and 100")

    reports = len(re.findall(TOTAL_ANCHOR, text, re.MULTILINE))
    if reports == 0:
        if re.search(r"^Usage: httperf\b", text, re.MULTILINE):
            raise ParseError(TOOL, source, "this is httperf's usage text (bad option?), not a report")
        raise ParseError(TOOL, source, "missing the 'Total: connections ...' line: not an httperf report "
                         "(another tool's output?) or cut before the statistics")
    if reports > 1:
        raise ParseError(TOOL, source, "holds %d httperf reports; give one report per parse" % reports)

    raw = {}
    for what, pattern in LINES:
        match = re.search(pattern, text, re.MULTILINE)
        if match is None:
            raise ParseError(TOOL, source, "missing the %s: the report is truncated or damaged" % what)
        raw.update(match.groupdict())
    errors_found = [re.search(p, text, re.MULTILINE) for p in (ERRORS_1, ERRORS_2)]
    if not all(errors_found):
        raise ParseError(TOOL, source, "report is truncated: the %s missing (httperf prints the two "
                         "'Errors:' lines last)" % ("'Errors:' lines are" if not any(errors_found)
                                                    else "second 'Errors:' line is" if errors_found[0]
                                                    else "first 'Errors:' line is"))
    for match in errors_found:
        raw.update(match.groupdict())

    result = new_result(TOOL, source)
    metrics = result["metrics"]
    for name, value in raw.items():
        metrics[name] = to_number(value, TOOL, source, name, integer=name in INTEGER_METRICS)
    metrics["net_io_bps"] = int(round(metrics.pop("net_io_mbps") * 1e6))

    command, options = _command_line(text, source)
    result["details"]["command_line"] = command
    burst = re.search(r"^Maximum connect burst length: (%s)\s*$" % INT, text, re.MULTILINE)
    metrics["max_connect_burst_length"] = to_number(burst.group(1), TOOL, source, "max_connect_burst_length",
                                                    integer=True) if burst else None
    sessions = "wsess" in options or "wsesslog" in options
    echoed_rate = options.get("rate")
    echoed_rate = to_number(echoed_rate, TOOL, source, "--rate", integer=False) if isinstance(echoed_rate, str) else None
    num_conns = options.get("num-conns")
    metrics["num_conns"] = to_number(num_conns, TOOL, source, "--num-conns", integer=True) \
        if isinstance(num_conns, str) else None
    if requested_rate is not None:
        metrics["requested_rate_per_s"] = requested_rate
        result["details"]["requested_rate_from"] = "option requested_rate"
    elif echoed_rate:
        metrics["requested_rate_per_s"] = float(echoed_rate)
        result["details"]["requested_rate_from"] = "command line --rate"
    else:
        metrics["requested_rate_per_s"] = None
        result["details"]["requested_rate_from"] = None

    duration = metrics["test_duration_s"]
    metrics["replies_per_s_derived"] = metrics["replies"] / duration if duration > 0 else None

    # Placeholders: nothing to average when no reply came back.
    if metrics["replies"] == 0:
        for name in PER_REPLY_METRICS:
            metrics[name] = None
        if metrics["connect_time_ms"] == 0:
            metrics["connect_time_ms"] = None
    if metrics["requests"] == 0:
        metrics["request_size_bytes"] = None
        metrics["request_period_ms"] = None
    if metrics["connections"] == 0:
        metrics["connection_period_ms"] = None
    samples = metrics["reply_rate_samples"]
    if samples == 0:
        for name in REPLY_RATE_METRICS:
            metrics[name] = None
        warn(result, "reply rate has 0 samples: httperf samples it every 5 s and the test lasted %s s, so "
                     "reply_rate_*_per_s are null; use replies_per_s_derived (replies / test-duration) or run "
                     "longer (httperf's man page recommends at least 30 samples)" % _fmt(duration))
    elif samples == 1:
        metrics["reply_rate_stddev_per_s"] = None
        warn(result, "reply rate has a single 5 s sample: no standard deviation (null); run longer for a spread")

    _verdict(result, sessions, min_rate_ratio, max_client_cpu_pct, max_error_pct)
    return result


def _verdict(result, sessions, min_rate_ratio, max_client_cpu_pct, max_error_pct):
    """Invalidate or warn about the run; each step reads and extends one ``check`` mapping."""
    check = {"result": result, "m": result["metrics"], "sessions": sessions, "min_rate_ratio": min_rate_ratio,
             "max_client_cpu_pct": max_client_cpu_pct, "max_error_pct": max_error_pct}
    _client_limits(check)
    _service_failure(check)
    _client_cpu(check)
    _achieved_rate(check)
    _connection_errors(check)
    _replies(check)


def _client_limits(check):
    """Client-resource errors (fd-unavail, addrunavail, ftab-full): the load generator was the limit."""
    result, m = check["result"], check["m"]
    check["client_limits"] = client_limits = (
        m["errors_fd_unavail"] + m["errors_addrunavail"] + m["errors_ftab_full"])
    if client_limits:
        invalidate(result, (
            "the load generator (client) was the limit, not the system under test: httperf ran out of client "
            "resources (fd-unavail %d, addrunavail %d, ftab-full %d). httperf multiplexes with select() and "
            "cannot hold more than FD_SETSIZE (~%d) descriptors; raise 'ulimit -n' (up to that ceiling), "
            "shorten --timeout, lower --rate or spread the load over more client processes (--client=i/N)"
            % (m["errors_fd_unavail"], m["errors_addrunavail"], m["errors_ftab_full"], FD_SETSIZE)))


def _service_failure(check):
    """Error share; whether failures are the server's and whether the service did not answer at all.

    No reply, or most connections failed, with no client-resource error: the
    service did not answer. That is the primary cause, stated first. Failures
    above max_error_pct without client-resource errors also mean that a busy
    client CPU is httperf polling while it waits, not saturation.
    """
    result, m, client_limits = check["result"], check["m"], check["client_limits"]
    connections, replies = m["connections"], m["replies"]
    errors = m["errors_total"]
    error_share = 100.0 * errors / connections if connections else (100.0 if errors else 0.0)
    server_side_failures = not client_limits and error_share > check["max_error_pct"]
    service_failed = not client_limits and connections > 0 and (replies == 0 or error_share >= SERVICE_FAILED_PCT)
    if service_failed:
        invalidate(result, (
            "the service did not answer: %d of %d connections failed (client-timo %d, socket-timo %d, connrefused %d, "
            "connreset %d, other %d) and %d replies came back; the client ran out of no resource, so the server or "
            "the path to it failed" % (errors, connections, m["errors_client_timo"], m["errors_socket_timo"],
                                       m["errors_connrefused"], m["errors_connreset"], m["errors_other"], replies)))
    check.update(errors=errors, error_share=error_share, server_side_failures=server_side_failures,
                 service_failed=service_failed)


def _client_cpu(check):
    """Whether a busy client CPU means the client saturated (``check["client_cpu_saturated"]``).

    httperf's event loop polls: it shows ~100 % CPU even at trivial rates, so a
    high CPU share only means saturation when the client also fell behind the
    requested rate (by more than 3 %) or ran out of descriptors - and not
    when the service did not answer (httperf then polls on timeouts).
    """
    result, m, max_client_cpu_pct = check["result"], check["m"], check["max_client_cpu_pct"]
    cpu = m["client_cpu_total_pct"]
    target = m["requested_rate_per_s"]
    achieved = m["connection_rate_per_s"]
    check["client_cpu_saturated"] = False
    if cpu >= max_client_cpu_pct and check["server_side_failures"]:
        warn(result, "client CPU %s %%: httperf busy-polls while its connections wait for a service that does not "
                     "answer; not a sign of client saturation" % _fmt(cpu))
    elif cpu >= max_client_cpu_pct:
        behind = target is not None and not check["sessions"] and achieved < CPU_RATE_RATIO * target
        if behind or check["client_limits"]:
            check["client_cpu_saturated"] = True
            invalidate(result, (
                "client CPU saturated: httperf used %s %% of a CPU (user %s %% + system %s %%), at or above "
                "max_client_cpu_pct %s %%, and %s; the load generator limited the run, so the numbers describe "
                "the client rather than the server" % (
                    _fmt(cpu), _fmt(m["client_cpu_user_pct"]), _fmt(m["client_cpu_system_pct"]),
                    _fmt(max_client_cpu_pct),
                    "achieved only %s of the requested %s conn/s" % (_fmt(achieved), _fmt(target)) if behind
                    else "it ran out of client resources")))
        elif target is None or check["sessions"]:
            warn(result, "client CPU %s %% (at or above max_client_cpu_pct %s %%) and no requested connection "
                         "rate to compare with: httperf polls, so this alone does not prove the client was the "
                         "limit; pass requested_rate to decide" % (_fmt(cpu), _fmt(max_client_cpu_pct)))
        else:
            warn(result, "client CPU %s %% (at or above max_client_cpu_pct %s %%), but the achieved %s conn/s kept "
                         "up with the requested %s: httperf polls, so a busy CPU alone is not saturation"
                         % (_fmt(cpu), _fmt(max_client_cpu_pct), _fmt(achieved), _fmt(target)))


def _achieved_rate(check):
    """The achieved connection rate against the requested one, with the likeliest cause of a shortfall."""
    result, m = check["result"], check["m"]
    target = m["requested_rate_per_s"]
    achieved = m["connection_rate_per_s"]
    if target is not None and check["sessions"] and result["details"]["requested_rate_from"] == "command line --rate":
        warn(result, "--wsess/--wsesslog runs take --rate as sessions/s, so the achieved connection rate was "
                     "not compared with it; pass requested_rate to compare")
    elif target is not None and achieved < check["min_rate_ratio"] * target:
        invalidate(result, (
            "achieved connection rate %s conn/s is %.1f %% of the requested %s conn/s (below min_rate_ratio "
            "%s): %s" % (_fmt(achieved), 100.0 * achieved / target, _fmt(target), _fmt(check["min_rate_ratio"]),
                         _shortfall_cause(check))))


def _shortfall_cause(check):
    """Why the achieved rate fell short: the service, the server, the client, or neither."""
    m = check["m"]
    cpu = m["client_cpu_total_pct"]
    if check["service_failed"]:
        return "the service did not answer (see the first reason)"
    if check["server_side_failures"]:
        return "%.1f %% of the connections failed on the server side (no client-resource error)" % check["error_share"]
    if check["client_limits"] or check["client_cpu_saturated"]:
        return "the client was the bottleneck (client CPU %s %%, %d client-resource errors)" % (
            _fmt(cpu), check["client_limits"])
    return ("the client had headroom (client CPU %s %%), so the server saturated or the run was too short "
            "for the connections to finish (up to %d concurrent connections, response time %s, "
            "test-duration %s s)" % (_fmt(cpu), m["max_concurrent_connections"],
                                     "%s ms" % _fmt(m["response_time_ms"]) if m["response_time_ms"] is not None
                                     else "not measured", _fmt(m["test_duration_s"])))


def _connection_errors(check):
    """Connections short of --num-conns, no replies at all, and the share of failed connections."""
    result, m, service_failed = check["result"], check["m"], check["service_failed"]
    connections, requests, replies = m["connections"], m["requests"], m["replies"]
    errors, max_error_pct = check["errors"], check["max_error_pct"]
    if m["num_conns"] is not None and not check["sessions"] and connections < m["num_conns"]:
        warn(result, "httperf issued %d of the %d connections asked for with --num-conns"
             % (connections, m["num_conns"]))

    if replies == 0 and not service_failed:
        invalidate(result, "no replies received (connections %d, requests %d, errors %d): nothing was measured"
                   % (connections, requests, m["errors_total"]))

    if errors:
        share = check["error_share"]
        detail = ("errors_total %d / connections %d = %.2f %% (client-timo %d, socket-timo %d, connrefused %d, "
                  "connreset %d, fd-unavail %d, addrunavail %d, ftab-full %d, other %d)"
                  % (errors, connections, share, m["errors_client_timo"], m["errors_socket_timo"],
                     m["errors_connrefused"], m["errors_connreset"], m["errors_fd_unavail"],
                     m["errors_addrunavail"], m["errors_ftab_full"], m["errors_other"]))
        if share > max_error_pct and not service_failed:
            invalidate(result, "errors dominate the run: %s, above max_error_pct %s %%" % (detail, _fmt(max_error_pct)))
        else:
            warn(result, "a small share of connections failed: %s" % detail)


def _replies(check):
    """Requests without a reply, HTTP error replies, and a zero test duration."""
    result, m, max_error_pct = check["result"], check["m"], check["max_error_pct"]
    requests, replies = m["requests"], m["replies"]
    if 0 < replies < requests:
        missing = requests - replies
        share = 100.0 * missing / requests
        message = "%d of %d requests got no reply (%.2f %%)" % (missing, requests, share)
        if share > max_error_pct:
            invalidate(result, "%s, above max_error_pct %s %%" % (message, _fmt(max_error_pct)))
        else:
            warn(result, message)

    bad_status = m["status_4xx"] + m["status_5xx"]
    if bad_status:
        warn(result, "%d of %d replies were HTTP errors (4xx %d, 5xx %d); httperf does not count them as "
                     "errors, so the rates include error pages" % (bad_status, replies, m["status_4xx"],
                                                                   m["status_5xx"]))

    if m["test_duration_s"] == 0:
        warn(result, "test-duration printed as 0.000 s: the rates are divided by a near-zero time and unreliable")
