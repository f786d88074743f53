"""runtime_kvm: the guest boots from the rootfs tarball, Ansible reaches it over ssh, clients through the tap."""

import json
import os
import re
import socket
import subprocess

import pytest
import testinfra

NAME = "cc-kvm-molecule"
STATE = "/var/lib/testbed/lab"
EPHEMERAL = os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "")
INVENTORY = os.path.join(EPHEMERAL, "guest-inventory.json")
# what the experiment runs in the guest (the rootfs of roles/guest_rootfs)
TOOLS = ["python3", "sshd", "apache2", "vsftpd", "postfix", "lftp", "sysbench", "fio", "hpcc", "xz", "iperf3",
         "sockperf"]


@pytest.fixture(scope="module")
def fact():
    with open(os.path.join(EPHEMERAL, "runtime_kvm_guest.json")) as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def guest():
    # through Ansible's own ssh connection plugin, with the inventory built from the fact
    return testinfra.get_host("ansible://" + NAME, ansible_inventory=INVENTORY)


def test_ansible_pings_the_guest_over_ssh():
    env = dict(os.environ, ANSIBLE_HOST_KEY_CHECKING="False")
    done = subprocess.run(["ansible", NAME, "-i", INVENTORY, "-m", "ansible.builtin.ping", "-o"],
                          capture_output=True, text=True, timeout=180, env=env, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r'"ping":\s*"pong"', done.stdout), done.stdout


def test_fingerprint(host, fact):
    qemu = host.check_output("qemu-system-x86_64 --version").splitlines()[0]
    assert fact["name"] == NAME
    assert fact["address"] == "10.253.1.2"
    assert fact["runtime"] == "qemu"
    assert qemu == "QEMU emulator version " + fact["version"]
    assert fact["accel"] in ("kvm", "tcg")
    assert fact["emulated"] is (fact["accel"] != "kvm")
    assert fact["storage_driver"] == "virtio-blk raw snapshot"
    assert fact["network_mode"] == "virtio tap on bridge tb-ccm"
    assert fact["security_options"] == []
    cgroupfs = host.check_output("stat -f -c %T /sys/fs/cgroup")
    assert fact["cgroup_version"] == ("2" if cgroupfs == "cgroup2fs" else "1")
    tarball_sha = host.check_output("sha256sum %s", fact["rootfs_tarball"]).split()[0]
    assert fact["image_id"] == tarball_sha
    assert fact["cpus"] >= 1 and fact["memory_mb"] == 2048
    assert 0 < float(fact["boot_seconds"]) <= 300  # within the boot timeout (molecule.yml)


def test_qemu_runs_the_disk_snapshot_with_a_virtio_nic_on_the_tap(host, fact):
    pid = host.file(STATE + "/" + NAME + ".pid").content_string.strip()
    cmdline = host.file("/proc/%s/cmdline" % pid).content_string.split("\0")
    assert cmdline[0] == "qemu-system-x86_64"
    assert cmdline[cmdline.index("-smp") + 1] == str(fact["cpus"])
    assert cmdline[cmdline.index("-m") + 1] == "2048"
    assert any(a.startswith("file=") and a.endswith("if=none,id=root,format=raw,snapshot=on") for a in cmdline)
    assert "virtio-blk-pci,drive=root,serial=testbed-root" in cmdline
    assert "tap,id=nic1,ifname=tb-ccm-tap,script=no,downscript=no" in cmdline
    assert "virtio-net-pci,netdev=nic1,mac=52:54:00:cd:01:01,romfile=" in cmdline
    assert "user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:2225-10.0.2.15:22" in cmdline
    assert " init=/usr/local/lib/testbed/bin/init " in cmdline[cmdline.index("-append") + 1]


def test_ssh_forwarded_on_loopback_only(host):
    listening = host.check_output("ss -Hltn 'sport = :2225'")
    assert "127.0.0.1:2225" in listening
    assert "0.0.0.0:2225" not in listening


def test_clients_reach_the_guest_through_the_tap(host):
    assert "10.253.1.1/24" in host.check_output("ip -o -4 addr show dev tb-ccm")
    assert "master tb-ccm" in host.check_output("ip -o link show dev tb-ccm-tap")
    with socket.create_connection(("10.253.1.2", 22), timeout=30) as conn:
        conn.settimeout(30)
        assert conn.recv(64).startswith(b"SSH-2.0-OpenSSH")


def test_guest_root_is_the_tarball(host, guest, fact):
    # the same files as the tarball: the package database and the release
    for path in ("var/lib/dpkg/status", "usr/lib/os-release"):
        want = host.check_output("tar -xOf %s %s | sha256sum", fact["rootfs_tarball"], path).split()[0]
        assert guest.check_output("sha256sum /%s" % path).split()[0] == want, path


def test_guest_tools_are_there(guest):
    missing = [tool for tool in TOOLS if not guest.exists(tool)]
    assert missing == []


def test_guest_runs_busybox_init_and_no_systemd(guest):
    assert guest.check_output("readlink /proc/1/exe") == "/usr/local/lib/testbed/busybox"
    commands = guest.check_output("ps -e -o comm=").split()
    assert "systemd" not in commands and "sshd" in commands


def test_guest_nics(guest):
    assert guest.check_output("hostname") == NAME
    assert "10.253.1.2/24" in guest.check_output("ip -o -4 addr show dev eth1")
    assert "10.0.2.15/24" in guest.check_output("ip -o -4 addr show dev eth0")
    assert guest.run("ip -4 route show default").stdout.strip() == ""
