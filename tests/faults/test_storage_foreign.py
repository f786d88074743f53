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
import subprocess
import threading

import fault_run
from storage_lab_vm import CLEANUP_LAST_STEP, PIDFILE, STATE, HoldAtCleanup, boot, node, qemu_pid, ran, vm

FOREIGN_FSID = "0b2c3d4e-5f60-4a1b-8c2d-3e4f5a6b7c8d"
VDEV = "/root/foreign-testbed.vdev"
MON = "/var/lib/ceph/mon/ceph-x"
# Read-only: what makes the foreign objects the same ones (the pool imported, with its GUID).
READ = (f"zpool list -H -p -o name,guid,health testbed; sha256sum {VDEV} /etc/ceph/ceph.conf; "
        f"cd {MON} && find . -printf '%p %s %m\\n' | sort && sha256sum keep; ls /var/lib/testbed 2>&1 || true")


def test_foreign_pool_and_cluster_are_refused_and_left_intact(tmp_path):
    results = tmp_path / "results"
    stop, booted = boot(tmp_path)
    try:
        node(f"modprobe zfs && truncate -s 128M {VDEV} && zpool create -o cachefile=none testbed {VDEV} "
             "&& head -c 1048576 /dev/urandom > /testbed/keep && zpool sync testbed")
        node(f"mkdir -p /etc/ceph {MON} && printf '[global]\\nfsid = {FOREIGN_FSID}\\nmon_host = 192.0.2.10\\n' "
             f"> /etc/ceph/ceph.conf && head -c 65536 /dev/urandom > {MON}/keep")
        before = node(READ)
        guid = before.split()[1]
        assert before.startswith("testbed\t") and "ONLINE" in before.splitlines()[0], before
        assert "No such file" in before, before           # no marker: neither is the testbed's

        hold = HoldAtCleanup(READ)
        held = hold.held
        proc = fault_run.start("playbooks/storage-compare.yml", results,
                               ["-e", "testbed_run_id=new", "-e", "storage_compare_fidelity=false",
                                "-e", "storage_compare_access=local"])
        done = threading.Event()
        rc, output = fault_run.run_with_fault(
            proc, results, lambda line: CLEANUP_LAST_STEP in line,
            lambda p: (hold(p), done.set()), 0, 1800)
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
        assert not fault_run.run_docs(results, "storage_compare")

        # the run's cleanup stopped the lab VM and deleted its disks
        assert qemu_pid() is None and not os.path.exists(PIDFILE), "the storage VM is still running"
        left = subprocess.run(["pgrep", "-f", "qemu-system.*storage-lab"], capture_output=True, text=True)
        assert left.stdout.strip() == "", left.stdout
        assert not glob.glob(os.path.join(STATE, "storage-lab-disk*.img"))
    finally:
        if qemu_pid():
            vm(stop, "absent")
