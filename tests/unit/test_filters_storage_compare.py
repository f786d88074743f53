"""Filters of experiment 2, Ceph RBD vs ZFS zvol (roles/storage_compare/filter_plugins).

Points are assembled from real captured tool outputs (tests/fixtures/<tool>/)
parsed by the project's parsers, as testbed_workload hands them over.
"""
import importlib
import json
import os

import pytest
import storage_compare as sc
from ansible.errors import AnsibleFilterError
from ansible.module_utils.testbed_sweep import sweep_plan
from conftest import FIXTURES

SETTINGS = {
    "fio_patterns": ["read", "write", "randread", "randwrite"], "fio_block_sizes": ["4k"], "fio_iodepths": [32],
    "fio_numjobs": [1], "fio_runtime_s": 10, "fio_size_mb": 256,
    "copy_directions": ["write", "read"], "copy_files": 8, "copy_total_mb": 128,
    "oltp_rows": 10000, "oltp_tables": 1, "oltp_threads": 1, "oltp_duration_s": 10,
    "rebuild_used_mb": [128, 256], "rebuild_file_mb": 16,
}
ALL = ["fio", "copy", "oltp", "rebuild"]
ENV = {"hosts": {"storage-vm": {"kernel": "6.1.0-56-amd64"}}}
CPU = {"metrics": {"cpu_busy_mean_pct": 42.5, "cpu_busy_max_pct": 60.0, "samples": 9, "window_s": 9.0}, "valid": True}


def _run(tool, fixture):
    with open(os.path.join(FIXTURES, tool, fixture)) as handle:
        text = handle.read()
    parsed = importlib.import_module(f"ansible.module_utils.testbed_parse_{tool}").parse(text, fixture)
    return {"tool": tool, "argv": [tool], "host": "storage-vm", "rc": 0, "finished": True, "stdout": text, "stderr": "",
            "started_at": "2026-11-23T18:00:00.000000Z", "finished_at": "2026-11-23T18:00:10.000000Z",
            "duration_s": 10.0, "parsed": parsed, "error": None}


def _point(workload, variant="zfs", **params):
    return {"id": f"{variant}__{workload}__rep1", "variant": variant, "repetition": 1,
            "parameters": dict(params, workload=workload)}


def test_variants():
    assert sc.sc_variants(None) == ["zfs", "ceph"]
    assert sc.sc_variants(["zfs", "ceph"], "ceph") == ["ceph", "zfs"]
    assert sc.sc_variants(["ceph"], "ceph") == ["ceph"]


@pytest.mark.parametrize("wanted,baseline,message", [
    (["btrfs"], "zfs", "storage_compare_variants names btrfs"),
    (["zfs", "zfs"], "zfs", "lists a system twice"),
    (["ceph"], "zfs", "the baseline variant 'zfs' is not measured"),
])
def test_variants_reject(wanted, baseline, message):
    with pytest.raises(AnsibleFilterError, match=message):
        sc.sc_variants(wanted, baseline)


def test_workloads_expand_to_the_lab_plan():
    workloads = sc.sc_workloads(SETTINGS, ALL)
    plan = sweep_plan({"variants": ["zfs", "ceph"], "workloads": workloads, "order": "grouped"})
    assert len(plan) == 2 * (4 + 2 + 1 + 2)
    first = [p["parameters"] for p in plan if p["variant"] == "zfs"]
    assert [p["workload"] for p in first] == ["fio"] * 4 + ["copy"] * 2 + ["oltp", "rebuild", "rebuild"]
    assert first[0] == {"workload": "fio", "pattern": "read", "block_size": "4k", "iodepth": 32, "numjobs": 1,
                        "runtime_s": 10, "size_mb": 256}
    assert [p["direction"] for p in first[4:6]] == ["write", "read"]
    assert [p["used_mb"] for p in first[7:]] == [128, 256] and first[7]["file_mb"] == 16


def test_fio_grid_is_a_product():
    grid = dict(SETTINGS, fio_block_sizes=["4k", "64k"], fio_iodepths=[1, 32], fio_numjobs=[1, 4])
    plan = sweep_plan({"variants": ["zfs"], "workloads": sc.sc_workloads(grid, ["fio"])})
    assert len(plan) == 4 * 2 * 2 * 2


