"""Result store: point ids, run open/resume, atomic point documents, index."""

import datetime
import hashlib
import json
import os

import pytest
from ansible.module_utils import testbed_parse, testbed_results
from ansible.module_utils.testbed_results import (
    ResultError,
    build_index,
    leftover_temp_files,
    load_run,
    open_run,
    plan_hash,
    point_id,
    refresh_index,
)
from ansible.module_utils.testbed_results import params as testbed_results_params
from ansible.module_utils.testbed_results import store as testbed_results_store
from ansible.module_utils.testbed_results.store import merge_source_verdicts, store_point
from helpers import run_module

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 11, 21, 15, 30, 0, tzinfo=UTC)

PLAN = [
    {"variant": "rr", "parameters": {"rate": 1000}, "repetition": 1},
    {"variant": "rr", "parameters": {"rate": 2000}, "repetition": 1},
    {"variant": "wrr", "parameters": {"rate": 1000}, "repetition": 1},
    {"variant": "wrr", "parameters": {"rate": 2000}, "repetition": 1},
]

ENV = {
    "hosts": {
        "director": {
            "hostname": "director", "kernel": "6.1.0-26-amd64", "arch": "x86_64",
            "distro": {"id": "debian", "version_id": "12", "pretty_name": "Debian GNU/Linux 12 (bookworm)"},
            "cpus": 2, "memory_mb": 24105, "virtualization": "docker", "virtualization_type": "container",
            "tools": {"httperf": "0.9.0", "ipvsadm": None},
        }
    },
    "controller": {"ansible_core_version": "2.19.4"},
}


def store(run_dir, point, metrics=None, valid=True, reasons=(), start="2026-11-21T15:30:00Z",
          end="2026-11-21T15:30:10Z", **kwargs):
    return store_point(run_dir, point, {"reply_rate_avg_per_s": 999.5} if metrics is None else metrics,
                       valid, list(reasons), [], ENV, start, end, **kwargs)


# ---------------------------------------------------------------------------
# point ids and plan hash
# ---------------------------------------------------------------------------

def test_point_id_is_deterministic_and_sorted():
    assert point_id("wrr", {"rate": 2000}, 1) == "wrr__rate-2000__rep1"
    assert point_id("wrr", {"rate": 2000, "conns": 10}, 2) == "wrr__conns-10_rate-2000__rep2"
    assert point_id("wrr", {"conns": 10, "rate": 2000}, 2) == "wrr__conns-10_rate-2000__rep2"
    assert point_id("native", {}, 3) == "native__rep3"
    assert point_id("native", None, 0) == "native__rep0"
    assert point_id("lxc", {"ratio": 0.5, "tls": True, "limit": None}) == "lxc__limit-null_ratio-0.5_tls-true__rep1"


def test_point_id_sanitises_with_a_hash_that_keeps_ids_distinct():
    ident = point_id("docker/nat", {"block size": "4k"}, 1)
    var_hash = hashlib.sha256(b"docker/nat").hexdigest()[:6]
    key_hash = hashlib.sha256(b"block size").hexdigest()[:6]
    assert ident == f"docker-nat-{var_hash}__block-size-{key_hash}-4k__rep1"
    assert point_id("docker-nat", {"block-size": "4k"}, 1) == "docker-nat__block-size-4k__rep1"
    # '__' stays the separator: a double underscore inside a piece is collapsed (and hashed)
    assert point_id("a__b", {}, 1).count("__") == 1
    assert point_id("a__b", {}, 1) != point_id("a_b", {}, 1)


