"""The LVS experiment's fidelity check (roles/lvs_compare: tasks/fidelity.yml, fidelity_pair.yml).

The run by hand starts the load runner's own httperf command lines (filter lvs_hand_commands,
checked here against roles/lvs_client/files/lvs-httperf-run itself), its reports are added up
(lvs_hand_result) and paired with the harness's lvs_point figure (lvs_fidelity_pair); the pairs
go into the first point's extra.fidelity_pairs, which fidelity_from_points reads.
"""
import json
import os
import subprocess
import sys

import lvs_point
import pytest
from ansible.module_utils.testbed_stats.fidelity import fidelity_from_points
from conftest import ROOT, read_fixture
from helpers import run_module
from lvs_compare import (
    AnsibleFilterError,
    FilterModule,
    lvs_fidelity_pair,
    lvs_hand_commands,
    lvs_hand_result,
)

RUNNER = os.path.join(ROOT, "roles", "lvs_client", "files", "lvs-httperf-run")
CASE = os.path.join("lvs", "wrr-weighted-60")
CLIENTS = ("lvs-client1", "lvs-client2")


def _runner_plan(rate, num_conns, hosts, host_index, processes, hog=True, timeout=5, port=80, uri="/"):
    """What the load runner runs: its JSON, with `true` standing in for httperf (it runs nothing)."""
    argv = [sys.executable, RUNNER, "--server", "10.250.1.10", "--port", str(port), "--uri", uri, "--rate", str(rate),
            "--num-conns", str(num_conns), "--timeout", str(timeout), "--hosts", str(hosts),
            "--host-index", str(host_index), "--processes", str(processes), "--httperf", "true"]
    if hog:
        argv.append("--hog")
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    return json.loads(out.stdout)["processes"]


@pytest.mark.parametrize("rate, num_conns, hosts, per_client, max_rate, hog, timeout, processes", [
    (50, 1950, 2, "auto", 50, True, 5, 1),        # the lab's first point: one process per client
    (200, 7801, 2, "auto", 50, True, 5, 2),       # two per client, a remainder of connections
    (2000, 20000, 1, "auto", 1000, True, 5, 2),   # the study's first point on one client
    (14000, 20000, 3, "auto", 1000, False, 2.5, 5),
    (100, 1000, 2, 3, 1000, True, 5, 3),          # a fixed count per client
])
def test_hand_commands_are_the_runners(rate, num_conns, hosts, per_client, max_rate, hog, timeout, processes):
    """The runner given the process count lvs_client computes (its launch/run tasks) runs exactly these lines."""
    point = {"variant": "rr", "parameters": {"rate": rate, "num_conns": num_conns}, "repetition": 1}
    for host_index in range(hosts):
        mine = lvs_hand_commands(point, hosts, host_index, "10.250.1.10", 80, "/", timeout, hog, per_client, max_rate)
        assert len(mine) == processes
        runner = _runner_plan(rate, num_conns, hosts, host_index, processes, hog=hog, timeout=timeout)
        assert [p["command"][1:] for p in runner] == [m["command"][1:] for m in mine]
        assert all(m["command"][0] == "httperf" for m in mine)
        for key in ("index", "num_conns", "rate_per_s"):
            assert [p[key] for p in runner] == [m[key] for m in mine]
        assert [m["expected_s"] for m in mine] == pytest.approx([p["expected_s"] for p in runner])


def test_hand_commands_of_the_lab_point():
    mine = lvs_hand_commands({"rate": 50, "num_conns": 1950}, 2, 1, "10.250.1.10", "80", "/", 5, "true", "auto", 50)
    assert mine == [{"index": 1, "num_conns": 975, "rate_per_s": 25.0, "expected_s": 975 / 25 + 5,
                     "command": ["httperf", "--hog", "--server", "10.250.1.10", "--port", "80", "--uri", "/",
                                 "--num-conns", "975", "--rate", "25", "--timeout", "5", "--client=1/2"]}]


@pytest.mark.parametrize("args, message", [
    (({"rate": 50}, 2, 0, "vip"), "planned point with parameters rate and num_conns"),
    (({"rate": 0, "num_conns": 10}, 2, 0, "vip"), "rate must be > 0"),
    (({"rate": 50, "num_conns": 10}, 2, 2, "vip"), r"host_index must lie in \[0, clients\)"),
    (({"rate": 500, "num_conns": 3}, 2, 0, "vip", 80, "/", 5, True, "auto", 50), "smaller than the 10 httperf processes"),
])
def test_hand_commands_refuse_what_the_runner_refuses(args, message):
    with pytest.raises(AnsibleFilterError, match=message):
        lvs_hand_commands(*args)


