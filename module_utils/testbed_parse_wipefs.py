# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``wipefs --no-act --json <device>`` (util-linux 2.38).

wipefs probes the device itself with libblkid's low-level probing (it reads the
device, it does not ask udev), hides each signature it finds and probes again, so
it lists *every* signature on the device: a partition table (``gpt`` twice, primary
and backup, plus its ``PMBR``), filesystems, ``LVM2_member``, ``zfs_member`` (once per
uberblock it finds in the four vdev labels), ``ceph_bluestore``,
``linux_raid_member``, ``swap``... It does not look inside partitions: run it on each
partition as well.

Output shape (misc-utils/wipefs.c at v2.38.1, libsmartcols JSON, column names in
lower case; ``-O`` may add ``length`` (a number) and ``usage``)::

    {
       "signatures": [
          {"device": "loop1", "offset": "0x438", "type": "ext4", "uuid": "...", "label": "data"}
       ]
    }

A device without any signature prints the empty table (``"signatures": []``): that
is a valid, clean result, not an error.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.testbed_parse import ParseError, json_documents, new_result, require_text

TOOL = "wipefs"

# libblkid partition-table prober names (libblkid/src/partitions/*.c) plus the
# protective MBR wipefs reports beside a GPT.
PARTITION_TABLES = frozenset((
    "PMBR", "gpt", "dos", "mac", "bsd", "sun", "sgi", "solaris", "unixware", "minix",
    "ultrix", "aix", "atari",
))

# What each signature type means for a disk the storage roles are about to write:
# (kind, human description).  Anything not listed is still a signature (kind "other").
KINDS = {
    "LVM2_member": ("lvm", "an LVM2 physical volume"),
    "LVM1_member": ("lvm", "an LVM1 physical volume"),
    "zfs_member": ("zfs", "a ZFS vdev label"),
    "ceph_bluestore": ("ceph", "a Ceph BlueStore OSD label"),
    "linux_raid_member": ("raid", "an md RAID member superblock"),
    "isw_raid_member": ("raid", "an Intel firmware RAID member"),
    "ddf_raid_member": ("raid", "a DDF firmware RAID member"),
    "crypto_LUKS": ("crypto", "a LUKS encrypted volume"),
    "bcache": ("cache", "a bcache backing device"),
    "swap": ("swap", "a swap area"),
    "swsuspend": ("swap", "a swap area holding a hibernation image"),
}
FILESYSTEMS = frozenset((
    "ext2", "ext3", "ext4", "jbd", "xfs", "xfs_external_log", "btrfs", "vfat", "exfat", "ntfs",
    "f2fs", "nilfs2", "reiserfs", "jfs", "iso9660", "udf", "squashfs", "erofs", "bcachefs", "hfs",
    "hfsplus", "apfs", "ocfs2", "gfs2", "zonefs", "cramfs", "romfs", "minix",
))

_HEX = re.compile(r"^0x[0-9a-fA-F]+$")


def _a(word):
    return ("an " if word[:1].lower() in "aeiox" else "a ") + word


def classify(sig_type, usage=None):
    """(kind, description) of a libblkid signature type."""
    if sig_type == "PMBR":
        return "partition_table", "a GPT protective MBR"
    if sig_type in PARTITION_TABLES:
        return "partition_table", "%s partition table" % _a(sig_type)
    if sig_type in KINDS:
        return KINDS[sig_type]
    if sig_type in FILESYSTEMS or usage == "filesystem":
        return "filesystem", "%s filesystem" % _a(sig_type)
    if usage == "partition-table":
        return "partition_table", "%s partition table" % _a(sig_type)
    if usage == "raid":
        return "raid", "%s RAID member" % _a(sig_type)
    if usage == "crypto":
        return "crypto", "%s encrypted volume" % _a(sig_type)
    return "other", "%s signature" % _a(sig_type)


def _text(entry, key, index, source):
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ParseError(TOOL, source, "signature %d: %s is %r, expected text" % (index, key, value))
    return value


def parse(text, source="<content>"):
    """Parse ``wipefs --json`` output into the list of signatures it found."""
    text = require_text(text, TOOL, source)
    found = json_documents(text, TOOL, source)
    if found["truncated"]:
        raise ParseError(TOOL, source, "the JSON document stops in the middle (truncated output)")
    if not found["documents"]:
        raise ParseError(TOOL, source, "no JSON document (is this wipefs --json output? %s)"
                         % (found["invalid"] or text.strip().splitlines()[0][:120]))
    if len(found["documents"]) > 1:
        raise ParseError(TOOL, source, "%d JSON documents, expected one (one wipefs call per device)"
                         % len(found["documents"]))
    document = found["documents"][0][0]
    if not isinstance(document, dict) or not isinstance(document.get("signatures"), list):
        raise ParseError(TOOL, source, "no \"signatures\" table (not wipefs --json output?)")

    result = new_result(TOOL, source)
    signatures = []
    for index, entry in enumerate(document["signatures"]):
        if not isinstance(entry, dict):
            raise ParseError(TOOL, source, "signature %d is %r, expected an object" % (index, entry))
        sig_type = _text(entry, "type", index, source)
        if not sig_type:
            raise ParseError(TOOL, source, "signature %d has no type (wipefs run with -O without TYPE?)" % index)
        offset = _text(entry, "offset", index, source)
        if offset is None or not _HEX.match(offset):
            raise ParseError(TOOL, source, "signature %d (%s): offset is %r, expected a hexadecimal 0x... "
                             "(wipefs run with -O without OFFSET?)" % (index, sig_type, offset))
        usage = _text(entry, "usage", index, source)
        kind, description = classify(sig_type, usage)
        signatures.append({
            "device": _text(entry, "device", index, source),
            "offset_bytes": int(offset, 16),
            "type": sig_type,
            "uuid": _text(entry, "uuid", index, source),
            "label": _text(entry, "label", index, source),
            "usage": usage,
            "kind": kind,
            "description": description,
        })

    types = []
    for signature in signatures:
        if signature["type"] not in types:
            types.append(signature["type"])
    result["metrics"] = {"signatures": len(signatures), "signature_types": len(types)}
    result["details"] = {
        "signatures": signatures,
        "types": types,
        "kinds": sorted(set(s["kind"] for s in signatures)),
        "devices": sorted(set(s["device"] for s in signatures if s["device"])),
    }
    for line in found["skipped"]:
        result["warnings"].append("text beside the JSON: %s" % line[:200])
    return result
