"""testbed_workload's one-call entry point ``load`` (action plugin testbed_load) runs for real on loopback
and gives what the task-by-task entry point gives: the same result keys, argv and parse, the record
forgotten, the CPU window sampled beside the load, xz's rate from the wall time, a load past its
deadline stopped and marked, a background run collected while it runs stopped by its record, a client
that hangs outside the tool's timeout killed at the command's own bound. The verdicts hold on any
machine: the overrun asks 30 s of a 2-s deadline, the client 900 s of a 6-s bound, the background
ping 31 s of a 1-s wait (and ended or not, its record must be gone)."""

import json
from pathlib import Path

import pytest
from playbook_run import assert_ok, play


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("load")
    (base / "procs").mkdir()
    (base / "input.txt").write_text("testbed " * 4096)
    # a docker client that never returns (a daemon that hangs): the load's own timeout runs inside it
    (base / "bin").mkdir()
    fake = base / "bin" / "docker"
    fake.write_text("#!/bin/sh\nexec sleep 900\n")
    fake.chmod(0o755)
    out = base / "out.json"
    proc = play("tests/integration/workload_load.yml", "-e", f"load_out={out}", "-e", f"load_dir={base}",
                inventory=None, timeout=600)
    assert_ok(proc)
    return json.loads(out.read_text()), base


def test_one_call_gives_what_the_tasks_give(runs):
    data, base = runs
    one, tasks = data["load_ping"], data["tasks_ping"]
    assert set(one) == set(tasks)
    assert one["argv"] == tasks["argv"] and one["argv"][:8] == ["env", "LC_ALL=C", "LANG=C", "timeout", "-k", "3", "63", "ping"]
    assert one["rc"] == tasks["rc"] == 0 and one["overran"] is False and not one["watchdog"]
    assert one["parsed"]["valid"] is True and one["parsed"]["metrics"]["received"] == 5
    assert one["parsed"]["metrics"].keys() == tasks["parsed"]["metrics"].keys()
    assert one["duration_s"] > 0.5 and one["error"] is None and one["host"] == "localhost"
    assert list((base / "procs").iterdir()) == [], "a record was left"


def test_the_cpu_window_is_sampled_beside_the_load(runs):
    data, _ = runs
    cpu = data["load_cpu"]
    assert cpu["valid"] is True and cpu["metrics"]["samples"] >= 2
    assert cpu["details"]["warmup_s"] == 0.1 and 0 <= cpu["metrics"]["cpu_busy_mean_pct"] <= 100


def test_xz_reads_stderr_and_its_wall_time(runs):
    data, _ = runs
    xz = data["load_xz"]
    assert xz["output"] == "stderr" and xz["output_text"] and xz["parsed"]["valid"] is True
    assert xz["argv"][7:10] == ["sh", "-c", 'exec "$0" "$@" > /dev/null']
    assert xz["parsed"]["details"]["wall_s"] == pytest.approx(xz["duration_s"])


def test_a_load_past_its_deadline_is_stopped_and_marked(runs):
    data, _ = runs
    over = data["overrun"]
    assert over["deadline_s"] == 2 and over["rc"] in (124, 137) and over["overran"] is True
    assert over["parsed"] is None and "->" in over["error"]


def test_a_client_that_hangs_outside_the_timeout_is_killed_at_its_bound(runs):
    data, _ = runs
    hung = data["hung"]
    assert hung["rc"] == 137 and hung["overran"] is True and hung["parsed"] is None, hung
    assert hung["hung"].startswith("the command had not returned 6 s after it started and was killed"), hung["hung"]
    assert "docker, outside the tool's own timeout" in hung["hung"]
    assert data["overrun"]["hung"] is None and data["load_ping"]["hung"] is None and data["tasks_ping"]["hung"] is None


def test_a_background_run_collected_while_it_runs_is_stopped_by_its_record(runs):
    # tasks_from wait past wait_s: the command's own `after` (workload_command) stops the recorded ping and
    # removes its record; a wrong `after` would leave the record (the first test: the procs folder is empty)
    data, base = runs
    bg = data["background"]
    assert bg["argv"][:7] == ["env", "LC_ALL=C", "LANG=C", "timeout", "-k", "3", "153"]
    assert bg["argv"][-6:] == ["ping", "-c", "31", "-i", "1", "127.0.0.1"]
    assert not (base / "procs" / "ping_background.json").exists()
    alive = []
    for proc in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = proc.read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[:3] == [b"ping", b"-c", b"31"]:
            alive.append(proc.parent.name)
    assert not alive, f"the background ping still runs: pids {alive}"
