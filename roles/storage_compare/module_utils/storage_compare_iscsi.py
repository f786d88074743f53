# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Linux kernel iSCSI target (LIO) of experiment 2's ZFS-over-iSCSI export, as configfs steps.

What targetcli does for one block backstore exported as LUN 0 of one target
portal group, without targetcli (the storage node's image has no Python rtslib):
a list of steps ``(op, path[, value])`` - ``mkdir``, ``write``, ``symlink``,
``unlink``, ``rmdir``, ``rmdir_empty`` (only when no backstore is left) - under the configfs root (``/sys/kernel/config``), the
teardown in reverse order. Pure functions (tests/unit/test_storage_compare_iscsi.py);
bad input raises ValueError naming what is wrong. The module storage_iscsi_target
runs the steps on the node.
"""

import re

_IQN = re.compile(r"^iqn\.\d{4}-\d{2}\.[a-z0-9.-]+(:[A-Za-z0-9._-]+)?$")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_IPV4 = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")

# Demo mode: any initiator may log in (no ACLs, no CHAP) and write - the lab's
# private storage network only; the report says so.
TPG_ATTRIBUTES = (
    ("authentication", "0"),
    ("generate_node_acls", "1"),
    ("cache_dynamic_acls", "1"),
    ("demo_mode_write_protect", "0"),
)
LUN_LINK = "testbed"


def check(iqn, name, device, address, port):
    """ValueError naming the bad setting, else None."""
    if not _IQN.match(str(iqn)):
        raise ValueError("iSCSI target name %r is not an iqn (iqn.YYYY-MM.reversed.domain[:id])" % (iqn,))
    if not _NAME.match(str(name)):
        raise ValueError("backstore name %r: letters, digits, '_' and '-' only, at most 32" % (name,))
    if not str(device).startswith("/dev/"):
        raise ValueError("backstore device %r is not a /dev path" % (device,))
    match = _IPV4.match(str(address))
    if not match or any(int(part) > 255 for part in match.groups()):
        raise ValueError("portal address %r is not an IPv4 address" % (address,))
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise ValueError("portal port %r is not a TCP port" % (port,))


def paths(iqn, name, address, port, root="/sys/kernel/config"):
    """The configfs paths of the backstore, target, portal group, LUN and portal."""
    target = "%s/target/iscsi/%s" % (root, iqn)
    tpg = target + "/tpgt_1"
    return {
        "hba": "%s/target/core/iblock_0" % root,
        "backstore": "%s/target/core/iblock_0/%s" % (root, name),
        "fabric": "%s/target/iscsi" % root,
        "target": target,
        "tpg": tpg,
        "lun": tpg + "/lun/lun_0",
        "link": tpg + "/lun/lun_0/" + LUN_LINK,
        "portal": "%s/np/%s:%d" % (tpg, address, port),
    }


def create_steps(iqn, name, device, address, port, root="/sys/kernel/config"):
    """Steps that export device as LUN 0 of iqn on address:port (block backstore, demo mode)."""
    check(iqn, name, device, address, port)
    p = paths(iqn, name, address, port, root)
    steps = [
        ("mkdir", p["hba"]),
        ("mkdir", p["backstore"]),
        ("write", p["backstore"] + "/control", "udev_path=%s" % device),
        ("write", p["backstore"] + "/udev_path", device),
        ("write", p["backstore"] + "/enable", "1"),
        # the iscsi fabric registers when its directory is made (it stays: it holds discovery_auth)
        ("mkdir", p["fabric"]),
        ("mkdir", p["target"]),
        ("mkdir", p["tpg"]),
        ("mkdir", p["lun"]),
        ("symlink", p["backstore"], p["link"]),
        ("mkdir", p["portal"]),
    ]
    steps += [("write", "%s/attrib/%s" % (p["tpg"], key), value) for key, value in TPG_ATTRIBUTES]
    steps.append(("write", p["tpg"] + "/enable", "1"))
    return steps


def remove_steps(iqn, name, address, port, root="/sys/kernel/config", existing=None):
    """Steps that take the export down (reverse order), limited to the paths in existing when given."""
    check(iqn, name, "/dev/null", address, port)
    p = paths(iqn, name, address, port, root)
    steps = [
        ("write", p["tpg"] + "/enable", "0"),
        ("rmdir", p["portal"]),
        ("unlink", p["link"]),
        ("rmdir", p["lun"]),
        ("rmdir", p["tpg"]),
        ("rmdir", p["target"]),
        ("rmdir", p["backstore"]),
    ]
    if existing is not None:
        steps = [step for step in steps if step[1] in existing]
    # the iblock HBA directory, when no other backstore is left in it
    return steps + [("rmdir_empty", p["hba"])]
