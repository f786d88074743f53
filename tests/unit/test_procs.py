"""The testbed's process records (module_utils/testbed_procs.py) and the testbed_procs module.

The pure functions decide on synthetic /proc snapshots (a record whose PID is gone, taken over by
another process, a live match); the stop and the module run against real ``sleep`` processes of
this host, each started by the test: a recorded one and an identical one never recorded.
"""
import json
import os
import signal
import subprocess
import threading
import time

import pytest
import testbed_procs as procs_module
from ansible.module_utils.testbed_procs import (
    ProcsError,
    check_name,
    cmdline_sha256,
    descendants,
    judge,
    make_record,
    parse_cmdline,
    parse_stat,
    plan_stop,
    read_proc,
    read_records,
    record_pid,
    snapshot,
    started_before,
    stop,
    wait_exec,
    write_record,
)
from helpers import run_module

# A real line of /proc/<pid>/stat (bash), and one whose command name holds spaces and parentheses.
STAT = ("4242 (bash) S 4200 4242 4242 34816 4250 4194304 1385 6209 0 2 3 1 8 4 20 0 1 0 123456 9039872 "
        "1226 18446744073709551615 1 1 0 0 0 0 65536 3670020 1266777851 0 0 0 17 1 0 0 0 0 0")
STAT_ODD = STAT.replace("(bash)", "(a (b) c)")


def proc(pid, starttime, cmdline, ppid=1, state="S"):
    return {"pid": pid, "ppid": ppid, "pgid": pid, "state": state, "starttime": starttime, "cmdline": cmdline,
            "comm": cmdline[0][:15]}


RECORD = {"name": "fio", "pid": 4100, "starttime": 777, "cmdline": ["fio", "--name=x"], "boot_id": "b1"}


def test_parse_stat_reads_field_22_after_the_last_parenthesis():
    assert parse_stat(STAT) == {"pid": 4242, "comm": "bash", "state": "S", "ppid": 4200, "pgid": 4242,
                                "starttime": 123456}
    odd = parse_stat(STAT_ODD)
    assert (odd["comm"], odd["starttime"], odd["ppid"]) == ("a (b) c", 123456, 4200)


@pytest.mark.parametrize("bad", ["", "4242 bash S 1", "4242 (bash) S 1 2 3", STAT.replace(" 123456 ", " x ")])
def test_parse_stat_refuses_what_is_not_a_stat_line(bad):
    with pytest.raises(ProcsError):
        parse_stat(bad)


def test_parse_cmdline_splits_on_nul():
    assert parse_cmdline(b"sleep\x00300\x00") == ["sleep", "300"]
    assert parse_cmdline(b"") == []
    assert parse_cmdline(b"a b\x00\xff\x00") == ["a b", "\udcff"]


@pytest.mark.parametrize("name", ["", ".hidden", "a/b", "../x", "x" * 101, None])
def test_check_name_refuses_what_is_not_a_file_name(name):
    with pytest.raises(ProcsError):
        check_name(name)


def test_judge_a_live_match():
    assert judge(RECORD, proc(4100, 777, ["fio", "--name=x"]), "b1")[0] == "alive"


def test_judge_a_pid_that_is_gone():
    assert judge(RECORD, None, "b1") == ("gone", "no process 4100")
    assert judge(RECORD, proc(4100, 777, ["fio", "--name=x"], state="Z"), "b1")[0] == "gone"


def test_judge_a_pid_reused_by_another_process():
    verdict, reason = judge(RECORD, proc(4100, 999, ["fio", "--name=x"]), "b1")
    assert verdict == "reused" and "another process" in reason     # same command, other start time
    verdict, reason = judge(RECORD, proc(4100, 777, ["fio", "--name=y"]), "b1")
    assert verdict == "reused" and "another command" in reason     # same start time, other command


def test_judge_a_record_of_an_earlier_boot_is_gone_even_if_everything_else_matches():
    assert judge(RECORD, proc(4100, 777, ["fio", "--name=x"]), "b2")[0] == "gone"


