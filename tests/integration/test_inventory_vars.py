"""The shared defaults in group_vars/all really apply to playbooks in playbooks/.

Ansible loads group_vars only next to the inventory source or the playbook, so
`ansible-playbook playbooks/X.yml -i inventories/lab` would not see the
repository's top-level group_vars/ on its own. Each inventory links it as
group_vars/all/000_shared; these tests run real playbooks to prove the link
works, that inventory overrides win, and that without the link the
testbed_validate role stops the play with a sentence saying how to fix it.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest
from playbook_run import assert_ok, play

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)


def run_playbook(playbook, inventory, cwd=ROOT, extra_env=None):
    env = dict({"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json"}, **(extra_env or {}))
    return play(playbook, inventory=inventory, cwd=cwd, env=env, timeout=300)


def task_result(proc, task_name):
    out = json.loads(proc.stdout)
    for played in out["plays"]:
        for task in played["tasks"]:
            if task["task"]["name"].split(" : ")[-1] == task_name:
                return task["hosts"]["localhost"]
    raise AssertionError("task %r not in output" % task_name)


@pytest.mark.parametrize("inventory,kind,reps", [
    ("inventories/lab", "lab", 2),
    ("inventories/example_hardware", "hardware", 3),
    ("inventories/lab-ssh", "hardware", 1),
])
def test_shared_defaults_apply_and_inventory_overrides_win(inventory, kind, reps):
    proc = run_playbook("playbooks/show-config.yml", inventory)
    assert_ok(proc)
    msg = task_result(proc, "Effective shared settings")["msg"]
    # from group_vars/all/testbed.yml (shared, not repeated in any inventory)
    assert msg["testbed_shared_defaults"] is True
    assert msg["testbed_run_id"] == "auto"
    assert msg["testbed_results_dir"] == os.path.join(ROOT, "results")
    # from the inventory's own group (outranks the shared defaults)
    assert msg["testbed_inventory_kind"] == kind
    assert msg["testbed_repetitions"] == reps


def test_inventory_without_link_is_stopped_with_a_fix(tmp_path):
    inv = tmp_path / "inv"
    shutil.copytree(os.path.join(ROOT, "inventories", "lab"), inv, symlinks=True)
    os.unlink(inv / "group_vars" / "all" / "000_shared")
    proc = run_playbook("playbooks/show-config.yml", str(inv))
    assert proc.returncode != 0
    result = task_result(proc, "Check that the shared defaults (group_vars/all) were loaded")
    assert result["failed"] is True
    assert "000_shared" in result["msg"]


@pytest.mark.parametrize("inventory", ["inventories/example_hardware", "inventories/lab-ssh", "inventories/lab"])
def test_the_controller_never_uses_become_unless_asked(inventory):
    """Controller tasks (plan, store, report) run as the operator: results are theirs, no sudo needed."""
    proc = subprocess.run([os.path.join(BIN, "ansible-inventory"), "-i", inventory, "--host", "localhost"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg")))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout).get("ansible_become", False) is False

