"""The sweep skeleton's arithmetic (module_utils/testbed_sweep.py, filters in filter_plugins/testbed_sweep.py)."""
import pytest
from ansible.module_utils.testbed_sweep import (
    EXIT_CODES,
    AnsibleFilterError,
    check_choices,
    delta_seconds,
    exit_status,
    sweep_outcome,
    sweep_overhead,
    sweep_plan,
    sweep_progress,
    sweep_result_lines,
    sweep_segments,
    sweep_unbuilt,
    sweep_unreachable_problems,
    workload_deadline,
    workload_result,
)
from testbed_sweep import FilterModule  # the filter plugin (filter_plugins/ is on the tests' path)


def test_interleaved_plan_is_repetition_then_variant_then_grid():
    plan = sweep_plan({"variants": ["rr", "wrr"], "grid": {"rate": [50, 100]}, "repetitions": 2})
    assert [(p["repetition"], p["variant"], p["parameters"]["rate"]) for p in plan] == [
        (1, "rr", 50), (1, "rr", 100), (1, "wrr", 50), (1, "wrr", 100),
        (2, "rr", 50), (2, "rr", 100), (2, "wrr", 50), (2, "wrr", 100)]


def test_grouped_plan_keeps_a_variant_together():
    plan = sweep_plan({"variants": ["a", "b"], "repetitions": 2, "order": "grouped"})
    assert [(p["variant"], p["repetition"]) for p in plan] == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert all(p["parameters"] == {} for p in plan)


def test_mapping_values_set_several_parameters_at_once():
    plan = sweep_plan({"variants": ["rr"], "grid": {"load": [{"rate": 50, "num_conns": 2000},
                                                             {"rate": 100, "num_conns": 4000}]}})
    assert [p["parameters"] for p in plan] == [{"rate": 50, "num_conns": 2000}, {"rate": 100, "num_conns": 4000}]


def test_grid_is_a_cartesian_product_with_fixed_parameters():
    plan = sweep_plan({"variants": ["x"], "grid": {"bs": ["4k", "64k"], "iodepth": [1, 32]},
                       "parameters": {"runtime_s": 30}})
    assert [(p["parameters"]["bs"], p["parameters"]["iodepth"]) for p in plan] == [
        ("4k", 1), ("4k", 32), ("64k", 1), ("64k", 32)]
    assert all(p["parameters"]["runtime_s"] == 30 for p in plan)


def test_workloads_each_bring_their_own_grid():
    plan = sweep_plan({"variants": [{"name": "native"}, {"name": "docker"}],
                       "workloads": [{"name": "cpu", "grid": {"threads": [1, 2]}},
                                     {"name": "web", "parameters": {"concurrency": 10}}]})
    assert [(p["variant"], p["parameters"]) for p in plan] == [
        ("native", {"threads": 1, "workload": "cpu"}), ("native", {"threads": 2, "workload": "cpu"}),
        ("native", {"concurrency": 10, "workload": "web"}),
        ("docker", {"threads": 1, "workload": "cpu"}), ("docker", {"threads": 2, "workload": "cpu"}),
        ("docker", {"concurrency": 10, "workload": "web"})]


def test_outer_parameters_vary_outside_the_workloads():
    plan = sweep_plan({"variants": ["zfs", "ceph"], "order": "grouped", "repetitions": 2,
                       "workloads": [{"name": "fio", "grid": {"pattern": ["read", "write"]}}, {"name": "copy"}],
                       "outer": {"access": ["network", "local"]}})
    zfs = [(p["repetition"], p["parameters"]["access"], p["parameters"]["workload"], p["parameters"].get("pattern"))
           for p in plan if p["variant"] == "zfs"]
    # every workload under the first access, then under the next, in each repetition
    assert zfs[:6] == [(1, "network", "fio", "read"), (1, "network", "fio", "write"), (1, "network", "copy", None),
                       (1, "local", "fio", "read"), (1, "local", "fio", "write"), (1, "local", "copy", None)]
    assert len(plan) == 2 * 2 * 6 and [p["variant"] for p in plan[:12]] == ["zfs"] * 12


