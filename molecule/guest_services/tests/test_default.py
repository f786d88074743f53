"""Behaviour of a guest converged with guest_services (systemd and init-less containers)."""

import ftplib
import hashlib
import io
import json
import smtplib
import time
import urllib.request

import pytest

LINE = b"guest_services test page: 0123456789 abcdefghijklmnopqrstuvwxyz\n"
FTP_BYTES = 8 * 1048576
SEED = "testbed-guest-services"


def expected_page(size=1024):
    return (LINE * (size // len(LINE) + 1))[:size]


def expected_file_sha256(size=FTP_BYTES, seed=SEED):
    """The documented generator: 1 MiB chunks of SHAKE-256("seed:index")."""
    digest = hashlib.sha256()
    done, index = 0, 0
    while done < size:
        chunk = hashlib.shake_256(("%s:%d" % (seed, index)).encode()).digest(min(1 << 20, size - done))
        digest.update(chunk)
        done += len(chunk)
        index += 1
    return digest.hexdigest()


def in_guest(host, script):
    """Run a Python snippet inside the container (loopback traffic only); its stdout."""
    out = host.run("python3 -c %s", script)
    assert out.rc == 0, out.stderr
    return out.stdout


@pytest.fixture
def address(host):
    """The container's address on the Docker bridge (what the host's clients use)."""
    out = host.run("ip -4 -o addr show dev eth0")
    assert out.rc == 0, out.stderr
    return out.stdout.split()[3].split("/")[0]


def test_service_manager_as_expected(host):
    pid1 = host.file("/proc/1/comm").content_string.strip()
    if "systemd" in host.backend.get_hostname() or pid1 == "systemd":
        assert pid1 == "systemd"
        for unit in ("apache2", "vsftpd", "postfix"):
            assert host.service(unit).is_enabled
            assert host.run("systemctl is-active %s" % unit).stdout.strip() == "active"
    else:
        assert pid1 == "sleep"
        assert not host.file("/run/systemd/system").exists
        for script in ("apache2", "vsftpd", "postfix"):
            assert host.run("/etc/init.d/%s status" % script).rc == 0


@pytest.mark.parametrize("port", [80, 21, 25])
def test_listens_on_all_addresses(host, port):
    assert host.socket("tcp://0.0.0.0:%d" % port).is_listening


def test_configs_check_clean(host):
    assert host.run("apache2ctl configtest").rc == 0
    assert host.run("postfix check").rc == 0
    assert "ServerName localhost" in host.file("/etc/apache2/conf-enabled/guest-services.conf").content_string
    assert not host.file("/etc/apache2/sites-enabled/000-default.conf").exists
    assert host.file("/etc/apache2/mods-enabled/mpm_event.load").exists


def test_page_served_inside(host):
    body = in_guest(host, "import sys, urllib.request; "
                    "sys.stdout.write(urllib.request.urlopen('http://127.0.0.1/test.html', timeout=5).read().decode())")
    assert body.encode() == expected_page()


def test_page_served_to_the_host(host, address):
    with urllib.request.urlopen("http://%s/test.html" % address, timeout=5) as reply:
        assert reply.status == 200
        assert reply.read() == expected_page()


def test_ftp_file_is_the_documented_one(host):
    stamp = json.loads(host.file("/var/lib/guest_services/ftp-testfile.json").content_string)
    assert stamp["bytes"] == FTP_BYTES and stamp["seed"] == SEED
    assert stamp["sha256"] == expected_file_sha256()
    served = host.file("/srv/ftp/pub/testfile.bin")
    assert served.size == FTP_BYTES and served.user == "root" and served.mode == 0o644
    assert host.run("sha256sum /srv/ftp/pub/testfile.bin").stdout.split()[0] == stamp["sha256"]


def test_ftp_from_the_host(host, address):
    """Anonymous passive get of the file, put into the upload area, put into pub refused."""
    ftp = ftplib.FTP(address, timeout=10)
    try:
        ftp.login()
        _, data_port = ftp.makepasv()
        assert 40000 <= data_port <= 40049
        digest = hashlib.sha256()
        ftp.retrbinary("RETR /pub/testfile.bin", digest.update)
        assert digest.hexdigest() == expected_file_sha256()
        payload = b"upload check\n" * 1000
        ftp.storbinary("STOR /upload/molecule.bin", io.BytesIO(payload))
        ftp.storbinary("STOR /upload/molecule.bin", io.BytesIO(payload))  # a repeated put overwrites
        assert ftp.size("/upload/molecule.bin") == len(payload)
        ftp.delete("/upload/molecule.bin")
        with pytest.raises(ftplib.error_perm, match="^553"):
            ftp.storbinary("STOR /pub/refused.bin", io.BytesIO(b"x"))
        with pytest.raises(ftplib.error_perm):
            ftp.delete("/pub/testfile.bin")
    finally:
        ftp.close()
    assert host.file("/srv/ftp/pub/testfile.bin").size == FTP_BYTES


def test_smtp_from_the_host_discards_test_domain_mail(host, address):
    server = smtplib.SMTP(address, 25, timeout=10)
    try:
        refused = server.sendmail("load@client.testbed.test", ["user1@testbed.test", "user2@testbed.test"],
                                  "Subject: guest_services molecule\r\n\r\nbody\r\n")
        assert refused == {}
        with pytest.raises(smtplib.SMTPRecipientsRefused) as info:
            server.sendmail("load@client.testbed.test", ["someone@example.org"], "Subject: relay\r\n\r\nno\r\n")
        assert info.value.recipients["someone@example.org"][0] == 554
    finally:
        server.quit()
    # discarded, not queued or stored: the queue drains, no mailbox grows
    # (60 s only guards against a hang: a slow machine may take its time)
    deadline = time.monotonic() + 60
    while True:
        queue = host.run("postqueue -j")
        assert queue.rc == 0, queue.stderr
        if not queue.stdout.strip() or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert queue.stdout.strip() == "", queue.stdout
    assert not host.file("/var/mail/user1").exists


def test_smtp_inside(host):
    out = in_guest(host, "import smtplib; s = smtplib.SMTP('127.0.0.1', 25, timeout=10); "
                   "print(s.sendmail('a@testbed.test', ['b@testbed.test'], 'Subject: x\\r\\n\\r\\ny\\r\\n')); s.quit()")
    assert out.strip() == "{}"


def test_postfix_sends_nothing_on(host):
    postconf = host.run("postconf -h default_transport relay_transport smtpd_peername_lookup mynetworks")
    lines = postconf.stdout.splitlines()
    assert lines[0].startswith("error:") and lines[1].startswith("error:")
    assert lines[2] == "no"
    assert "172.16.0.0/12" in lines[3].split()