def _status(host, processes, change=None):
    """A client's registered async_status loop over its hand-started processes (from the captured runner output)."""
    results = []
    for proc in processes:
        entry = {"index": proc["index"], "num_conns": proc["num_conns"], "rate_per_s": proc["rate_per_s"],
                 "command": proc["command"]}
        item = {"finished": 1, "rc": 0, "stdout": proc["stdout"], "stderr": proc["stderr"], "changed": False,
                "item": {"ansible_job_id": "j%s.%s" % (host, proc["index"]), "started": 1, "finished": 0,
                         "item": entry}}
        if change:
            change(item)
        results.append(item)
    return {"changed": False, "msg": "All items completed", "results": results}


def _hostvars(change=None, var="__lvs_compare_hand"):
    out = {}
    for host in CLIENTS:
        doc = json.loads(read_fixture(CASE, host + ".json"))
        out[host] = {var: _status(host, doc["processes"], change if host == CLIENTS[1] else None)}
    return out


def _harness(**change):
    """The lvs_point module's answer for the harness's run, not stored (tasks/fidelity_pair.yml)."""
    args = {"point": {"variant": "wrr", "parameters": {"rate": 60, "num_conns": 600}, "repetition": 1},
            "clients": [{"host": h, "stdout": read_fixture(CASE, h + ".json"), "failed": False} for h in CLIENTS],
            "collect": {h: {"role": role, "stdout": "=== prev-cpu\n" + read_fixture(CASE, "cpu.%s.txt" % h),
                            "failed": False}
                        for h, role in (("lvs-director", "director"), ("lvs-web1", "real_server"),
                                        ("lvs-web2", "real_server"), ("lvs-web3", "real_server"),
                                        ("lvs-client1", "client"), ("lvs-client2", "client"))},
            "director_counters": read_fixture(CASE, "director-counters.txt"),
            "real_servers": [{"host": "lvs-web%d" % i, "address": "10.250.2.1%d" % i, "port": 80, "weight": w}
                             for i, w in ((1, 3), (2, 2), (3, 1))],
            "vip": "10.250.1.10", "requested_rate": 60, "num_conns": 600, "environment": {"hosts": {}},
            "label": "fidelity pair 1, through the harness"}
    args.update(change)
    failed, result = run_module(lvs_point, args)
    assert failed is False, result
    assert result["changed"] is False and result["result"]["point"]["variant"] == "wrr"
    return result


def _reports():
    """Every process's httperf report of the case: (connection rate, response time ms, replies)."""
    out = []
    for host in CLIENTS:
        for proc in json.loads(read_fixture(CASE, host + ".json"))["processes"]:
            lines = proc["stdout"].splitlines()
            rate = next(float(x.split()[2]) for x in lines if x.startswith("Connection rate:"))
            response = next(float(x.split()[4]) for x in lines if x.startswith("Reply time [ms]:"))
            replies = next(int(x.split()[6]) for x in lines if x.startswith("Total: connections"))
            out.append((rate, response, replies))
    return out


def test_hand_result_combines_the_reports_as_the_harness_does():
    reports = _reports()
    assert len(reports) == 4
    hand = lvs_hand_result(_hostvars(), CLIENTS, min_rate_ratio=0.9, max_error_pct=1.0, max_client_cpu_pct=95)
    assert hand["valid"] and hand["reasons"] == [] and hand["processes"] == 4
    # the default figure: httperf's response time, weighted by replies over the processes
    weighted = sum(t * n for _r, t, n in reports) / sum(n for _r, _t, n in reports)
    assert hand["metrics"] == {"response_time_ms": pytest.approx(weighted, abs=1e-4)}
    # a rate is added up
    rate = lvs_hand_result(_hostvars(), CLIENTS, metric="connection_rate_per_s")
    assert rate["metrics"]["connection_rate_per_s"] == pytest.approx(sum(r for r, _t, _n in reports))
    # The same reports through the harness's evaluation give the same figure: the pair of one run is (x, x).
    harness = _harness()
    assert harness["valid"] is True
    assert lvs_fidelity_pair(hand, harness) == [pytest.approx(weighted, abs=1e-4), pytest.approx(weighted, abs=1e-4)]
    net = lvs_hand_result(_hostvars(), CLIENTS, metric="net_io_kb_s")
    assert lvs_fidelity_pair(net, harness, "net_io_kb_s")[0] == pytest.approx(
        lvs_fidelity_pair(net, harness, "net_io_kb_s")[1])
    # Without the director's counters the harness judges the run invalid: no value on that side.
    unread = _harness(director_counters="=== prev-cpu\n")
    assert unread["valid"] is False and lvs_fidelity_pair(hand, unread)[1] is None


def test_the_point_gives_the_rate_and_connections_when_the_call_does_not():
    """tasks/store.yml and fidelity_pair.yml pass the point only: lvs_point reads rate and num_conns from it."""
    given = _harness()
    taken = _harness(requested_rate=None, num_conns=None)
    assert taken["result"]["metrics"] == given["result"]["metrics"]
    assert taken["result"]["metrics"]["requested_rate_per_s"] == 60
    args = {"point": {"variant": "wrr", "parameters": {"num_conns": 600}, "repetition": 1}, "clients": [],
            "collect": {}, "real_servers": [], "vip": "10.250.1.10", "environment": {}}
    failed, result = run_module(lvs_point, args)
    assert failed is True
    assert "requested_rate is not given and the point's parameters have no usable rate" in result["msg"]


