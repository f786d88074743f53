# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for the client report of ``sockperf ping-pong`` / ``sockperf under-load``.

Pure function ``parse(text, source="<content>", max_drop_pct=1.0)``; see
docs/architecture.md.  Format facts (sockperf 3.7 captured in
tests/fixtures/sockperf; newer strings from Mellanox/sockperf ``src/client.cpp``
``client_statistics()`` / ``printPercentiles()``):

* every line starts with ``sockperf: `` and some carry ANSI colour codes even
  when stdout is not a terminal (stripped here);
* ``[Total Run] RunTime=F sec; Warm up time=N msec; SentMessages=N;
  ReceivedMessages=N[; SkippedMessages=N]`` (``Warm up packets=N`` when the run
  is bounded by a packet count);
* ``[Valid Duration] RunTime=F sec; SentMessages=N; ReceivedMessages=N`` - the
  statistics cover this window only (warm-up and cool-down are cut off);
* ``====> avg-rtt=F (std-dev=F[, mean-ad=F, median-ad=F, siqr=F, cv=F,
  std-error=F, 99.0% ci=[F, F]])`` - ``avg-rtt`` with ``--full-rtt``,
  ``avg-latency`` (half the round trip) without it; the fields after std-dev
  appear in sockperf 3.8 and later;
* ``# dropped messages = N; # duplicated messages = N; # out-of-order messages = N``;
* ``Total N observations``, ``---> <MAX> observation = F``, ``---> percentile
  P = F`` (99.999 … 25), ``---> <MIN> observation = F``, all in microseconds.

sockperf exits 0 after most failures (connection refused, no reply, bad
option), so the text decides: ``ERROR:`` lines, ``No messages were received``,
``No valid observations found`` and usage text without a report are
ParseErrors quoting sockperf; a complete report of an interrupted run or with
too many dropped messages is ``valid: false``.

Metrics are in the unit sockperf prints (microseconds).  With ``avg-latency``
(no ``--full-rtt``) sockperf divides every round trip by two, so the
``rtt_*_us`` metrics are always round trips (doubled back when needed) and the
``avg_us``/``pNN_us`` ones are what sockperf printed; ``statistic`` says which.
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

TOOL = "sockperf"

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PREFIX = r"^(?:sockperf: )?"

_VERSION = re.compile(_PREFIX + r"== version #(?P<version>\S+) ==", re.MULTILINE)
_TARGET = re.compile(r"^\[\s*(?P<index>\d+)\] IP = (?P<ip>\S+)\s+PORT =\s*(?P<port>\d+) # (?P<proto>[A-Z]+)",
                     re.MULTILINE)
_TEST_END = re.compile(_PREFIX + r"Test end \((?P<why>[^)]*)\)", re.MULTILINE)
_ERROR = re.compile(r"sockperf: ERROR: (?P<msg>.*?)\s*$", re.MULTILINE)
_USAGE = re.compile(r"^Usage: sockperf", re.MULTILINE)
# sockperf throughput (tp): a message rate and a bandwidth, no latency (client.cpp, "Summary: ...")
_THROUGHPUT = re.compile(_PREFIX + r"Summary: Message Rate is (?P<mps>\d+) \[msg/sec\]", re.MULTILINE)
_NO_RESULT = re.compile(
    _PREFIX + r"(?P<msg>No messages were received from the server\..*|No messages were sent|"
    r"No valid observations found\..*|Test end before test start\..*)$", re.MULTILINE)
_TOTAL = re.compile(
    _PREFIX + r"\[Total Run\] RunTime=(?P<run>" + NUM + r") sec; "
    r"(?:Warm up time=(?P<warm_ms>" + INT + r") msec|Warm up packets=(?P<warm_n>" + INT + r")); "
    r"SentMessages=(?P<sent>" + INT + r"); ReceivedMessages=(?P<received>" + INT + r")"
    r"(?:; SkippedMessages=(?P<skipped>" + INT + r"))?", re.MULTILINE)
