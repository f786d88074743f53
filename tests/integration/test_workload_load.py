"""testbed_workload's one-call entry point ``load`` (action plugin testbed_load) runs for real on loopback
and gives what the task-by-task entry point gives: the same result keys, argv and parse, the record
forgotten, the CPU window sampled beside the load, xz's rate from the wall time, a load past its
deadline stopped and marked. The verdicts hold on any machine: the overrun asks 30 s of a 2-s deadline."""

import json

import pytest
from playbook_run import assert_ok, play


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("load")
    (base / "procs").mkdir()
    (base / "input.txt").write_text("testbed " * 4096)
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
