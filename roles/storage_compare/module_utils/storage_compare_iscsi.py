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


# LIO's modules, in the order they can be unloaded (each one after those that use it).
MODULES = ("iscsi_target_mod", "target_core_iblock", "target_core_mod")
# Directories configfs makes by itself under target/iscsi and target/core (not targets or backstores).
_DEFAULT_GROUPS = ("discovery_auth", "alua")


def host_state(loaded, configfs_mounted, listdir, root="/sys/kernel/config"):
    """The host's LIO state, recorded before the testbed's export and compared at removal.

    loaded: names of the loaded modules; configfs_mounted: whether root is a configfs mount;
    listdir(path): the directory names under path, None when path does not exist. Returns
    modules (LIO's loaded ones, sorted), configfs_mounted, fabric (target/iscsi exists), targets
    (the iSCSI targets configured) and hbas (the backstore HBAs: target/core's entries but alua)."""
    fabric = listdir("%s/target/iscsi" % root)
    core = listdir("%s/target/core" % root) or []
    return {
        "modules": sorted(m for m in MODULES if m in set(loaded)),
        "configfs_mounted": bool(configfs_mounted),
        "fabric": fabric is not None,
        "targets": sorted(n for n in fabric or [] if n not in _DEFAULT_GROUPS),
        "hbas": sorted(n for n in core if n not in _DEFAULT_GROUPS),
    }


def restore_steps(before, now, root="/sys/kernel/config"):
    """Steps that put LIO back as it was before the testbed's export, once that export is gone.

    before, now: host_state() dicts. Returns (steps, notes, done): steps ``("rmdir", path)``,
    ``("rmmod", module)``, ``("umount", root)`` in order; notes say what stays and why; done is False when other targets
    or backstores keep LIO in use (the record is kept for a later removal). Only what
    the testbed added is undone: a module loaded before, a fabric directory or configfs mount that
    existed before stays, and nothing is unloaded while a target or backstore remains (someone else's)."""
    for key in ("modules", "configfs_mounted", "fabric"):
        if key not in before:
            raise ValueError("the host's LIO record has no %r: not a record of storage_iscsi_target" % key)
    if now["targets"] or now["hbas"]:
        return [], ["LIO stays loaded: the host has other iSCSI targets or backstores (%s)"
                    % ", ".join(now["targets"] + now["hbas"])], False
    steps, notes = [], []
    if now["fabric"] and not before["fabric"]:
        steps.append(("rmdir", "%s/target/iscsi" % root))
    added = [m for m in MODULES if m in now["modules"] and m not in before["modules"]]
    steps += [("rmmod", m) for m in added]
    kept = [m for m in MODULES if m in now["modules"] and m not in added]
    if kept:
        notes.append("loaded before the run, left loaded: %s" % ", ".join(kept))
    if now["configfs_mounted"] and not before["configfs_mounted"]:
        if kept:
            notes.append("configfs stays mounted: LIO modules loaded before the run use it")
        else:
            steps.append(("umount", root))
    return steps, notes, True
