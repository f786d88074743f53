"""The lab's networks and taps (role lab_network) are touched only when they are the testbed's.

A Docker network and a tap named like the lab's, made by someone else, are refused by the role's
present and absent by name (one sentence each, all in one failure), and are intact afterwards (the
same network id, the tap still there and not enslaved). A network an earlier version of the role
made (no label, the role's bridge option and no masquerading) is the testbed's and is not replaced;
a network and tap the role makes carry the marks and are removed by absent.

Runs on this host (Docker and root); names, bridges and subnets of its own (tb-ot-*, 10.252.8-9.0/24).
"""
import json
import subprocess

import pytest
from playbook_run import assert_ok, play

NETWORKS = [{"name": "testbed-ot-a", "bridge": "tb-ot-a", "subnet": "10.252.8.0/24", "gateway": "10.252.8.254"},
            {"name": "testbed-ot-b", "bridge": "tb-ot-b", "subnet": "10.252.9.0/24", "gateway": "10.252.9.254"}]
TAPS = [{"name": "tb-ot-tap-a", "network": "testbed-ot-a"}]
PLAY = """- hosts: localhost
  gather_facts: false
  roles: [lab_network]
"""


def sh(*argv, check=True):
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=120, check=check)


def run_role(tmp_path, state):
    playbook = tmp_path / "lab-network.yml"
    playbook.write_text(PLAY)
    settings = {"lab_network_state": state, "lab_network_networks": NETWORKS, "lab_network_taps": TAPS,
                "lab_network_rule_comment": "testbed-ot-net"}
    return play(str(playbook), "-e", json.dumps(settings), inventory=None, timeout=600)


def network(name):
    out = sh("docker", "network", "inspect", name, check=False)
    return json.loads(out.stdout)[0] if out.returncode == 0 else None


def link(name):
    out = sh("ip", "-j", "link", "show", "dev", name, check=False)
    return json.loads(out.stdout)[0] if out.returncode == 0 else None


def remove_all():
    for tap in TAPS:
        sh("ip", "link", "delete", "dev", tap["name"], check=False)
    for net in NETWORKS:
        sh("docker", "network", "rm", net["name"], check=False)
    for net in NETWORKS:
        sh("iptables", "-D", "DOCKER-USER", "-i", net["bridge"], "-o", net["bridge"], "-m", "comment", "--comment",
           "testbed-ot-net", "-j", "ACCEPT", check=False)


@pytest.fixture
def clean():
    remove_all()
    yield
    remove_all()


def test_foreign_network_and_tap_are_refused_and_left_intact(tmp_path, clean):
    # Someone else's: a network of the lab's name on another bridge, a tap of the lab's name on no bridge.
    sh("docker", "network", "create", "--subnet", "10.252.8.0/24", "-o", "com.docker.network.bridge.name=tb-ot-x",
       NETWORKS[0]["name"])
    sh("ip", "tuntap", "add", "dev", TAPS[0]["name"], "mode", "tap")
    net_id = network(NETWORKS[0]["name"])["Id"]
    for state in ("present", "absent"):
        proc = run_role(tmp_path, state)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0, out[-3000:]
        assert "Docker network testbed-ot-a on host localhost was not created by the testbed" in out, out[-3000:]
        assert "Tap device tb-ot-tap-a on host localhost was not created by the testbed" in out, out[-3000:]
        assert network(NETWORKS[0]["name"])["Id"] == net_id
        tap = link(TAPS[0]["name"])
        assert tap is not None and "master" not in tap and not tap.get("ifalias")
        assert network(NETWORKS[1]["name"]) is None       # nothing was created before the refusal


def test_an_earlier_versions_network_is_kept_and_the_roles_own_are_marked_and_removed(tmp_path, clean):
    # As the role made it before it labelled its networks: the bridge option, no masquerading, no label.
    sh("docker", "network", "create", "--subnet", "10.252.8.0/24", "--gateway", "10.252.8.254",
       "-o", "com.docker.network.bridge.name=tb-ot-a", "-o", "com.docker.network.bridge.enable_ip_masquerade=false",
       NETWORKS[0]["name"])
    old_id = network(NETWORKS[0]["name"])["Id"]
    assert_ok(run_role(tmp_path, "present"))
    assert network(NETWORKS[0]["name"])["Id"] == old_id                       # not replaced
    assert network(NETWORKS[1]["name"])["Labels"] == {"org.testbed.role": "lab_network"}
    tap = link(TAPS[0]["name"])
    assert tap["ifalias"] == "testbed:lab_network" and tap["master"] == "tb-ot-a"

    assert_ok(run_role(tmp_path, "absent"))
    assert [network(n["name"]) for n in NETWORKS] == [None, None]
    assert link(TAPS[0]["name"]) is None
