"""One LVS comparison point from REAL lab outputs (roles/lvs_compare/module_utils/testbed_lvs.py, roles/lvs_compare/library/lvs_point.py).

tests/fixtures/lvs/<case>/ holds what the sweep collects for one point, captured in the lab
(director VM with kernel IPVS, 3 Apache real servers, 2 httperf clients, wrr weights 3:2:1,
60 conn/s x 600 connections split over 2 hosts x 2 processes):

* ``lvs-client<N>.json`` - the ``lvs-httperf-run`` document of each client;
* ``director-counters.txt`` - ``lvs-director-stats --after <end> --zero``;
* ``cpu.<host>.txt`` - ``testbed-cpu-window`` lines of each host's sampler;
* ``window.txt`` - first start / last end of the load.

``wrr-dead-web2`` is the same load with the lvs-web2 container stopped (docker stop): IPVS
still sends it a third of the connections, which time out at the client.
"""
import json
import os
import re

import lvs_point
import pytest
import result_store
from ansible.module_utils.testbed_lvs import (
    PointError,
    aggregate_httperf,
    evaluate_point,
    summary_line,
)
from ansible.module_utils.testbed_results import open_run
from conftest import fixture_path, read_fixture
from helpers import run_module

ROLES = (("lvs-director", "director"), ("lvs-web1", "real_server"), ("lvs-web2", "real_server"),
         ("lvs-web3", "real_server"), ("lvs-client1", "client"), ("lvs-client2", "client"))
REAL_SERVERS = [{"host": "lvs-web%d" % i, "address": "10.250.2.1%d" % i, "port": 80, "weight": w}
                for i, w in ((1, 3), (2, 2), (3, 1))]


def _read(case, name):
    return read_fixture(os.path.join("lvs", case), name)


def _inputs(case, dead=None):
    clients = [{"host": h, "stdout": _read(case, h + ".json"), "failed": False} for h in ("lvs-client1", "lvs-client2")]
    collect = {h: {"role": role, "stdout": "=== cpu\n" + _read(case, "cpu.%s.txt" % h), "failed": False}
               for h, role in ROLES}
    if dead:
        collect[dead] = {"role": "real_server", "stdout": "", "failed": True,
                         "msg": "Error response from daemon: Container is not running"}
    return clients, collect


def _evaluate(case, dead=None, **options):
    clients, collect = _inputs(case, dead)
    return evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600,
                          director_counters=_read(case, "director-counters.txt"), **options)


def test_valid_point_every_source():
    result = _evaluate("wrr-weighted-60")
    m = result["metrics"]
    assert result["reasons"] == [] and result["warnings"] == []
    # 4 processes x 150 connections at 15 conn/s, summed.
    assert (m["connections"], m["replies"], m["httperf_processes"], m["client_hosts"]) == (600, 600, 4, 2)
    assert m["connection_rate_per_s"] == 60.4 and m["requested_rate_per_s"] == 60.0
    assert m["achieved_rate_pct"] == 100.6667
    # response 6.6, 5.8, 4.2, 4.5 ms with 150 replies each -> 5.275 ms
    assert m["response_time_ms"] == 5.275
    assert m["httperf_cpu_max_pct"] == 46.7
    assert m["errors_total"] == 0 and m["errors_fd_unavail"] == 0 and m["error_pct"] == 0.0
    # wrr 3:2:1 -> exactly 300/200/100; raw Jain 0.857, per weight 1.0
    assert [m["ipvs_conns_lvs-web%d" % i] for i in (1, 2, 3)] == [300, 200, 100]
    assert m["ipvs_conns_total"] == 600 and m["ipvs_conns_max_share_pct"] == 50.0
    assert m["fairness_jain"] == 0.8571 and m["fairness_jain_weighted"] == 1.0
    assert (m["ipvs_in_packets"], m["ipvs_out_packets"], m["ipvs_in_bytes"], m["ipvs_out_bytes"]) == (
        3600, 2400, 230400, 292800)
    assert result["started"] == 1795281209.719 and result["finished"] == 1795281219.716
    assert result["load_seconds"] == 9.997
    assert sorted(result["sources"]) == ["httperf.lvs-client1.0", "httperf.lvs-client1.1", "httperf.lvs-client2.2",
                                         "httperf.lvs-client2.3", "ipvsadm"]
    assert all(s["valid"] for s in result["sources"].values())
    assert "httperf.lvs-client2.3.txt" in result["raw"] and "ipvsadm-stats.txt" in result["raw"]


