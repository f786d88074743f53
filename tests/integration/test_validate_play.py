"""The testbed_validate role stops a bad experiment input in seconds, before anything is built.

Real ``ansible-playbook`` runs of a tiny playbook on localhost only (connection
local; the inventory's other hosts are never contacted) with a temporary
experiment role that has only its ``meta/argument_specs.yml`` and
``meta/testbed_constraints.yml``, and a temporary inventory that links the
repository's shared defaults like every real inventory does.
"""

import json
import os
import sys
import time

import pytest
from playbook_run import assert_ok, play

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)

SPEC = """\
---
argument_specs:
  main:
    short_description: A probe experiment.
    options:
      probe_rates:
        type: list
        elements: int
        required: true
        description: Requested rates (conn/s).
      probe_schedulers:
        type: list
        elements: str
        choices: [rr, wrr, lc]
        default: [rr]
        description: Schedulers.
      probe_repetitions:
        type: int
        default: 1
        description: Repetitions.
"""

CONSTRAINTS = """\
---
testbed_constraints:
  probe_rates: {exclusive_minimum: 0, min_items: 1}
  probe_repetitions: {minimum: 1}
"""

INVENTORY = """\
---
all:
  children:
    probe_controller:
      hosts:
        localhost:
          ansible_connection: local
          ansible_python_interpreter: "{{ ansible_playbook_python }}"
    probe_servers:
      hosts:
        probe-web1: {probe_rip: 10.250.9.11}
        probe-web2: {probe_rip: 10.250.9.12}
  vars:
    probe_rates: [50, 100]
    probe_network: 10.250.9.0/24
"""

PLAYBOOK = """\
---
- name: Check the input before anything is built
  hosts: localhost
  gather_facts: false
  pre_tasks:
    - name: Check that the shared defaults are loaded
      ansible.builtin.include_role:
        name: testbed_validate
        tasks_from: shared_defaults
  roles:
    - role: testbed_validate
      vars:
        testbed_validate_roles_dir: {roles}
        testbed_validate_experiment_role: experiment_probe
        testbed_validate_prefixes: [probe_]
        # a parameter that needs the shared defaults (templated by the role's argument validation)
        testbed_validate_known_vars: "{{{{ ['probe_network', 'probe_rip'] if testbed_repetitions > 0 else [] }}}}"
        testbed_validate_required_groups: [probe_servers]
        testbed_validate_required_host_vars:
          - group: probe_servers
            var: probe_rip
            check: ipv4_in_network
            network: "{{{{ probe_network }}}}"
            network_var: probe_network

- name: Bring up the lab (only on a lab inventory)
  ansible.builtin.import_playbook: after.yml
  when: testbed_inventory_kind == 'lab'

- name: The experiment
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Experiment reached
      ansible.builtin.debug:
        msg: experiment reached
"""

AFTER = """\
---
- name: Lab
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Lab reached
      ansible.builtin.debug:
        msg: lab reached
"""


@pytest.fixture()
def probe(tmp_path):
    meta = tmp_path / "roles" / "experiment_probe" / "meta"
    meta.mkdir(parents=True)
    (meta / "argument_specs.yml").write_text(SPEC)
    (meta / "testbed_constraints.yml").write_text(CONSTRAINTS)
    inv = tmp_path / "inv"
    (inv / "group_vars" / "all").mkdir(parents=True)
    (inv / "hosts.yml").write_text(INVENTORY)
    os.symlink(os.path.join(ROOT, "group_vars", "all"), inv / "group_vars" / "all" / "000_shared")
    (tmp_path / "play.yml").write_text(PLAYBOOK.format(roles=json.dumps(str(tmp_path / "roles"))))
    (tmp_path / "after.yml").write_text(AFTER)
    return tmp_path


