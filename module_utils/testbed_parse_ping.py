# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for the summary of ``ping`` (iputils; BusyBox/BSD ``round-trip`` form too).

``parse(text, source="<content>", stderr=None)`` returns the common parse
result (see ``testbed_parse``); ``stderr`` (optional) is ping's stderr, used to
name the hard error when stdout holds no summary.  Layout: iputils ``ping/ping_common.c`` ``finish()``::

    N packets transmitted, N received[, +N duplicates][, +N corrupted][, +N errors], X% packet loss, time Nms
    rtt min/avg/max/mdev = a/b/c/d ms[, pipe N][, ipg/ewma x/y ms]

BusyBox prints ``N packets received`` and ``round-trip min/avg/max = a/b/c ms``
(no mdev, no time); GNU inetutils and BSD/macOS ``round-trip min/avg/max/stddev``
(no time).  A value that flavour does not print is null with a warning naming it
(``details.flavour``).  Versions and variants: docs/parsers.md.

* With no rtt line (no reply, or no timestamps) iputils prints ``pipe N`` and
  ``ipg/ewma`` on a line of their own (old iputils: ``, pipe N``); they are read
  from there too.

* ``duplicates``, ``corrupted`` and ``errors`` are printed only when non-zero,
  so their absence means 0.
* No rtt line (100 % loss, or ``-s`` below 16 bytes which carries no
  timestamp): ``rtt_*`` are None and the result is ``valid: false``.
* ``ipg_ms``/``ewma_ms`` exist only with ``-A``/flood (``-f``) or other
  adaptive modes; ``time_ms`` is None for pings that do not print it.
* No ``packets transmitted`` line (hard errors such as ``ping: connect:
  Network is unreachable``, usage text) is a ParseError naming ping's message.
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

TOOL = "ping"

SUMMARY = r"^(?P<transmitted>%s) packets transmitted, (?P<rest>.*?)\s*$" % INT
RTT = (r"^(?:rtt|round-trip) min/avg/max(?:/(?P<spread_name>mdev|stddev))? = "
       r"(?P<rtt_min_ms>%s)/(?P<rtt_avg_ms>%s)/(?P<rtt_max_ms>%s)(?:/(?P<rtt_mdev_ms>%s))? ms"
       r"(?P<suffix>.*?)\s*$" % (NUM, NUM, NUM, NUM))
SEGMENTS = (
    ("received", r"^(%s) (?:packets )?received$" % INT, True),
    ("duplicates", r"^\+?(%s) duplicates$" % INT, True),
    ("corrupted", r"^\+?(%s) corrupted$" % INT, True),
    ("errors", r"^\+?(%s) errors$" % INT, True),
    ("packet_loss_pct", r"^(%s)%% packet loss$" % NUM, False),
    ("time_ms", r"^time (%s) ?ms$" % NUM, False),
)


def _hard_error(text):
    lines = [line.strip() for line in re.findall(r"^ping6?: .*$", text, re.MULTILINE)]
    return "; ".join(lines)


