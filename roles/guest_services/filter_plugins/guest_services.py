# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a host had before guest_services changed it, and how to put its services back.

``gs_before`` turns the facts read before the first change (service_facts, dpkg-query, the FTP
directories' stat) into the record the role keeps in ``<state dir>/before.json``; ``gs_restore``
turns that record into what each daemon must be once the role's configuration is gone: running
(and enabled, under systemd) only when the host had it installed and running before.
"""


def _service(facts, daemon):
    """service_facts' entry of a daemon: systemd names it <name>.service, the sysv scripts <name>."""
    facts = facts or {}
    return facts.get(daemon + ".service") or facts.get(daemon) or {}


def gs_before(daemons, service_facts, dpkg_lines, ftp_dirs):
    """The record of the host before the role: {services: {daemon: {installed, running, enabled}},
    ftp_dirs: {path: existed}}.

    ``daemons``: {server: daemon}; ``dpkg_lines``: ``<status> <package>`` lines of dpkg-query;
    ``ftp_dirs``: the stat results ({item: path, stat: {exists}}) of the FTP directories."""
    installed = sorted(line.split(" ", 1)[1] for line in dpkg_lines or ()
                       if line.startswith("installed ") and " " in line)
    services = {}
    for daemon in sorted(set((daemons or {}).values())):
        entry = _service(service_facts, daemon)
        status = entry.get("status")
        services[daemon] = {
            "installed": daemon in installed,
            "running": entry.get("state") == "running",
            "enabled": {"enabled": True, "disabled": False}.get(status),
        }
    dirs = {}
    for result in ftp_dirs or ():
        dirs[result["item"]] = bool((result.get("stat") or {}).get("exists"))
    return {"services": services, "ftp_dirs": dirs}


def gs_new_packages(dpkg_before, dpkg_after):
    """The packages installed between two dpkg-query listings (what the role's install brought)."""
    def names(lines):
        return {line.split(" ", 1)[1] for line in lines or () if line.startswith("installed ") and " " in line}
    return sorted(names(dpkg_after) - names(dpkg_before))


def gs_orphans(dependencies, simulate_lines):
    """Those of ``dependencies`` that ``apt-get --simulate autoremove`` would remove (``Remv <pkg> [...]``
    lines): the role's install brought them and nothing needs them any more. Another package's
    orphans are never in ``dependencies``; one of ours that something still needs is never listed."""
    removable = {line.split()[1] for line in simulate_lines or () if line.startswith("Remv ") and len(line.split()) > 1}
    return sorted(set(dependencies or ()) & removable)


def gs_restore(before, servers, daemons):
    """[{daemon, state: started|stopped, enabled: bool|None}] for the servers the role ran.

    A daemon the host had installed and running before is started again (its enabled flag as it was);
    any other is stopped (disabled under systemd when the host did not have it before)."""
    plan = []
    for server in servers or ():
        daemon = daemons[server]
        was = ((before or {}).get("services") or {}).get(daemon) or {}
        if was.get("installed") and was.get("running"):
            plan.append({"daemon": daemon, "state": "started", "enabled": was.get("enabled")})
        else:
            plan.append({"daemon": daemon, "state": "stopped",
                         "enabled": was.get("enabled") if was.get("installed") else False})
    return plan


def gs_created_dirs(before, paths):
    """The paths among ``paths`` that did not exist before the role (only those are removed).
    Without a record (a state directory from before this record was kept), none."""
    dirs = (before or {}).get("ftp_dirs")
    if not isinstance(dirs, dict):
        return []
    return [path for path in paths if dirs.get(path) is False]


class FilterModule:
    def filters(self):
        return {"gs_before": gs_before, "gs_new_packages": gs_new_packages, "gs_orphans": gs_orphans,
                "gs_restore": gs_restore, "gs_created_dirs": gs_created_dirs}
