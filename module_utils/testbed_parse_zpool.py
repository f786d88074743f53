# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``zpool status -p [-P] POOL`` of OpenZFS 2.1 (``LC_ALL=C``).

Layout read in OpenZFS ``cmd/zpool/zpool_main.c`` at tag zfs-2.1.11 (``status_callback``,
``print_status_config``, ``print_scan_status``, ``print_scan_scrub_resilver_status``,
``print_rebuild_status_impl``, ``print_removal_status``, ``print_checkpoint_status``)::

      pool: tank
     state: DEGRADED
    status: One or more devices is currently being resilvered.  The pool will
            continue to function, possibly in a degraded state.
    action: Wait for the resilver to complete.
      scan: resilver in progress since Mon Nov 23 18:50:01 2026
            512M scanned at 128M/s, 256M issued at 64M/s, 512M total
            255M resilvered, 50.00% done, 00:00:04 to go
    config:

            NAME            STATE     READ WRITE CKSUM
            tank            DEGRADED     0     0     0
              mirror-0      DEGRADED     0     0     0
                vdb         ONLINE       0     0     0
                replacing-1 DEGRADED     0     0     0
                  old       OFFLINE      0     0     0
                  vdc       ONLINE       0     0     0  (resilvering)

    errors: No known data errors

* ``-p`` only makes the READ/WRITE/CKSUM counters exact; the scan lines are always
  ``zfs_nicebytes`` (1024-based, ``B K M G T P E``, at most 5 characters: ``1.50G``),
  so their byte counts are approximate (three significant digits) and the percentage
  (``%.2f``, issued / total) is the precise progress figure.  Without ``-p`` the counters
  are ``zfs_nicenum`` (``1.2K``) too: parsed, with a warning.
* Scan forms: ``none requested``; ``scrub|resilver in progress since DATE``;
  ``scrub paused since DATE`` + ``scrub started on DATE``; ``scrub repaired X in
  HH:MM:SS with N errors on DATE``; ``resilvered X in ...``; ``scrub|resilver canceled on
  DATE``; the sequential rebuild (``zpool replace -s``): ``resilver (mirror-0) in progress
  since``, ``resilvered (mirror-0) X in ...``, ``resilver (mirror-0) canceled on``.  The
  in-progress lines: ``X scanned at R/s, Y issued at R/s, Z total`` (paused scrub: ``X
  scanned, Y issued, Z total``; rebuild: ``issued R/s`` without "at"), then ``W
  resilvered|repaired, P% done`` + ``, HH:MM:SS to go`` / ``, no estimated completion
  time``.  Durations may be ``N days HH:MM:SS``.  Dates are ``ctime()`` text in the
  node's local time zone, kept as text and as a naive ISO timestamp.
* The pre-OpenZFS label ``scrub:`` with ``none requested`` and ``resilver|scrub completed
  after 0h0m with 0 errors on DATE`` (captured from zfs-fuse 0.7.0, which has no ``-p``) is
  read too, and so are its ``stopped after`` (canceled) and one-line ``resilver in progress for
  0h5m, 12.50% done, 0h35m to go`` forms (OpenSolaris before build 147; bytes and rates null, warned).
* ZFS on Linux 0.6/0.7 and illumos before sequential scrub (the storage study ran ZoL 0.7.8, which has
  no ``-p``): ``X scanned out of Y at R/s, HhMm to go`` (or ``, (scan is slow, no estimated time)``;
  a paused 0.7 scrub prints ``X scanned out of Y`` alone after ``scrub started on   DATE``), then
  ``W resilvered|repaired, P% done``; finished ``... in HhMm with N errors on DATE``.  Sizes are
  unit-less below 1 KiB in 0.6 and illumos (``0``), ``0B`` in 0.7.  Same fields as above; the issued
  bytes and issue rate are null with a warning.  illumos since sequential scrub prints the 0.8 lines
  with unit-less sizes (``scrub repaired 0 in 0 days 00:17:47``): read.  A decimal comma (a non-C
  locale: ``23,5G``) is a ParseError naming the locale.
