"""runtime_lxc: the guest boots systemd on lxcbr0 and Ansible reaches it with community.general.lxc."""

import json
import time

NAME = "cc-lxc-molecule"
ADDRESS = "10.0.3.11"
PORT = 18081


def attach(host, command):
    return host.run("lxc-attach -n %s -- sh -c %s" % (NAME, json.dumps(command)))


def test_guest_running_with_its_address(host):
    assert host.check_output("lxc-info -n %s -s -H" % NAME).strip() == "RUNNING"
    assert host.check_output("lxc-info -n %s -i -H" % NAME).split() == [ADDRESS]


def test_config_unconfined_booting_init(host):
    config = host.file("/var/lib/lxc/%s/config" % NAME).content_string.splitlines()
    assert "lxc.apparmor.profile = unconfined" in config
    assert "lxc.init.cmd = /sbin/init" in config
    assert "lxc.net.0.link = lxcbr0" in config
    assert not [line for line in config if line.startswith(("lxc.cgroup.", "lxc.cgroup2."))]


def test_guest_pid1_is_systemd_and_booted(host):
    assert attach(host, "cat /proc/1/comm").stdout.strip() == "systemd"
    assert attach(host, "systemctl is-system-running").stdout.strip() in ("running", "degraded")


def test_image_stamp_is_the_tarball_sha256(host):
    stamp = host.file("/var/lib/lxc/%s/testbed-image.sha256" % NAME).content_string.strip()
    assert stamp == host.check_output("sha256sum /var/cache/testbed/molecule/runtime-rootfs.tar").split()[0]


def test_guest_directory_carries_the_testbeds_marker(host):
    """The mark without which the role neither unpacks into nor removes a directory of the guest's name."""
    marker = json.loads(host.file("/var/lib/lxc/%s/testbed-guest.json" % NAME).content_string)
    assert marker == {"created_by": "runtime_lxc", "name": NAME}


# community.general.lxc hands the attached process a non-blocking stdin: with
# pipelining, python3 in the guest often reads nothing and exits ("[Errno 32]
# Broken pipe", 7 of 15 runs here). The guest's inventory host therefore sets
# ansible_pipelining: false (a YAML boolean; the string "false" is true).
NO_PIPELINING = """-e '{"ansible_pipelining": false}'"""


def test_ansible_connection_plugin_reaches_python3(host):
    for _ in range(5):
        out = host.run(
            "ansible -i '%s,' -c community.general.lxc %s -m ansible.builtin.command"
            " -a 'python3 -c \"import sys; print(sys.version_info[0])\"' all" % (NAME, NO_PIPELINING))
        assert out.rc == 0, out.stdout + out.stderr
        assert "CHANGED" in out.stdout and out.stdout.strip().endswith("3")
    ping = host.run("ansible -i '%s,' -c community.general.lxc %s -m ansible.builtin.ping all" % (NAME, NO_PIPELINING))
    assert ping.rc == 0 and "pong" in ping.stdout


def test_host_reaches_the_guest_on_the_bridge(host):
    # A bounded HTTP server in the guest on its bridge address; the host fetches from it.
    # (bounded at 180 s, beyond the 60 s the host waits for it to answer)
    attach(host, "cd /tmp && nohup timeout 180 python3 -m http.server %d --bind %s >/dev/null 2>&1 &" % (PORT, ADDRESS))
    try:
        code, deadline = "", time.monotonic() + 60
        while time.monotonic() < deadline:
            code = host.run("curl -s -m 10 -o /dev/null -w '%%{http_code}' http://%s:%d/" % (ADDRESS, PORT)).stdout
            if code == "200":
                break
            time.sleep(0.5)
        assert code == "200", code
    finally:
        attach(host, "pkill -f 'http.server %d' || true" % PORT)


def test_accept_rules_in_docker_user(host):
    # dockerd runs (make molecule starts it), so the role added its rules.
    chain = host.run("iptables -S DOCKER-USER")
    assert chain.rc == 0
    rules = [r for r in chain.stdout.splitlines() if "testbed-runtime-lxc-molecule" in r]
    assert any(r.startswith("-A DOCKER-USER -i lxcbr0 ") and r.endswith("-j ACCEPT") for r in rules)
    assert any("-o lxcbr0" in r and "RELATED,ESTABLISHED" in r for r in rules)
    assert len(rules) == 2
