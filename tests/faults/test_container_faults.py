"""Fault injection on the container lab (make faults): a guest that dies during a point is a lab fault.

A short real container-compare sweep (native and docker, the cpu workload, 2 repetitions) into its
own results directory; while the first docker point's load runs, the Docker guest is killed
(`docker kill cc-docker`). Expected: the point is stored as a fault document naming the guest, the
recover hook starts the guest again (its servers too), the point is measured again, and the run
completes with every point a real measurement and cleanup done (no guest left).

Needs root and dockerd (scripts/ensure-dockerd.sh); a few minutes. Not part of `make test`.
"""

import glob
import json
import os
import subprocess
import sys
import threading
import time

from playbook_run import ROOT

BIN = os.path.dirname(sys.executable)
SHORT = ["-e", '{"container_compare_variants": ["native", "docker"]}', "-e", '{"container_compare_workloads": ["cpu"]}',
         "-e", '{"container_compare_cpu_threads": [1]}', "-e", "container_compare_cpu_duration_s=6",
         "-e", "container_compare_repetitions=2", "-e", "container_compare_fidelity=false", "-e", "testbed_run_id=new"]
DOCKER_LOAD = "TASK [Run sysbench cpu, threads: 1]"


def run_with_fault(results, inject, after_loads=3, delay_s=0.5, timeout_s=2400):
    """Run the sweep; once the `after_loads`-th cpu point begins (the docker segment's first:
    native's two come first), call inject() in a thread of its own. Returns (rc, output)."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    cmd = [os.path.join(BIN, "ansible-playbook"), "playbooks/container-compare.yml", "-i", "inventories/lab",
           "-e", f"testbed_results_dir={results}"] + SHORT
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, seen = [], []

    def reader():
        for line in proc.stdout:
            lines.append(line)
            if DOCKER_LOAD in line:
                seen.append(line)
                if len(seen) == after_loads:
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


def test_docker_guest_killed_mid_point(tmp_path):
    results = tmp_path / "results"
    killed = []

    def kill_guest():
        # while sysbench runs in the guest (the point's load), not before it
        for _ in range(240):
            top = subprocess.run(["docker", "top", "cc-docker"], capture_output=True, text=True, timeout=30)
            if "sysbench" in top.stdout:
                break
            time.sleep(0.25)
        killed.append(subprocess.run(["docker", "kill", "cc-docker"], capture_output=True, text=True, timeout=60))
    rc, output = run_with_fault(results, kill_guest)
    assert killed and killed[0].returncode == 0, killed
    assert rc == 0, output[-4000:]
    docs = {}
    for path in glob.glob(os.path.join(str(results), "container_compare", "*", "*__rep*.json")):
        with open(path) as handle:
            docs[os.path.basename(path)[:-5]] = json.load(handle)
    faults = [d for d in docs.values() if d.get("verdict") == "fault"]
    points = {k: d for k, d in docs.items() if d.get("verdict") != "fault"}
    assert faults, output[-4000:]
    assert all(any("cc-docker" in e["component"] for e in f["evidence"]) for f in faults), [f["evidence"] for f in faults]
    assert len(points) == 4 and all(d["valid"] is True for d in points.values()), {k: d["reasons"] for k, d in points.items()}
    assert "Lab fault: guest cc-docker" in output
    report = open(glob.glob(os.path.join(str(results), "container_compare", "*", "report.md"))[0]).read()
    assert "detected and recovered" in report
    left = subprocess.run(["docker", "ps", "-a", "--filter", "name=cc-docker", "-q"], capture_output=True, text=True)
    assert left.stdout.strip() == "", "the guest was left behind after cleanup"