* ``whole`` (details) is true when the pool and every vdev are ONLINE (spares AVAIL or
  INUSE), no resilver or rebuild is running, no vdev is an interim ``replacing-N`` /
  ``spare-N`` and there are no known data errors: full redundancy is back.
  ``metrics.progress_fraction`` (0..1) is the rebuild progress: the running resilver's or
  rebuild's percentage / 100, 1.0 when whole, 0.0 when not whole and nothing is
  resilvering (a disk offline, waiting for a replacement).
* OpenZFS 2.2 and later print ``X / T scanned at R/s, Y / T' issued at R/s`` (T' the bytes to
  issue, skipped ones excluded: ``issue_total_bytes``) and may add ``expand:``: read too
  (source: zpool_main.c at zfs-2.2.0 and zfs-2.3.0; not captured).
* Output that is not a pool status (``cannot open 'x': no such pool``, ``no pools
  available``, usage text, text cut before ``config:`` or in the middle of the vdev
  tree) is a ParseError.  A pool whose configuration cannot be determined parses with
  ``valid`` false.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from datetime import datetime

from ansible.module_utils.testbed_parse import (
    ParseError,
    invalidate,
    new_result,
    require_text,
    to_number,
    warn,
)

TOOL = "zpool"

_UNITS = "BKMGTPE"
NICE = r"\d+(?:\.\d+)?[BKMGTPE]"
# zfs_nicenum of ZFS on Linux 0.6 and illumos: no unit below 1024 ("0", "1"); ZoL 0.7 prints "0B" (zfs_nicebytes)
NICE_OLD = r"\d+(?:\.\d+)?[BKMGTPE]?"
_NICE_RE = re.compile(r"^(\d+(?:\.\d+)?)([BKMGTPE]?)$")
_DATE = r"(?P<date>\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4})"
_DURATION = r"(?:(?P<days>\d+) days )?(?P<h>\d+):(?P<m>\d\d):(?P<s>\d\d)"
# Sections of the report: a label at the start of a line (maybe indented), the text after it,
# continuation lines start with a tab (or spaces when tabs were expanded).
# "scrub:" is the label of the scan line before pool version 23 (zfs-fuse 0.7.0 still prints it).
SECTIONS = ("pool", "state", "status", "action", "see", "scan", "scrub", "remove", "expand", "checkpoint", "config",
            "errors")
_SECTION_RE = re.compile(r"^ {0,4}(%s): ?(.*)$" % "|".join(SECTIONS))
# Vdev states (zpool_state_to_name) plus the spare states of print_status_config.
VDEV_STATES = frozenset(("ONLINE", "DEGRADED", "FAULTED", "OFFLINE", "REMOVED", "UNAVAIL", "SPLIT",
                         "AVAIL", "INUSE", "UNKNOWN"))
POOL_STATES = frozenset(("ONLINE", "DEGRADED", "FAULTED", "OFFLINE", "REMOVED", "UNAVAIL", "SUSPENDED",
                         "UNKNOWN"))
CLASSES = frozenset(("logs", "cache", "spares", "dedup", "special"))

