#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: storage_ownership
short_description: Tell the testbed's own ZFS pool or Ceph cluster from someone else's, and mark what the testbed made
description:
  - The storage roles run on machines that may hold other data. When a role creates a ZFS pool or a Ceph cluster it
    records it in a marker on the node, C(<marker_dir>/storage_zfs/<pool>.json) with the pool's GUID or
    C(<marker_dir>/storage_ceph/<cluster>.json) with the cluster's fsid (O(state=record)).
  - O(state=check) (read-only) reads what the node holds under O(name) - the imported pool's GUID (C(zpool list -H -p
    -o name,guid)), or the fsid of C(<ceph_conf_dir>/<cluster>.conf) and the cluster's daemon data directories
    C(<ceph_data_dir>/{mon,mgr,osd}/<cluster>-*) - and the marker, and returns RV(problem), one sentence naming the
    pool or cluster when it exists but is not the testbed's (no marker, an unreadable one, or another GUID/fsid).
    Nothing of that name on the node is no problem. It never fails on a conflict; the caller asserts.
  - O(state=record) writes the marker (atomically) for what is there now (ZFS - the imported pool's GUID, or the
    zvol's dataset GUID, which must exist; call it right after creating the pool, or for a pool O(state=check) found to be the testbed's) or for
    O(fsid) (Ceph, before the cluster's first file is written; it refuses to record over a foreign cluster of that
    name or a configuration with another fsid). A marker that already holds that identity is left as it is.
  - O(state=forget) removes the marker (after the role has removed what it made).
  - Supports check mode (record and forget report the change without writing).
version_added: "1.3.0"
author:
  - Infrastructure testbed contributors