def test_a_slower_reply_through_the_harness_is_a_difference_the_check_sees():
    """The compared figure can move: one process's replies twice as slow change the response time, not the rate."""
    def slower(item):
        item["stdout"] = "\n".join(
            ("Reply time [ms]: response %.1f transfer %s" % (float(x.split()[4]) * 2, x.split()[6])
             if x.startswith("Reply time [ms]:") else x) for x in item["stdout"].splitlines())
    base = lvs_hand_result(_hostvars(), CLIENTS)
    slow = lvs_hand_result(_hostvars(slower), CLIENTS)
    assert slow["valid"] and slow["metrics"]["response_time_ms"] > base["metrics"]["response_time_ms"] * 1.05
    assert lvs_hand_result(_hostvars(slower), CLIENTS, metric="connection_rate_per_s")["metrics"] == \
        lvs_hand_result(_hostvars(), CLIENTS, metric="connection_rate_per_s")["metrics"]


@pytest.mark.parametrize("change, reason", [
    (lambda item: item.update(rc=1, stderr="httperf: connection refused"), "exited with status 1"),
    (lambda item: item.update(finished=0, msg="timed out"), "did not start or did not finish"),
    (lambda item: item.update(skipped=True, finished=None), "did not start or did not finish"),
    (lambda item: item.update(stdout="garbage"), "unusable report"),
    (lambda item: item.update(stdout=item["stdout"].replace("Errors: total 0", "Errors: total 60")),
     "process 2"),
])
def test_a_failed_run_by_hand_gives_no_value(change, reason):
    hand = lvs_hand_result(_hostvars(change), CLIENTS)
    assert not hand["valid"]
    assert hand["metrics"] == {"response_time_ms": None}
    assert any(reason in r for r in hand["reasons"]), hand["reasons"]
    assert lvs_fidelity_pair(hand, _harness())[0] is None


def test_a_client_without_a_run_by_hand_gives_no_value():
    hostvars = _hostvars()
    hostvars[CLIENTS[1]] = {}
    hand = lvs_hand_result(hostvars, CLIENTS)
    assert not hand["valid"] and "lvs-client2: no run by hand" in hand["reasons"][0]
    skipped = _hostvars()
    skipped[CLIENTS[0]]["__lvs_compare_hand"] = {"skipped": True, "changed": False}
    assert not lvs_hand_result(skipped, CLIENTS)["valid"]
    assert not lvs_hand_result({}, [])["valid"]


def test_a_pair_side_is_null_when_its_run_or_its_switch_failed():
    hand = lvs_hand_result(_hostvars(), CLIENTS)
    harness = _harness()
    failed_module = {"failed": True, "msg": "lvs_point: no load client produced a result"}
    assert lvs_fidelity_pair(hand, failed_module)[1] is None
    assert lvs_fidelity_pair(hand, dict(harness, valid=False))[1] is None
    assert lvs_fidelity_pair(hand, harness, hand_switched=False)[0] is None
    assert lvs_fidelity_pair(hand, harness, harness_switched="False")[1] is None
    assert lvs_fidelity_pair(None, None) == [None, None]


def test_pairs_in_the_first_point_give_the_verdict():
    """As tasks/store.yml keeps them (extra.fidelity_pairs of the first point) and tasks/report.yml reads them."""
    docs = [
        {"point_id": "rr__num_conns-1950_rate-50__rep1", "variant": "rr", "valid": True,
         "extra": {"scheduler": "rr", "fidelity_pairs": [[50.0, 50.1], [50.1, 50.0], [49.9, None],
                                                          [50.0, 50.0]],
                   "fidelity_metric": "connection_rate_per_s"}},
        {"point_id": "rr__num_conns-3900_rate-100__rep1", "variant": "rr", "valid": True, "extra": {"scheduler": "rr"}},
        {"point_id": "wrr__num_conns-1950_rate-50__rep1", "variant": "wrr", "valid": True, "extra": {}},
    ]
    result = fidelity_from_points(docs, "rr", 5, what="connection rate")
    assert result["verdict"] == "equivalent" and result["n"] == 3 and result["dropped"] == 1
    assert result["points"] == ["rr__num_conns-1950_rate-50__rep1"]
    assert "1 pair(s) with a failed run left out" in result["sentence"]
    assert fidelity_from_points(docs, "wrr", 5) == {}


def test_filters_are_registered():
    filters = FilterModule().filters()
    for name in ("lvs_hand_commands", "lvs_hand_result", "lvs_fidelity_pair"):
        assert name in filters
