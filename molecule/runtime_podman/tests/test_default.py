"""runtime_podman: the rootful guest from the guest rootfs, reached by containers.podman.podman and from the host."""

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest

NAME = "cc-podman-molecule"
REPOSITORY = "localhost/testbed/guest-rootfs-molecule"
TARBALL = "/var/cache/testbed/guest/guest-rootfs.tar"
CONF = "/etc/containers/containers.conf.d/50-testbed-runtime-podman-molecule.conf"
COMMENT = "testbed-runtime-podman-molecule"
FIELDS = ("name", "address", "runtime", "version", "storage_driver", "cgroup_version", "network_mode",
          "security_options", "image_id")


def ansible(module, args=None):
    """Ad-hoc Ansible against the guest through the connection plugin (the venv's own ansible)."""
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible"), "-i", NAME + ",",
           "-c", "containers.podman.podman", "-m", module]
    if args:
        cmd += ["-a", args]
    return subprocess.run(cmd + ["all"], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def fact(host):
    path = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/tmp"), "runtime_podman_guest.json")
    return json.loads(host.file(path).content_string)


@pytest.fixture(scope="module")
def inspect(host):
    return json.loads(host.check_output("podman inspect %s" % NAME))[0]


@pytest.fixture(scope="module")
def sha256(host):
    return host.file(TARBALL + ".sha256").content_string.split()[0]


def test_guest_carries_the_testbeds_label(inspect):
    """The mark without which the role neither replaces nor removes a container of the guest's name."""
    assert inspect["Config"]["Labels"]["org.testbed.role"] == "runtime_podman"


def test_fingerprint_complete_and_true(host, fact, inspect, sha256):
    assert all(fact.get(k) not in (None, "") for k in FIELDS), fact
    assert isinstance(fact["security_options"], list)
    assert fact["name"] == NAME and fact["runtime"] == "podman"
    assert fact["image_id"] == sha256
    assert fact["image"] == "%s:%s" % (REPOSITORY, sha256[:12])
    assert fact["version"] == host.check_output("podman info --format '{{.Version.Version}}'")
    assert fact["storage_driver"] == host.check_output("podman info --format '{{.Store.GraphDriverName}}'")
    assert fact["cgroup_version"] == host.check_output("podman info --format '{{.Host.CgroupsVersion}}'")
    assert fact["network_mode"].startswith("bridge (podman0, NAT")
    assert fact["address"] == inspect["NetworkSettings"]["IPAddress"]
    assert fact["limits"] == {"cpus": None, "memory_bytes": None}
    assert isinstance(fact["ulimits"], list)


def test_guest_runs_sleep_under_init_without_limits(host, inspect, sha256):
    assert inspect["State"]["Running"]
    assert inspect["Config"]["Image"] == "%s:%s" % (REPOSITORY, sha256[:12])
    assert inspect["Config"]["Hostname"] == NAME
    assert inspect["HostConfig"]["Init"] is True
    assert inspect["HostConfig"]["Privileged"] is False
    assert not inspect["HostConfig"]["CapAdd"]
    assert inspect["HostConfig"]["NetworkMode"] == "bridge"
    assert inspect["HostConfig"]["NanoCpus"] == 0 and inspect["HostConfig"]["Memory"] == 0
    assert inspect["HostConfig"]["PidsLimit"] == 0
    assert host.check_output("podman exec %s cat /proc/1/cmdline" % NAME).split("\0")[:4] == [
        "/run/podman-init", "--", "sleep", "infinity"]


def test_image_labelled_with_the_tarball_sha(host, sha256):
    image = json.loads(host.check_output("podman image inspect %s:%s" % (REPOSITORY, sha256[:12])))[0]
    assert image["Config"]["Labels"]["org.testbed.rootfs-sha256"] == sha256


def test_drop_in_sets_no_pids_limit_and_usable_ulimits(host, fact, inspect):
    conf = host.file(CONF).content_string
    assert "pids_limit = 0" in conf
    for ulimit in fact["ulimits"]:
        assert ulimit in conf
    limits = {u["Name"]: u["Hard"] for u in inspect["HostConfig"]["Ulimits"]}
    for ulimit in fact["ulimits"]:
        kind, values = ulimit.split("=")
        assert limits["RLIMIT_" + kind.upper()] == int(values.split(":")[1])


def test_docker_user_accepts_the_podman_bridge(host):
    if host.run("iptables -S DOCKER-USER").rc != 0:
        pytest.skip("no Docker FORWARD chain on this host")
    rules = [r for r in host.check_output("iptables -S DOCKER-USER").splitlines() if COMMENT in r]
    assert sorted(rules) == sorted([
        "-A DOCKER-USER -i podman0 -m comment --comment %s -j ACCEPT" % COMMENT,
        "-A DOCKER-USER -o podman0 -m conntrack --ctstate RELATED,ESTABLISHED -m comment --comment %s -j ACCEPT"
        % COMMENT])


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
    host.check_output("podman exec -d %s python3 -m http.server 8080 --bind %s --directory /etc" % (NAME, address))
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
        host.run("podman exec %s pkill -f http.server" % NAME)
