"""lvs-compare refuses a wrong topology on the controller, before any host is contacted.

A host playing two parts (director and real server), two real servers with one
address, a virtual IP that is not an address: each is one sentence, all in one
run, exit status 10, nothing written. The hosts point at 127.0.0.1 port 1, so a
run that went past the checks could not reach them anyway.
"""
import json
import os

import pytest
from playbook_run import assert_refused_with, batch_ids, exit_line, one_run_per_batch, play, unreachable_inventory, why

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HOSTS = """all:
  vars: {ansible_host: 127.0.0.1, ansible_port: 1, lvs_director_vip: not-an-ip}
  children:
    lvs_director:
      hosts:
        d1: {lvs_rip: 10.250.2.11}
    lvs_real_servers:
      hosts:
        d1: {}
        w2: {lvs_rip: 10.250.2.11}
    lvs_clients:
      hosts:
        c1: {}
"""


def test_wrong_topology_is_named_host_by_host(tmp_path):
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    (inventory / "group_vars").symlink_to(os.path.join(ROOT, "inventories", "lab", "group_vars"))
    (inventory / "hosts.yml").write_text(HOSTS)
    results = tmp_path / "results"
    proc = play("playbooks/lvs-compare.yml", inventory=str(inventory), results=results, timeout=300)
    assert proc.returncode == 10, why(proc)
    for sentence in (
        "host d1 is in lvs_director and lvs_real_servers: each host plays one part in this experiment",
        "lvs_rip is 10.250.2.11 on d1 and w2 (group lvs_real_servers): each host needs its own",
        "lvs_director_vip of host d1 (group lvs_director) is the string 'not-an-ip', not an IPv4 address",
    ):
        assert sentence in proc.stdout, why(proc)
    assert "3 problems with its input" in proc.stdout
    assert exit_line(proc).startswith("Exit status 10 (refused)")
    assert not results.exists()


def test_builder_role_settings_are_checked_too(tmp_path):
    proc = play("playbooks/lvs-compare.yml", "--tags", "plan", "-e", "lvs_director_shceduler=wlc",
                "-e", "lvs_real_server_web_server=banana", results=tmp_path, timeout=300)
    assert proc.returncode == 10, why(proc)
    last = exit_line(proc)
    assert "unknown variable lvs_director_shceduler: did you mean lvs_director_scheduler?" in last
    assert "lvs_real_server_web_server is 'banana', which is not one of" in last
    assert not os.listdir(tmp_path)


# One bad input per run, on an inventory no run could reach (127.0.0.1 port 1): each stops in
# seconds on the controller with exit status 10 and exactly one sentence, nothing written.
GOOD = {
    "lvs_director": {"d1": {}},
    "lvs_real_servers": {"w1": {"lvs_rip": "10.0.2.11"}, "w2": {"lvs_rip": "10.0.2.12"}},
    "lvs_clients": {"c1": {}},
}


def _hosts(groups, **all_vars):
    text = {"all": {"vars": dict({"lvs_director_vip": "192.0.2.10", "lvs_director_private_network": "10.0.2.0/24"},
                                 **all_vars),
                    "children": {group: {"hosts": hosts} for group, hosts in groups.items()}}}
    return json.dumps(text)


def _with(group, host, **host_vars):
    groups = json.loads(json.dumps(GOOD))
    groups[group].setdefault(host, {}).update(host_vars)
    return groups


