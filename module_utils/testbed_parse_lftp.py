# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for lftp's transfer log and ``cmd:verbose`` summaries (lftp 4.x).

``parse(text, source="<content>")`` returns the common parse result (see
``testbed_parse``).  lftp run non-interactively prints nothing about a
transfer unless told to.  Two outputs are read (lftp 4.9.2 source):

* the transfer log, sent to stdout with ``set log:enabled/xfer on; set
  log:file/xfer /dev/stdout`` (``FileCopy::LogTransfer``), one line per file::

      [YYYY-MM-DD HH:MM:SS ]SRC -> DST START-END[ RATE]

  ``RATE`` is bytes / transfer time (``Speedometer::GetStrProper``:
  ``%.0f B/s``, ``%.1f KiB/s`` or ``%.2f MiB/s``), the time is not printed;
* with ``set cmd:verbose on``, after each ``get``/``put`` command
  (``CopyJob::FormatBytesTimeRate``)::

      N bytes transferred[ in S seconds (RATE)]

  where S is rounded to whole seconds and omitted below 1 s; older lftp prints
  the compact rate of ``Speedometer::GetStr`` (``55.59M/s``, ``512.3K/s``,
  ``900b/s``; binary multiples, 1024) and lftp 2.x ``%g bytes/s``: read too
  (a ``G/s`` suffix, which no lftp source read prints, is read as 1024**3).
  After an ``mget``/``mput`` of several files: ``Total N files transferred``
  (``CopyJobEnv::SayFinal``; alone when the files were all empty), read into
  ``details.files_total`` and the ``files_transferred`` metric.

The transfer time is ``bytes / rate`` from the log line (3-4 significant
digits), else from the summary's rate.  lftp gives no time to the first byte: its
log timestamps have one-second resolution and it has no such statistic;
``first_byte_s`` is null with a warning (use ``curl -w '%{time_starttransfer}'``
for that).  Direction: ``get`` when the source is a URL and the destination
local, ``put`` the other way.  Versions and variants: docs/parsers.md.
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

TOOL = "lftp"
MIB = 1024.0 * 1024.0
_RATE_UNITS = {"B": 1.0, "KiB": 1024.0, "MiB": MIB}
RATE = r"(?P<rate>%s) (?P<unit>B|KiB|MiB)/s" % NUM
LOG_LINE = re.compile(
    r"^(?:(?P<stamp>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) )?(?P<src>\S.*?) -> (?P<dst>\S.*?) "
    r"(?P<start>%s)-(?P<end>%s)(?: %s)?\s*$" % (INT, INT, RATE), re.MULTILINE)
# The rate in parentheses: "%.2f MiB/s" (Speedometer::GetStrProper, lftp 4.x), the compact
# "%.2fM/s" / "%.1fK/s" / "%.0fb/s" (Speedometer::GetStr, older lftp) or "%g bytes/s" (lftp 2.x).
_COMPACT_UNITS = {"b": 1.0, "K": 1024.0, "M": MIB, "G": MIB * 1024.0}
SUMMARY = re.compile(
    r"^(?P<bytes>%s) bytes? transferred(?: in (?P<seconds>%s) seconds?"
    r"(?: \((?:%s|(?P<crate>%s)(?P<cunit>[bKMG])/s|(?P<grate>[0-9.e+-]+) bytes/s)\))?)?\s*$" % (INT, INT, RATE, NUM),
    re.MULTILINE)
# mget/mput with several files: "Total N files transferred" (CopyJobEnv::SayFinal)
FILES_TOTAL = re.compile(r"^Total (?P<files>%s) files? transferred\s*$" % INT, re.MULTILINE)
ERROR = re.compile(r"^(?P<cmd>[a-z]+): (?P<msg>.*(?:failed|error|Fatal|refused|No such|not connected|"
                   r"Login incorrect|Access denied|exceeded).*)$", re.MULTILINE | re.IGNORECASE)
FAILED_FILES = re.compile(r"^Transfer of (%s) of (%s) files? failed\s*$" % (INT, INT), re.MULTILINE)
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def _remote(path):
    return bool(_URL.match(path)) and not path.lower().startswith("file:")


def _rate_bytes_s(match, source):
    groups = match.groupdict()
    if groups.get("crate") is not None:
        return to_number(groups["crate"], TOOL, source, "rate") * _COMPACT_UNITS[groups["cunit"]]
    if groups.get("grate") is not None:
        return to_number(groups["grate"], TOOL, source, "rate")
    if match.group("rate") is None:
        return None
    return to_number(match.group("rate"), TOOL, source, "rate") * _RATE_UNITS[match.group("unit")]


