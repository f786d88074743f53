"""Faults are not results: the shared sweep's fault path, end to end, without a lab.

tests/integration/roles/fault_toy is a test-only experiment whose "service"
breaks during the first attempt of one point: the health hook finds it broken,
the point is stored as a fault document (never a result), the recover hook
repairs the service, and the next pass measures the point again. When
recovery fails the playbook stops naming the component, after cleanup.
"""

import json
import os
import sys

import playbook_run
from playbook_run import assert_ok, exit_line, why

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)


def play(tmp_path, *extra):
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    roles = os.path.join(ROOT, "roles") + ":" + os.path.join(ROOT, "tests", "integration", "roles")
    return playbook_run.play("tests/integration/fault_toy.yml", "-e", f"fault_toy_dir={state}", *extra,
                             results=tmp_path / "results", env={"ANSIBLE_ROLES_PATH": roles}, timeout=300)


def docs(tmp_path):
    return playbook_run.stored_documents(tmp_path / "results", "fault_toy")


def test_a_fault_is_stored_as_such_recovered_and_measured_again(tmp_path):
    proc = play(tmp_path)
    assert_ok(proc)
    found = docs(tmp_path)
    assert set(found) == {"a__rep1", "b__rep1", "c__rep1", "b__fault1__rep1"}
    fault = found["b__fault1__rep1"]
    assert fault["verdict"] == "fault" and fault["valid"] is False and fault["planned_point_id"] == "b__rep1"
    assert fault["evidence"] == [{"component": "toy-service", "evidence": "service down during b__rep1"}]
    assert fault["reasons"][0].startswith("lab fault, not a result (measured again after recovery): toy-service")
    assert all(found[p]["valid"] is True and found[p]["metrics"]["value"] == 1 for p in ("a__rep1", "b__rep1", "c__rep1"))
    assert "Lab fault: toy-service (service down during b__rep1); recovering." in proc.stdout
    assert "Pass 2: measuring again 1" in proc.stdout
    assert "Lab faults: 1 detected and recovered in this sweep (toy-service)" in proc.stdout
    report = playbook_run.report_text(tmp_path / "results", "fault_toy")
    assert "## Faults (re-measured)" in report and "Lab faults in the last sweep: 1 detected and recovered" in report
    # a rerun: complete, nothing measured
    again = play(tmp_path)
    assert again.returncode == 0 and "Nothing to do" in again.stdout


def test_recovery_that_fails_stops_the_sweep_naming_the_component(tmp_path):
    proc = play(tmp_path, "-e", "fault_toy_recover_works=false")
    assert proc.returncode != 0
    assert "Recovery failed: toy-service still broken (service down during b__rep1)" in proc.stdout
    assert (tmp_path / "state" / "cleaned").exists()
    found = docs(tmp_path)
    assert "b__rep1" not in found and "b__fault1__rep1" in found and found["a__rep1"]["valid"] is True


def test_points_in_flight_when_a_fault_is_found_are_stored_as_faults(tmp_path):
    """Pipelined (like LVS): a point is handed over with the next one, so a fault can find it in flight.

    a__rep2 breaks the service at the end of segment a: it is in flight when the probe before
    segment b finds the fault. b__rep1 breaks it again: handing it over with b__rep2 finds the
    fault after a point with errors, and b__rep2, whose load ran across it, is in flight. Each
    leaves a fault document with the evidence; each is measured again in pass 2.
    """
    proc = play(tmp_path, "-e", "fault_toy_pipelined=true", "-e", "fault_toy_repetitions=2",
                "-e", '{"fault_toy_break": ["a__rep2", "b__rep1"]}')
    assert_ok(proc)
    found = docs(tmp_path)
    results = {f"{v}__rep{r}" for v in "abc" for r in (1, 2)}
    assert set(found) == results | {"a__fault1__rep2", "b__fault1__rep1", "b__fault1__rep2"}
    assert all(found[p]["valid"] is True and found[p]["metrics"]["value"] == 1 for p in results)
    segment_start = found["a__fault1__rep2"]
    assert segment_start["verdict"] == "fault" and segment_start["planned_point_id"] == "a__rep2"
    assert segment_start["evidence"] == [{"component": "toy-service", "evidence": "service down during a__rep2"}]
    assert segment_start["reasons"][0].startswith("lab fault, not a result (measured again after recovery): toy-service")
    assert "in flight when the fault was found" in segment_start["reasons"][1]
    assert "the probe before variant b" in segment_start["reasons"][1]
    handed = found["b__fault1__rep1"]   # handed over with errors: the ordinary fault path
    assert handed["reasons"][1:] == ["the service did not answer"]
    after_point = found["b__fault1__rep2"]
    assert after_point["evidence"] == [{"component": "toy-service", "evidence": "service down during b__rep1"}]
    assert "the probe after a point with errors" in after_point["reasons"][1]
    assert "Pass 2: measuring again 3" in proc.stdout
    assert "Lab faults: 2 detected and recovered in this sweep" in proc.stdout


