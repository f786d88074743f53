"""The leftover mechanism for real on localhost (local connection, no lab): module testbed_procs and
filter procs_record_argv through ansible-playbook (tests/integration/procs_leftovers.yml).

An interrupted run leaves two recorded ``sleep 300`` (one detached by the module, one under
Ansible's async wrapper that recorded itself) and a ``ping`` load started through testbed_workload
with ``testbed_workload_record``; a short recorded ping and a short LVS client load (launched by
roles/lvs_client with ``lvs_client_record_dir``) run to the end and leave no record. The operator
runs an identical ``sleep 300`` and ``ping`` that were never recorded. The stop step in check mode
kills nothing; for real it stops exactly the three recorded ones and removes their records; the
operator's processes are alive afterwards.
"""
import json
import os
import signal
import subprocess

from playbook_run import assert_ok, play, wait_until

PLAYBOOK = "tests/integration/procs_leftovers.yml"
PING = ["ping", "-c", "300", "-i", "1", "127.0.0.1"]


def state(pid):
    """The process state letter (None: no such process)."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def alive(pid):
    return state(pid) not in (None, "Z", "X")


def cmdline(pid):
    """The process's arguments (None: no such process)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return [part.decode() for part in handle.read().split(b"\x00")[:-1]]
    except OSError:
        return None


def test_only_the_recorded_processes_are_stopped(tmp_path):
    procs_dir, out = tmp_path / "procs", tmp_path / "out.json"
    runner, workdir = tmp_path / "fake-httperf-run", tmp_path / "lvs"
    # a stand-in for roles/lvs_client's runner (launched through python3): its document to --result
    runner.write_text("import os, sys, time\ntime.sleep(1)\nresult = sys.argv[sys.argv.index('--result') + 1]\n"
                      "open(result + '.part', 'w').write('{}\\n')\nos.replace(result + '.part', result)\n")
    runner.chmod(0o755)
    workdir.mkdir(mode=0o700)
    extra = ["-e", f"procs_dir={procs_dir}", "-e", f"procs_out={out}", "-e", f"procs_runner={runner}",
             "-e", f"procs_lvs_workdir={workdir}"]
    operator = subprocess.Popen(["sleep", "300"], start_new_session=True)
    operator_ping = subprocess.Popen(PING, start_new_session=True, stdout=subprocess.DEVNULL)
    ours = []
    try:
        assert_ok(play(PLAYBOOK, *extra, "-e", "procs_step=start"))
        started = json.loads(out.read_text())
        records = {p.name: json.loads(p.read_text()) for p in procs_dir.glob("*.json")}
        # the short ping and the LVS load ran to the end: their records are gone (the LVS load's was there)
        assert sorted(records) == ["async_sleep.json", "detached_sleep.json", "ping_load.json"]
        assert (workdir / "p1.json").read_text().strip() == "{}"
        ours = [records["detached_sleep.json"]["pid"], records["async_sleep.json"]["pid"],
                records["ping_load.json"]["pid"]]
        assert started["detached"]["pid"] == ours[0]
        assert all(alive(pid) for pid in ours) and operator.pid not in ours
        # the recorded pid is the program itself: the recording shell writes its record, then execs it
        # (same pid), so the program's command line comes a moment after the record
        assert wait_until(lambda: cmdline(ours[1]) == ["sleep", "300"]), cmdline(ours[1])
        assert wait_until(lambda: cmdline(ours[2]) == PING), cmdline(ours[2])

        assert_ok(play(PLAYBOOK, *extra, "-e", "procs_step=stop"))
        report = json.loads(out.read_text())
        # check mode: both reported, nothing signalled (the play's kill -0 passed), nothing removed
        assert sorted(s["pid"] for s in report["check"]["stopped"]) == sorted(ours), report["check"]
        assert report["check"]["removed"] == [] and report["check"]["msg"].startswith("would stop 3 left over")
        # for real: exactly those two, by name and pid; then nothing is left
        assert sorted((s["name"], s["pid"]) for s in report["real"]["stopped"]) == sorted(
            [("detached_sleep", ours[0]), ("async_sleep", ours[1]), ("ping_load", ours[2])])
        assert sorted(report["real"]["removed"]) == ["async_sleep", "detached_sleep", "ping_load"]
        assert report["again"]["stopped"] == [] and report["again"]["changed"] is False
        # stopped: SIGTERM, SIGKILL after the grace period; their parents reap them when they get to it
        assert wait_until(lambda: not any(alive(pid) for pid in ours)), [state(pid) for pid in ours]
        assert alive(operator.pid), "the operator's identical sleep 300 was killed"
        assert alive(operator_ping.pid), "the operator's identical ping was killed"
        assert not list(procs_dir.glob("*.json"))
    finally:
        for pid in ours:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        for proc in (operator, operator_ping):
            proc.kill()
            proc.wait(timeout=10)