@pytest.mark.parametrize("settings,names,message", [
    (SETTINGS, ["fio", "iometer"], "unknown workload"),
    (SETTINGS, ["rebuild", "fio"], "rebuild must be the last workload"),
    (SETTINGS, ["fio", "fio"], "lists a workload twice"),
    (SETTINGS, [], "non-empty list"),
    (dict(SETTINGS, fio_patterns=["randrw"]), ["fio"], "storage_compare_fio_patterns: unknown randrw"),
    (dict(SETTINGS, copy_directions=[]), ["copy"], "storage_compare_copy_directions must be a non-empty list"),
    ({k: v for k, v in SETTINGS.items() if k != "oltp_rows"}, ["oltp"], "setting storage_compare_oltp_rows is missing"),
])
def test_workloads_reject(settings, names, message):
    with pytest.raises(AnsibleFilterError, match=message):
        sc.sc_workloads(settings, names)


def test_fio_point_from_a_real_run():
    run = _run("fio", "randwrite_4k_qd32_libaio.json")
    found = run["parsed"]["metrics"]
    out = sc.sc_point({"run": run, "cpu": CPU}, _point("fio", pattern="randwrite"), ENV,
                      {"system": {"variant": "zfs", "device": "/dev/zd0"}, "cache": {"page_cache": "bypassed"}})
    m = out["metrics"]
    assert out["valid"], out["reasons"]
    assert m["iops"] == found["write_iops"] and m["bandwidth_mb_s"] == pytest.approx(found["write_bw_bytes_s"] / 1e6)
    assert m["clat_p50_us"] == found["write_clat_p50_us"] and m["clat_p99_us"] == found["write_clat_p99_us"]
    assert m["clat_p95_us"] == found["write_clat_p95_us"] and m["node_cpu_pct"] == 42.5
    assert out["extra"]["system"]["device"] == "/dev/zd0" and out["extra"]["cache"] == {"page_cache": "bypassed"}
    assert out["extra"]["cpu"]["samples"] == 9 and out["extra"]["workload"] == "fio"
    assert "fio.txt" in out["raw"] and out["summary"].startswith("iops ")


def test_fio_read_side_and_missing_cpu():
    run = _run("fio", "randread_4k_qd32_libaio.json")
    out = sc.sc_point({"run": run, "cpu": {"failed": True, "msg": "boom"}}, _point("fio", pattern="randread"), ENV)
    assert out["valid"] and out["metrics"]["iops"] == run["parsed"]["metrics"]["read_iops"]
    assert out["metrics"]["node_cpu_pct"] is None
    assert any("no CPU sample" in w and "boom" in w for w in out["warnings"])


def test_fio_point_of_a_failed_run_is_invalid():
    run = dict(_run("fio", "randread_4k_qd32_libaio.json"), parsed=None, error="fio: no output", rc=1)
    out = sc.sc_point({"run": run, "cpu": CPU}, _point("fio", pattern="randread"), ENV)
    assert not out["valid"] and "fio: fio: no output" in out["reasons"]


def test_oltp_point_from_a_real_run():
    run = _run("sysbench", "oltp_read_write_t2.txt")
    prepare = {"rc": 0, "stdout": "Creating table 'sbtest1'...", "stderr": "", "changed": True}
    out = sc.sc_point({"run": run, "prepare": prepare, "cpu": CPU}, _point("oltp", variant="ceph"), ENV)
    assert out["valid"], out["reasons"]
    assert out["metrics"]["transactions_per_s"] == 347.69 and out["metrics"]["queries_per_s"] == 6953.85
    assert out["metrics"]["latency_p95_ms"] == 14.21 and out["metrics"]["latency_avg_ms"] == 5.75
    assert out["metrics"]["ignored_errors"] == 0 and out["metrics"]["reconnects"] == 0
    assert out["raw"]["sysbench-prepare.txt"].startswith("Creating table")
    failed = sc.sc_point({"run": run, "prepare": {"rc": 1, "stderr": "no database"}, "cpu": CPU},
                         _point("oltp"), ENV)
    assert not failed["valid"] and "sysbench prepare failed (rc 1): no database" in failed["reasons"]


def test_copy_point():
    copy = {"duration_s": "0:00:04.000000", "rc": 0, "stdout": "", "stderr": "", "argv": ["sh", "-c", "cp"],
            "started_at": "2026-11-23T18:00:00.000000Z", "finished_at": "2026-11-23T18:00:04.100000Z"}
    out = sc.sc_point({"copy": copy, "cpu": CPU}, _point("copy", direction="write", total_mb=128, files=8), ENV,
                      {"cache": {"page_cache": "dropped"}})
    assert out["valid"], out["reasons"]
    assert out["metrics"]["copy_mb_s"] == 32.0 and out["metrics"]["copy_s"] == 4.0
    assert out["metrics"]["copy_bytes"] == 128000000 and out["load_s"] == 4.0
    failed = sc.sc_point({"copy": dict(copy, rc=1, stderr="No space left on device"), "cpu": CPU},
                         _point("copy", direction="write", total_mb=128), ENV)
    assert not failed["valid"] and "No space left on device" in failed["reasons"][0]
    with pytest.raises(AnsibleFilterError, match="a copy point needs data.copy"):
        sc.sc_point({"cpu": CPU}, _point("copy", direction="read"), ENV)