def test_valid_point_cpu_of_every_host():
    m = _evaluate("wrr-weighted-60")["metrics"]
    # The director VM's own /proc/stat; the containers' own cgroups (percent of one CPU).
    assert (m["director_cpu_busy_pct"], m["director_cpu_softirq_pct"], m["director_cpu_system_pct"]) == (
        4.802, 3.672, 0.424)
    assert [m["cpu_lvs-web%d_cgroup_pct" % i] for i in (1, 2, 3)] == [1.759, 1.194, 0.654]
    assert (m["cpu_lvs-client1_cgroup_pct"], m["cpu_lvs-client2_cgroup_pct"]) == (80.384, 84.101)
    assert (m["real_servers_cpu_max_pct"], m["real_servers_cpu_mean_pct"]) == (1.759, 1.202)
    assert (m["clients_cpu_max_pct"], m["clients_cpu_mean_pct"]) == (84.101, 82.243)
    # /proc/stat seen from a container is the whole (2-core, saturated) machine.
    assert m["lab_machine_cpu_busy_pct"] == 100.0


def test_dead_real_server_is_an_invalid_verdict_not_a_number():
    result = _evaluate("wrr-dead-web2", dead="lvs-web2")
    m = result["metrics"]
    assert m["errors_client_timo"] == 200 and m["errors_total"] == 200 and m["error_pct"] == 33.3333
    assert m["replies"] == 400 and m["connection_rate_per_s"] == 40.3
    # response 3.9, 5.5 (99 replies each), 3.6, 3.4 (101 each) -> 4.094 ms
    assert m["response_time_ms"] == 4.094
    assert result["reasons"] == [
        "the processes together achieved 40.3 conn/s, 67.2 % of the requested 60 conn/s (below min_rate_ratio 0.9)",
        "errors dominate: 33.33 % of the connections failed (max_error_pct 1.0 %)"]
    assert result["warnings"] == ["no CPU samples from lvs-web2 (real_server): Error response from daemon: "
                                  "Container is not running"]
    assert "cpu_lvs-web2_cgroup_pct" not in m
    # IPVS still scheduled 200 connections to it; none came back.
    assert m["ipvs_conns_lvs-web2"] == 200 and m["ipvs_out_packets"] == 1600
    # Every process judged itself invalid too (errors, rate).
    assert all(s["valid"] is False for name, s in result["sources"].items() if name.startswith("httperf."))


def test_a_load_the_watchdog_stopped_says_so_first_and_names_each_stopped_runner():
    clients, collect = _inputs("wrr-dead-web2", dead="lvs-web2")
    doc = json.loads(clients[0]["stdout"])
    doc["stopped_after_s"] = 12.25
    clients[0] = dict(clients[0], stdout=json.dumps(doc))
    finding = "stopped the load 12 s in: lvs-web2 (10.250.2.12 port 80) did not answer 2 probes 5 s apart"
    result = evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600,
                            director_counters=_read("wrr-dead-web2", "director-counters.txt"), watchdog=finding,
                            read_after=0.0)
    assert result["reasons"][0] == "the watchdog " + finding
    assert "the load runner on lvs-client1 was stopped (SIGTERM) 12.2 s after the load started" in result["reasons"]
    assert result["retry"] == [] and result["retry_next"] == []   # a fault, not a timetable question
    # without the finding, the same loads give the old reasons (and the stopped runner)
    plain = _evaluate("wrr-dead-web2", dead="lvs-web2")
    assert not any(r.startswith("the watchdog") for r in plain["reasons"])


def test_counters_zeroed_after_the_start_invalidate():
    result = _evaluate("wrr-weighted-60", counters_zeroed_at=1795281210.219)
    assert result["reasons"] == [
        "the director's counters were zeroed 0.50 s after this point's load had started (the previous point's "
        "counter read came late), so its first connections were not counted"]
    assert _evaluate("wrr-weighted-60", counters_zeroed_at=1795281207.0)["reasons"] == []