def test_descendants_parents_first():
    procs = {10: proc(10, 1, ["sh"]), 11: proc(11, 2, ["cp"], ppid=10), 12: proc(12, 3, ["x"], ppid=11),
             13: proc(13, 4, ["y"], ppid=1)}
    assert descendants(10, procs) == [11, 12]
    assert descendants(13, procs) == []


def test_plan_stop_targets_only_the_live_match_and_its_children():
    records = [dict(RECORD), dict(RECORD, name="gone", pid=4200), dict(RECORD, name="reused", pid=4300)]
    procs = {4100: proc(4100, 777, ["fio", "--name=x"]), 4101: proc(4101, 780, ["fio", "--name=x"], ppid=4100),
             4300: proc(4300, 5, ["fio", "--name=x"]), 4400: proc(4400, 777, ["fio", "--name=x"])}
    plan = {entry["name"]: entry for entry in plan_stop(records, procs, "b1")}
    assert plan["fio"]["verdict"] == "alive" and plan["fio"]["targets"] == [[4100, 777], [4101, 780]]
    assert plan["gone"]["verdict"] == "gone" and plan["gone"]["targets"] == []
    assert plan["reused"]["verdict"] == "reused" and plan["reused"]["targets"] == []
    # the operator's identical process (4400) is in no plan: only records are looked at
    assert all(4400 not in [pid for pid, _ in entry["targets"]] for entry in plan.values())


def test_plan_stop_with_no_record_stops_nothing():
    assert plan_stop([], {4100: proc(4100, 777, ["fio"])}, "b1") == []


def test_plan_stop_never_targets_the_process_running_it():
    procs = {50: proc(50, 7, ["python3"]), 51: proc(51, 8, ["python3", "stop"], ppid=50)}
    plan = plan_stop([dict(RECORD, pid=50, starttime=7, cmdline=["python3"])], procs, "b1", own_pid=51)
    assert plan[0]["verdict"] == "skipped" and plan[0]["targets"] == []


def test_started_before_tells_the_pidfile_writer_from_a_later_process():
    # booted at 1000 s, 100 ticks a second: started at 1000 + 50 = 1050 s
    assert started_before(5000, 100, 1000, mtime=1050.2)
    assert started_before(5000, 100, 1000, mtime=1049.5)            # within the btime rounding
    assert not started_before(5000, 100, 1000, mtime=1040.0)        # started 10 s after the file was written


def _fake_proc(root, pid, cmdline):
    (root / str(pid)).mkdir(parents=True, exist_ok=True)
    (root / str(pid) / "stat").write_text(STAT.replace("4242 (bash)", f"{pid} (netserver)"))
    (root / str(pid) / "cmdline").write_bytes(b"".join(part.encode() + b"\0" for part in cmdline))


def test_a_record_waits_for_the_programs_command_line(tmp_path):
    """Popen can return before the kernel set the new program's arguments (an empty cmdline): the
    record waits for them, so it names the program and a later stop finds it alive (it had judged the
    running netserver "reused" and left it running)."""
    root = tmp_path / "proc"
    _fake_proc(root, 4300, [])
    (tmp_path / "boot_id").write_text("b1")
    sleeps = []

    def sleep(seconds):  # the exec completes while the recorder waits
        sleeps.append(seconds)
        _fake_proc(root, 4300, ["netserver", "-D", "-p", "12865"])

    proc = wait_exec(4300, proc_root=str(root), sleep=sleep)
    assert proc["cmdline"] == ["netserver", "-D", "-p", "12865"] and sleeps
    record = make_record("netserver", proc, "b1")
    assert judge(record, proc, "b1")[0] == "alive"
    # a record taken at the empty moment would have called the same process "reused"
    assert judge(make_record("netserver", dict(proc, cmdline=[]), "b1"), proc, "b1")[0] == "reused"