POLL = {"curve": [[0.4, 0.0], [1.4, 0.5], [2.4, 1.0]], "rebuild_s": 2.4, "whole": True, "observed_degraded": True,
        "samples": 3, "first_status": "pool: tank", "last_status": "pool: tank", "command": ["zpool", "status", "-p", "tank"],
        "reported_s": 2}
VERIFY = {"valid": True, "files": 16, "checked": 16, "bytes": 128000000, "mismatches": [], "missing": [], "extra": [],
          "reasons": []}


def test_rebuild_point():
    data = {"poll": POLL, "verify": VERIFY, "used_bytes": 140000000, "started_at": "2026-11-23T18:00:00.000000Z",
            "finished_at": "2026-11-23T18:00:30.000000Z"}
    out = sc.sc_point(data, _point("rebuild", used_mb=128, file_mb=16), ENV, {"replaced_disk": "/dev/vdc"})
    assert out["valid"], out["reasons"]
    assert out["metrics"]["rebuild_s"] == 2.4 and out["metrics"]["integrity_mismatches"] == 0
    assert out["metrics"]["rebuild_reported_s"] == 2
    assert out["metrics"]["integrity_files"] == 16 and out["metrics"]["used_bytes"] == 140000000
    assert out["extra"]["curve"] == POLL["curve"] and out["extra"]["integrity"]["valid"] is True
    assert out["extra"]["replaced_disk"] == "/dev/vdc" and "node_cpu_pct" not in out["metrics"]


def test_rebuild_point_with_a_corrupted_file_is_invalid_file_by_file():
    bad = dict(VERIFY, valid=False, checked=15,
               mismatches=[{"path": "rebuild-03.bin", "expected_sha256": "aa", "actual_sha256": "bb",
                            "expected_size": 1, "actual_size": 1}],
               missing=["rebuild-07.bin"], reasons=["rebuild-03.bin: content differs (sha256 bb, expected aa)",
                                                    "rebuild-07.bin: missing"])
    out = sc.sc_point({"poll": POLL, "verify": bad}, _point("rebuild", used_mb=128), ENV)
    assert not out["valid"] and out["metrics"]["integrity_mismatches"] == 2
    assert "integrity: 2 of 16 files differ or are missing after the rebuild" in out["reasons"]
    assert "rebuild-03.bin: content differs (sha256 bb, expected aa)" in out["reasons"]


def test_rebuild_point_that_never_became_whole():
    poll = dict(POLL, whole=False, rebuild_s=None)
    out = sc.sc_point({"poll": poll, "verify": VERIFY}, _point("rebuild", used_mb=128), ENV)
    assert not out["valid"] and "did not report itself whole" in out["reasons"][0]
    instant = sc.sc_point({"poll": dict(POLL, observed_degraded=False), "verify": VERIFY}, _point("rebuild"), ENV)
    assert instant["valid"] and "finished before the first poll" in instant["warnings"][0]
    failed = sc.sc_point({"poll": {"failed": True, "msg": "zpool status: cannot open 'tank'"}, "verify": VERIFY},
                         _point("rebuild"), ENV)
    assert not failed["valid"] and "polling the status failed: zpool status: cannot open 'tank'" in failed["reasons"]
    assert failed["metrics"]["rebuild_s"] is None
    # the node stopped answering during the point: its results are Ansible's unreachable ones
    gone = {"unreachable": True, "changed": False, "msg": "ssh: connect to host 127.0.0.1 port 2228: Connection refused"}
    lost = sc.sc_point({"poll": gone, "verify": gone}, _point("rebuild"), ENV)
    assert not lost["valid"] and lost["metrics"]["rebuild_s"] is None
    assert lost["reasons"][0] == ("reading the rebuild timer failed, the node did not answer: "
                                  "ssh: connect to host 127.0.0.1 port 2228: Connection refused")
    assert "the manifest was not verified after the rebuild: ssh: connect" in lost["reasons"][1]
    unverified = sc.sc_point({"poll": POLL, "verify": {"failed": True, "msg": "no manifest"}}, _point("rebuild"), ENV)
    assert not unverified["valid"] and "no manifest" in unverified["reasons"][0]


def test_point_rejects_bad_input():
    with pytest.raises(AnsibleFilterError, match="unknown workload"):
        sc.sc_point({}, _point("iometer"), ENV)
    with pytest.raises(AnsibleFilterError, match="needs data.run, the fio"):
        sc.sc_point({"run": _run("sysbench", "oltp_read_write_t2.txt")}, _point("fio", pattern="read"), ENV)


