"""guest_services' record of the host before its first change, and how its services are put back
(roles/guest_services/filter_plugins/guest_services.py)."""

from guest_services import gs_before, gs_created_dirs, gs_new_packages, gs_orphans, gs_restore

DAEMONS = {"web": "apache2", "ftp": "vsftpd", "smtp": "postfix"}

# service_facts on this lab host (no systemd: Debian's init scripts, `service --status-all`), and on
# a systemd host (units named <daemon>.service, with their enabled status)
SYSV = {"vsftpd": {"name": "vsftpd", "source": "sysv", "state": "running"},
        "postfix": {"name": "postfix", "source": "sysv", "state": "stopped"}}
SYSTEMD = {"apache2.service": {"name": "apache2.service", "source": "systemd", "state": "running",
                               "status": "enabled"},
           "vsftpd.service": {"name": "vsftpd.service", "source": "systemd", "state": "stopped",
                              "status": "disabled"}}
DPKG = ["installed vsftpd", "installed postfix", "config-files apache2", "installed libc6"]
DIRS = [{"item": "/srv/ftp/pub", "stat": {"exists": True}}, {"item": "/srv/ftp/upload", "stat": {"exists": False}}]


def test_the_record_of_a_host_without_systemd():
    before = gs_before(DAEMONS, SYSV, DPKG, DIRS)
    assert before["services"] == {
        "apache2": {"installed": False, "running": False, "enabled": None},   # only its config files left
        "postfix": {"installed": True, "running": False, "enabled": None},
        "vsftpd": {"installed": True, "running": True, "enabled": None},
    }
    assert before["ftp_dirs"] == {"/srv/ftp/pub": True, "/srv/ftp/upload": False}
    assert set(before) == {"services", "ftp_dirs"}


def test_the_record_of_a_systemd_host_keeps_the_enabled_flags():
    before = gs_before(DAEMONS, SYSTEMD, ["installed apache2", "installed vsftpd"], [])
    assert before["services"]["apache2"] == {"installed": True, "running": True, "enabled": True}
    assert before["services"]["vsftpd"] == {"installed": True, "running": False, "enabled": False}


def test_only_what_ran_before_runs_again():
    before = gs_before(DAEMONS, SYSTEMD, ["installed apache2", "installed vsftpd"], [])
    assert gs_restore(before, ["web", "ftp", "smtp"], DAEMONS) == [
        {"daemon": "apache2", "state": "started", "enabled": True},
        {"daemon": "vsftpd", "state": "stopped", "enabled": False},   # installed, stopped and disabled before
        {"daemon": "postfix", "state": "stopped", "enabled": False},  # the testbed installed it
    ]
    # no record (a state directory from before the record was kept): nothing is started
    assert [step["state"] for step in gs_restore({}, ["ftp"], DAEMONS)] == ["stopped"]


def test_only_the_directories_the_role_made_are_removed():
    before = gs_before(DAEMONS, SYSV, DPKG, DIRS)
    assert gs_created_dirs(before, ["/srv/ftp/pub", "/srv/ftp/upload"]) == ["/srv/ftp/upload"]
    assert gs_created_dirs({}, ["/srv/ftp/pub"]) == []          # no record: none
    assert gs_created_dirs(before, ["/srv/ftp/other"]) == []   # not looked at: not ours


def test_the_packages_an_install_brought():
    after = DPKG + ["installed apache2-bin", "installed apache2", "installed libapr1"]
    assert gs_new_packages(DPKG, after) == ["apache2", "apache2-bin", "libapr1"]
    assert gs_new_packages(DPKG, DPKG) == []


def test_only_the_roles_own_orphans_are_purged():
    # apt-get --simulate autoremove (apt 2.6): one "Remv <package> [<version>]" line per package
    simulate = ["Reading package lists...", "Building dependency tree...", "Reading state information...",
                "The following packages will be REMOVED:", "  libapr1 libaprutil1 the-hosts-orphan",
                "0 upgraded, 0 newly installed, 3 to remove and 0 not upgraded.",
                "Remv libaprutil1 [1.6.3-1]", "Remv libapr1 [1.7.2-3]", "Remv the-hosts-orphan [1.0-1]"]
    # ssl-cert came with the role's install but another package needs it now: kept
    assert gs_orphans(["libapr1", "libaprutil1", "ssl-cert"], simulate) == ["libapr1", "libaprutil1"]
    assert gs_orphans([], simulate) == [] and gs_orphans(["libapr1"], []) == []