@pytest.mark.parametrize("matrix, message", [
    ({"variants": ["rr"], "outer": {"access": "local"}}, "outer.access must be a non-empty list"),
    ({"variants": []}, "variants must be a non-empty list"),
    ({"variants": "rr,wrr"}, "variants must be a non-empty list"),
    ({"variants": ["rr", "rr"]}, "lists 'rr' twice"),
    ({"variants": ["rr"], "repetitions": 0}, "repetitions must be a whole number >= 1"),
    ({"variants": ["rr"], "repetitions": 1.5}, "repetitions must be a whole number >= 1"),
    ({"variants": ["rr"], "grid": {"rate": "50,100"}}, "grid.rate must be a non-empty list"),
    ({"variants": ["rr"], "order": "random"}, "order must be one of"),
    ({"variants": ["rr"], "schedulers": ["rr"]}, "unknown matrix key(s) schedulers"),
    ({"variants": ["rr"], "workloads": []}, "workloads must be a non-empty list"),
])
def test_bad_matrices_say_what_is_wrong(matrix, message):
    with pytest.raises(AnsibleFilterError, match="sweep_plan: .*" + message.replace("(", r"\(").replace(")", r"\)")):
        sweep_plan(matrix)


def _run_points(plan, done=()):
    return [dict(p, point_id=f"{p['variant']}-{i}", done=i in done) for i, p in enumerate(plan)]


def test_segments_group_pending_points_by_variant_and_label_them():
    plan = sweep_plan({"variants": ["rr", "wrr"], "grid": {"rate": [50, 100]}, "repetitions": 2})
    segs = sweep_segments(_run_points(plan, done={0, 1, 2}), ["variant", "repetition"], ["rate"])
    assert [s["key"] for s in segs] == [{"variant": "wrr", "repetition": 1}, {"variant": "rr", "repetition": 2},
                                        {"variant": "wrr", "repetition": 2}]
    assert [p["index"] for p in segs[0]["points"]] == [4]
    assert segs[0]["points"][0]["label"] == "[4/8] wrr rate=100 rep 1"
    assert segs[1]["label"] == "variant rr, repetition 2"
    assert sum(len(s["points"]) for s in segs) == 5


def test_segments_by_a_parameter():
    plan = sweep_plan({"variants": ["zfs"], "workloads": [{"name": "fio"}, {"name": "oltp"}], "repetitions": 2,
                       "order": "grouped"})
    segs = sweep_segments(_run_points(plan), ["variant", "workload"])
    assert [s["key"]["workload"] for s in segs] == ["fio", "oltp", "fio", "oltp"]


def test_no_pending_point_no_segment():
    plan = sweep_plan({"variants": ["a"]})
    assert sweep_segments(_run_points(plan, done={0})) == []


def test_segments_refuse_what_is_not_a_plan():
    with pytest.raises(AnsibleFilterError, match="sweep_segments: points must be"):
        sweep_segments("abc")
    with pytest.raises(AnsibleFilterError, match="point 1 is not a planned point"):
        sweep_segments([{"x": 1}])


def test_progress_uses_measured_durations_once_there_are_some():
    assert sweep_progress([], 10, 30)["text"] == "10 to go, about 5 min left (plan estimate)"
    out = sweep_progress([40, 50], 3, 30)
    assert out["remaining_s"] == 135.0 and out["mean_s"] == 45.0
    assert out["text"] == "3 to go, about 2 min left (mean 45.0 s per point so far)"
    assert sweep_progress([40], 0)["text"] == "last point"
    assert sweep_progress([], 4)["remaining_s"] is None
    with pytest.raises(AnsibleFilterError, match="remaining must be a whole number"):
        sweep_progress([1], -1)


