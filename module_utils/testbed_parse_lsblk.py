# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``lsblk --json --bytes --output <columns> <device>`` (util-linux 2.38).

What lsblk is trusted for, and what not (misc-utils/lsblk-properties.c at v2.38.1):

* sizes, type, rotational, read-only, model, serial, WWN, the device tree (partitions
  and the devices stacked on top: dm, md) and mount points come from sysfs and
  /proc/self/mountinfo: reliable;
* FSTYPE, PTTYPE, PARTTYPE, LABEL and UUID come from the **udev database**. Where udev
  knows the device but has no properties (a container, a host without udevd, a disk
  written since udev last looked) lsblk prints null *without* probing the device
  itself. A null FSTYPE therefore never means "empty": the disk-safety check takes
  signatures from ``wipefs`` (which probes the device) and uses lsblk's for extra
  evidence only.

Columns (lower-case keys, libsmartcols JSON): ``size`` is a number with ``--bytes``;
``rota``/``ro`` are booleans (older lsblk printed "1"/"0": accepted); ``mountpoints``
(2.37+) is a list that holds ``null`` when nothing is mounted (older ``mountpoint``:
one string or null, accepted); ``children`` nests partitions and holders.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.testbed_parse import ParseError, json_documents, new_result, require_text, to_number

TOOL = "lsblk"

# The columns the disk-safety module asks for (and the minimum this parser needs).
COLUMNS = ("NAME", "KNAME", "PATH", "TYPE", "SIZE", "ROTA", "RO", "MODEL", "SERIAL", "WWN", "FSTYPE",
           "PTTYPE", "PARTTYPE", "LABEL", "UUID", "MOUNTPOINTS", "PKNAME")
REQUIRED = ("name", "type", "size")
_TEXT_KEYS = ("kname", "path", "model", "serial", "wwn", "fstype", "pttype", "parttype", "label", "uuid",
              "pkname")


def _bool(value, key, name, source):
    if value is None or isinstance(value, bool):
        return value
    if value in ("0", "1", 0, 1):
        return value in ("1", 1)
    raise ParseError(TOOL, source, "device %s: %s is %r, expected a boolean" % (name, key, value))


def _device(entry, source, parent, depth, flat):
    if not isinstance(entry, dict):
        raise ParseError(TOOL, source, "a block device entry is %r, expected an object" % (entry,))
    missing = [key for key in REQUIRED if key not in entry]
    if missing:
        raise ParseError(TOOL, source, "device %s has no %s column (run lsblk --output %s)"
                         % (entry.get("name", "?"), ", ".join(missing), ",".join(COLUMNS)))
    name = entry["name"]
    size = entry["size"]
    if isinstance(size, str) and not size.strip().isdigit():
        raise ParseError(TOOL, source, "device %s: size is %r, not a number of bytes (run lsblk with --bytes)"
                         % (name, size))
    size = to_number(size, TOOL, source, "size of %s" % name, integer=True)
    if "mountpoints" in entry:
        points = entry["mountpoints"] or []
        if not isinstance(points, list):
            raise ParseError(TOOL, source, "device %s: mountpoints is %r, expected a list" % (name, points))
    else:
        points = [entry.get("mountpoint")]
    device = {
        "name": name,
        "type": entry["type"],
        "size_bytes": size,
        "rotational": _bool(entry.get("rota"), "rota", name, source),
        "read_only": _bool(entry.get("ro"), "ro", name, source),
        "mountpoints": [point for point in points if point],
        "parent": parent,
        "depth": depth,
    }
    for key in _TEXT_KEYS:
        value = entry.get(key)
        device[key] = value.strip() if isinstance(value, str) and value.strip() else None
    if device["path"] is None:
        device["path"] = "/dev/" + (device["kname"] or name)
    flat.append(device)
    children = entry.get("children") or []
    if not isinstance(children, list):
        raise ParseError(TOOL, source, "device %s: children is %r, expected a list" % (name, children))
    device["children"] = [_device(child, source, device["path"], depth + 1, flat) for child in children]
    return device


def _strip_children(device):
    return dict((key, value) for key, value in device.items() if key != "children")


def parse(text, source="<content>"):
    """Parse lsblk's JSON into the device tree and a flat list."""
    text = require_text(text, TOOL, source)
    found = json_documents(text, TOOL, source)
    if found["truncated"]:
        raise ParseError(TOOL, source, "the JSON document stops in the middle (truncated output)")
    if len(found["documents"]) != 1:
        raise ParseError(TOOL, source, "%d JSON documents, expected one (is this lsblk --json output?)"
                         % len(found["documents"]))
    document = found["documents"][0][0]
    if not isinstance(document, dict) or not isinstance(document.get("blockdevices"), list):
        raise ParseError(TOOL, source, "no \"blockdevices\" table (not lsblk --json output?)")
    if not document["blockdevices"]:
        raise ParseError(TOOL, source, "no block device listed (lsblk prints an empty table, and exits 32, "
                         "for a path that is not a block device)")

    flat = []
    tree = [_device(entry, source, None, 0, flat) for entry in document["blockdevices"]]
    result = new_result(TOOL, source)
    top = [device for device in flat if device["depth"] == 0]
    result["metrics"] = {
        "devices": len(top),
        "size_bytes": sum(device["size_bytes"] for device in top),
        "children": len(flat) - len(top),
        "mounted": sum(1 for device in flat if device["mountpoints"]),
    }
    result["details"] = {
        "blockdevices": tree,
        "flat": [_strip_children(device) for device in flat],
    }
    for line in found["skipped"]:
        result["warnings"].append("text beside the JSON: %s" % line[:200])
    return result
