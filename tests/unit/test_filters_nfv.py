"""NFV filters (roles/nfv_chain and roles/nfv_measure filter_plugins) on real point documents.

tests/fixtures/nfv_chain/ holds the six point documents and the fidelity
check of a real lab run of playbooks/nfv-chain.yml (5 s x 2 repetitions).
"""
import json
import os

import nfv_chain as nfv_chain_filters
import nfv_measure as nfv_measure_filters
import pytest
from ansible.errors import AnsibleFilterError
from ansible.module_utils.testbed_results.store import named_documents
from ansible.module_utils.testbed_sweep import sweep_plan
from conftest import FIXTURES

STUDY = [{"name": "baseline", "hops": []},
         {"name": "1-vnf", "hops": ["firewall"]},
         {"name": "2-vnf", "hops": ["firewall", "loadbalancer"]}]


def _docs():
    return list(named_documents(os.path.join(FIXTURES, "nfv_chain")).values())


def _fidelity():
    with open(os.path.join(FIXTURES, "nfv_chain", "fidelity.json")) as handle:
        return json.load(handle)


# ---------------------------------------------------------------------------
# nfv_topology
# ---------------------------------------------------------------------------

def test_study_layout():
    topo = nfv_chain_filters.nfv_topology(STUDY)
    assert topo["client"] == {"name": "nfv-client", "role": "client", "networks": [
        {"name": "nfv-baseline-net0", "ipv4_address": "10.231.0.10"},
        {"name": "nfv-1-vnf-net0", "ipv4_address": "10.231.8.10"},
        {"name": "nfv-2-vnf-net0", "ipv4_address": "10.231.16.10"}]}
    assert topo["backend"]["networks"] == [
        {"name": "nfv-baseline-net0", "ipv4_address": "10.231.0.20"},
        {"name": "nfv-1-vnf-net1", "ipv4_address": "10.231.9.20"},
        {"name": "nfv-2-vnf-net2", "ipv4_address": "10.231.18.20"}]
    assert [(n["name"], n["bridge"], n["subnet"], n["gateway"]) for n in topo["networks"]] == [
        ("nfv-baseline-net0", "nfv-s0n0", "10.231.0.0/24", "10.231.0.1"),
        ("nfv-1-vnf-net0", "nfv-s1n0", "10.231.8.0/24", "10.231.8.1"),
        ("nfv-1-vnf-net1", "nfv-s1n1", "10.231.9.0/24", "10.231.9.1"),
        ("nfv-2-vnf-net0", "nfv-s2n0", "10.231.16.0/24", "10.231.16.1"),
        ("nfv-2-vnf-net1", "nfv-s2n1", "10.231.17.0/24", "10.231.17.1"),
        ("nfv-2-vnf-net2", "nfv-s2n2", "10.231.18.0/24", "10.231.18.1")]
    fw, lb = topo["vnfs"][1], topo["vnfs"][2]
    assert (fw["name"], fw["ingress_address"], fw["egress_address"], fw["next_hop"], fw["key"]) == (
        "nfv-2-vnf-hop1-firewall", "10.231.16.20", "10.231.17.10", "10.231.17.20", "vnf1_firewall")
    assert (lb["name"], lb["ingress_address"], lb["egress_address"], lb["next_hop"], lb["key"]) == (
        "nfv-2-vnf-hop2-loadbalancer", "10.231.17.20", "10.231.18.10", "10.231.18.20", "vnf2_loadbalancer")


def test_scenario_facts():
    base, one, two = nfv_chain_filters.nfv_topology(STUDY)["scenarios"]
    assert (base["entry"], base["expected_peer"], base["chain"], base["icmp_passes"]) == (
        "10.231.0.20", "10.231.0.10", "none", True)
    assert (one["entry"], one["expected_peer"], one["chain"], one["icmp_passes"], one["udp_passes"]) == (
        "10.231.8.20", "10.231.9.10", "firewall", True, True)
    assert (two["entry"], two["expected_peer"], two["chain"], two["icmp_passes"], two["udp_passes"]) == (
        "10.231.16.20", "10.231.18.10", "firewall+loadbalancer", False, False)
    assert two["icmp_reason"].startswith("ICMP does not pass hop 2 (loadbalancer)")
    assert two["containers"] == {"client": "nfv-client", "backend": "nfv-backend",
                                 "vnf1_firewall": "nfv-2-vnf-hop1-firewall",
                                 "vnf2_loadbalancer": "nfv-2-vnf-hop2-loadbalancer"}
    assert base["description"] == "client and backend on one network"
    assert two["description"] == "client -> firewall -> loadbalancer -> backend"