_SCAN_FORMS = (
    # (regex on the first scan line, function, state)
    (r"^none requested$", None, "none"),
    (r"^(?P<func>scrub|resilver) in progress since %s$" % _DATE, "", "in_progress"),
    (r"^scrub paused since %s$" % _DATE, "scrub", "paused"),
    (r"^scrub repaired (?P<processed>%s) in %s with (?P<errors>\d+) errors on %s$" % (NICE_OLD, _DURATION, _DATE),
     "scrub", "finished"),
    (r"^resilvered (?P<processed>%s) in %s with (?P<errors>\d+) errors on %s$" % (NICE_OLD, _DURATION, _DATE),
     "resilver", "finished"),
    (r"^(?P<func>scrub|resilver) canceled on %s$" % _DATE, "", "canceled"),
    (r"^resilver \((?P<vdev>[^)]+)\) in progress since %s$" % _DATE, "rebuild", "in_progress"),
    (r"^resilvered \((?P<vdev>[^)]+)\) (?P<processed>%s) in %s with (?P<errors>\d+) errors on %s$"
     % (NICE, _DURATION, _DATE), "rebuild", "finished"),
    (r"^resilver \((?P<vdev>[^)]+)\) canceled on %s$" % _DATE, "rebuild", "canceled"),
    # ZFS on Linux 0.6/0.7 and illumos (before sequential scrub): finished in "XhYm", a zero size printed as "0"
    (r"^scrub repaired (?P<processed>%s) in (?P<oh>\d+)h(?P<om>\d+)m with (?P<errors>\d+) errors on %s$"
     % (NICE_OLD, _DATE), "scrub", "finished"),
    (r"^resilvered (?P<processed>%s) in (?P<oh>\d+)h(?P<om>\d+)m with (?P<errors>\d+) errors on %s$"
     % (NICE_OLD, _DATE), "resilver", "finished"),
    # the pre-OpenZFS form (label "scrub:"; captured from zfs-fuse 0.7.0): minutes only
    (r"^(?P<func>scrub|resilver) completed after (?P<oh>\d+)h(?P<om>\d+)m with (?P<errors>\d+) errors on %s$" % _DATE,
     "", "finished"),
    # its other forms (OpenSolaris before build 147, zfs-fuse; print_scrub_status): a stopped scan, and one line
    # for a running one with the elapsed time, the share done and the time to go
    (r"^(?P<func>scrub|resilver) stopped after (?P<oh>\d+)h(?P<om>\d+)m with (?P<errors>\d+) errors on %s$" % _DATE,
     "", "canceled"),
    (r"^(?P<func>scrub|resilver) in progress for (?P<eh>\d+)h(?P<em>\d+)m, (?P<pct>\d+(?:\.\d+)?)% done, "
     r"(?P<th>\d+)h(?P<tm>\d+)m to go$", "", "in_progress"),
)
_SCAN_RATES = re.compile(
    r"^(?P<scanned>%s) scanned(?: at (?P<scan_rate>%s)/s)?, (?P<issued>%s) issued(?: (?:at )?(?P<issue_rate>%s)/s)?, "
    r"(?P<total>%s) total$" % (NICE, NICE, NICE, NICE, NICE))
# OpenZFS 2.2 and later: "X / T scanned at R/s, Y / T' issued at R/s" (T' = T less the skipped bytes)
_SCAN_RATES_22 = re.compile(
    r"^(?P<scanned>%s) / (?P<total>%s) scanned(?: at (?P<scan_rate>%s)/s)?, (?P<issued>%s) / (?P<issue_total>%s) issued"
    r"(?: at (?P<issue_rate>%s)/s)?$" % (NICE, NICE, NICE, NICE, NICE, NICE))
_SCAN_DONE = re.compile(
    r"^(?P<processed>%s) (?P<what>resilvered|repaired), (?P<pct>\d+(?:\.\d+)?|nan|-?inf)%% done"
    r"(?:, (?:(?P<to_go>%s) to go|(?P<no_eta>no estimated completion time)))?$" % (NICE, _DURATION))
# ZFS on Linux 0.6/0.7 and illumos (print_scan_status before sequential scrub, zfs 0.8):
# "X scanned out of Y at R/s, HhMm to go" or ", (scan is slow, no estimated time)"; the time to go is here.
# A paused scrub of ZoL 0.7 prints "X scanned out of Y" alone (no rate, no time to go).
_SCAN_RATES_07 = re.compile(
    r"^(?P<scanned>%s) scanned out of (?P<total>%s)(?: at (?P<scan_rate>%s)/s, "
    r"(?:(?P<th>\d+)h(?P<tm>\d+)m to go|(?P<no_eta>\(scan is slow, no estimated time\))))?$"
    % (NICE_OLD, NICE_OLD, NICE_OLD))
_SCAN_DONE_07 = re.compile(r"^(?P<processed>%s) (?P<what>resilvered|repaired), (?P<pct>\d+(?:\.\d+)?)%% done$" % NICE_OLD)
# "scrub started on DATE" (OpenZFS 2.x), "scrub started on   DATE" (ZoL 0.7)
_SCAN_STARTED = re.compile(r"^scrub started on +%s$" % _DATE)
# a decimal comma (zpool run in a locale such as de_DE: "23,5G scanned", "100,09% done")
_DECIMAL_COMMA = re.compile(r"\d,\d+(?:[BKMGTPE%]|\b)")
_ERRORS_COUNT = re.compile(r"^(\d+) data errors, use '-v' for a list$")


