#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: free_space
short_description: Check, read-only, that the files a run will write fit on a host's filesystems
description:
  - Each need names a path (which may not exist yet - its nearest existing parent's filesystem is the one that fills),
    the MiB the run will write under it, what that is, and how to need less. Needs that land on one filesystem add
    up, and that filesystem's available space (C(statvfs) C(f_bavail), what an unprivileged writer gets) must hold
    their sum.
  - Returns RV(problems), one sentence per filesystem that is short, with the numbers, what fills it and how to
    fix it. It never fails on a shortfall (the caller asserts, so that every conflict of a preflight is reported at
    once).
  - Read-only; supports check mode. The pure rule is C(module_utils/testbed_free_space.py).
version_added: "1.5.0"
author:
  - Infrastructure testbed contributors
options:
  needs:
    description:
      - The needs, each C({path, need_mb, what, fix}); a need of 0 MiB or less is left out.
    type: list
    elements: dict
    required: true
  host:
    description: The host's name in the sentences (the inventory hostname).
    type: str
    default: this host
"""

EXAMPLES = r"""
- name: Check that the copy set fits on the node's root disk
  free_space:
    host: "{{ inventory_hostname }}"
    needs:
      - path: /var/tmp/testbed-storage/source
        need_mb: 26618
        what: the copy test's source file set
        fix: lower storage_compare_copy_total_mb
  register: space

- name: Stop when it does not
  ansible.builtin.assert:
    that: space.problems | length == 0
    fail_msg: "{{ space.problems | join(' ') }}"
"""

RETURN = r"""
problems:
  description: One sentence per filesystem that is short, naming the host.
  returned: always
  type: list
  elements: str
  sample: ["storage1: the filesystem at / has 980 MB free but this run writes 26618 MB there: the copy test's source
           file set (26618 MB in /var/tmp/testbed-storage/source). Free 25638 MB there, or lower
           storage_compare_copy_total_mb."]
filesystems:
  description: Per mount point, the free MiB, the MiB needed and what needs them.
  returned: always
  type: dict
"""

import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_free_space import check_needs  # noqa: E402


def _mount_of(path):
    path = os.path.realpath(path)
    while not os.path.ismount(path):
        path = os.path.dirname(path)
    return path


def _free_mb(path):
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize / 1048576.0


def main():
    module = AnsibleModule(
        argument_spec=dict(
            needs=dict(type="list", elements="dict", required=True),
            host=dict(type="str", default="this host"),
        ),
        supports_check_mode=True,
    )
    for need in module.params["needs"]:
        if not isinstance(need.get("path"), str) or not need["path"].startswith("/"):
            module.fail_json(msg="free_space: every need needs an absolute path, got %r" % (need,))
        try:
            float(need.get("need_mb") or 0)
        except (TypeError, ValueError):
            module.fail_json(msg="free_space: need_mb of %s is not a number: %r" % (need["path"], need.get("need_mb")))
    filesystems, problems = check_needs(module.params["needs"], os.path.exists, _mount_of, _free_mb)
    host = module.params["host"]
    module.exit_json(changed=False, filesystems=filesystems, problems=["%s: %s" % (host, p) for p in problems])


if __name__ == "__main__":
    main()