def test_report_spec():
    spec = sc.sc_report(["zfs", "ceph"], ALL, SETTINGS, "zfs", lab=True)
    assert [s["where"]["workload"] for s in spec["sections"]] == ALL
    assert spec["relative"]["baseline_variant"] == "zfs"
    assert spec["relative"]["metrics"]["iops"] == "drop" and spec["relative"]["metrics"]["rebuild_s"] == "rise"
    assert spec["higher_is_better"]["clat_p99_us"] is False and spec["higher_is_better"]["copy_mb_s"] is True
    assert any("same two disks" in n for n in spec["notes"]) and any("Lab run" in n for n in spec["notes"])
    assert any("ceph tell osd.* cache drop" in n and "not dropped" not in n for n in spec["notes"])
    assert not any("Lab run" in n for n in sc.sc_report(["ceph", "zfs"], ["fio"], SETTINGS, "ceph")["notes"])
    assert spec["pivots"][0]["rows"] == "repetition" and spec["pivots"][0]["where"] == {"workload": "oltp"}
    assert "pivots" not in sc.sc_report(["zfs"], ["fio"], SETTINGS)
    with pytest.raises(AnsibleFilterError, match="workloads must name known"):
        sc.sc_report(["zfs"], ["iometer"], SETTINGS)


def _doc(variant, workload, metrics, valid=True, rep=1, extra=None, **params):
    return {"variant": variant, "valid": valid, "verdict": "valid" if valid else "invalid", "repetition": rep,
            "parameters": dict(params, workload=workload), "metrics": metrics, "extra": extra or {}}


def test_report_tables():
    docs = [
        dict(_doc("zfs", "fio", {"iops": 300.0}, pattern="read", block_size="4k", iodepth=32),
             environment={"hosts": {"client-vm": {"tools": {"fio": "3.33", "cp": "9.1"}}}}),
        _doc("zfs", "fio", {"iops": 100.0}, pattern="read", block_size="4k", iodepth=32, rep=2),
        _doc("ceph", "fio", {"iops": 100.0}, pattern="read", block_size="4K", iodepth=32),
        _doc("ceph", "fio", {"iops": 1.0}, valid=False, pattern="randread", block_size="4k", iodepth=32),
        _doc("zfs", "rebuild", {"rebuild_s": 12.5, "rebuild_reported_s": 11, "used_bytes": 140000000,
                               "polls": 13},
             extra={"curve": [[0.5, 0.0], [6.0, 0.5], [12.5, 1.0]], "integrity": dict(VERIFY)}, used_mb=128),
        _doc("ceph", "rebuild", {"rebuild_s": 40.0, "used_bytes": 150000000, "polls": 40}, valid=False,
             extra={"curve": [[1.0, 0.1], [40.0, 1.0]], "integrity": dict(VERIFY, valid=False, mismatches=[
                 {"path": "rebuild-01.bin", "expected_sha256": "aa", "actual_sha256": "bb"}])}, used_mb=128),
    ]
    tables = sc.sc_report_tables(docs, ["zfs", "ceph"], lab=True)
    titles = [t["title"] for t in tables]
    study = tables[0]
    assert study["title"].startswith("The study's figures (their hardware)")
    # each row names the tool and version that measured it (the points' environment)
    assert study["rows"][0] == ["4 KiB sequential read, IOPS", "2838", "3612", "1.27", "100", "200", "2",
                                "fio 3.33 (client-vm)"]
    # every row of the study is printed: those without a point of this run say so
    assert len(study["rows"]) == len(sc.STUDY) == 11
    assert study["rows"][1] == ["4 KiB sequential write, IOPS", "540", "4445", "8.23", "\u2014", "\u2014", "\u2014",
                                sc.NOT_MEASURED]
    # the study's three OLTP runs beside its mean, its own contradiction flagged under the table
    oltp = [r for r in study["rows"] if r[0] == "OLTP transactions/s"][0]
    assert oltp[1:3] == ["54 (max 65.7; min 48.1)", "168 (max 171.5; min 171.5 (!))"]
    assert any(n.startswith("(!) The study prints ZFS's OLTP minimum as 171.5") for n in study["notes"])
    assert [r[0] for r in study["rows"]][-2:] == ["rebuild with 20 GB used, s", "rebuild with 40 GB used, s"]
    assert study["rows"][-1][1:3] == ["8220", "360"]
    assert any("TCG" in n for n in study["notes"]) and "Ceph Luminous" in study["notes"][0]
    rebuild = tables[1]
    assert rebuild["rows"][0][0] == "zfs" and rebuild["rows"][0][3] == "12.5" and rebuild["rows"][0][7] == "passed"
    # ZFS's own resilver time beside the polled one; Ceph reports none
    assert rebuild["header"][6] == "system's own s" and rebuild["rows"][0][6] == "11" and rebuild["rows"][1][6] == "n/a"
    assert rebuild["rows"][1][7] == "FAILED"
    assert rebuild["chart"]["series"]["zfs 128 MB (rep 1)"] == [[0.5, 0.0], [6.0, 50.0], [12.5, 100.0]]
    assert rebuild["chart"]["series"]["ceph 128 MB (rep 1)"] == [[1.0, 10.0], [40.0, 100.0]]
    assert "Integrity mismatches, file by file" in titles
    mismatch = tables[titles.index("Integrity mismatches, file by file")]
    assert mismatch["rows"] == [["ceph", "128", "1", "rebuild-01.bin", "aa", "bb"]]
    curve = tables[titles.index("Rebuild progress: zfs with 128 MB used (rep 1)")]
    assert curve["rows"] == [["0.5", "0.0"], ["6", "50.0"], ["12.5", "100.0"]]
    assert sc.sc_report_tables([], ["zfs"]) == []
    json.dumps(tables)


