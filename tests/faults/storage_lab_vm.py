"""The lab's storage VM as the storage fault tests use it (test_storage_foreign, test_storage_byo).

``boot(tmp_path)`` starts the VM through the same role and inventory settings the playbook's "Boot the
lab's storage node" play uses (roles/lab_storage), so a run that follows finds it running with the same
qemu command line and keeps it: its root disk is a snapshot that lives as long as this qemu does, so
what a test writes into the VM before the run is there when the run starts. ``node(command)`` runs a
command in it over ssh. The run's cleanup stops the VM (its disks deleted), which takes the snapshot
with it: ``HoldAtCleanup`` stops ansible-playbook (SIGSTOP) at the cleanup's last step - its node
tasks done, the VM not yet stopped - reads the node, and lets the run go on.
"""

import os
import signal
import subprocess
import textwrap

import fault_run
from playbook_run import ROOT

STATE = "/var/lib/testbed/lab"
PIDFILE = os.path.join(STATE, "storage-lab.pid")
SSH = fault_run.lab_vm_ssh(2228)
CLEANUP_LAST_STEP = "TASK [storage_compare : Remove the lab's storage VM and its disks]"
# The VM as the playbook's "Boot the lab's storage node" play starts it (same role, same inventory settings).
BOOT = textwrap.dedent("""\
    ---
    - name: The lab's storage VM, as playbooks/storage-compare.yml boots it
      hosts: storage_vm_host
      gather_facts: false
      vars:
        storage_compare_access: %s
      tasks:
        - name: Start or stop the storage VM
          ansible.builtin.include_role:
            name: lab_storage
          vars:
            lab_storage_state: "{{ vm_state }}"
            lab_storage_vm_name: "{{ storage_compare_lab_vm_name }}"
            lab_storage_ssh_port: "{{ storage_compare_lab_ssh_port }}"
            # network access: the storage network between the VM and this host, as the playbook gives it
            # (booted without it, the run would start the VM again: a new boot, the operator's pool not imported)
            lab_storage_network: >-
              {{ storage_compare_lab_network | default({}) if storage_compare_access != 'local' else {} }}
            lab_storage_link_mbit: "{{ storage_compare_lab_link_mbit | default(0) }}"
            lab_storage_host_cpus: "{{ storage_compare_lab_host_cpus | default('') }}"
    """)


def node(command, check=True, timeout=180):
    proc = subprocess.run(SSH + [command], capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, (command, proc.stdout, proc.stderr)
    return proc.stdout


def ran(output, banner):
    """Whether a task whose banner starts with `banner` did something (its banner not followed by skipping only)."""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(banner):
            follow = [x for x in lines[index + 1:index + 6] if x.strip()]
            if follow and not follow[0].startswith("skipping:"):
                return True
    return False


def qemu_pid():
    try:
        with open(PIDFILE) as handle:
            pid = int(handle.read().strip())
    except (OSError, ValueError):
        return None
    return pid if os.path.exists(f"/proc/{pid}") else None


def vm(playbook, state):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(fault_run.BIN, "ansible-playbook"), str(playbook), "-i", "inventories/lab",
                           "-e", f"vm_state={state}"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def boot(tmp_path, access="local"):
    """Start the storage VM as the playbook does for ``access`` (storage_compare_access: local or network, which
    the run must then be given too); returns the playbook that stops it again (vm(..., 'absent')) and the qemu's pid."""
    playbook = tmp_path / "storage-vm.yml"
    playbook.write_text(BOOT % access)
    vm(playbook, "present")
    booted = qemu_pid()
    assert booted, "the storage VM did not start"
    return playbook, booted


class HoldAtCleanup:
    """Called with the running playbook at the cleanup's last step: stop it, run ``read`` on the node, go on."""

    def __init__(self, read):
        self.read = read
        self.held = {}

    def __call__(self, proc):
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            self.held["pid"] = qemu_pid()
            self.held["after"] = node(self.read, check=False)
        finally:
            os.kill(proc.pid, signal.SIGCONT)
            self.held["done"] = True
