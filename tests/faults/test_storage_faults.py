"""Fault injection on the storage lab (make faults): the storage VM killed during a fio point and during a
rebuild, and a SIGINT to the playbook during a rebuild followed by the same command (issue #24).

A short real storage-compare sweep (ZFS only, fio read and randread, one repetition, no fidelity
pairs) into its own results directory; a few seconds into the first fio load the lab's storage VM
is killed (SIGKILL to its qemu, 3 s after the point's fio started). Expected: the point does not end the play - the node that stopped
answering is a lab fault (a fault document naming it), the recover hook boots the VM again and
builds the pool anew, the point is measured again, the run completes with every point a real
measurement, and after cleanup no qemu, loop device, mount or pool of the lab is left.

The rebuild cases run ZFS only, one rebuild point of 64 MB, and inject 2 s after the put-back (`zpool
replace`) task starts, while the resilver the point times runs:
* SIGKILL to the VM's qemu: a fault document naming the storage node, the VM booted again and the pool
  built anew, the point measured again, exit 0, every point valid, nothing of the lab left; then the same
  command once more resumes the run: "Nothing to do", nothing built, still every point valid.
* SIGINT to ansible-playbook, at the put-back or (1 s into the wipe) with the disk out: the run stops
  (exit 99, no cleanup runs after a Ctrl-C: the VM, its pool and the point's poller are left), the same
  command resumes it (the running VM is reused, the setup hook stops the recorded poller and writer, a
  pool left not ONLINE is made anew by the segment) and measures the point: the new attempt's wait is
  never ended by the old attempt's poller or marks (per attempt), exit 0, nothing of the lab left after
  its cleanup.

Needs root, the lab's VM image and the cached OpenZFS module (scripts/setup.sh, playbooks/lvs-lab-up
pieces build them on first use); about 15 minutes per case. Not part of `make test`.
"""

import glob
import os
import signal
import subprocess

import fault_run
import pytest
from playbook_run import report_text, run_dirs

STATE = "/var/lib/testbed/lab"
SHORT = ["-e", '{"storage_compare_variants": ["zfs"]}', "-e", '{"storage_compare_workloads": ["fio"]}',
         "-e", '{"storage_compare_fio_patterns": ["read", "randread"]}', "-e", "storage_compare_fidelity=false",
         "-e", "testbed_run_id=new", "-e", "storage_compare_access=local"]
FIO_POINT = "TASK [Start fio on the device]"
FIO_LOAD = "TASK [testbed_workload : Run with LC_ALL=C: fio]"


def run_with_fault(results, inject, delay_s=3, timeout_s=3600, args=SHORT):
    """Run the sweep; `delay_s` after the point's own fio starts (not the span written before it),
    call inject(). Returns (rc, output)."""
    in_point = []

    def trigger(line):
        if FIO_POINT in line:
            in_point.append(line)
        return bool(in_point) and FIO_LOAD in line
    proc = fault_run.start("playbooks/storage-compare.yml", results, args)
    return fault_run.run_with_fault(proc, results, trigger, lambda _proc: inject(), delay_s, timeout_s)


def storage_vm_killer():
    """(kill, killed): kill() sends SIGKILL to the lab's storage VM (its qemu) and notes its pid in killed."""
    killed = []

    def kill():
        with open(os.path.join(STATE, "storage-lab.pid")) as handle:
            pid = int(handle.read().strip())
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)
    return kill, killed


def assert_one_fault_of_the_node_and_two_valid_points(results, output):
    docs = fault_run.run_docs(results, "storage_compare")
    faults = [d for d in docs.values() if d.get("verdict") == "fault"]
    points = {k: d for k, d in docs.items() if d.get("verdict") != "fault"}
    assert len(faults) == 1, output[-4000:]
    components = " ".join(e["component"] for e in faults[0]["evidence"])
    assert "storage" in components, faults[0]["evidence"]
    assert len(points) == 2 and all(d["valid"] is True for d in points.values()), {k: d["reasons"] for k, d in points.items()}
    assert "detected and recovered" in report_text(results, "storage_compare")


def test_storage_vm_killed_during_a_fio_point(tmp_path):
    results = tmp_path / "results"
    kill_vm, killed = storage_vm_killer()
    rc, output = run_with_fault(results, kill_vm)
    assert killed, output[-4000:]
    assert rc == 0, output[-4000:]
    assert_one_fault_of_the_node_and_two_valid_points(results, output)
    # nothing of the lab left behind by the cleanup
    qemu = subprocess.run(["pgrep", "-f", "qemu-system.*storage-lab"], capture_output=True, text=True)
    assert qemu.stdout.strip() == "", "a storage VM is still running"
    assert not os.path.exists(os.path.join(STATE, "storage-lab.pid"))


