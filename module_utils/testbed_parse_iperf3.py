# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``iperf3 -J`` (JSON) client output.

Pure function ``parse(text, source="<content>")``; see docs/architecture.md.

What is read (iperf3 3.0 and later; 3.12 captured in tests/fixtures/iperf3, 3.0.11
and 3.6 published outputs beside them; versions and variants in docs/parsers.md):

* TCP throughput from ``end.sum_sent`` / ``end.sum_received`` (bits/s and bytes),
  retransmits from ``end.sum_sent.retransmits``;
* UDP from ``end.sum_sent`` / ``end.sum_received`` (3.11+), else ``end.sum``
  (which mixes sender bytes with receiver loss; a warning says so);
* RTT and congestion window from ``end.streams[].sender`` of the streams this
  host sent on (zero/absent on the receiving side of ``-R``: null).  The
  per-stream ``sender`` flag exists from 3.7; before it the client sent on every
  stream unless ``-R`` was given.  3.0 reports no RTT/cwnd at all (null, with a
  warning naming the version);
* CPU from ``end.cpu_utilization_percent``;
* the per-interval series from ``intervals[].sum`` (omitted intervals skipped).

An ``error`` key with no end summary (connection refused, server busy) is a
ParseError quoting iperf3's message; an ``error`` with a complete end summary
(interrupted client) is a result with ``valid: false``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible.module_utils.testbed_parse import (
    ParseError,
    invalidate,
    json_documents,
    new_result,
    require_text,
    to_number,
    warn,
)

TOOL = "iperf3"

# Counters that iperf3 < 3.14 printed as unsigned when they held a -1 sentinel
# (e.g. retransmits 4294967294).  Anything at or above 2**31 is such a value.
_SENTINEL_LIMIT = 2 ** 31


# Text reports that are not -J output (iperf3 src/iperf_locale.c, iperf 2 src/Locale.c).
_IPERF3_TEXT = re.compile(r"^Connecting to host \S+, port \d+|^\[ ID\] Interval\s+Transfer\s+Bitrate"
                          r"|^\[ ID\] Interval\s+Transfer\s+Bandwidth|^iperf Done\.", re.MULTILINE)
_IPERF3_SERVER_TEXT = re.compile(r"^Server listening on \d+", re.MULTILINE)
_IPERF2_TEXT = re.compile(r"^Client connecting to \S+, (?:TCP|UDP) port \d+|^Server listening on (?:TCP|UDP) port \d+",
                          re.MULTILINE)


def _other_format(text):
    """What non-JSON input is when it is recognisably another iperf output (else None)."""
    if _IPERF2_TEXT.search(text):
        return "iperf 2 output (iperf -c/-s), not iperf3"
    if _IPERF3_SERVER_TEXT.search(text) and not re.search(r"^Connecting to host ", text, re.MULTILINE):
        return "the iperf3 server's text report (iperf3 -s without -J); parse the client's iperf3 -c ... -J output"
    if _IPERF3_TEXT.search(text):
        return "iperf3's human-readable text report (the client was run without -J)"
    return None


def _decode(text, source):
    """Return (document, skipped_leading_lines, trailing_text)."""
    found = json_documents(text, TOOL, source, nan_hint=" (iperf3 <= 3.1 printed nan for undefined values)")
    if not found["documents"]:
        if found["truncated"]:
            raise ParseError(
                TOOL, source,
                "truncated JSON: the document stops after %d bytes without its closing brace "
                "(interrupted copy or killed iperf3?)" % len(text.encode("utf-8")))
        if found["invalid"]:
            raise ParseError(TOOL, source, "invalid JSON (%s)" % found["invalid"])
        other = _other_format(text)
        if other:
            raise ParseError(TOOL, source, "not JSON: this is %s; run the client with -J" % other)
        first = text.strip().splitlines()[0].strip()
        raise ParseError(
            TOOL, source,
            "not JSON (usage text / parameter error? or not iperf3 -J output); first line: %r" % first[:120])
    document, start, end = found["documents"][0]
    skipped = [line.strip() for line in text[:start].splitlines() if line.strip()]
    return document, skipped, text[end:]


class _Reader(object):
    """Typed access to the decoded document with precise error messages."""

    def __init__(self, result, source):
        self.result = result
        self.source = source

    def number(self, mapping, key, path, integer=False):
        """A number, or None when absent; null (cJSON's nan) -> None + warning."""
        if not isinstance(mapping, dict) or key not in mapping:
            return None
        value = mapping[key]
        if value is None:
            warn(self.result, "iperf3 printed null for %s.%s (an undefined value, e.g. nan); reported as null"
                 % (path, key))
            return None
        if isinstance(value, str):
            raise ParseError(TOOL, self.source, "%s.%s is the string %r, expected a number" % (path, key, value))
        return to_number(value, TOOL, self.source, "%s.%s" % (path, key), integer=integer)