def test_a_sweep_without_faults_says_so_in_its_output_and_report(tmp_path):
    """A probed lab found sound is stated ("none"), not left to the reader to infer from silence."""
    proc = play(tmp_path, "-e", '{"fault_toy_break": []}')
    assert_ok(proc)
    assert set(docs(tmp_path)) == {"a__rep1", "b__rep1", "c__rep1"}
    assert "Lab faults: none in this sweep." in proc.stdout
    report = playbook_run.report_text(tmp_path / "results", "fault_toy")
    assert "Lab faults in the last sweep: none (the lab was probed" in report
    assert "## Faults" not in report and "detected and recovered" not in report


def test_a_guest_whose_build_failed_is_never_measured(tmp_path):
    """A host the points need failed while it was built: no point is stored, cleanup and the report run,
    the exit is non-zero and the message names the host and the failed step."""
    proc = play(tmp_path, "-e", "fault_toy_build_fails=true")
    assert proc.returncode == 13, why(proc)
    # the module's message and what the failed command printed
    assert ("Not measuring: fault-toy-guest: building it failed at 'Install the toy service': "
            "non-zero return code | the toy service's package is broken (fault_toy_build_fails)") in proc.stdout, \
        proc.stdout[-3000:]
    assert docs(tmp_path) == {}
    assert (tmp_path / "state" / "cleaned").exists()
    # once the cause is fixed, the same command measures every point
    again = play(tmp_path)
    assert_ok(again)
    assert set(docs(tmp_path)) >= {"a__rep1", "b__rep1", "c__rep1"}


def test_exit_status_says_how_the_run_ended(tmp_path):
    """11 fault not recovered, 12 complete with invalid points (the count printed last), 0 once they are
    measured again with testbed_remeasure_invalid. Refused input (10) is tested in test_sweep_example.py,
    interrupted (99) in test_sweep_interrupts.py, a host not built (13) above."""
    unrecovered = play(tmp_path, "-e", "fault_toy_recover_works=false")
    assert unrecovered.returncode == 11, why(unrecovered)
    assert exit_line(unrecovered).startswith("Exit status 11 (unrecovered): a lab fault was not recovered (toy-service)")

    invalid = play(tmp_path, "-e", '{"fault_toy_invalid": ["c"], "fault_toy_break": []}')
    assert invalid.returncode == 12, why(invalid)
    last = exit_line(invalid)
    assert last.startswith("Exit status 12 (invalid): the run is complete, but 1 of 3 points are invalid (c__rep1;"), last
    assert docs(tmp_path)["c__rep1"]["valid"] is False

    # resumed as it is: nothing to measure, the same verdict
    again = play(tmp_path, "-e", '{"fault_toy_invalid": ["c"], "fault_toy_break": []}')
    assert again.returncode == 12 and "Nothing to do" in again.stdout, why(again)

    # the cause fixed, the invalid point measured again; the old document is kept aside
    fixed = play(tmp_path, "-e", '{"fault_toy_break": []}', "-e", "testbed_remeasure_invalid=true")
    assert_ok(fixed)
    assert exit_line(fixed).startswith("Exit status 0 (complete): every one of the 3 points")
    found = docs(tmp_path)
    assert found["c__rep1"]["valid"] is True and found["a__rep1"]["valid"] is True
    superseded = playbook_run.superseded_path(playbook_run.only_run_dir(tmp_path / "results", "fault_toy"), "c__rep1", 1)
    assert os.path.isfile(superseded), superseded
    assert json.load(open(superseded))["valid"] is False



