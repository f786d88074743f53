#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: xz_parse
short_description: Parse the statistics line of xz -v (compression or decompression throughput)
description:
  - Parses what C(xz -v) (better C(-vv)) prints on B(stderr) when stderr is not a terminal, for one file
    (XZ Utils 5.x; versions in docs/parsers.md). xz has no machine-readable form for compression - C(--robot)
    covers only C(--version), C(--info-memory) and C(--list) (5.4.1) - so the human line is read.
  - "The line is C(NAME: COMPRESSED / UNCOMPRESSED = RATIO, SPEED, ELAPSED), for example
    C(xz-input.bin: 25.0 MiB / 64.0 MiB = 0.391, 4.2 MiB/s, 0:15). Sizes have at most five significant digits
    (C(B), C(KiB), C(MiB)...), the ratio is compressed/uncompressed with three decimals, the speed is of the
    uncompressed data (two or three significant digits) and is printed only after 3 s, the elapsed time is in
    whole seconds (truncated) and printed only from 1 s on."
  - Run xz with C(-c) and its stdout sent to C(/dev/null) (the role C(testbed_workload) does that for xz) so that
    the compressed data does not go through Ansible; parse stderr.
  - "RV(metrics.threads) comes from C(-vv) (C(xz: Using up to N threads.); nothing in single-threaded mode, so 1);
    with C(-v) alone it is null with a warning. A reduction (C(Reduced the number of threads from N to M))
    gives M and a warning."
  - xz prints no speed for a run shorter than 3 s. Given O(wall_s), the command's wall time as the caller
    measured it, the throughput is then the uncompressed size over O(wall_s) (RV(details.throughput_source) is
    C(wall time), with a warning); without it such a run is C(valid=false) with a sentence saying what to give
    or change. A line with a percentage (xz stopped by an error) is C(valid=false) with xz's message. No statistics
    line (for example C(No such file or directory)) or several files in one run make the module fail.
version_added: "1.2.0"
author:
  - Infrastructure testbed contributors
options:
  wall_s:
    description:
      - Wall time of the xz command in seconds, as the caller measured it (for example the C(delta) of the
        task that ran it). Used only when xz printed no speed (a run shorter than 3 s).
    type: float
extends_documentation_fragment:
  - testbed_parse
"""

EXAMPLES = r"""
- name: Compress a 64 MiB file with two threads, data to /dev/null, statistics on stderr
  ansible.builtin.shell:
    cmd: exec xz -T2 -2 -c -vv /var/tmp/bench/xz-input.bin > /dev/null
  environment:
    LC_ALL: C
  register: __bench_xz
  changed_when: false

- name: Parse xz's statistics line
  xz_parse:
    content: "{{ __bench_xz.stderr }}"
  register: __bench_xz_parsed

- name: Use the throughput
  ansible.builtin.debug:
    msg: "{{ __bench_xz_parsed.metrics.throughput_mib_s }} MiB/s of input, ratio {{ __bench_xz_parsed.metrics.ratio }}"
"""

RETURN = r"""
tool:
  description: Always C(xz).
  returned: success
  type: str
  sample: xz
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: Verdict on the measurement (false without a speed, or when xz stopped with an error).
  returned: success
  type: bool
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
warnings:
  description: Threads unknown (no C(-vv)), thread reduction, short run.
  returned: success
  type: list
  elements: str
details:
  description: Extras.
  returned: success
  type: dict
  contains:
    file:
      description: The file name xz printed (C((stdin)) for a pipe).
      type: str
    filter_chain:
      description: The filter chain of C(-vv), null otherwise.
      type: str
    compressed_printed:
      description: The compressed size as printed.
      type: str
      sample: 25.0 MiB
    uncompressed_printed:
      description: The uncompressed size as printed.
      type: str
      sample: 64.0 MiB
    throughput_source:
      description: C(xz) (its own speed), C(wall time) (size over O(wall_s)) or null (no throughput).
      type: str
    wall_s:
      description: O(wall_s) when it was given.
      type: float
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description: Flat mapping; unit in each name. Null where xz gave no value.
  returned: success
  type: dict
  contains:
    uncompressed_mib:
      description: Uncompressed size (input when compressing), as printed (at most five significant digits).
      type: float
      sample: 64.0
    compressed_mib:
      description: Compressed size, as printed.
      type: float
      sample: 25.0
    uncompressed_bytes:
      description: The same in bytes (as precise as the printed value).
      type: int
    compressed_bytes:
      description: The same in bytes (as precise as the printed value).
      type: int
    ratio:
      description: Compressed / uncompressed; null when xz printed C(> 9.999).
      type: float
      sample: 0.391
    throughput_mib_s:
      description:
        - xz's speed of the uncompressed data in MiB/s (both directions). Below 3 s xz prints none; then it is
          the uncompressed size over O(wall_s) when that is given, null otherwise.
      type: float
      sample: 4.2
    elapsed_s:
      description: Elapsed wall time in whole seconds (truncated); null below 1 s.
      type: int
      sample: 15
    threads:
      description: Threads xz used (C(-vv)); null with C(-v) only.
      type: int
      sample: 2
ansible_facts:
  description: The same result under C(ansible_facts.xz).
  returned: success
  type: dict
  contains:
    xz:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_xz import parse  # noqa: E402

OPTIONS = dict(wall_s=dict(type="float"))


def main():
    run_parse_module("xz", parse, extra_spec=OPTIONS, option_names=tuple(OPTIONS))


if __name__ == "__main__":
    main()