def parse(text, source="<content>", stderr=None):
    """Parse one ping summary; see the module docstring."""
    if stderr is not None and not isinstance(stderr, str):
        raise ParseError(TOOL, source, "option stderr must be text, not %s" % type(stderr).__name__)
    if isinstance(text, str) and not text.strip():
        message = _hard_error(stderr or "")
        if message:
            raise ParseError(TOOL, source, "output is empty; ping said: %s" % message)
        raise ParseError(TOOL, source, "output is empty (ping printed nothing: a hard error such as 'connect: "
                                       "Network is unreachable' or a bad option goes to stderr, exit 2)")
    text = require_text(text, TOOL, source)
    summaries = list(re.finditer(SUMMARY, text, re.MULTILINE))
    if not summaries:
        message = _hard_error(text + "\n" + (stderr or ""))
        if message:
            raise ParseError(TOOL, source, "no 'packets transmitted' summary; ping said: %s" % message)
        if re.search(r'^\{.*"transmitted": ', text, re.MULTILINE):
            raise ParseError(TOOL, source, "this is iputils ping -j (JSON) output, which is not supported; run ping "
                                           "without -j (plain text summary)")
        if re.search(r"^Usage\s*$|^usage: ping", text, re.MULTILINE):
            raise ParseError(TOOL, source, "this is ping's usage text (bad option?), not a report")
        if re.search(r"^PING ", text, re.MULTILINE):
            raise ParseError(TOOL, source, "no 'packets transmitted' summary after the PING header: ping was killed "
                                           "or the output is truncated")
        raise ParseError(TOOL, source, "missing the 'packets transmitted' summary line: not ping output "
                                       "(another tool's output?)")
    if len(summaries) > 1:
        raise ParseError(TOOL, source, "holds %d ping summaries; give one run per parse" % len(summaries))

    result = new_result(TOOL, source)
    metrics = result["metrics"]
    details = result["details"]
    summary = summaries[0]
    metrics["transmitted"] = to_number(summary.group("transmitted"), TOOL, source, "transmitted", integer=True)
    found = {}
    for segment in summary.group("rest").split(", "):
        segment = segment.strip()
        for name, pattern, integer in SEGMENTS:
            match = re.match(pattern, segment)
            if match:
                found[name] = to_number(match.group(1), TOOL, source, name, integer=integer)
                break
        else:
            details.setdefault("unparsed_summary_parts", []).append(segment)
    for required in ("received", "packet_loss_pct"):
        if required not in found:
            raise ParseError(TOOL, source, "the 'packets transmitted' line has no '%s' part: damaged summary (%r)"
                             % (required.replace("_pct", "").replace("_", " "), summary.group(0)))
    metrics["received"] = found["received"]
    for name in ("duplicates", "corrupted", "errors"):
        metrics[name] = found.get(name, 0)
    metrics["packet_loss_pct"] = found["packet_loss_pct"]
    metrics["time_ms"] = found.get("time_ms")

    after = text[summary.end():]
    rtt = re.search(RTT, after, re.MULTILINE)
    for name in ("rtt_min_ms", "rtt_avg_ms", "rtt_max_ms", "rtt_mdev_ms"):
        value = rtt.group(name) if rtt else None
        metrics[name] = None if value is None else to_number(value, TOOL, source, name)
    metrics["ipg_ms"] = metrics["ewma_ms"] = None
    metrics["pipe"] = None
    suffix = ""
    if rtt:
        details["rtt_spread"] = rtt.group("spread_name")
        suffix = rtt.group("suffix")
    else:
        # Without an rtt line (no reply, or no timestamps) iputils prints "pipe N" and
        # "ipg/ewma" on a line of their own right after the summary; iputils before
        # commit 964d077 (2010, first in s20100214) started that line with ", ".
        lines = after.split("\n")
        own_line = lines[1].strip() if len(lines) > 1 else ""
        if re.match(r"^(?:,\s*)?(?:pipe %s|ipg/ewma )" % INT, own_line):
            suffix = own_line
    ipg = re.search(r"ipg/ewma (%s)/(%s) ms" % (NUM, NUM), suffix)
    if ipg:
        metrics["ipg_ms"] = to_number(ipg.group(1), TOOL, source, "ipg_ms")
        metrics["ewma_ms"] = to_number(ipg.group(2), TOOL, source, "ewma_ms")
    pipe = re.search(r"(?:^|,\s*)pipe (%s)" % INT, suffix)
    if pipe:
        metrics["pipe"] = to_number(pipe.group(1), TOOL, source, "pipe", integer=True)

    # Which ping printed this: iputils says "N received", BusyBox, GNU inetutils and
    # the BSDs "N packets received"; BusyBox has no spread after min/avg/max.
    iputils = re.search(r", \d+ received(?:,|$)", summary.group(0)) is not None
    if iputils:
        flavour = "iputils"
    elif rtt and rtt.group("spread_name") is None:
        flavour = "BusyBox"
    elif rtt:
        flavour = "inetutils/BSD"
    else:
        flavour = "BusyBox/inetutils/BSD"
    details["flavour"] = flavour
    if metrics["time_ms"] is None and not iputils:
        warn(result, "time_ms is null: %s ping prints no total time on its summary line" % flavour)
    if rtt and metrics["rtt_mdev_ms"] is None:
        warn(result, "rtt_mdev_ms is null: %s ping prints round-trip min/avg/max without mdev/stddev" % flavour)

    header = re.search(r"^PING (?P<target>\S+) \((?P<address>[^)]+)\)", text, re.MULTILINE)
    details["target"] = header.group("target") if header else None
    details["address"] = header.group("address") if header else None

    _verdict(result, text)
    return result


def _verdict(result, text):
    m = result["metrics"]
    target = result["details"]["address"] or "the target"
    if m["received"] == 0:
        invalidate(result, "100 %% packet loss: %d packets sent to %s, none answered%s" % (
            m["transmitted"], target, " (%s)" % _hard_error(text) if _hard_error(text) else ""))
    elif m["rtt_avg_ms"] is None:
        invalidate(result, "no rtt line although %d replies arrived: the packets carried no timestamp (ping -s "
                           "below 16 bytes), so there is no round-trip time" % m["received"])
    elif m["packet_loss_pct"] > 0:
        warn(result, "%s %% packet loss (%d of %d replies)" % (m["packet_loss_pct"], m["received"], m["transmitted"]))
    if m["transmitted"] == 0:
        invalidate(result, "no packet was transmitted")
    if m["duplicates"]:
        warn(result, "%d duplicate replies" % m["duplicates"])
    if m["corrupted"]:
        warn(result, "%d corrupted replies" % m["corrupted"])
    if m["errors"]:
        warn(result, "%d ICMP errors were received" % m["errors"])