def test_record_pid_names_the_program_even_when_it_is_read_at_the_empty_moment(tmp_path):
    root = tmp_path / "proc"
    _fake_proc(root, 4302, [])
    timer = threading.Timer(0.1, _fake_proc, (root, 4302, ["netserver", "-D"]))
    timer.start()
    try:
        record = record_pid(str(tmp_path / "records"), "netserver", 4302, proc_root=str(root))
    finally:
        timer.join()
    assert record["cmdline"] == ["netserver", "-D"]


def test_a_process_without_a_command_line_is_not_recorded(tmp_path):
    root = tmp_path / "proc"
    _fake_proc(root, 4301, [])
    ticks = iter(range(100))
    with pytest.raises(ProcsError, match="4301 has no command line"):
        wait_exec(4301, timeout_s=3, proc_root=str(root), clock=lambda: next(ticks), sleep=lambda _s: None)
    assert wait_exec(4399, proc_root=str(root)) is None


def test_read_records_names_a_broken_record_and_skips_other_files(tmp_path):
    write_record(str(tmp_path), make_record("good", proc(4100, 777, ["fio"]), "b1"))
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "nopid.json").write_text(json.dumps({"starttime": 1}))
    (tmp_path / "server.pid").write_text("4100")
    records, problems = read_records(str(tmp_path))
    assert [r["name"] for r in records] == ["good"]
    assert len(problems) == 2 and any("bad.json" in p for p in problems) and any("nopid.json" in p for p in problems)
    assert read_records(str(tmp_path / "missing")) == ([], [])


# --- real processes ---------------------------------------------------------------------------------------


@pytest.fixture()
def sleepers():
    """Start ``sleep`` processes (new sessions, as the testbed's detached ones); kill what is left afterwards."""
    started = []

    def start(seconds="300"):
        child = subprocess.Popen(["sleep", seconds], start_new_session=True)
        started.append(child)
        # Popen returns after the fork; until the child has exec'd, its /proc cmdline is the
        # parent's or empty (seen on a loaded machine): wait until it is sleep's, bounded.
        for _ in range(500):
            try:
                with open("/proc/%d/cmdline" % child.pid, "rb") as handle:
                    if handle.read().split(b"\0")[0] == b"sleep":
                        break
            except OSError:
                pass
            time.sleep(0.01)
        return child

    yield start
    for child in started:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=10)


def running(child):
    """Alive and not a zombie (the test's own child stays a zombie until waited for)."""
    info = read_proc(child.pid)
    return info is not None and info["state"] not in ("Z", "X")


def wait_for(condition, what, deadline_s=10):
    """Poll ``condition()`` until it returns something true; the deadline only guards against a hang."""
    deadline = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out waiting until " + what
        time.sleep(0.01)


def children_running(pid, cmdline):
    """The pids of ``pid``'s children that have exec'd ``cmdline`` (seen in /proc)."""
    return [p for p, info in snapshot().items() if info["ppid"] == pid and info["cmdline"] == cmdline]


def test_stop_kills_the_recorded_sleep_and_not_an_identical_one(tmp_path, sleepers):
    ours, operators = sleepers(), sleepers()
    assert record_pid(str(tmp_path), "sleeper", ours.pid, "toy")["cmdline"] == ["sleep", "300"]
    result = stop(str(tmp_path), grace_s=5)
    assert [(s["name"], s["pid"], s["signal"]) for s in result["stopped"]] == [("sleeper", ours.pid, "TERM")]
    ours.wait(timeout=10)
    assert ours.returncode == -signal.SIGTERM
    assert running(operators)
    assert result["removed"] == ["sleeper"] and not (tmp_path / "sleeper.json").exists()


def test_stop_leaves_a_reused_pid_alone_and_forgets_the_record(tmp_path, sleepers):
    other = sleepers()
    # a record of an earlier process that held this PID: same cmdline, another start time
    info = read_proc(other.pid)
    write_record(str(tmp_path), make_record("sleeper", dict(info, starttime=info["starttime"] - 1)))
    result = stop(str(tmp_path), grace_s=1)
    assert result["stopped"] == [] and [r["name"] for r in result["reused"]] == ["sleeper"]
    assert running(other) and result["removed"] == ["sleeper"]