def test_access_notes_and_storage_node_cpu_table():
    local = sc.sc_report(["zfs", "ceph"], ["fio"], SETTINGS)
    assert any(n.startswith("Access: local") for n in local["notes"])
    net = sc.sc_report(["zfs", "ceph"], ["fio"], SETTINGS, "zfs", True, "network", 1000)
    assert any("client VM on the compute node" in n and "librbd" in n and "iSCSI" in n for n in net["notes"])
    assert any("TCG emulation (emulated" in n and "1000 Mbit/s" in n for n in net["notes"])
    assert not any(n.startswith("Host CPUs") for n in net["notes"])
    pinned = sc.sc_report(["zfs"], ["fio"], SETTINGS, "zfs", True, "network", 1000, {"storage VM": "0", "client VM": "1"})
    assert ("Host CPUs: the storage VM's qemu ran on host CPU 0, the client VM's qemu ran on host CPU 1 (taskset), "
            "each VM's emulation on its own core(s).") in pinned["notes"]
    half = sc.sc_report(["zfs"], ["fio"], SETTINGS, "zfs", True, "network", 1000, {"storage VM": "", "client VM": "1"})
    assert [n for n in half["notes"] if n.startswith("Host CPUs")] == [
        "Host CPUs: the client VM's qemu ran on host CPU 1 (taskset), each VM's emulation on its own core(s)."]
    with pytest.raises(AnsibleFilterError, match="access must be one of local, network"):
        sc.sc_report(["zfs"], ["fio"], SETTINGS, access="nfs")
    docs = [
        _doc("zfs", "fio", {"iops": 3.0, "node_cpu_pct": 10.0}, pattern="read", block_size="4k", iodepth=32),
        _doc("zfs", "fio", {"iops": 3.0, "node_cpu_pct": 30.0}, pattern="randread", block_size="4k", iodepth=32),
        _doc("ceph", "fio", {"iops": 3.0, "node_cpu_pct": 50.0}, pattern="randwrite", block_size="4k", iodepth=32),
        _doc("ceph", "copy", {"copy_mb_s": 3.0, "node_cpu_pct": 7.0}, direction="write"),
        _doc("ceph", "copy", {"copy_mb_s": 3.0, "node_cpu_pct": 99.0}, valid=False, direction="read"),
    ]
    tables = sc.sc_report_tables(docs, ["zfs", "ceph"], access="network")
    cpu = [t for t in tables if t["title"] == "Storage-node CPU during read and during write"][0]
    assert cpu["rows"] == [["fio", "read", "n/a", "0", "20", "2"], ["fio", "write", "50", "1", "n/a", "0"],
                           ["copy", "write", "7", "1", "n/a", "0"]]
    assert "client VM on the compute node drove the load" in cpu["notes"][0]


