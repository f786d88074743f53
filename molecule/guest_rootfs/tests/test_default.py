"""guest_rootfs: one rootfs tarball with its sha256, the packages, no Docker leftovers."""

import json
import os

import pytest

TARBALL = "/var/cache/testbed/guest/guest-rootfs.tar"
PACKAGES = ["python3", "procps", "iproute2", "apache2", "vsftpd", "lftp", "postfix", "sysbench", "fio", "hpcc",
            "xz-utils", "iperf3", "sockperf", "openssh-server", "ca-certificates", "systemd", "systemd-sysv"]


@pytest.fixture(scope="module")
def fact(host):
    path = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/tmp"), "guest_rootfs.json")
    return json.loads(host.file(path).content_string)


@pytest.fixture(scope="module")
def members(host):
    return set(host.check_output("tar -tf %s" % TARBALL).splitlines())


def test_sha256_file_matches_the_tarball(host, fact):
    line = host.file(TARBALL + ".sha256").content_string
    assert line == "%s  guest-rootfs.tar\n" % fact["sha256"]
    assert host.check_output("cd %s && sha256sum -c guest-rootfs.tar.sha256" % os.path.dirname(TARBALL)).endswith(": OK")
    assert fact["tarball"] == TARBALL


def test_packages_with_versions_from_the_dpkg_database(fact):
    for name in PACKAGES:
        assert fact["packages"].get(name), name
    assert fact["packages"]["python3"].startswith("3.11")
    assert len(fact["packages"]) > 150


def test_docker_placeholders_replaced(host, members):
    for gone in (".dockerenv", "dev/console", "etc/hostname", "etc/resolv.conf"):
        assert gone not in members
    hosts = host.check_output("tar -xOf %s etc/hosts" % TARBALL)
    assert hosts.splitlines()[0] == "127.0.0.1\tlocalhost"


def test_guest_has_its_tools_and_init(members):
    for path in ("usr/bin/python3", "usr/sbin/apache2", "usr/sbin/vsftpd", "usr/sbin/postfix", "usr/bin/sysbench",
                 "usr/bin/fio", "usr/bin/iperf3", "usr/bin/sockperf", "usr/bin/xz", "usr/sbin/sshd", "usr/bin/hpcc",
                 "usr/bin/lftp", "usr/sbin/init"):
        assert path in members, path
    assert "usr/sbin/policy-rc.d" not in members


def test_no_export_container_left(host):
    assert host.check_output("docker ps -a --filter name=^guest-rootfs-export$ --format '{{.Names}}'") == ""