def _sum_block(end, names):
    for name in names:
        block = end.get(name)
        if isinstance(block, dict) and block:
            return name, block
    return None, None


def _stdev(values):
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def _counter(reader, block, key, path):
    """A counter that may carry an unsigned -1 sentinel (iperf3 < 3.14)."""
    value = reader.number(block, key, path)
    if value is None:
        return None
    if value < 0 or value >= _SENTINEL_LIMIT:
        warn(reader.result, "%s.%s is %s, an unset-counter sentinel (iperf3 < 3.14 printed -1 as unsigned); "
             "reported as null" % (path, key, value))
        return None
    return int(value)


def parse(text, source="<content>"):
    """Parse one ``iperf3 -c ... -J`` client report; see the module docstring."""
    text = require_text(text, TOOL, source)
    document, skipped, trailing = _decode(text, source)
    result = new_result(TOOL, source)
    _surroundings(result, skipped, trailing)
    run = _report(document, result, source)
    _test_setup(run)
    _choose_sums(run)
    _throughput(run)
    _cpu(run)
    _streams(run)
    _udp_loss(run)
    _intervals(run)
    _bidir_reverse(run)
    _verdict(run)
    return result


def _surroundings(result, skipped, trailing):
    """Warn about lines before the JSON; text after it is an error line or a warning."""
    details = result["details"]
    if skipped:
        warn(result, "skipped %d line(s) before the JSON document: %s" % (len(skipped), " | ".join(skipped)[:300]))
        details["skipped_lines"] = skipped
    trailing = trailing.strip()
    if trailing:
        details["trailing_text"] = trailing[:1000]
        error_line = re.search(r"^iperf3: (?:error - )?(.+)$", trailing, re.MULTILINE)
        if error_line:
            invalidate(result, "iperf3 printed an error after the JSON: %s" % error_line.group(1).strip())
        else:
            warn(result, "text after the JSON document was ignored: %r" % trailing[:200])


def _report(document, result, source):
    """Check that ``document`` is a client report with an end summary; return the run mapping.

    The run mapping carries the document's parts and what later steps learn about the
    test; every step below reads and extends it.
    """
    if not isinstance(document, dict) or "start" not in document or not ({"end", "error"} & set(document)):
        raise ParseError(TOOL, source, "JSON document is not an iperf3 -J report (no start/end keys)")

    start = document.get("start") or {}
    if isinstance(start, dict) and "accepted_connection" in start and "connecting_to" not in start:
        raise ParseError(TOOL, source, "this is the iperf3 server's JSON (start.accepted_connection, iperf3 -s -J), "
                                       "which is not supported; parse the client's iperf3 -c ... -J output")
    end = document.get("end")
    if not isinstance(end, dict):
        end = {}
    error = document.get("error")
    sent_name, sent = _sum_block(end, ("sum_sent",))
    received_name, received = _sum_block(end, ("sum_received",))
    plain_name, plain = _sum_block(end, ("sum",))
    if sent is None and received is None and plain is None:
        if error:
            raise ParseError(TOOL, source, "iperf3 reported an error before any result: %r" % str(error))
        raise ParseError(TOOL, source, "the end summary has no sum_sent/sum_received/sum (truncated run?)")
    if error:
        invalidate(result, "iperf3 reported an error: %r" % str(error))
        result["details"]["error"] = str(error)
    return {
        "result": result, "metrics": result["metrics"], "details": result["details"],
        "reader": _Reader(result, source), "document": document, "start": start, "end": end, "error": error,
        "sent": sent, "sent_name": sent_name, "received": received, "received_name": received_name,
        "plain": plain, "plain_name": plain_name,
    }


