"""Fault injection on the storage lab (make faults): the storage VM killed during a fio point.

A short real storage-compare sweep (ZFS only, fio read and randread, one repetition, no fidelity
pairs) into its own results directory; a few seconds into the first fio load the lab's storage VM
is killed (SIGKILL to its qemu, 3 s after the point's fio started). Expected: the point does not end the play - the node that stopped
answering is a lab fault (a fault document naming it), the recover hook boots the VM again and
builds the pool anew, the point is measured again, the run completes with every point a real
measurement, and after cleanup no qemu, loop device, mount or pool of the lab is left.

Needs root, the lab's VM image and the cached OpenZFS module (scripts/setup.sh, playbooks/lab-up
pieces build them on first use); about 15 minutes. Not part of `make test`.
"""

import glob
import json
import os
import signal
import subprocess

import fault_run

STATE = "/var/lib/testbed/lab"
SHORT = ["-e", '{"storage_compare_variants": ["zfs"]}', "-e", '{"storage_compare_workloads": ["fio"]}',
         "-e", '{"storage_compare_fio_patterns": ["read", "randread"]}', "-e", "storage_compare_fidelity=false",
         "-e", "testbed_run_id=new"]
FIO_POINT = "TASK [Start fio on the device]"
FIO_LOAD = "TASK [testbed_workload : Run with LC_ALL=C: fio]"


def run_with_fault(results, inject, delay_s=3, timeout_s=3600):
    """Run the sweep; `delay_s` after the point's own fio starts (not the span written before it),
    call inject(). Returns (rc, output)."""
    in_point = []

    def trigger(line):
        if FIO_POINT in line:
            in_point.append(line)
        return bool(in_point) and FIO_LOAD in line
    proc = fault_run.start("playbooks/storage-compare.yml", results, SHORT)
    return fault_run.run_with_fault(proc, results, trigger, lambda _proc: inject(), delay_s, timeout_s)


def test_storage_vm_killed_during_a_fio_point(tmp_path):
    results = tmp_path / "results"
    killed = []

    def kill_vm():
        with open(os.path.join(STATE, "storage-lab.pid")) as handle:
            pid = int(handle.read().strip())
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)
    rc, output = run_with_fault(results, kill_vm)
    assert killed, output[-4000:]
    assert rc == 0, output[-4000:]
    docs = {}
    for path in glob.glob(os.path.join(str(results), "storage_compare", "*", "*__rep*.json")):
        with open(path) as handle:
            docs[os.path.basename(path)[:-5]] = json.load(handle)
    faults = [d for d in docs.values() if d.get("verdict") == "fault"]
    points = {k: d for k, d in docs.items() if d.get("verdict") != "fault"}
    assert len(faults) == 1, output[-4000:]
    components = " ".join(e["component"] for e in faults[0]["evidence"])
    assert "storage" in components, faults[0]["evidence"]
    assert len(points) == 2 and all(d["valid"] is True for d in points.values()), {k: d["reasons"] for k, d in points.items()}
    report = open(glob.glob(os.path.join(str(results), "storage_compare", "*", "report.md"))[0]).read()
    assert "detected and recovered" in report
    # nothing of the lab left behind by the cleanup
    qemu = subprocess.run(["pgrep", "-f", "qemu-system.*storage-lab"], capture_output=True, text=True)
    assert qemu.stdout.strip() == "", "a storage VM is still running"
    assert not os.path.exists(os.path.join(STATE, "storage-lab.pid"))