# One bad setting each (on the good topology); settings of different variables share a run
# (playbook_run.one_run_per_batch).
SETTINGS = [
    ("lvs_director_vip=not-an-ip",
     "lvs_director_vip of host d1 (group lvs_director) is the string 'not-an-ip', not an IPv4 address"),
    ("lvs_director_forwarding=dr",
     "lvs_real_server_forwarding of hosts w1 and w2 (group lvs_real_servers) is 'nat', but lvs_director_forwarding is 'dr': "
     "the director and its real servers must use one forwarding method (nat, dr or tun)"),
    ("lvs_director_shceduler=wlc",
     "unknown variable lvs_director_shceduler: did you mean lvs_director_scheduler?"),
    ("lvs_director_port=22", "lvs_director_port is 22: port 22 is sshd's"),
    ("lvs_director_vip_prefix=33", "lvs_director_vip_prefix must be at most 32, got 33"),
    ("lvs_director_persistence_s=-1", "lvs_director_persistence_s must be at least 0, got -1"),
    ("lvs_director_rules_file=rules.v4",
     "lvs_director_rules_file is 'rules.v4', not an absolute path other than /"),
    ("lvs_real_server_document_root=/",
     "lvs_real_server_document_root is '/', not an absolute path other than /"),
    ("lvs_real_server_gateway=gw", "lvs_real_server_gateway is 'gw', not an IPv4 address"),
    ("lvs_real_server_nginx_worker_connections=0",
     "lvs_real_server_nginx_worker_connections must be at least 1, got 0"),
    ("lvs_client_nofile=99999999", "lvs_client_nofile must be at most 1048576, got 99999999"),
    ("lvs_client_workdir=tmp", "lvs_client_workdir is 'tmp', not an absolute path other than /"),
    ('{"lvs_compare_rates": [100, 5000000]}',
     "lvs_compare_rates item 2 must be at most 1000000, got 5000000"),
    ("lvs_compare_repetitions=100000", "lvs_compare_repetitions must be at most 1000, got 100000"),
    ("lvs_compare_num_conns=0", "lvs_compare_num_conns must be at least 1, got 0"),
]
# the VIP is checked per host and the forwarding across roles: rules the checks apply before the single settings
BATCHES = one_run_per_batch(SETTINGS, alone=("lvs_director_vip=not-an-ip", "lvs_director_forwarding=dr"))


@pytest.mark.parametrize("cases", BATCHES, ids=batch_ids(BATCHES))
def test_each_bad_setting_is_one_sentence_before_any_host(tmp_path, cases):
    inventory = unreachable_inventory(tmp_path / "inventory", _hosts(GOOD))
    results = tmp_path / "results"
    proc = play("playbooks/lvs-compare.yml", *[a for extra, _ in cases for a in ("-e", extra)],
                inventory=inventory, results=results, timeout=300)
    assert_refused_with(proc, cases, results)


# One wrong topology per run.
@pytest.mark.parametrize("groups, sentence", [
    (_with("lvs_real_servers", "w2", lvs_real_server_forwarding="tun"),
     "lvs_real_server_forwarding of host w2 (group lvs_real_servers) is 'tun', but lvs_director_forwarding is 'nat'"),
    (_with("lvs_real_servers", "d1", lvs_rip="10.0.2.13"),
     "host d1 is in lvs_director and lvs_real_servers: each host plays one part in this experiment"),
    (_with("lvs_real_servers", "w2", lvs_rip="10.0.2.11"),
     "lvs_rip is 10.0.2.11 on w1 and w2 (group lvs_real_servers): each host needs its own"),
    (_with("lvs_real_servers", "w2", lvs_rip="10.9.9.9"),
     "lvs_rip of host w2 (group lvs_real_servers) is 10.9.9.9, outside the director's private network 10.0.2.0/24"),
    (_with("lvs_director", "d2"),
     "inventory group lvs_director has 2 hosts (d1, d2), but the experiment uses 1"),
    (_with("lvs_real_servers", "w2", lvs_real_server_document_root="/"),
     "lvs_real_server_document_root of host w2 is '/', not an absolute path other than /"),
    (_with("lvs_clients", "c1", lvs_client_nofile=0), "lvs_client_nofile of host c1 must be at least 1024, got 0"),
], ids=["real-server-tun-vs-nat", "director-is-real-server", "same-lvs_rip", "rip-outside-network", "two-directors",
        "host-var-document-root", "host-var-nofile"])
def test_each_bad_topology_is_one_sentence_before_any_host(tmp_path, groups, sentence):
    inventory = unreachable_inventory(tmp_path / "inventory", _hosts(groups))
    results = tmp_path / "results"
    proc = play("playbooks/lvs-compare.yml", inventory=inventory, results=results, timeout=300)
    assert_refused_with(proc, [("", sentence)], results)


def test_the_unreachable_inventory_passes_the_checks(tmp_path):
    """The good inventory of the cases above is valid: each case's refusal is its bad input's."""
    inventory = unreachable_inventory(tmp_path / "inventory", _hosts(GOOD))
    proc = play("playbooks/lvs-compare.yml", "--tags", "plan", inventory=inventory, results=tmp_path / "results",
                timeout=300)
    assert proc.returncode == 0, why(proc)
    assert "Plan:" in proc.stdout
