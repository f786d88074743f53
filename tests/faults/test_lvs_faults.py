"""Fault injection on the LVS lab (make faults): every fault ends as specified.

Each case runs a short real LVS sweep on the local lab (2 schedulers x 1 rate,
20 s points) into its own results directory, injects one fault while the
first point's load runs, and checks the outcome: either a complete run whose
every point is a real measurement (the faulted point stored as a fault
document and measured again) or a clear error naming the component - and in
every case no point lost, none duplicated, none half-written.

Needs the lab (playbooks/lvs-lab-up.yml; the sweep brings it up itself) and
root; takes several minutes per case. Not part of `make test`.
Traffic goes only to the lab's own addresses.
"""

import os
import signal
import subprocess
import sys
import threading
import time

import ansible.module_utils
import fault_run
import pytest
from playbook_run import ROOT as _ROOT
from playbook_run import explain, only_run_dir, report_text, run_dirs

if os.path.join(_ROOT, "module_utils") not in ansible.module_utils.__path__:
    ansible.module_utils.__path__.append(os.path.join(_ROOT, "module_utils"))
from ansible.module_utils.testbed_results import leftover_temp_files  # noqa: E402 (after the path above)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)
STATE = "/var/lib/testbed/lab"
# Without the fidelity check (its pairs run before the sweep: 6 loads more, nothing these faults test).
SHORT = ["-e", '{"lvs_compare_schedulers": ["rr", "wrr"]}', "-e", '{"lvs_compare_rates": [50]}',
         "-e", "lvs_compare_run_seconds=20", "-e", "testbed_run_id=new", "-e", "lvs_compare_fidelity=false"]
FIRST_LOAD = "TASK [lvs_client : Launch httperf"


def sh(*argv, check=True):
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=120, check=check)


def start_sweep(results, *extra):
    return fault_run.start("playbooks/lvs-compare.yml", results, SHORT + list(extra))


def run_with_fault(results, inject, delay_s=8, *extra, timeout_s=1500):
    """Run the sweep; `delay_s` after the first load starts, call inject(proc). Returns (rc, output)."""
    return fault_run.run_with_fault(start_sweep(results, *extra), results, lambda line: FIRST_LOAD in line,
                                    inject, delay_s, timeout_s)


def run_docs(results):
    return fault_run.run_docs(results, "lvs_compare")


def assert_fault_recorded(results, output, component):
    """The fault is named in the output and the report; a point it hit is a fault document or was re-measured.

    A point whose load was running when the fault hit is stored as a fault document either way:
    held back with errors and found after that point, or still in flight when the probe before the
    next segment (or after the point before it) found the fault first (reason "in flight when the
    fault was found"); it is measured again in the next pass.
    """
    assert f"Lab fault: {component}" in output, output[-3000:]
    assert "Pass 2: measuring again" in output
    report = report_text(results, "lvs_compare")
    assert "Lab faults in the last sweep: 1 detected and recovered" in report and component in report
    faults = [d for d in run_docs(results).values() if d.get("verdict") == "fault"]
    assert all(f["evidence"][0]["component"] == component for f in faults)


def assert_complete_and_real(results, output, num_conns=1000):
    docs = run_docs(results)
    points = {k: d for k, d in docs.items() if d.get("verdict") != "fault"}
    assert set(points) == {f"rr__num_conns-{num_conns}_rate-50__rep1", f"wrr__num_conns-{num_conns}_rate-50__rep1"}, \
        output[-3000:]
    for ident, doc in points.items():
        assert doc["valid"] is True, (ident, doc["reasons"])
    for run_dir in run_dirs(results, "lvs_compare", empty=True):
        assert leftover_temp_files(run_dir) == []
    return docs


@pytest.fixture
def results(tmp_path):
    return tmp_path / "results"


def test_director_vm_killed_mid_point(results):
    def kill_vm(_proc):
        with open(os.path.join(STATE, "lvs-director.pid")) as handle:
            os.kill(int(handle.read().strip()), signal.SIGKILL)
    rc, out = run_with_fault(results, kill_vm)
    assert rc == 0, explain(rc, out)
    assert_complete_and_real(results, out)
    assert_fault_recorded(results, out, "lvs-director")


def test_apache_stopped_in_one_real_server(results):
    def stop_apache(_proc):
        sh("docker", "exec", "lvs-web2", "systemctl", "stop", "apache2")
    rc, out = run_with_fault(results, stop_apache)
    assert rc == 0, explain(rc, out)
    assert_complete_and_real(results, out)
    assert_fault_recorded(results, out, "lvs-web2")


def test_real_server_paused(results):
    def pause(_proc):
        sh("docker", "pause", "lvs-web3")
    try:
        rc, out = run_with_fault(results, pause)
    finally:
        sh("docker", "unpause", "lvs-web3", check=False)
    assert rc == 0, explain(rc, out)
    assert_complete_and_real(results, out)
    assert_fault_recorded(results, out, "lvs-web3")