_SERVER = re.compile(_PREFIX + r"=+ Printing statistics for Server No: (?P<server>\d+)", re.MULTILINE)
_VALID = re.compile(
    _PREFIX + r"\[Valid Duration\] RunTime=(?P<run>" + NUM + r") sec; SentMessages=(?P<sent>" + INT + r"); "
    r"ReceivedMessages=(?P<received>" + INT + r")", re.MULTILINE)
_AVG = re.compile(_PREFIX + r"=+> avg-(?P<kind>rtt|latency)=(?P<avg>" + NUM + r") \((?P<fields>[^\n]*)\)\s*$",
                  re.MULTILINE)
_FIELD = re.compile(r"(?P<name>[a-z][a-z-]*)=(?P<value>" + NUM + r")")
_CI = re.compile(r"(?P<level>" + NUM + r")% ci=\[(?P<low>" + NUM + r"), (?P<high>" + NUM + r")\]")
_ERRORS = re.compile(
    _PREFIX + r"# dropped messages = (?P<dropped>" + INT + r"); # duplicated messages = (?P<dup>" + INT + r"); "
    r"# out-of-order messages = (?P<ooo>" + INT + r")", re.MULTILINE)
_OBSERVATIONS = re.compile(_PREFIX + r"Total (?P<n>" + INT + r") observations", re.MULTILINE)
_EXTREME = re.compile(_PREFIX + r"---> <(?P<which>MAX|MIN)> observation =\s*(?P<value>" + NUM + r")", re.MULTILINE)
_PERCENTILE = re.compile(_PREFIX + r"---> percentile\s+(?P<p>" + NUM + r") =\s*(?P<value>" + NUM + r")",
                         re.MULTILINE)

# Percentiles sockperf prints (printPercentiles) -> metric name part.
PERCENTILES = (("99.999", "p99_999"), ("99.990", "p99_99"), ("99.900", "p99_9"), ("99.000", "p99"),
               ("90.000", "p90"), ("75.000", "p75"), ("50.000", "p50"), ("25.000", "p25"))
# Optional statistics of sockperf >= 3.8 in the avg line: name -> metric.
AVG_FIELDS = (("std-dev", "stddev_us"), ("mean-ad", "mean_ad_us"), ("median-ad", "median_ad_us"),
              ("siqr", "siqr_us"), ("std-error", "std_error_us"))
# Fewer observations than this make the high percentiles a handful of samples.
MIN_OBSERVATIONS = 1000


def _num(value, source, field, integer=False):
    return to_number(value, TOOL, source, field, integer=integer)


def _need(pattern, text, source, what):
    """A compiled pattern's match, or a ParseError naming the missing line."""
    match = pattern.search(text)
    if match is None:
        raise ParseError(TOOL, source, "missing %s (truncated output, or not sockperf output?)" % what)
    return match


def _server_blocks(text):
    """Split the text at each 'Printing statistics for Server No: N' line."""
    starts = list(_SERVER.finditer(text))
    blocks = []
    for number, match in enumerate(starts):
        end = starts[number + 1].start() if number + 1 < len(starts) else len(text)
        blocks.append((int(match.group("server")), text[match.start():end]))
    return blocks


