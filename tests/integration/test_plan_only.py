"""Every experiment playbook plans on the controller alone: ``--tags plan`` against the lab's settings.

``ansible-playbook playbooks/<experiment>.yml -i <the lab inventory> --tags plan`` for each experiment,
with the lab's groups, host variables and group_vars but every experiment host - the lab machine
too, where an experiment runs on it (``localhost`` of those groups is renamed ``lab-machine``) -
reached by ssh at 127.0.0.1 port 1, where nothing answers: the run exits 0, prints the plan once (its real size, its variants - the experiment's
segments - and its parameter sets), writes nothing under the results directory and contacts no
host (any task that tried would end unreachable). Only the controller's own localhost runs the
controller-side steps.
"""
import os

import pytest
import yaml
from playbook_run import ROOT, UNREACHABLE, assert_ok, play, recap, why

# playbook -> what its plan prints with the lab's settings (inventories/lab/group_vars).
PLANS = {
    "lvs-compare": [
        "Plan: 30 points (10 variants × 3 parameter sets × 1 repetition), 0 done, 30 to run",
        "Variants: rr, wrr, lc, wlc, lblc, lblcr, dh, sh, sed, nq",
        'Parameter sets: {"rate": 50, "num_conns": 1950}; {"rate": 100, "num_conns": 3900};',
    ],
    "storage-compare": [
        "Plan: 18 points (2 variants × 9 parameter sets × 1 repetition), 0 done, 18 to run",
        "Variants: zfs, ceph",
        '"workload": "fio"', '"workload": "copy"', '"workload": "oltp"', '"workload": "rebuild"',
    ],
    "container-compare": [
        "Plan: 252 points (6 variants × 21 parameter sets × 2 repetitions), 0 done, 252",
        "Variants: native, docker, podman, lxc, lxd, kvm",
        '"workload": "web"', '"workload": "ftp"', '"workload": "mail"', '"workload": "net_lat"',
        '"workload": "disk_rw"', '"tool": "nuttcp"', '"tool": "netperf"', '"response_bytes": 200',
    ],
    "nfv-chain": [
        "Plan: 6 points (3 variants × 1 parameter set × 2 repetitions), 0 done, 6 to run",
        "Variants: baseline, 1-vnf, 2-vnf",
        'Parameter sets: {"duration_s": 10, "protocol": "tcp", "streams": 1}',
    ],
    "cpu-scaling": [
        "Plan: 4 points (1 variant × 2 parameter sets × 2 repetitions), 0 done, 4 to run",
        "Variants: native",
        'Parameter sets: {"duration_s": 5, "threads": 1}; {"duration_s": 5, "threads": 2}',
    ],
}
# playbook -> the host its plan play runs on (roles/<role>/meta/testbed_experiment.yml: hosts).
PLAN_HOST = {"lvs-compare": "lvs-director", "storage-compare": "storage-vm", "container-compare": "lab-machine",
             "nfv-chain": "lab-machine", "cpu-scaling": "lab-machine"}


# Groups where the lab inventory's localhost is the controller itself (it hosts the LVS lab, and
# the LVS experiment's settings reach it through group_vars/lvs_lab.yml): it stays, with its local
# connection. In every experiment group it is renamed lab-machine and made unreachable.
CONTROLLER_GROUPS = ("testbed_controller", "lvs_lab")


def _unreachable(node, group="all"):
    """The lab inventory's group tree with every experiment host unreachable (its own variables kept)."""
    hosts = {}
    for name, host_vars in (node.get("hosts") or {}).items():
        if name == "localhost" and group in CONTROLLER_GROUPS:
            hosts[name] = host_vars
            continue
        kept = {key: value for key, value in (host_vars or {}).items() if not key.startswith("ansible_")}
        hosts["lab-machine" if name == "localhost" else name] = dict(kept, **UNREACHABLE)
    if hosts:
        node["hosts"] = hosts
    for name, child in (node.get("children") or {}).items():
        _unreachable(child, name)
    return node


@pytest.fixture(scope="module")
def lab_inventory(tmp_path_factory):
    """inventories/lab's groups and group_vars; every host ssh to 127.0.0.1 port 1."""
    directory = tmp_path_factory.mktemp("lab-unreachable")
    (directory / "group_vars").symlink_to(os.path.join(ROOT, "inventories", "lab", "group_vars"))
    with open(os.path.join(ROOT, "inventories", "lab", "hosts.yml")) as handle:
        inventory = yaml.safe_load(handle)
    inventory["all"] = _unreachable(inventory["all"])
    (directory / "hosts.yml").write_text(yaml.safe_dump(inventory, default_flow_style=False))
    return str(directory)


@pytest.mark.parametrize("playbook", sorted(PLANS))
def test_the_plan_is_printed_and_nothing_is_touched(playbook, lab_inventory, tmp_path):
    results = tmp_path / "results"
    proc = play(f"playbooks/{playbook}.yml", "--tags", "plan", inventory=lab_inventory, results=results,
                timeout=300)
    assert_ok(proc)
    assert proc.stdout.count("'Plan: ") == 1, why(proc)
    printed = " ".join(proc.stdout.split())  # the yaml callback folds long lines
    for text in PLANS[playbook]:
        assert text in printed, why(proc)
    assert "Plan only (testbed_plan_only): nothing was written and no host was touched." in proc.stdout
    assert "UNREACHABLE" not in proc.stdout, why(proc)
    assert all(counts == {"failed": 0, "unreachable": 0} for counts in recap(proc.stdout).values()), why(proc)
    assert PLAN_HOST[playbook] in recap(proc.stdout), why(proc)  # the plan play ran on the experiment's host
    assert not results.exists()


# playbook -> what its plan prints with -e testbed_profile=study: the study's own parameters over the
# lab inventory's scale (roles/<role>/meta/testbed_experiment.yml: study_profile).
STUDY_PLANS = {
    "lvs-compare": ["Plan: 30 points (10 variants × 3 parameter sets × 1 repetition)",
                    '{"rate": 2000, "num_conns": 20000}; {"rate": 8000, "num_conns": 20000}; {"rate": 14000,'],
    "storage-compare": ["Plan: 54 points (2 variants × 9 parameter sets × 3 repetitions)", '"runtime_s": 3600'],
    "container-compare": ["(6 variants × 29 parameter sets × 3 repetitions)", '"requests": 10000', '"concurrency": 2000'],
    "nfv-chain": ["Plan: 9 points (3 variants × 1 parameter set × 3 repetitions)", '{"duration_s": 30,'],
}


@pytest.mark.parametrize("playbook", sorted(STUDY_PLANS))
def test_the_study_profile_plans_the_studys_own_points(playbook, lab_inventory, tmp_path):
    proc = play(f"playbooks/{playbook}.yml", "--tags", "plan", "-e", "testbed_profile=study", inventory=lab_inventory,
                results=tmp_path / "results", timeout=300)
    assert_ok(proc)
    printed = " ".join(proc.stdout.split())
    for text in STUDY_PLANS[playbook]:
        assert text in printed, why(proc)
    assert "estimated" in printed and "UNREACHABLE" not in proc.stdout, why(proc)


def test_the_study_profile_is_refused_where_there_is_no_study(lab_inventory, tmp_path):
    proc = play("playbooks/cpu-scaling.yml", "--tags", "plan", "-e", "testbed_profile=study", inventory=lab_inventory,
                results=tmp_path / "results", timeout=300)
    assert proc.returncode == 10, why(proc)
    assert "cpu_scaling reproduces no study: testbed_profile=study has nothing to set" in proc.stdout + proc.stderr
