# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Free space checked before anything is built (library/free_space.py).

A need is ``{path, need_mb, what, fix}``: ``what`` the data that will be written under ``path``
(which may not exist yet: its nearest existing parent's filesystem is the one that fills), and
``fix`` how to need less. Needs that land on one filesystem add up. Pure: ``free_mb(path)`` and
``mount_of(path)`` are passed in.
"""

import os


def nearest_existing(path, exists):
    """``path`` or its nearest parent for which ``exists`` is true ("/" at the latest)."""
    path = os.path.abspath(path)
    while not exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def check_needs(needs, exists, mount_of, free_mb):
    """({mount: {"free_mb", "need_mb", "whats"}}, [one sentence per filesystem that is short]).

    ``needs``: [{path, need_mb, what, fix}]; ``mount_of(path)``: the mount point of the filesystem
    holding ``path`` (an existing path); ``free_mb(path)``: MiB available to an unprivileged writer."""
    filesystems = {}
    for need in needs:
        mb = float(need.get("need_mb") or 0)
        if mb <= 0:
            continue
        where = nearest_existing(need["path"], exists)
        mount = mount_of(where)
        entry = filesystems.setdefault(mount, {"free_mb": round(free_mb(where)), "need_mb": 0, "whats": [], "fixes": []})
        entry["need_mb"] += mb
        entry["whats"].append("%s (%d MB in %s)" % (need.get("what") or "data", round(mb), need["path"]))
        if need.get("fix") and need["fix"] not in entry["fixes"]:
            entry["fixes"].append(need["fix"])
    problems = []
    for mount in sorted(filesystems):
        entry = filesystems[mount]
        entry["need_mb"] = round(entry["need_mb"])
        if entry["need_mb"] > entry["free_mb"]:
            problems.append("the filesystem at %s has %d MB free but this run writes %d MB there: %s. Free %d MB "
                            "there%s." % (mount, entry["free_mb"], entry["need_mb"], "; ".join(entry["whats"]),
                                          entry["need_mb"] - entry["free_mb"],
                                          (", or " + ", or ".join(entry["fixes"])) if entry["fixes"] else ""))
    return filesystems, problems
