# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for the final statistics line of ``xz -v`` (XZ Utils 5.x), read from xz's stderr.

``parse(text, source="<content>")`` returns the common parse result (see
``testbed_parse``).  xz has no machine-readable form for compression:
``--robot`` covers only ``--version``, ``--info-memory`` and ``--list`` (5.4.1
man page, ROBOT MODE).  With ``-v`` and stderr not a terminal, xz prints one
line per file when it is done (``src/xz/message.c`` ``progress_flush()``)::

    NAME: COMPRESSED / UNCOMPRESSED = RATIO[, SPEED][, ELAPSED]

* sizes: ``N B`` or ``N.N KiB|MiB|GiB|TiB`` (at most five significant digits);
* ratio: ``%.3f`` (``> 9.999`` when worse);
* speed of the uncompressed side, only after 3 s: ``N.N KiB/s`` below 9.9,
  ``N KiB/s`` (``MiB/s``, ``GiB/s``) above;
* elapsed wall time, truncated to whole seconds: ``M:SS`` or ``H:MM:SS``; absent
  below 1 s.

A line interrupted by an error carries the completion percentage
(``NAME: 45.3 %, ...``) and is followed by xz's error message.  ``-vv`` adds
``xz: Filter chain: ...`` and, with several threads, ``xz: Using up to N threads.``
(none of it with one thread); a reduction prints ``xz: Reduced the number of
threads from N to M ...``.  Versions and variants: docs/parsers.md.
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

TOOL = "xz"

_UNITS = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3, "TiB": 1024 ** 4}
SIZE = r"(?P<{0}>%s) (?P<{0}_unit>B|KiB|MiB|GiB|TiB)" % NUM
FINAL = re.compile(
    r"^(?P<name>.+?): (?:(?P<percent>%s) %%, )?" % NUM
    + SIZE.format("compressed") + " / " + SIZE.format("uncompressed")
    + r" (?P<ratio_op>[=>]) (?P<ratio>%s)" % NUM
    + r"(?:, (?P<speed>%s) (?P<speed_unit>[KMG])iB/s)?" % NUM
    + r"(?:, (?P<elapsed>\d+:\d{2}(?::\d{2})?))?\s*$",
    re.MULTILINE)
THREADS = re.compile(r"^xz: Using up to (%s) threads\.\s*$" % INT, re.MULTILINE)
REDUCED = re.compile(r"^xz: Reduced the number of threads from (%s) to (%s|one)\b.*$" % (INT, INT), re.MULTILINE)
FILTERS = re.compile(r"^xz: Filter chain: (\S+)\s*$", re.MULTILINE)
XZ_LINE = re.compile(r"^xz: (.*?)\s*$", re.MULTILINE)
_INFO = ("Filter chain:", "Using up to", "Reduced the number", "Decompression will need", "MiB of memory",
         "Switching to single-threaded")


def _seconds(text):
    parts = [int(part) for part in text.split(":")]
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + part
    return seconds


def _errors(text):
    """xz's own messages that are not the informational -vv lines."""
    return [line for line in XZ_LINE.findall(text) if not any(info in line for info in _INFO)]