def test_stop_sends_kill_after_the_grace_period(tmp_path, sleepers):
    stubborn = subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 300 & wait"], start_new_session=True)
    try:
        # the sh has set its trap and forked its sleep (which has exec'd) before it is recorded
        wait_for(lambda: children_running(stubborn.pid, ["sleep", "300"]), "the sh has started its sleep")
        record_pid(str(tmp_path), "stubborn", stubborn.pid)
        result = stop(str(tmp_path), grace_s=0.5)
        assert result["stopped"][0]["signal"] == "KILL" and len(result["stopped"][0]["pids"]) == 2
        stubborn.wait(timeout=10)
        child = result["stopped"][0]["pids"][1]
        for _ in range(100):      # SIGKILL is delivered at once, the exit takes the scheduler a moment
            info = read_proc(child)
            if info is None or info["state"] in ("Z", "X"):
                break
            time.sleep(0.02)
        assert info is None or info["state"] in ("Z", "X")   # the sleep below the sh went with it
    finally:
        if stubborn.poll() is None:
            os.killpg(stubborn.pid, signal.SIGKILL)
            stubborn.wait(timeout=10)


# --- the module -------------------------------------------------------------------------------------------


def test_module_check_mode_reports_and_kills_nothing(tmp_path, sleepers):
    ours = sleepers()
    record_pid(str(tmp_path), "sleeper", ours.pid)
    failed, result = run_module(procs_module, {"dir": str(tmp_path), "_ansible_check_mode": True})
    assert not failed and result["changed"] is True
    assert [s["pid"] for s in result["stopped"]] == [ours.pid] and result["removed"] == []
    assert result["msg"].startswith("would stop 1 left over: sleeper (pid %d)" % ours.pid)
    assert running(ours) and (tmp_path / "sleeper.json").exists()


def test_module_nothing_recorded_nothing_stopped(tmp_path, sleepers):
    other = sleepers()
    failed, result = run_module(procs_module, {"dir": str(tmp_path)})
    assert not failed and result["changed"] is False and result["stopped"] == []
    assert result["msg"] == "nothing recorded was left running" and running(other)


def test_module_records_from_a_pidfile_and_refuses_a_later_process(tmp_path, sleepers):
    ours = sleepers()
    pidfile = tmp_path / "x.pid"
    pidfile.write_text("%d\n" % ours.pid)
    failed, result = run_module(procs_module, {"dir": str(tmp_path), "state": "recorded", "name": "x",
                                               "pidfile": str(pidfile)})
    assert not failed and result["pid"] == ours.pid and result["record"]["cmdline"] == ["sleep", "300"]
    # a pid file written long before the process holding that pid started: not its writer
    os.utime(pidfile, (time.time() - 3600, time.time() - 3600))
    failed, result = run_module(procs_module, {"dir": str(tmp_path), "state": "recorded", "name": "y",
                                               "pidfile": str(pidfile)})
    assert not failed and result["record"] is None and "not its writer" in result["msg"]
    assert not (tmp_path / "y.json").exists()