def run(probe, *extra):
    started = time.monotonic()
    # The timeout only guards against a hang (the duration is not asserted: it depends on the machine).
    proc = play(str(probe / "play.yml"), *extra, inventory=str(probe / "inv"), timeout=600,
                env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json", "LC_ALL": "C.UTF-8"})
    return proc, time.monotonic() - started


def results(proc):
    """task name -> localhost's result, for every task that ran."""
    out = json.loads(proc.stdout)
    found = {}
    for played in out["plays"]:
        for task in played["tasks"]:
            if "localhost" in task["hosts"]:
                found[task["task"]["name"].split(" : ")[-1]] = task["hosts"]["localhost"]
    return found


def test_good_input_passes(probe):
    proc, _ = run(probe, "-e", "probe_repetitions=2")
    assert_ok(proc)
    ran = results(proc)
    check = ran["Check the experiment's inventory and variables"]
    assert check["problems"] == []
    assert check["checked"] == ["probe_rates", "probe_repetitions"]
    assert ran["Experiment reached"]["msg"] == "experiment reached"


def test_bad_extra_vars_stop_the_run_in_seconds(probe):
    proc, _ = run(probe, "-e", "probe_rates=50,100", "-e", "probe_repetitions=0",
                        "-e", '{"probe_schedulers": ["rr", "wrrr"]}', "-e", "probe_rate=7")
    assert proc.returncode != 0
    ran = results(proc)
    assert "Experiment reached" not in ran
    check = ran["Check the experiment's inventory and variables"]
    assert check["failed"] is True
    assert check["problems"] == [
        "probe_rates must be a list of integers, got the string '50,100': give a list, "
        "e.g. -e '{\"probe_rates\": [50, 100]}', or a YAML list in your inventory's group_vars.",
        "probe_repetitions must be at least 1, got 0: fix it in your inventory's group_vars or with -e.",
        "probe_schedulers item 2 is 'wrrr', which is not one of rr, wrr, lc (did you mean wrr?): "
        "fix the list in your inventory's group_vars or with -e.",
        "unknown variable probe_rate: did you mean probe_rates? Rename it in your inventory's group_vars or with -e.",
    ]
    assert check["msg"].startswith("probe cannot start: 4 problems with its input:\n- probe_rates must be a list")


def test_host_outside_the_network_is_named(probe):
    proc, _ = run(probe, "-e", "probe_network=10.250.8.0/24")
    assert proc.returncode != 0
    problems = results(proc)["Check the experiment's inventory and variables"]["problems"]
    assert problems == [
        "probe_rip of host %s (group probe_servers) is 10.250.9.%s, outside the network 10.250.8.0/24 "
        "(probe_network): give the host an address in 10.250.8.0/24, or fix probe_network." % (host, last)
        for host, last in (("probe-web1", "11"), ("probe-web2", "12"))]


def test_missing_shared_defaults_link_is_reported_first(probe):
    # Without the link testbed_inventory_kind is undefined: the validation play comes first,
    # so the run stops with the sentence that says how to add the link, not with
    # "'testbed_inventory_kind' is undefined" from the import's when.
    os.unlink(probe / "inv" / "group_vars" / "all" / "000_shared")
    proc, _ = run(probe)
    assert proc.returncode != 0
    ran = results(proc)
    check = ran["Check that the shared defaults (group_vars/all) were loaded"]
    assert check["failed"] is True
    assert "Lab reached" not in ran and "Experiment reached" not in ran
    link = os.path.join(ROOT, "group_vars", "all")
    assert "ln -s %s %s/group_vars/all/000_shared" % (link, probe / "inv") in " ".join(check["msg"].split())


def test_names_the_role_sets_itself_are_known_without_a_list(probe):
    """A key of the role's vars/*.yml or tasks/*.yml (set_fact) or a register: name is derived, never unknown."""
    role = probe / "roles" / "experiment_probe"
    (role / "vars").mkdir()
    (role / "vars" / "main.yml").write_text("---\nprobe_sweep:\n  experiment: probe\n__probe_private: 1\n")
    (role / "tasks").mkdir()
    (role / "tasks" / "point.yml").write_text(
        "---\n- name: Note the health\n  ansible.builtin.set_fact:\n    probe_health: {ok: true}\n"
        "- name: Run\n  ansible.builtin.command: 'true'\n  register: probe_run\n  changed_when: false\n")
    proc, _ = run(probe, "-e", "probe_sweep=1", "-e", "probe_health=1", "-e", "probe_run=1", "-e", "probe_privat=1")
    assert proc.returncode != 0
    assert results(proc)["Check the experiment's inventory and variables"]["problems"] == [
        "unknown variable probe_privat: the experiment has no such setting; remove it and see %s for the valid "
        "names." % (role / "README.md")]