def _test_setup(run):
    """Version, protocol, streams and direction from ``start.test_start`` (and the end sums)."""
    start, end, details, reader = run["start"], run["end"], run["details"], run["reader"]
    test_start = start.get("test_start") or {}
    version = start.get("version")
    run["label"] = "iperf3 %s" % str(version).replace("iperf ", "", 1) if version else None
    details["version"] = version
    details["duration_configured_s"] = reader.number(test_start, "duration", "start.test_start")
    connecting = start.get("connecting_to")
    if isinstance(connecting, dict):
        details["connecting_to"] = {"host": connecting.get("host"), "port": connecting.get("port")}

    protocol = test_start.get("protocol")
    if not protocol:
        plain = run["plain"]
        protocol = "UDP" if isinstance(plain, dict) and "jitter_ms" in plain else "TCP"
        warn(run["result"], "start.test_start.protocol missing; protocol guessed as %s" % protocol)
    protocol = str(protocol).upper()
    streams_list = end.get("streams") if isinstance(end.get("streams"), list) else []
    num_streams = reader.number(test_start, "num_streams", "start.test_start", integer=True)
    if num_streams is None:
        num_streams = len(streams_list) or None
    reverse = bool(test_start.get("reverse"))
    if "bidir" in test_start:
        bidir = bool(test_start.get("bidir"))
    else:  # 3.11/3.12 have no test_start.bidir; the extra sums give it away
        bidir = "sum_sent_bidir_reverse" in end or "sum_bidir_reverse" in end
    run.update(protocol=protocol, udp=protocol == "UDP", streams_list=streams_list, reverse=reverse, bidir=bidir)
    run["metrics"].update(protocol=protocol, streams=num_streams, reverse=reverse, bidir=bidir)


def _choose_sums(run):
    """UDP before 3.11 has only ``end.sum``, whose bytes are the local side's: use it for that side."""
    if run["sent"] is None and run["received"] is None:
        plain = run["plain"]
        local_sender = plain.get("sender")
        if local_sender is None:
            local_sender = not run["reverse"]
        side = "sent" if local_sender else "received"
        warn(run["result"], "no end.sum_sent/sum_received (iperf3 < 3.11 UDP); %s values taken from end.sum, "
             "which mixes sender bytes with receiver loss" % side)
        run[side + "_name"], run[side] = run["plain_name"], plain
    run["sent_path"] = "end.%s" % run["sent_name"]
    run["received_path"] = "end.%s" % run["received_name"]


def _throughput(run):
    """Duration, bytes, bits/s and retransmits from the end sums."""
    reader, metrics = run["reader"], run["metrics"]
    sent, sent_path = run["sent"], run["sent_path"]
    received, received_path = run["received"], run["received_path"]
    udp, protocol = run["udp"], run["protocol"]
    duration = reader.number(sent, "seconds", sent_path) if sent else None
    if duration is None and received:
        duration = reader.number(received, "seconds", received_path)
    metrics["duration_s"] = duration
    metrics["sent_bytes"] = reader.number(sent, "bytes", sent_path, integer=True) if sent else None
    metrics["received_bytes"] = reader.number(received, "bytes", received_path, integer=True) if received else None
    metrics["sent_bps"] = reader.number(sent, "bits_per_second", sent_path) if sent else None
    metrics["received_bps"] = reader.number(received, "bits_per_second", received_path) if received else None
    metrics["retransmits"] = None if udp or not sent else _counter(reader, sent, "retransmits", sent_path)
    if not udp and sent and "retransmits" not in sent:
        warn(run["result"], "retransmits is null: %s printed no retransmit count in %s (%s%s)" % (
            run["label"] or "iperf3", sent_path, protocol,
            ", which has none" if protocol == "SCTP" else "; no TCP_INFO on the sending host?"))


def _cpu(run):
    """Host and remote CPU utilisation; the remote's all-0 after an error is null."""
    reader, metrics = run["reader"], run["metrics"]
    cpu = run["end"].get("cpu_utilization_percent") or {}
    for side in ("host", "remote"):
        values = dict((part, reader.number(cpu, "%s_%s" % (side, part), "end.cpu_utilization_percent"))
                      for part in ("total", "user", "system"))
        if side == "remote" and run["error"] and all(v == 0 for v in values.values()):
            warn(run["result"], "remote CPU utilisation is all 0 after an error (the server sent no results); "
                 "reported as null")
            values = dict.fromkeys(values)
        for part, value in values.items():
            metrics["%s_cpu_%s_pct" % (side, part)] = value