def test_director_clock_ahead_is_not_a_late_reset():
    # The director's clock 0.76 s ahead of the controller's (a qemu guest's RTC start), the
    # clients' in step: its reset at 1795281210.219 (its clock) was 0.26 s before the load.
    offsets = {"lvs-director": {"offset_s": 0.76, "uncertainty_s": 0.02}}
    result = _evaluate("wrr-weighted-60", counters_zeroed_at=1795281210.219, clock_offsets=offsets)
    assert result["reasons"] == []
    assert result["details"]["clock"] == {"lvs-director": {"offset_s": 0.76, "uncertainty_s": 0.02}}
    # A lateness within the clocks' error bound is not counted either; beyond it, it is.
    offsets = {"lvs-director": {"offset_s": 0.1, "uncertainty_s": 0.45}}
    assert _evaluate("wrr-weighted-60", counters_zeroed_at=1795281210.219, clock_offsets=offsets)["reasons"] == []
    offsets = {"lvs-director": 0.1, "lvs-client1": {"offset_s": 0.0, "uncertainty_s": 0.05}}
    reasons = _evaluate("wrr-weighted-60", counters_zeroed_at=1795281210.219, clock_offsets=offsets)["reasons"]
    assert reasons and reasons[0].startswith("the director's counters were zeroed 0.40 s after")


def test_client_clocks_are_put_on_the_controller_time_line():
    # Both clients 100 s behind: the window moves to the controller's time, the length stays.
    offsets = {"lvs-client1": -100.0, "lvs-client2": -100.0}
    result = _evaluate("wrr-weighted-60", clock_offsets=offsets)
    assert result["started"] == pytest.approx(1795281309.719) and result["finished"] == pytest.approx(1795281319.716)
    assert result["load_seconds"] == 9.997
    # Each host's samples are cut in its own clock: the clients' still cover the window,
    # the others' (not shifted) now lie 100 s before it.
    assert result["metrics"]["clients_cpu_max_pct"] == 84.101
    assert any("lvs-director CPU samples" in w for w in result["warnings"])


def test_clock_offsets_must_be_numbers():
    with pytest.raises(PointError, match=r"clock_offsets\[lvs-director\]: offset_s must be a number"):
        _evaluate("wrr-weighted-60", clock_offsets={"lvs-director": {"offset_s": "soon"}})
    with pytest.raises(PointError, match="clock_offsets must be a mapping"):
        _evaluate("wrr-weighted-60", clock_offsets=[0.5])
    with pytest.raises(PointError, match=r"clock_offsets\[lvs-client1\]: uncertainty_s must be a number"):
        _evaluate("wrr-weighted-60", clock_offsets={"lvs-client1": {"offset_s": 0.1, "uncertainty_s": "small"}})


def test_director_not_read():
    result = _evaluate("wrr-weighted-60")
    clients, collect = _inputs("wrr-weighted-60")
    missing = evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600,
                             director_counters="=== prev-missing\n/var/tmp/testbed-lvs/counters/x.txt\n")
    assert missing["reasons"][0].startswith("the director's counters were not read (no ipvsadm-stats")
    assert missing["metrics"]["ipvs_conns_total"] is None and missing["metrics"]["fairness_jain"] is None
    # the same metric names either way (the report needs them)
    assert set(missing["metrics"]) == set(result["metrics"])


def test_prefixed_sections_accepted():
    text = "=== prev-ipvsadm-stats\n" + _read("wrr-weighted-60", "director-counters.txt").split("=== ipvsadm-stats\n")[1]
    text = text.replace("=== zeroed-at", "=== prev-zeroed-at")
    clients, collect = _inputs("wrr-weighted-60")
    result = evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600, director_counters=text)
    assert result["metrics"]["ipvs_conns_lvs-web1"] == 300


