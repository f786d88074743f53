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

# One import convention (docs/architecture.md, "Python imports"): see
# roles/storage_compare/filter_plugins/storage_compare.py.
import ansible.module_utils  # noqa: E402

for _up in (1, 2, 3):
    _dir = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * _up, "module_utils"))
    if os.path.isdir(_dir) and _dir not in ansible.module_utils.__path__:
        ansible.module_utils.__path__.append(_dir)

from ansible.module_utils import storage_client_qemu as _qemu  # noqa: E402


def _wrap(name, func):
    def filt(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except ValueError as exc:
            raise AnsibleFilterError("%s: %s" % (name, exc)) from exc
    filt.__name__ = name
    return filt


storage_client_drive_args = _wrap("storage_client_drive_args", _qemu.drive_args)
storage_client_ceph_conf = _wrap("storage_client_ceph_conf", _qemu.ceph_conf)
storage_client_ceph_keyring = _wrap("storage_client_ceph_keyring", _qemu.ceph_keyring)


class FilterModule(object):
    def filters(self):
        return {
            "storage_client_drive_args": storage_client_drive_args,
            "storage_client_ceph_conf": storage_client_ceph_conf,
            "storage_client_ceph_keyring": storage_client_ceph_keyring,
        }