def test_long_parameters_are_hashed():
    params = {"uri": "/" + "x" * 200, "rate": 10}
    ident = point_id("nginx", params, 1)
    digest = hashlib.sha256(json.dumps(params, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
    assert ident == f"nginx__p-{digest}__rep1"
    assert len(ident) <= testbed_results.MAX_POINT_ID


@pytest.mark.parametrize("bad,words", [
    ({"variant": "", "parameters": {}}, "variant must be a non-empty string"),
    ({"variant": "a", "parameters": [1]}, "parameters must be a mapping"),
    ({"variant": "a", "repetition": -1}, "repetition must be a whole number"),
    ({"variant": "a", "repetition": True}, "repetition must be a whole number"),
    ({"variant": "a", "parameters": {"r": float("nan")}}, "nan/inf"),
    ({"variant": "a", "colour": "red"}, "unknown key(s) colour"),
])
def test_bad_points_are_refused(bad, words):
    with pytest.raises(ResultError, match=None) as err:
        open_run("/nonexistent", "exp", [bad], write=False)
    assert words in str(err.value)


def test_duplicate_points_refused():
    with pytest.raises(ResultError, match=r"plan\[1\] repeats plan\[0\] \(point id rr__rep1\)"):
        plan_hash([{"variant": "rr"}, {"variant": "rr", "repetition": 1}])


def test_plan_hash_ignores_order_but_not_content():
    assert plan_hash(PLAN) == plan_hash(list(reversed(PLAN)))
    changed = [dict(p) for p in PLAN]
    changed[0] = {"variant": "rr", "parameters": {"rate": 1001}, "repetition": 1}
    assert plan_hash(changed) != plan_hash(PLAN)
    assert len(plan_hash(PLAN)) == 64


# ---------------------------------------------------------------------------
# open / resume
# ---------------------------------------------------------------------------

def test_open_creates_a_timestamped_run(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN, run_parameters={"duration_s": 30},
                   report={"title": "LVS"}, estimate_s_per_point=45, now=NOW)
    assert run["run_id"] == "20261121T153000Z"
    assert run["action"] == "created" and run["changed"] is True
    assert run["total"] == 4 and run["done_count"] == 0 and len(run["pending"]) == 4
    assert [p["point_id"] for p in run["pending"]] == [
        "rr__rate-1000__rep1", "rr__rate-2000__rep1", "wrr__rate-1000__rep1", "wrr__rate-2000__rep1"]
    assert run["plan_text"].splitlines() == [
        "Run lvs/20261121T153000Z (created)",
        "Plan: 4 points (2 variants × 2 parameter sets × 1 repetition), 0 done, 4 to run, estimated 3 min",
        "Variants: rr, wrr",
    ]
    with open(os.path.join(run["run_dir"], "run.json")) as handle:
        saved = json.load(handle)
    assert saved["experiment"] == "lvs" and saved["run_id"] == "20261121T153000Z"
    assert saved["created"] == "2026-11-21T15:30:00Z"
    assert saved["run_parameters"] == {"duration_s": 30} and saved["report"] == {"title": "LVS"}
    assert saved["plan_hash"] == plan_hash(PLAN)
    assert saved["plan_history"][0]["event"] == "created" and saved["plan_history"][0]["points"] == 4
    index = json.load(open(os.path.join(run["run_dir"], "index.json")))
    assert index["pending"] == 4 and index["done"] == 0


def test_resume_auto_finds_the_unfinished_run(tmp_path):
    first = open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    store(first["run_dir"], PLAN[0])
    store(first["run_dir"], first["pending"][3], start="2026-11-21T15:31:00Z", end="2026-11-21T15:31:20.5Z")
    later = NOW + datetime.timedelta(hours=1)
    again = open_run(str(tmp_path), "lvs", list(reversed(PLAN)), now=later)
    assert again["run_id"] == first["run_id"]
    assert again["action"] == "resumed" and again["changed"] is False
    assert again["done_count"] == 2
    assert sorted(p["point_id"] for p in again["pending"]) == ["rr__rate-2000__rep1", "wrr__rate-1000__rep1"]
    # estimate from the mean duration of the done points: (10 + 20.5) / 2 = 15.25 s, 2 left
    assert ("Plan: 4 points (2 variants × 2 parameter sets × 1 repetition), 2 done, 2 to run, "
            "estimated 30 s (mean 15.2 s per point so far)") in again["plan_text"]
    done_flags = {p["point_id"]: (p["done"], p["valid"]) for p in again["points"]}
    assert done_flags["rr__rate-1000__rep1"] == (True, True)
    assert done_flags["rr__rate-2000__rep1"] == (False, None)


def test_complete_run_is_resumed_with_nothing_pending_and_new_starts_another(tmp_path):
    first = open_run(str(tmp_path), "lvs", PLAN[:2], now=NOW)
    for point in first["pending"]:
        store(first["run_dir"], point)
    # running the same sweep again is idempotent: the complete run, nothing to measure
    again = open_run(str(tmp_path), "lvs", PLAN[:2], now=NOW + datetime.timedelta(seconds=1))
    assert again["run_id"] == "20261121T153000Z"
    assert again["action"] == "resumed" and again["changed"] is False
    assert again["pending"] == [] and again["done_count"] == 2
    # run_id=new asks for a fresh run of the same plan
    second = open_run(str(tmp_path), "lvs", PLAN[:2], run_id="new", now=NOW)
    assert second["run_id"] == "20261121T153000Z-2"
    assert second["action"] == "created" and second["done_count"] == 0
    # auto now picks the newest run with that plan: the fresh one
    assert open_run(str(tmp_path), "lvs", PLAN[:2], write=False)["run_id"] == "20261121T153000Z-2"
    # a different plan never resumes the other runs
    third = open_run(str(tmp_path), "lvs", PLAN, now=NOW + datetime.timedelta(seconds=5))
    assert third["run_id"] == "20261121T153005Z"


def test_explicit_run_id_merges_a_changed_plan(tmp_path):
    first = open_run(str(tmp_path), "lvs", PLAN[:2], run_id="campaign1", now=NOW)
    assert first["run_id"] == "campaign1"
    store(first["run_dir"], PLAN[0])
    merged = open_run(str(tmp_path), "lvs", PLAN[1:], run_id="campaign1", now=NOW + datetime.timedelta(minutes=5))
    assert merged["action"] == "extended" and merged["changed"] is True
    assert merged["total"] == 3 and merged["run_total"] == 4
    assert [p["point_id"] for p in merged["pending"]] == [
        "rr__rate-2000__rep1", "wrr__rate-1000__rep1", "wrr__rate-2000__rep1"]
    saved = json.load(open(os.path.join(merged["run_dir"], "run.json")))
    assert [p["point_id"] for p in saved["plan"]] == [p["point_id"] for p in open_run(
        str(tmp_path), "lvs", PLAN, write=False)["points"]]
    assert [h["event"] for h in saved["plan_history"]] == ["created", "extended"]
    assert saved["plan_history"][1]["added"] == ["wrr__rate-1000__rep1", "wrr__rate-2000__rep1"]
    assert saved["plan_history"][1]["at"] == "2026-11-21T15:35:00Z"
    assert saved["plan_hash"] == plan_hash(PLAN)
    # the stored point is kept
    assert os.path.exists(os.path.join(merged["run_dir"], "rr__rate-1000__rep1.json"))
    # same plan again: nothing changes
    again = open_run(str(tmp_path), "lvs", PLAN[1:], run_id="campaign1")
    assert again["changed"] is False and again["action"] == "resumed"


def test_explicit_run_of_another_experiment_is_refused(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN, run_id="r1")
    os.rename(os.path.dirname(run["run_dir"]), str(tmp_path / "nfv"))
    with pytest.raises(ResultError, match="run r1 belongs to experiment 'lvs', not 'nfv'"):
        open_run(str(tmp_path), "nfv", PLAN, run_id="r1")


LAB = {"inventory_kind": "lab", "vip": "10.0.0.1", "port": 80, "timeout_s": 5, "max_error_pct": 1.0}


def test_auto_resumes_only_a_run_with_the_same_run_parameters(tmp_path):
    first = open_run(str(tmp_path), "lvs", PLAN, run_parameters=LAB, now=NOW)
    store(first["run_dir"], PLAN[0])
    # the same settings as Jinja may render them (-e key=value gives text, | float gives 1.0)
    same = dict(LAB, port="80", timeout_s=5.0, max_error_pct="1")
    again = open_run(str(tmp_path), "lvs", PLAN, run_parameters=same, now=NOW + datetime.timedelta(minutes=1))
    assert again["run_id"] == first["run_id"] and again["action"] == "resumed" and again["changed"] is False
    assert again["resume_note"] is None and again["done_count"] == 1
    # the stored parameters stay as first given
    saved = json.load(open(os.path.join(first["run_dir"], "run.json")))
    assert saved["run_parameters"] == LAB
    # another setup with the same plan: a new run, and the note says why
    hardware = dict(LAB, inventory_kind="hardware", vip="192.0.2.10")
    other = open_run(str(tmp_path), "lvs", PLAN, run_parameters=hardware, now=NOW + datetime.timedelta(minutes=2))
    assert other["run_id"] == "20261121T153200Z" and other["action"] == "created" and other["done_count"] == 0
    assert other["resume_note"] == (
        'not resuming run 20261121T153000Z (same plan): its run_parameters differ '
        '(inventory_kind: "lab" -> "hardware"; vip: "10.0.0.1" -> "192.0.2.10"); starting a new run. '
        "To continue 20261121T153000Z with the new parameters anyway: -e testbed_run_id=20261121T153000Z "
        "-e testbed_run_force=true (result_run force: true)")
    assert other["plan_text"].splitlines()[-1] == "Note: " + other["resume_note"]
    # back to the lab settings: the lab run is resumed although a newer run has the same plan
    back = open_run(str(tmp_path), "lvs", PLAN, run_parameters=LAB, now=NOW + datetime.timedelta(minutes=3))
    assert back["run_id"] == first["run_id"] and back["done_count"] == 1
    assert back["resume_note"].startswith("resuming run 20261121T153000Z, the newest with this plan and these "
                                          "run_parameters; the newer run 20261121T153200Z has other run_parameters")
    # without run_parameters nothing is compared: the newest run with the plan
    assert open_run(str(tmp_path), "lvs", PLAN, write=False)["run_id"] == "20261121T153200Z"


@pytest.mark.parametrize("old,new,equal", [
    ({"rate": 100}, {"rate": "100"}, True),
    ({"rate": 100}, {"rate": " 100 "}, True),
    ({"rate": 100}, {"rate": 100.0}, True),
    ({"ratio": 0.5}, {"ratio": "0.50"}, True),
    ({"n": 1000}, {"n": "1e3"}, True),
    ({"n": {"a": [1, "2"]}}, {"n": {"a": ["1", 2.0]}}, True),
    ({"rate": 100}, {"rate": 101}, False),
    ({"rate": 100}, {"rate": "100/s"}, False),
    ({"mode": "010"}, {"mode": 10}, False),
    ({"flag": True}, {"flag": "true"}, False),
    ({"flag": True}, {"flag": 1}, False),
    ({"x": None}, {"x": "null"}, False),
    ({"x": None}, {}, False),
    ({"hosts": ["a", "b"]}, {"hosts": ["b", "a"]}, False),
])
def test_run_parameters_comparison(old, new, equal):
    assert (testbed_results_params.parameter_changes(old, new) == []) is equal
    assert (testbed_results_params.parameter_changes(new, old) == []) is equal


def test_parameter_changes_name_nested_keys():
    changes = testbed_results_params.parameter_changes(
        {"iperf3": {"duration_s": 10, "protocol": "tcp"}, "gone": 1},
        {"iperf3": {"duration_s": "30", "protocol": "tcp"}, "new": [1]})
    assert testbed_results_params.describe_changes(changes) == (
        "gone: 1 -> (absent); iperf3.duration_s: 10 -> 30; new: (absent) -> [1]")


def test_explicit_run_id_with_other_run_parameters_needs_force(tmp_path):
    first = open_run(str(tmp_path), "lvs", PLAN, run_id="c1", run_parameters=LAB, now=NOW)
    store(first["run_dir"], PLAN[0])
    before = open(os.path.join(first["run_dir"], "run.json")).read()
    with pytest.raises(ResultError) as err:
        open_run(str(tmp_path), "lvs", PLAN, run_id="c1", run_parameters=dict(LAB, timeout_s=10))
    assert str(err.value) == (
        "run c1 was measured with other run_parameters (timeout_s: 5 -> 10); resuming it would mix two setups "
        "in one run. Start a new run (-e testbed_run_id=new, or auto), or continue this one anyway with "
        "-e testbed_run_id=c1 -e testbed_run_force=true (result_run force: true): run.json then keeps the old "
        "parameters and plan hash in plan_history")
    assert open(os.path.join(first["run_dir"], "run.json")).read() == before
    # equal after normalisation: resumed, nothing written
    same = open_run(str(tmp_path), "lvs", PLAN, run_id="c1", run_parameters=dict(LAB, timeout_s="5"))
    assert same["changed"] is False and open(os.path.join(first["run_dir"], "run.json")).read() == before
    # forced, with a plan extended at the same time
    later = NOW + datetime.timedelta(hours=1)
    bigger = PLAN + [{"variant": "lc", "parameters": {"rate": 1000}, "repetition": 1}]
    forced = open_run(str(tmp_path), "lvs", bigger, run_id="c1", run_parameters=dict(LAB, timeout_s=10),
                      force=True, now=later)
    assert forced["changed"] is True and forced["action"] == "extended" and forced["done_count"] == 1
    saved = json.load(open(os.path.join(first["run_dir"], "run.json")))
    assert saved["run_parameters"] == dict(LAB, timeout_s=10)
    assert [h["event"] for h in saved["plan_history"]] == ["created", "extended", "forced"]
    entry = saved["plan_history"][-1]
    assert entry == {"at": "2026-11-21T16:30:00Z", "event": "forced", "plan_hash": plan_hash(bigger),
                     "points": 5, "added": [], "updated": ["run_parameters"], "changed_keys": ["timeout_s"],
                     "previous_run_parameters": LAB, "previous_plan_hash": plan_hash(PLAN)}
    # the forced parameters are now the run's: resuming with them needs no force
    assert open_run(str(tmp_path), "lvs", bigger, run_id="c1", run_parameters=dict(LAB, timeout_s=10))["changed"] is False


@pytest.mark.parametrize("run_id", ["auto", "new"])
def test_force_needs_an_explicit_run_id(tmp_path, run_id):
    with pytest.raises(ResultError, match=f"force applies to an explicit run_id .* not to run_id {run_id}"):
        open_run(str(tmp_path), "lvs", PLAN, run_id=run_id, force=True)


@pytest.mark.parametrize("content,words", [
    ('{"plan": [', "is not valid JSON"),
    ("[]", "is not a run file of this testbed: it holds a list"),
    ('{"plan": []}', "it has no plan_hash"),
    ('{"plan": [{"variant": "rr"}], "plan_hash": "x"}', "plan[0] has no point_id"),
    ('{"schema_version": 99, "plan": [], "plan_hash": "x"}',
     "it is a run file of schema version 99, newer than this testbed's 1: it was written by a newer testbed"),
    ('{"schema_version": "1", "plan": [], "plan_hash": "x"}', "its schema_version is '1', not a version number"),
])
def test_auto_refuses_an_unreadable_run_file(tmp_path, content, words):
    first = open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    path = os.path.join(first["run_dir"], "run.json")
    with open(path, "w") as handle:
        handle.write(content)
    with pytest.raises(ResultError) as err:
        open_run(str(tmp_path), "lvs", PLAN, now=NOW + datetime.timedelta(minutes=1))
    assert f"run_id auto cannot choose a run: {path} " in str(err.value)
    assert words in str(err.value) and "-e testbed_run_id=new" in str(err.value)
    # new still starts a fresh run beside it
    assert open_run(str(tmp_path), "lvs", PLAN, run_id="new", now=NOW)["run_id"] == "20261121T153000Z-2"


def test_old_run_file_without_newer_keys_is_resumed(tmp_path):
    run_dir = tmp_path / "lvs" / "20251001T100000Z"
    run_dir.mkdir(parents=True)
    plan = testbed_results.normalize_plan(PLAN)
    old = {"schema_version": 1, "experiment": "lvs", "run_id": "20251001T100000Z", "created": "2025-10-01T10:00:00Z",
           "plan": plan, "plan_hash": plan_hash(PLAN), "run_parameters": {"duration_s": 30}}
    (run_dir / "run.json").write_text(json.dumps(old))
    store(str(run_dir), PLAN[0])
    again = open_run(str(tmp_path), "lvs", PLAN, run_parameters={"duration_s": "30"}, report={"title": "LVS"}, now=NOW)
    assert again["run_id"] == "20251001T100000Z" and again["action"] == "resumed" and again["done_count"] == 1
    saved = json.load(open(run_dir / "run.json"))
    assert saved["run_parameters"] == {"duration_s": 30} and saved["report"] == {"title": "LVS"}
    assert [h["event"] for h in saved["plan_history"]] == ["updated"]
    # and with other parameters it is not resumed
    other = open_run(str(tmp_path), "lvs", PLAN, run_parameters={"duration_s": 60}, now=NOW, write=False)
    assert other["action"] == "created" and "duration_s: 30 -> 60" in other["resume_note"]


@pytest.mark.parametrize("run_id", ["../x", "a/b", ".hidden", ""])
def test_unsafe_run_ids_refused(tmp_path, run_id):
    with pytest.raises(ResultError, match="is not a safe name"):
        open_run(str(tmp_path), "lvs", PLAN, run_id=run_id)


def test_check_mode_writes_nothing(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN, now=NOW, write=False)
    assert run["run_id"] == "20261121T153000Z" and run["changed"] is True
    assert "planned: nothing written yet" in run["plan_text"]
    assert os.listdir(str(tmp_path)) == []


# ---------------------------------------------------------------------------
# storing points
# ---------------------------------------------------------------------------

def test_store_point_document_and_raw_files(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    cpu = {"tool": "cpu_sample", "source": "/proc/stat", "metrics": {"cpu_busy_mean_pct": 41.2},
           "valid": True, "reasons": [], "warnings": ["cpu iowait went backwards by 1 jiffies; counted as 0"],
           "details": {}, "raw": "should not be stored"}
    doc = store(run["run_dir"], {"variant": "wrr", "parameters": {"rate": 2000}, "repetition": 1},
                metrics={"reply_rate_avg_per_s": 1999.6, "cpu_busy_mean_pct": 41.2, "replies": 20000,
                         "response_time_ms": None, "scheduler": "wrr", "fd_unavail_seen": False},
                raw={"httperf.txt": "Total: connections 20000\n"}, sources={"cpu": cpu},
                extra={"streams": [1, 2]}, start="2026-11-21T16:30:00+01:00", end=1795275010.25)
    assert doc["point_id"] == "wrr__rate-2000__rep1"
    assert doc["run_id"] == "20261121T153000Z" and doc["experiment"] == "lvs"
    assert doc["units"] == {"reply_rate_avg_per_s": "1/s", "cpu_busy_mean_pct": "%", "replies": "count",
                            "response_time_ms": "ms", "scheduler": None, "fd_unavail_seen": None}
    assert doc["started_at"] == "2026-11-21T15:30:00Z"
    assert doc["finished_at"] == "2026-11-21T15:30:10.250000Z"
    assert doc["duration_s"] == 10.25
    assert doc["raw_files"] == ["raw/wrr__rate-2000__rep1.httperf.txt"]
    assert "raw" not in doc["sources"]["cpu"]
    assert doc["environment"]["hosts"]["director"]["tools"] == {"httperf": "0.9.0", "ipvsadm": None}
    path = os.path.join(run["run_dir"], "wrr__rate-2000__rep1.json")
    with open(path) as handle:
        assert json.load(handle) == doc
    with open(os.path.join(run["run_dir"], "raw", "wrr__rate-2000__rep1.httperf.txt")) as handle:
        assert handle.read() == "Total: connections 20000\n"
    index = json.load(open(os.path.join(run["run_dir"], "index.json")))
    assert index["points"]["wrr__rate-2000__rep1"] == {
        "status": "done", "valid": True, "file": "wrr__rate-2000__rep1.json", "duration_s": 10.25}
    assert index["done"] == 1 and index["pending"] == 3 and index["valid"] == 1


def test_single_host_environment_is_wrapped(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN)
    host = dict(ENV["hosts"]["director"])
    doc = store_point(run["run_dir"], "rr__rate-1000__rep1", {}, True, [], [], host,
                      "2026-11-21T15:30:00Z", "2026-11-21T15:30:01Z")
    assert doc["environment"] == {"hosts": {"director": host}, "controller": {}}


@pytest.mark.parametrize("kwargs,words", [
    ({"point": {"variant": "lc", "parameters": {"rate": 1000}, "repetition": 1}},
     "point lc__rate-1000__rep1 is not in the plan of run"),
    ({"point": {"variant": "rr", "parameters": {"rate": 1000}, "repetition": 1, "point_id": "rr__rep1"}},
     "does not match its variant/parameters/repetition"),
    ({"metrics": {"latency": {"p99_ms": 3}}}, "metrics.latency is {'p99_ms': 3}; expected one of: a finite number, string, boolean, null"),
    ({"metrics": {"rate_per_s": float("nan")}}, "metrics.rate_per_s is nan; expected one of: a finite number"),
    ({"metrics": {"rate_per_s": float("-inf")}}, "metrics.rate_per_s is -inf; expected one of: a finite number"),
    ({"metrics": {"rate_per_s": [1, 2]}}, "metrics.rate_per_s is [1, 2]; expected one of"),
    ({"metrics": {"bad name": 1}}, "metrics has the key 'bad name', which does not match '^[A-Za-z0-9_][A-Za-z0-9_.:-]*$'"),
    ({"metrics": ["rate", 1]}, "metrics must be a flat mapping"),
    ({"valid": False}, "valid is false but reasons is empty"),
    ({"valid": "yes"}, "valid is 'yes'; expected boolean (point document checked against schemas/result-point.schema.json)"),
    ({"start": "2026-11-21T15:30:00"}, "started_at is '2026-11-21T15:30:00' without a timezone"),
    ({"start": "yesterday"}, "started_at is 'yesterday', not an ISO 8601 timestamp"),
    ({"end": "2026-11-21T15:29:59Z"}, "finished_at 2026-11-21T15:29:59Z is before started_at 2026-11-21T15:30:00Z"),
    ({"raw": {"../escape": "x"}}, "raw file name '../escape' is not safe"),
    ({"raw": {"out.txt": 3}}, "raw.out.txt must be text"),
    ({"extra": {"x": float("inf")}}, "extra.x is inf"),
    ({"sources": {"cpu": {"metrics": {"cpu_busy_mean_pct": float("nan")}}}},
     "sources.cpu.metrics.cpu_busy_mean_pct is nan"),
])
def test_store_refusals(tmp_path, kwargs, words):
    run = open_run(str(tmp_path), "lvs", PLAN)
    args = {"point": PLAN[0], "metrics": {"rate_per_s": 1.0}, "valid": True}
    args.update(kwargs)
    point = args.pop("point")
    with pytest.raises(ResultError) as err:
        store(run["run_dir"], point, **args)
    assert words in str(err.value)
    assert not os.path.exists(os.path.join(run["run_dir"], "rr__rate-1000__rep1.json"))


@pytest.mark.parametrize("environment,words", [
    (None, "environment must be a non-empty mapping"),
    ({}, "environment must be a non-empty mapping"),
    ({"controller": {}}, "environment needs a 'hosts' mapping"),
    ({"hosts": {}}, "environment.hosts must be a non-empty mapping"),
    ({"hosts": {"a": {"cpus": "2"}}}, "environment.hosts.a.cpus is '2'; expected integer or null"),
    ({"hosts": {"a": {"tools": {"fio": 3.33}}}}, "environment.hosts.a.tools.fio is 3.33"),
])
def test_bad_environment_refused(tmp_path, environment, words):
    run = open_run(str(tmp_path), "lvs", PLAN)
    with pytest.raises(ResultError) as err:
        store_point(run["run_dir"], PLAN[0], {}, True, [], [], environment,
                    "2026-11-21T15:30:00Z", "2026-11-21T15:30:01Z")
    assert words in str(err.value)


def test_existing_point_needs_overwrite(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN)
    store(run["run_dir"], PLAN[0], raw={"a.txt": "first", "b.txt": "first"})
    with pytest.raises(ResultError, match="already stored .* pass overwrite=true"):
        store(run["run_dir"], PLAN[0], raw={"a.txt": "second"})
    with open(os.path.join(run["run_dir"], "raw", "rr__rate-1000__rep1.a.txt")) as handle:
        assert handle.read() == "first"
    doc = store(run["run_dir"], PLAN[0], metrics={"reply_rate_avg_per_s": 5.0}, raw={"a.txt": "second"},
                overwrite=True)
    assert doc["metrics"] == {"reply_rate_avg_per_s": 5.0}
    raw_dir = os.path.join(run["run_dir"], "raw")
    assert sorted(os.listdir(raw_dir)) == ["rr__rate-1000__rep1.a.txt"]
    with open(os.path.join(raw_dir, "rr__rate-1000__rep1.a.txt")) as handle:
        assert handle.read() == "second"


def test_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    run = open_run(str(tmp_path), "lvs", PLAN)
    before = sorted(os.listdir(run["run_dir"]))
    index_before = open(os.path.join(run["run_dir"], "index.json")).read()

    def broken_dump(document, handle, **kwargs):
        handle.write('{"schema_version": 1, "metr')
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(testbed_parse.json, "dump", broken_dump)
    with pytest.raises(OSError, match="No space left"):
        store(run["run_dir"], PLAN[0], raw={"httperf.txt": "Total: connections 1\n"})
    monkeypatch.undo()
    after = sorted(os.listdir(run["run_dir"]))
    assert [name for name in after if name not in before] == ["raw"]
    assert os.listdir(os.path.join(run["run_dir"], "raw")) == []
    assert not [name for name in after if name.startswith(".tmp-")]
    assert open(os.path.join(run["run_dir"], "index.json")).read() == index_before
    # the point is still pending and can be stored normally
    assert len(open_run(str(tmp_path), "lvs", PLAN)["pending"]) == 4
    store(run["run_dir"], PLAN[0])
    assert len(open_run(str(tmp_path), "lvs", PLAN)["pending"]) == 3


def _no_space(*_args, **_kwargs):
    raise OSError(28, "No space left on device")


def test_a_new_run_that_cannot_be_written_leaves_no_run_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(testbed_results, "write_json_atomic", _no_space)
    with pytest.raises(OSError, match="No space left"):
        open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    assert os.listdir(str(tmp_path / "lvs")) == []          # no empty run beside the real ones
    monkeypatch.undo()
    run = open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    assert run["action"] == "created" and run["run_id"] == "20261121T153000Z"


def test_an_existing_run_is_kept_when_its_run_file_cannot_be_rewritten(tmp_path, monkeypatch):
    run = open_run(str(tmp_path), "lvs", PLAN, run_id="r1")
    store(run["run_dir"], PLAN[0])
    monkeypatch.setattr(testbed_results, "write_json_atomic", _no_space)
    with pytest.raises(OSError):
        open_run(str(tmp_path), "lvs", PLAN + [{"variant": "sh", "parameters": {"rate": 1}, "repetition": 1}],
                 run_id="r1")
    monkeypatch.undo()
    assert open_run(str(tmp_path), "lvs", PLAN, run_id="r1")["done_count"] == 1


def test_a_point_whose_index_cannot_be_refreshed_is_stored_and_says_so(tmp_path, monkeypatch):
    run = open_run(str(tmp_path), "lvs", PLAN)
    monkeypatch.setattr(testbed_results_store, "refresh_index", _no_space)
    with pytest.raises(testbed_results.IndexWriteError) as caught:
        store(run["run_dir"], PLAN[0])
    monkeypatch.undo()
    assert caught.value.doc_path == os.path.join(run["run_dir"], "rr__rate-1000__rep1.json")
    assert testbed_results.is_no_space(caught.value.cause)
    assert open_run(str(tmp_path), "lvs", PLAN)["done_count"] == 1   # the document is the truth


def test_write_error_message_names_the_directory_and_the_full_filesystem():
    full = testbed_results.write_error_message(OSError(28, "No space left on device"), "/r/lvs")
    assert full.startswith("no space left on the filesystem of /r/lvs ([Errno 28] No space left on device); "
                           "nothing half-written was left.")
    assert "run the same command again" in full
    assert testbed_results.is_no_space(OSError(122, "Disk quota exceeded"))
    assert (testbed_results.write_error_message(OSError(13, "Permission denied"), "/r")
            == "cannot write in /r: [Errno 13] Permission denied")


def test_the_modules_say_no_space_left(tmp_path, monkeypatch):
    import result_run
    import result_store

    args = {"results_dir": str(tmp_path), "experiment": "lvs", "plan": PLAN}
    failed, out = run_module(result_run, args)
    assert not failed
    point = {"run_dir": out["run_dir"], "point": out["pending"][0], "metrics": {}, "valid": True, "environment": ENV,
             "started_at": "2026-11-21T15:30:00Z", "finished_at": "2026-11-21T15:30:02Z"}
    monkeypatch.setattr(testbed_parse.json, "dump", _no_space)
    failed, stored = run_module(result_store, point)
    assert failed and stored["msg"].startswith(
        f"result_store: point rr__rate-1000__rep1 was not stored: no space left on the filesystem of {out['run_dir']}")
    failed, opened = run_module(result_run, dict(args, run_id="new"))
    assert failed and opened["msg"].startswith(f"result_run: no space left on the filesystem of {tmp_path}")
    monkeypatch.undo()
    assert sorted(os.listdir(str(tmp_path / "lvs"))) == [out["run_id"]]
    assert not [n for n in os.listdir(out["run_dir"]) if n.endswith(".json") and "__rep" in n]
    monkeypatch.setattr(testbed_results_store, "refresh_index", _no_space)
    failed, stored = run_module(result_store, point)
    assert failed and stored["msg"].startswith(
        f"result_store: the point is stored in {out['run_dir']}/rr__rate-1000__rep1.json, but its index.json")


def test_index_is_rebuilt_from_the_point_files(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN)
    store(run["run_dir"], PLAN[0])
    store(run["run_dir"], PLAN[1], valid=False, reasons=["httperf: fd-unavail 14439"])
    index_path = os.path.join(run["run_dir"], "index.json")
    os.unlink(index_path)
    index = refresh_index(run["run_dir"])
    assert os.path.exists(index_path)
    assert (index["total"], index["done"], index["valid"], index["invalid"], index["pending"]) == (4, 2, 1, 1, 2)
    assert index["points"]["rr__rate-2000__rep1"]["valid"] is False
    # deleting a point file makes it pending again: the point files are the truth
    os.unlink(os.path.join(run["run_dir"], "rr__rate-1000__rep1.json"))
    index = build_index(run["run_dir"])
    assert index["points"]["rr__rate-1000__rep1"] == {"status": "pending", "valid": None, "file": None}
    assert index["done"] == 1
    # a damaged point file is reported and counted as pending, and may be replaced
    with open(os.path.join(run["run_dir"], "wrr__rate-1000__rep1.json"), "w") as handle:
        handle.write('{"trunc')
    index = build_index(run["run_dir"])
    assert index["points"]["wrr__rate-1000__rep1"]["status"] == "corrupt"
    assert index["pending"] == 3
    store(run["run_dir"], PLAN[2])
    assert build_index(run["run_dir"])["points"]["wrr__rate-1000__rep1"]["status"] == "done"


def test_load_run_returns_docs_in_plan_order(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN)
    store(run["run_dir"], PLAN[3])
    store(run["run_dir"], PLAN[1])
    loaded = load_run(run["run_dir"])
    assert loaded["run"]["experiment"] == "lvs"
    assert [d["point_id"] for d in loaded["docs"]] == ["rr__rate-2000__rep1", "wrr__rate-2000__rep1"]
    assert loaded["index"]["done"] == 2
    with pytest.raises(ResultError, match="is not a run directory"):
        load_run(str(tmp_path))


def test_a_fault_is_stored_beside_the_point_and_leaves_it_pending(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    point = {"variant": "wrr", "parameters": {"rate": 2000}, "repetition": 1}
    evidence = [{"component": "lvs-director", "evidence": "virtio_net eth2: NETDEV WATCHDOG: transmit queue 0 timed out"}]
    doc = store(run["run_dir"], point, valid=True, reasons=["the service did not answer"],
                raw={"httperf.txt": "x"}, fault={"attempt": 1, "evidence": evidence})
    assert doc["point_id"] == "wrr__rate-2000__fault1__rep1" and doc["verdict"] == "fault"
    assert doc["valid"] is False and doc["planned_point_id"] == "wrr__rate-2000__rep1" and doc["attempt"] == 1
    assert doc["evidence"] == evidence
    assert doc["reasons"] == ["lab fault, not a result (measured again after recovery): lvs-director: virtio_net eth2: "
                              "NETDEV WATCHDOG: transmit queue 0 timed out", "the service did not answer"]
    assert os.path.exists(os.path.join(run["run_dir"], "wrr__rate-2000__fault1__rep1.json"))
    assert os.path.exists(os.path.join(run["run_dir"], "raw", "wrr__rate-2000__fault1__rep1.httperf.txt"))
    again = open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    assert "wrr__rate-2000__rep1" in [p["point_id"] for p in again["pending"]]
    # the second attempt's fault, numbered by the store itself, and then the real result
    second = store(run["run_dir"], point, fault={"evidence": evidence})
    assert second["point_id"] == "wrr__rate-2000__fault2__rep1" and second["attempt"] == 2
    assert testbed_results_store.fault_documents(run["run_dir"], "wrr__rate-2000__rep1") == [
        "wrr__rate-2000__fault1__rep1.json", "wrr__rate-2000__fault2__rep1.json"]
    store(run["run_dir"], point)
    done = open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    assert "wrr__rate-2000__rep1" not in [p["point_id"] for p in done["pending"]]
    assert [d["point_id"] for d in testbed_results_store.run_documents(run["run_dir"])] == [
        "wrr__rate-2000__fault1__rep1", "wrr__rate-2000__fault2__rep1", "wrr__rate-2000__rep1"]
    with pytest.raises(ResultError, match="fault attempt must be a whole number >= 1"):
        store(run["run_dir"], point, fault={"attempt": 0})
    with pytest.raises(ResultError, match="fault must be a mapping with the evidence"):
        store(run["run_dir"], point, fault="down")


def test_check_mode_store_writes_nothing(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN)
    doc = store(run["run_dir"], PLAN[0], raw={"x.txt": "y"}, write=False)
    assert doc["point_id"] == "rr__rate-1000__rep1"
    assert sorted(os.listdir(run["run_dir"])) == [".lock", "index.json", "run.json"]


def test_merge_source_verdicts():
    sources = {
        "httperf": {"valid": False, "reasons": ["fd-unavail 14439: results meaningless"], "warnings": []},
        "cpu": {"valid": True, "reasons": [], "warnings": ["cpu1 iowait went backwards by 2 jiffies; counted as 0"]},
    }
    valid, reasons, warnings = merge_source_verdicts(None, ["load below target"], [], sources)
    assert valid is False
    assert reasons == ["load below target", "httperf: fd-unavail 14439: results meaningless"]
    assert warnings == ["cpu: cpu1 iowait went backwards by 2 jiffies; counted as 0"]
    assert merge_source_verdicts(None, [], [], {"cpu": sources["cpu"]})[0] is True
    valid, _, warnings = merge_source_verdicts(True, [], [], sources)
    assert valid is True and warnings[-1] == (
        "stored as valid although source(s) httperf reported an invalid measurement")
    with pytest.raises(ResultError, match="no sources to derive it from"):
        merge_source_verdicts(None, [], [], None)


# ---------------------------------------------------------------------------
# the modules
# ---------------------------------------------------------------------------

def test_result_run_and_result_store_modules(tmp_path):
    import result_run
    import result_store

    args = {"results_dir": str(tmp_path), "experiment": "lvs", "plan": PLAN, "estimate_s_per_point": 2}
    failed, out = run_module(result_run, dict(args, _ansible_check_mode=True))
    assert not failed and out["changed"] is True and os.listdir(str(tmp_path)) == []
    failed, out = run_module(result_run, args)
    assert not failed and out["changed"] is True and len(out["pending"]) == 4
    assert "estimated 8 s" in out["plan_text"]
    run_dir = out["run_dir"]

    point = out["pending"][0]
    failed, stored = run_module(result_store, {
        "run_dir": run_dir, "point": point, "metrics": {"reply_rate_avg_per_s": 10.0},
        "sources": {"cpu": {"valid": True, "metrics": {}, "reasons": [], "warnings": []}},
        "environment": ENV["hosts"]["director"], "started_at": "2026-11-21T15:30:00Z",
        "finished_at": "2026-11-21T15:30:02Z"})
    assert not failed, stored
    assert stored["changed"] is True and stored["valid"] is True
    assert stored["path"] == os.path.join(run_dir, "rr__rate-1000__rep1.json")
    controller = stored["document"]["environment"]["controller"]
    assert controller["ansible_core_version"].startswith("2.")
    assert set(controller) == {"ansible_core_version", "python_version", "hostname"}

    failed, again = run_module(result_store, {
        "run_dir": run_dir, "point": point["point_id"], "metrics": {}, "valid": True,
        "environment": ENV, "started_at": "2026-11-21T15:30:00Z", "finished_at": "2026-11-21T15:30:02Z"})
    assert failed and again["msg"].startswith("result_store: point rr__rate-1000__rep1 is already stored")

    failed, out = run_module(result_run, args)
    assert not failed and out["changed"] is False and out["done_count"] == 1 and len(out["pending"]) == 3

    failed, out = run_module(result_run, dict(args, state="status", run_id="nope"))
    assert failed and "no run of experiment lvs matches run_id nope" in out["msg"]
    failed, out = run_module(result_run, dict(args, plan=[{"variant": "rr", "parameters": "rate=1"}]))
    assert failed and out["msg"] == "result_run: plan[0].parameters must be a mapping, got 'rate=1'"


def test_result_run_module_compares_run_parameters(tmp_path):
    import result_run

    args = {"results_dir": str(tmp_path), "experiment": "lvs", "plan": PLAN, "run_id": "c1",
            "run_parameters": {"duration_s": 30}}
    failed, out = run_module(result_run, args)
    assert not failed and out["resume_note"] is None
    failed, out = run_module(result_run, dict(args, run_parameters={"duration_s": "60"}))
    assert failed and out["msg"].startswith(
        "result_run: run c1 was measured with other run_parameters (duration_s: 30 -> 60)")
    assert "-e testbed_run_id=c1 -e testbed_run_force=true" in out["msg"]
    failed, out = run_module(result_run, dict(args, run_parameters={"duration_s": "60"}, force=True))
    assert not failed and out["changed"] is True
    failed, out = run_module(result_run, dict(args, run_id="auto", run_parameters={"duration_s": 30}))
    assert not failed and out["action"] == "created" and "duration_s: 60 -> 30" in out["resume_note"]
    failed, out = run_module(result_run, dict(args, run_id="auto", force=True))
    assert failed and "force applies to an explicit run_id" in out["msg"]


def test_merge_source_verdicts_does_not_repeat_a_reason_the_point_already_has():
    sources = {"xz": {"valid": False, "reasons": ["xz printed no speed"], "warnings": ["threads null"]}}
    valid, reasons, warnings = merge_source_verdicts(False, ["xz printed no speed"], ["threads null"], sources)
    assert reasons == ["xz printed no speed"]
    assert warnings == ["threads null"]
    valid, reasons, warnings = merge_source_verdicts(False, ["other"], [], sources)
    assert reasons == ["other", "xz: xz printed no speed"]


def test_a_point_document_of_a_newer_schema_is_refused_not_resumed_over(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    doc = store(run["run_dir"], PLAN[0])
    path = os.path.join(run["run_dir"], doc["point_id"] + ".json")
    saved = json.load(open(path))
    saved["schema_version"] = 2
    with open(path, "w") as handle:
        json.dump(saved, handle)
    with pytest.raises(ResultError) as err:
        open_run(str(tmp_path), "lvs", PLAN, run_id=run["run_id"], now=NOW)
    assert str(err.value) == (f"{path}: it is a point document of schema version 2, newer than this testbed's 1: "
                              "it was written by a newer testbed; use that version to resume or render it")


def test_the_run_directory_is_fsynced_after_each_rename(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync

    def fsync(fd):
        path = os.readlink(f"/proc/self/fd/{fd}")
        if os.path.isdir(path):
            synced.append(path)
        return real_fsync(fd)
    monkeypatch.setattr(os, "fsync", fsync)
    run = open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    before = len(synced)
    store(run["run_dir"], PLAN[0])
    assert run["run_dir"] in synced[:before] and synced[before:].count(run["run_dir"]) >= 2  # document + index


def test_leftover_temp_files_finds_what_a_killed_write_leaves(tmp_path, monkeypatch):
    run = open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    store(run["run_dir"], PLAN[0])
    assert leftover_temp_files(run["run_dir"]) == []

    def killed(src, dst):
        raise KeyboardInterrupt  # the write is interrupted between the temp file and the rename
    monkeypatch.setattr(os, "rename", killed)
    monkeypatch.setattr(os, "unlink", lambda path: None)  # and its cleanup never runs
    with pytest.raises(KeyboardInterrupt):
        store(run["run_dir"], PLAN[1])
    left = leftover_temp_files(run["run_dir"])
    assert left and all(os.path.basename(p).startswith(".tmp-") for p in left)



def test_remeasure_invalid_lists_invalid_points_as_pending_and_keeps_the_old_one(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    store(run["run_dir"], PLAN[0])
    store(run["run_dir"], PLAN[1], valid=False, reasons=["fd-unavail errors: the client was the limit"])
    plain = open_run(str(tmp_path), "lvs", PLAN, now=NOW)
    assert [p["point_id"] for p in plain["pending"]] == ["wrr__rate-1000__rep1", "wrr__rate-2000__rep1"]
    again = open_run(str(tmp_path), "lvs", PLAN, now=NOW, remeasure_invalid=True)
    assert [p["point_id"] for p in again["pending"]] == [
        "rr__rate-2000__rep1", "wrr__rate-1000__rep1", "wrr__rate-2000__rep1"]
    listed = {p["point_id"]: p for p in again["points"]}
    assert listed["rr__rate-2000__rep1"]["remeasure"] is True and listed["rr__rate-2000__rep1"]["done"] is False
    assert "1 done, 3 to run" in again["plan_text"]
    # a valid point is never replaced that way; the invalid one is, and is kept under superseded/
    with pytest.raises(ResultError, match="already stored"):
        store(run["run_dir"], PLAN[0], replace_invalid=True)
    store(run["run_dir"], PLAN[1], replace_invalid=True, raw={"httperf.txt": "second"})
    kept = os.path.join(run["run_dir"], "superseded", "rr__rate-2000__rep1.1", "rr__rate-2000__rep1.json")
    assert json.load(open(kept))["valid"] is False
    assert open_run(str(tmp_path), "lvs", PLAN, now=NOW, remeasure_invalid=True)["done_count"] == 2


PROV = {"testbed": {"version": "v1-3-gabc", "commit": "a" * 40, "dirty": False, "source": "git"},
        "command": ["ansible-playbook", "playbooks/lvs-compare.yml", "-i", "inventories/lab"], "extra_vars": [],
        "cwd": "/repo", "ansible_core_version": "2.19.14", "collections": {"community.general": "11.4.2"},
        "python_version": "3.11.2", "controller": "lab"}


def test_every_run_and_point_names_its_code_and_command(tmp_path):
    run = open_run(str(tmp_path), "lvs", PLAN, now=NOW, provenance=PROV)
    saved = json.load(open(os.path.join(run["run_dir"], "run.json")))
    assert [dict(i, at=None) for i in saved["invocations"]] == [dict(PROV, at=None)]
    doc = store(run["run_dir"], PLAN[0])
    assert doc["environment"]["controller"]["provenance"]["testbed"]["commit"] == "a" * 40
    # the same invocation again changes nothing; another one (uncommitted changes, other -e) is appended
    again = open_run(str(tmp_path), "lvs", PLAN, now=NOW, provenance=PROV)
    assert again["changed"] is False
    other = dict(PROV, testbed=dict(PROV["testbed"], dirty=True), extra_vars=["lvs_compare_rates=[50]"])
    open_run(str(tmp_path), "lvs", PLAN, now=NOW, provenance=other)
    saved = json.load(open(os.path.join(run["run_dir"], "run.json")))
    assert len(saved["invocations"]) == 2 and saved["invocations"][-1]["testbed"]["dirty"] is True
    assert store(run["run_dir"], PLAN[1])["environment"]["controller"]["provenance"]["extra_vars"] == [
        "lvs_compare_rates=[50]"]
    with pytest.raises(ResultError, match="provenance must be a mapping"):
        open_run(str(tmp_path), "lvs", PLAN, provenance="git")


def test_provenance_of_this_checkout_and_its_sentence(tmp_path):
    from ansible.module_utils.testbed_results.provenance import describe, provenance
    from conftest import ROOT
    mine = provenance(ROOT, ["ansible-playbook", "x.yml"], ["a=1"], "2.19.14", {"community.general": "11.4.2"})
    assert mine["testbed"]["source"] == "git" and len(mine["testbed"]["commit"]) == 40
    assert isinstance(mine["testbed"]["dirty"], bool)
    elsewhere = provenance(str(tmp_path), ["ansible-playbook", "x.yml"], [], "2.19.14", galaxy_version="1.0.0")
    assert elsewhere["testbed"] == {"version": "1.0.0", "commit": None, "dirty": None, "source": "installed"}
    assert describe(PROV) == ("testbed v1-3-gabc (commit aaaaaaaaaaaa, clean); ansible-core 2.19.14, Python 3.11.2 on "
                              "lab; command: ansible-playbook playbooks/lvs-compare.yml -i inventories/lab")
    assert describe(elsewhere).startswith("testbed 1.0.0 (installed, no git); ansible-core 2.19.14")
    assert describe(None) is None


def test_the_report_header_names_the_code_and_command(tmp_path):
    import io

    from ansible.module_utils.testbed_reports.make import make_report
    run = open_run(str(tmp_path), "lvs", PLAN, now=NOW, provenance=PROV, report={"x": "rate"})
    store(run["run_dir"], PLAN[0])
    make_report(run["run_dir"], formats=("md",), out=io.StringIO())
    report = open(os.path.join(run["run_dir"], "report.md")).read()
    assert ("code and command: testbed v1-3-gabc (commit aaaaaaaaaaaa, clean); ansible-core 2.19.14, Python 3.11.2 "
            "on lab; command: ansible-playbook playbooks/lvs-compare.yml -i inventories/lab") in report
    assert "provenance" not in report.split("## Environment")[1]


def test_named_documents_reads_every_point_and_fault_document_and_refuses_a_half_written_one(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"run_id": "r", "plan": []}))
    (run / "index.json").write_text(json.dumps({"points": {}}))
    (run / "a__rep1.json").write_text(json.dumps({"point_id": "a__rep1", "verdict": "valid"}))
    (run / "a__fault1__rep1.json").write_text(json.dumps({"point_id": "a__rep1", "verdict": "fault"}))
    (run / "notes.json").write_text(json.dumps({"not": "a document"}))
    assert sorted(testbed_results_store.named_documents(str(run))) == ["a__fault1__rep1", "a__rep1"]
    (run / "b__rep1.json").write_text('{"point_id": "b__rep1", "met')
    with pytest.raises(ValueError, match=r"b__rep1.json is not a whole JSON document"):
        testbed_results_store.named_documents(str(run))