def nice_bytes(text, source="<content>", field="size"):
    """Bytes of a ``zfs_nicebytes`` / ``zfs_nicenum`` token (``1.50G``, ``512B``, ``0``): 1024-based."""
    match = _NICE_RE.match(text.strip())
    if match is None:
        raise ParseError(TOOL, source, "%s is %r, not a zfs size (like 1.50G)" % (field, text))
    value = float(match.group(1)) * 1024 ** _UNITS.index(match.group(2) or "B")
    return int(round(value))


def _date(match):
    text = re.sub(r" +", " ", match.group("date"))
    try:
        return text, datetime.strptime(text, "%a %b %d %H:%M:%S %Y").isoformat()
    except ValueError:
        return text, None


def _seconds(match, prefix=""):
    days = match.group(prefix + "days") if prefix + "days" in match.groupdict() else None
    return (int(days or 0) * 86400 + int(match.group(prefix + "h")) * 3600 + int(match.group(prefix + "m")) * 60
            + int(match.group(prefix + "s")))


def _sections(text, source):
    """Split the report into {label: [first line text, continuation lines...]} keeping order."""
    sections = []
    current = None
    for line in text.splitlines():
        if not line.strip():
            if current is not None and current[0] not in ("config", "errors"):
                current = None
            elif current is not None:
                current[1].append("")
            continue
        match = _SECTION_RE.match(line)
        if match:
            current = (match.group(1), [match.group(2).rstrip()])
            sections.append(current)
        elif current is not None:
            current[1].append(line.rstrip("\r\n"))
        else:
            raise ParseError(TOOL, source, "unexpected line %r outside any section (not zpool status output?)"
                             % line[:120])
    return sections


