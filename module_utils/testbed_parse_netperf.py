# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for netperf 2.x client output (request/response and stream tests).

``parse(text, source="<content>", test=None)`` returns the common parse result
(see ``testbed_parse``).  Three layouts of netperf 2.7.0 (Debian's ``netperf``,
non-free) are read:

* the classic report: a banner ``MIGRATED TCP REQUEST/RESPONSE TEST from ...``
  (``TCP_RR``, ``UDP_RR``; ``... STREAM TEST`` for ``TCP_STREAM``/``UDP_STREAM``),
  column headings, then one data row (RR: local send/recv socket sizes, request
  and response sizes, elapsed seconds, transactions per second, and with
  ``-c``/``-C`` local/remote CPU %% and service demand in us per transaction)
  followed by the remote socket sizes; STREAM: recv/send socket sizes, message
  size, elapsed seconds, throughput in the unit of the heading line
  (``10^6bits/sec`` by default, ``-f`` changes it);
* the same without banner and headings (``-P 0``): the test comes from the
  ``test`` option, else from the row's width (6 or 10 numbers: RR, 5: STREAM);
* the omni key=value output (``-- -k KEY,KEY...``): THROUGHPUT with
  THROUGHPUT_UNITS, MEAN/MIN/MAX/P50/P90/P99/STDDEV_LATENCY (microseconds),
  REQUEST_SIZE, RESPONSE_SIZE, ELAPSED_TIME, PROTOCOL, LOCAL/REMOTE_CPU_UTIL
  (``-1`` when not measured).

For a request/response test with one transaction in flight (no ``-b`` burst),
the mean round trip is 1 / rate: ``rtt_mean_us`` is that, and the omni
``MEAN_LATENCY`` when it was asked for.  A control connection that cannot be
made (``establish control: are you sure there is a netserver listening``) is a
ParseError naming the host: nothing was measured.  Versions: docs/parsers.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.testbed_parse import (
    NUM,
    ParseError,
    invalidate,
    new_result,
    require_text,
    to_number,
    warn,
)

TOOL = "netperf"

BANNER = re.compile(r"^(?:MIGRATED )?(?P<proto>TCP|UDP|SCTP) (?P<kind>REQUEST/RESPONSE|STREAM) TEST\b(?P<rest>.*)$",
                    re.MULTILINE)
NO_SERVER = re.compile(r"establish control: are you sure there is a netserver listening on (\S+) at port (\d+)")
KEYVAL = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*?)\s*$", re.MULTILINE)
ROW = re.compile(r"^[ \t]*(%s(?:[ \t]+%s)*)[ \t]*$" % (NUM, NUM), re.MULTILINE)
STREAM_UNITS = {"10^9bits/sec": 1e9, "10^6bits/sec": 1e6, "10^3bits/sec": 1e3, "10^0bits/sec": 1.0,
                "GBytes/sec": 8 * 1024 ** 3, "MBytes/sec": 8 * 1024 ** 2, "KBytes/sec": 8 * 1024, "Bytes/sec": 8.0}
RR_TESTS = ("TCP_RR", "UDP_RR", "SCTP_RR", "TCP_CRR")
STREAM_TESTS = ("TCP_STREAM", "UDP_STREAM", "TCP_MAERTS", "SCTP_STREAM")
KEYVAL_METRICS = {  # omni selector -> (metric, integer)
    "MEAN_LATENCY": ("rtt_mean_us", False), "MIN_LATENCY": ("rtt_min_us", False),
    "MAX_LATENCY": ("rtt_max_us", False), "P50_LATENCY": ("rtt_p50_us", False),
    "P90_LATENCY": ("rtt_p90_us", False), "P99_LATENCY": ("rtt_p99_us", False),
    "STDDEV_LATENCY": ("rtt_stdev_us", False), "REQUEST_SIZE": ("request_bytes", True),
    "RESPONSE_SIZE": ("response_bytes", True), "ELAPSED_TIME": ("elapsed_s", False),
}


def _refuse_non_reports(text, source):
    missing = NO_SERVER.search(text)
    if missing:
        raise ParseError(TOOL, source, "netperf could not open its control connection to %s port %s: no netserver "
                                       "answers there (start netserver on that host); nothing was measured"
                         % missing.groups())
    if re.search(r"^Usage: netperf ", text, re.MULTILINE):
        raise ParseError(TOOL, source, "this is netperf's usage text (bad option?), not a report")


def _rows(text):
    return [[float(value) for value in match.group(1).split()] for match in ROW.finditer(text)]


def _rr(result, rows, source):
    """A request/response data row: sizes, elapsed, rate (+ CPU and service demand)."""
    row = rows[0]
    if len(row) not in (6, 10):
        raise ParseError(TOOL, source, "the request/response data row has %d numbers (expected 6, or 10 with -c/-C)"
                         % len(row))
    metrics = result["metrics"]
    names = ("local_send_socket_bytes", "local_recv_socket_bytes", "request_bytes", "response_bytes")
    for name, value in zip(names, row):
        metrics[name] = int(value)
    metrics["elapsed_s"] = row[4]
    metrics["transactions_per_s"] = to_number(row[5], TOOL, source, "transaction rate")
    if len(row) == 10:
        metrics.update(local_cpu_pct=row[6], remote_cpu_pct=row[7], local_service_demand_us=row[8],
                       remote_service_demand_us=row[9])
    if len(rows) > 1 and len(rows[1]) == 2:
        metrics["remote_send_socket_bytes"], metrics["remote_recv_socket_bytes"] = (int(v) for v in rows[1])


