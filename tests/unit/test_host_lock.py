"""One run per host: the lock's rules, the module on the host, the owner the action plugin fills in."""
import importlib.util
import json
import os
import socket

import pytest
from ansible.module_utils.testbed_host_lock import (
    LockError,
    check_owner,
    describe,
    holder_alive,
    pid_start_of,
    refusal,
    takeover_note,
    token,
)
from conftest import ROOT
from helpers import run_module


def _load(kind):
    spec = importlib.util.spec_from_file_location(f"testbed_host_lock_{kind}",
                                                  os.path.join(ROOT, kind, "testbed_host_lock.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODULE = _load("library")
ACTION = _load("action_plugins")


def owner(**changes):
    base = {"experiment": "cpu_scaling", "controller": "ctl", "boot_id": "b1", "pid": 4242, "pid_start": 777,
            "started": "2026-12-02T09:00:00Z"}
    return dict(base, **changes)


def stat_text(pid, start):
    # /proc/<pid>/stat: "pid (comm) state ppid ... starttime" - the start time is field 22
    fields = ["S", "1"] + ["0"] * 17 + [str(start)] + ["0"] * 10
    return f"{pid} (ansible-playbook) " + " ".join(fields)


def test_the_owner_is_checked_and_told_in_words():
    with pytest.raises(LockError, match="the lock's owner has no boot_id"):
        check_owner(owner(boot_id=""))
    with pytest.raises(LockError, match="not numbers"):
        check_owner(owner(pid="x"))
    assert token(owner()) == "ctl/b1/4242/777"
    assert describe(owner(run="20261202T090000Z")) == (
        "run 20261202T090000Z of cpu_scaling (controller ctl, ansible-playbook pid 4242, since 2026-12-02T09:00:00Z)")
    assert describe(owner()).startswith("run (not yet planned) of cpu_scaling")
    assert "unreadable lock" in describe({"unreadable": "Expecting value"})


def test_the_refusal_names_the_other_run_and_how_to_go_on():
    sentence = refusal("web1", owner(run="R1"), "/var/lib/testbed/run.lock")
    assert sentence.startswith("web1 is in use by run R1 of cpu_scaling (controller ctl, ansible-playbook pid 4242")
    assert "one run per host" in sentence and "remove /var/lib/testbed/run.lock on web1 and run again" in sentence
    assert takeover_note("web1", owner(run="R1")).startswith("web1: took over the lock of run R1 of cpu_scaling")


def test_the_refusal_of_a_results_directory_names_it_and_another_way():
    path = "results/cpu_scaling/.run.lock"
    sentence = refusal("localhost", owner(run="R1"), path, subject="the results directory results/cpu_scaling")
    assert sentence.startswith("the results directory results/cpu_scaling is in use by run R1 of cpu_scaling")
    assert "one run per host" not in sentence
    assert "-e testbed_results_dir=" in sentence and f"remove {path} on localhost and run again" in sentence


def test_whether_the_holder_still_runs():
    me = owner(pid=1, pid_start=1)
    holder = owner()
    assert pid_start_of(stat_text(4242, 777)) == 777
    assert pid_start_of("garbage") is None and pid_start_of(None) is None
    # this controller, this boot: by its process and start time
    assert holder_alive(holder, me, stat_text(4242, 777)) is True
    assert holder_alive(holder, me, None) is False                     # the process is gone
    assert holder_alive(holder, me, stat_text(4242, 900)) is False     # its pid went to a later process
    # this controller after a reboot: gone; another controller: cannot tell
    assert holder_alive(owner(boot_id="b0"), me, stat_text(4242, 777)) is False
    assert holder_alive(owner(controller="other"), me, None) is None
    assert holder_alive({"unreadable": "x"}, me, None) is None


def lock(tmp_path, state="present", who=None, takeover=None, check=False):
    args = {"path": str(tmp_path / "testbed" / "run.lock"), "state": state, "owner": who or owner()}
    if takeover:
        args["takeover"] = takeover
    if check:
        args["_ansible_check_mode"] = True
    return run_module(MODULE, args)


def test_take_keep_update_and_release(tmp_path):
    path = tmp_path / "testbed" / "run.lock"
    failed, out = lock(tmp_path)
    assert not failed and out["taken"] and out["changed"] and out["held_by"] is None
    assert json.loads(path.read_text()) == owner()
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    # the same run again: kept, unchanged; with its run id: updated
    assert lock(tmp_path)[1]["changed"] is False
    failed, out = lock(tmp_path, who=owner(run="R1"))
    assert out["taken"] and out["changed"] and json.loads(path.read_text())["run"] == "R1"
    failed, out = lock(tmp_path, state="absent", who=owner(run="R1"))
    assert out["changed"] and out["taken"] and not path.exists()
    assert lock(tmp_path, state="absent")[1]["changed"] is False


def test_the_lock_is_the_only_file_it_leaves(tmp_path):
    # the guard of the compare-and-replace is flock(2) on the directory: no file of its own beside the lock
    lock(tmp_path)
    assert os.listdir(tmp_path / "testbed") == ["run.lock"]
    lock(tmp_path, state="absent")
    assert os.listdir(tmp_path / "testbed") == []


def test_another_runs_lock_is_never_taken_or_removed(tmp_path):
    path = tmp_path / "testbed" / "run.lock"
    lock(tmp_path, who=owner(pid=1, run="R0"))
    before = path.read_text()
    failed, out = lock(tmp_path)
    assert not failed and out["taken"] is False and out["changed"] is False
    assert out["held_by"]["run"] == "R0"
    failed, out = lock(tmp_path, state="absent")
    assert out["changed"] is False and out["held_by"]["run"] == "R0"
    # a takeover names the owner it replaces: the wrong one changes nothing
    assert lock(tmp_path, takeover="ctl/b1/2/777")[1]["taken"] is False
    assert path.read_text() == before
    failed, out = lock(tmp_path, takeover=token(owner(pid=1)))
    assert out["taken"] and out["changed"] and out["replaced"]["run"] == "R0"
    assert json.loads(path.read_text()) == owner()


def test_an_unreadable_lock_is_another_runs(tmp_path):
    (tmp_path / "testbed").mkdir()
    (tmp_path / "testbed" / "run.lock").write_text("{not json")
    failed, out = lock(tmp_path)
    assert out["taken"] is False and "unreadable" in out["held_by"]


def test_check_mode_writes_nothing(tmp_path):
    failed, out = lock(tmp_path, check=True)
    assert out["changed"] and out["taken"]
    assert not (tmp_path / "testbed").exists()


def test_a_bad_owner_is_one_sentence(tmp_path):
    failed, out = lock(tmp_path, who={"experiment": "x"})
    assert failed and out["msg"].startswith("testbed_host_lock: the lock's owner has no controller, boot_id, pid")


def test_the_controller_owner_is_this_process_parent():
    me = ACTION.controller_owner("cpu_scaling", run="R9")
    assert me["pid"] == os.getppid() and me["controller"] == socket.gethostname()
    assert me["run"] == "R9" and me["experiment"] == "cpu_scaling"
    with open(f"/proc/{os.getppid()}/stat") as handle:
        assert me["pid_start"] == pid_start_of(handle.read())
    with open("/proc/sys/kernel/random/boot_id") as handle:
        assert me["boot_id"] == handle.read().strip()
    # the owner of a live process is alive, by the rules the action plugin applies
    with open(f"/proc/{me['pid']}/stat") as handle:
        assert holder_alive(me, dict(me, pid=1), handle.read()) is True