# --- network access (the study's topology): fio in the client VM, the zvol over iSCSI ------------------------------
# 60 s of fio, so that its deadline (3 x 60 + 60 s) is far from the watchdog's detection (two silent probes of the
# client VM's data disk, 5 s apart, each waiting 20 s for its read).
NETWORK = [a if a != "storage_compare_access=local" else "storage_compare_access=network" for a in SHORT] + [
    "-e", "storage_compare_fio_runtime_s=60"]


def test_storage_vm_killed_during_a_network_fio_point(tmp_path):
    """The storage VM killed while fio runs in the client VM: the target is gone, the client's reads hang; the
    watchdog stops fio (not its deadline), the point is a fault naming the storage node, which is booted and
    built again, the point measured again: every point valid, nothing of the lab left."""
    results = tmp_path / "results"
    kill_vm, killed = storage_vm_killer()
    # the client VM's sshd is forwarded from port 2229 (inventories/lab)
    rc, output = run_with_fault(results, fault_run.once_running_in_lab_vm(2229, "fio", kill_vm), delay_s=0,
                                timeout_s=5400, args=NETWORK)
    assert killed, output[-4000:]
    assert rc == 0, output[-4000:]
    assert_one_fault_of_the_node_and_two_valid_points(results, output)
    # the fault document: fio stopped by the watchdog, not at its deadline
    (fault,) = [d for d in fault_run.run_docs(results, "storage_compare").values() if d.get("verdict") == "fault"]
    assert any(r.startswith("the watchdog stopped the load") and r.endswith("did not answer 2 probes 5 s apart")
               for r in fault["reasons"]), fault["reasons"]
    assert not any("exceeded its deadline" in r for r in fault["reasons"]), fault["reasons"]
    qemu = subprocess.run(["pgrep", "-f", "qemu-system.*(storage-lab|testbed-storage-client)"], capture_output=True,
                          text=True)
    assert qemu.stdout.strip() == "", "a storage or client VM is still running"


# --- a rebuild point (issue #24): ZFS only, one rebuild of 64 MB, no fidelity pairs -------------------------------
REBUILD = ["-e", '{"storage_compare_variants": ["zfs"]}', "-e", '{"storage_compare_workloads": ["rebuild"]}',
           "-e", '{"storage_compare_rebuild_used_mb": [64]}', "-e", "storage_compare_fidelity=false",
           "-e", "storage_compare_access=local"]
# The put-back (zpool replace): the resilver the point times starts with it.
PUT_BACK = "TASK [storage_zfs : Replace the member with the wiped disk]"


def run_docs(results):
    return fault_run.run_docs(results, "storage_compare")


def assert_rebuild_point_valid(results, output):
    """One rebuild point stored, a real measurement: the system seen degraded and whole again, every file verified."""
    points = {k: d for k, d in run_docs(results).items() if d.get("verdict") != "fault"}
    assert len(points) == 1, (sorted(points), output[-4000:])
    (ident, doc), = points.items()
    assert doc["valid"] is True, (ident, doc["reasons"])
    metrics = doc["metrics"]
    assert metrics["rebuild_s"] and metrics["rebuild_s"] > 0, metrics
    assert metrics["integrity_mismatches"] == 0 and metrics["integrity_files"] == 4, metrics
    # a poller or mark of the interrupted attempt would end this wait at once, before any poll saw the pool degraded
    assert not any("no poll saw" in w for w in doc.get("warnings", [])), doc.get("warnings")
    return ident, doc


def assert_nothing_of_the_lab_left():
    qemu = subprocess.run(["pgrep", "-af", "qemu-system.*storage-lab"], capture_output=True, text=True)
    assert qemu.stdout.strip() == "", "a storage VM is still running: " + qemu.stdout
    assert not os.path.exists(os.path.join(STATE, "storage-lab.pid"))
    assert not glob.glob(os.path.join(STATE, "storage-lab-*.img")), "the VM's data disk files are left"
    loops = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    assert "storage-lab" not in loops, loops
    mounts = open("/proc/mounts").read()
    assert "storage-lab" not in mounts and "/mnt/testbed" not in mounts, mounts


def run_rebuild(results, inject, delay_s, trigger=PUT_BACK, extra=("-e", "testbed_run_id=new")):
    proc = fault_run.start("playbooks/storage-compare.yml", results, REBUILD + list(extra))
    return fault_run.run_with_fault(proc, results, lambda line: trigger in line, inject, delay_s, 3600)


def first_result(output, banner):
    """The first line after the first banner starting with `banner` (ok:, changed:, skipping:...), or ''."""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(banner):
            follow = [x for x in lines[index + 1:index + 6] if x.strip()]
            return follow[0] if follow else ""
    return ""


