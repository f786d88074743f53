# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for nuttcp 6.x client output (TCP or UDP, transmit ``-t`` or receive ``-r``).

``parse(text, source="<content>", direction=None)`` returns the common parse
result (see ``testbed_parse``).  Two layouts of nuttcp 6.1.2 (Debian's
``nuttcp``) are read:

* the brief summary line (default ``-b``)::

      3755.6843 MB /   2.00 sec = 15727.4356 Mbps 33 %TX 29 %RX 0 retrans 0.08 msRTT
      9.1094 MB /   2.02 sec =   37.7522 Mbps 10 %TX 0 %RX 355 / 1521 drop/pkt 23.34 %loss

  with ``-i N`` preceded by one line per interval (no ``%TX``);
* the ``-fparse`` key=value line(s): ``megabytes= real_seconds= rate_Mbps=
  tx_cpu= rx_cpu= retrans= rtt_ms=`` (UDP: ``drop= pkt= data_loss=``), the
  interval lines with ``real_sec=`` and no CPU.

nuttcp's MB is 2^20 bytes and its Mbps 10^6 bit/s.  ``%TX``/``%RX`` are the
transmitter's and receiver's CPU use of the nuttcp processes.  The output does
not say which way the data went: ``direction`` (transmit or receive, i.e. the
client's ``-t``/``-r``) is recorded in ``details``.  A connection that cannot be
made (``nuttcp-t: ... Error: connect: Connection refused``) and the usage text
are ParseErrors: nothing was measured.  Versions: docs/parsers.md.
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

TOOL = "nuttcp"

BRIEF = re.compile(
    r"^\s*(?P<mib>%s) MB /\s+(?P<s>%s) sec =\s+(?P<mbps>%s) Mbps" % (NUM, NUM, NUM)
    + r"(?: (?P<tx>%s) %%TX (?P<rx>%s) %%RX)?" % (NUM, NUM)
    + r"(?:\s+(?P<retrans>\d+) retrans)?"
    + r"(?: (?P<drop>\d+) / (?P<pkt>\d+) drop/pkt (?P<loss>%s) %%loss)?" % NUM
    + r"(?: (?P<rtt>%s) msRTT)?\s*$" % NUM, re.MULTILINE)
PARSE_LINE = re.compile(r"^\s*megabytes=\S+(?: \w+=\S+)*\s*$", re.MULTILINE)
ERROR = re.compile(r"^nuttcp-[tr]: (?:v[\d.]+: )?Error: (.*)$", re.MULTILINE)
PARSE_KEYS = {  # -fparse key -> (metric, integer)
    "megabytes": ("transferred_mib", False), "real_seconds": ("duration_s", False),
    "tx_cpu": ("tx_cpu_pct", False), "rx_cpu": ("rx_cpu_pct", False), "retrans": ("retransmits", True),
    "rtt_ms": ("rtt_ms", False), "drop": ("drops", True), "pkt": ("packets", True),
    "data_loss": ("loss_pct", False),
}


def _refuse_non_reports(text, source):
    error = ERROR.search(text)
    if error:
        raise ParseError(TOOL, source, "nuttcp stopped with an error, nothing was measured: %s (is a nuttcp server "
                                       "(nuttcp -S) listening on that host and port?)" % error.group(1).strip())
    if re.search(r"^Usage: nuttcp ", text, re.MULTILINE):
        raise ParseError(TOOL, source, "this is nuttcp's usage text (bad option or option order?), not a report")


def _brief(result, text, source):
    """The brief layout: interval lines, then the summary (the line with %TX)."""
    lines = list(BRIEF.finditer(text))
    summaries = [line for line in lines if line.group("tx") is not None]
    if len(summaries) != 1:
        raise ParseError(TOOL, source, "expected one summary line with %%TX/%%RX, found %d (truncated output, several "
                                       "runs in one text, or not nuttcp output?)" % len(summaries))
    line = summaries[0]
    metrics = result["metrics"]

    def number(name, integer=False):
        value = line.group(name)
        return None if value is None else to_number(value, TOOL, source, name, integer=integer)

    metrics.update(transferred_mib=number("mib"), duration_s=number("s"), tx_cpu_pct=number("tx"),
                   rx_cpu_pct=number("rx"), retransmits=number("retrans", True), rtt_ms=number("rtt"),
                   drops=number("drop", True), packets=number("pkt", True), loss_pct=number("loss"))
    metrics["rate_bps"] = number("mbps") * 1e6
    result["details"]["intervals"] = [
        {"mib": float(i.group("mib")), "s": float(i.group("s")), "rate_bps": float(i.group("mbps")) * 1e6}
        for i in lines if i.group("tx") is None]


def _fparse(result, text, source):
    """The -fparse layout: interval lines (real_sec=), then the summary (real_seconds=)."""
    lines = [dict(pair.split("=", 1) for pair in match.group(0).split()) for match in PARSE_LINE.finditer(text)]
    summaries = [line for line in lines if "real_seconds" in line]
    if len(summaries) != 1:
        raise ParseError(TOOL, source, "expected one -fparse summary line with real_seconds=, found %d (truncated "
                                       "output?)" % len(summaries))
    pairs = summaries[0]
    metrics = result["metrics"]
    for key, (name, integer) in PARSE_KEYS.items():
        metrics[name] = to_number(pairs[key], TOOL, source, key, integer=integer) if key in pairs else None
    metrics["rate_bps"] = to_number(pairs.get("rate_Mbps"), TOOL, source, "rate_Mbps") * 1e6
    result["details"]["intervals"] = [
        {"mib": float(line["megabytes"]), "s": float(line["real_sec"]), "rate_bps": float(line["rate_Mbps"]) * 1e6}
        for line in lines if "real_sec" in line]


def _verdict(result):
    metrics = result["metrics"]
    if not metrics["rate_bps"] or not metrics["transferred_mib"]:
        invalidate(result, "nuttcp moved no data (0 MB): the receiver got nothing during the run")
    if metrics["packets"] is not None:
        result["details"]["protocol"] = "udp"
        if metrics["loss_pct"]:
            warn(result, "UDP: %s of %s packets lost (%.2f %%); the rate is what arrived"
                 % (metrics["drops"], metrics["packets"], metrics["loss_pct"]))
    else:
        result["details"]["protocol"] = "tcp"
    for name in ("tx_cpu_pct", "rx_cpu_pct", "rtt_ms"):
        if metrics[name] is None and result["details"]["protocol"] == "tcp":
            warn(result, "%s is null: this nuttcp output does not print it" % name)


def parse(text, source="<content>", direction=None):
    """Parse one nuttcp client run; ``direction``: transmit (-t) or receive (-r), recorded in details."""
    text = require_text(text, TOOL, source)
    _refuse_non_reports(text, source)
    if direction not in (None, "transmit", "receive"):
        raise ParseError(TOOL, source, "direction must be transmit or receive, not %r" % direction)
    result = new_result(TOOL, source)
    result["details"]["direction"] = direction
    if PARSE_LINE.search(text):
        result["details"]["layout"] = "-fparse"
        _fparse(result, text, source)
    elif BRIEF.search(text):
        result["details"]["layout"] = "brief"
        _brief(result, text, source)
    else:
        raise ParseError(TOOL, source, "missing the 'N MB / S sec = R Mbps' summary line (truncated output, or not "
                                       "nuttcp output?)")
    _verdict(result)
    return result
