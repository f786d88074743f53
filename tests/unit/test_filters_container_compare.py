"""Filters of the container-vs-native experiment (roles/container_compare/filter_plugins).

Points are assembled from real captured tool outputs (tests/fixtures/<tool>/)
parsed by the project's parsers, as testbed_workload hands them over.
"""
import importlib
import os

import container_compare as cc
import pytest
from ansible.errors import AnsibleFilterError
from ansible.module_utils.testbed_sweep import sweep_plan
from conftest import FIXTURES

SETTINGS = {
    "web_concurrency": [10, 100], "web_requests": 2000, "web_timeout_s": 30,
    "ftp_directions": ["get", "put"], "ftp_file_mb": 50,
    "mail_threads": 10, "mail_duration_s": 10,
    "cpu_threads": [1, 2], "cpu_duration_s": 5, "cpu_max_prime": 20000,
    "compress_threads": [0], "compress_level": 2, "compress_file_mb": 20,
    "hpcc_n": 1000, "hpcc_nb": 64,
    "memory_block_kb": 1024, "memory_total_gb": 1.0, "memory_operations": ["read", "write"],
    "disk_patterns": ["randread", "randwrite", "read", "write"], "disk_block_size": "4k", "disk_iodepth": 32,
    "disk_size_mb": 64, "disk_runtime_s": 5, "disk_direct": True,
    "net_duration_s": 5, "net_streams": 1, "lat_request_bytes": 100, "lat_duration_s": 5,
    "hpcc_p": 1, "hpcc_q": 1, "mail_rate_per_min": 500, "mail_max_kb": 10, "mail_min_kb": 0, "mail_per_connection": 1,
    "disk_pattern_settings": {}, "disk_rw_file_mb": 64, "disk_rw_record_kb": 4, "disk_rw_direct": True,
    "net_bw_tool": "iperf3", "net_directions": ["receive"], "net_lat_tool": "sockperf", "lat_protocols": ["tcp"],
    "lat_response_bytes": 200,
}
ALL = ["web", "ftp", "mail", "cpu", "compress", "hpcc", "memory", "disk", "net_bw", "net_lat"]
HOSTS = ["cc-native", "cc-docker", "cc-podman", "cc-lxc", "cc-lxd", "cc-kvm"]
HOSTVARS = {
    "cc-kvm": {"container_compare_variant": "kvm", "container_compare_emulated": True},
    "cc-docker": {"container_compare_variant": "docker"},
    "cc-native": {"container_compare_variant": "native"},
    "cc-lxd": {"container_compare_variant": "lxd"},
    "cc-podman": {"container_compare_variant": "podman"},
    "cc-lxc": {"container_compare_variant": "lxc"},
}
FINGERPRINT = {"runtime": "docker", "version": "20.10.24", "storage_driver": "overlay2", "cgroup_version": 2,
               "network_mode": "bridge + NAT", "security_options": ["seccomp"], "image_id": "sha256:0", "address": "172.17.0.2"}


def _run(tool, fixture, **parse_opts):
    """A testbed_workload_result of a real captured output."""
    with open(os.path.join(FIXTURES, tool, fixture)) as handle:
        text = handle.read()
    module = importlib.import_module(f"ansible.module_utils.testbed_parse_{tool}")
    parsed = module.parse(text, fixture, **parse_opts)
    return {"tool": tool, "argv": [tool], "host": "cc-docker", "rc": 0, "finished": True, "stdout": text, "stderr": "",
            "started_at": "2026-11-23T15:00:00.000000Z", "finished_at": "2026-11-23T15:00:05.000000Z",
            "duration_s": 5.0, "parsed": parsed, "error": None}


def _point(workload, **params):
    return {"id": f"docker__{workload}__rep1", "variant": "docker", "repetition": 1,
            "parameters": dict(params, workload=workload)}


# ---------------------------------------------------------------------------
# cc_variants
# ---------------------------------------------------------------------------

def test_variants_canonical_order_baseline_first():
    out = cc.cc_variants(HOSTS[::-1], HOSTVARS)
    assert [v["variant"] for v in out] == ["native", "docker", "podman", "lxc", "lxd", "kvm"]
    assert out[-1] == {"host": "cc-kvm", "variant": "kvm", "emulated": True}
    assert not out[0]["emulated"]