def test_both_access_modes_in_one_run():
    both = sc.sc_report(["zfs", "ceph"], ["fio", "oltp"], SETTINGS, "zfs", True, ["network", "local"], 1000)
    assert any(n.startswith("Access: local") for n in both["notes"])
    assert any(n.startswith("Access: network") for n in both["notes"])
    assert any("ARC was emptied by exporting and importing the pool (local) or flushed with `zinject -a`" in n
               for n in both["notes"])
    assert any("Both access modes in one run" in n and "network then local" in n for n in both["notes"])
    # the study's OLTP figure once per mode, each over its own points
    assert [p["where"] for p in both["pivots"]] == [{"workload": "oltp", "access": "network"},
                                                     {"workload": "oltp", "access": "local"}]
    assert both["pivots"][1]["title"].endswith(", access local")
    for bad in (["network", "network"], ["nfs"], [], "both"):
        with pytest.raises(AnsibleFilterError, match="access must be one of local, network or a list of them"):
            sc.sc_report(["zfs"], ["fio"], SETTINGS, access=bad)
    docs = [
        _doc("zfs", "fio", {"iops": 300.0, "node_cpu_pct": 10.0}, pattern="read", block_size="4k", iodepth=32,
             access="network"),
        _doc("zfs", "fio", {"iops": 900.0, "node_cpu_pct": 40.0}, pattern="read", block_size="4k", iodepth=32,
             access="local"),
        _doc("ceph", "fio", {"iops": 100.0}, pattern="read", block_size="4k", iodepth=32, access="network"),
        _doc("zfs", "rebuild", {"rebuild_s": 12.5, "used_bytes": 1e8, "polls": 13}, used_mb=128, access="local",
             extra={"curve": [[0.5, 0.0], [12.5, 1.0]], "integrity": dict(VERIFY)}),
        _doc("zfs", "rebuild", {"rebuild_s": 20.0, "used_bytes": 1e8, "polls": 20}, used_mb=128, access="network",
             extra={"curve": [[0.5, 0.0], [20.0, 1.0]], "integrity": dict(VERIFY)}),
    ]
    tables = sc.sc_report_tables(docs, ["zfs", "ceph"], lab=True, access=["network", "local"])
    by_title = {t["title"]: t for t in tables}
    net = by_title["The study's figures (their hardware) beside this run's - access network"]
    local = by_title["The study's figures (their hardware) beside this run's - access local"]
    assert net["rows"][0][4:7] == ["100", "300", "3"] and local["rows"][0][4:7] == ["n/a", "900", "n/a"]
    assert by_title["Storage-node CPU during read and during write - access network"]["rows"][0][4] == "10"
    assert by_title["Storage-node CPU during read and during write - access local"]["rows"][0][4] == "40"
    rebuild = by_title["Rebuild time per used size and integrity"]
    assert [r[0] for r in rebuild["rows"]] == ["zfs (network)", "zfs (local)"]
    assert "Rebuild progress: zfs (local) with 128 MB used (rep 1)" in by_title
    # a point of an older run (no parameter access) counts as the run's only mode
    old = sc.sc_report_tables(docs[:1] + [dict(docs[2], parameters={"workload": "fio", "pattern": "read",
                                                                    "block_size": "4k", "iodepth": 32})],
                              ["zfs", "ceph"], access="network")
    assert old[0]["rows"][0][4:7] == ["100", "300", "3"]


def test_fidelity():
    """Pairs of the baseline's first fio point; d = +1, -1, 0 %: mean 0, 90 % CI 0 -/+ 2.919986 / sqrt(3) = 1.69."""
    pairs = [[1000.0, 1010.0], [1000.0, 990.0], [1000.0, 1000.0]]
    docs = [_doc("zfs", "fio", {"iops": 1000.0}, extra={"fidelity_pairs": pairs}, pattern="read"),
            _doc("zfs", "fio", {"iops": 1000.0}, pattern="read", rep=2),
            _doc("zfs", "copy", {"write_mb_s": 1.0}, extra={"fidelity_pairs": [[1.0, 9.0]] * 3}),
            _doc("ceph", "fio", {"iops": 10.0}, extra={"fidelity_pairs": [[10.0, 99.0]] * 3}, pattern="read")]
    out = sc.sc_fidelity(docs, "zfs", 5)
    assert out["verdict"] == "equivalent" and out["n"] == 3 and out["ci_pct"] == pytest.approx([-1.685854, 1.685854])
    assert out["sentence"].startswith("Fidelity: equivalent within \u00b15 % (n=3, mean 0.0 %, 90 % CI "
                                      "\u22121.7 \u2026 +1.7 %): IOPS of read fio through the harness")
    far = sc.sc_fidelity([_doc("zfs", "fio", {"iops": 1000.0}, pattern="read",
                               extra={"fidelity_pairs": [[1000.0, 1100.0], [1000.0, 1110.0], [1000.0, 1090.0]]})],
                         "zfs", 5)
    assert far["verdict"] == "different" and "FAILED" not in far["sentence"]
    few = sc.sc_fidelity([_doc("zfs", "fio", {"iops": 1.0}, pattern="read",
                               extra={"fidelity_pairs": [[1000.0, 1100.0], [None, 1110.0]]})], "zfs", 5)
    assert few["verdict"] == "not enough pairs" and few["dropped"] == 1
    assert sc.sc_fidelity(docs, "ceph-missing") == {}


