# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for IOzone 3.x reports (the auto/table mode and the throughput mode ``-t``).

``parse(text, source="<content>")`` returns the common parse result (see
``testbed_parse``).  IOzone 3.489 (Debian's ``iozone3``, non-free) prints, after
its banner and settings (``Output is in kBytes/sec``, or ``OPS Mode. Output is
in operations per second.`` with ``-O``):

* table mode (``-i N``, ``-a``): two heading lines (``random random bkwd record
  stride`` over ``kB reclen write rewrite read reread read write read rewrite
  read fwrite frewrite fread freread``) and one row per file size and record
  size, fixed width: file size in kB (16 columns), record size in kB (8), then
  9 columns per test in that order, blank for a test not selected with ``-i``;
* throughput mode (``-t N``): per test a block ``Children see throughput for N
  initial writers = X kB/sec``, ``Parent sees ...``, ``Min/Max/Avg throughput
  per process``, ``Min xfer``.

IOzone's kB is 1024 bytes, so rates are ``_kib_s`` (``_ops_per_s`` with
``-O``).  One table row gives ``<test>_kib_s``; several rows give
``f<file kB>k_r<record kB>k_<test>_kib_s`` for each (every row is in
``details.rows`` too).  A report without ``iozone test complete.`` (stopped, or
a file it could not open) is a ParseError naming IOzone's message.
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
)

TOOL = "iozone"

TESTS = ("write", "rewrite", "read", "reread", "random_read", "random_write", "bkwd_read", "record_rewrite",
         "stride_read", "fwrite", "frewrite", "fread", "freread")
HEADING = ["kB", "reclen", "write", "rewrite", "read", "reread", "read", "write", "read", "rewrite", "read", "fwrite",
           "frewrite", "fread", "freread"]
THROUGHPUT_TESTS = {"initial writers": "write", "rewriters": "rewrite", "readers": "read", "re-readers": "reread",
                    "reverse readers": "bkwd_read", "stride readers": "stride_read", "random readers": "random_read",
                    "mixed workload": "mixed", "random writers": "random_write", "pwrite writers": "pwrite",
                    "pread readers": "pread", "fwriters": "fwrite", "freaders": "fread"}
CHILDREN = re.compile(r"^\s*Children see throughput for\s+(\d+) (.+?)\s*=\s*(%s) (kB/sec|ops/sec)\s*$" % NUM,
                      re.MULTILINE)
PER_PROCESS = re.compile(r"^\s*(Parent sees throughput for\s+\d+ .+?|Min throughput per process|"
                         r"Max throughput per process|Avg throughput per process)\s*=\s*(%s) (?:kB|ops)/sec\s*$" % NUM,
                         re.MULTILINE)
VERSION = re.compile(r"Version \$Revision: ([\d.]+) \$")
FIELD = 9  # width of a test's column after the file size (16) and the record size (8)


def _refuse_non_reports(text, source):
    if "iozone test complete." in text:
        return
    said = [line.strip() for line in text.splitlines()
            if re.match(r"^\s*(Can not|Cannot|Error|open:|Unable)", line)]
    if said:
        raise ParseError(TOOL, source, "IOzone stopped before the end: %s" % "; ".join(said))
    if "Iozone: Performance Test of File I/O" not in text:
        raise ParseError(TOOL, source, "not an IOzone report (no 'Iozone: Performance Test of File I/O' banner)")
    raise ParseError(TOOL, source, "the report has no 'iozone test complete.' line (interrupted or truncated)")


def _row(line, source):
    """One fixed-width table row -> (file kB, record kB, {test: value})."""
    values = {}
    for match in re.finditer(r"\S+", line):
        end = match.end()
        if end == 16 or end == 24:
            continue
        column, rest = divmod(end - 24, FIELD)
        if rest or not 1 <= column <= len(TESTS):
            raise ParseError(TOOL, source, "value %r ends at column %d, not at a test column's end: this table's layout "
                                           "is not IOzone 3.4xx's" % (match.group(), end))
        values[TESTS[column - 1]] = to_number(match.group(), TOOL, source, TESTS[column - 1])
    return int(line[:16]), int(line[16:24]), values


def _table(result, lines, source, unit):
    heading = [index for index, line in enumerate(lines) if line.split()[:2] == ["kB", "reclen"]]
    if len(heading) != 1:
        return False
    start = heading[0]
    if lines[start].split() != HEADING:
        raise ParseError(TOOL, source, "the table heading is not IOzone 3.4xx's: %r" % lines[start].strip())
    rows = []
    for line in lines[start + 1:]:
        if not re.match(r"^\s+\d+\s+\d+", line):
            break
        file_kb, record_kb, values = _row(line, source)
        rows.append({"file_kib": file_kb, "record_kib": record_kb, "values": values})
    if not rows:
        raise ParseError(TOOL, source, "the table has no rows (IOzone stopped before measuring)")
    metrics = result["metrics"]
    for row in rows:
        prefix = "" if len(rows) == 1 else "f%dk_r%dk_" % (row["file_kib"], row["record_kib"])
        for test, value in row["values"].items():
            metrics["%s%s_%s" % (prefix, test, unit)] = value
    result["details"]["rows"] = rows
    return True


def _throughput(result, text, source, unit):
    blocks = list(CHILDREN.finditer(text))
    if not blocks:
        return False
    metrics = result["metrics"]
    names = {"Parent": "parent", "Min": "min_process", "Max": "max_process", "Avg": "avg_process"}
    for index, block in enumerate(blocks):
        test = THROUGHPUT_TESTS.get(block.group(2))
        if test is None:
            raise ParseError(TOOL, source, "throughput test %r is not one this parser knows" % block.group(2))
        metrics["%s_children_%s" % (test, unit)] = to_number(block.group(3), TOOL, source, block.group(2))
        end = blocks[index + 1].start() if index + 1 < len(blocks) else len(text)
        for line in PER_PROCESS.finditer(text, block.end(), end):
            metrics["%s_%s_%s" % (test, names[line.group(1).split()[0]], unit)] = to_number(
                line.group(2), TOOL, source, line.group(1))
    result["details"]["processes"] = int(blocks[0].group(1))
    return True


def parse(text, source="<content>"):
    """Parse one IOzone report; see the module docstring."""
    text = require_text(text, TOOL, source)
    _refuse_non_reports(text, source)
    result = new_result(TOOL, source)
    unit = "ops_per_s" if "Output is in operations per second" in text else "kib_s"
    version = VERSION.search(text)
    command = re.search(r"^\s*Command line used: (.*?)\s*$", text, re.MULTILINE)
    result["details"].update(version=version.group(1) if version else None,
                             command=command.group(1) if command else None,
                             o_direct="O_DIRECT feature enabled" in text, unit=unit)
    found = _throughput(result, text, source, unit) or _table(result, text.splitlines(), source, unit)
    if not found:
        raise ParseError(TOOL, source, "neither a result table nor throughput blocks (truncated output?)")
    if any(value <= 0 for value in result["metrics"].values()):
        invalidate(result, "a rate is 0: IOzone timed a test as taking no time or moving nothing")
    return result