def test_overhead_is_wall_minus_load():
    out = sweep_overhead(1000.0, 1100.0, [40.0, 45.0])
    assert out == {"points": 2, "wall_s": 100.0, "load_s": 85.0, "overhead_s": 15.0, "overhead_pct": 15.0,
                   "overhead_per_point_s": 7.5}
    assert sweep_overhead(1000.0, 1100.0, []) is None
    with pytest.raises(AnsibleFilterError, match="positive wall time"):
        sweep_overhead(1100.0, 1000.0, [1])


def test_result_lines_show_the_stored_verdict_and_one_short_cause():
    results = [{"point": {"label": "[1/2] a rep 1"}, "summary": "3.1 Gbit/s", "valid": True},
               {"point_id": "b__rep1", "valid": False, "reasons": ["x" * 500, "second"]},
               {"point": {"label": "[2/2] c rep 1"}, "valid": True}]
    stored = [{"valid": True, "document": {"reasons": []}},
              {"valid": False, "document": {"reasons": ["x" * 500, "second"]}},
              {"valid": False, "document": {"reasons": ["iperf3: the server did not answer"]}}]
    lines = sweep_result_lines(results, stored)
    assert lines[0] == "[1/2] a rep 1: 3.1 Gbit/s; valid"
    assert lines[1].startswith("b__rep1: INVALID: xxx") and len(lines[1]) < 200
    assert lines[2] == "[2/2] c rep 1: INVALID: iperf3: the server did not answer"
    assert sweep_result_lines([{"summary": "[1/1] rr: valid, 50 conn/s", "point": {"label": "[1/1] rr"},
                                "valid": True}]) == ["[1/1] rr: valid, 50 conn/s"]


def test_delta_seconds():
    assert delta_seconds("0:00:10.250000") == 10.25
    assert delta_seconds("1:02:03.5") == 3723.5
    assert delta_seconds(None) is None
    with pytest.raises(AnsibleFilterError, match="expected H:MM:SS"):
        delta_seconds("ten seconds")


def test_filter_module_lists_every_filter():
    assert set(FilterModule().filters()) == {"sweep_plan", "sweep_segments", "sweep_progress", "sweep_overhead",
                                             "sweep_result_lines", "delta_seconds", "workload_result", "workload_deadline",
                                             "workload_watch_argv", "workload_watch_shown", "workload_command", "workload_parse_options",
                                             "sweep_unbuilt", "sweep_outcome", "sweep_unreachable_problems"}


RUN = {"tool": "iperf3", "argv": ["env", "LC_ALL=C", "iperf3", "-c", "x"], "host": "h", "rc": 0, "finished": True,
       "stdout": "{...}", "started_at": "2026-11-23T12:00:00.000000Z", "finished_at": "2026-11-23T12:00:10.500000Z",
       "duration_s": 10.2, "error": None,
       "parsed": {"tool": "iperf3", "valid": True, "reasons": [], "warnings": ["old iperf3"],
                  "metrics": {"received_bps": 2.5e9, "sent_bps": 2.6e9, "retransmits": 3}}}


def test_workload_result_keeps_picked_metrics_and_converts_units():
    out = workload_result(RUN, {"variant": "a"}, {"hosts": {}}, ["retransmits", "missing"],
                          {"throughput_gbps": ["received_bps", 1e-9]})
    assert out["metrics"] == {"retransmits": 3, "missing": None, "throughput_gbps": 2.5}
    assert out["valid"] is True and out["warnings"] == ["old iperf3"] and out["load_s"] == 10.2
    assert out["raw"] == {"iperf3.txt": "{...}"} and out["sources"]["iperf3"]["metrics"]["sent_bps"] == 2.6e9
    assert out["extra"]["argv"][2] == "iperf3" and out["started_at"].startswith("2026-11-23T12:00:00")


