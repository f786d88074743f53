#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: disk_safety
short_description: Refuse to touch data disks that hold anything, unless the inventory lists them for wiping
description:
  - Inspects the block devices a storage role is about to write and stops the run, before anything is
    written, when one of them holds a partition table, a filesystem, swap, an LVM, ZFS, Ceph BlueStore or
    RAID label (any signature libblkid knows) and is not named in the inventory's wipe list, or when one
    is in use (mounted, held by a dm/md device, or opened exclusively by another program) whether listed
    or not.
  - Paths may be symlinks (C(/dev/disk/by-id/...)); each is resolved to its device node. Two paths naming
    the same device, a path that does not exist, a non-block device, and a wipe-list entry that does not
    exist or resolves to a device that is not one of O(devices) stop the run too.
  - "Evidence per device: C(wipefs --no-act --json) on the device and on each of its partitions (libblkid
    probes the device itself: every signature, also the backup GPT, all ZFS labels), C(lsblk --json --bytes)
    for size, model, rotational, partitions, stacked devices and mount points, C(/sys/class/block/*/holders),
    and an exclusive read-only open (C(O_EXCL), EBUSY when the kernel or a program holds the device).
    lsblk's FSTYPE comes from the udev database and is only extra evidence (see the lsblk_parse module)."
  - On failure the message is one sentence naming every refused device, what is on it, and the variable
    and path to add to allow it.
  - Reads only; never writes a device. Supports check mode.
version_added: "1.2.0"
author:
  - Infrastructure testbed contributors
options:
  devices:
    description:
      - The devices the role will write (C(/dev/disk/by-id/...) paths preferred, C(/dev/...) accepted).
    type: list
    elements: str
    required: true
  wipe_devices:
    description:
      - The inventory's explicit allow-list of devices that may be wiped when they hold signatures.
      - Each entry must resolve to one of O(devices).
    type: list
    elements: str
    default: []
  devices_variable:
    description: The inventory variable O(devices) came from, named in the failure message.
    type: str
    default: storage_disks_devices
  wipe_variable:
    description: The inventory variable O(wipe_devices) came from, named in the failure message.
    type: str
    default: storage_wipe_devices
requirements:
  - util-linux (wipefs, lsblk) 2.37 or newer (JSON C(mountpoints)); 2.38 is what the fixtures are from.
notes:
  - Run as root; wipefs and the exclusive open need read access to the device nodes.
seealso:
  - module: wipefs_parse
  - module: lsblk_parse
"""

EXAMPLES = r"""
- name: Check the data disks before anything writes them
  disk_safety:
    devices:
      - /dev/disk/by-id/ata-WDC_WD10EZEX-00BN5A0_WD-WCC3F1234567
      - /dev/disk/by-id/ata-WDC_WD10EZEX-00BN5A0_WD-WCC3F7654321
    wipe_devices: "{{ storage_wipe_devices }}"
  register: __storage_disks_safety

- name: Devices to wipe
  ansible.builtin.debug:
    msg: "{{ __storage_disks_safety.devices | selectattr('needs_wipe') | map(attribute='resolved') | list }}"
"""

RETURN = r"""
check_mode:
  description:
    - Whether the task ran in check mode (task-level C(check_mode) included, which the C(ansible_check_mode)
      variable does not reflect); a role tells from it whether its wipe commands were skipped.
  returned: success
  type: bool
ok:
  description: True when every device may be written (the module fails otherwise).
  returned: always
  type: bool
problems:
  description: One phrase per problem found (empty when ok).
  returned: always
  type: list
  elements: str
devices:
  description: One entry per distinct device of O(devices), in order.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The path as given.
      type: str
      sample: /dev/disk/by-id/virtio-storage-a
    resolved:
      description: The device node it resolves to.
      type: str
      sample: /dev/vdb
    by_id:
      description: The host's C(/dev/disk/by-id) links to the device.
      type: list
      elements: str
    type:
      description: lsblk's TYPE (disk, loop, part, ...).
      type: str
    size_bytes:
      description: Size in bytes.
      type: int
    model:
      description: Model (null for virtual devices without one).
      type: str
    serial:
      description: Serial number, if any.
      type: str
    wwn:
      description: WWN, if any.
      type: str
    rotational:
      description: Whether the kernel reports a rotational device.
      type: bool
    read_only:
      description: Whether the device is read-only.
      type: bool
    partitions:
      description: Its partitions' device paths.
      type: list
      elements: str
    signatures:
      description:
        - Every signature found on the device and its partitions - C(device), C(type), C(offset_bytes),
          C(label), C(uuid), C(kind) (partition_table, filesystem, lvm, zfs, ceph, raid, swap, crypto,
          cache or other) and C(description).
      type: list
      elements: dict
    signature_types:
      description: The distinct signature types (C(ext4), C(gpt), C(LVM2_member), C(zfs_member), C(ceph_bluestore)...).
      type: list
      elements: str
    summary:
      description: What is on the device, one phrase per kind of signature.
      type: list
      elements: str
    mounted:
      description: C(<device> on <mountpoint>) for the device and its partitions.
      type: list
      elements: str
    holders:
      description: Devices stacked on it (sysfs holders, lsblk children that are not partitions).
      type: list
      elements: str
    busy:
      description: The exclusive open failed with EBUSY.
      type: bool
    listed:
      description: Named in O(wipe_devices).
      type: bool
    listed_as:
      description: The O(wipe_devices) entry that names it.
      type: str
    allowed:
      description: The role may write it.
      type: bool
    needs_wipe:
      description: It holds signatures and is listed, so the role wipes it before use.
      type: bool
    reason:
      description: Why it is allowed or refused.
      type: str
"""

import errno  # noqa: E402
import glob  # noqa: E402
import os  # noqa: E402
import stat  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_disk_safety import check  # noqa: E402
from ansible.module_utils.testbed_parse import ParseError  # noqa: E402
from ansible.module_utils.testbed_parse_lsblk import COLUMNS  # noqa: E402
from ansible.module_utils.testbed_parse_lsblk import parse as parse_lsblk  # noqa: E402
from ansible.module_utils.testbed_parse_wipefs import parse as parse_wipefs  # noqa: E402

BY_ID = "/dev/disk/by-id"
SYS_BLOCK = "/sys/class/block"


def resolve(path):
    """The device node a path names, or None when it does not exist (a dangling link too)."""
    if not os.path.exists(path):
        return None
    return os.path.realpath(path)


def is_block(path):
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


def busy(path):
    """True when an exclusive read-only open fails with EBUSY (mounted, claimed by a driver or a program)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            return True
        raise
    os.close(fd)
    return False


def holders(kname):
    return sorted("/dev/" + os.path.basename(entry) for entry in glob.glob(os.path.join(SYS_BLOCK, kname, "holders", "*")))


def by_id_links(target):
    links = []
    for link in sorted(glob.glob(os.path.join(BY_ID, "*"))):
        if os.path.realpath(link) == target:
            links.append(link)
    return links


def run_tool(module, argv, parser, label):
    rc, out, err = module.run_command(argv)
    try:
        parsed = parser(out, source=label)
    except ParseError as exc:
        module.fail_json(msg="%s (exit %d, stderr: %s)" % (exc, rc, err.strip()[:300] or "none"), cmd=argv)
    if rc != 0:
        module.fail_json(msg="%s exited %d: %s" % (" ".join(argv), rc, err.strip()[:300]), cmd=argv)
    return parsed


def inspect(module, target, wipefs_bin, lsblk_bin):
    info = {"block": is_block(target), "by_id": by_id_links(target)}
    if not info["block"]:
        return info
    lsblk = run_tool(module, [lsblk_bin, "--json", "--bytes", "--output", ",".join(COLUMNS), target],
                     parse_lsblk, "of %s" % target)
    info["lsblk"] = lsblk
    flat = lsblk["details"]["flat"]
    partitions = [d for d in flat if d["depth"] == 1 and d["type"] == "part"]
    info["wipefs"] = {}
    for path in [target] + [d["path"] for d in partitions]:
        info["wipefs"][path] = run_tool(module, [wipefs_bin, "--no-act", "--json", path], parse_wipefs,
                                        "of %s" % path)
    found = []
    for device in flat[:1] + partitions:
        found.extend(holders(device["kname"] or device["name"]))
    info["holders"] = sorted(set(found))
    try:
        info["busy"] = any(busy(path) for path in [target] + [d["path"] for d in partitions])
    except OSError as exc:
        module.fail_json(msg="disk safety: cannot open %s read-only to see whether it is in use: %s" % (target, exc))
    return info


def main():
    module = AnsibleModule(
        argument_spec=dict(
            devices=dict(type="list", elements="str", required=True),
            wipe_devices=dict(type="list", elements="str", default=[]),
            devices_variable=dict(type="str", default="storage_disks_devices"),
            wipe_variable=dict(type="str", default="storage_wipe_devices"),
        ),
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LANG": "C", "LC_ALL": "C"}
    params = module.params
    if not params["devices"]:
        module.fail_json(msg="disk safety: %s is empty: name the data disks (by-id paths) the role may use"
                         % params["devices_variable"])
    wipefs_bin = module.get_bin_path("wipefs", required=True)
    lsblk_bin = module.get_bin_path("lsblk", required=True)

    resolved = dict((path, resolve(path)) for path in params["devices"] + params["wipe_devices"])
    inspections = {}
    for path in params["devices"]:
        target = resolved[path]
        if target is not None and target not in inspections:
            inspections[target] = inspect(module, target, wipefs_bin, lsblk_bin)

    result = check(params["devices"], params["wipe_devices"], resolved, inspections,
                   devices_variable=params["devices_variable"], wipe_variable=params["wipe_variable"])
    if not result["ok"]:
        module.fail_json(msg=result["msg"], ok=False, problems=result["problems"], devices=result["devices"])
    module.exit_json(changed=False, ok=True, problems=[], devices=result["devices"], check_mode=module.check_mode)


if __name__ == "__main__":
    main()