def _server_stats(block, source, server):
    """Metrics of one server block (values exactly as sockperf printed them)."""
    where = "server %d" % server
    stats = {}
    no_result = _NO_RESULT.search(block)
    valid = _VALID.search(block)
    if valid is None:
        if no_result is not None:
            raise ParseError(TOOL, source, "%s: sockperf measured nothing: %s" % (where, no_result.group("msg")))
        raise ParseError(TOOL, source, "%s: missing the [Valid Duration] line (truncated output?)" % where)
    stats["valid_run_time_s"] = _num(valid.group("run"), source, "valid_run_time_s")
    stats["valid_sent_messages"] = _num(valid.group("sent"), source, "valid_sent_messages", integer=True)
    stats["valid_received_messages"] = _num(valid.group("received"), source, "valid_received_messages", integer=True)

    avg = _need(_AVG, block, source, "%s: the '====> avg-rtt=' / 'avg-latency=' line" % where)
    kind = avg.group("kind")
    stats["statistic"] = "round-trip" if kind == "rtt" else "one-way (half round trip)"
    stats["avg_us"] = _num(avg.group("avg"), source, "avg_us")
    fields = dict((m.group("name"), m.group("value")) for m in _FIELD.finditer(avg.group("fields")))
    if "std-dev" not in fields:
        raise ParseError(TOOL, source, "%s: the avg line has no std-dev (%r)" % (where, avg.group("fields")))
    for name, metric in AVG_FIELDS:
        stats[metric] = _num(fields[name], source, metric) if name in fields else None
    stats["cv"] = _num(fields["cv"], source, "cv") if "cv" in fields else None
    ci = _CI.search(avg.group("fields"))
    stats["ci_level_pct"] = _num(ci.group("level"), source, "ci_level_pct") if ci else None
    stats["ci_low_us"] = _num(ci.group("low"), source, "ci_low_us") if ci else None
    stats["ci_high_us"] = _num(ci.group("high"), source, "ci_high_us") if ci else None

    errors = _need(_ERRORS, block, source, "%s: the '# dropped messages' line" % where)
    stats["dropped_messages"] = _num(errors.group("dropped"), source, "dropped_messages", integer=True)
    stats["duplicated_messages"] = _num(errors.group("dup"), source, "duplicated_messages", integer=True)
    stats["out_of_order_messages"] = _num(errors.group("ooo"), source, "out_of_order_messages", integer=True)

    observations = _need(_OBSERVATIONS, block, source, "%s: the 'Total N observations' line" % where)
    stats["observations"] = _num(observations.group("n"), source, "observations", integer=True)
    extremes = dict((m.group("which"), m.group("value")) for m in _EXTREME.finditer(block))
    for which, metric in (("MIN", "min_us"), ("MAX", "max_us")):
        if which not in extremes:
            raise ParseError(TOOL, source, "%s: missing the '<%s> observation' line (truncated output?)" % (where, which))
        stats[metric] = _num(extremes[which], source, metric)
    printed = {}
    for match in _PERCENTILE.finditer(block):
        printed["%.3f" % _num(match.group("p"), source, "percentile")] = match.group("value")
    for label, name in PERCENTILES:
        # sockperf skips a percentile whose index falls below 0 (very few observations).
        stats[name + "_us"] = _num(printed[label], source, name + "_us") if label in printed else None
    if stats["p50_us"] is None:
        raise ParseError(TOOL, source, "%s: no 'percentile 50.000' line (truncated output?)" % where)
    return stats