def test_variants_subset_and_other_baseline():
    out = cc.cc_variants(HOSTS, HOSTVARS, ["lxd", "docker"], baseline="docker")
    assert [v["variant"] for v in out] == ["docker", "lxd"]


@pytest.mark.parametrize("hosts,hostvars,wanted,baseline,message", [
    ([], {}, None, "native", "group container_guests has no hosts"),
    (["a"], {"a": {"container_compare_variant": "rkt"}}, None, "native", "host a of group container_guests"),
    (["a", "b"], {"a": {"container_compare_variant": "native"}, "b": {"container_compare_variant": "native"}}, None,
     "native", "variant native is given by two hosts (a and b)"),
    (["a"], {"a": {"container_compare_variant": "native"}}, ["lxd"], "native", "names lxd, which no guest host gives"),
    (["a"], {"a": {"container_compare_variant": "docker"}}, None, "native", "baseline variant 'native' is not measured"),
])
def test_variants_refused(hosts, hostvars, wanted, baseline, message):
    with pytest.raises(AnsibleFilterError, match="cc_variants") as err:
        cc.cc_variants(hosts, hostvars, wanted, baseline)
    assert message in str(err.value)


# ---------------------------------------------------------------------------
# cc_workloads -> sweep_plan
# ---------------------------------------------------------------------------

def test_workloads_expand_into_the_plan():
    workloads = cc.cc_workloads(SETTINGS, ALL)
    assert [w["name"] for w in workloads] == ALL
    plan = sweep_plan({"variants": ["native", "docker"], "workloads": workloads, "repetitions": 2, "order": "grouped"})
    per_variant = 2 + 2 + 1 + 2 + 1 + 1 + 2 + 4 + 1 + 1
    assert len(plan) == 2 * 2 * per_variant
    assert [p["variant"] for p in plan[:2 * per_variant]] == ["native"] * (2 * per_variant)
    web = [p for p in plan if p["parameters"]["workload"] == "web" and p["variant"] == "docker" and p["repetition"] == 1]
    assert [p["parameters"] for p in web] == [
        {"requests": 2000, "timeout_s": 30, "concurrency": 10, "workload": "web"},
        {"requests": 2000, "timeout_s": 30, "concurrency": 100, "workload": "web"}]
    disk = [p["parameters"]["pattern"] for p in plan if p["parameters"]["workload"] == "disk"][:4]
    assert disk == ["randread", "randwrite", "read", "write"]


@pytest.mark.parametrize("names,message", [
    ([], "non-empty list"),
    (["web", "iozone"], "unknown workload(s) iozone"),
    (["web", "web"], "lists a workload twice"),
])
def test_workloads_refused(names, message):
    with pytest.raises(AnsibleFilterError, match="cc_workloads") as err:
        cc.cc_workloads(SETTINGS, names)
    assert message in str(err.value)


def test_workloads_missing_setting():
    settings = dict(SETTINGS)
    del settings["disk_runtime_s"]
    with pytest.raises(AnsibleFilterError, match="container_compare_disk_runtime_s is missing"):
        cc.cc_workloads(settings, ["disk"])


STUDY_B_PATTERNS = {
    "randread": {"rw": "randread", "block_size": "4k", "iodepth": 32, "jobs": 1},
    "randread_8jobs": {"rw": "randread", "block_size": "4k", "iodepth": 32, "jobs": 8},
    "read": {"rw": "read", "block_size": "1m", "iodepth": 16, "jobs": 1},
    "randrw_70_30": {"rw": "randrw", "block_size": "4k", "iodepth": 32, "jobs": 1, "rwmixread": 70},
}


def test_disk_patterns_have_their_own_settings():
    settings = dict(SETTINGS, disk_pattern_settings=STUDY_B_PATTERNS,
                    disk_patterns=["randread_8jobs", "read", "randrw_70_30", "write"])
    out = cc.cc_disk_patterns(settings)
    assert out["randread_8jobs"] == {"rw": "randread", "block_size": "4k", "iodepth": 32, "jobs": 8}
    assert out["read"]["block_size"] == "1m" and out["read"]["iodepth"] == 16
    assert out["randrw_70_30"]["rwmixread"] == 70
    # a plain fio --rw value takes the default block size and iodepth, one job
    assert out["write"] == {"rw": "write", "block_size": "4k", "iodepth": 32, "jobs": 1}
    workloads = cc.cc_workloads(settings, ["disk"])
    assert workloads[0]["grid"] == {"pattern": ["randread_8jobs", "read", "randrw_70_30", "write"]}