def test_any_sequence_of_hops_and_custom_plan():
    topo = nfv_chain_filters.nfv_topology([{"name": "lb-fw-fw", "hops": ["loadbalancer", "firewall", "firewall"]}],
                            name="x", subnet_prefix="172.30", segments_per_scenario=4, bridge_prefix="t-",
                            left_host=2, right_host=3)
    scenario = topo["scenarios"][0]
    assert scenario["entry"] == "172.30.0.3"
    assert scenario["expected_peer"] == "172.30.3.2"
    assert [v["next_hop"] for v in topo["vnfs"]] == ["172.30.1.3", "172.30.2.3", "172.30.3.3"]
    assert [v["key"] for v in topo["vnfs"]] == ["vnf1_loadbalancer", "vnf2_firewall", "vnf3_firewall"]
    assert [n["bridge"] for n in topo["networks"]] == ["t-s0n0", "t-s0n1", "t-s0n2", "t-s0n3"]


@pytest.mark.parametrize("scenarios, kwargs, fragment", [
    ([], {}, "scenarios must be a non-empty list"),
    ([{"name": "a", "hops": ["router"]}], {}, "hops[0] is 'router'; VNF types are firewall, loadbalancer"),
    ([{"name": "a"}, {"name": "a"}], {}, "scenarios[1].name 'a' is used twice"),
    ([{"name": "Bad Name"}], {}, "must be lower-case letters"),
    ([{"name": "a", "hop": []}], {}, "unknown key(s) hop"),
    ([{"name": "a", "hops": ["firewall"] * 8}], {}, "has 8 hops; at most 7 fit"),
    ([{"name": "a"}], {"subnet_prefix": "8.8"}, "is not a private range"),
    ([{"name": "a"}], {"subnet_prefix": "10.231.0"}, "first two octets"),
    ([{"name": "a"}], {"bridge_prefix": "much-too-long-"}, "bridge_prefix must be up to 8"),
    ([{"name": "a"}], {"left_host": 20}, "left_host and right_host must differ"),
    ([{"name": str(i)} for i in range(33)], {}, "do not fit in 10.231.0.0/16"),
])
def test_bad_layouts_are_refused(scenarios, kwargs, fragment):
    with pytest.raises(AnsibleFilterError) as info:
        nfv_chain_filters.nfv_topology(scenarios, **kwargs)
    assert fragment in str(info.value)
    assert str(info.value).startswith("nfv_topology: ")


# ---------------------------------------------------------------------------
# the NFV plan is the shared sweep_plan; nfv_cgroups
# ---------------------------------------------------------------------------

def test_the_sweep_plan_gives_the_nfv_order():
    """The NFV plan is the shared sweep_plan of its scenarios (same points, same order as before)."""
    params = {"duration_s": 5, "protocol": "tcp", "streams": 1}
    names = [s["name"] for s in STUDY]
    plan = sweep_plan({"variants": names, "parameters": params, "repetitions": 2})
    assert [(p["variant"], p["repetition"]) for p in plan] == [
        ("baseline", 1), ("1-vnf", 1), ("2-vnf", 1), ("baseline", 2), ("1-vnf", 2), ("2-vnf", 2)]
    assert all(p["parameters"] == params for p in plan)
    grouped = sweep_plan({"variants": names, "parameters": params, "repetitions": 3, "order": "grouped"})
    assert [(p["variant"], p["repetition"]) for p in grouped][:4] == [
        ("baseline", 1), ("baseline", 2), ("baseline", 3), ("1-vnf", 1)]


