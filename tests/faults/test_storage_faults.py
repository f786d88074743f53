"""Fault injection on the storage lab (make faults): the storage VM killed during a fio point.

A short real storage-compare sweep (ZFS only, fio read and randread, one repetition, no fidelity
pairs) into its own results directory; a few seconds into the first fio load the lab's storage VM
is killed (SIGKILL to its qemu). Expected: the point does not end the play - the node that stopped
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
import sys
import threading

from playbook_run import ROOT

BIN = os.path.dirname(sys.executable)
STATE = "/var/lib/testbed/lab"
SHORT = ["-e", '{"storage_compare_variants": ["zfs"]}', "-e", '{"storage_compare_workloads": ["fio"]}',
         "-e", '{"storage_compare_fio_patterns": ["read", "randread"]}', "-e", "storage_compare_fidelity=false",
         "-e", "testbed_run_id=new"]
FIO_LOAD = "TASK [storage_compare : Start fio on the device]"


def run_with_fault(results, inject, delay_s=4, timeout_s=3600):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    cmd = [os.path.join(BIN, "ansible-playbook"), "playbooks/storage-compare.yml", "-i", "inventories/lab",
           "-e", f"testbed_results_dir={results}"] + SHORT
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, fired = [], threading.Event()

    def reader():
        for line in proc.stdout:
            lines.append(line)
            if FIO_LOAD in line and not fired.is_set():
                fired.set()
                threading.Timer(delay_s, inject).start()
    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        proc.wait(timeout=timeout_s)
    finally:
        if proc.poll() is None:
            proc.kill()
    thread.join(10)
    output = "".join(lines)
    with open(os.path.join(os.path.dirname(str(results)), "sweep.log"), "w") as handle:
        handle.write(output)
    return proc.returncode, output


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
