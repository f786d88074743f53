#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: iozone_parse
short_description: Parse IOzone 3.x reports (table mode and throughput mode)
description:
  - Parses an IOzone 3.x report (3.489 is Debian's C(iozone3), non-free; versions in docs/parsers.md) - study A's
    disk tool. Table mode (C(-i N), C(-a)) reads the fixed-width rows (file size, record size, then one 9-column
    field per test, blank when not selected); throughput mode (C(-t N)) reads the C(Children see throughput)
    blocks with the parent's and per-process figures.
  - "IOzone's kB is 1024 bytes: rates are C(<test>_kib_s) (C(<test>_ops_per_s) with C(-O)), tests C(write),
    C(rewrite), C(read), C(reread), C(random_read), C(random_write), C(bkwd_read), C(record_rewrite),
    C(stride_read), C(fwrite), C(frewrite), C(fread), C(freread) (throughput mode also C(mixed), C(pwrite),
    C(pread)). Several table rows give C(f<file kB>k_r<record kB>k_<test>_kib_s)."
  - A report without C(iozone test complete.) (a file it could not open, an interrupted run) makes the module fail
    with IOzone's own message.
version_added: "1.3.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
"""

EXAMPLES = r"""
- name: Study A's disk rows, write and read, 4 KiB records, O_DIRECT, on the guest's filesystem
  ansible.builtin.command:
    argv: [iozone, -i, "0", -i, "1", -s, 512m, -r, 4k, -I, -f, /var/tmp/bench/iozone.tmp]
  environment:
    LC_ALL: C
  register: __bench_iozone
  changed_when: false

- name: Parse it
  iozone_parse:
    content: "{{ __bench_iozone.stdout }}"
  register: __bench_iozone_parsed
"""

RETURN = r"""
tool:
  description: Always C(iozone).
  returned: success
  type: str
  sample: iozone
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: Verdict on the measurement.
  returned: success
  type: bool
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
warnings:
  description: None in this version.
  returned: success
  type: list
  elements: str
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
ansible_facts:
  description: The same result under C(ansible_facts.iozone).
  returned: success
  type: dict
  contains:
    iozone:
      description: The parse result (keys as above).
      type: dict
details:
  description: Extras.
  returned: success
  type: dict
  contains:
    version:
      description: IOzone's revision (C(3.489)).
      type: str
    command:
      description: IOzone's C(Command line used).
      type: str
    o_direct:
      description: Whether C(-I) (O_DIRECT) was on.
      type: bool
    rows:
      description: Table mode, every row (C(file_kib), C(record_kib), C(values) per test).
      type: list
      elements: dict
    processes:
      description: Throughput mode, the number of processes.
      type: int
metrics:
  description: Flat mapping; unit in each name.
  returned: success
  type: dict
  contains:
    write_kib_s:
      description: Write rate in KiB/s (one table row; C(_ops_per_s) with C(-O)).
      type: float
    read_kib_s:
      description: Read rate in KiB/s (one table row).
      type: float
    write_children_kib_s:
      description: Throughput mode, the children's total write rate.
      type: float
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_iozone import parse  # noqa: E402


def main():
    run_parse_module("iozone", parse)


if __name__ == "__main__":
    main()