def test_cgroups_from_docker_host_info():
    doc = [d for d in _docs() if d["variant"] == "1-vnf"][0]
    ids = {key: path.split("/")[1] for key, path in doc["extra"]["cgroups"].items()}
    topo = nfv_chain_filters.nfv_topology(STUDY)
    containers = [{"Names": ["/nfv-client"], "Id": ids["client"]},
                  {"Names": ["/nfv-backend"], "Id": ids["backend"]},
                  {"Names": ["/nfv-1-vnf-hop1-firewall"], "Id": ids["vnf1_firewall"]},
                  {"Names": ["/nfv-2-vnf-hop1-firewall"], "Id": "a" * 64},
                  {"Names": ["/nfv-2-vnf-hop2-loadbalancer"], "Id": "b" * 64}]
    groups = nfv_chain_filters.nfv_cgroups(topo, containers)
    assert groups["1-vnf"] == doc["extra"]["cgroups"]
    assert groups["2-vnf"]["vnf2_loadbalancer"] == "docker/" + "b" * 64
    systemd = nfv_chain_filters.nfv_cgroups(topo, containers, "systemd")
    assert systemd["baseline"]["client"] == "system.slice/docker-%s.scope" % ids["client"]
    with pytest.raises(AnsibleFilterError, match="container nfv-2-vnf-hop1-firewall of scenario 2-vnf is not running"):
        nfv_chain_filters.nfv_cgroups(topo, containers[:3] + containers[4:])


# ---------------------------------------------------------------------------
# nfv_study_tables, nfv_fidelity
# ---------------------------------------------------------------------------

def test_study_tables_from_real_points():
    result = nfv_measure_filters.nfv_study_tables(_docs(), nfv_chain_filters.nfv_topology(STUDY)["scenarios"])
    derived = result["derived"]
    assert derived["baseline"]["throughput_gbps"] == pytest.approx(23.46482542787727)
    assert derived["1-vnf"]["throughput_gbps"] == pytest.approx(20.71993790867883)
    # D_th = (23.4648 - 20.7199) / 23.4648 x 100
    assert derived["1-vnf"]["throughput_drop_pct"] == pytest.approx(11.697881698013356)
    assert derived["2-vnf"]["throughput_drop_pct"] == pytest.approx(69.2052945557801)
    # K_lat ICMP = (0.106 - 0.0805) / 0.0805 x 100; no ICMP through the proxy
    assert derived["1-vnf"]["icmp_latency_rise_pct"] == pytest.approx(31.67701863354039)
    assert derived["2-vnf"]["icmp_rtt_avg_ms"] is None and derived["2-vnf"]["icmp_latency_rise_pct"] is None
    assert derived["2-vnf"]["tcp_latency_rise_pct"] == pytest.approx(187.97303623256246)
    assert derived["baseline"]["throughput_drop_pct"] is None
    throughput, latency, cpu = result["tables"]
    assert throughput["rows"] == [["baseline", "none", "23.5 \u00b1 9.6 (n=2)", "\u2014"],
                                  ["1-vnf", "firewall", "20.7 \u00b1 6.3 (n=2)", "11.7 %"],
                                  ["2-vnf", "firewall+loadbalancer", "7.23 \u00b1 5.9 (n=2)", "69.2 %"]]
    assert latency["rows"][2] == ["2-vnf", "N/A (ICMP does not pass the L4 proxy)", "N/A",
                                  "0.0769 \u00b1 0.085 (n=2)", "+188.0 %"]
    assert cpu["header"] == ["scenario", "client %", "backend %", "vnf1_firewall %", "vnf2_loadbalancer %",
                             "host softirq %", "host busy %"]
    assert cpu["rows"][1] == ["1-vnf", "98.8", "76.5", "0.00200", "\u2014", "45.1", "90.2"]
    assert cpu["rows"][2][4] == "97.6"
    assert result["notes"][0].startswith("1-vnf (firewall): throughput drop D_th = 11.7 % (20.72 vs 23.46 Gbit/s)")