def _parse_scan(lines, source):
    first = lines[0].strip()
    for line in lines:
        if _DECIMAL_COMMA.search(line):
            raise ParseError(TOOL, source, "scan line %r has a decimal comma (zpool ran in a non-C locale): run "
                                           "zpool status with LC_ALL=C" % line.strip()[:160])
    scan = {"function": None, "state": None, "vdev": None, "started": None, "started_iso": None,
            "ended": None, "ended_iso": None, "duration_s": None, "errors": None,
            "scanned_bytes": None, "issued_bytes": None, "total_bytes": None, "processed_bytes": None,
            "issue_total_bytes": None, "scan_rate_bytes_per_s": None, "issue_rate_bytes_per_s": None,
            "percent_done": None,
            "to_go_s": None, "text": "\n".join(line.strip() for line in lines)}
    for pattern, function, state in _SCAN_FORMS:
        match = re.match(pattern, first)
        if match is None:
            continue
        groups = match.groupdict()
        scan["function"] = function or groups.get("func")
        scan["state"] = state
        scan["vdev"] = groups.get("vdev")
        if groups.get("date"):
            key = "started" if state in ("in_progress", "paused") else "ended"
            scan[key], scan[key + "_iso"] = _date(match)
        if groups.get("processed"):
            scan["processed_bytes"] = nice_bytes(groups["processed"], source, "scan bytes repaired/resilvered")
        if groups.get("errors") is not None:
            scan["errors"] = int(groups["errors"])
        if groups.get("h") is not None:
            scan["duration_s"] = _seconds(match)
        elif groups.get("oh") is not None:
            scan["duration_s"] = int(groups["oh"]) * 3600 + int(groups["om"]) * 60
        if groups.get("pct") is not None:  # OpenSolaris' one-line running scan: no scanned/issued lines follow
            scan["percent_done"] = to_number(groups["pct"], TOOL, source, "scan percent done")
            scan["to_go_s"] = int(groups["th"]) * 3600 + int(groups["tm"]) * 60
            return scan
        break
    else:
        raise ParseError(TOOL, source, "scan line %r is none of the known forms (OpenZFS 0.8-2.3, ZFS on Linux 0.6/0.7, "
                                       "illumos, OpenSolaris/zfs-fuse)" % first[:160])
    if scan["state"] == "finished":
        scan["percent_done"] = 100.0
    if scan["state"] not in ("in_progress", "paused"):
        return scan

    rest = [line.strip() for line in lines[1:] if line.strip()]
    if scan["state"] == "paused":
        if not rest or not _SCAN_STARTED.match(rest[0]):
            raise ParseError(TOOL, source, "paused scrub without its 'scrub started on' line (truncated?)")
        scan["started"], scan["started_iso"] = _date(_SCAN_STARTED.match(rest.pop(0)))
    if len(rest) < 2:
        raise ParseError(TOOL, source, "%s in progress without its scanned/issued and %% done lines (truncated?)"
                         % scan["function"])
    old = _SCAN_RATES_07.match(rest[0])
    rates = old or _SCAN_RATES.match(rest[0]) or _SCAN_RATES_22.match(rest[0])
    if rates is None:
        raise ParseError(TOOL, source, "scan progress line %r is not 'X scanned at R/s, Y issued at R/s, Z total' "
                         "(nor ZFS on Linux 0.7's 'X scanned out of Y at R/s, HhMm to go')" % rest[0][:160])
    for key in ("scanned", "issued", "total"):
        if key in rates.groupdict():
            scan[key + "_bytes"] = nice_bytes(rates.group(key), source, "scan " + key)
    if "issue_total" in rates.groupdict():
        scan["issue_total_bytes"] = nice_bytes(rates.group("issue_total"), source, "scan issue total")
    for key, field in (("scan_rate", "scan_rate_bytes_per_s"), ("issue_rate", "issue_rate_bytes_per_s")):
        if rates.groupdict().get(key):
            scan[field] = nice_bytes(rates.group(key), source, "scan " + key)
    if old is not None and old.group("th") is not None:
        scan["to_go_s"] = int(old.group("th")) * 3600 + int(old.group("tm")) * 60
    if old is not None and scan["state"] == "in_progress" and old.group("scan_rate") is None:
        raise ParseError(TOOL, source, "scan line %r stops before the rate and the time to go (truncated?)"
                         % rest[0][:160])
    done = (_SCAN_DONE_07 if old is not None else _SCAN_DONE).match(rest[1])
    if done is None:
        raise ParseError(TOOL, source, "scan line %r is not 'W resilvered|repaired, P%% done%s' (truncated?)"
                         % (rest[1][:160], "" if old is not None else ", ..."))
    scan["processed_bytes"] = nice_bytes(done.group("processed"), source, "scan bytes %s" % done.group("what"))
    scan["percent_done"] = to_number(done.group("pct"), TOOL, source, "scan percent done")
    if old is None and done.group("h") is not None:
        scan["to_go_s"] = _seconds(done)
    if old is None and scan["state"] == "in_progress" and done.group("to_go") is None and done.group("no_eta") is None:
        raise ParseError(TOOL, source, "scan line %r stops before the time to go (truncated?)" % rest[1][:160])
    return scan


def _counter(token, source, field, exact):
    if re.match(r"^\d+$", token):
        return int(token)
    exact[0] = False
    return nice_bytes(token, source, field)