def test_wrong_virtual_service():
    clients, collect = _inputs("wrr-weighted-60")
    result = evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.99", 80, 60, 600,
                            director_counters=_read("wrr-weighted-60", "director-counters.txt"))
    assert result["reasons"] == ["the director's table has no virtual service 10.250.1.99:80"]


def test_failed_client_is_a_reason():
    clients, collect = _inputs("wrr-weighted-60")
    clients[1] = {"host": "lvs-client2", "stdout": "", "failed": True, "msg": "container not running"}
    result = evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600,
                            director_counters=_read("wrr-weighted-60", "director-counters.txt"))
    assert "load client lvs-client2 failed: container not running" in result["reasons"]
    # client1 alone made half the load
    assert result["metrics"]["connections"] == 300 and result["metrics"]["achieved_rate_pct"] == 50.3333
    assert any(r.startswith("the processes together achieved 30.2 conn/s") for r in result["reasons"])


def test_no_client_result_at_all_fails():
    _clients, collect = _inputs("wrr-weighted-60")
    with pytest.raises(PointError, match="no load client produced a result"):
        evaluate_point([{"host": "c", "stdout": "garbage", "failed": False}], collect, REAL_SERVERS,
                       "10.250.1.10", 80, 60, 600)


def test_truncated_httperf_report_is_a_reason():
    clients, collect = _inputs("wrr-weighted-60")
    doc = json.loads(clients[0]["stdout"])
    doc["processes"][0]["stdout"] = doc["processes"][0]["stdout"].split("Errors:")[0]
    clients[0]["stdout"] = json.dumps(doc)
    result = evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600,
                            director_counters=_read("wrr-weighted-60", "director-counters.txt"))
    assert result["reasons"][0].startswith("httperf.lvs-client1.0 exited 0 and its report is unusable")
    assert "1 of 4 httperf processes gave no usable report; the totals are incomplete" in result["reasons"]


def test_aggregate_of_no_process():
    assert aggregate_httperf([], 10)["httperf_processes"] == 0


def test_summary_line():
    m = _evaluate("wrr-weighted-60")["metrics"]
    assert summary_line("[4/30] wrr @ 60 conn/s rep 1", m, True, []) == (
        "[4/30] wrr @ 60 conn/s rep 1: valid, 60.4 of 60 conn/s, response 5.3 ms, 0 errors, Jain 0.857, "
        "director CPU 5 %")


def _args(tmp_path, case, dead=None, **extra):
    clients, collect = _inputs(case, dead)
    plan = [{"variant": "wrr", "parameters": {"rate": 60, "num_conns": 600}, "repetition": 1}]
    args = {"point": plan[0], "clients": clients, "collect": collect,
            "real_servers": REAL_SERVERS, "vip": "10.250.1.10", "requested_rate": 60, "num_conns": 600,
            "director_counters": _read(case, "director-counters.txt"),
            "environment": {"hosts": {"lvs-director": {"hostname": "lvs-director", "kernel": "6.1.0-56-amd64"}}},
            "label": "[1/1] wrr @ 60 conn/s rep 1"}
    args.update(extra)
    return args


def _store(tmp_path, result):
    """What the sweep does with lvs_point's result (roles/testbed_sweep, tasks/store.yml: result_store)."""
    run = open_run(str(tmp_path), "lvs_compare", [result["point"]], run_id="test")
    keys = ("point", "metrics", "valid", "reasons", "warnings", "sources", "raw", "extra", "environment",
            "started_at", "finished_at")
    return run_module(result_store, dict({k: result[k] for k in keys}, run_dir=run["run_dir"]))