def test_real_server_killed_during_httperf_is_found_by_the_watchdog(results):
    """A real server killed while httperf runs: the watchdog (each real server's web server probed through
    its own connection every 5 s) stops the load two silent rounds later, long before its end (60 s
    points), and the point is a fault naming the server; it is restarted and the point measured again."""
    killed = []

    def kill_web2(_proc):
        # while httperf runs (a state, polled), not after a line of output
        for _ in range(480):
            if sh("docker", "exec", "lvs-client1", "pgrep", "-x", "httperf", check=False).returncode == 0:
                break
            time.sleep(0.25)
        time.sleep(2)
        killed.append(time.monotonic())
        sh("docker", "kill", "lvs-web2")
    rc, out = run_with_fault(results, kill_web2, 0, "-e", "lvs_compare_run_seconds=60")
    assert killed, out[-3000:]
    assert rc == 0, explain(rc, out)
    assert_complete_and_real(results, out, num_conns=3000)
    assert_fault_recorded(results, out, "lvs-web2")
    faults = [d for d in run_docs(results).values() if d.get("verdict") == "fault"]
    stopped = [r for f in faults for r in f["reasons"] if r.startswith("the watchdog stopped the load ")]
    assert stopped and "lvs-web2 (10.250.2.12 port 80) did not answer 2 probes 5 s apart" in stopped[0], \
        [f["reasons"] for f in faults]
    seconds_in = int(stopped[0].split("the watchdog stopped the load ")[1].split(" s in")[0])
    assert seconds_in < 45, stopped[0]   # stopped, not ended: the load lasts 60 s
    print(f"watchdog: {stopped[0]}")


def test_tap_link_down_for_20_seconds(results):
    def link_down(_proc):
        sh("ip", "link", "set", "tb-lvs-dpriv", "down")
        threading.Timer(20, lambda: sh("ip", "link", "set", "tb-lvs-dpriv", "up", check=False)).start()
    rc, out = run_with_fault(results, link_down)
    if rc == 0:
        assert_complete_and_real(results, out)
    else:   # the link came back too late for the recovery probe: the error names what was broken
        assert "Recovery failed:" in out and ("lvs-web" in out or "lvs-director" in out), out[-4000:]
    for ident, doc in run_docs(results).items():
        assert doc.get("verdict") == "fault" or doc["valid"] is True, ident


def test_sigint_mid_point_then_rerun(results):
    def interrupt(proc):
        proc.send_signal(signal.SIGINT)
    rc, out = run_with_fault(results, interrupt)
    assert rc != 0
    before = run_docs(results)
    assert all(d["valid"] for d in before.values())       # nothing half-measured was stored
    run_dir = only_run_dir(results, "lvs_compare")
    again = start_sweep(results, "-e", f"testbed_run_id={os.path.basename(run_dir)}")
    out2, _ = again.communicate(timeout=1500)
    assert again.returncode == 0, out2[-4000:]
    assert_complete_and_real(results, out2)
    left = sh("docker", "exec", "lvs-client1", "pgrep", "-x", "httperf", check=False)
    assert left.returncode != 0, "httperf still running after the rerun"


DIRECTOR_SSH = fault_run.lab_vm_ssh(2222)
# Another service on the director, not the testbed's (a keepalived or kube-proxy one on a real director):
# a table entry on a lab address, never sent traffic.
FOREIGN_SERVICE = "-t 10.250.1.99:8080"


def on_director(command):
    return sh(*DIRECTOR_SSH, command).stdout


def hosts_state():
    """What the run changes and its cleanup must put back: the director's whole IPVS table, NAT rules,
    addresses, forwarding and boot unit; every real server's routes, addresses and ARP sysctls."""
    state = {"lvs-director": on_director(
        "ipvsadm -Sn; echo; iptables -t nat -S; echo; ip -4 -o addr show | awk '{print $2, $4}'; echo;"
        " sysctl -n net.ipv4.ip_forward; ls /etc/systemd/system /etc/sysctl.d /etc/modules-load.d | grep -i lvs; true")}
    for web in ("lvs-web1", "lvs-web2", "lvs-web3"):
        state[web] = sh("docker", "exec", web, "sh", "-c",
                        "ip route show; echo; ip -4 -o addr show | awk '{print $2, $4}'; echo;"
                        " cat /proc/sys/net/ipv4/conf/all/arp_ignore /proc/sys/net/ipv4/conf/all/arp_announce").stdout
    return state


def test_ctrl_c_then_absent_leaves_the_hosts_as_before(results):
    """An interrupted run leaves the director and the real servers configured (no cleanup ran);
    -e testbed_state=absent puts back exactly the state before the run, another service included."""
    up = subprocess.run([os.path.join(BIN, "ansible-playbook"), "playbooks/lvs-lab-up.yml", "-i", "inventories/lab"],
                        cwd=ROOT, capture_output=True, text=True, timeout=3600,
                        env=dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1"))
    assert up.returncode == 0, explain(up.returncode, up.stdout, up.stderr)
    on_director(f"ipvsadm -A {FOREIGN_SERVICE} -s rr")
    try:
        before = hosts_state()
        assert "10.250.1.99:8080" in before["lvs-director"]

        def interrupt(proc):
            proc.send_signal(signal.SIGINT)
        rc, out = run_with_fault(results, interrupt)
        assert rc != 0, explain(rc, out)
        left = hosts_state()
        # The interrupted run left its setup in place; else there would be nothing to check below.
        assert left["lvs-director"] != before["lvs-director"], "the interrupted run left no service on the director"
        assert all(left[web] != before[web] for web in ("lvs-web1", "lvs-web2", "lvs-web3")), left

        proc = fault_run.start("playbooks/lvs-compare.yml", results, ["-e", "testbed_state=absent"])
        out, _ = proc.communicate(timeout=1500)
        assert proc.returncode == 0, out[-4000:]
        assert hosts_state() == before
    finally:
        on_director(f"ipvsadm -D {FOREIGN_SERVICE} 2>/dev/null; true")


def test_results_on_a_full_filesystem(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    sh("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount))
    try:
        proc = start_sweep(mount)
        out, _ = proc.communicate(timeout=1500)
        assert proc.returncode != 0
        assert "No space left on device" in out or "cannot write" in out, out[-4000:]
        assert fault_run.run_docs(mount, "lvs_compare")       # every stored document is whole (else ValueError)
    finally:
        sh("umount", str(mount), check=False)
