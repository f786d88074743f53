"""Fault injection on the container lab (make faults): a guest that dies during a point is a lab fault.

A short real container-compare sweep (native and docker, the cpu workload, 2 repetitions) into its
own results directory; while the first docker point's load runs, the Docker guest is killed
(`docker kill cc-docker`). Expected: the point is stored as a fault document naming the guest, the
recover hook starts the guest again (its servers too), the point is measured again, and the run
completes with every point a real measurement and cleanup done (no guest left).

The LXC case (native and lxc) stops the LXC guest with `lxc-stop` while its first point's sysbench
runs; the KVM case (native and kvm; the KVM guest is emulated here, TCG: each boot takes minutes)
kills the guest's qemu with SIGKILL. Expected the same way: a fault document naming the guest, the
guest started (booted) again by its runtime role with its servers, the point measured again, every
point valid, exit 0, no guest left after cleanup.

Needs root and dockerd (scripts/ensure-dockerd.sh); a few minutes (the KVM case about a quarter of an hour).
Not part of `make test`.
"""

import os
import signal
import subprocess
import time

import fault_run
from playbook_run import report_text

STATE = "/var/lib/testbed/lab"
LXC_PATH = "/var/lib/lxc"   # roles/runtime_lxc: runtime_lxc_lxc_path


def short(variant):
    """native and `variant`, the cpu workload at one thread, 6 s, 2 repetitions, no fidelity pairs."""
    return ["-e", '{"container_compare_variants": ["native", "%s"]}' % variant,
            "-e", '{"container_compare_workloads": ["cpu"]}',
            "-e", '{"container_compare_cpu_threads": [1]}', "-e", "container_compare_cpu_duration_s=6",
            "-e", "container_compare_repetitions=2", "-e", "container_compare_fidelity=false", "-e", "testbed_run_id=new"]


SHORT = short("docker")
DOCKER_LOAD = "TASK [Run sysbench cpu, threads: 1]"


def run_with_fault(results, inject, after_loads=3, delay_s=0.5, timeout_s=2400, args=None, trigger_line=DOCKER_LOAD):
    """Run the sweep; once the `after_loads`-th point's load begins (the guest segment's first:
    native's two come first), call inject(). Returns (rc, output)."""
    seen = []

    def trigger(line):
        if trigger_line in line:
            seen.append(line)
        return len(seen) == after_loads
    proc = fault_run.start("playbooks/container-compare.yml", results, SHORT if args is None else args)
    return fault_run.run_with_fault(proc, results, trigger, lambda _proc: inject(), delay_s, timeout_s)


def assert_recovered(results, output, guest):
    """One guest point or more stored as faults naming `guest`, every one of the 4 points valid, the report's note."""
    docs = fault_run.run_docs(results, "container_compare")
    faults = {k: d for k, d in docs.items() if d.get("verdict") == "fault"}
    points = {k: d for k, d in docs.items() if d.get("verdict") != "fault"}
    assert faults, output[-4000:]
    assert all(k.startswith(guest.split("-")[1] + "__") and "__fault" in k for k in faults), sorted(faults)
    assert all(any(guest in e["component"] for e in f["evidence"]) for f in faults.values()), \
        [f["evidence"] for f in faults.values()]
    assert len(points) == 4 and all(d["valid"] is True for d in points.values()), {k: d["reasons"] for k, d in points.items()}
    assert f"Lab fault: guest {guest}" in output, output[-4000:]
    report = report_text(results, "container_compare")
    assert "detected and recovered" in report and guest in report


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
    docs = fault_run.run_docs(results, "container_compare")
    faults = [d for d in docs.values() if d.get("verdict") == "fault"]
    points = {k: d for k, d in docs.items() if d.get("verdict") != "fault"}
    assert faults, output[-4000:]
    assert all(any("cc-docker" in e["component"] for e in f["evidence"]) for f in faults), [f["evidence"] for f in faults]
    assert len(points) == 4 and all(d["valid"] is True for d in points.values()), {k: d["reasons"] for k, d in points.items()}
    assert "Lab fault: guest cc-docker" in output
    report = report_text(results, "container_compare")
    assert "detected and recovered" in report
    left = subprocess.run(["docker", "ps", "-a", "--filter", "name=cc-docker", "-q"], capture_output=True, text=True)
    assert left.stdout.strip() == "", "the guest was left behind after cleanup"