@pytest.mark.parametrize("args,expected", [
    ({"timeout_s": 190}, {"deadline_s": 190, "from": "timeout", "estimate_s": None}),
    ({"timeout_s": 190, "estimate_s": 60}, {"deadline_s": 190, "from": "timeout", "estimate_s": 60.0}),
    ({"estimate_s": 30}, {"deadline_s": 150, "from": "estimate", "estimate_s": 30.0}),
    ({"estimate_s": 0.4, "factor": 2, "margin_s": 0}, {"deadline_s": 1, "from": "estimate", "estimate_s": 0.4}),
    ({}, {"deadline_s": 3600, "from": "default", "estimate_s": None}),
    ({"default_s": 7200}, {"deadline_s": 7200, "from": "default", "estimate_s": None}),
])
def test_every_load_has_a_deadline(args, expected):
    assert workload_deadline(**args) == expected


@pytest.mark.parametrize("bad", [{"estimate_s": -1}, {"factor": 0.5}, {"default_s": 0}, {"margin_s": "x"},
                                 {"timeout_s": True}, {"estimate_s": float("inf")}])
def test_a_deadline_that_would_not_bound_is_refused(bad):
    with pytest.raises(AnsibleFilterError, match="workload_deadline"):
        workload_deadline(**bad)


def test_a_load_stopped_at_its_deadline_is_invalid_with_the_numbers():
    run = dict(RUN, rc=124, overran=True, deadline_s=150, estimate_s=30.0)
    out = workload_result(run, {}, {})
    assert out["valid"] is False
    assert "iperf3 exceeded its deadline of 150 s (estimate 30 s) and was stopped" in out["reasons"]
    run = dict(RUN, rc=124, overran=True, deadline_s=3600, estimate_s=None)
    assert workload_result(run, {}, {})["reasons"][-1].startswith(
        "iperf3 exceeded its deadline of 3600 s (no estimate: the default deadline")
    # stopped at the caller's own timeout (postal): not an overrun
    assert workload_result(dict(RUN, rc=124, overran=False), {}, {})["valid"] is True
    # stopped by the watchdog, then killed by timeout's -k (a load stuck in I/O exits 137 as at the deadline):
    # the watchdog's reason only (the storage fault run of 2026-12-03 said both)
    line = "testbed-watchdog: stopped the load 10 s in: storage-vm (/dev/vdb) did not answer 2 probes 5 s apart"
    watched = workload_result(dict(RUN, rc=137, overran=True, deadline_s=240, estimate_s=60.0, stderr=line + "\nKilled"),
                              {}, {})
    assert watched["valid"] is False
    assert [r for r in watched["reasons"] if "deadline" in r or "watchdog" in r] == [
        "the watchdog stopped the load 10 s in: storage-vm (/dev/vdb) did not answer 2 probes 5 s apart"]


def test_a_load_whose_client_hung_past_its_bound_says_so_and_not_the_deadline():
    sentence = ("the command had not returned 36 s after it started and was killed (pid 42): docker, outside the "
                "tool's own timeout, did not return after the deadline - a daemon that hangs?")
    out = workload_result(dict(RUN, rc=137, overran=True, deadline_s=3, estimate_s=1.0, hung=sentence), {}, {})
    assert out["valid"] is False
    assert [r for r in out["reasons"] if "deadline" in r] == ["iperf3: " + sentence]


def test_workload_result_keeps_the_text_the_parser_read():
    # xz reports on stderr, hpcc in a file: testbed_workload_result.output_text holds what was parsed
    run = dict(RUN, tool="xz", stdout="", output="stderr", output_text="f: 1.0 MiB / 2.0 MiB = 0.500, 3.0 MiB/s, 0:04\n")
    assert workload_result(run, {}, {})["raw"] == {"xz.txt": run["output_text"]}
    assert workload_result(dict(RUN, output_text=None), {}, {})["raw"] == {"iperf3.txt": "{...}"}