def test_module_starts_detached_and_records(tmp_path):
    failed, result = run_module(procs_module, {"dir": str(tmp_path), "state": "started", "name": "s",
                                               "argv": ["sleep", "300"]})
    assert not failed, result
    try:
        assert result["record"]["cmdline"] == ["sleep", "300"]
        assert read_proc(result["pid"])["pgid"] == result["pid"]          # its own session and group
        failed, result2 = run_module(procs_module, {"dir": str(tmp_path), "names": ["s"], "grace_s": 5})
        assert [s["pid"] for s in result2["stopped"]] == [result["pid"]]
    finally:
        try:
            os.kill(result["pid"], signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(result["pid"], 0)
        except OSError:
            pass


def test_module_refuses_a_bad_name(tmp_path):
    failed, result = run_module(procs_module, {"dir": str(tmp_path), "state": "recorded", "name": "../x",
                                               "pid": os.getpid()})
    assert failed and "record name" in result["msg"]


# --- the project's modules that record their own process ---------------------------------------------------


def test_rebuild_poller_records_itself_while_it_runs_and_forgets_after(tmp_path, monkeypatch):
    import storage_rebuild_poll
    from conftest import FIXTURES
    whole = os.path.join(FIXTURES, "zpool", "openzfs-2.1.11", "resilvered-replace-P.txt")
    record = tmp_path / "procs" / "rebuild_poll.json"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "zpool").write_text(f"#!/bin/sh\ncp {record} {tmp_path}/seen.json\ncat {whole}\n")
    (bin_dir / "zpool").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    failed, out = run_module(storage_rebuild_poll, {"system": "zfs", "pool": "tank", "interval_s": 0.05,
                                                    "proc_record": str(record)})
    assert not failed, out
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["pid"] == os.getpid() and seen["starttime"] == read_proc(os.getpid())["starttime"]
    assert not record.exists()


def test_fileset_writer_records_itself_while_it_writes(tmp_path, monkeypatch):
    import storage_fileset
    record = tmp_path / "procs" / "writer.json"
    seen = []
    real = storage_fileset.write_fileset

    def spy(*args, **kwargs):
        seen.append(json.loads(record.read_text())["pid"])
        return real(*args, **kwargs)

    monkeypatch.setattr(storage_fileset, "write_fileset", spy)
    failed, out = run_module(storage_fileset, {"path": str(tmp_path / "set"), "total_bytes": 4096, "count": 2,
                                               "proc_record": str(record)})
    assert not failed, out
    assert seen == [os.getpid()] and not record.exists()


# --- a command that records itself (the shell prefix, no Python on the host) ------------------------------


def test_a_command_started_through_the_shell_prefix_records_itself_and_is_stopped(tmp_path, sleepers):
    from testbed_procs_record import procs_record_argv as filter_argv  # filter_plugins/testbed_procs_record.py
    record = tmp_path / "procs" / "sleeper.json"
    ours = subprocess.Popen(filter_argv(str(record)) + ["sleep", "300"], start_new_session=True)
    time.sleep(0.05)   # the start time counts clock ticks (1/100 s): the operator's sleep starts in a later one
    operators = sleepers()
    try:
        wait_for(record.exists, "the prefix has written its record")
        written = json.loads(record.read_text())
        assert written["pid"] == ours.pid and written["how"] == "sh" and "cmdline" not in written
        # the prefix execs the command once the record is written: same pid, sleep's cmdline
        wait_for(lambda: (read_proc(ours.pid) or {}).get("cmdline") == ["sleep", "300"], "the prefix has exec'd")
        assert read_proc(ours.pid)["cmdline"] == ["sleep", "300"]           # exec'd: same pid
        assert written["starttime"] == read_proc(ours.pid)["starttime"]
        records, problems = read_records(str(tmp_path / "procs"))
        assert problems == [] and judge(records[0], read_proc(ours.pid), boot_id_now())[0] == "alive"
        # the operator's identical sleep: another pid; with the record's pid and sha but its own start time
        assert judge(dict(records[0], pid=operators.pid), read_proc(operators.pid), boot_id_now())[0] == "reused"
        result = stop(str(tmp_path / "procs"), grace_s=5)
        assert [s["pid"] for s in result["stopped"]] == [ours.pid]
        ours.wait(timeout=10)
        assert running(operators)
    finally:
        if ours.poll() is None:
            ours.kill()
            ours.wait(timeout=10)