def test_docker_guest_killed_during_ab_is_found_by_the_watchdog(tmp_path):
    """A network load against a dead guest: ab -r keeps retrying its connections to the killed guest's
    address, so only the watchdog (testbed_workload_watch: the guest pinged every 2 s from the host)
    ends the point - as a fault naming the guest, long before the load's deadline (900 s here)."""
    results = tmp_path / "results"
    killed = []
    requests = 400000   # far more than ab does before the kill: the point cannot end by itself first

    def kill_guest():
        # while ab runs against the guest (the point's load), not before it
        for _ in range(480):
            if subprocess.run(["pgrep", "-f", f"ab -n {requests} "], capture_output=True).returncode == 0:
                break
            time.sleep(0.25)
        time.sleep(1)
        killed.append((time.monotonic(), subprocess.run(["docker", "kill", "cc-docker"], capture_output=True,
                                                         text=True, timeout=60)))
    args = ["-e", '{"container_compare_variants": ["native", "docker"]}', "-e", '{"container_compare_workloads": ["web"]}',
            "-e", '{"container_compare_web_concurrency": [10]}', "-e", f"container_compare_web_requests={requests}",
            "-e", "container_compare_repetitions=2", "-e", "container_compare_fidelity=false", "-e", "testbed_run_id=new",
            "-e", "testbed_workload_watch_interval_s=2", "-e", "testbed_workload_deadline_default_s=900"]
    started = time.monotonic()
    rc, output = run_with_fault(results, kill_guest, args=args, trigger_line="Run ab at concurrency 10]")
    assert killed and killed[0][1].returncode == 0, (killed, output[-4000:])
    assert rc == 0, output[-4000:]
    docs = fault_run.run_docs(results, "container_compare")
    faults = [d for d in docs.values() if d.get("verdict") == "fault"]
    points = {k: d for k, d in docs.items() if d.get("verdict") != "fault"}
    assert faults, output[-4000:]
    stopped = [r for f in faults for r in f["reasons"] if r.startswith("the watchdog stopped the load ")]
    assert stopped and "cc-docker" in stopped[0] and "did not answer 2 probes 2 s apart" in stopped[0], \
        [f["reasons"] for f in faults]
    assert all(any("cc-docker" in e["component"] for e in f["evidence"]) for f in faults), [f["evidence"] for f in faults]
    assert len(points) == 4 and all(d["valid"] is True for d in points.values()), {k: d["reasons"] for k, d in points.items()}
    # the measured detection: from the kill to the end of the load, from the fault's own times (shown, not asserted)
    print(f"watchdog: {stopped[0]}; run {time.monotonic() - started:.0f} s")
    left = subprocess.run(["docker", "ps", "-a", "--filter", "name=cc-docker", "-q"], capture_output=True, text=True)
    assert left.stdout.strip() == "", "the guest was left behind after cleanup"


def test_lxc_guest_stopped_mid_point(tmp_path):
    results = tmp_path / "results"
    stopped = []

    def stop_guest():
        # while sysbench runs in the guest (the point's load), not before it
        for _ in range(240):
            top = subprocess.run(["lxc-attach", "-P", LXC_PATH, "-n", "cc-lxc", "--", "pgrep", "-x", "sysbench"],
                                 capture_output=True, text=True, timeout=30)
            if top.returncode == 0:
                break
            time.sleep(0.25)
        stopped.append(subprocess.run(["lxc-stop", "-P", LXC_PATH, "-n", "cc-lxc"], capture_output=True, text=True,
                                      timeout=120))
    rc, output = run_with_fault(results, stop_guest, args=short("lxc"))
    assert stopped and stopped[0].returncode == 0, (stopped, output[-4000:])
    assert rc == 0, output[-4000:]
    assert_recovered(results, output, "cc-lxc")
    left = subprocess.run(["lxc-info", "-P", LXC_PATH, "-n", "cc-lxc"], capture_output=True, text=True)
    assert left.returncode != 0, "the LXC guest was left behind after cleanup: " + left.stdout


def test_kvm_guest_qemu_killed_mid_point(tmp_path):
    results = tmp_path / "results"
    killed = []

    def kill_qemu():
        with open(os.path.join(STATE, "cc-kvm.pid")) as handle:
            pid = int(handle.read().strip())
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)
    # while sysbench runs in the guest (its sshd forwarded from port 2223)
    rc, output = run_with_fault(results, fault_run.once_running_in_lab_vm(2223, "sysbench", kill_qemu),
                                args=short("kvm"), timeout_s=3600)
    assert killed, output[-4000:]
    assert rc == 0, output[-4000:]
    assert_recovered(results, output, "cc-kvm")
    assert not os.path.exists(os.path.join(STATE, "cc-kvm.pid")), "the KVM guest's pid file was left behind"
    qemu = subprocess.run(["pgrep", "-f", "qemu-system-x86_64 -name cc-kvm "], capture_output=True, text=True)
    assert qemu.stdout.strip() == "", "the KVM guest's qemu is still running: " + qemu.stdout
