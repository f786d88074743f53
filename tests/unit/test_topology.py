"""The experiments' topology pictures (module_utils/testbed_topology.py, playbooks/show-topology.yml)."""
import os
import subprocess
import sys

import pytest
from ansible.module_utils.testbed_topology import TopologyError, topology_facts, topology_markdown, topology_vars
from conftest import ROOT

BIN = os.path.dirname(sys.executable)
GROUPS = {"all": ["d", "c1", "w1", "w2"], "lvs_director": ["d"], "lvs_clients": ["c1"], "lvs_real_servers": ["w1", "w2"]}
HOST_VARS = {"d": {"lvs_director_vip": "10.9.1.10", "lab_director_public_address": "10.9.1.1",
                   "lab_director_private_address": "10.9.2.1", "lab_network_networks": [{"subnet": "10.9.1.0/24"}]},
             "c1": {"ansible_host": "10.9.1.21"}, "w1": {"lvs_rip": "10.9.2.11"}, "w2": {"lvs_rip": "10.9.2.12"}}


def test_lvs_picture_has_every_host_with_its_address():
    facts = topology_facts(GROUPS, HOST_VARS, {"lvs_director_forwarding": "nat"})
    assert set(facts) == {"lvs"}
    page = topology_markdown(facts, "site")
    assert page.startswith("# Topology of site\n")
    assert page.count("```mermaid") == 1
    for text in ("c1<br/>10.9.1.21", "d<br/>VIP 10.9.1.10<br/>public 10.9.1.1<br/>private 10.9.2.1<br/>IPVS, forwarding nat",
                 "w1<br/>10.9.2.11", "w2<br/>10.9.2.12", '(["public network<br/>10.9.1.0/24"])',
                 "n_c1 --- n_lvs_public", "n_lvs_private --- n_w2"):
        assert text in page, text


def test_the_inventorys_setting_wins_over_the_roles_default():
    facts = topology_facts(GROUPS, dict(HOST_VARS, d=dict(HOST_VARS["d"], lvs_director_forwarding="dr")),
                           {"lvs_director_forwarding": "nat"})
    assert facts["lvs"]["forwarding"] == "dr"


def test_no_experiment_host_no_picture():
    assert "no host of any experiment" in topology_markdown(topology_facts({"all": ["x"]}, {}), "empty")


def test_missing_facts_are_named():
    with pytest.raises(TopologyError, match="lvs: the facts lack vip, forwarding"):
        topology_markdown({"lvs": {"clients": [], "director": {"name": "d"}, "real_servers": []}})


def test_topology_vars_picks_only_what_the_pictures_read():
    assert topology_vars({"lvs_rip": "10.0.0.1", "secret_password": "x", "ansible_host": "h"}) == {
        "lvs_rip": "10.0.0.1", "ansible_host": "h"}


def test_docs_topology_is_what_the_playbook_draws_of_the_lab_inventory(tmp_path):
    out = tmp_path / "topology.md"
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(BIN, "ansible-playbook"), "playbooks/show-topology.yml", "-i", "inventories/lab",
                           "-e", f"testbed_topology_file={out}"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    drawn = out.read_text()
    with open(os.path.join(ROOT, "docs", "topology.md"), encoding="utf-8") as handle:
        assert handle.read() == drawn, "docs/topology.md is out of date: run `make topology` and commit it"
    assert drawn.count("```mermaid") == 5