@pytest.mark.parametrize("patterns,table,message", [
    (["seq"], {}, "disk pattern 'seq' is neither a key of container_compare_disk_pattern_settings"),
    (["a"], {"a": {"rw": "randread", "jobs": 0}}, "disk_pattern_settings.a.jobs must be a whole number from 1 to 256"),
    (["a"], {"a": {"rw": "randread", "block_size": "big"}}, "is 'big', not a block size"),
    (["a"], {"a": {"rw": "randread", "rwmixread": 70}}, "rwmixread (the read share of a mixed pattern"),
    (["a"], {"a": {"rw": "trim"}}, "disk_pattern_settings.a.rw must be one of"),
    (["a"], {"a": {"rw": "read", "depth": 4}}, "unknown key(s) depth"),
])
def test_disk_patterns_refused(patterns, table, message):
    with pytest.raises(AnsibleFilterError, match="cc_disk_patterns") as err:
        cc.cc_workloads(dict(SETTINGS, disk_patterns=patterns, disk_pattern_settings=table), ["disk"])
    assert message in str(err.value)


def test_network_workloads_name_their_tool_and_grid():
    settings = dict(SETTINGS, net_bw_tool="nuttcp", net_directions=["receive", "transmit"], net_lat_tool="netperf",
                    lat_protocols=["tcp", "udp"])
    bw, lat = cc.cc_workloads(settings, ["net_bw", "net_lat"])
    assert bw["grid"] == {"direction": ["receive", "transmit"]} and bw["parameters"]["tool"] == "nuttcp"
    assert lat["grid"] == {"protocol": ["tcp", "udp"]}
    assert lat["parameters"] == {"tool": "netperf", "request_bytes": 100, "response_bytes": 200, "duration_s": 5}
    with pytest.raises(AnsibleFilterError, match="container_compare_net_lat_tool must be one of netperf, sockperf"):
        cc.cc_workloads(dict(settings, net_lat_tool="qperf"), ["net_lat"])


def test_mail_and_hpcc_take_the_studies_parameters():
    mail, hpcc = cc.cc_workloads(dict(SETTINGS, hpcc_p=2, hpcc_q=2), ["mail", "hpcc"])
    assert mail["parameters"] == {"threads": 10, "duration_s": 10, "rate_per_min": 500, "max_kb": 10, "min_kb": 0,
                                  "per_connection": 1}
    assert hpcc["parameters"] == {"n": 1000, "nb": 64, "p": 2, "q": 2}


# ---------------------------------------------------------------------------
# cc_point on real outputs
# ---------------------------------------------------------------------------

def _proc_stat(name):
    with open(os.path.join(FIXTURES, "proc_stat", name)) as handle:
        return handle.read()


def test_point_web():
    result = cc.cc_point([_run("ab", "normal_n2000.txt")], _point("web", concurrency=10), {"hosts": {}}, FINGERPRINT)
    assert result["valid"], result["reasons"]
    assert result["metrics"]["host_busy_pct"] is None  # no /proc/stat given: not measured, still valid
    assert result["metrics"]["requests_per_s"] > 0
    assert result["metrics"]["time_per_request_ms"] > 0
    assert set(result["metrics"]) == set(cc.WORKLOADS["web"]["tools"]["ab"]) | set(cc.HOST_CPU)
    assert result["extra"]["tool"] == {"name": "ab", "version": None}
    assert result["extra"]["runtime"] == FINGERPRINT
    assert result["extra"]["workload"] == "web"
    assert "ab.txt" in result["raw"]


def test_point_cpu_and_memory():
    cpu = cc.cc_point([_run("sysbench", "cpu_t2.txt")], _point("cpu", threads=2), {}, FINGERPRINT)
    assert cpu["valid"] and cpu["metrics"]["events_per_s"] > 0
    memory = cc.cc_point([_run("sysbench", "memory_t1.txt")], _point("memory", operation="write"), {}, FINGERPRINT)
    assert memory["valid"] and memory["metrics"]["memory_mib_s"] > 0


