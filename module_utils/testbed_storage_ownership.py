# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ownership of the storage systems the testbed builds, as pure logic (no host access).

The storage roles run on machines that may hold other data. A ZFS pool or a Ceph
cluster is the testbed's only when the role that created it left a marker on the
node, ``<marker_dir>/storage_zfs/<pool>.json`` (the pool's GUID) or
``<marker_dir>/storage_ceph/<cluster>.json`` (the cluster's fsid), and the marker
names what is there now: the imported pool's GUID, the fsid of
``/etc/ceph/<cluster>.conf`` (or of the cluster's OSD data directories). A pool or
cluster of the configured name without that marker, or with another GUID/fsid, is
someone else's: the roles neither adopt nor remove it, and say so in one sentence.

In an operator's own pool (``storage_zfs_existing_pool``: the testbed builds no pool) the testbed
makes only a zvol, ``<pool>/<volume>``: it is the testbed's when
``<marker_dir>/storage_zvol/<pool>/<volume>.json`` holds that dataset's GUID (system ``zvol``;
dataset GUIDs are as random and unique as pool GUIDs). The pool itself is never recorded, checked
for ownership, changed or destroyed. Likewise in an operator's Ceph cluster
(``storage_ceph_existing_conf``) the testbed makes only an RBD image ``<pool>/<image>`` in a pool
the operator names: it is the testbed's when ``<marker_dir>/storage_rbd/<pool>/<image>.json`` holds
``<cluster fsid>/<image id>`` (system ``rbd``; an image id is unique in its pool, the fsid to its
cluster).

``library/storage_ownership.py`` reads the node (zpool, the Ceph files, the marker)
and writes or removes the marker; everything it decides is here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

SYSTEMS = ("zfs", "ceph", "zvol", "rbd")
# The key of the marker that holds the identity of what was created.
ID_KEY = {"zfs": "guid", "ceph": "fsid", "zvol": "guid", "rbd": "id"}
# What the thing is called, and what the operator renames.
NOUN = {"zfs": "pool", "ceph": "cluster", "zvol": "zvol", "rbd": "RBD image"}
DEFAULT_VARIABLE = {"zfs": "storage_zfs_pool", "ceph": "storage_ceph_cluster", "zvol": "storage_zfs_volume",
                    "rbd": "storage_ceph_image"}
# The role that makes it.
ROLE = {"zfs": "storage_zfs", "ceph": "storage_ceph", "zvol": "storage_zfs", "rbd": "storage_ceph"}
# Systems whose name is <pool>/<child> (a zvol or an image in a pool the testbed did not make).
CHILD_SYSTEMS = ("zvol", "rbd")

_FSID_LINE = re.compile(r"^\s*fsid\s*=\s*([0-9a-fA-F-]+)\s*$", re.MULTILINE)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


class MarkerError(ValueError):
    """A marker file that is not one of ours (not JSON, another system or name, no identity)."""


def check_name(name, system="zfs"):
    """The pool or cluster name (``<pool>/<child>`` for a zvol), fit for a file path; ValueError otherwise."""
    if system in CHILD_SYSTEMS:
        parts = name.split("/") if isinstance(name, str) else []
        if len(parts) != 2 or not all(_NAME.match(part) for part in parts):
            raise ValueError("%r is not <pool>/<%s> (two names of letters, digits, _ . : -)" % (name, NOUN[system]))
        return name
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError("%r is not a pool or cluster name (letters, digits, _ . : -)" % (name,))
    return name


def marker_path(marker_dir, system, name):
    """<marker_dir>/storage_<system>/<name>.json (for a zvol: storage_zvol/<pool>/<volume>.json)."""
    if system not in SYSTEMS:
        raise ValueError("system %r is not one of %s" % (system, ", ".join(SYSTEMS)))
    return "%s/storage_%s/%s.json" % (marker_dir.rstrip("/"), system, check_name(name, system))


def make_marker(system, name, ident, node, created):
    """The marker document recorded when the role has created ``name`` with identity ``ident``."""
    if not ident:
        raise ValueError("no %s to record for %s %s" % (ID_KEY[system], NOUN[system], name))
    return {"system": system, "name": name, ID_KEY[system]: str(ident), "node": node, "created": created,
            "created_by": ROLE[system]}


def render_marker(marker):
    return json.dumps(marker, indent=2, sort_keys=True) + "\n"


def parse_marker(text, system, name):
    """The marker document in ``text``; MarkerError when it is not a marker of this system and name."""
    try:
        marker = json.loads(text)
    except ValueError as exc:
        raise MarkerError("it is not JSON (%s)" % exc) from None
    if not isinstance(marker, dict):
        raise MarkerError("it is not a JSON object")
    if marker.get("system") != system or marker.get("name") != name:
        raise MarkerError("it is for %s %s, not %s %s" % (marker.get("system"), marker.get("name"), system, name))
    ident = marker.get(ID_KEY[system])
    if not isinstance(ident, str) or not ident:
        raise MarkerError("it holds no %s" % ID_KEY[system])
    return marker


def fsid_from_conf(text):
    """The fsid of a ceph.conf (the first ``fsid = ...`` line), lower case; None without one."""
    match = _FSID_LINE.search(text or "")
    return match.group(1).lower() if match else None


def ceph_observed(conf_path, conf_text, data_dirs, osd_fsids):
    """What a node holds of a Ceph cluster.

    ``conf_text``: the content of ``conf_path`` (None when the file is absent); ``data_dirs``: the
    cluster's daemon data directories found (/var/lib/ceph/{mon,mgr,osd}/<cluster>-*); ``osd_fsids``:
    {data directory: content of its ceph_fsid file} for the OSD directories that have one.
    The identity is the configuration's fsid, else the OSD directories' (when they agree).
    """
    sources = []
    if conf_text is not None:
        sources.append(conf_path)
    sources.extend(sorted(data_dirs))
    if not sources:
        return {"exists": False, "id": None, "where": ""}
    ident = fsid_from_conf(conf_text) if conf_text is not None else None
    where = conf_path if ident else ""
    if conf_text is not None and not data_dirs:
        # a configuration and no daemon of that cluster here: a client of a cluster elsewhere
        return {"exists": True, "id": ident, "where": conf_path, "client_only": True}
    if ident is None:
        found = sorted(set(value.strip().lower() for value in osd_fsids.values() if value and value.strip()))
        if len(found) == 1:
            ident = found[0]
            where = sorted(path for path, value in osd_fsids.items() if value and value.strip().lower() == ident)[0]
    if ident is None and conf_text is not None:
        # the testbed's ceph.conf always names its fsid: one without is not known to be ours (fail closed)
        return {"exists": True, "id": None, "where": conf_path,
                "unreadable": "names no fsid, and no OSD directory tells one"}
    return {"exists": True, "id": ident, "where": where or ", ".join(sources)}


def zfs_observed(pool_lines, name):
    """The imported pool ``name`` in ``zpool list -H -p -o name,guid`` lines."""
    for line in pool_lines:
        fields = line.split("\t") if "\t" in line else line.split()
        if len(fields) >= 2 and fields[0] == name:
            return {"exists": True, "id": fields[1].strip(), "where": "zpool list"}
    return {"exists": False, "id": None, "where": ""}


def zvol_observed(dataset_lines, name):
    """The dataset ``name`` in ``zfs list -H -p -o name,guid,type NAME`` lines (any type: a filesystem
    of that name is there too, and not the testbed's zvol)."""
    for line in dataset_lines:
        fields = line.split("\t") if "\t" in line else line.split()
        if len(fields) >= 2 and fields[0] == name:
            kind = fields[2].strip() if len(fields) >= 3 else "dataset"
            return {"exists": True, "id": fields[1].strip(), "where": "zfs list (a %s)" % kind}
    return {"exists": False, "id": None, "where": ""}


def rbd_observed(info_text, fsid, name):
    """The image ``name`` from ``rbd info --format json`` output (None: no such image) in the cluster ``fsid``:
    its identity is ``<fsid>/<image id>``."""
    if info_text is None:
        return {"exists": False, "id": None, "where": ""}
    try:
        info = json.loads(info_text)
    except ValueError:
        info = None
    image_id = info.get("id") if isinstance(info, dict) else None
    if not image_id or not fsid:
        raise ValueError("rbd info of %s gave no image id (or the cluster no fsid): %r" % (name, (info_text or "")[:200]))
    return {"exists": True, "id": "%s/%s" % (fsid.strip().lower(), image_id), "where": "rbd info"}


def ownership_problem(system, name, node, marker, observed, marker_file, variable=None, marker_error=None):
    """One sentence when ``name`` exists on ``node`` but is not the testbed's; "" when there is none.

    ``marker``: the parsed marker, or None (absent or unreadable: ``marker_error`` says why);
    ``observed``: {"exists", "id", "where"} (:func:`zfs_observed`, :func:`ceph_observed`);
    ``variable``: the variable to rename in the fix (None: the role's own; "": no rename possible).
    Nothing there: no problem (the role may create it). There, with a marker whose identity is what
    is there: ours. A Ceph cluster whose fsid cannot be read (data directories without a
    configuration) is ours only with a marker; a configuration that names no fsid is never ours (the
    testbed's always does), and a configuration without daemons is a client's (unless the marker
    names its fsid: the testbed's, its daemons already removed), which the testbed would overwrite:
    refused with what to do instead.
    """
    if system not in SYSTEMS:
        raise ValueError("system %r is not one of %s" % (system, ", ".join(SYSTEMS)))
    if not observed.get("exists"):
        return ""
    key = ID_KEY[system]
    ident = observed.get("id")
    if observed.get("client_only") and not (marker is not None and ident and marker.get(key) == ident):
        shown = (" of the cluster with fsid %s" % ident) if ident else ""
        return ("node %s has a Ceph client configuration %s%s and no daemon of that cluster: the testbed would "
                "write its own cluster's there. Give it as storage_compare_ceph_existing_conf to measure that "
                "cluster, or move it away, or leave ceph out of the run's variants." % (node, observed.get("where"), shown))
    if marker is not None:
        recorded = marker.get(key)
        if recorded == ident or (ident is None and not observed.get("unreadable")):
            return ""
        if ident is None:
            why = "%s %s, so it cannot be told from the cluster in the marker %s" % (
                observed.get("where") or "its configuration", observed["unreadable"], marker_file)
        else:
            why = "its %s %s (%s) differs from %s in the marker %s" % (
                key.upper() if key == "guid" else key, ident, observed.get("where") or "read there", recorded,
                marker_file)
    elif marker_error:
        why = "the marker %s is not the testbed's: %s" % (marker_file, marker_error)
    else:
        shown = ("%s %s, " % (key.upper() if key == "guid" else key, ident)) if ident else ""
        why = "%sfound in %s, no marker %s" % (shown, observed.get("where") or "the node", marker_file)
    noun = NOUN[system]
    if variable == "":
        fix = "remove the %s yourself, or use another node" % noun
    else:
        fix = "rename %s, or remove the %s yourself" % (variable or DEFAULT_VARIABLE[system], noun)
    return "%s %s on node %s was not created by the testbed (%s): %s." % (noun, name, node, why, fix)