def test_a_host_that_stops_answering_during_a_point_is_a_fault(tmp_path):
    """The toy node (a delegated host) becomes unreachable during b__rep1: the point does not end the
    play - it is stored as a fault naming the host, the node is brought back, b is measured again."""
    proc = play(tmp_path, "-e", '{"fault_toy_break": [], "fault_toy_unreachable": ["b__rep1"]}')
    assert_ok(proc)
    found = docs(tmp_path)
    assert set(found) == {"a__rep1", "b__rep1", "c__rep1", "b__fault1__rep1"}, why(proc)
    fault = found["b__fault1__rep1"]
    assert fault["verdict"] == "fault" and fault["planned_point_id"] == "b__rep1"
    components = [problem["component"] for problem in fault["evidence"]]
    assert components == ["toy node"], fault["evidence"]
    assert "Connection refused" in fault["evidence"][0]["evidence"] or "port 1" in fault["evidence"][0]["evidence"]
    assert any("the point did not complete: task 'Measure'" in reason for reason in fault["reasons"]), fault["reasons"]
    assert all(found[p]["valid"] is True for p in ("a__rep1", "b__rep1", "c__rep1"))
    assert "Pass 2: measuring again 1" in proc.stdout


def test_the_play_host_itself_stopping_is_a_fault_and_cleanup_runs_when_it_stays_away(tmp_path):
    """The play's own host (like the storage node) stops answering: a fault, recovered and measured
    again; when it does not come back the run stops naming it (exit 11), after cleanup and the report."""
    proc = play(tmp_path, "-e", '{"fault_toy_break": [], "fault_toy_unreachable": ["a__rep1"]}',
                "-e", "fault_toy_play_host=fault-toy-guest")
    assert_ok(proc)
    found = docs(tmp_path)
    assert set(found) == {"a__rep1", "b__rep1", "c__rep1", "a__fault1__rep1"}, why(proc)
    hosts = [problem["component"] for problem in found["a__fault1__rep1"]["evidence"]]
    assert "toy node" in hosts and any(h.startswith("host fault-toy-guest (stopped answering") for h in hosts), hosts

    gone = tmp_path / "gone"
    gone.mkdir()
    stuck = play(gone, "-e", '{"fault_toy_break": [], "fault_toy_unreachable": ["b__rep1"]}',
                 "-e", "fault_toy_play_host=fault-toy-guest", "-e", "fault_toy_recover_works=false")
    assert stuck.returncode == 11, why(stuck)
    assert "Recovery failed: " in stuck.stdout and "fault-toy-guest" in exit_line(stuck) + stuck.stdout
    assert (gone / "state" / "cleaned").exists()
    report = playbook_run.report_text(gone / "results", "fault_toy")   # with what was measured (a)
    assert "a" in report


def test_a_point_that_fails_with_the_testbed_sound_stops_naming_the_task(tmp_path):
    """Not every failure is a lab fault: with every host answering and the health hook content, the
    play stops (after cleanup and the report) naming the point, the task and its message; the run is
    incomplete (exit 13), and the same command measures what is missing once the cause is fixed."""
    proc = play(tmp_path, "-e", '{"fault_toy_break": [], "fault_toy_fail": ["b__rep1"]}')
    assert proc.returncode == 13, why(proc)
    assert ("b__rep1" in proc.stdout and "failed at task 'Fail with the testbed sound (fault_toy_fail)'" in proc.stdout
            and "the toy tool crashed (fault_toy_fail)" in proc.stdout
            and "the health probe found the testbed sound" in proc.stdout), proc.stdout[-3000:]
    found = docs(tmp_path)
    assert "a__rep1" in found and not any(k.startswith("b__") for k in found)
    assert (tmp_path / "state" / "cleaned").exists()