def test_point_load_counts_every_run_that_loaded_the_guest():
    """The measuring run, its preparations and the fidelity pairs' runs are load; the rest is orchestration."""
    run = dict(_run("sysbench", "cpu_t2.txt"), duration_s=10.0)
    assert cc.cc_point([run], _point("cpu", threads=2), {}, FINGERPRINT)["load_s"] == 10.0
    paired = cc.cc_point([run], _point("cpu", threads=2), {}, FINGERPRINT, {"fidelity_pairs": [[1, 1]], "fidelity_load_s": "60.5"})
    assert paired["load_s"] == 70.5
    prep = dict(_run("sysbench", "cpu_t2.txt"), tool="curl", duration_s=1.25)
    assert cc.cc_point([prep, run], _point("cpu", threads=2), {}, FINGERPRINT)["load_s"] == 11.25


def test_point_disk_picks_the_pattern_side():
    read = cc.cc_point([_run("fio", "randread_4k_qd32_libaio.json")], _point("disk", pattern="randread"), {}, FINGERPRINT)
    assert read["valid"], read["reasons"]
    found = read["sources"]["fio"]["metrics"]
    assert read["metrics"]["iops"] == found["read_iops"]
    assert read["metrics"]["bandwidth_mib_s"] == pytest.approx(found["read_bw_bytes_s"] / 1048576.0)
    write = cc.cc_point([_run("fio", "randwrite_4k_qd32_libaio.json")], _point("disk", pattern="randwrite"), {},
                        FINGERPRINT)
    assert write["metrics"]["iops"] == write["sources"]["fio"]["metrics"]["write_iops"]
    # the wrong side has no I/O: the point says so instead of storing zeros as a result
    wrong = cc.cc_point([_run("fio", "randread_4k_qd32_libaio.json")], _point("disk", pattern="randwrite"), {},
                        FINGERPRINT)
    assert wrong["metrics"]["iops"] == 0 or not wrong["valid"]


def test_point_network():
    bw = cc.cc_point([_run("iperf3", "tcp_3s.json")], _point("net_bw", tool="iperf3", direction="receive"), {},
                     FINGERPRINT)
    assert bw["valid"], bw["reasons"]
    found = bw["sources"]["iperf3"]["metrics"]
    assert bw["metrics"]["throughput_gbps"] == pytest.approx(found["received_bps"] * 1e-9)
    assert bw["metrics"]["client_cpu_pct"] == found["host_cpu_total_pct"]
    lat = cc.cc_point([_run("sockperf", "tcp_pingpong_fullrtt_t2_m64.txt")], _point("net_lat", tool="sockperf"), {},
                      FINGERPRINT)
    assert lat["valid"], lat["reasons"]
    assert lat["metrics"]["rtt_avg_us"] == lat["sources"]["sockperf"]["metrics"]["rtt_avg_us"]
    assert lat["metrics"]["transactions_per_s"] == lat["sources"]["sockperf"]["metrics"]["round_trips_per_s"]


@pytest.mark.parametrize("direction,fixture,client,server", [
    ("receive", "tx.txt", 33, 29),    # the client transmits (-t): %TX is the client's, %RX the guest's
    ("transmit", "rx.txt", 27, 31),   # the client receives (-r): %RX is the client's, %TX the guest's
])
def test_point_nuttcp_both_directions(direction, fixture, client, server):
    run = _run("nuttcp", fixture, direction="transmit" if direction == "receive" else "receive")
    environment = {"hosts": {"cc-docker": {"tools": {"nuttcp": "6.1.2"}}}}
    result = cc.cc_point([run], _point("net_bw", tool="nuttcp", direction=direction), environment, FINGERPRINT)
    assert result["valid"], result["reasons"]
    assert result["metrics"]["throughput_gbps"] == pytest.approx(run["parsed"]["metrics"]["rate_bps"] * 1e-9)
    assert (result["metrics"]["client_cpu_pct"], result["metrics"]["server_cpu_pct"]) == (client, server)
    assert result["extra"]["tool"] == {"name": "nuttcp", "version": "6.1.2"}