def _stream(result, rows, text, source):
    """A stream data row: socket and message sizes, elapsed, throughput in the heading's unit."""
    row = rows[0]
    if len(row) < 5:
        raise ParseError(TOOL, source, "the stream data row has %d numbers (expected 5 or more)" % len(row))
    unit = re.search(r"secs\.\s+(\S+/sec)", text)
    unit = unit.group(1) if unit else "10^6bits/sec"
    if unit not in STREAM_UNITS:
        raise ParseError(TOOL, source, "throughput unit %r is not one netperf -f gives" % unit)
    metrics = result["metrics"]
    metrics.update(recv_socket_bytes=int(row[0]), send_socket_bytes=int(row[1]), message_bytes=int(row[2]),
                   elapsed_s=row[3])
    metrics["throughput_bps"] = row[4] * STREAM_UNITS[unit]
    result["details"]["throughput_unit_printed"] = unit


def _keyval(result, pairs, source):
    """The omni -k output: KEY=VALUE lines."""
    metrics = result["metrics"]
    for key, (name, integer) in KEYVAL_METRICS.items():
        if key in pairs:
            metrics[name] = to_number(pairs[key], TOOL, source, key, integer=integer)
    units = pairs.get("THROUGHPUT_UNITS", "")
    if "THROUGHPUT" in pairs:
        value = to_number(pairs["THROUGHPUT"], TOOL, source, "THROUGHPUT")
        if units == "Trans/s":
            metrics["transactions_per_s"] = value
        elif units.replace("/s", "/sec") in STREAM_UNITS:
            metrics["throughput_bps"] = value * STREAM_UNITS[units.replace("/s", "/sec")]
        else:
            raise ParseError(TOOL, source, "THROUGHPUT_UNITS %r is not one this parser knows" % units)
    for side in ("LOCAL", "REMOTE"):
        key = side + "_CPU_UTIL"
        if key in pairs:
            value = to_number(pairs[key], TOOL, source, key)
            metrics[side.lower() + "_cpu_pct"] = value if value >= 0 else None
            if value < 0:
                warn(result, "%s CPU was not measured (run netperf with %s)" % (side.lower(),
                                                                                "-c" if side == "LOCAL" else "-C"))
    result["details"]["protocol"] = pairs.get("PROTOCOL")


def _test_name(text, rows, test):
    banner = BANNER.search(text)
    if banner:
        kind = "RR" if banner.group("kind") == "REQUEST/RESPONSE" else "STREAM"
        return "%s_%s" % (banner.group("proto"), kind), "classic"
    if test:
        return test.upper(), "no headings (-P 0)"
    if rows and len(rows[0]) in (6, 10):
        return "TCP_RR", "no headings (-P 0)"
    return "TCP_STREAM", "no headings (-P 0)"


RR_METRICS = ("transactions_per_s", "rtt_mean_us", "request_bytes", "response_bytes", "elapsed_s", "local_cpu_pct",
              "remote_cpu_pct")
RR_DISTRIBUTION = ("rtt_min_us", "rtt_max_us", "rtt_p50_us", "rtt_p90_us", "rtt_p99_us", "rtt_stdev_us")


def _complete(result, name):
    """The same metric names in every layout of a request/response test: null, with a warning, where not printed."""
    if not name.endswith("_RR"):
        return
    metrics = result["metrics"]
    rate = metrics.get("transactions_per_s")
    if "rtt_mean_us" not in metrics and rate is not None:  # one transaction in flight: the round trip is 1 / rate
        metrics["rtt_mean_us"] = 1e6 / rate if rate > 0 else None
    if "local_cpu_pct" not in metrics:
        warn(result, "CPU use is null: netperf measured it only with -c (local) and -C (remote)")
    if not any(key in metrics for key in RR_DISTRIBUTION):
        warn(result, "the latency distribution (min/max/p50/p90/p99/stdev) is null: the %s layout has only the rate "
                     "(ask for it with -- -k MIN_LATENCY,P99_LATENCY,...)" % result["details"]["layout"])
    for key in RR_METRICS + RR_DISTRIBUTION:
        metrics.setdefault(key, None)


def _verdict(result):
    metrics = result["metrics"]
    rate = metrics.get("transactions_per_s", metrics.get("throughput_bps"))
    if rate is not None and rate <= 0:
        invalidate(result, "netperf measured nothing (rate 0): the peer did not answer during the test")
    if metrics.get("elapsed_s") is not None and metrics["elapsed_s"] <= 0:
        invalidate(result, "the test ran 0 s")


def parse(text, source="<content>", test=None):
    """Parse one netperf run; ``test`` (e.g. TCP_RR) names the test of -P 0 output."""
    text = require_text(text, TOOL, source)
    _refuse_non_reports(text, source)
    result = new_result(TOOL, source)
    pairs = dict(KEYVAL.findall(text))
    rows = _rows(text)
    name, layout = _test_name(text, rows, test)
    result["details"].update(test=name, layout=layout)
    if pairs:
        result["details"]["layout"] = "omni key=value (-k)"
        _keyval(result, pairs, source)
    elif not rows:
        raise ParseError(TOOL, source, "no data row after the headings (truncated output, or not netperf output?)")
    elif name in STREAM_TESTS or name.endswith("_STREAM"):
        _stream(result, rows, text, source)
    elif name in RR_TESTS or name.endswith("_RR"):
        _rr(result, rows, source)
    else:
        raise ParseError(TOOL, source, "test %s is not one this parser reads (TCP_RR, UDP_RR, TCP_STREAM...)" % name)
    if test and name != test.upper():
        raise ParseError(TOOL, source, "this is a %s report, the caller expected %s" % (name, test.upper()))
    _complete(result, name)
    _verdict(result)
    return result
