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

``library/disk_safety.py`` gathers the evidence (path resolution, lsblk, wipefs on
the device and on each of its partitions, sysfs holders, an exclusive-open probe)
and hands it to :func:`check`.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.testbed_parse_wipefs import classify

STABLE_PREFIXES = ("/dev/disk/by-id/", "/dev/disk/by-path/", "/dev/disk/by-uuid/", "/dev/disk/by-partuuid/")


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
    stacked = ["%s (%s)" % (d["path"], d["type"]) for d in flat if d["depth"] >= 1 and d["type"] != "part"]
    mounted = ["%s on %s" % (d["path"], point) for d in flat for point in d["mountpoints"]]
    holders = _unique(list(inspection.get("holders") or []) + stacked)
    signatures = _signatures(resolved, inspection)
    return {
        "path": path,
        "resolved": resolved,
        "by_id": list(inspection.get("by_id") or []),
        "type": top.get("type"),
        "size_bytes": top.get("size_bytes"),
        "model": top.get("model"),
        "serial": top.get("serial"),
        "wwn": top.get("wwn"),
        "rotational": top.get("rotational"),
        "read_only": top.get("read_only"),
        "partitions": partitions,
        "signatures": signatures,
        "signature_types": _unique(s["type"] for s in signatures),
        "summary": _unique(describe_signature(s, resolved) for s in signatures),
        "mounted": mounted,
        "holders": holders,
        "busy": bool(inspection.get("busy")),
        "listed": listed_as is not None,
        "listed_as": listed_as,
        "allowed": False,
        "needs_wipe": False,
        "reason": None,
    }


def _join(items):
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return "%s and %s" % (", ".join(items[:-1]), items[-1])


def check(devices, wipe_devices, resolved, inspections,
          devices_variable="storage_disks_devices", wipe_variable="storage_wipe_devices"):
    """Apply the disk-safety rule.

    ``devices``: the paths the role will write, as the inventory gives them;
    ``wipe_devices``: the inventory's explicit wipe list;
    ``resolved``: every path of both lists -> the device node it resolves to, or None
    when it does not exist; ``inspections``: resolved path -> ``{"block": bool,
    "lsblk": lsblk parse result, "wipefs": {device or partition path: wipefs parse
    result}, "holders": [...], "busy": bool, "by_id": [...]}``.

    Returns ``{"ok", "msg", "problems", "devices"}``; ``msg`` is one sentence naming
    every problem (None when ok).
    """
    problems = []
    entries = []

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
        inspection = inspections.get(target) or {}
        entry = _entry(path, target, inspection, wipe_by_device.get(target))
        entries.append(entry)
        named = path if path == target else "%s (%s)" % (target, path)

        if not inspection.get("block", False):
            entry["reason"] = "not a block device"
            problems.append("%s is not a block device" % named)
            continue
        if entry["read_only"] or entry["type"] == "rom":
            entry["reason"] = "read-only device"
            problems.append("%s is a read-only device" % named)
            continue
        in_use = []
        if entry["mounted"]:
            in_use.append("mounted (%s)" % _join(entry["mounted"]))
        if entry["holders"]:
            in_use.append("held by %s" % _join(entry["holders"]))
        if entry["busy"] and not in_use:
            in_use.append("open exclusively by another program (a mounted filesystem, an imported "
                          "ZFS pool, a running OSD...)")
        what = (" and holds %s" % _join(entry["summary"])) if entry["summary"] else ""
        if in_use:
            entry["reason"] = "in use: " + "; ".join(in_use)
            problems.append("%s is %s%s (a device in use is never wiped, even when listed in %s: "
                            "free it or pick another disk)" % (named, " and ".join(in_use), what, wipe_variable))
            continue
        if entry["signatures"] or entry["partitions"]:
            if not entry["summary"]:
                entry["summary"] = ["partitions %s" % _join(entry["partitions"])]
            if entry["listed"]:
                entry["allowed"] = True
                entry["needs_wipe"] = True
                entry["reason"] = "listed in %s as %s: will be wiped (holds %s)" % (
                    wipe_variable, entry["listed_as"], _join(entry["summary"]))
            else:
                entry["reason"] = "holds %s and is not in %s" % (_join(entry["summary"]), wipe_variable)
                problems.append("%s holds %s and is not in %s (to allow wiping it, add %s to %s)"
                                % (named, _join(entry["summary"]), wipe_variable, suggest_name(entry),
                                   wipe_variable))
            continue
        entry["allowed"] = True
        entry["reason"] = "blank: no signature, partition, mount or holder found"

    msg = None
    if problems:
        msg = "Disk safety check: nothing was written, because %s." % "; ".join(problems)
    return {"ok": not problems, "msg": msg, "problems": problems, "devices": entries}
