#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: lsblk_parse
short_description: Parse lsblk --json --bytes into a device tree with sizes, rotational flag, model and mount points
description:
  - Parses C(lsblk --json --bytes --output NAME,KNAME,PATH,TYPE,SIZE,ROTA,RO,MODEL,SERIAL,WWN,FSTYPE,PTTYPE,
    PARTTYPE,LABEL,UUID,MOUNTPOINTS,PKNAME <device>) (util-linux 2.38; C(NAME), C(TYPE) and C(SIZE) are
    required, the others optional).
  - C(SIZE) must be in bytes (C(--bytes)); C(ROTA)/C(RO) are booleans (C("0")/C("1") of older versions are
    accepted); C(MOUNTPOINTS) (2.37+, a list holding null when unmounted) or the older C(MOUNTPOINT).
  - Sizes, type, rotational, model, the tree of partitions and stacked devices, and mount points come from
    sysfs and the mount table; FSTYPE, PTTYPE, LABEL and UUID come from the udev database, which is empty
    or stale without a running udevd (containers), and lsblk 2.38 then prints null without probing the
    device. Never read a null FSTYPE as blank - use M(wipefs_parse) for signatures.
  - An empty C(blockdevices) table (lsblk's answer, exit 32, for a path that is no block device) fails.
version_added: "1.2.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
seealso:
  - module: disk_safety
  - module: wipefs_parse
"""

EXAMPLES = r"""
- name: Describe a data disk
  ansible.builtin.command:
    cmd: lsblk --json --bytes --output NAME,KNAME,PATH,TYPE,SIZE,ROTA,RO,MODEL,SERIAL,MOUNTPOINTS /dev/vdb
  environment:
    LC_ALL: C
  register: __storage_lsblk
  changed_when: false

- name: Parse it
  lsblk_parse:
    content: "{{ __storage_lsblk.stdout }}"
  register: __storage_disk

- name: Size and rotational flag
  ansible.builtin.debug:
    msg: "{{ __storage_disk.details.flat[0].size_bytes }} {{ __storage_disk.details.flat[0].rotational }}"
"""

RETURN = r"""
tool:
  description: Always C(lsblk).
  returned: success
  type: str
  sample: lsblk
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
  description: >-
    C(devices) (top-level devices), C(size_bytes) (their total size), C(children) (partitions and stacked
    devices below them), C(mounted) (devices with a mount point).
  returned: success
  type: dict
  sample:
    devices: 1
    size_bytes: 67108864
    children: 2
    mounted: 0
details:
  description: The devices.
  returned: success
  type: dict
  contains:
    blockdevices:
      description: The tree as lsblk printed it (each device with C(children)).
      type: list
      elements: dict
    flat:
      description: >-
        Every device in tree order - C(name), C(kname), C(path), C(type), C(size_bytes), C(rotational),
        C(read_only), C(model), C(serial), C(wwn), C(fstype), C(pttype), C(parttype), C(label), C(uuid),
        C(mountpoints) (a list, empty when unmounted), C(pkname), C(parent) (parent's path), C(depth).
      type: list
      elements: dict
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
ansible_facts:
  description: The same result under C(ansible_facts.lsblk).
  returned: success
  type: dict
  contains:
    lsblk:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_lsblk import parse  # noqa: E402


def main():
    run_parse_module("lsblk", parse)


if __name__ == "__main__":
    main()
