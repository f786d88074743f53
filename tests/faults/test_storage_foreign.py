"""A foreign ZFS pool and Ceph cluster on the lab's storage node (make faults; issue #23).

The lab's storage VM is booted through the same role the playbook uses (roles/lab_storage, the
inventory's settings), so the playbook finds it running with the same qemu command line and keeps it:
its root disk is a snapshot that lives as long as this qemu does, so whatever is written into the
VM before the run is there when the run starts. Over ssh the test then makes a FOREIGN pool named
like the experiment's (``testbed``, storage_compare_zfs_pool) on a file vdev in the VM's root disk,
and a FOREIGN Ceph cluster of the experiment's name (``/etc/ceph/ceph.conf`` with another fsid and
``/var/lib/ceph/mon/ceph-x`` holding a file), as an operator's would be, and runs
``playbooks/storage-compare.yml -i inventories/lab`` with both systems.

Expected: the setup hook's preflight refuses before anything is installed, written or removed, in one
failure naming the pool (its GUID) and the cluster (its fsid); the exit status is 13 (README: points
missing for another reason); the cleanup removes nothing of theirs. The run's cleanup then stops the
lab VM (its disks deleted), which takes the VM's snapshot with it - so the foreign objects are read
while the run is held (SIGSTOP to ansible-playbook) at the cleanup's last step, after its node tasks
and before the VM is stopped: pool GUID, vdev file sha256, ceph.conf sha256 and the monitor
directory (names, sizes, sha256) must be what they were before the run. At the end no qemu of the
lab is left.

Needs root and the storage VM's image (cached by the first storage run); a few minutes.
"""

import glob
import os
import signal
import subprocess
import textwrap
import threading

import fault_run
from playbook_run import ROOT

STATE = "/var/lib/testbed/lab"
PIDFILE = os.path.join(STATE, "storage-lab.pid")
FOREIGN_FSID = "0b2c3d4e-5f60-4a1b-8c2d-3e4f5a6b7c8d"
VDEV = "/root/foreign-testbed.vdev"
MON = "/var/lib/ceph/mon/ceph-x"
SSH = ["ssh", "-i", os.path.join(STATE, "id_ed25519"), "-p", "2228", "-o", "StrictHostKeyChecking=no",
       "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=20",
       "-o", "BatchMode=yes", "root@127.0.0.1"]
# Read-only: what makes the foreign objects the same ones (the pool imported, with its GUID).
READ = (f"zpool list -H -p -o name,guid,health testbed; sha256sum {VDEV} /etc/ceph/ceph.conf; "
        f"cd {MON} && find . -printf '%p %s %m\\n' | sort && sha256sum keep; ls /var/lib/testbed 2>&1 || true")
CLEANUP_LAST_STEP = "TASK [storage_compare : Remove the lab's storage VM and its disks]"
# The VM as the playbook's "Boot the lab's storage node" play starts it (same role, same inventory settings).
BOOT = textwrap.dedent("""\
    ---
    - name: The lab's storage VM, as playbooks/storage-compare.yml boots it
      hosts: storage_vm_host
      gather_facts: false
      tasks:
        - name: Start or stop the storage VM
          ansible.builtin.include_role:
            name: lab_storage
          vars:
            lab_storage_state: "{{ vm_state }}"
            lab_storage_vm_name: "{{ storage_compare_lab_vm_name }}"
            lab_storage_ssh_port: "{{ storage_compare_lab_ssh_port }}"
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


def test_foreign_pool_and_cluster_are_refused_and_left_intact(tmp_path):
    boot = tmp_path / "storage-vm.yml"
    boot.write_text(BOOT)
    results = tmp_path / "results"
    vm(boot, "present")
    try:
        booted = qemu_pid()
        assert booted, "the storage VM did not start"
        node(f"modprobe zfs && truncate -s 128M {VDEV} && zpool create -o cachefile=none testbed {VDEV} "
             "&& head -c 1048576 /dev/urandom > /testbed/keep && zpool sync testbed")
        node(f"mkdir -p /etc/ceph {MON} && printf '[global]\\nfsid = {FOREIGN_FSID}\\nmon_host = 192.0.2.10\\n' "
             f"> /etc/ceph/ceph.conf && head -c 65536 /dev/urandom > {MON}/keep")
        before = node(READ)
        guid = before.split()[1]
        assert before.startswith("testbed\t") and "ONLINE" in before.splitlines()[0], before
        assert "No such file" in before, before           # no marker: neither is the testbed's

        held = {}

        def hold_and_read(proc):
            """At the cleanup's last step (its node tasks done, the VM not yet stopped): stop, read, go on."""
            os.kill(proc.pid, signal.SIGSTOP)
            try:
                held["pid"] = qemu_pid()
                held["after"] = node(READ, check=False)
            finally:
                os.kill(proc.pid, signal.SIGCONT)
                held["done"] = True

        proc = fault_run.start("playbooks/storage-compare.yml", results,
                               ["-e", "testbed_run_id=new", "-e", "storage_compare_fidelity=false"])
        done = threading.Event()
        rc, output = fault_run.run_with_fault(
            proc, results, lambda line: CLEANUP_LAST_STEP in line,
            lambda p: (hold_and_read(p), done.set()), 0, 1800)
        done.wait(30)
        with open(tmp_path / "foreign.txt", "w") as handle:    # kept beside sweep.log
            handle.write(f"before the run:\n{before}\nheld at the cleanup's VM step (qemu {held.get('pid')}, "
                         f"booted {booted}):\n{held.get('after')}\n")

        # refused early, in one failure naming both, with the exit status of missing points
        assert rc == 13, output[-5000:]
        flat = " ".join(output.split())      # the result's message may be folded over lines
        assert "Preflight of storage-vm, nothing installed, written or removed: " in flat, output[-5000:]
        refusal = flat[flat.index("Preflight of storage-vm"):][:1500]
        assert f"pool testbed on node storage-vm was not created by the testbed (GUID {guid}" in refusal, refusal
        assert f"cluster ceph on node storage-vm was not created by the testbed (fsid {FOREIGN_FSID}" in refusal, refusal
        for later in ("TASK [storage_compare : Install the workload tools", "TASK [storage_zfs :", "TASK [storage_ceph :",
                      "TASK [storage_compare : Stop MariaDB and unmount", "TASK [storage_compare : Remove both systems]",
                      "TASK [storage_compare : Stop the processes an interrupted run left"):
            assert not ran(output, later), f"{later} ran after the refusal"
        assert "Exit status 13 (incomplete)" in output
        assert "nothing was removed from storage-vm" in output

        # held at the cleanup's last step: the same VM (the run kept it), both foreign objects as they were
        assert held.get("done"), "the run never reached the cleanup's VM step"
        assert held["pid"] == booted, "the run restarted the storage VM (its snapshot root disk is new)"
        assert held["after"] == before, (before, held["after"])
        assert not glob.glob(os.path.join(str(results), "storage_compare", "*", "*__rep*.json"))

        # the run's cleanup stopped the lab VM and deleted its disks
        assert qemu_pid() is None and not os.path.exists(PIDFILE), "the storage VM is still running"
        left = subprocess.run(["pgrep", "-f", "qemu-system.*storage-lab"], capture_output=True, text=True)
        assert left.stdout.strip() == "", left.stdout
        assert not glob.glob(os.path.join(STATE, "storage-lab-disk*.img"))
    finally:
        if qemu_pid():
            vm(boot, "absent")