ZFS_OK = {"rc": 0, "stdout": "ONLINE\n", "stderr": ""}
CEPH_STATUS = {"health": {"status": "HEALTH_OK", "checks": {}}, "osdmap": {"num_osds": 2, "num_up_osds": 2, "num_in_osds": 2}}


def _ceph(status, daemons="1 1 2"):
    return {"rc": 0, "stdout": json.dumps(status) + "\n\ndaemons: " + daemons, "stderr": ""}


def test_health():
    probe = {"reachable": True, "built": True}
    assert sc.sc_health(dict(probe, status=ZFS_OK), "zfs", "vm") == {"ok": True, "problems": []}
    degraded = sc.sc_health(dict(probe, status={"rc": 0, "stdout": "DEGRADED\n"}), "zfs", "vm")
    assert not degraded["ok"] and degraded["problems"][0]["evidence"] == "zpool list health: DEGRADED"
    down = sc.sc_health({"reachable": False, "ping_msg": "ssh: connect refused"}, "ceph", "vm")
    assert down == {"ok": False, "problems": [{"component": "storage node vm", "evidence": "ssh: connect refused"}]}
    assert sc.sc_health(dict(probe, built=False, status={"skipped": True}), "ceph", "vm")["ok"]
    assert sc.sc_health(dict(probe, status=_ceph(CEPH_STATUS)), "ceph", "vm")["ok"]
    warn = dict(CEPH_STATUS, health={"status": "HEALTH_WARN", "checks": {"AUTH_INSECURE_GLOBAL_ID_RECLAIM_ALLOWED": {}}})
    assert sc.sc_health(dict(probe, status=_ceph(warn)), "ceph", "vm", ["AUTH_INSECURE_GLOBAL_ID_RECLAIM_ALLOWED"])["ok"]
    assert not sc.sc_health(dict(probe, status=_ceph(warn)), "ceph", "vm", [])["ok"]
    bad = dict(CEPH_STATUS, health={"status": "HEALTH_WARN", "checks": {"PG_DEGRADED": {}, "OSD_DOWN": {}}},
               osdmap={"num_osds": 2, "num_up_osds": 1})
    out = sc.sc_health(dict(probe, status=_ceph(bad, "1 1 1")), "ceph", "vm", ["AUTH_INSECURE_GLOBAL_ID_RECLAIM_ALLOWED"])
    assert [p["component"] for p in out["problems"]] == ["Ceph cluster on vm", "Ceph daemons on vm", "Ceph OSDs on vm"]
    assert out["problems"][0]["evidence"] == "HEALTH_WARN: OSD_DOWN, PG_DEGRADED"
    assert out["problems"][1]["evidence"] == "running: osd 1/2"
    broken = sc.sc_health(dict(probe, status={"rc": 1, "stdout": "", "stderr": "timed out"}), "ceph", "vm")
    assert not broken["ok"] and "timed out" in broken["problems"][0]["evidence"]


def test_health_of_a_cluster_the_operator_brought():
    """Reached as a client: its daemons run elsewhere (0 here), its warnings are its own; HEALTH_ERR is a fault."""
    probe = {"reachable": True, "built": True}
    warn = dict(CEPH_STATUS, health={"status": "HEALTH_WARN", "checks": {"OSDMAP_FLAGS": {}}},
                osdmap={"num_osds": 12, "num_up_osds": 11})
    assert sc.sc_health(dict(probe, status=_ceph(warn, "0 0 0")), "ceph", "vm", [], True) == {"ok": True, "problems": []}
    assert not sc.sc_health(dict(probe, status=_ceph(warn, "0 0 0")), "ceph", "vm", [])["ok"]
    err = dict(CEPH_STATUS, health={"status": "HEALTH_ERR", "checks": {"PG_DAMAGED": {}}})
    out = sc.sc_health(dict(probe, status=_ceph(err, "0 0 0")), "ceph", "vm", [], True)
    assert out == {"ok": False, "problems": [{"component": "Ceph cluster (storage_compare_ceph_existing_conf) seen from vm",
                                              "evidence": "HEALTH_ERR: PG_DAMAGED"}]}
    broken = sc.sc_health(dict(probe, status={"rc": 1, "stdout": "", "stderr": "auth: unable to find a keyring"}),
                          "ceph", "vm", [], True)
    assert not broken["ok"] and "unable to find a keyring" in broken["problems"][0]["evidence"]