def test_workload_result_of_a_failed_run_is_invalid_with_the_cause():
    failed = dict(RUN, parsed=None, error="connection refused -> iperf3 output <content>: empty", finished=False)
    out = workload_result(failed, {"variant": "a"}, {"hosts": {}})
    assert out["valid"] is False and out["metrics"] == {}
    assert out["reasons"] == ["iperf3: connection refused -> iperf3 output <content>: empty",
                              "iperf3 did not finish in time"]
    invalid = dict(RUN, parsed=dict(RUN["parsed"], valid=False, reasons=["0 bytes received"]))
    assert workload_result(invalid, {}, {})["reasons"] == ["0 bytes received"]
    with pytest.raises(AnsibleFilterError, match="scale.x must be"):
        workload_result(RUN, {}, {}, scale={"x": "received_bps"})


@pytest.mark.parametrize("values, message", [
    ([], "x_workloads must be a non-empty list, got []"),
    ("web", "x_workloads must be a non-empty list, got 'web'"),
    (["web", "iozone", "nfs"], "unknown workload(s) iozone, nfs; known: web, cpu"),
    (["web", "web"], "x_workloads lists a workload twice: ['web', 'web']"),
])
def test_check_choices_names_the_setting(values, message):
    with pytest.raises(AnsibleFilterError) as err:
        check_choices("x_fn", values, ("web", "cpu"), "x_workloads", "workload")
    assert str(err.value) == "x_fn: " + message


def test_check_choices_accepts_known_names_once():
    assert check_choices("x_fn", ["cpu", "web"], ("web", "cpu"), "x_workloads", "workload") is None


def test_sweep_unbuilt_names_each_host_not_built_with_its_failed_step():
    hostvars = {
        "built": {"testbed_sweep_built": True},
        "broken": {"testbed_sweep_built": False,
                   "testbed_sweep_build_failed": {"task": "Start the servers", "msg": "vsftpd did not start"}},
        "silent": {},
    }
    assert sweep_unbuilt(["built"], hostvars) == []
    assert sweep_unbuilt(["built", "broken", "silent", "absent"], hostvars) == [
        "broken: building it failed at 'Start the servers': vsftpd did not start",
        "silent: it was not built (unreachable, or skipped by the build plays)",
        "absent: it was not built (unreachable, or skipped by the build plays)",
    ]
    with pytest.raises(AnsibleFilterError, match="sweep_unbuilt: expected a list"):
        sweep_unbuilt("built", hostvars)


def _status(*points):
    return {"points": [dict(zip(("point_id", "done", "valid", "reasons"), p)) for p in points]}


def test_sweep_outcome_from_the_stored_points():
    complete = sweep_outcome(_status(("a", True, True, None), ("b", True, True, None)))
    assert (complete["status"], complete["exit_code"]) == ("complete", 0)
    assert complete["message"] == "every one of the 2 points is a valid measurement"
    invalid = sweep_outcome(_status(("a", True, True, None), ("b", True, False, ["xz printed no speed"])))
    assert (invalid["status"], invalid["exit_code"], invalid["invalid"]) == ("invalid", 12, ["b"])
    assert invalid["message"].startswith("the run is complete, but 1 of 2 points are invalid (b; the first: "
                                         "xz printed no speed). Fix the cause")
    pending = sweep_outcome(_status(("a", True, False, ["x"]), ("b", False, None, None)))
    assert (pending["status"], pending["exit_code"], pending["pending"]) == ("incomplete", 13, ["b"])
    broken = sweep_outcome(_status(("a", False, None, None)), unrecovered=["lvs-director"])
    assert (broken["status"], broken["exit_code"]) == ("unrecovered", 11)
    assert "not recovered (lvs-director)" in broken["message"]