def parse(text, source="<content>", wall_s=None):
    """Parse xz -v/-vv stderr for one file; see the module docstring.

    ``wall_s``: the wall time of the xz command as the caller measured it.
    xz prints its speed only after 3 s; below that the throughput is the
    uncompressed size over ``wall_s`` (``details.throughput_source`` says
    which), so a fast machine's short run is still a measurement.
    """
    text = require_text(text, TOOL, source)
    lines = list(FINAL.finditer(text))
    errors = _errors(text)
    if not lines:
        if errors:
            raise ParseError(TOOL, source, "no statistics line; xz said: %s" % "; ".join(errors))
        if re.search(r"^Usage: xz ", text, re.MULTILINE):
            raise ParseError(TOOL, source, "this is xz's usage text (bad option?), not a report")
        raise ParseError(TOOL, source, "missing the 'NAME: COMPRESSED / UNCOMPRESSED = RATIO' line of xz -v (run xz "
                                       "with -v and parse its stderr; truncated output, or not xz output?)")
    if len(lines) > 1:
        raise ParseError(TOOL, source, "holds %d statistics lines (%s); give xz one file per run"
                         % (len(lines), ", ".join(line.group("name") for line in lines)))
    line = lines[0]
    result = new_result(TOOL, source)
    metrics = result["metrics"]
    details = result["details"]
    details["file"] = line.group("name")

    sizes = {}
    for side in ("compressed", "uncompressed"):
        value = to_number(line.group(side), TOOL, source, side)
        unit = line.group(side + "_unit")
        sizes[side] = value * _UNITS[unit]
        details["%s_printed" % side] = "%s %s" % (line.group(side), unit)
    metrics["uncompressed_mib"] = sizes["uncompressed"] / _UNITS["MiB"]
    metrics["compressed_mib"] = sizes["compressed"] / _UNITS["MiB"]
    metrics["uncompressed_bytes"] = int(round(sizes["uncompressed"]))
    metrics["compressed_bytes"] = int(round(sizes["compressed"]))
    ratio = to_number(line.group("ratio"), TOOL, source, "ratio")
    if line.group("ratio_op") == ">":
        metrics["ratio"] = None
        warn(result, "ratio is null: xz printed '> %s' (the output is more than ten times the input)" % ratio)
    else:
        metrics["ratio"] = ratio

    if line.group("speed") is not None:
        speed = to_number(line.group("speed"), TOOL, source, "speed")
        metrics["throughput_mib_s"] = speed * {"K": 1.0 / 1024, "M": 1.0, "G": 1024.0}[line.group("speed_unit")]
    else:
        metrics["throughput_mib_s"] = None
    metrics["elapsed_s"] = _seconds(line.group("elapsed")) if line.group("elapsed") else None

    threads = THREADS.search(text)
    reduced = REDUCED.search(text)
    if reduced:
        to = reduced.group(2)
        metrics["threads"] = 1 if to == "one" else int(to)
        warn(result, "xz reduced the number of threads from %s to %s (memory usage limit)"
             % (reduced.group(1), metrics["threads"]))
    elif threads:
        metrics["threads"] = int(threads.group(1))
    elif FILTERS.search(text):
        # -vv prints "Using up to N threads." only in multithreaded mode
        metrics["threads"] = 1
    else:
        metrics["threads"] = None
        warn(result, "threads is null: xz prints the number of threads only with -vv")
    filters = FILTERS.search(text)
    details["filter_chain"] = filters.group(1) if filters else None

    if line.group("percent") is not None:
        invalidate(result, "xz stopped at %s %% of %s%s" % (
            line.group("percent"), details["file"], ": " + "; ".join(errors) if errors else ""))
    elif errors:
        invalidate(result, "xz reported: %s" % "; ".join(errors))
    details["throughput_source"] = "xz" if metrics["throughput_mib_s"] is not None else None
    if wall_s is not None:
        wall = to_number(str(wall_s), TOOL, source, "wall_s")
        if wall <= 0:
            raise ParseError(TOOL, source, "wall_s must be the positive wall time of the xz run in seconds, got %r"
                             % (wall_s,))
        details["wall_s"] = wall
    if metrics["throughput_mib_s"] is None and details.get("wall_s") and metrics["uncompressed_bytes"] > 0:
        metrics["throughput_mib_s"] = metrics["uncompressed_mib"] / details["wall_s"]
        details["throughput_source"] = "wall time"
        warn(result, "xz printed no speed (it does below 3 s): throughput_mib_s is the uncompressed size over the "
                     "command's wall time, %.3f s (process start included)" % details["wall_s"])
    elif metrics["throughput_mib_s"] is None:
        invalidate(result, "xz printed no speed: the run took less than 3 s (xz shows the speed only after 3 s); "
                           "give the command's wall time (option wall_s) or use a larger input")
    elif metrics["elapsed_s"] is not None and metrics["elapsed_s"] < 10:
        warn(result, "elapsed_s is %d s, printed in whole seconds; the speed is xz's own (2-3 significant digits)"
             % metrics["elapsed_s"])
    if metrics["uncompressed_bytes"] == 0:
        invalidate(result, "no data: the uncompressed size is 0")
    return result
