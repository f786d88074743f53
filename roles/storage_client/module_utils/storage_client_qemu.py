# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the client VM's qemu attaches the storage node's volume (roles/storage_client).

Proxmox's way: a Ceph RBD image through librbd inside qemu (``rbd:`` drive, the
monitors and key in a ceph.conf of the compute node), a ZFS zvol through the
storage node's iSCSI target with qemu's libiscsi (``iscsi://`` drive). Pure
functions (tests/unit/test_storage_client_qemu.py); a bad volume raises
ValueError naming what is wrong.
"""

import re

KINDS = ("rbd", "iscsi")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_IQN = re.compile(r"^iqn\.\d{4}-\d{2}\.[a-z0-9.-]+(:[A-Za-z0-9._:-]+)?$")
_PORTAL = re.compile(r"^(\d{1,3}(\.\d{1,3}){3}|[A-Za-z0-9.-]+):(\d{1,5})$")


def _need(volume, key, pattern=None):
    value = volume.get(key)
    if value is None or str(value) == "":
        raise ValueError("storage volume of kind %s: %s is missing" % (volume.get("kind"), key))
    value = str(value)
    if pattern is not None and not pattern.match(value):
        raise ValueError("storage volume of kind %s: %s %r is not valid" % (volume.get("kind"), key, value))
    return value


def check_volume(volume):
    """Return the volume's kind after checking its keys (ValueError names the bad one)."""
    if not isinstance(volume, dict):
        raise ValueError("storage volume must be a dict, got %r" % (volume,))
    kind = volume.get("kind")
    if kind not in KINDS:
        raise ValueError("storage volume kind must be one of %s, got %r" % (", ".join(KINDS), kind))
    if kind == "rbd":
        for key in ("pool", "image", "user"):
            _need(volume, key, _NAME)
        _need(volume, "key")
        monitors = volume.get("monitors")
        if not isinstance(monitors, list) or not monitors:
            raise ValueError("storage volume of kind rbd: monitors must be a non-empty list of addresses")
    else:
        _need(volume, "portal", _PORTAL)
        _need(volume, "iqn", _IQN)
        lun = volume.get("lun", 0)
        if not isinstance(lun, int) or isinstance(lun, bool) or lun < 0 or lun > 255:
            raise ValueError("storage volume of kind iscsi: lun must be an integer 0-255, got %r" % (lun,))
    return kind


def ceph_conf(volume, keyring_path):
    """The compute node's ceph.conf for librbd: the monitors and the keyring file."""
    check_volume(volume)
    if volume["kind"] != "rbd":
        raise ValueError("ceph_conf: the volume is not an RBD image (kind %s)" % volume["kind"])
    return "[global]\nmon_host = %s\nkeyring = %s\n" % (",".join(str(m) for m in volume["monitors"]), keyring_path)


def ceph_keyring(volume):
    """The keyring file of the volume's cephx user."""
    check_volume(volume)
    return "[client.%s]\n\tkey = %s\n" % (volume["user"], volume["key"])


def drive_args(volume, serial, cache="none", conf_path="", initiator=""):
    """qemu arguments that attach the volume as a virtio disk with the given serial."""
    kind = check_volume(volume)
    if not _NAME.match(str(serial)):
        raise ValueError("drive serial %r is not valid" % (serial,))
    if cache not in ("none", "writeback", "writethrough", "directsync", "unsafe"):
        raise ValueError("drive cache mode %r is not one of qemu's" % (cache,))
    if kind == "rbd":
        if not conf_path or "," in conf_path or ":" in conf_path:
            raise ValueError("rbd drive: conf_path %r must be a path without ',' or ':'" % (conf_path,))
        source = "rbd:%s/%s:id=%s:conf=%s" % (volume["pool"], volume["image"], volume["user"], conf_path)
        extra = []
    else:
        source = "iscsi://%s/%s/%d" % (volume["portal"], volume["iqn"], volume.get("lun", 0))
        extra = ["-iscsi", "initiator-name=%s" % initiator] if initiator else []
    return extra + [
        "-drive", "file=%s,if=none,id=data,format=raw,cache=%s" % (source, cache),
        "-device", "virtio-blk-pci,drive=data,serial=%s" % serial,
    ]