def test_invalid_points_are_left_out():
    docs = _docs()
    for doc in docs:
        if doc["variant"] == "1-vnf" and doc["repetition"] == 2:
            doc["valid"] = False
    derived = nfv_measure_filters.nfv_study_tables(docs, nfv_chain_filters.nfv_topology(STUDY)["scenarios"])["derived"]
    assert derived["1-vnf"]["points"] == 1
    assert derived["1-vnf"]["throughput_gbps"] == pytest.approx(21.216945850904935)
    with_invalid = nfv_measure_filters.nfv_study_tables(docs, nfv_chain_filters.nfv_topology(STUDY)["scenarios"], include_invalid=True)
    assert with_invalid["derived"]["1-vnf"]["points"] == 2


def test_study_tables_need_the_baseline():
    scenarios = nfv_chain_filters.nfv_topology(STUDY)["scenarios"]
    with pytest.raises(AnsibleFilterError, match="baseline 'native' is not a scenario"):
        nfv_measure_filters.nfv_study_tables(_docs(), scenarios, baseline="native")
    with pytest.raises(AnsibleFilterError, match=r"docs\[0\] is not a result document"):
        nfv_measure_filters.nfv_study_tables([{"metrics": {}}], scenarios)


def _baseline(pairs, variant="baseline", valid=True, point_id="baseline__rep1"):
    return {"point_id": point_id, "variant": variant, "valid": valid, "extra": {"fidelity_pairs": pairs}}


def test_fidelity_of_the_real_run_had_too_few_pairs():
    """The lab run of fidelity.json paired one direct run with each of 2 repetitions: n=2 cannot be tested."""
    saved = _fidelity()
    pairs = [[bps * 1e-9, gbps] for bps, gbps in zip(saved["direct_bps"], saved["harness_gbps"])]
    result = nfv_measure_filters.nfv_fidelity([_baseline(pairs)], 5)
    assert result["verdict"] == "not enough pairs" and result["n"] == 2
    assert result["sentence"].startswith("Fidelity: not checked, n=2 usable pair(s) (at least 3 needed")


def test_fidelity_of_interleaved_pairs():
    # d = -2, -4, -3 %: mean -3, s = 1, 90 % CI -3 -/+ 2.919986 / sqrt(3) = [-4.685854, -1.314146]: inside +-5
    pairs = [[25.0, 24.5], [25.0, 24.0], [20.0, 19.4]]
    docs = [_baseline(pairs), _baseline([[25.0, 40.0]] * 3, variant="fw", point_id="fw__rep1"),
            _baseline(None, point_id="baseline__rep2")]
    result = nfv_measure_filters.nfv_fidelity(docs, 5)
    assert result["verdict"] == "equivalent" and result["n"] == 3 and result["points"] == ["baseline__rep1"]
    assert result["mean_diff_pct"] == pytest.approx(-3.0)
    assert result["ci_pct"] == pytest.approx([-4.685854, -1.314146], abs=1e-6)
    assert result["sentence"] == (
        "Fidelity: equivalent within \u00b15 % (n=3, mean \u22123.0 %, 90 % CI \u22124.7 \u2026 \u22121.3 %): "
        "Gbit/s of iperf3 through the harness against iperf3 run directly (plain docker exec) on the baseline's "
        "client and backend, harness/hand \u2212 1 over interleaved pairs.")
    # a tolerance of 3.5 %: the mean is inside it but the interval crosses its edge - too noisy to tell
    assert nfv_measure_filters.nfv_fidelity(docs, 3.5)["verdict"] == "too noisy to tell (widen n)"
    # a failed hand run leaves its pair out
    failed = nfv_measure_filters.nfv_fidelity([_baseline(pairs + [[None, 24.0]])], 5)
    assert failed["n"] == 3 and failed["dropped"] == 1
    assert nfv_measure_filters.nfv_fidelity([], 5) == {}


def test_fidelity_bad_input():
    with pytest.raises(AnsibleFilterError, match="fidelity_from_points: documents must be a list"):
        nfv_measure_filters.nfv_fidelity(None)
    with pytest.raises(AnsibleFilterError, match="tolerance_pct must be a finite number > 0"):
        nfv_measure_filters.nfv_fidelity([_baseline([[1.0, 1.0]] * 3)], 0)