@pytest.mark.parametrize("fixture,protocol", [("tcp_rr_r100_200_keyval.txt", "tcp"), ("udp_rr_r100_200.txt", "udp")])
def test_point_netperf_request_response(fixture, protocol):
    run = _run("netperf", fixture)
    fingerprint = dict(FINGERPRINT, tools={"netperf": "2.7.0"})
    result = cc.cc_point([run], _point("net_lat", tool="netperf", protocol=protocol), {}, fingerprint)
    assert result["valid"], result["reasons"]
    assert (result["metrics"]["request_bytes"], result["metrics"]["response_bytes"]) == (100, 200)
    assert result["metrics"]["rtt_avg_us"] == run["parsed"]["metrics"]["rtt_mean_us"] > 0
    assert result["metrics"]["transactions_per_s"] > 0
    assert result["extra"]["tool"]["version"] == "2.7.0"


def test_point_iozone_write_and_read():
    run = _run("iozone", "write_read_16m_4k_direct.txt")
    result = cc.cc_point([run], _point("disk_rw", file_mb=16, record_kb=4), {}, FINGERPRINT)
    assert result["valid"], result["reasons"]
    assert result["metrics"]["write_mib_s"] == pytest.approx(18130 / 1024.0)
    assert result["metrics"]["read_mib_s"] == pytest.approx(35221 / 1024.0)


def test_point_disk_mixed_pattern_adds_both_sides():
    run = _run("fio", "randread_4k_qd32_libaio.json")
    found = run["parsed"]["metrics"]
    # a mixed pattern's fio output has both sides; this read-only one has no write I/O, so it is invalid or zero
    mixed = cc.cc_point([run], _point("disk", pattern="randrw_70_30"), {}, FINGERPRINT,
                        {"fio": {"rw": "randrw", "block_size": "4k", "iodepth": 32, "jobs": 1, "rwmixread": 70}})
    assert mixed["extra"]["fio"]["rwmixread"] == 70
    if found.get("write_iops") is not None:
        assert mixed["metrics"]["iops"] == pytest.approx(found["read_iops"] + found["write_iops"])
    else:
        assert mixed["metrics"]["iops"] is None and not mixed["valid"]


def test_tool_sections_name_tool_and_version():
    spec = cc.cc_report(cc.cc_variants(["cc-native"], HOSTVARS), ["net_bw", "cpu"], dict(SETTINGS, net_bw_tool="nuttcp"))
    assert spec["sections"][0]["title"] == "net_bw (nuttcp, client on the host)"
    docs = [{"extra": {"workload": "net_bw", "tool": {"name": "nuttcp", "version": "6.1.2"}}},
            {"extra": {"workload": "cpu", "tool": {"name": "sysbench", "version": "1.0.20"}}},
            {"extra": {"workload": "cpu", "tool": {"name": "sysbench", "version": "1.0.20"}}}]
    titles = [s["title"] for s in cc.cc_tool_sections(spec["sections"], docs)]
    assert titles == ["net_bw (nuttcp 6.1.2, client on the host)", "cpu (sysbench 1.0.20, in the guest)"]


def test_point_failed_tool_is_invalid_with_its_reason():
    run = {"tool": "ab", "argv": ["ab"], "host": "localhost", "rc": 1, "finished": True, "stdout": "",
           "stderr": "apr_socket_recv: Connection refused (111)", "parsed": None,
           "error": "apr_socket_recv: Connection refused (111) -> ab output: no report"}
    result = cc.cc_point(run, _point("web", concurrency=10), {}, FINGERPRINT)
    assert not result["valid"]
    assert any("Connection refused" in r for r in result["reasons"])


def test_point_failed_preparation_fails_the_point():
    prep = {"tool": "python3", "rc": 1, "finished": True, "stdout": "", "stderr": "No space left on device"}
    result = cc.cc_point([prep, _run("sysbench", "cpu_t2.txt")], _point("cpu", threads=2), {}, FINGERPRINT)
    assert not result["valid"]
    assert "No space left on device" in result["reasons"][-1]


@pytest.mark.parametrize("runs,point,message", [
    ([], _point("cpu"), "non-empty list"),
    ([{"tool": "fio"}], _point("cpu"), "measured by sysbench, the last run is fio"),
    ([{"tool": "sysbench"}], _point("iozone"), "unknown workload 'iozone'"),
    ([{"tool": "sysbench"}], {"variant": "x"}, "sweep point with parameters"),
])
def test_point_refused(runs, point, message):
    with pytest.raises(AnsibleFilterError, match="cc_point") as err:
        cc.cc_point(runs, point, {}, FINGERPRINT)
    assert message in str(err.value)