def test_module_returns_the_point_the_sweep_stores(tmp_path):
    failed, result = run_module(lvs_point, _args(tmp_path, "wrr-weighted-60"))
    assert failed is False, result
    assert result["valid"] is True and result["point_id"] == "wrr__num_conns-600_rate-60__rep1"
    assert result["changed"] is False and result["result"]["suspect"] is False
    assert os.listdir(str(tmp_path)) == []   # it writes nothing
    failed, stored = _store(tmp_path, result["result"])
    assert failed is False, stored
    with open(stored["path"]) as handle:
        doc = json.load(handle)
    assert doc["valid"] is True and doc["metrics"]["ipvs_conns_lvs-web3"] == 100
    assert doc["units"]["response_time_ms"] == "ms" and doc["units"]["ipvs_conns_lvs-web1"] == "count"
    assert doc["duration_s"] == 9.997
    assert doc["environment"]["controller"]["ansible_core_version"]
    assert sorted(doc["raw_files"])[0] == "raw/wrr__num_conns-600_rate-60__rep1.cpu.lvs-client1.txt"
    assert os.path.exists(os.path.join(os.path.dirname(stored["path"]), doc["raw_files"][0]))
    assert result["msg"].startswith("[1/1] wrr @ 60 conn/s rep 1: valid, 60.4 of 60 conn/s")


def test_module_dead_real_server_invalid(tmp_path):
    failed, result = run_module(lvs_point, _args(tmp_path, "wrr-dead-web2", dead="lvs-web2"))
    assert failed is False, result
    assert result["valid"] is False
    assert "errors dominate: 33.33 % of the connections failed (max_error_pct 1.0 %)" in result["reasons"]
    # the processes' own verdicts are folded in, named after their source
    assert any(r.startswith("httperf.lvs-client1.0: ") for r in result["reasons"])
    assert "INVALID" in result["msg"]


def test_module_marks_a_point_with_errors_suspect_for_the_lab_check(tmp_path):
    """A point with failed connections is suspect: the sweep probes the lab before storing it."""
    failed, result = run_module(lvs_point, _args(tmp_path, "wrr-dead-web2", dead="lvs-web2"))
    assert failed is False, result
    held = result["result"]
    assert held["suspect"] is True and held["valid"] is False
    assert held["metrics"]["errors_total"] == 200 and held["point"]["variant"] == "wrr"
    assert "httperf.lvs-client1.0.txt" in held["raw"] and held["environment"]["controller"]


def test_module_bad_input_is_a_message(tmp_path):
    args = _args(tmp_path, "wrr-weighted-60", clients=[])
    failed, result = run_module(lvs_point, args)
    assert failed is True and result["msg"].startswith("lvs_point: clients must be a non-empty list")
    assert fixture_path("lvs", "wrr-weighted-60")


def _with_total(text, conns):
    return re.sub(r"^(TCP\s+10\.250\.1\.10:80\s+)600\b", lambda m: m.group(1) + str(conns), text, flags=re.M)


def _timetabled(case, tick_at, zeroed_at, conns=None):
    """The director's read as the timetable's job writes it: the counters, the tick it saw, the zeroing."""
    text = _read(case, "director-counters.txt")
    if conns is not None:   # the count of a point whose boundary was crossed
        text = _with_total(text, conns)
    stats = text[text.index("=== ipvsadm-stats"):text.index("=== zeroed-at")]
    return "=== settled\ntick 0.70\n=== tick-at\n%s\n%s=== zeroed-at\n%s\n" % (tick_at, stats, zeroed_at)


def test_timetabled_read_with_a_clean_boundary_is_kept():
    # load 1795281209.719-.716; the tick 0.5 s after the end, the next load 0.5 s after the tick
    result = _evaluate("wrr-weighted-60", read_after=1795281219.916, next_start=1795281220.716, tick_period=2.0176)
    assert result["retry"] == [] and result["reasons"] == []
    clients, collect = _inputs("wrr-weighted-60")
    text = _timetabled("wrr-weighted-60", "1795281220.216", "1795281220.516")
    kept = evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600, director_counters=text,
                          read_after=1795281219.916, next_start=1795281220.716, tick_period=2.0176)
    assert kept["retry"] == [] and kept["reasons"] == []
    assert kept["details"]["timetable"]["tick_at_director"] == "1795281220.216"
    # read and zeroed after the next load had started, before the following tick: still exact
    late = evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600,
                          director_counters=_timetabled("wrr-weighted-60", "1795281220.216", "1795281221.0"),
                          read_after=1795281219.916, next_start=1795281220.716, tick_period=2.0176)
    assert late["retry"] == []