def _parse_config(lines, source):
    """The vdev tree below the NAME STATE READ WRITE CKSUM header."""
    rows = [line for line in lines if line.strip()]
    if not rows or not re.match(r"^\s*NAME\s+STATE\s+READ\s+WRITE\s+CKSUM(\s+SLOW)?\s*$", rows[0]):
        if rows and "cannot be determined" in rows[0]:
            return None, None
        raise ParseError(TOOL, source, "config section without the NAME STATE READ WRITE CKSUM header")
    slow = rows[0].split()[-1] == "SLOW"
    base = None
    vdevs = []
    parents = []
    vdev_class = "data"
    exact = [True]
    for row in rows[1:]:
        expanded = row.expandtabs(8)
        indent = len(expanded) - len(expanded.lstrip(" "))
        tokens = expanded.split()
        if base is None:
            base = indent
        depth = (indent - base) // 2
        if len(tokens) == 1 and depth == 0 and tokens[0] in CLASSES:
            vdev_class = tokens[0]
            parents = []
            continue
        if len(tokens) < 2 or tokens[1] not in VDEV_STATES:
            raise ParseError(TOOL, source, "vdev line %r has no state (truncated or not zpool status?)" % row[:160])
        name, state = tokens[0], tokens[1]
        vdev = {"name": name, "state": state, "depth": depth, "class": vdev_class, "parent": None,
                "read_errors": None, "write_errors": None, "checksum_errors": None, "slow_ios": None,
                "note": None, "resilvering": False, "leaf": True}
        rest = tokens[2:]
        is_spare = vdev_class == "spares" or state in ("AVAIL", "INUSE")
        if not is_spare:
            ncounters = 4 if slow else 3
            if len(rest) < ncounters or not all(re.match(r"^(?:\d+(?:\.\d+)?[KMGTPE]?|-)$", t)
                                                for t in rest[:ncounters]):
                raise ParseError(TOOL, source, "vdev %s: error counters missing in %r (truncated?)" % (name, row[:160]))
            vdev["read_errors"] = _counter(rest[0], source, "%s READ" % name, exact)
            vdev["write_errors"] = _counter(rest[1], source, "%s WRITE" % name, exact)
            vdev["checksum_errors"] = _counter(rest[2], source, "%s CKSUM" % name, exact)
            if slow:
                vdev["slow_ios"] = None if rest[3] == "-" else _counter(rest[3], source, "%s SLOW" % name, exact)
            rest = rest[ncounters:]
        note = " ".join(rest)
        for flag in ("(resilvering)", "(repairing)", "(awaiting resilver)"):
            if flag in note:
                vdev["resilvering"] = flag == "(resilvering)" or vdev["resilvering"]
        vdev["note"] = note or None
        while parents and parents[-1]["depth"] >= depth:
            parents.pop()
        if parents:
            vdev["parent"] = parents[-1]["name"]
            parents[-1]["leaf"] = False
        elif depth > 0 and vdev_class == "data":
            raise ParseError(TOOL, source, "vdev %s is indented under nothing" % name)
        parents.append(vdev)
        vdevs.append(vdev)
    if not vdevs:
        raise ParseError(TOOL, source, "config section without any vdev (truncated output?)")
    # The pool is the only data vdev at depth 0 and a group vdev (mirror-0, raidz1-0, replacing-1,
    # spare-0...) has members: a tree whose indentation was lost would otherwise be counted silently.
    roots = [v["name"] for v in vdevs if v["depth"] == 0 and v["class"] == "data"]
    groups = [v["name"] for v in vdevs if v["leaf"] and re.match(r"^(mirror|raidz[123]?|draid[123]?[^-]*|replacing|spare)-\d+$",
                                                                 v["name"])]
    if len(roots) != 1 or groups:
        raise ParseError(TOOL, source, "the vdev tree has lost its indentation (%s at the top level%s): pass zpool "
                                       "status's output as it is, tabs and spaces kept"
                         % (", ".join(roots[:4]) or "nothing",
                            "; %s without members" % ", ".join(groups[:4]) if groups else ""))
    return vdevs, exact[0]


def progress_fraction(result):
    """The rebuild progress (0..1) of a parse result: see the module docstring."""
    return result["metrics"]["progress_fraction"]


def parse(text, source="<content>"):
    """Parse ``zpool status -p POOL`` (one pool) into state, vdev tree, scan and ``whole``."""
    text = require_text(text, TOOL, source)
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # ZFS_COLOR / a tty: drop ANSI colours
    sections = _checked_sections(text, source)
    status = _pool_state(sections, source)
    scans = [_parse_scan(lines, source) for lines in _section(sections, "scan") + _section(sections, "scrub")]
    status.update(scans=scans, sections=sections)
    status["vdevs"], status["exact"] = _parse_config(_section(sections, "config")[0], source)
    status["errors_text"] = _joined(sections, "errors")
    status["data_errors"] = _data_errors(sections, status["errors_text"], source)
    status.update(_current_scan(scans))

    result = new_result(TOOL, source)
    _older_layout_warnings(status["scan"], result)
    _not_whole(status, result, source)
    _progress(status, result)
    result["metrics"] = _metrics(status)
    result["details"] = _details(status)
    return result


