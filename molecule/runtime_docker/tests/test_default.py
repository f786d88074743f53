"""runtime_docker: the guest from the guest rootfs, reached by community.docker.docker and from the host."""

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest

NAME = "cc-docker-molecule"
REPOSITORY = "testbed/guest-rootfs-molecule"
TARBALL = "/var/cache/testbed/guest/guest-rootfs.tar"
FIELDS = ("name", "address", "runtime", "version", "storage_driver", "cgroup_version", "network_mode",
          "security_options", "image_id")


def ansible(module, args=None):
    """Ad-hoc Ansible against the guest through the connection plugin (the venv's own ansible)."""
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible"), "-i", NAME + ",",
           "-c", "community.docker.docker", "-m", module]
    if args:
        cmd += ["-a", args]
    return subprocess.run(cmd + ["all"], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def fact(host):
    path = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/tmp"), "runtime_docker_guest.json")
    return json.loads(host.file(path).content_string)


@pytest.fixture(scope="module")
def inspect(host):
    return json.loads(host.check_output("docker inspect %s" % NAME))[0]


@pytest.fixture(scope="module")
def sha256(host):
    return host.file(TARBALL + ".sha256").content_string.split()[0]


def test_guest_carries_the_testbeds_label(inspect):
    """The mark without which the role neither replaces nor removes a container of the guest's name."""
    assert inspect["Config"]["Labels"]["org.testbed.role"] == "runtime_docker"


def test_fingerprint_complete_and_true(host, fact, inspect, sha256):
    assert all(fact.get(k) not in (None, "") for k in FIELDS), fact
    assert isinstance(fact["security_options"], list)
    assert fact["name"] == NAME and fact["runtime"] == "docker"
    assert fact["image_id"] == sha256
    assert fact["image"] == "%s:%s" % (REPOSITORY, sha256[:12])
    assert fact["version"] == host.check_output("docker version --format '{{.Server.Version}}'")
    assert fact["storage_driver"] == host.check_output("docker info --format '{{.Driver}}'")
    assert fact["cgroup_version"] == "v" + host.check_output("docker info --format '{{.CgroupVersion}}'")
    assert fact["network_mode"].startswith("bridge")
    assert fact["address"] == inspect["NetworkSettings"]["IPAddress"]
    assert fact["limits"] == {"cpus": None, "memory_bytes": None}


def test_guest_runs_sleep_under_init_without_limits(host, inspect, sha256):
    assert inspect["State"]["Running"]
    assert inspect["Config"]["Image"] == "%s:%s" % (REPOSITORY, sha256[:12])
    assert inspect["Config"]["Hostname"] == NAME
    assert inspect["HostConfig"]["Init"] is True
    assert inspect["HostConfig"]["Privileged"] is False
    assert not inspect["HostConfig"]["CapAdd"]
    assert inspect["HostConfig"]["NetworkMode"] == "bridge"
    assert inspect["HostConfig"]["NanoCpus"] == 0 and inspect["HostConfig"]["Memory"] == 0
    assert host.check_output("docker exec %s cat /proc/1/cmdline" % NAME).split("\0")[:4] == [
        "/sbin/docker-init", "--", "sleep", "infinity"]


def test_image_labelled_with_the_tarball_sha(host, sha256):
    image = json.loads(host.check_output("docker image inspect %s:%s" % (REPOSITORY, sha256[:12])))[0]
    assert image["Config"]["Labels"]["org.testbed.rootfs-sha256"] == sha256


def test_ping_through_the_connection_plugin():
    result = ansible("ansible.builtin.ping")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pong" in result.stdout


def test_python3_in_the_guest():
    result = ansible("ansible.builtin.command", "python3 -c 'import sys; print(sys.version_info[:2])'")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(3, 11)" in result.stdout


def test_host_reaches_the_guest_address(host, fact):
    address = fact["address"]
    host.check_output("docker exec -d %s python3 -m http.server 8080 --bind %s --directory /etc" % (NAME, address))
    try:
        # until the server answers; 60 s only guards against a hang
        body, error, deadline = None, None, time.monotonic() + 60
        while body is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen("http://%s:8080/hostname" % address, timeout=10) as response:
                    body = response.read().decode()
            except OSError as exc:
                error = exc
                time.sleep(0.5)
        assert body is not None and body.strip() == NAME, (body, error)
    finally:
        host.run("docker exec %s pkill -f http.server" % NAME)
