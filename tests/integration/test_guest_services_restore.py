"""A native host's own vsftpd as it was after guest_services (state restored), for real on this host
(tests/integration/guest_services_native.yml with vsftpd on loopback, no systemd: Debian's init script).

The host's vsftpd - running in one test, stopped in the other - and a pre-existing /srv/ftp/pub with a
file of the operator's: the role records them before its first change, configures and runs vsftpd
for the experiment, and ``restored`` (container_compare's cleanup) puts back Debian's vsftpd.conf,
removes only what the role made (its test file, and the upload directory it created), keeps the
operator's directory and file, and leaves vsftpd running or stopped as it was. The package stays.
"""
import hashlib
import os
import subprocess

import pytest
from playbook_run import assert_ok, installed, native_init_script_marks, play

PLAYBOOK = "tests/integration/guest_services_native.yml"
FTP_ROOT = "/srv/ftp"
CONF = "/etc/vsftpd.conf"


pytestmark = native_init_script_marks("configures and starts this host's vsftpd") + [
    pytest.mark.skipif(not installed("vsftpd"), reason="this host has no vsftpd of its own to put back"),
]


def running():
    """Whether vsftpd runs, by Debian's init script (start-stop-daemon on its pid file)."""
    return subprocess.run(["service", "vsftpd", "status"], capture_output=True).returncode == 0


def service(action):
    proc = subprocess.run(["service", "vsftpd", action], capture_output=True, text=True)
    assert running() == (action == "start"), f"service vsftpd {action}: {proc.stdout}{proc.stderr}"


def digest(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


@pytest.fixture
def host_as_found():
    """The host's vsftpd, its configuration and /srv/ftp as found, put back whatever the test did."""
    was_running, conf = running(), open(CONF, "rb").read()
    pub, upload = os.path.join(FTP_ROOT, "pub"), os.path.join(FTP_ROOT, "upload")
    made = [path for path in (pub, upload) if not os.path.exists(path)]
    yield
    with open(CONF, "wb") as handle:
        handle.write(conf)
    for path in made:
        subprocess.run(["rm", "-rf", path], check=True)
    if running() != was_running:
        service("start" if was_running else "stop")


def roles(tmp_path, state):
    return play(PLAYBOOK, "-e", f"gs_state={state}", "-e", f"gs_state_dir={tmp_path / 'guest_services'}",
                "-e", '{"gs_servers": ["ftp"]}', inventory=None)


@pytest.mark.parametrize("before", ["running", "stopped"])
def test_vsftpd_and_an_operators_ftp_directory_are_as_they_were(tmp_path, host_as_found, before):
    service("start" if before == "running" else "stop")
    assert running() == (before == "running")
    conf = digest(CONF)
    pub = os.path.join(FTP_ROOT, "pub")
    upload_existed = os.path.exists(os.path.join(FTP_ROOT, "upload"))
    os.makedirs(pub, exist_ok=True)
    mine = os.path.join(pub, "operators-file.txt")
    with open(mine, "w", encoding="utf-8") as handle:
        handle.write("the operator's\n")

    assert_ok(roles(tmp_path, "present"))
    assert running(), "the role did not run vsftpd"
    assert digest(CONF) != conf, "the role did not configure vsftpd"
    assert os.path.exists(os.path.join(pub, "testfile.bin"))

    assert_ok(roles(tmp_path, "restored"))
    assert running() == (before == "running"), f"vsftpd was {before} before the run"
    assert digest(CONF) == conf, "Debian's vsftpd.conf is not back"
    assert os.path.exists(mine), "the operator's file in /srv/ftp/pub is gone"
    assert not os.path.exists(os.path.join(pub, "testfile.bin")), "the role's test file is left"
    assert os.path.exists(os.path.join(FTP_ROOT, "upload")) == upload_existed, "the upload directory is not as it was"
    assert installed("vsftpd"), "restored removed the host's package"
    os.remove(mine)