options:
  system:
    description: Which kind of storage system.
    type: str
    required: true
    choices: [zfs, ceph, zvol, rbd]
  name:
    description:
      - The pool or cluster name.
      - O(system=zvol) - C(<pool>/<volume>), a zvol the testbed makes in a pool it did not make (an operator's, in
        C(storage_zfs_existing_pool)); its marker is C(<marker_dir>/storage_zvol/<pool>/<volume>.json) with the
        dataset's GUID (C(zfs list -H -p -o name,guid,type)). The pool itself is never recorded.
      - O(system=rbd) - C(<pool>/<image>), an RBD image the testbed makes in a pool of an existing cluster (the
        operator's, reached with O(ceph_conf), O(ceph_keyring), O(ceph_client)); its marker is
        C(<marker_dir>/storage_rbd/<pool>/<image>.json) with C(<cluster fsid>/<image id>) (C(ceph fsid),
        C(rbd info)). The cluster and the pool are never recorded.
    type: str
    required: true
  state:
    description: check (read only), record (write the marker), forget (remove it).
    type: str
    default: check
    choices: [check, record, forget]
  fsid:
    description: O(state=record) with O(system=ceph) - the cluster's fsid to record.
    type: str
  node:
    description: The node's name in the messages (the inventory hostname).
    type: str
    default: this host
  variable:
    description:
      - The variable that names the pool or cluster, named in the message (what the operator renames); default the
        role's own (C(storage_zfs_pool), C(storage_ceph_cluster)).
      - Empty - the caller cannot use another name; the message says to remove it or use another node.
    type: str
  ceph_conf:
    description: O(system=rbd) - the existing cluster's configuration file on the node.
    type: path
  ceph_keyring:
    description: O(system=rbd) - the client keyring on the node.
    type: path
  ceph_client:
    description: O(system=rbd) - the client's name (C(client.<id>)).
    type: str
    default: client.admin
  marker_dir:
    description: Where the markers live (C(storage_zfs/) and C(storage_ceph/) below it).
    type: path
    default: /var/lib/testbed
  ceph_conf_dir:
    description: Where Ceph's configuration files are.
    type: path
    default: /etc/ceph
  ceph_data_dir:
    description: Where Ceph's daemon data directories are.
    type: path
    default: /var/lib/ceph
"""

EXAMPLES = r"""
- name: Refuse a pool of this name that the testbed did not create
  storage_ownership:
    system: zfs
    name: testbed
    node: "{{ inventory_hostname }}"
  register: owner

- name: Stop on a foreign pool
  ansible.builtin.assert:
    that: owner.problem == ''
    fail_msg: "{{ owner.problem }}"

- name: Record the cluster the role bootstrapped
  storage_ownership:
    system: ceph
    name: ceph
    state: record
    fsid: 0b2c3d4e-5f60-4a1b-8c2d-3e4f5a6b7c8d
"""

RETURN = r"""
exists:
  description: Whether the node holds a pool (imported) or cluster (configuration or data directories) of that name.
  type: bool
  returned: always
owned:
  description: Whether that is the testbed's (true also when nothing of that name exists).
  type: bool
  returned: always
id:
  description: The pool's GUID or the cluster's fsid read on the node (null when none or unreadable).
  type: str
  returned: always
where:
  description: Where it was read (zpool list, the configuration file, data directories).
  type: str
  returned: always
marker:
  description: The marker as read (before O(state=record)/O(state=forget) changed it), null when absent or not ours.
  type: dict
  returned: always
marker_path:
  description: The marker's path.
  type: str
  returned: always
problem:
  description: One sentence when the pool or cluster is not the testbed's, else empty.
  type: str
  returned: always
  sample: >-
    pool testbed on node storage1 was not created by the testbed (GUID 1234, found in zpool list, no marker
    /var/lib/testbed/storage_zfs/testbed.json): rename storage_zfs_pool, or remove the pool yourself.
"""

import datetime  # noqa: E402
import glob  # noqa: E402
import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_parse import write_text_atomic  # noqa: E402
from ansible.module_utils.testbed_storage_ownership import (  # noqa: E402
    ID_KEY,
    NOUN,
    MarkerError,
    ceph_observed,
    make_marker,
    marker_path,
    ownership_problem,
    parse_marker,
    rbd_observed,
    render_marker,
    zfs_observed,
    zvol_observed,
)


def _read(path):
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def read_zfs(module, name):
    zpool = module.get_bin_path("zpool")
    if zpool is None or not os.path.isdir("/sys/module/zfs"):
        return {"exists": False, "id": None, "where": ""}
    rc, out, err = module.run_command([zpool, "list", "-H", "-p", "-o", "name,guid"])
    if rc != 0:
        if "modules are not loaded" in err or "no pools available" in (out + err):
            return {"exists": False, "id": None, "where": ""}
        module.fail_json(msg="storage ownership: zpool list -H -p -o name,guid failed on %s (rc %d): %s"
                         % (module.params["node"], rc, err.strip()))
    return zfs_observed(out.splitlines(), name)


def read_zvol(module, name):
    zfs = module.get_bin_path("zfs")
    if zfs is None or not os.path.isdir("/sys/module/zfs"):
        return {"exists": False, "id": None, "where": ""}
    rc, out, err = module.run_command([zfs, "list", "-H", "-p", "-o", "name,guid,type", name])
    if rc != 0:
        if "does not exist" in err or "modules are not loaded" in err:
            return {"exists": False, "id": None, "where": ""}
        module.fail_json(msg="storage ownership: zfs list -H -p -o name,guid,type %s failed on %s (rc %d): %s"
                         % (name, module.params["node"], rc, err.strip()))
    return zvol_observed(out.splitlines(), name)


def read_rbd(module, name):
    p = module.params
    if not p["ceph_conf"] or not p["ceph_keyring"]:
        module.fail_json(msg="storage ownership: system=rbd needs ceph_conf and ceph_keyring")
    auth = ["--conf", p["ceph_conf"], "--keyring", p["ceph_keyring"], "--name", p["ceph_client"]]
    ceph, rbd = module.get_bin_path("ceph", required=True), module.get_bin_path("rbd", required=True)
    rc, fsid, err = module.run_command([ceph] + auth + ["--connect-timeout", "30", "fsid"])
    if rc != 0:
        module.fail_json(msg="storage ownership: ceph fsid with %s (%s, %s) failed on %s (rc %d): %s"
                         % (p["ceph_conf"], p["ceph_client"], p["ceph_keyring"], p["node"], rc, err.strip()))
    rc, out, err = module.run_command([rbd] + auth + ["info", "--format", "json", name])
    if rc == 2 or (rc != 0 and "No such file or directory" in err):
        return rbd_observed(None, fsid, name)
    if rc != 0:
        module.fail_json(msg="storage ownership: rbd info %s failed on %s (rc %d): %s"
                         % (name, p["node"], rc, err.strip()))
    try:
        return rbd_observed(out, fsid, name)
    except ValueError as exc:
        module.fail_json(msg="storage ownership: %s" % exc)


def read_ceph(conf_dir, data_dir, name):
    conf_path = os.path.join(conf_dir, name + ".conf")
    data_dirs = []
    for kind in ("mon", "mgr", "osd"):
        data_dirs.extend(path for path in glob.glob(os.path.join(data_dir, kind, glob.escape(name) + "-*"))
                         if os.path.isdir(path))
    osd_fsids = {}
    for path in data_dirs:
        text = _read(os.path.join(path, "ceph_fsid"))
        if text is not None:
            osd_fsids[path] = text
    return ceph_observed(conf_path, _read(conf_path), data_dirs, osd_fsids)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            system=dict(type="str", required=True, choices=["zfs", "ceph", "zvol", "rbd"]),
            name=dict(type="str", required=True),
            state=dict(type="str", default="check", choices=["check", "record", "forget"]),
            fsid=dict(type="str"),
            node=dict(type="str", default="this host"),
            variable=dict(type="str"),
            ceph_conf=dict(type="path"),
            ceph_keyring=dict(type="path", no_log=False),
            ceph_client=dict(type="str", default="client.admin"),
            marker_dir=dict(type="path", default="/var/lib/testbed"),
            ceph_conf_dir=dict(type="path", default="/etc/ceph"),
            ceph_data_dir=dict(type="path", default="/var/lib/ceph"),
        ),
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LANG": "C", "LC_ALL": "C"}
    p = module.params
    system, name = p["system"], p["name"]
    try:
        path = marker_path(p["marker_dir"], system, name)
    except ValueError as exc:
        module.fail_json(msg="storage ownership: %s" % exc)

    if system == "zfs":
        observed = read_zfs(module, name)
    elif system == "zvol":
        observed = read_zvol(module, name)
    elif system == "rbd":
        observed = read_rbd(module, name)
    else:
        observed = read_ceph(p["ceph_conf_dir"], p["ceph_data_dir"], name)
    marker, marker_error = None, None
    text = _read(path)
    if text is not None:
        try:
            marker = parse_marker(text, system, name)
        except MarkerError as exc:
            marker_error = str(exc)
    problem = ownership_problem(system, name, p["node"], marker, observed, path, variable=p["variable"],
                                marker_error=marker_error)
    result = dict(changed=False, exists=observed["exists"], owned=not problem, id=observed["id"],
                  where=observed["where"], marker=marker, marker_path=path, problem=problem)

    if p["state"] == "record":
        # ZFS: the caller has just created the pool (no marker yet, or a stale one of a pool gone);
        # Ceph: the marker goes before the cluster's first file, so a cluster already there must be ours.
        if problem and system == "ceph":
            module.fail_json(msg="storage ownership: not recording %s: %s" % (path, problem), **result)
        if system != "ceph":
            ident = observed["id"]
            if not observed["exists"]:
                if module.check_mode:
                    module.exit_json(**result)
                module.fail_json(msg="storage ownership: %s %s is not %s on %s: nothing to record"
                                 % (NOUN[system], name, "imported" if system == "zfs" else "there", p["node"]),
                                 **result)
        else:
            ident = (p["fsid"] or "").lower()
            if not ident:
                module.fail_json(msg="storage ownership: state=record of a Ceph cluster needs fsid", **result)
            if observed["id"] and observed["id"] != ident:
                module.fail_json(msg="storage ownership: cluster %s on %s has fsid %s (%s), not %s: not recorded"
                                 % (name, p["node"], observed["id"], observed["where"], ident), **result)
        if marker is None or marker.get(ID_KEY[system]) != ident:
            result["changed"] = True
            if not module.check_mode:
                now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
                write_text_atomic(path, render_marker(make_marker(system, name, ident, p["node"], now)), mode=0o644)
    elif p["state"] == "forget":
        if text is not None:
            result["changed"] = True
            if not module.check_mode:
                os.unlink(path)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
