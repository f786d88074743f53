"""The README's commands, word for word, in a newcomer's shell.

A newcomer runs ``./scripts/setup.sh``, ``source .venv/bin/activate`` and then,
from the repository root, ``ansible-playbook playbooks/<experiment>.yml -i
inventories/lab``: no ``ANSIBLE_CONFIG``, no other ``ANSIBLE_*`` variable (the
Makefile and the other tests export them; a user does not). Every experiment's
plan, and a real point of the worked example, must work that way; so must the
same command from another directory with ``ANSIBLE_CONFIG`` pointing at the
repository's ansible.cfg (docs/architecture.md says so). A module that finds
its data (schemas, scripts) only through the working directory or the
environment fails here. test_container_compare.py runs the container
experiment's short real run the same way.
"""
import os

import pytest
from playbook_run import ROOT, assert_ok, exit_line, play, stored_documents

EXPERIMENTS = {
    "playbooks/lvs-compare.yml": "Plan: ",
    "playbooks/storage-compare.yml": "Plan: 18 points",
    "playbooks/nfv-chain.yml": "Plan: ",
    "playbooks/container-compare.yml": "Plan: ",
    "playbooks/cpu-scaling.yml": "Plan: ",
}
ONE_POINT = ["-e", '{"cpu_scaling_threads": [1]}', "-e", "cpu_scaling_duration_s=1", "-e", "testbed_repetitions=1",
             "-e", "cpu_scaling_max_prime=2000"]


@pytest.mark.parametrize("playbook", sorted(EXPERIMENTS))
def test_every_experiment_plans_from_the_repository_root_in_a_clean_shell(playbook, tmp_path):
    proc = play(playbook, "--tags", "plan", results=tmp_path, as_user=True, timeout=300)
    assert_ok(proc)
    assert EXPERIMENTS[playbook] in proc.stdout, proc.stdout[-3000:]
    assert "Plan only (testbed_plan_only): nothing was written and no host was touched." in proc.stdout
    assert not os.listdir(tmp_path)


# The template for real hardware, exactly as shipped: every experiment plans from it (its groups and
# settings are complete), on the controller alone - its addresses are documentation ranges.
HARDWARE_PLANS = {
    "playbooks/lvs-compare.yml": "Plan: 90 points (10 variants",
    "playbooks/storage-compare.yml": "Plan: 54 points (2 variants",
    "playbooks/nfv-chain.yml": "Plan: 9 points (3 variants",
    "playbooks/container-compare.yml": "Plan: 5040 points (6 variants",
    "playbooks/cpu-scaling.yml": "Plan: 15 points (1 variant",
}


@pytest.mark.parametrize("playbook", sorted(HARDWARE_PLANS))
def test_every_experiment_plans_from_the_hardware_template_as_shipped(playbook, tmp_path):
    proc = play(playbook, "--tags", "plan", inventory="inventories/example_hardware", results=tmp_path,
                as_user=True, timeout=300)
    assert_ok(proc)
    assert HARDWARE_PLANS[playbook] in proc.stdout, proc.stdout[-3000:]
    assert "Plan only (testbed_plan_only): nothing was written and no host was touched." in proc.stdout
    assert not os.listdir(tmp_path)


def stored(results):
    return list(stored_documents(results, "cpu_scaling").values())


def test_the_worked_example_measures_and_stores_a_point_in_a_clean_shell(tmp_path):
    proc = play("playbooks/cpu-scaling.yml", *ONE_POINT, results=tmp_path, as_user=True)
    assert_ok(proc)
    docs = stored(tmp_path)
    assert len(docs) == 1 and docs[0]["valid"] is True, [d["reasons"] for d in docs]
    assert "[1/1] native threads=1 rep 1: events_per_s" in proc.stdout


def test_from_another_directory_with_ansible_config(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    results = tmp_path / "results"
    proc = play(os.path.join(ROOT, "playbooks", "cpu-scaling.yml"), *ONE_POINT,
                inventory=os.path.join(ROOT, "inventories", "lab"), results=results, cwd=str(elsewhere),
                as_user=True, env={"ANSIBLE_CONFIG": os.path.join(ROOT, "ansible.cfg")})
    assert_ok(proc)
    docs = stored(results)
    assert len(docs) == 1 and docs[0]["valid"] is True, [d["reasons"] for d in docs]
    assert not os.listdir(elsewhere)


@pytest.mark.parametrize("playbook", sorted(EXPERIMENTS))
def test_plan_is_a_real_tag_and_check_mode_points_to_it(playbook, tmp_path):
    tags = play(playbook, "--list-tags", as_user=True, timeout=600)
    assert_ok(tags)
    assert any("plan" in line for line in tags.stdout.splitlines() if "TASK TAGS:" in line), tags.stdout
    check = play(playbook, "--check", results=tmp_path, as_user=True, timeout=600)
    assert check.returncode == 10, check.stdout[-2000:]
    assert "--check is not supported by the testbed's playbooks" in check.stdout
    assert "use --tags plan" in exit_line(check)
    assert not os.listdir(tmp_path)
