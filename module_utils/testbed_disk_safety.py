# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The disk-safety rule of the storage roles, as pure logic (no host access).

A role never writes a device that holds a partition table, a filesystem, an LVM,
ZFS, Ceph or RAID label (any signature libblkid knows) unless the inventory names
that device explicitly for wiping; a device that is mounted, held by another
device (dm, md, ...) or opened exclusively by someone (a ZFS pool, a running OSD)
is never written, even when listed.  Otherwise the run stops before anything is
touched, with one sentence naming every refused device, what is on it and how to
allow it.

Only whole disks are accepted (lsblk TYPE ``disk``; ``loop`` only when the caller
allows loop devices, for a lab made of loop devices): a partition, an LVM logical
volume, a dm-crypt or other device-mapper device, an md array, a ZFS zvol or a
mapped Ceph RBD image (both TYPE ``disk``, told by their kernel names and, for a
zvol, its ``/dev/zvol`` link) is refused with what it is and what to give instead.
A disk whose partitions or stacked devices are mounted, active swap, LVM logical
volumes, dm-crypt mappings or md arrays is in use and refused, listed or not; so
is a pair of given devices where one is inside the other (a disk and its own
partition).  A whole disk has no block parent (only partitions and stacked
devices do, and those are refused by their type), so "a parent in use" is
covered by the type rule.

:func:`confirm` compares the devices checked with the same paths read again
right before the first write: a stable path that now resolves to another device
(another kernel name, size, serial or WWN) stops the run.

``library/disk_safety.py`` gathers the evidence (path resolution, lsblk, wipefs on
the device and on each of its partitions, sysfs holders, an exclusive-open probe)
and hands it to :func:`check`.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.testbed_parse_wipefs import classify

STABLE_PREFIXES = ("/dev/disk/by-id/", "/dev/disk/by-path/", "/dev/disk/by-uuid/", "/dev/disk/by-partuuid/")

# lsblk TYPE -> what the device is, for the devices that are not whole disks.
KIND_BY_TYPE = {
    "part": "a partition",
    "lvm": "an LVM logical volume",
    "crypt": "a dm-crypt mapping",
    "dm": "a device-mapper device",
    "mpath": "a multipath device (device-mapper)",
    "md": "an md RAID array",
    "linear": "an md linear array",
    "multipath": "an md multipath array",
    "rom": "a read-only (optical) device",
}
# Whole block devices the kernel calls "disk" that are volumes of another storage system.
_ZVOL = re.compile(r"^zd[0-9]+$")
_RBD = re.compile(r"^rbd[0-9]+$")
_SWAP = "[SWAP]"


def what_type(lsblk_type):
    """'an LVM logical volume' for lsblk TYPE lvm, 'an md raid1 array' for raid1, ..."""
    if lsblk_type in KIND_BY_TYPE:
        return KIND_BY_TYPE[lsblk_type]
    if lsblk_type and lsblk_type.startswith("raid"):
        return "an md %s array" % lsblk_type
    return "a device of type %s" % lsblk_type