def _checked_sections(text, source):
    """The ``label: text`` sections of one pool's status, with pool, state, config and errors present."""
    first = text.strip().splitlines()[0]
    if re.match(r"^(cannot open|no pools available|no such pool|usage:|missing pool|invalid option)", first, re.IGNORECASE):
        raise ParseError(TOOL, source, "zpool printed no pool status: %s" % first[:200])
    sections = _sections(text, source)
    names = [name for name, _lines in sections]
    if names.count("pool") != 1:
        raise ParseError(TOOL, source, "%s 'pool:' lines, expected one (run zpool status for one pool)"
                         % (names.count("pool") or "no"))
    for required in ("state", "config"):
        if required not in names:
            raise ParseError(TOOL, source, "missing '%s:' (truncated output, or not zpool status?)" % required)
    if "errors" not in names:
        raise ParseError(TOOL, source, "missing the final 'errors:' line (truncated output?)")
    return sections


def _section(sections, name):
    """The line lists of every section called ``name``."""
    return [lines for label, lines in sections if label == name]


def _joined(sections, name):
    """The first section called ``name`` as one line with single spaces (None when absent)."""
    found = _section(sections, name)
    return " ".join(" ".join(line.strip() for line in found[0]).split()) if found else None


def _pool_state(sections, source):
    """``{"pool", "state"}``; the state must be a ZFS pool state."""
    pool = _section(sections, "pool")[0][0].strip()
    state = _section(sections, "state")[0][0].strip()
    if state not in POOL_STATES:
        raise ParseError(TOOL, source, "pool state %r is not a ZFS pool state" % state)
    return {"pool": pool, "state": state}


def _data_errors(sections, errors_text, source):
    """The number of known data errors of the ``errors:`` section (None: some, count not printed)."""
    if errors_text == "No known data errors":
        return 0
    if _ERRORS_COUNT.match(errors_text):
        return int(_ERRORS_COUNT.match(errors_text).group(1))
    if errors_text.startswith("Permanent errors have been detected"):
        return len([line for line in _section(sections, "errors")[0][1:] if line.strip()]) or None
    raise ParseError(TOOL, source, "'errors:' line %r is none of the known forms" % errors_text[:160])


def _current_scan(scans):
    """``{"running", "scan"}``: the rebuilds in progress, and the scan the metrics describe.

    That scan is the rebuild (resilver or sequential rebuild) in progress if any, else the
    latest rebuild, else the first scan (scrub or none).
    """
    running = [s for s in scans if s["state"] in ("in_progress", "paused") and s["function"] in ("resilver", "rebuild")]
    rebuilds = [s for s in scans if s["function"] in ("resilver", "rebuild")]
    scan = running[0] if running else (rebuilds[0] if rebuilds else (scans[0] if scans else None))
    return {"running": running, "scan": scan}


def _older_layout_warnings(scan, result):
    """Warn of the scan figures an older zpool does not print (they stay null)."""
    if scan is None or scan["state"] not in ("in_progress", "paused"):
        return
    if "scanned out of" in scan["text"]:
        warn(result, "scan issued bytes and issue rate are null: ZFS on Linux 0.6/0.7 and illumos before sequential "
                     "scrub print 'X scanned out of Y' only (time to go in whole minutes)")
    elif scan["scanned_bytes"] is None and scan["percent_done"] is not None:
        warn(result, "scan bytes and rates are null: OpenSolaris before build 147 (zfs-fuse) prints "
                     "'in progress for HhMm, P% done, HhMm to go' only")