def test_nfv_health_names_every_container_that_is_not_running():
    infos = [{"item": "nfv-client", "exists": True, "container": {"State": {"Running": True, "Paused": False}}},
             {"item": "nfv-backend", "exists": False, "container": None},
             {"item": "nfv-vnf1", "exists": True, "container": {"State": {"Running": False, "Status": "exited",
                                                                          "ExitCode": 137}}},
             {"item": "nfv-vnf2", "exists": True, "container": {"State": {"Running": True, "Paused": True}}}]
    health = nfv_measure_filters.nfv_health(infos)
    assert health["ok"] is False
    assert health["problems"] == [
        {"component": "nfv-backend", "evidence": "the container does not exist"},
        {"component": "nfv-vnf1", "evidence": "the container is exited (exit code 137)"},
        {"component": "nfv-vnf2", "evidence": "the container is paused"}]
    assert nfv_measure_filters.nfv_health(infos[:1]) == {"ok": True, "problems": [], "links_down": []}


def test_nfv_health_names_a_running_container_whose_link_is_down():
    def info(name, macs):
        networks = {net: {"MacAddress": mac} for net, mac in macs.items()}
        return {"item": name, "exists": True,
                "container": {"State": {"Running": True, "Paused": False}, "NetworkSettings": {"Networks": networks}}}
    fw = info("nfv-1-vnf-hop1-firewall", {"nfv-1-vnf-net0": "02:42:0a:e7:08:14", "nfv-1-vnf-net1": "02:42:0A:E7:09:0A"})
    client = info("nfv-client", {"nfv-1-vnf-net0": "02:42:0a:e7:08:0a"})
    backend = info("nfv-backend", {})
    links = [  # as the health hook reads them: looped over the info results, one skipped (not running)
        {"item": fw, "rc": 0, "stdout": "eth0 up 1 02:42:0a:e7:08:14\neth1 down 0 02:42:0a:e7:09:0a"},
        {"item": client, "rc": 0, "stdout": "eth0 up 1 02:42:0a:e7:08:0a\nlo unknown 1 00:00:00:00:00:00"},
        {"item": backend, "skipped": True}]
    health = nfv_measure_filters.nfv_health([fw, client, backend], links)
    assert health == {"ok": False, "links_down": ["nfv-1-vnf-hop1-firewall"], "problems": [
        {"component": "nfv-1-vnf-hop1-firewall link eth1",
         "evidence": "link eth1 of nfv-1-vnf-hop1-firewall (network nfv-1-vnf-net1) is down, carrier 0: "
                     "it forwards nothing on that network"}]}
    # an interface the container brought down itself has no carrier to read ('-'); a failed read is a problem too
    links[0]["stdout"] = "eth0 up 1 02:42:0a:e7:08:14\neth1 down - 02:42:0a:e7:09:0a"
    assert nfv_measure_filters.nfv_health([fw], links[:1])["problems"][0]["evidence"].endswith("down, carrier -: "
                                                                                               "it forwards nothing on that network")
    failed = [{"item": "nfv-client", "rc": 1, "stderr": "OCI runtime exec failed"}]
    assert nfv_measure_filters.nfv_health([client], failed)["problems"] == [
        {"component": "nfv-client", "evidence": "its links could not be read: OCI runtime exec failed"}]
    failed = [{"item": "nfv-client", "failed": False, "msg": "Error while running exec: container is not running"}]
    assert nfv_measure_filters.nfv_health([client], failed)["problems"] == [
        {"component": "nfv-client", "evidence": "its links could not be read: Error while running exec: container is not running"}]
    links[0]["stdout"] = "eth0 up 1 02:42:0a:e7:08:14\neth1 up 1 02:42:0a:e7:09:0a"
    assert nfv_measure_filters.nfv_health([fw, client, backend], links) == {"ok": True, "problems": [], "links_down": []}


