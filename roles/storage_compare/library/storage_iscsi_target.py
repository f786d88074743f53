#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Export a block device through the kernel iSCSI target (LIO, configfs) - experiment 2's ZFS over iSCSI."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: storage_iscsi_target
short_description: One block device as LUN 0 of an iSCSI target of the kernel's LIO (configfs)
description:
  - C(state=present) exports I(device) as LUN 0 of target I(iqn) on portal I(address):I(port) with a block
    (iblock) backstore named I(name), in demo mode (any initiator, no CHAP - a private storage network only), and
    records the export in I(record_dir). A target of that name that the record does not name is refused.
  - C(state=absent) takes down only an export this module recorded (its record), then deletes the record.
  - The configfs steps come from the role's module_utils C(storage_compare_iscsi) (unit-tested); configfs must be
    mounted and the modules target_core_iblock and iscsi_target_mod loaded.
version_added: "1.0.0"
author: Testbed contributors
options:
  iqn:
    description: The target's name.
    type: str
    required: true
  name:
    description: The backstore's name.
    type: str
    default: testbed
  device:
    description: The exported block device (with C(state=present)).
    type: path
  address:
    description: The portal's IPv4 address (the storage node's on the storage network).
    type: str
    required: true
  port:
    description: The portal's TCP port.
    type: int
    default: 3260
  state:
    description: C(present) exports, C(absent) takes the recorded export down.
    type: str
    choices: [present, absent]
    default: present
  record_dir:
    description: Where the export is recorded.
    type: path
    default: /var/lib/testbed/storage_compare/iscsi
  configfs:
    description: The configfs root.
    type: path
    default: /sys/kernel/config
"""

EXAMPLES = r"""
- name: Export the zvol
  storage_iscsi_target:
    iqn: iqn.2026-11.org.testbed:storage-compare
    device: /dev/zvol/testbed/vol
    address: 10.233.0.1
"""

RETURN = r"""
steps:
  description: The configfs steps run (op, path, value).
  type: list
  returned: always
"""

import json  # noqa: E402 (Ansible modules import after their documentation)
import os  # noqa: E402

from ansible.module_utils import storage_compare_iscsi as lio  # noqa: E402
from ansible.module_utils.basic import AnsibleModule  # noqa: E402


def _record_path(params):
    return os.path.join(params["record_dir"], params["iqn"].replace(":", "_") + ".json")


def _run(steps):
    for step in steps:
        op, path = step[0], step[1]
        if op == "mkdir":
            if not os.path.isdir(path):
                os.mkdir(path)
        elif op == "write":
            with open(path, "w") as handle:
                handle.write(step[2])
        elif op == "symlink":
            if not os.path.islink(step[2]):
                os.symlink(path, step[2])
        elif op == "unlink":
            os.unlink(path)
        elif op == "rmdir":
            os.rmdir(path)
        elif op == "rmdir_empty":
            if os.path.isdir(path) and not [e for e in os.listdir(path) if os.path.isdir(os.path.join(path, e))]:
                os.rmdir(path)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            iqn=dict(type="str", required=True),
            name=dict(type="str", default="testbed"),
            device=dict(type="path"),
            address=dict(type="str", required=True),
            port=dict(type="int", default=3260),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            record_dir=dict(type="path", default="/var/lib/testbed/storage_compare/iscsi"),
            configfs=dict(type="path", default="/sys/kernel/config"),
        ),
        required_if=[("state", "present", ["device"])],
        supports_check_mode=False,
    )
    p = module.params
    record = _record_path(p)
    paths = lio.paths(p["iqn"], p["name"], p["address"], p["port"], p["configfs"])
    recorded = os.path.exists(record)
    try:
        if p["state"] == "present":
            steps = lio.create_steps(p["iqn"], p["name"], p["device"], p["address"], p["port"], p["configfs"])
            if not os.path.isdir(os.path.join(p["configfs"], "target")):
                module.fail_json(msg="storage_iscsi_target: %s/target is missing: mount configfs and load "
                                     "target_core_iblock and iscsi_target_mod first" % p["configfs"])
            if os.path.isdir(paths["target"]) and not recorded:
                module.fail_json(msg="storage_iscsi_target: target %s exists but the testbed did not create it "
                                     "(no record %s): it is left alone; choose another iqn" % (p["iqn"], record))
            if os.path.isdir(paths["portal"]) and recorded:
                module.exit_json(changed=False, steps=[])
            if not os.path.isdir(p["record_dir"]):
                os.makedirs(p["record_dir"], 0o755)
            with open(record, "w") as handle:
                json.dump({"iqn": p["iqn"], "name": p["name"], "device": p["device"], "address": p["address"],
                           "port": p["port"]}, handle)
            _run(steps)
            module.exit_json(changed=True, steps=steps)
        if not recorded:
            module.exit_json(changed=False, steps=[])
        existing = set(path for path in paths.values() if os.path.lexists(path))
        if paths["tpg"] in existing:
            existing.add(paths["tpg"] + "/enable")
        steps = lio.remove_steps(p["iqn"], p["name"], p["address"], p["port"], p["configfs"], existing)
        _run(steps)
        os.unlink(record)
        module.exit_json(changed=bool(steps), steps=steps)
    except ValueError as exc:
        module.fail_json(msg="storage_iscsi_target: %s" % exc)
    except OSError as exc:
        module.fail_json(msg="storage_iscsi_target: configfs step failed: %s" % exc)


if __name__ == "__main__":
    main()