def parse(text, source="<content>", max_drop_pct=1.0):
    """Parse a sockperf client report; see the module docstring."""
    text = require_text(text, TOOL, source)
    text = _ANSI.sub("", text).replace("\r\n", "\n")
    if max_drop_pct is None:
        max_drop_pct = 1.0
    max_drop_pct = to_number(max_drop_pct, TOOL, source, "max_drop_pct")
    if max_drop_pct < 0:
        raise ParseError(TOOL, source, "max_drop_pct must be >= 0, got %r" % max_drop_pct)

    errors = [m.group("msg") for m in _ERROR.finditer(text)]
    total = _TOTAL.search(text)
    blocks = _server_blocks(text)
    if total is None or not blocks:
        if errors:
            raise ParseError(TOOL, source, "sockperf failed: %s" % "; ".join(errors))
        no_result = _NO_RESULT.search(text)
        if no_result is not None:
            raise ParseError(TOOL, source, "sockperf measured nothing: %s" % no_result.group("msg"))
        if _USAGE.search(text):
            raise ParseError(TOOL, source, "usage text instead of a report (bad option?)")
        if _THROUGHPUT.search(text):
            raise ParseError(TOOL, source, "this is sockperf's throughput-mode report (sockperf tp: %s msg/s and a "
                                           "bandwidth, no latency), not a ping-pong or under-load one: run sockperf "
                                           "ping-pong or under-load for round trips" % _THROUGHPUT.search(text).group("mps"))
        if _VERSION.search(text) is None and _TEST_END.search(text) is None:
            raise ParseError(TOOL, source, "not sockperf client output (no version banner, no [Total Run] line)")
        raise ParseError(TOOL, source, "missing the [Total Run] line and the statistics (truncated output?)")

    result = new_result(TOOL, source)
    metrics = result["metrics"]
    details = result["details"]
    version = _VERSION.search(text)
    details["version"] = version.group("version") if version else None
    targets = [{"ip": m.group("ip"), "port": int(m.group("port")), "protocol": m.group("proto")}
               for m in _TARGET.finditer(text)]
    details["targets"] = targets
    metrics["protocol"] = targets[0]["protocol"] if targets else None

    metrics["run_time_s"] = _num(total.group("run"), source, "run_time_s")
    metrics["warmup_ms"] = _num(total.group("warm_ms"), source, "warmup_ms", integer=True) if total.group("warm_ms") else None
    metrics["sent_messages"] = _num(total.group("sent"), source, "sent_messages", integer=True)
    metrics["received_messages"] = _num(total.group("received"), source, "received_messages", integer=True)
    metrics["skipped_messages"] = (_num(total.group("skipped"), source, "skipped_messages", integer=True)
                                   if total.group("skipped") else 0)

    servers = {}
    for server, block in blocks:
        servers[server] = _server_stats(block, source, server)
    first = min(servers)
    stats = servers[first]
    if len(servers) > 1:
        warn(result, "the report covers %d servers; the metrics are those of server %d (all are in details.servers)"
             % (len(servers), first))
    details["servers"] = dict((str(k), v) for k, v in sorted(servers.items()))
    metrics.update(stats)
    missing = [name for name in ("mean_ad_us", "median_ad_us", "siqr_us", "std_error_us", "cv", "ci_level_pct",
                                 "ci_low_us", "ci_high_us") if stats[name] is None]
    if missing:
        warn(result, "%s are null: sockperf %s prints only avg and std-dev on its avg line (mean-ad, median-ad, "
             "siqr, cv, std-error and the confidence interval came in sockperf 3.8)"
             % (", ".join(missing), details["version"] or "(version not printed)"))

    # Round trips, whatever sockperf printed (it halves each round trip without --full-rtt).
    factor = 1 if stats["statistic"] == "round-trip" else 2
    for name in ("avg", "min", "max", "p50", "p90", "p99", "p99_9"):
        value = stats[name + "_us"]
        metrics["rtt_%s_us" % name] = None if value is None else value * factor
    metrics["round_trips_per_s"] = (stats["valid_received_messages"] / stats["valid_run_time_s"]
                                    if stats["valid_run_time_s"] > 0 else None)

    # Verdicts.
    end = _TEST_END.search(text)
    details["test_end"] = end.group("why") if end else None
    if end is None:
        warn(result, "no 'Test end (...)' line: how the test stopped is unknown")
    elif end.group("why") != "interrupted by timer":
        invalidate(result, "the test did not run its full time: sockperf says 'Test end (%s)' after %.3f s"
                   % (end.group("why"), metrics["run_time_s"]))
    for message in errors:
        invalidate(result, "sockperf reported an error: %s" % message)
    sent = stats["valid_sent_messages"]
    dropped = stats["dropped_messages"]
    if dropped:
        share = 100.0 * dropped / sent if sent else 100.0
        message = "%d of %d messages (%.2f %%) were dropped" % (dropped, sent, share)
        if share > max_drop_pct:
            invalidate(result, message + ", more than max_drop_pct %g %%" % max_drop_pct)
        else:
            warn(result, message)
    if stats["duplicated_messages"]:
        warn(result, "%d duplicated messages" % stats["duplicated_messages"])
    if stats["out_of_order_messages"]:
        warn(result, "%d out-of-order messages (excluded from the statistics by sockperf)"
             % stats["out_of_order_messages"])
    if stats["observations"] < MIN_OBSERVATIONS:
        warn(result, "only %d observations: the high percentiles rest on a handful of samples; run longer (-t)"
             % stats["observations"])
    if stats["valid_run_time_s"] <= 0:
        invalidate(result, "the valid measurement window is %.3f s long" % stats["valid_run_time_s"])
    return result