def test_memory_of_the_daemons():
    text = "ceph-mon 51200\nceph-mgr 102400\nceph-osd 204800\nceph-osd 204800\nmariadbd 81920\nzfs_arc_bytes 0\n"
    out = sc.sc_memory(text)
    assert out["daemons_rss_mb"] == 550.0 and out["zfs_arc_mb"] == 0.0
    assert out["by_daemon"] == {"ceph-mgr": 100.0, "ceph-mon": 50.0, "ceph-osd": 400.0, "mariadbd": 80.0}
    zfs = sc.sc_memory("zfs_arc_bytes 104857600\n")
    assert zfs == {"daemons_rss_mb": None, "zfs_arc_mb": 100.0, "by_daemon": {}}
    run = _run("fio", "randread_4k_qd32_libaio.json")
    point = sc.sc_point({"run": run, "cpu": CPU, "memory": text}, _point("fio", variant="ceph", pattern="randread"), ENV)
    assert point["valid"] and point["metrics"]["ceph_daemons_rss_mb"] == 550.0
    assert point["extra"]["memory_mb"]["ceph-osd"] == 400.0


def test_an_operators_cluster_is_reached_with_its_own_client_and_monitors():
    conf = ("# written by the operator\n[global]\n\tfsid = 3b6f0c1e-0000-4000-8000-000000000001\n"
            "\tmon host = [v2:10.250.20.10:3300/0,v1:10.250.20.10:6789/0]\n[client]\n\tkeyring = /etc/ceph/x\n")
    keyring = "[client.admin]\n\tkey = AQAadmin==\n[client.ops]\n\tkey = AQBopsKey/abc==\n\tcaps mon = \"profile rbd\"\n"
    assert sc.sc_ceph_client(conf, keyring, "client.ops") == {
        "user": "ops", "key": "AQBopsKey/abc==", "monitors": ["[v2:10.250.20.10:3300/0,v1:10.250.20.10:6789/0]"]}
    # mon_host spelled with an underscore, keys with spaces around '='
    assert sc.sc_ceph_client("[global]\nmon_host=10.0.0.1,10.0.0.2\n", "[client.ops]\nkey=K\n",
                                          "client.ops")["monitors"] == ["10.0.0.1,10.0.0.2"]


@pytest.mark.parametrize("conf,keyring,client,message", [
    ("[global]\nfsid = x\n", "[client.ops]\nkey = K\n", "client.ops", "/etc/ceph/prod.conf names no mon_host"),
    ("[global]\nmon_host = 10.0.0.1\n", "[client.admin]\nkey = K\n", "client.ops", "/root/ops.keyring holds no key of client.ops"),
    ("[global]\nmon_host = 10.0.0.1\n", "[client.ops]\nkey = K\n", "ops", "must be a cephx client such as client.ops"),
])
def test_an_operators_cluster_without_what_qemu_needs_is_one_sentence(conf, keyring, client, message):
    with pytest.raises(AnsibleFilterError, match=message):
        sc.sc_ceph_client(conf, keyring, client, "/etc/ceph/prod.conf", "/root/ops.keyring")


@pytest.mark.parametrize("mon_host", [
    "127.0.0.1", "127.0.0.1:6789", "[v2:127.0.0.1:3300/0,v1:127.0.0.1:6789/0]", "localhost", "[::1]:6789",
    "::1", "[v2:[::1]:3300,v1:[::1]:6789]", "127.0.0.1, 127.0.1.1",
])
def test_a_loopback_monitor_with_a_separate_compute_node_is_refused_in_the_preflight(mon_host):
    conf = f"[global]\nfsid = x\nmon host = {mon_host}\n"
    problems = sc.sc_ceph_monitor_problems(conf, "/etc/ceph/prod.conf", "storage-vm", "localhost")
    assert len(problems) == 1
    assert problems[0].startswith(f"/etc/ceph/prod.conf on storage-vm gives the monitors as {mon_host} (mon_host)")
    assert "compute node localhost cannot reach" in problems[0] and "storage_compare_access=local" in problems[0]


@pytest.mark.parametrize("mon_host,node,compute", [
    ("127.0.0.1", "storage-vm", "storage-vm"),  # the client runs on the node itself
    ("127.0.0.1", "storage-vm", None),  # local access only: no compute node
    ("10.250.20.10", "storage-vm", "localhost"),
    ("[v2:10.250.20.10:3300/0,v1:10.250.20.10:6789/0]", "storage-vm", "localhost"),
    ("127.0.0.1,10.250.20.11", "storage-vm", "localhost"),  # one monitor the client can reach
    ("mon1.lab.example", "storage-vm", "localhost"),  # a name: not resolved here
    ("", "storage-vm", "localhost"),  # sc_ceph_client names a missing mon_host
])
def test_reachable_or_unknown_monitors_pass_the_preflight(mon_host, node, compute):
    conf = f"[global]\nmon_host = {mon_host}\n"
    assert sc.sc_ceph_monitor_problems(conf, "/etc/ceph/prod.conf", node, compute) == []
