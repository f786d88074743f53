"""The shared sweep skeleton end to end, through the worked example experiment.

playbooks/cpu-scaling.yml (roles/cpu_scaling on roles/testbed_sweep and
roles/testbed_workload) runs for real on localhost with short sysbench runs:
plan -> open the run -> points -> store -> report; a rerun measures nothing
and exits 0; --tags plan writes nothing; bad input stops before any point.
"""

import json
import os
import re
import sys

import playbook_run
import pytest
from playbook_run import assert_ok, exit_line, why

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)
SMALL = ['-e', '{"cpu_scaling_threads": [1, 2]}', '-e', 'cpu_scaling_duration_s=1', '-e', 'testbed_repetitions=2',
         '-e', 'cpu_scaling_max_prime=2000']


def play(results, *extra):
    return playbook_run.play("playbooks/cpu-scaling.yml", *extra, results=results)


def docs_of(results):
    return playbook_run.stored_paths(results, "cpu_scaling")


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    proc = play(results, *SMALL)
    assert_ok(proc)
    return results, proc


def test_every_point_is_measured_stored_and_reported(first_run):
    results, proc = first_run
    docs = [json.load(open(p)) for p in docs_of(results)]
    assert len(docs) == 4
    assert {(d["parameters"]["threads"], d["repetition"]) for d in docs} == {(1, 1), (2, 1), (1, 2), (2, 2)}
    for doc in docs:
        assert doc["valid"] is True, doc["reasons"]
        assert doc["metrics"]["events_per_s"] > 0 and doc["units"]["events_per_s"] == "1/s"
        assert doc["sources"]["sysbench"]["metrics"]["threads"] == doc["parameters"]["threads"]
        assert doc["environment"]["hosts"]["localhost"]["tools"]["sysbench"]
    run_dir = os.path.dirname(docs_of(results)[0])
    for name in ("report.md", "report.html", "results.csv", "summary.csv"):
        assert os.path.getsize(os.path.join(run_dir, name)) > 0
    assert "[4/4] native threads=2 rep 2: events_per_s" in proc.stdout
    assert re.search(r"Orchestration overhead: [0-9.]+ % .* s per point\)", " ".join(proc.stdout.split())), proc.stdout[-3000:]
    report = open(os.path.join(run_dir, "report.md")).read()
    assert re.search(r"Orchestration overhead of the last sweep: [0-9.]+ % \(4 points, .* [0-9.]+ s per point\)", " ".join(report.split())), report


def test_a_rerun_measures_nothing_and_changes_nothing(first_run):
    results, _ = first_run
    before = {p: os.path.getmtime(p) for p in docs_of(results)}
    proc = play(results, *SMALL)
    assert_ok(proc)
    assert "Nothing to do: every point of this run is measured." in proc.stdout
    assert {p: os.path.getmtime(p) for p in docs_of(results)} == before
    assert "TASK [testbed_sweep : Progress]" not in proc.stdout  # no point hook ran


def test_plan_only_writes_nothing(tmp_path):
    proc = play(tmp_path, *SMALL, "--tags", "plan")
    assert_ok(proc)
    assert "Plan: 4 points (1 variant × 2 parameter sets × 2 repetitions)" in proc.stdout
    assert "nothing was written" in proc.stdout
    assert not os.path.exists(os.path.join(str(tmp_path), "cpu_scaling"))


@pytest.mark.parametrize("extra, sentence", [
    (['-e', 'cpu_scaling_threads=2'], "cpu_scaling_threads must be a list of integers, got the string '2'"),
    (['-e', '{"cpu_scaling_threads": [0]}'], "cpu_scaling_threads item 1 must be at least 1, got 0"),
    (['-e', 'cpu_scaling_thread=4'], "unknown variable cpu_scaling_thread: did you mean cpu_scaling_threads?"),
    (['-e', 'testbed_state=gone'], "testbed_state is 'gone', which is not one of present, absent"),
    (['-e', 'testbed_state=absent'], "cpu_scaling has no remove hook (tasks/remove.yml)"),
])
def test_bad_input_stops_before_any_point(tmp_path, extra, sentence):
    proc = play(tmp_path, *extra)
    assert proc.returncode == 10, why(proc)
    assert exit_line(proc).startswith("Exit status 10 (refused): input refused")
    assert sentence in proc.stdout + proc.stderr
    assert not os.path.exists(os.path.join(str(tmp_path), "cpu_scaling"))
