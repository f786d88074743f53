"""A load that overruns its deadline is stopped and stored invalid with its reason, and the run goes on:
the worked example (playbooks/cpu-scaling.yml) with sysbench asked for 120 s but planned at 2 s
(testbed_workload_estimate_s, factor 1, margin 0: a deadline of 2 s). The verdict does not depend on the
machine's speed: the tool would run 118 s past its deadline. The lock file is the test's own."""

import playbook_run
from playbook_run import why


def test_a_load_past_its_deadline_is_stopped_and_stored_invalid_with_the_numbers(tmp_path):
    results = tmp_path / "results"
    proc = playbook_run.play("playbooks/cpu-scaling.yml", "-e", '{"cpu_scaling_threads": [1]}',
                             "-e", "cpu_scaling_duration_s=120", "-e", "testbed_repetitions=2",
                             "-e", "testbed_workload_estimate_s=2", "-e", "testbed_workload_deadline_factor=1",
                             "-e", "testbed_workload_deadline_margin_s=0",
                             "-e", f"testbed_lock_path={tmp_path / 'lock' / 'run.lock'}", results=results)
    assert proc.returncode == 12, why(proc)  # every point stored, some invalid
    docs = playbook_run.point_documents(results, "cpu_scaling")
    assert len(docs) == 2, why(proc)
    for doc in docs:
        assert doc["valid"] is False
        assert "sysbench exceeded its deadline of 2 s (estimate 2 s) and was stopped" in doc["reasons"], doc["reasons"]
        assert doc["extra"]["rc"] in (124, 137) and doc["extra"]["argv"][3:7] == ["timeout", "-k", "3", "2"]
