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
  - The configfs steps come from the role's module_utils C(storage_compare_iscsi) (unit-tested).
  - C(state=present) first records the host's LIO state (which of LIO's modules are loaded, whether configfs is
    mounted, whether the iSCSI fabric directory exists) in I(record_dir)/host-before.json, once (a later export
    keeps the first record), then loads I(modules) and mounts configfs where they are missing.
  - C(state=absent) with I(restore_host=true) then puts that state back once no iSCSI target or backstore is left
    on the host. It removes the fabric directory, unloads the modules and unmounts configfs that were not there
    before, and deletes host-before.json. Another target or backstore is someone else's, so LIO then stays loaded
    and the module warns, naming them.
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
  modules:
    description: The kernel modules the export needs, loaded with modprobe when missing (C(state=present)).
    type: list
    elements: str
    default: [target_core_iblock, iscsi_target_mod]
  restore_host:
    description: With C(state=absent), put back the host's LIO state recorded before the first export.
    type: bool
    default: false
  sys_module:
    description: Where the kernel lists its loaded modules.
    type: path
    default: /sys/module
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
  description: The steps run (op, path[, value]); C(modprobe), C(mount), C(rmmod) and C(umount) steps name the host's changes.
  type: list
  returned: always
notes:
  description: What I(restore_host) left as it was, and why.
  type: list
  returned: always
"""

import json  # noqa: E402 (Ansible modules import after their documentation)
import os  # noqa: E402

from ansible.module_utils import storage_compare_iscsi as lio  # noqa: E402
from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_parse import write_json_atomic  # noqa: E402


def _record_path(params):
    return os.path.join(params["record_dir"], params["iqn"].replace(":", "_") + ".json")


def _configfs_mounted(root):
    with open("/proc/mounts") as handle:
        return any(len(f) > 2 and f[1] == root and f[2] == "configfs" for f in (line.split() for line in handle))


def _listdir(path):
    if not os.path.isdir(path):
        return None
    return [name for name in os.listdir(path) if os.path.isdir(os.path.join(path, name))]


def _host_state(p):
    loaded = [m for m in lio.MODULES if os.path.isdir(os.path.join(p["sys_module"], m))]
    return lio.host_state(loaded, _configfs_mounted(p["configfs"]), _listdir, p["configfs"])


def _run(steps, module=None):
    for step in steps:
        op, path = step[0], step[1]
        if op in ("modprobe", "rmmod"):
            module.run_command([op, path], check_rc=True)
        elif op == "mount":
            module.run_command(["mount", "-t", "configfs", "configfs", path], check_rc=True)
        elif op == "umount":
            module.run_command(["umount", path], check_rc=True)
        elif op == "mkdir":
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
            modules=dict(type="list", elements="str", default=["target_core_iblock", "iscsi_target_mod"]),
            restore_host=dict(type="bool", default=False),
            sys_module=dict(type="path", default="/sys/module"),
        ),
        required_if=[("state", "present", ["device"])],
        supports_check_mode=False,
    )
    p = module.params
    record = _record_path(p)
    paths = lio.paths(p["iqn"], p["name"], p["address"], p["port"], p["configfs"])
    recorded = os.path.exists(record)
    host_record = os.path.join(p["record_dir"], "host-before.json")
    try:
        if p["state"] == "present":
            steps = lio.create_steps(p["iqn"], p["name"], p["device"], p["address"], p["port"], p["configfs"])
            if not os.path.isdir(p["record_dir"]):
                os.makedirs(p["record_dir"], 0o755)
            before = _host_state(p)
            if not os.path.exists(host_record):
                write_json_atomic(host_record, before)
            host_steps = [("modprobe", m) for m in p["modules"] if not os.path.isdir(os.path.join(p["sys_module"], m))]
            if not before["configfs_mounted"]:
                host_steps.append(("mount", p["configfs"]))
            _run(host_steps, module)
            if not os.path.isdir(os.path.join(p["configfs"], "target")):
                module.fail_json(msg="storage_iscsi_target: %s/target is missing: mount configfs and load "
                                     "target_core_iblock and iscsi_target_mod first" % p["configfs"])
            if os.path.isdir(paths["target"]) and not recorded:
                module.fail_json(msg="storage_iscsi_target: target %s exists but the testbed did not create it "
                                     "(no record %s): it is left alone; choose another iqn" % (p["iqn"], record))
            if os.path.isdir(paths["portal"]) and recorded:
                module.exit_json(changed=bool(host_steps), steps=host_steps, notes=[])
            write_json_atomic(record, {"iqn": p["iqn"], "name": p["name"], "device": p["device"],
                                       "address": p["address"], "port": p["port"]})
            _run(steps)
            module.exit_json(changed=True, steps=host_steps + steps, notes=[])
        steps, notes = [], []
        if recorded:
            existing = set(path for path in paths.values() if os.path.lexists(path))
            if paths["tpg"] in existing:
                existing.add(paths["tpg"] + "/enable")
            steps = lio.remove_steps(p["iqn"], p["name"], p["address"], p["port"], p["configfs"], existing)
            _run(steps)
            os.unlink(record)
        if p["restore_host"] and os.path.exists(host_record):
            with open(host_record) as handle:
                before = json.load(handle)
            host_steps, notes, done = lio.restore_steps(before, _host_state(p), p["configfs"])
            _run(host_steps, module)
            for note in notes:
                module.warn("storage_iscsi_target: %s" % note)
            steps += host_steps
            if done:
                os.unlink(host_record)
        module.exit_json(changed=bool(steps), steps=steps, notes=notes)
    except ValueError as exc:
        module.fail_json(msg="storage_iscsi_target: %s" % exc)
    except OSError as exc:
        module.fail_json(msg="storage_iscsi_target: configfs step failed: %s" % exc)


if __name__ == "__main__":
    main()