# ---------------------------------------------------------------------------
# cc_report
# ---------------------------------------------------------------------------

def test_report_overall_index_is_study_a_table():
    variants = cc.cc_variants(HOSTS, HOSTVARS)
    spec = cc.cc_report(variants, ALL, SETTINGS, lab=True)
    index = spec["overall_index"]
    assert [i["label"] for i in index["metrics"]] == ["disk read", "disk write", "RAM", "CPU"]
    assert index["metrics"][0]["where"] == {"workload": "disk", "pattern": "read"}
    # with study A's IOzone measured (disk_rw), its write and read are the disk rows
    with_iozone = cc.cc_report(variants, ALL + ["disk_rw"], SETTINGS)["overall_index"]["metrics"]
    assert [(i["label"], i["metric"], i["where"]) for i in with_iozone[:2]] == [
        ("disk read", "read_mib_s", {"workload": "disk_rw"}), ("disk write", "write_mib_s", {"workload": "disk_rw"})]
    assert index["metrics"][3]["where"] == {"workload": "cpu", "threads": 1}
    assert index["metrics"][2]["where"] == {"workload": "memory", "operation": "read"}
    # study A's Table 3.1: sums 3.27 / 3.46 / 3.62 of 4
    sums = {v: round(sum(r.values()), 2) for v, r in index["reference"].items()}
    assert sums == {"docker": 3.27, "lxc": 3.46, "lxd": 3.62}
    assert [s["where"]["workload"] for s in spec["sections"]] == ALL
    assert spec["reference"]["values"]["podman"]["hpl_gflops"] == 25.93
    # study B's 16 STREAM values, each beside ours (not a range): Linux's row and rkt's (Podman's) here
    assert {k: v for k, v in spec["reference"]["values"]["native"].items() if k.startswith("stream_")} == {
        "stream_add_gb_s": 11.8211, "stream_copy_gb_s": 11.4309, "stream_scale_gb_s": 11.3928,
        "stream_triad_gb_s": 11.7716}
    assert spec["reference"]["values"]["podman"]["stream_copy_gb_s"] == 11.1776
    assert sum(len([k for k in r if k.startswith("stream_")]) for r in cc.STUDY_B.values()) == 16
    notes = " ".join(spec["notes"])
    assert "kvm ran under emulation" in notes and "rkt" in notes and "Lab run" in notes
    assert spec["higher_is_better"]["rtt_avg_us"] is False
    # the emulated kvm row is never compared as performance
    assert index["where"] == {"variant": ["native", "docker", "podman", "lxc", "lxd"]}
    assert "kvm" not in spec["reference"]["values"] and spec["reference"]["where"] == index["where"]
    assert "left out of the overall index" in notes
    assert spec["higher_is_better"]["requests_per_s"] is True


def test_report_findings_put_the_studies_words_beside_this_runs_figures():
    spec = cc.cc_report(cc.cc_variants(HOSTS, HOSTVARS), ALL, SETTINGS, lab=True)
    items = {i["finding"]: i for i in spec["findings"]["items"]}
    real = ["native", "docker", "podman", "lxc", "lxd"]
    assert items["B: STREAM Copy/Scale/Add/Triad (hpcc), every platform"]["where"] == {
        "variant": real, "workload": "hpcc"}
    latency = [i for i in items if "latency" in i]
    # the emulated kvm has no latency or random-I/O row; docker and podman do
    assert latency == ["B: TCP request/response latency, docker against native",
                       "B: TCP request/response latency, podman against native"]
    assert not any("kvm" in i for i in items)
    assert items[latency[0]]["where"] == {"workload": "net_lat", "protocol": "tcp"}
    assert items["B: network bandwidth (nuttcp), every platform"]["by"] == "direction"
    # each metric named with the tool that gives it (its version from the points); the host's CPU with none
    tools = spec["tools"]
    assert (tools["throughput_gbps"], tools["rtt_avg_us"], tools["stream_triad_gb_s"], tools["iops"]) == (
        SETTINGS.get("net_bw_tool", "nuttcp"), SETTINGS.get("net_lat_tool", "netperf"), "hpcc", "fio")
    assert "host_busy_pct" not in tools
    # with kvm at real speed (KVM on hardware) its rows are there
    hostvars = dict(HOSTVARS, **{"cc-kvm": {"container_compare_variant": "kvm"}})
    names = [i["finding"] for i in cc.cc_report(cc.cc_variants(HOSTS, hostvars), ALL, SETTINGS)["findings"]["items"]]
    assert "B: TCP request/response latency, kvm against native" in names
    assert "B: 4 KiB random read IOPS (fio), kvm against native" in names
    # only what is measured
    assert "findings" not in cc.cc_report(cc.cc_variants(["cc-native"], HOSTVARS), ["web"], SETTINGS)
    # study A's "~99 %" is the load of its system tests, not of the web test
    busy = [i for i in items.values() if i["study"] == "A: ~99 %"]
    assert len(busy) == 1 and busy[0]["metric"] == "host_busy_pct" and busy[0]["value"] == "max"
    assert busy[0]["where"]["workload"] == [w for w in ("disk_rw", "disk", "memory", "cpu") if w in ALL]
    assert "web" not in busy[0]["where"]["workload"]
    only_cpu = cc.cc_report(cc.cc_variants(["cc-native"], HOSTVARS), ["cpu"], SETTINGS)["findings"]["items"]
    assert [(i["finding"], i["where"]) for i in only_cpu] == [
        ("A: host CPU busy during the system tests (cpu), highest", {"variant": ["native"], "workload": ["cpu"]})]