def test_nfv_point_keeps_the_fidelity_pairs_and_the_hand_runs():
    scenario = {"name": "baseline", "containers": ["client", "backend"], "hops": [], "icmp_passes": False,
                "expected_peer": None}
    runs = {"iperf3": {"parsed": None, "error": "x", "stdout": ""}, "sockperf": {"parsed": None, "error": "y"}}
    direct = {"command": "docker exec ...", "rc": [0, 1, 0], "pairs": [[25.0, 24.5], [None, 24.0], [20.0, 19.4]],
              "raws": ['{"a": 1}', "", '{"b": 2}']}
    point = nfv_measure_filters.nfv_point(runs, scenario, {"variant": "baseline"}, {}, "t0", "t1", None, direct)
    assert point["extra"]["fidelity_pairs"] == direct["pairs"]
    assert point["extra"]["fidelity_direct"] == {"command": "docker exec ...", "rc": [0, 1, 0]}
    assert point["raw"]["direct-iperf3-1.json"] == '{"a": 1}' and point["raw"]["direct-iperf3-3.json"] == '{"b": 2}'
    plain = nfv_measure_filters.nfv_point(runs, scenario, {"variant": "fw"}, {}, "t0", "t1")
    assert plain["extra"]["fidelity_pairs"] is None and not any(k.startswith("direct") for k in plain["raw"])


def test_nfv_point_counts_the_fidelity_pairs_runs_as_load():
    """The sweep's overhead is its wall time minus load: the pairs' iperf3 runs load the chain, they are not Ansible."""
    scenario = {"name": "baseline", "containers": ["client", "backend"], "hops": [], "icmp_passes": False,
                "expected_peer": None}
    runs = {"iperf3": {"parsed": None, "error": "x", "stdout": "", "duration_s": 10.2},
            "sockperf": {"parsed": None, "error": "y", "duration_s": 5.1}}
    assert nfv_measure_filters.nfv_point(runs, scenario, {"variant": "baseline"}, {}, "t0", "t1")["load_s"] == 15.3
    direct = {"command": "docker exec ...", "rc": [0], "pairs": [[25.0, 24.5]], "raws": ["{}"], "load_s": "20.4"}
    point = nfv_measure_filters.nfv_point(runs, scenario, {"variant": "baseline"}, {}, "t0", "t1", None, direct)
    assert point["load_s"] == 35.7
    assert point["extra"]["fidelity_direct"]["load_s"] == "20.4"


def test_the_studys_tabels_3_4_5_in_their_own_columns_beside_this_run():
    lat, thr, cpu = nfv_measure_filters.nfv_study_shape_tables(_docs(), nfv_chain_filters.nfv_topology(STUDY)["scenarios"])
    assert lat["header"] == ["scenario", "mean latency ms, this run", "rise %, this run", "mean latency ms, study",
                             "rise %, study"]
    assert lat["rows"] == [["baseline", "0.0805 (n=2)", "\u2014", "0.0890", "\u2014"],
                           ["1-vnf", "0.106 (n=2)", "+31.7 %", "0.177", "+98.8 %"],
                           ["2-vnf", "N/A (ICMP does not cross the L4 proxy)", "N/A", "N/A", "N/A"]]
    assert thr["rows"] == [["baseline", "23.5 (n=2)", "\u2014", "29.5", "\u2014"],
                           ["1-vnf", "20.7 (n=2)", "11.7 %", "19.7", "33.2 %"],
                           ["2-vnf", "7.23 (n=2)", "69.2 %", "2.36", "92.0 %"]]
    # Tabel 5: each VNF type once, from the first chain that has it; the study's ~118.42 % as printed
    assert [row[:2] + row[3:] for row in cpu["rows"]] == [["firewall", "kernel (iptables NAT)", "~0.01"],
                                                           ["loadbalancer", "user space (HAProxy)", "~118.42"]]
    assert cpu["rows"][1][2].startswith("97.6 (n=2, 2-vnf)")


def test_a_chain_the_study_did_not_run_has_blank_study_cells():
    scenarios = nfv_chain_filters.nfv_topology(STUDY + [{"name": "lb-only", "hops": ["loadbalancer"]}])["scenarios"]
    lat, thr, _ = nfv_measure_filters.nfv_study_shape_tables(_docs(), scenarios)
    assert lat["rows"][-1][0] == "lb-only" and lat["rows"][-1][3:] == ["", ""]
    assert thr["rows"][-1][1] == "N/A (n=0)" and thr["rows"][-1][3:] == ["", ""]


