"""lab_vm: the director VM boots Debian's kernel, has IPVS, is reached on loopback only."""

import pytest
import testinfra

STATE = "/var/lib/testbed/lab"


@pytest.fixture(scope="module")
def guest():
    return testinfra.get_host(
        "ssh://root@127.0.0.1:2224", ssh_identity_file=STATE + "/id_ed25519",
        ssh_extra_args="-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR")


def test_qemu_runs_daemonized_with_a_pidfile(host):
    pid = host.file(STATE + "/lab-vm-molecule.pid").content_string.strip()
    cmdline = host.file("/proc/%s/cmdline" % pid).content_string.split("\0")
    assert cmdline[0] == "qemu-system-x86_64"
    assert "user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:2224-10.0.2.15:22" in cmdline
    assert any(a.startswith("file=") and a.endswith("snapshot=on") for a in cmdline)


def test_ssh_forwarded_on_loopback_only(host):
    listening = host.check_output("ss -Hltn 'sport = :2224'")
    assert "127.0.0.1:2224" in listening
    assert "0.0.0.0:2224" not in listening


def test_boot_time_recorded(host):
    seconds = float(host.file(STATE + "/lab-vm-molecule.boot-seconds").content_string)
    assert 0 < seconds < 300


def test_guest_runs_debian_kernel_with_ipvs(guest):
    assert guest.check_output("uname -r").endswith("-amd64")
    assert guest.run("modprobe ip_vs && test -e /proc/net/ip_vs").rc == 0
    assert guest.run("ipvsadm -Ln").rc == 0


def test_guest_nics_from_the_command_line(guest):
    assert guest.check_output("hostname") == "lab-vm-molecule"
    assert "10.252.5.1/24" in guest.check_output("ip -o -4 addr show dev eth1")
    assert "10.0.2.15/24" in guest.check_output("ip -o -4 addr show dev eth0")
    assert guest.run("ip -4 route show default").stdout.strip() == ""


def test_guest_is_lean(guest):
    assert guest.check_output("readlink /sbin/init") == "/bin/busybox"
    assert not guest.exists("systemctl")
    assert guest.exists("python3") and guest.exists("ipvsadm") and guest.exists("iptables")


def test_guest_clock_close_to_the_host(host, guest):
    import time
    before = time.time()
    guest_now = float(guest.check_output("date +%s.%N"))
    after = time.time()
    # the role steps the clock when it is off by more than 0.1 s beyond half the round trip of its
    # measurement: on a busy machine that round trip can be a second and more (an emulated guest)
    assert before - 2.0 <= guest_now <= after + 2.0


def test_qemu_monitor_socket_answers(host):
    import re
    import socket
    path = STATE + "/lab-vm-molecule.monitor"
    assert host.file(path).is_socket
    assert host.file(path).mode & 0o002 == 0  # not connectable by other users
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(10)
    sock.connect(path)
    out = b""
    try:
        while not out.endswith(b"(qemu) "):
            out += sock.recv(65536)
        sock.sendall(b"info virtio\n")
        out = b""
        while not out.endswith(b"(qemu) "):
            out += sock.recv(65536)
    finally:
        sock.close()
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out.decode(errors="replace"))
    # the management NIC and the one lab NIC of this scenario
    assert len(re.findall(r"^/\S+ \[virtio-net\]", text, re.M)) == 2