def test_report_without_disk_read_has_no_disk_items():
    settings = dict(SETTINGS, disk_patterns=["randread"])
    spec = cc.cc_report(cc.cc_variants(["cc-native"], HOSTVARS), ["cpu", "disk"], settings)
    assert [i["label"] for i in spec["overall_index"]["metrics"]] == ["CPU"]
    assert "reference" in spec and "notes" in spec
    spec = cc.cc_report(cc.cc_variants(["cc-native"], HOSTVARS), ["web"], settings)
    assert "overall_index" not in spec


def test_report_spec_is_accepted_by_the_renderer():
    from ansible.module_utils.testbed_reports.spec import check_spec
    spec = cc.cc_report(cc.cc_variants(HOSTS, HOSTVARS), ALL, SETTINGS)
    checked = check_spec(spec)
    assert [i["label"] for i in checked["overall_index"]["items"]] == ["disk read", "disk write", "RAM", "CPU"]
    assert len(checked["sections"]) == len(ALL)
    assert checked["findings"]["label"] == "the study"


def test_point_ftp_get_takes_curls_first_byte():
    curl = _run("curl", "curl-ftp-get-50m.json")
    lftp = _run("lftp", "lftp-get-50m-limit-rate.txt")
    result = cc.cc_point([curl, lftp], _point("ftp", direction="get"), {}, FINGERPRINT)
    assert result["valid"], result["reasons"]
    assert result["metrics"]["first_byte_ms"] == pytest.approx(curl["parsed"]["metrics"]["first_byte_s"] * 1000)
    assert result["metrics"]["rate_mib_s"] == lftp["parsed"]["metrics"]["rate_mib_s"]
    assert result["metrics"]["total_s"] == 5.0
    assert set(result["sources"]) == {"lftp", "curl"}
    put = cc.cc_point([_run("lftp", "lftp-get-put-50m.txt")], _point("ftp", direction="put"), {}, FINGERPRINT)
    assert put["valid"] and put["metrics"]["first_byte_ms"] is None


def test_point_mail_from_postal_log():
    run = _run("postal", "postal-log-t10-10s.log", log_duration_s=10)
    result = cc.cc_point([run], _point("mail", threads=10, duration_s=10), {}, FINGERPRINT)
    assert result["valid"], result["reasons"]
    assert result["metrics"]["messages"] == run["parsed"]["metrics"]["messages"] > 0
    assert result["metrics"]["errors"] is None


def test_point_compress_rate_over_the_wall_time():
    run = _run("xz", "xz-T2-vv-64mib.txt")
    run["duration_s"] = 16.0
    result = cc.cc_point([run], _point("compress", threads=2), {}, FINGERPRINT)
    assert result["valid"], result["reasons"]
    assert result["metrics"]["compress_mb_s"] == pytest.approx(67108864 / 16.0 / 1e6)
    assert result["metrics"]["ratio"] == 0.391


