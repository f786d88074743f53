#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: wipefs_parse
short_description: Parse wipefs --no-act --json into the signatures found on a device
description:
  - Parses C(wipefs --no-act --json <device>) (util-linux 2.38, C(misc-utils/wipefs.c)) - one JSON
    document with a C(signatures) table; columns C(device), C(offset) (hexadecimal text), C(type),
    C(uuid), C(label), and C(usage) / C(length) when wipefs ran with C(-O).
  - wipefs probes the device itself with libblkid and lists every signature (a GPT twice plus its
    protective MBR, each ZFS uberblock it finds, LVM, Ceph BlueStore, md RAID, swap, filesystems); it does
    not look inside partitions, so run it on each partition too.
  - An empty table (C(signatures) is an empty list) is a valid result - a device with no signature.
  - Each signature gets a C(kind) (partition_table, filesystem, lvm, zfs, ceph, raid, swap, crypto, cache,
    other) and a short description.
version_added: "1.2.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
seealso:
  - module: disk_safety
  - module: lsblk_parse
"""

EXAMPLES = r"""
- name: List the signatures on a disk (reads only)
  ansible.builtin.command:
    cmd: wipefs --no-act --json /dev/disk/by-id/virtio-storage-a
  environment:
    LC_ALL: C
  register: __storage_wipefs
  changed_when: false

- name: Parse them
  wipefs_parse:
    content: "{{ __storage_wipefs.stdout }}"
  register: __storage_signatures

- name: Types found
  ansible.builtin.debug:
    msg: "{{ __storage_signatures.details.types }}"
"""

RETURN = r"""
tool:
  description: Always C(wipefs).
  returned: success
  type: str
  sample: wipefs
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: Always true when parsing succeeds.
  returned: success
  type: bool
reasons:
  description: Empty.
  returned: success
  type: list
  elements: str
metrics:
  description: C(signatures) (count of table rows) and C(signature_types) (distinct types).
  returned: success
  type: dict
  sample:
    signatures: 3
    signature_types: 2
details:
  description: The signatures.
  returned: success
  type: dict
  contains:
    signatures:
      description: >-
        One per row - C(device), C(offset_bytes), C(type), C(uuid), C(label), C(usage) (null without -O USAGE),
        C(kind), C(description).
      type: list
      elements: dict
    types:
      description: Distinct types in the order found.
      type: list
      elements: str
      sample: [gpt, PMBR]
    kinds:
      description: Distinct kinds, sorted.
      type: list
      elements: str
    devices:
      description: Distinct device names in the table.
      type: list
      elements: str
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
ansible_facts:
  description: The same result under C(ansible_facts.wipefs).
  returned: success
  type: dict
  contains:
    wipefs:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_wipefs import parse  # noqa: E402


def main():
    run_parse_module("wipefs", parse)


if __name__ == "__main__":
    main()