def _sender_flag(run):
    """Whether the per-stream ``sender`` flag is missing (before 3.7); warn why RTT/cwnd are null.

    3.7 added a "sender" flag to each stream block; before it (no --bidir yet) the
    client sent on every stream unless -R was given.
    """
    result, protocol, reverse, label = run["result"], run["protocol"], run["reverse"], run["label"]
    tcp_blocks = [s.get("sender") for s in run["streams_list"] if isinstance(s, dict) and "udp" not in s]
    tcp_blocks = [b for b in tcp_blocks if isinstance(b, dict)]
    flag_missing = bool(tcp_blocks) and not any("sender" in b for b in tcp_blocks)
    run["details"]["stream_sender_flag"] = "inferred" if flag_missing else "printed"
    if flag_missing and reverse:
        warn(result, "RTT and congestion window are null: with -R this host only received, and %s (before 3.7, "
             "no per-stream sender flag) measures them on the sending side only" % (label or "iperf3 < 3.7"))
    elif protocol == "SCTP":
        warn(result, "RTT and congestion window are null: iperf3 reports them for TCP only, not SCTP")
    elif not reverse and tcp_blocks and protocol == "TCP" and not any(
            "max_snd_cwnd" in b or "mean_rtt" in b for b in tcp_blocks):
        warn(result, "RTT and congestion window are null: %s does not report them (added in iperf3 3.1)"
             % (label or "this iperf3"))
    return flag_missing


def _udp_stream(reader, block, path):
    """One ``end.streams[].udp`` block."""
    return dict(
        socket=block.get("socket"),
        bytes=reader.number(block, "bytes", path + ".udp", integer=True),
        bps=reader.number(block, "bits_per_second", path + ".udp"),
        jitter_ms=reader.number(block, "jitter_ms", path + ".udp"),
        lost_packets=reader.number(block, "lost_packets", path + ".udp", integer=True),
        packets=reader.number(block, "packets", path + ".udp", integer=True),
        lost_percent=reader.number(block, "lost_percent", path + ".udp"),
        out_of_order=reader.number(block, "out_of_order", path + ".udp", integer=True),
        sender=block.get("sender"),
    )


def _tcp_stream(run, stream, path, flag_missing):
    """One TCP/SCTP stream; RTT and cwnd only when this host sent on it."""
    reader = run["reader"]
    snd = stream.get("sender") or {}
    rcv = stream.get("receiver") or {}
    local_sender = snd.get("sender") if "sender" in snd else (not run["reverse"] if flag_missing else None)
    entry = dict(
        socket=snd.get("socket", rcv.get("socket")),
        local_sender=local_sender,
        sent_bytes=reader.number(snd, "bytes", path + ".sender", integer=True),
        sent_bps=reader.number(snd, "bits_per_second", path + ".sender"),
        received_bytes=reader.number(rcv, "bytes", path + ".receiver", integer=True),
        received_bps=reader.number(rcv, "bits_per_second", path + ".receiver"),
        retransmits=_counter(reader, snd, "retransmits", path + ".sender") if "retransmits" in snd else None,
    )
    mean_rtt = reader.number(snd, "mean_rtt", path + ".sender")
    min_rtt = reader.number(snd, "min_rtt", path + ".sender")
    max_rtt = reader.number(snd, "max_rtt", path + ".sender")
    cwnd = reader.number(snd, "max_snd_cwnd", path + ".sender")
    if local_sender is True and mean_rtt:
        entry.update(mean_rtt_us=mean_rtt, min_rtt_us=min_rtt, max_rtt_us=max_rtt)
    if local_sender is True and cwnd:
        entry["max_snd_cwnd_bytes"] = cwnd
    return entry


def _streams(run):
    """Per-stream details; RTT (weighted by bytes sent) and cwnd over the streams this host sent on."""
    flag_missing = _sender_flag(run)
    stream_details = []
    for index, stream in enumerate(run["streams_list"]):
        path = "end.streams[%d]" % index
        if "udp" in stream:
            stream_details.append(_udp_stream(run["reader"], stream["udp"], path))
        else:
            stream_details.append(_tcp_stream(run, stream, path, flag_missing))
    run["details"]["streams"] = run["stream_details"] = stream_details

    rtt_weighted = rtt_weight = 0.0
    rtt_min = rtt_max = cwnd_max = None
    for entry in stream_details:
        if "mean_rtt_us" in entry:
            weight = entry["sent_bytes"] or 1
            rtt_weighted += entry["mean_rtt_us"] * weight
            rtt_weight += weight
            min_rtt, max_rtt = entry["min_rtt_us"], entry["max_rtt_us"]
            rtt_min = min_rtt if rtt_min is None else min(rtt_min, min_rtt)
            rtt_max = max_rtt if rtt_max is None else max(rtt_max, max_rtt)
        if "max_snd_cwnd_bytes" in entry:
            cwnd = entry["max_snd_cwnd_bytes"]
            cwnd_max = cwnd if cwnd_max is None else max(cwnd_max, cwnd)
    metrics = run["metrics"]
    metrics["mean_rtt_us"] = rtt_weighted / rtt_weight if rtt_weight else None
    metrics["min_rtt_us"] = rtt_min
    metrics["max_rtt_us"] = rtt_max
    metrics["max_snd_cwnd_bytes"] = cwnd_max