def test_an_iperf3_stopped_by_the_watchdog_or_its_deadline_says_so():
    scenario = {"name": "1-vnf", "containers": ["client", "backend"], "hops": ["firewall"], "icmp_passes": True,
                "expected_peer": None}
    stderr = ("testbed-watchdog: stopped the load 10 s in: nfv-1-vnf-hop1-firewall (10.231.8.20) did not answer "
              "2 probes 5 s apart\nTerminated\n")
    runs = {"iperf3": {"parsed": None, "error": "no output", "stdout": "", "stderr": stderr, "rc": 143,
                       "overran": False},
            "sockperf": {"parsed": None, "error": "y"}}
    point = nfv_measure_filters.nfv_point(runs, scenario, {"variant": "1-vnf"}, {}, "t0", "t1")
    assert point["valid"] is False
    assert ("the watchdog stopped the load 10 s in: nfv-1-vnf-hop1-firewall (10.231.8.20) did not answer 2 probes "
            "5 s apart") in point["reasons"]
    runs["iperf3"].update(stderr="", rc=124, overran=True, deadline_s=90, estimate_s=10)
    point = nfv_measure_filters.nfv_point(runs, scenario, {"variant": "1-vnf"}, {}, "t0", "t1")
    assert "iperf3 exceeded its deadline of 90 s (estimate 10 s) and was stopped" in point["reasons"]

    # iperf3 ended by the stop reports an error and no backend line: no claim that the traffic took another route
    scenario["expected_peer"] = "10.231.8.10"
    runs["iperf3"].update(stderr=stderr, rc=1, overran=False, parsed={"valid": False, "metrics": {},
                                                                       "reasons": ["iperf3 reported an error"]})
    point = nfv_measure_filters.nfv_point(runs, scenario, {"variant": "1-vnf"}, {}, "t0", "t1")
    assert not [r for r in point["reasons"] if "did not cross the chain" in r], point["reasons"]
    # a whole test whose backend saw another address still says so
    runs["iperf3"].update(stderr="", rc=0, stdout="Accepted connection from 10.231.0.10, port 5201",
                          parsed={"valid": True, "metrics": {"received_bps": 1e9}, "reasons": []})
    point = nfv_measure_filters.nfv_point(runs, scenario, {"variant": "1-vnf"}, {}, "t0", "t1")
    assert any("saw the test from 10.231.0.10, not from 10.231.8.10" in r for r in point["reasons"]), point["reasons"]


def test_the_studys_rise_and_drops_are_checked_against_its_own_means_where_tabel_3_is_printed():
    notes = nfv_measure_filters.study_consistency_notes()
    # (0.177 - 0.089) / 0.089 = +98.9 %: the sign and size the study prints (+98.8), a rise
    assert notes[0] == ("K_lat of firewall from the study's own means: +98.9 %, it prints +98.8 % "
                        "(the same sign and size, to its rounding)")
    assert notes[1].startswith("D_th of firewall from the study's own means: +33.2 %, it prints +33.2 %")
    assert notes[2].startswith("D_th of firewall + loadbalancer from the study's own means: +92.0 %, it prints +92.0 %")
    lat, _, _ = nfv_measure_filters.nfv_study_shape_tables(_docs(), nfv_chain_filters.nfv_topology(STUDY)["scenarios"])
    assert lat["notes"][1].startswith("K_lat of firewall from the study's own means: +98.9 %")


def test_a_printed_figure_its_own_means_do_not_give_is_flagged(monkeypatch):
    monkeypatch.setitem(nfv_measure_filters.STUDY_RELATIVE, ("firewall",),
                        {"throughput_gbps": 33.2, "icmp_rtt_avg_ms": -98.8})
    assert nfv_measure_filters.study_consistency_notes()[0] == (
        "K_lat of firewall from the study's own means: +98.9 %, it prints -98.8 % (!): the figure its means do not give")