def _not_whole(status, result, source):
    """Why the pool is not whole (``status["reasons"]``, ``status["whole"]``); warns of vdev errors."""
    pool, state, vdevs, running = status["pool"], status["state"], status["vdevs"], status["running"]
    reasons = []
    if vdevs is None:
        invalidate(result, "zpool could not determine the pool configuration")
        reasons.append("the configuration cannot be determined")
    else:
        if not status["exact"]:
            warn(result, "error counters are rounded (zpool status without -p)")
        if pool not in [v["name"] for v in vdevs if v["depth"] == 0 and v["class"] == "data"]:
            raise ParseError(TOOL, source, "the vdev tree has no root named %s" % pool)
        for vdev in vdevs:
            counts = [vdev[key] or 0 for key in ("read_errors", "write_errors", "checksum_errors")]
            if vdev["leaf"] and any(counts):
                warn(result, "vdev %s has READ %d WRITE %d CKSUM %d errors" % tuple([vdev["name"]] + counts))
            if vdev["state"] not in ("ONLINE", "AVAIL", "INUSE"):
                reasons.append("vdev %s is %s" % (vdev["name"], vdev["state"]))
            elif re.match(r"^(replacing|spare)-\d+$", vdev["name"]):
                reasons.append("vdev %s (interim) is still there" % vdev["name"])
    if state != "ONLINE":
        reasons.insert(0, "pool %s is %s" % (pool, state))
    if running:
        reasons.append("%s in progress (%.2f%% done)" % (running[0]["function"], running[0]["percent_done"]))
    if status["data_errors"]:
        reasons.append("%s known data errors" % status["data_errors"])
    status["reasons"] = reasons
    status["whole"] = not reasons


def _progress(status, result):
    """``status["progress"]``: the running rebuild's share done, else 1 when whole and 0 when not."""
    running = status["running"]
    if running:
        percent = running[0]["percent_done"]
        if percent > 100.0:
            warn(result, "%s reports %.2f%% done (more issued than its total estimate)"
                 % (status["scan"]["function"], percent))
        status["progress"] = max(0.0, min(1.0, percent / 100.0))
    else:
        status["progress"] = 1.0 if status["whole"] else 0.0


def _metrics(status):
    """Progress, vdev and error counts, and the figures of the scan."""
    vdevs, scan = status["vdevs"], status["scan"]
    leaves = [v for v in vdevs or [] if v["leaf"] and v["class"] not in ("spares",)]
    counted = [v for v in leaves if v["read_errors"] is not None]
    return {
        "progress_fraction": status["progress"],
        "vdevs": len(vdevs or []),
        "leaf_vdevs": len(leaves),
        "leaf_vdevs_online": len([v for v in leaves if v["state"] == "ONLINE"]),
        "read_errors": sum(v["read_errors"] for v in counted) if vdevs else None,
        "write_errors": sum(v["write_errors"] for v in counted) if vdevs else None,
        "checksum_errors": sum(v["checksum_errors"] for v in counted) if vdevs else None,
        "data_errors": status["data_errors"],
        "scan_percent_done": scan["percent_done"] if scan else None,
        "scan_scanned_bytes": scan["scanned_bytes"] if scan else None,
        "scan_issued_bytes": scan["issued_bytes"] if scan else None,
        "scan_total_bytes": scan["total_bytes"] if scan else None,
        "scan_processed_bytes": scan["processed_bytes"] if scan else None,
        "scan_rate_bytes_per_s": scan["scan_rate_bytes_per_s"] if scan else None,
        "scan_issue_rate_bytes_per_s": scan["issue_rate_bytes_per_s"] if scan else None,
        "scan_to_go_s": scan["to_go_s"] if scan else None,
        "scan_duration_s": scan["duration_s"] if scan else None,
        "scan_errors": scan["errors"] if scan else None,
    }


def _details(status):
    """Pool, state, the status/action/see texts, scans, vdev tree and why the pool is not whole."""
    sections, vdevs = status["sections"], status["vdevs"]
    return {
        "pool": status["pool"],
        "state": status["state"],
        "status": _joined(sections, "status"),
        "action": _joined(sections, "action"),
        "see": _joined(sections, "see"),
        "scan": status["scan"],
        "scans": status["scans"],
        "remove": _joined(sections, "remove"),
        "checkpoint": _joined(sections, "checkpoint"),
        "vdevs": vdevs or [],
        "errors": status["errors_text"],
        "counters_exact": status["exact"],
        "whole": status["whole"],
        "not_whole_reasons": status["reasons"],
        "resilvering_vdevs": [v["name"] for v in vdevs or [] if v["resilvering"]],
    }