def rerun(results):
    """The same command again without testbed_run_id=new: the newest run with this plan resumes."""
    proc = fault_run.start("playbooks/storage-compare.yml", results, REBUILD)
    out, _ = proc.communicate(timeout=3600)
    with open(os.path.join(os.path.dirname(str(results)), "rerun.log"), "w") as handle:
        handle.write(out)
    return proc.returncode, out


def test_storage_vm_killed_during_a_rebuild(tmp_path):
    results = tmp_path / "results"
    killed = []

    def kill_vm(_proc):
        with open(os.path.join(STATE, "storage-lab.pid")) as handle:
            pid = int(handle.read().strip())
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)
    rc, output = run_rebuild(results, kill_vm, 2)
    assert killed, output[-4000:]
    assert rc == 0, output[-4000:]
    faults = [d for d in run_docs(results).values() if d.get("verdict") == "fault"]
    assert len(faults) == 1, output[-4000:]
    components = " ".join(e["component"] for e in faults[0]["evidence"])
    assert "storage node storage-vm" in components, faults[0]["evidence"]
    assert "Pass 2: measuring again" in output
    assert "TASK [storage_compare : Build the segment's system again]" in output
    ident, _ = assert_rebuild_point_valid(results, output)
    assert ident.startswith("zfs__") and "rebuild" in ident
    assert_nothing_of_the_lab_left()
    runs = run_dirs(results, "storage_compare")

    rc2, output2 = rerun(results)
    assert rc2 == 0, output2[-4000:]
    assert "Nothing to do: every point of this run is measured." in output2, output2[-4000:]
    assert run_dirs(results, "storage_compare") == runs   # resumed, not new
    assert "TASK [lab_vm : Start qemu" not in output2                   # nothing built, no VM booted
    assert_rebuild_point_valid(results, output2)
    assert_nothing_of_the_lab_left()


# put_back: 2 s after the put-back starts - the resilver runs, the point's timer polls it (and, the
#   resilver of 64 MB taking seconds, ends by itself, leaving its per-attempt marks behind);
# disk_out: 1 s after the wipe of the disk taken out starts - the timer still waits for its put-back
#   mark, and would wait on (storage_compare_rebuild_mark_wait_s) into the rerun: the rerun's setup
#   hook must stop it, the pool is degraded (one disk offline and wiped) when the rerun builds it.
SIGINT_AT = {"put_back": (PUT_BACK, 2), "disk_out": ("TASK [Wipe the disk]", 1)}   # include_role: no role in its banner


@pytest.mark.parametrize("moment", sorted(SIGINT_AT))
def test_sigint_during_a_rebuild_then_rerun(tmp_path, moment):
    results = tmp_path / "results"
    sent = []

    def interrupt(proc):
        proc.send_signal(signal.SIGINT)
        sent.append(True)
    trigger, delay_s = SIGINT_AT[moment]
    rc, output = run_rebuild(results, interrupt, delay_s, trigger)
    assert sent, output[-4000:]
    assert rc == 99, output[-4000:]                       # README: interrupted (Ctrl-C)
    assert "User interrupted execution" in output
    assert not run_docs(results), "the interrupted point was stored"
    runs = run_dirs(results, "storage_compare")
    assert len(runs) == 1

    rc2, output2 = rerun(results)
    assert rc2 == 0, output2[-4000:]
    assert run_dirs(results, "storage_compare") == runs   # resumed, not new
    assert first_result(output2, "TASK [lab_vm : Start qemu").startswith("skipping:")   # the running VM reused
    if moment == "put_back":
        # the interrupted attempt's put-back and done marks were there, and removed before the new timer
        banner = "TASK [storage_compare : Remove the put-back and done marks of earlier"
        lines = output2.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith(banner))
        removed = [line for line in lines[at + 1:at + 6] if line.startswith("changed:")]   # in no set order
        assert any(line.endswith(".back)") for line in removed), removed
    else:
        # the interrupted attempt's timer was still waiting for its mark: the setup hook stopped it
        stopped = first_result(output2, "TASK [storage_compare : Stop the processes an interrupted run left")
        assert stopped.startswith("changed:"), stopped
        # the pool was left DEGRADED (the disk offline): made anew, not measured as it was
        anew = first_result(output2, "TASK [storage_compare : Destroy the experiment's pool that is not whole")
        assert anew.startswith("included:"), anew
    assert_rebuild_point_valid(results, output2)
    assert not [d for d in run_docs(results).values() if d.get("verdict") == "fault"]
    assert_nothing_of_the_lab_left()