def test_sweep_outcome_accepts_invalid_points_only_for_every_reason_listed():
    status = _status(("a", True, False, ["overload: 12 % errors"]), ("b", True, False, ["overload: 3 %", "no value"]))
    outcome = sweep_outcome(status, accepted_invalid=["^overload: "])
    assert outcome["accepted"] == ["a"] and outcome["invalid"] == ["b"] and outcome["exit_code"] == 12
    only = sweep_outcome(_status(("a", True, False, ["overload: 12 % errors"])), accepted_invalid=["^overload: "])
    assert only["exit_code"] == 0 and "1 invalid for a reason the experiment accepts" in only["message"]
    with pytest.raises(AnsibleFilterError, match="accepted_invalid pattern '\\(' is not a regular expression"):
        sweep_outcome(status, accepted_invalid=["("])
    with pytest.raises(AnsibleFilterError, match="sweep_outcome: expected result_run's answer"):
        sweep_outcome([])


@pytest.mark.parametrize("outcome, refused, failed, code", [
    (None, None, False, None),                       # --tags plan: ansible-playbook's own
    (None, "cpu_scaling_threads item 1 must be at least 1", True, 10),
    ({"status": "complete", "message": "ok"}, "typo", True, 10),   # a refusal wins
    ({"status": "complete", "message": "ok"}, None, False, 0),
    ({"status": "complete", "message": "ok"}, None, True, None),   # cleanup failed after a complete run: 2 stays
    ({"status": "invalid", "message": "1 invalid"}, None, False, 12),
    ({"status": "invalid", "message": "1 invalid"}, None, True, None),
    ({"status": "incomplete", "message": "2 missing"}, None, True, 13),
    ({"status": "unrecovered", "message": "broken"}, None, True, 11),
])
def test_exit_status(outcome, refused, failed, code):
    got, message = exit_status(outcome, refused, failed)
    assert got == code
    assert (message is None) == (code is None)
    assert set(EXIT_CODES.values()) == {0, 10, 11, 12, 13, 14}


def test_exit_status_of_a_busy_host():
    got, message = exit_status(None, None, True, busy="web1 is in use by run R of lvs_compare (...)")
    assert got == 14 and message.startswith("a host is in use by another run, nothing was changed: web1 is in use")
    # a refused input still wins: nothing was even asked of the host
    assert exit_status(None, "bad input", True, busy="web1 is in use")[0] == 10



def test_a_host_whose_own_ping_did_not_answer_is_a_problem_named_with_the_point():
    hostvars = {
        "node": {"__ping": {"unreachable": True, "msg": "ssh: connect to host 10.0.0.5 port 22: No route to host"}},
        "client": {"__ping": {"ping": "pong"}},
        "skipped": {"__ping": {"skipped": True}},
        "never": {},
    }
    problems = sweep_unreachable_problems(["node", "client", "skipped", "never"], hostvars, "__ping", "zfs read rep 1")
    assert problems == [{"component": "host node (stopped answering during zfs read rep 1)",
                         "evidence": "ssh: connect to host 10.0.0.5 port 22: No route to host"}]
    assert sweep_unreachable_problems(["client"], hostvars, "__ping", "x") == []
    assert FilterModule().filters()["sweep_unreachable_problems"] is sweep_unreachable_problems
    with pytest.raises(AnsibleFilterError, match="sweep_unreachable_problems: expected a list of inventory host names"):
        sweep_unreachable_problems("node", hostvars, "__ping", "x")


def test_the_task_entry_points_command_is_the_one_call_entry_points():
    # run.yml builds its command with the filter, the action plugin with the function: one definition
    command = FilterModule().filters()["workload_command"]("fio", ["--name=x"], exec_kind="docker", container="c",
                                                           estimate_s=10, record="fio", record_dir="/var/tmp/p")
    assert command["argv"][:7] == ["docker", "exec", "--env", "LC_ALL=C", "--env", "LANG=C", "c"]
    assert command["shown"][7:11] == ["timeout", "-k", "3", "90"] and command["shown"][-2:] == ["fio", "--name=x"]
    assert "/var/tmp/p/fio.json" in command["argv"] and "/var/tmp/p/fio.json" not in command["shown"]
    options = FilterModule().filters()["workload_parse_options"]
    assert options("xz", {"a": 1}, 2.5) == {"a": 1, "wall_s": 2.5} and options("fio", {}, 2.5) == {}