def parse(text, source="<content>"):
    """Parse lftp's stdout (transfer log and/or cmd:verbose lines); see the module docstring."""
    text = require_text(text, TOOL, source)
    logs = list(LOG_LINE.finditer(text))
    summaries = list(SUMMARY.finditer(text))
    errors = [m.group(0).strip() for m in ERROR.finditer(text)]
    errors += [m.group(0).strip() for m in FAILED_FILES.finditer(text)]
    files_totals = [to_number(m.group("files"), TOOL, source, "files", integer=True) for m in FILES_TOTAL.finditer(text)]
    if not logs and not summaries and not files_totals:
        if errors:
            raise ParseError(TOOL, source, "no transfer; lftp said: %s" % "; ".join(errors))
        if re.search(r"^Usage: lftp ", text, re.MULTILINE):
            raise ParseError(TOOL, source, "this is lftp's usage text (bad option?), not a report")
        raise ParseError(TOOL, source, "no transfer-log line ('SRC -> DST START-END RATE') and no 'N bytes "
                                       "transferred' line: run lftp with 'set log:enabled/xfer on; set log:file/xfer "
                                       "/dev/stdout; set cmd:verbose on' (or not lftp output?)")
    result = new_result(TOOL, source)
    metrics = result["metrics"]
    details = result["details"]
    transfers = []
    for match in logs:
        start = to_number(match.group("start"), TOOL, source, "range start", integer=True)
        end = to_number(match.group("end"), TOOL, source, "range end", integer=True)
        src, dst = match.group("src"), match.group("dst")
        if _remote(src) and not _remote(dst):
            direction = "get"
        elif _remote(dst) and not _remote(src):
            direction = "put"
        else:
            direction = "copy"
        rate = _rate_bytes_s(match, source)
        size = end - start
        transfers.append({
            "direction": direction, "src": src, "dst": dst, "start": start, "bytes": size,
            "rate_bytes_per_s": rate, "seconds": (size / rate) if rate else None,
            "logged_at": match.group("stamp")})
        if start:
            warn(result, "%s -> %s resumed at byte %d: only %d bytes were transferred" % (src, dst, start, size))
    details["summaries"] = []
    for match in summaries:
        details["summaries"].append({
            "bytes": to_number(match.group("bytes"), TOOL, source, "bytes", integer=True),
            "seconds_rounded": (to_number(match.group("seconds"), TOOL, source, "seconds", integer=True)
                                if match.group("seconds") else None),
            "rate_bytes_per_s": _rate_bytes_s(match, source)})
    if not transfers:
        # only cmd:verbose lines: no direction, time only when a command took 1 s or more
        warn(result, "no transfer-log line: direction unknown and no time below 1 s (set log:enabled/xfer on; "
                     "set log:file/xfer /dev/stdout)")
        for entry in details["summaries"]:
            rate = entry["rate_bytes_per_s"]
            transfers.append({"direction": None, "src": None, "dst": None, "start": 0, "bytes": entry["bytes"],
                              "rate_bytes_per_s": rate,
                              "seconds": entry["bytes"] / rate if rate else None, "logged_at": None})
    details["transfers"] = transfers
    # An mget/mput says how many files it moved; a get/put of one file says nothing (one log or summary line each).
    details["files_total"] = sum(files_totals) if files_totals else None

    directions = sorted(set(t["direction"] for t in transfers if t["direction"]))
    metrics["direction"] = directions[0] if len(directions) == 1 else ("mixed" if directions else None)
    metrics["transfers"] = len(transfers)
    metrics["files_transferred"] = (details["files_total"] if files_totals
                                    else len(logs) if logs else len(summaries))
    total_bytes = sum(t["bytes"] for t in transfers)
    metrics["transferred_bytes"] = total_bytes
    timed = [t for t in transfers if t["seconds"] is not None]
    metrics["transfer_s"] = sum(t["seconds"] for t in timed) if timed and len(timed) == len(transfers) else None
    metrics["rate_mib_s"] = (total_bytes / metrics["transfer_s"] / MIB) if metrics["transfer_s"] else None
    for direction in ("get", "put"):
        chosen = [t for t in transfers if t["direction"] == direction]
        seconds = sum(t["seconds"] for t in chosen) if chosen and all(t["seconds"] for t in chosen) else None
        metrics["%s_bytes" % direction] = sum(t["bytes"] for t in chosen) if chosen else None
        metrics["%s_transfer_s" % direction] = seconds
        metrics["%s_rate_mib_s" % direction] = (metrics["%s_bytes" % direction] / seconds / MIB) if seconds else None
    metrics["first_byte_s"] = None
    warn(result, "first_byte_s is null: lftp prints no time to the first byte (its log timestamps have 1 s "
                 "resolution); measure it with curl -w '%{time_starttransfer}'")

    if errors:
        invalidate(result, "lftp reported: %s" % "; ".join(errors))
    if not transfers:
        invalidate(result, "only 'Total %d files transferred' and no 'N bytes transferred' line: lftp prints "
                           "that when the files held no byte (empty files), so there is no rate to measure"
                   % details["files_total"])
    elif metrics["transfer_s"] is None:
        invalidate(result, "no transfer time: a transfer without rate in the log (below 1 B/s) or only "
                           "'N bytes transferred' lines of transfers shorter than 1 s")
    if total_bytes == 0:
        invalidate(result, "no byte was transferred")
    return result
