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
  - Only whole disks are taken (lsblk TYPE C(disk); C(loop) only with O(allow_loop)). A partition (the
    message names its disk), an LVM logical volume, a dm-crypt or other device-mapper device, an md array,
    a ZFS zvol (C(/dev/zdN) or a C(/dev/zvol/...) link) and a mapped Ceph RBD image are refused, listed or
    not; so is a disk whose partitions or stacked devices are mounted, active swap, LVM logical volumes,
    dm-crypt mappings or md arrays, and a pair of given devices where one is inside the other (a disk and
    its own partition).
  - With O(expected) (the RV(devices) of an earlier call), the same paths are read again right before the
    caller writes, and the run stops when one now resolves to another device node, or to a device of
    another size, serial or WWN, than the one checked.
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
  allow_loop:
    description:
      - Take loop devices (lsblk TYPE C(loop)) beside whole disks, for a lab whose data disks are loop
        devices. Off, a loop device is refused naming O(loop_variable).
    type: bool
    default: false
  loop_variable:
    description: The inventory variable O(allow_loop) came from, named in the failure message.
    type: str
    default: storage_disks_allow_loop
  owned_zfs_pools:
    description:
      - For a read-only preflight only (the caller writes nothing after it). A disk that is open exclusively
        only because it is a member of one of these ZFS pools (all its C(zfs_member) labels name one of
        them; nothing mounted, no holder) is not refused for being busy; its signatures still need
        O(wipe_devices). The caller's builder role reuses or destroys that pool, and checks the disks again
        without this option before it writes.
    type: list
    elements: str
    default: []
  expected:
    description:
      - "The RV(devices) entries of an earlier call (at least C(path), C(resolved), C(size_bytes), C(serial),
        C(wwn)). Each C(path) must be in O(devices) and still name the same device: the same device node,
        size, serial and WWN (a serial or WWN that was unknown is not compared). Otherwise the run stops."
      - Given right before a write, so that the write goes through the stable path the operator gave and
        still reaches the disk that was checked and shown in RV(plan).
    type: list
    elements: dict
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

- name: The plan, one line per disk (path, model, serial, size, what happens to it)
  ansible.builtin.debug:
    msg: "{{ __storage_disks_safety.plan }}"

# Right before the first write: the same stable paths must still name the disks checked.
- name: Read the disks to wipe again
  disk_safety:
    devices: "{{ __storage_disks_safety.devices | selectattr('needs_wipe') | map(attribute='path') | list }}"
    wipe_devices: "{{ __storage_disks_safety.devices | selectattr('needs_wipe') | map(attribute='path') | list }}"
    expected: "{{ __storage_disks_safety.devices | selectattr('needs_wipe') | list }}"
  register: __storage_disks_confirm
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
plan:
  description:
    - One line per distinct device of O(devices), in order - the path, its device node, model, serial and
      size, and whether it will be wiped (with what it holds), used as it is, or refused (and why).
  returned: always
  type: list
  elements: str
  sample:
    - "/dev/disk/by-id/virtio-tb-disk0 (/dev/vdb): model none, serial tb-disk0, 4 GiB (4294967296 bytes) -
      will be wiped (holds a Ceph BlueStore OSD label)"
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
    kname:
      description: The kernel name (C(sdb), C(vdb), C(loop0), C(zd0)).
      type: str
    parent:
      description: lsblk's PKNAME, the kernel name of the disk a partition is on (null for a whole disk).
      type: str
    zvol_links:
      description: The C(/dev/zvol/...) links to the device (a ZFS zvol; empty otherwise).
      type: list
      elements: str
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
    swap:
      description: Its partitions (or itself) that are active swap (lsblk mount point C([SWAP])).
      type: list
      elements: str
    holders:
      description:
        - Devices stacked on it (lsblk children that are not partitions, with what they are, and sysfs holders).
      type: list
      elements: str
    owned_by:
      description: The O(owned_zfs_pools) pool it is busy in (null otherwise).
      type: str
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
    plan:
      description: Its line of RV(plan).
      type: str
"""

import errno  # noqa: E402
import glob  # noqa: E402
import os  # noqa: E402
import stat  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_disk_safety import check, confirm  # noqa: E402
from ansible.module_utils.testbed_parse import ParseError  # noqa: E402
from ansible.module_utils.testbed_parse_lsblk import COLUMNS  # noqa: E402
from ansible.module_utils.testbed_parse_lsblk import parse as parse_lsblk  # noqa: E402
from ansible.module_utils.testbed_parse_wipefs import parse as parse_wipefs  # noqa: E402

BY_ID = "/dev/disk/by-id"
ZVOL = "/dev/zvol"
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


def zvol_links(target):
    """The /dev/zvol/<pool>/<volume> links (udev's) that resolve to the device."""
    links = []
    for root, _dirs, files in os.walk(ZVOL):
        for name in sorted(files):
            link = os.path.join(root, name)
            if os.path.realpath(link) == target:
                links.append(link)
    return sorted(links)


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
    info = {"block": is_block(target), "by_id": by_id_links(target), "zvol_links": zvol_links(target)}
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
            allow_loop=dict(type="bool", default=False),
            loop_variable=dict(type="str", default="storage_disks_allow_loop"),
            owned_zfs_pools=dict(type="list", elements="str", default=[]),
            expected=dict(type="list", elements="dict"),
        ),
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LANG": "C", "LC_ALL": "C"}
    params = module.params
    if not params["devices"]:
        module.fail_json(msg="disk safety: %s is empty: name the data disks (by-id paths) the role may use"
                         % params["devices_variable"])
    for index, entry in enumerate(params["expected"] or []):
        if not isinstance(entry.get("path"), str) or "resolved" not in entry:
            module.fail_json(msg="disk safety: expected[%d] has no path and resolved (give the devices an earlier "
                             "disk_safety call returned)" % index)
        if entry["path"] not in params["devices"]:
            module.fail_json(msg="disk safety: expected[%d] is %s, which is not in devices (confirm only the "
                             "devices read again)" % (index, entry["path"]))
    wipefs_bin = module.get_bin_path("wipefs", required=True)
    lsblk_bin = module.get_bin_path("lsblk", required=True)

    resolved = dict((path, resolve(path)) for path in params["devices"] + params["wipe_devices"])
    inspections = {}
    for path in params["devices"]:
        target = resolved[path]
        if target is not None and target not in inspections:
            inspections[target] = inspect(module, target, wipefs_bin, lsblk_bin)

    result = check(params["devices"], params["wipe_devices"], resolved, inspections,
                   devices_variable=params["devices_variable"], wipe_variable=params["wipe_variable"],
                   allow_loop=params["allow_loop"], loop_variable=params["loop_variable"],
                   owned_zfs_pools=params["owned_zfs_pools"])
    if params["expected"] is not None:
        changed = confirm(params["expected"], result["devices"])
        if changed:
            result["problems"] = changed + result["problems"]
            result["ok"] = False
            result["msg"] = "Disk safety check: nothing was written, because %s." % "; ".join(result["problems"])
    if not result["ok"]:
        module.fail_json(msg=result["msg"], ok=False, problems=result["problems"], devices=result["devices"],
                         plan=result["plan"])
    module.exit_json(changed=False, ok=True, problems=[], devices=result["devices"], plan=result["plan"],
                     check_mode=module.check_mode)


if __name__ == "__main__":
    main()