def _udp_loss(run):
    """UDP loss/jitter: the receiver's view (null for TCP)."""
    reader, metrics = run["reader"], run["metrics"]
    for key in ("jitter_ms", "lost_packets", "packets", "lost_percent", "out_of_order"):
        metrics[key] = None
    if not run["udp"]:
        return
    received, plain = run["received"], run["plain"]
    loss_block, loss_path = (received, run["received_path"]) if received is not None else (plain, "end.sum")
    if loss_block is None:
        loss_block, loss_path = plain, "end.sum"
    metrics["jitter_ms"] = reader.number(loss_block, "jitter_ms", loss_path)
    metrics["lost_packets"] = reader.number(loss_block, "lost_packets", loss_path, integer=True)
    metrics["packets"] = reader.number(loss_block, "packets", loss_path, integer=True)
    metrics["lost_percent"] = reader.number(loss_block, "lost_percent", loss_path)
    if isinstance(loss_block, dict) and "out_of_order" in loss_block:
        metrics["out_of_order"] = reader.number(loss_block, "out_of_order", loss_path, integer=True)
    else:
        ooo = [s.get("out_of_order") for s in run["stream_details"]]
        if ooo and all(v is not None for v in ooo):
            metrics["out_of_order"] = sum(ooo)


def _intervals(run):
    """Interval series (the "sum" of each interval, i.e. all forward streams) and its spread."""
    reader, metrics, document = run["reader"], run["metrics"], run["document"]
    series = []
    intervals = document.get("intervals") if isinstance(document.get("intervals"), list) else []
    for index, interval in enumerate(intervals):
        block = interval.get("sum") if isinstance(interval, dict) else None
        if not isinstance(block, dict):
            continue
        path = "intervals[%d].sum" % index
        series.append({
            "start": reader.number(block, "start", path),
            "end": reader.number(block, "end", path),
            "bps": reader.number(block, "bits_per_second", path),
            "omitted": bool(block.get("omitted")),
        })
    run["details"]["intervals"] = series
    bps_values = [i["bps"] for i in series if not i["omitted"] and i["bps"] is not None]
    metrics["interval_bps_min"] = min(bps_values) if bps_values else None
    metrics["interval_bps_max"] = max(bps_values) if bps_values else None
    metrics["interval_bps_stdev"] = _stdev(bps_values)


def _bidir_reverse(run):
    """The reverse direction of ``--bidir``; the congestion algorithms into details."""
    reader, metrics, end = run["reader"], run["metrics"], run["end"]
    if run["bidir"]:
        for direction, name in (("sent", "sum_sent_bidir_reverse"), ("received", "sum_received_bidir_reverse")):
            block = end.get(name) if isinstance(end.get(name), dict) else None
            metrics["bidir_reverse_%s_bytes" % direction] = (
                reader.number(block, "bytes", "end." + name, integer=True) if block else None)
            metrics["bidir_reverse_%s_bps" % direction] = (
                reader.number(block, "bits_per_second", "end." + name) if block else None)
        block = end.get("sum_sent_bidir_reverse") if isinstance(end.get("sum_sent_bidir_reverse"), dict) else None
        metrics["bidir_reverse_retransmits"] = (
            None if run["udp"] or block is None
            else _counter(reader, block, "retransmits", "end.sum_sent_bidir_reverse"))

    for key in ("sender_tcp_congestion", "receiver_tcp_congestion"):
        if key in end:
            run["details"][key] = end[key]


def _verdict(run):
    """Invalidate a run that moved 0 bytes in either direction or lasted 0 s."""
    result, metrics = run["result"], run["metrics"]
    for key, sentence in (
            ("received_bytes", "the receiver got 0 bytes (end.%s.bytes); there is no throughput to report"
             % run["received_name"]),
            ("sent_bytes", "the sender sent 0 bytes (end.%s.bytes); there is no throughput to report"
             % run["sent_name"]),
            ("bidir_reverse_received_bytes", "the reverse direction of --bidir received 0 bytes")):
        if metrics.get(key) == 0:
            invalidate(result, sentence)
    if metrics["duration_s"] == 0:
        invalidate(result, "the test lasted 0 s")
