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
import time

import fault_run

SHORT = ["-e", '{"container_compare_variants": ["native", "docker"]}', "-e", '{"container_compare_workloads": ["cpu"]}',
         "-e", '{"container_compare_cpu_threads": [1]}', "-e", "container_compare_cpu_duration_s=6",
         "-e", "container_compare_repetitions=2", "-e", "container_compare_fidelity=false", "-e", "testbed_run_id=new"]
DOCKER_LOAD = "TASK [Run sysbench cpu, threads: 1]"


def run_with_fault(results, inject, after_loads=3, delay_s=0.5, timeout_s=2400):
    """Run the sweep; once the `after_loads`-th cpu point begins (the docker segment's first:
    native's two come first), call inject(). Returns (rc, output)."""
    seen = []

    def trigger(line):
        if DOCKER_LOAD in line:
            seen.append(line)
        return len(seen) == after_loads
    proc = fault_run.start("playbooks/container-compare.yml", results, SHORT)
    return fault_run.run_with_fault(proc, results, trigger, lambda _proc: inject(), delay_s, timeout_s)


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