def test_point_hpcc():
    result = cc.cc_point([_run("hpcc", "hpccoutf-n2000-p1.txt")], _point("hpcc", n=2000), {}, FINGERPRINT)
    assert result["valid"], result["reasons"]
    assert result["metrics"]["hpl_gflops"] == 1.98986
    assert result["metrics"]["stream_triad_gb_s"] == 36.2899
    assert result["metrics"]["random_access_gups"] == 0.120729


def test_point_host_cpu_over_the_workload():
    """The whole host's CPU between /proc/stat before and after the workload (a 2 s `yes` on one CPU
    of a real 2-CPU host: tests/fixtures/proc_stat)."""
    stat = [_proc_stat("yes_2s_before.txt"), _proc_stat("yes_2s_after.txt")]
    result = cc.cc_point([_run("ab", "normal_n2000.txt")], _point("web", concurrency=10), {"hosts": {}}, FINGERPRINT,
                         None, stat)
    assert result["valid"], result["reasons"]
    assert 45 <= result["metrics"]["host_busy_pct"] <= 100
    assert result["metrics"]["host_system_pct"] is not None and result["metrics"]["host_softirq_pct"] is not None
    bad = cc.cc_point([_run("ab", "normal_n2000.txt")], _point("web", concurrency=10), {"hosts": {}}, FINGERPRINT,
                      None, ["cpu 1 2", "garbage"])
    assert bad["valid"] and bad["metrics"]["host_busy_pct"] is None
    assert any(w.startswith("host CPU not computed") for w in bad["warnings"])
    spec = cc.cc_report([{"variant": "native"}], ["web"], {})
    assert "host_busy_pct" in spec["sections"][0]["metrics"] and spec["higher_is_better"]["host_busy_pct"] is False


def test_report_findings_have_study_as_per_test_figures_and_flag_its_contradictions():
    hosts = ["cc-native", "cc-docker", "cc-lxc", "cc-lxd"]
    spec = cc.cc_report(cc.cc_variants(hosts, HOSTVARS), ALL + ["disk_rw"], SETTINGS)
    items = {i["finding"]: i for i in spec["findings"]["items"]}
    ftp = items["A: FTP total time (500 MB file), lxd against native"]
    assert (ftp["study"], ftp["metric"], ftp["value"], ftp["where"]) == (
        "A: 47.42 % shorter (35.125 s, the best)", "transfer_s", "change", {"workload": "ftp", "direction": "get"})
    assert items["A: ab requests per second (up to 2000 concurrent), docker against native"]["study"] == \
        "A: 3.1-5.9 % lower"
    assert items["A: postal (10 threads, 25 MB messages, one minute), lxc against native"]["study"] == \
        "A: 1.85 % overhead"
    # the cpu and RAM rows take the overall index's conditions
    cpu = items["A: sysbench CPU, docker against native"]
    assert cpu["where"] == spec["overall_index"]["metrics"][3]["where"] == {"workload": "cpu", "threads": 1}
    assert items["A: RAMspeed (here sysbench memory), lxd against native"]["study"] == \
        "A: 99.03 % of native, 7106.172 Mbps"
    assert items["A: IOzone write, lxc against native"]["metric"] == "write_mib_s"
    # Table 3.1 against the text: flagged on the rows and said once, beside the findings and the index
    flagged = sorted(name for name, item in items.items() if "(!)" in item["study"])
    assert flagged == ["A: IOzone read, docker against native", "A: IOzone read, lxc against native",
                       "A: sysbench CPU, docker against native", "A: sysbench CPU, lxc against native",
                       "A: sysbench CPU, lxd against native"]
    assert spec["findings"]["notes"] == [cc.STUDY_A_CONTRADICTION]
    assert "Study A contradicts itself: its Table 3.1 gives CPU 0.73 / 0.91 / 0.95" in " ".join(spec["notes"])
    # each of study A's per-test figures is printed for each of its three platforms: 9 tests x 3
    assert len([n for n in items if n.startswith("A: ") and " against " in n]) == 27
    # podman and the emulated kvm are not study A's platforms
    wide = cc.cc_report(cc.cc_variants(HOSTS, HOSTVARS), ALL, SETTINGS)["findings"]["items"]
    assert not [i for i in wide if i["finding"].startswith("A: ") and i.get("variant") in ("podman", "kvm")]