def human_size(size_bytes):
    """'4 GiB', '64 MiB', '1.5 GiB', '932 GiB', '2 TiB' (binary units; one decimal below 100)."""
    if size_bytes is None:
        return "size unknown"
    value = float(size_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            break
        value /= 1024
    if unit == "B":
        return "%d B" % size_bytes
    text = ("%.1f" % value).rstrip("0").rstrip(".") if value < 100 else "%.0f" % value
    return "%s %s" % (text, unit)


def _unique(items):
    seen = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def describe_signature(signature, main_device):
    """'an ext4 filesystem labelled "data"', with the partition when it is not on the disk itself."""
    text = signature["description"]
    if signature.get("label"):
        if signature["type"] == "zfs_member":
            text += ' of pool "%s"' % signature["label"]
        else:
            text += ' labelled "%s"' % signature["label"]
    if signature.get("device") and signature["device"] != main_device:
        text += " on partition %s" % signature["device"]
    return text


def suggest_name(entry):
    """The name to add to the wipe list: a stable one when the host has it."""
    if entry["path"].startswith(STABLE_PREFIXES):
        return entry["path"]
    if entry.get("by_id"):
        return entry["by_id"][0]
    return entry["path"]


def _signatures(resolved, inspection):
    """Every signature on the device and its partitions, as dicts with device paths."""
    signatures = []
    for device_path, parsed in sorted((inspection.get("wipefs") or {}).items(),
                                      key=lambda item: (item[0] != resolved, item[0])):
        for signature in parsed["details"]["signatures"]:
            entry = dict(signature)
            entry["device"] = device_path
            signatures.append(entry)
    # udev's view (lsblk FSTYPE/PTTYPE) is extra evidence only: wipefs probes the device
    # itself, but a signature udev reports and wipefs does not is still not "nothing".
    seen_types = set((s["device"], s["type"]) for s in signatures)
    for device in (inspection.get("lsblk") or {}).get("details", {}).get("flat", []):
        for key in ("pttype", "fstype"):
            sig_type = device.get(key)
            if sig_type and (device["path"], sig_type) not in seen_types:
                kind, description = classify(sig_type, "partition-table" if key == "pttype" else None)
                signatures.append({"device": device["path"], "type": sig_type, "offset_bytes": None,
                                   "label": device.get("label") if key == "fstype" else None,
                                   "uuid": device.get("uuid") if key == "fstype" else None, "usage": None,
                                   "kind": kind, "description": description + " (reported by udev)"})
                seen_types.add((device["path"], sig_type))
    return signatures


def _entry(path, resolved, inspection, listed_as):
    lsblk = (inspection.get("lsblk") or {}).get("details", {})
    flat = lsblk.get("flat", [])
    top = flat[0] if flat else {}
    partitions = [d["path"] for d in flat if d["depth"] == 1 and d["type"] == "part"]
    stacked = [d for d in flat if d["depth"] >= 1 and d["type"] != "part"]
    mounted = ["%s on %s" % (d["path"], point) for d in flat for point in d["mountpoints"] if point != _SWAP]
    swap = [d["path"] for d in flat if _SWAP in d["mountpoints"]]
    # sysfs names a holder by its kernel name (/dev/dm-0), lsblk by its path (/dev/mapper/vg0-data): one entry
    stacked_paths = set(d["path"] for d in stacked) | set("/dev/" + d["kname"] for d in stacked if d.get("kname"))
    holders = _unique(["%s (%s)" % (d["path"], what_type(d["type"])) for d in stacked]
                      + [h for h in (inspection.get("holders") or []) if h not in stacked_paths])
    signatures = _signatures(resolved, inspection)
    return {
        "path": path,
        "resolved": resolved,
        "by_id": list(inspection.get("by_id") or []),
        "kname": top.get("kname") or top.get("name"),
        "type": top.get("type"),
        "parent": top.get("pkname"),
        "size_bytes": top.get("size_bytes"),
        "model": top.get("model"),
        "serial": top.get("serial"),
        "wwn": top.get("wwn"),
        "rotational": top.get("rotational"),
        "read_only": top.get("read_only"),
        "partitions": partitions,
        "inside": [d["path"] for d in flat[1:]] + ["/dev/" + d["kname"] for d in flat[1:] if d.get("kname")],
        "zvol_links": list(inspection.get("zvol_links") or []),
        "signatures": signatures,
        "signature_types": _unique(s["type"] for s in signatures),
        "summary": _unique(describe_signature(s, resolved) for s in signatures),
        "mounted": mounted,
        "swap": swap,
        "holders": holders,
        "busy": bool(inspection.get("busy")),
        "owned_by": None,
        "listed": listed_as is not None,
        "listed_as": listed_as,
        "allowed": False,
        "needs_wipe": False,
        "reason": None,
        "plan": None,
    }


def _join(items):
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return "%s and %s" % (", ".join(items[:-1]), items[-1])


def not_a_whole_disk(entry, allow_loop=False, loop_variable="storage_disks_allow_loop"):
    """Why the device is not a whole disk the role may take, or None when it is one.

    ``entry``: as built by :func:`check` (``type``, ``kname``, ``parent``, ``zvol_links``).
    """
    kname = entry.get("kname") or ""
    lsblk_type = entry.get("type")
    if _ZVOL.match(kname) or entry.get("zvol_links"):
        links = " (%s)" % _join(entry["zvol_links"]) if entry.get("zvol_links") else ""
        return ("is a ZFS zvol%s, a volume of another pool, not a disk (give a whole disk; a zvol is never "
                "used raw)" % links)
    if _RBD.match(kname):
        return "is a mapped Ceph RBD image, not a disk (give a whole disk)"
    if lsblk_type == "disk":
        return None
    if lsblk_type == "loop":
        if allow_loop:
            return None
        return ("is a loop device, not a disk (loop devices are taken only when %s is true, for a lab made of "
                "loop devices: give a whole disk)" % loop_variable)
    if lsblk_type == "part":
        parent = "/dev/" + entry["parent"] if entry.get("parent") else "a disk"
        return "is a partition of %s; give the whole disk, not a partition" % parent
    return "is %s, not a whole disk (give a whole disk)" % what_type(lsblk_type)


def _owned_zfs(entry, owned_zfs_pools):
    """The owned ZFS pool the device is a member of, when all its ZFS labels name one of them."""
    pools = _unique(s.get("label") for s in entry["signatures"] if s["type"] == "zfs_member")
    if pools and all(pool in owned_zfs_pools for pool in pools):
        return pools
    return None


def plan_line(entry):
    """'<path> (<node>): model M, serial S, 4 GiB - what happens to it', one readable line."""
    named = entry["path"] if entry["path"] == entry["resolved"] else "%s (%s)" % (entry["path"], entry["resolved"])
    size = human_size(entry.get("size_bytes"))
    if entry.get("size_bytes") is not None:
        size += " (%d bytes)" % entry["size_bytes"]
    line = "%s: model %s, serial %s, %s" % (named, entry.get("model") or "none", entry.get("serial") or "none", size)
    if entry["needs_wipe"]:
        return "%s - will be wiped (holds %s)" % (line, _join(entry["summary"]))
    if entry["allowed"]:
        return "%s - blank, used as it is" % line
    return "%s - refused: %s" % (line, entry["reason"])


def check(devices, wipe_devices, resolved, inspections,
          devices_variable="storage_disks_devices", wipe_variable="storage_wipe_devices",
          allow_loop=False, loop_variable="storage_disks_allow_loop", owned_zfs_pools=()):
    """Apply the disk-safety rule.

    ``devices``: the paths the role will write, as the inventory gives them;
    ``wipe_devices``: the inventory's explicit wipe list;
    ``resolved``: every path of both lists -> the device node it resolves to, or None
    when it does not exist; ``inspections``: resolved path -> ``{"block": bool,
    "lsblk": lsblk parse result, "wipefs": {device or partition path: wipefs parse
    result}, "holders": [...], "busy": bool, "by_id": [...], "zvol_links": [...]}``;
    ``allow_loop``: accept lsblk TYPE loop (a lab of loop devices) beside TYPE disk;
    ``owned_zfs_pools``: for a read-only preflight only: a disk that is busy only
    because it is a member of one of these pools (the caller's own, which its builder
    role reuses or destroys before writing) is not refused for being busy.

    Returns ``{"ok", "msg", "problems", "devices", "plan"}``; ``msg`` is one sentence
    naming every problem (None when ok); ``plan`` one line per device (path, model,
    serial, size, and whether it is wiped, used as it is, or refused).
    """
    problems = []
    wipe_by_device = _wipe_targets(devices, wipe_devices, resolved, devices_variable, wipe_variable, problems)
    entries = []
    first_name = {}
    for path in devices:
        target = resolved.get(path)
        if target is None:
            problems.append("%s (in %s) does not exist" % (path, devices_variable))
            continue
        if target in first_name:
            problems.append("%s and %s (in %s) are the same device %s (name each disk once)"
                            % (first_name[target], path, devices_variable, target))
            continue
        first_name[target] = path
        entry = _entry(path, target, inspections.get(target) or {}, wipe_by_device.get(target))
        entries.append(entry)
        problem = _judge(entry, inspections.get(target) or {}, allow_loop, loop_variable, wipe_variable,
                         owned_zfs_pools)
        if problem:
            problems.append(problem)
    _refuse_nested(entries, devices_variable, problems)
    for entry in entries:
        entry["plan"] = plan_line(entry)
        del entry["inside"]
    msg = None
    if problems:
        msg = "Disk safety check: nothing was written, because %s." % "; ".join(problems)
    return {"ok": not problems, "msg": msg, "problems": problems, "devices": entries,
            "plan": [entry["plan"] for entry in entries]}


def _wipe_targets(devices, wipe_devices, resolved, devices_variable, wipe_variable, problems):
    """The wipe list's devices (resolved device -> its name there); a name outside the devices is a problem."""
    wipe_by_device = {}
    device_targets = set(resolved.get(path) for path in devices if resolved.get(path))
    for wipe_path in wipe_devices:
        target = resolved.get(wipe_path)
        if target is None:
            problems.append("%s names %s, which does not exist (fix the path or remove it)"
                            % (wipe_variable, wipe_path))
        elif target not in device_targets:
            problems.append("%s names %s, which resolves to %s, not one of the devices in %s "
                            "(the wipe list names only this role's own disks: fix or remove it)"
                            % (wipe_variable, wipe_path, target, devices_variable))
        else:
            wipe_by_device.setdefault(target, wipe_path)
    return wipe_by_device


def _in_use(entry, owned_zfs_pools):
    """Why the device is in use ([] when it is not); notes a pool of the caller's own in ``owned_by``."""
    in_use = []
    if entry["mounted"]:
        in_use.append("mounted (%s)" % _join(entry["mounted"]))
    if entry["swap"]:
        in_use.append("active swap (%s)" % _join(entry["swap"]))
    if entry["holders"]:
        in_use.append("held by %s" % _join(entry["holders"]))
    if entry["busy"] and not in_use:
        owned = _owned_zfs(entry, owned_zfs_pools)
        if owned:
            entry["owned_by"] = "ZFS pool %s" % _join(owned)
        else:
            in_use.append("open exclusively by another program (a mounted filesystem, an imported "
                          "ZFS pool, a running OSD...)")
    return in_use


def _judge(entry, inspection, allow_loop, loop_variable, wipe_variable, owned_zfs_pools):
    """One device's verdict, kept in ``entry`` (allowed, needs_wipe, reason); the problem sentence or None."""
    path, target = entry["path"], entry["resolved"]
    named = path if path == target else "%s (%s)" % (target, path)
    if not inspection.get("block", False):
        entry["reason"] = "not a block device"
        return "%s is not a block device" % named
    wrong_kind = not_a_whole_disk(entry, allow_loop=allow_loop, loop_variable=loop_variable)
    if wrong_kind:
        entry["reason"] = "not a whole disk: " + wrong_kind
        return "%s %s" % (named, wrong_kind)
    if entry["read_only"] or entry["type"] == "rom":
        entry["reason"] = "read-only device"
        return "%s is a read-only device" % named
    in_use = _in_use(entry, owned_zfs_pools)
    what = (" and holds %s" % _join(entry["summary"])) if entry["summary"] else ""
    if in_use:
        entry["reason"] = "in use: " + "; ".join(in_use)
        return ("%s is %s%s (a device in use is never wiped, even when listed in %s: "
                "free it or pick another disk)" % (named, " and ".join(in_use), what, wipe_variable))
    owned_note = (" (in use by %s, this run's own: its builder role reuses or destroys it before "
                  "writing)" % entry["owned_by"]) if entry["owned_by"] else ""
    if entry["signatures"] or entry["partitions"]:
        if not entry["summary"]:
            entry["summary"] = ["partitions %s" % _join(entry["partitions"])]
        if entry["listed"]:
            entry["allowed"] = True
            entry["needs_wipe"] = True
            entry["reason"] = "listed in %s as %s: will be wiped (holds %s)%s" % (
                wipe_variable, entry["listed_as"], _join(entry["summary"]), owned_note)
            return None
        entry["reason"] = "holds %s and is not in %s" % (_join(entry["summary"]), wipe_variable)
        return ("%s holds %s and is not in %s (to allow wiping it, add %s to %s)"
                % (named, _join(entry["summary"]), wipe_variable, suggest_name(entry), wipe_variable))
    entry["allowed"] = True
    entry["reason"] = "blank: no signature, partition, mount or holder found" + owned_note
    return None


def _refuse_nested(entries, devices_variable, problems):
    """A given device inside another given one (a disk and its own partition, or a device stacked on
    it): whatever wipes the outer one destroys the inner one - both refused."""
    for outer in entries:
        for inner in entries:
            if inner is not outer and inner["resolved"] in outer["inside"]:
                outer_named = outer["path"] if outer["path"] == outer["resolved"] else "%s (%s)" % (
                    outer["resolved"], outer["path"])
                problems.append("%s (in %s) is inside %s, also in %s (name the whole disk once, never a disk "
                                "together with its partition)" % (inner["path"], devices_variable, outer_named,
                                                                  devices_variable))
                for entry in (inner, outer):
                    entry["allowed"] = False
                    entry["needs_wipe"] = False
                    entry["reason"] = "%s is inside %s" % (inner["path"], outer["path"])


def confirm(expected, devices):
    """The phrases for the disks that changed between the check and the write.

    ``expected``: the devices as the check returned them (``path``, ``resolved``,
    ``size_bytes``, ``serial``, ``wwn``), ``devices``: the same paths read again right
    before the first write (the ``devices`` of a second :func:`check`). A path that
    resolves to another device node, or to a device of another size, serial or WWN,
    is a problem: the name now points at another disk than the one checked and shown
    in the plan. Returns a list of phrases, empty when every disk is the same.
    """
    now = dict((entry["path"], entry) for entry in devices)
    problems = []
    for before in expected:
        path = before["path"]
        after = now.get(path)
        if after is None:
            problems.append("%s was checked as %s but is gone now" % (path, before.get("resolved")))
            continue
        changed = []
        if after.get("resolved") != before.get("resolved"):
            changed.append("it resolves to %s (was %s)" % (after.get("resolved"), before.get("resolved")))
        for key, label in (("size_bytes", "its size is %s bytes (was %s)"), ("serial", "its serial is %s (was %s)"),
                           ("wwn", "its WWN is %s (was %s)")):
            if before.get(key) is not None and after.get(key) != before.get(key):
                changed.append(label % (after.get(key), before.get(key)))
        if changed:
            problems.append("%s no longer names the disk that was checked: %s (run again: the disks are "
                            "checked anew)" % (path, _join(changed)))
    return problems
