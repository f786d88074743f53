"""runtime_lxd: preseeded pool and bridge, the imported image, the guest booted and reached with community.general.lxd."""

import json
import time

NAME = "cc-lxd-molecule"
ADDRESS = "10.254.1.10"
PORT = 18082


def query(host, path):
    return json.loads(host.check_output("lxc query %s" % path))


def guest(host, command):
    return host.run("lxc exec %s -- sh -c %s" % (NAME, json.dumps(command)))


def test_pool_and_bridge_from_the_preseed(host):
    pool = query(host, "/1.0/storage-pools/testbed-molecule")
    assert pool["driver"] == "dir"
    net = query(host, "/1.0/networks/lxdbr-mol")
    assert net["managed"] and net["type"] == "bridge"
    assert net["config"]["ipv4.address"] == "10.254.1.1/24"
    assert net["config"]["ipv4.nat"] == "true"
    assert net["config"]["ipv6.address"] == "none"
    # the marks without which absent deletes neither (module_utils/testbed_guest_ownership.py)
    assert pool["description"] == "testbed LXD pool (roles/runtime_lxd)"
    assert net["description"] == "testbed LXD network (roles/runtime_lxd)"


def test_image_alias_names_the_tarball(host):
    sha = host.check_output("sha256sum /var/cache/testbed/molecule/runtime-rootfs.tar").split()[0]
    alias = query(host, "/1.0/images/aliases/testbed-guest-molecule-%s" % sha[:12])
    image = query(host, "/1.0/images/%s" % alias["target"])
    assert image["type"] == "container"
    assert image["properties"]["description"] == "testbed guest rootfs %s" % sha


def test_guest_running_unprivileged_without_limits(host):
    inst = query(host, "/1.0/instances/%s?recursion=1" % NAME)
    assert inst["status"] == "Running"
    assert inst["config"]["security.privileged"] == "false"
    assert inst["config"]["user.testbed.owner"] == "runtime_lxd"
    assert not [k for k in inst["config"] if k.startswith("limits.")]
    assert inst["devices"]["eth0"]["network"] == "lxdbr-mol"
    addrs = [a["address"] for a in inst["state"]["network"]["eth0"]["addresses"] if a["family"] == "inet"]
    assert addrs == [ADDRESS]


def test_guest_pid1_is_systemd_and_booted(host):
    assert guest(host, "cat /proc/1/comm").stdout.strip() == "systemd"
    assert guest(host, "systemctl is-system-running").stdout.strip() in ("running", "degraded")


def test_ansible_connection_plugin_reaches_python3(host):
    out = host.run(
        "ansible -i '%s,' -c community.general.lxd -m ansible.builtin.command"
        " -a 'python3 -c \"import sys; print(sys.version_info[0])\"' all" % NAME)
    assert out.rc == 0, out.stdout + out.stderr
    assert "CHANGED" in out.stdout and out.stdout.strip().endswith("3")
    ping = host.run("ansible -i '%s,' -c community.general.lxd -m ansible.builtin.ping all" % NAME)
    assert ping.rc == 0 and "pong" in ping.stdout


def test_host_reaches_the_guest_on_the_bridge(host):
    # A bounded HTTP server in the guest on its bridge address; the host fetches from it.
    # (bounded at 180 s, beyond the 60 s the host waits for it to answer)
    guest(host, "cd /tmp && nohup timeout 180 python3 -m http.server %d --bind %s >/dev/null 2>&1 &" % (PORT, ADDRESS))
    try:
        code, deadline = "", time.monotonic() + 60
        while time.monotonic() < deadline:
            code = host.run("curl -s -m 10 -o /dev/null -w '%%{http_code}' http://%s:%d/" % (ADDRESS, PORT)).stdout
            if code == "200":
                break
            time.sleep(0.5)
        assert code == "200", code
    finally:
        guest(host, "pkill -f 'http.server %d' || true" % PORT)


def test_accept_rules_in_docker_user(host):
    # dockerd runs (make molecule starts it), so the role added its rules.
    chain = host.run("iptables -S DOCKER-USER")
    assert chain.rc == 0
    rules = [r for r in chain.stdout.splitlines() if "testbed-runtime-lxd-molecule" in r]
    assert any(r.startswith("-A DOCKER-USER -i lxdbr-mol ") and r.endswith("-j ACCEPT") for r in rules)
    assert any("-o lxdbr-mol" in r and "RELATED,ESTABLISHED" in r for r in rules)
    assert len(rules) == 2