def test_timetabled_read_across_the_boundary_is_measured_again():
    clients, collect = _inputs("wrr-weighted-60")
    # the next load started before the tick and the director counted its first connections here
    crossed = evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600,
                             director_counters=_timetabled("wrr-weighted-60", "1795281220.216", "1795281220.5", 612),
                             read_after=1795281219.916, next_start=1795281220.0, tick_period=2.0)
    assert len(crossed["retry"]) == 1 and "next load started 0.22 s before the tick" in crossed["retry"][0]
    # the clocks say crossed, but the counts agree: nothing crossed, nothing to measure again
    same = evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600,
                          director_counters=_timetabled("wrr-weighted-60", "1795281220.216", "1795281220.5"),
                          read_after=1795281219.916, next_start=1795281220.0, tick_period=2.0)
    assert same["retry"] == []
    # no tick seen, and the load was still running when the read was due
    text = _with_total(_read("wrr-weighted-60", "director-counters.txt"), 590)
    late = evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600, director_counters=text,
                          read_after=1795281219.0, next_start=None)
    assert len(late["retry"]) == 1 and "ended 0.72 s after the counter read was due" in late["retry"][0]


def _switched(case, switched_at=None, answer="-A -t 10.250.1.10:80 -s wlc"):
    """A timetabled read that switched the scheduler after reading (switched_at None: the switch failed)."""
    text = _timetabled(case, "1795281220.216", "1795281220.516")
    text += "=== switch\n"
    if switched_at is not None:
        text += "=== switched-at\n%s\n=== switch-table\n%s\n" % (switched_at, answer)
    else:
        text += "%s\n" % answer
    return text


def test_a_switch_made_by_the_read_is_checked_for_the_next_point():
    clients, collect = _inputs("wrr-weighted-60")

    def evaluate(text):
        return evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600, director_counters=text,
                              read_after=1795281219.916, next_start=1795281221.016, tick_period=2.0176,
                              switch_to="wlc")
    # switched before the next load started: both points are fine
    done = evaluate(_switched("wrr-weighted-60", "1795281220.700"))
    assert done["retry"] == [] and done["retry_next"] == [] and done["reasons"] == []
    assert done["details"]["timetable"]["switched_at_director"] == "1795281220.700"
    # switched after the next load had started: only the next point is measured again
    late = evaluate(_switched("wrr-weighted-60", "1795281221.316"))
    assert late["retry"] == [] and late["reasons"] == []
    assert late["retry_next"] == ["the director switched to wlc 0.30 s after the next load started"]
    # the switch failed: its answer is the evidence
    failed = evaluate(_switched("wrr-weighted-60", None, "lvs-director-switch: unknown scheduler 'wlc'"))
    assert failed["retry_next"] == ["the director's switch to wlc failed (lvs-director-switch: unknown scheduler 'wlc')"]
    # no switch asked: nothing to check
    plain = evaluate_point(clients, collect, REAL_SERVERS, "10.250.1.10", 80, 60, 600,
                           director_counters=_switched("wrr-weighted-60", None, "x"),
                           read_after=1795281219.916, next_start=1795281221.016, tick_period=2.0176)
    assert plain["retry_next"] == []


def test_module_hands_back_why_the_next_point_is_measured_again(tmp_path):
    args = _args(tmp_path, "wrr-weighted-60")
    args.update(director_counters=_switched("wrr-weighted-60", "1795281221.316"), read_after=1795281219.916,
                next_start=1795281221.016, switch_to="wlc")
    failed, out = run_module(lvs_point, args)
    assert failed is False, out
    # this point is to be stored: its counts were read before the switch
    assert out["retry"] is False and out["valid"] is True
    assert out["retry_next"] == ["the director switched to wlc 0.30 s after the next load started"]


def test_module_says_a_point_is_to_be_measured_again(tmp_path):
    args = _args(tmp_path, "wrr-weighted-60")
    args.update(director_counters=_timetabled("wrr-weighted-60", "1795281220.216", "1795281220.5", 612),
                read_after=1795281219.916, next_start=1795281220.0)
    failed, out = run_module(lvs_point, args)
    assert failed is False, out
    assert out["retry"] is True and out["retry_reasons"]
    assert out["timetable"]["next_start"] == 1795281220.0