def test_cmdline_sha_tells_another_command():
    record = {"name": "x", "pid": 9, "starttime": 5, "cmdline_sha256": cmdline_sha256(["fio", "--a"])}
    assert judge(record, proc(9, 5, ["fio", "--a"]))[0] == "alive"
    assert judge(record, proc(9, 5, ["fio", "--b"]))[0] == "reused"


@pytest.mark.parametrize("bad", ["relative/x.json", "/abs/x.txt", "/abs/.x.json"])
def test_record_argv_refuses_a_bad_path(bad):
    from ansible.errors import AnsibleFilterError
    from testbed_procs_record import procs_record_argv as filter_argv
    with pytest.raises(AnsibleFilterError):
        filter_argv(bad)


def boot_id_now():
    from ansible.module_utils.testbed_procs import boot_id
    return boot_id()


# --- the shell stop (hosts and containers without Python: the NFV tool image) ------------------------------


def test_shell_stop_stops_the_recorded_only(tmp_path, sleepers):
    from ansible.module_utils.testbed_procs import parse_stop_output, record_argv, stop_argv
    procs = tmp_path / "procs"
    ours = subprocess.Popen(record_argv(str(procs / "load.json")) + ["sleep", "300"], start_new_session=True)
    operator = sleepers()
    try:
        wait_for((procs / "load.json").exists, "the prefix has written its record")
        wait_for(lambda: (read_proc(ours.pid) or {}).get("cmdline") == ["sleep", "300"], "the prefix has exec'd")
        # a record whose pid another process took over (the operator's sleep, another start time) ...
        reused = json.loads((procs / "load.json").read_text())
        reused.update(pid=operator.pid, starttime=reused["starttime"] - 1)
        (procs / "old.json").write_text(json.dumps(reused))
        # ... one whose process is gone, and one the shell cannot judge (no sha256: a Python-written record)
        (procs / "ended.json").write_text(json.dumps(dict(reused, pid=2 ** 22 + 7)))
        write_record(str(procs), make_record("pyrec", read_proc(operator.pid)))
        run = subprocess.run(stop_argv(str(procs), grace_s=5), capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        result = parse_stop_output(run.stdout)
        assert result["stopped"] == [{"name": "load", "pid": ours.pid, "signal": "TERM"}], run.stdout
        assert result["reused"] == [{"name": "old", "pid": operator.pid}]
        assert result["gone"] == [{"name": "ended", "pid": 2 ** 22 + 7}]
        assert len(result["skipped"]) == 1 and "pyrec" in result["skipped"][0]
        ours.wait(timeout=10)
        assert running(operator)
        assert sorted(p.name for p in procs.glob("*.json")) == ["pyrec.json"]
        # by name: only that record is looked at
        run = subprocess.run(stop_argv(str(procs), ["nothing"]), capture_output=True, text=True, timeout=60)
        assert run.returncode == 0 and run.stdout == ""
    finally:
        if ours.poll() is None:
            ours.kill()
            ours.wait(timeout=10)


def test_shell_stop_with_no_record_stops_nothing(tmp_path, sleepers):
    from ansible.module_utils.testbed_procs import stop_argv
    operator = sleepers()
    run = subprocess.run(stop_argv(str(tmp_path / "none")), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout == "" and running(operator)


def test_parse_stop_output_and_stop_argv():
    from ansible.module_utils.testbed_procs import parse_stop_output, stop_argv
    out = "stopped a 10 KILL\ngone b 11\nreused c 12\nskipped d (no pid, start time or cmdline sha256)\nnoise\n"
    assert parse_stop_output(out) == {"stopped": [{"name": "a", "pid": 10, "signal": "KILL"}],
                                      "gone": [{"name": "b", "pid": 11}], "reused": [{"name": "c", "pid": 12}],
                                      "skipped": ["skipped d (no pid, start time or cmdline sha256)"]}
    assert stop_argv("/d", ["x"], 3)[3:] == ["/d", "3", "x"]
    with pytest.raises(ProcsError):
        stop_argv("rel")
    with pytest.raises(ProcsError):
        stop_argv("/d", ["../x"])
