# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of roles/storage_client: the qemu drive of the storage volume and the
compute node's Ceph client files (module_utils/storage_client_qemu.py)."""

import os

try:
    from ansible.errors import AnsibleFilterError
except ImportError:  # pragma: no cover - only without ansible
    class AnsibleFilterError(Exception):
        pass

# One import convention (docs/architecture.md, "Python imports"): pure shared
# libraries live in a module_utils/ folder - the repository's, or a role's own -
# and are imported as ansible.module_utils.<name>, the name Ansible gives them in a
# module. On the controller every module_utils/ folder one to three levels above
# this file is put on that package's path; a collection build rewrites the imports.
import ansible.module_utils  # noqa: E402

for _up in (1, 2, 3):
    _dir = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * _up, "module_utils"))
    if os.path.isdir(_dir) and _dir not in ansible.module_utils.__path__:
        ansible.module_utils.__path__.append(_dir)

from ansible.module_utils import storage_client_qemu as _qemu  # noqa: E402


def storage_client_drive_args(volume, serial, cache="none", conf_path="", initiator=""):
    """The qemu arguments that attach the storage volume as the client VM's virtio data disk."""
    try:
        return _qemu.drive_args(volume, serial, cache, conf_path, initiator)
    except ValueError as exc:
        raise AnsibleFilterError("storage_client_drive_args: %s" % exc) from exc


def storage_client_ceph_conf(volume, keyring_path):
    """The compute node's ceph.conf for librbd (the monitors, the keyring's path) of an RBD volume."""
    try:
        return _qemu.ceph_conf(volume, keyring_path)
    except ValueError as exc:
        raise AnsibleFilterError("storage_client_ceph_conf: %s" % exc) from exc


def storage_client_ceph_keyring(volume):
    """The keyring file of an RBD volume's cephx user."""
    try:
        return _qemu.ceph_keyring(volume)
    except ValueError as exc:
        raise AnsibleFilterError("storage_client_ceph_keyring: %s" % exc) from exc


class FilterModule(object):
    def filters(self):
        return {
            "storage_client_drive_args": storage_client_drive_args,
            "storage_client_ceph_conf": storage_client_ceph_conf,
            "storage_client_ceph_keyring": storage_client_ceph_keyring,
        }
