"""fio JSON parser and fio_parse module, on real fio 3.33 captures (tests/fixtures/fio)."""
import bisect
import json
import math

import fio_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_fio import DIRECTION_METRICS, parse
from conftest import fixture_path, read_fixture
from helpers import run_module

PCT_KEYS = {"p50": "50.000000", "p90": "90.000000", "p95": "95.000000", "p99": "99.000000", "p999": "99.900000"}


def _parse(name):
    return parse(read_fixture("fio", name), source=name)


def _doc(name):
    """The last JSON document of a fixture, found independently of the parser."""
    text = read_fixture("fio", name)
    starts = [i for i, line in enumerate(text.splitlines(True)) if line == "{\n"]
    lines = text.splitlines(True)
    return json.loads("".join(lines[starts[-1]:]))


def _assert_idle(metrics, direction):
    for key in DIRECTION_METRICS:
        assert metrics["%s_%s" % (direction, key)] is None, "%s_%s" % (direction, key)


# ---------------------------------------------------------------------------
# One job
# ---------------------------------------------------------------------------

def test_randread_single_job_every_metric():
    result = _parse("randread_4k_qd32_libaio.json")
    read = _doc("randread_4k_qd32_libaio.json")["jobs"][0]["read"]
    m = result["metrics"]
    assert result["valid"] is True and result["warnings"] == [] and result["reasons"] == []
    assert m["fio_version"] == "fio-3.33"
    assert m["jobs"] == 1 and m["groups"] == 1
    assert m["read_iops"] == 69754.748417
    assert m["read_bw_kib_s"] == 279018
    assert m["read_bw_bytes_s"] == 285715449
    assert m["read_io_bytes"] == 857432064
    assert m["read_runtime_ms"] == 3001
    assert m["read_total_ios"] == 209334
    assert m["read_clat_mean_us"] == pytest.approx(read["clat_ns"]["mean"] / 1000, rel=1e-12)
    assert m["read_clat_stddev_us"] == pytest.approx(read["clat_ns"]["stddev"] / 1000, rel=1e-12)
    assert m["read_clat_min_us"] == 36.929
    assert m["read_clat_max_us"] == 12333.991
    assert m["read_clat_p50_us"] == 292.864
    assert m["read_clat_p90_us"] == 518.144
    assert m["read_clat_p95_us"] == 1286.144
    assert m["read_clat_p99_us"] == 3948.544
    assert m["read_clat_p999_us"] == 8159.232
    assert m["read_lat_mean_us"] == pytest.approx(read["lat_ns"]["mean"] / 1000, rel=1e-12)
    assert m["read_slat_mean_us"] == pytest.approx(read["slat_ns"]["mean"] / 1000, rel=1e-12)
    assert m["usr_cpu_pct"] == 7.533333 and m["sys_cpu_pct"] == 20.533333
    # write and trim were not exercised: null, never 0
    _assert_idle(m, "write")
    _assert_idle(m, "trim")
    assert "mixed_iops" not in m
    job = result["details"]["jobs"][0]
    assert job["name"] == "randread4k" and job["error"] == 0
    assert job["options"]["iodepth"] == "32"
    assert "write" not in job and job["read"]["iops"] == 69754.748417


def test_randwrite_and_seqread():
    m = _parse("randwrite_4k_qd32_libaio.json")["metrics"]
    assert m["write_iops"] == 57750.416528 and m["write_io_bytes"] == 709873664
    assert m["write_clat_p99_us"] == 4423.68
    _assert_idle(m, "read")
    m = _parse("seqread_1m_qd8_libaio.json")["metrics"]
    assert m["read_bw_kib_s"] == 1042048 and m["read_iops"] == 1017.62554
    assert m["read_runtime_ms"] == 3007 and m["read_total_ios"] == 3060
    assert m["read_clat_p50_us"] == 6651.904


def test_rw_mix_has_both_directions():
    result = _parse("randrw_mix70_4k_libaio.json")
    m = result["metrics"]
    assert m["read_iops"] == 46866.044652 and m["write_iops"] == 20059.646784
    assert m["read_total_ios"] == 140645 and m["write_total_ios"] == 60199
    # 70 % reads, as asked
    assert m["read_total_ios"] / (m["read_total_ios"] + m["write_total_ios"]) == pytest.approx(0.70, abs=0.01)
    assert m["read_clat_p99_us"] == 1220.608 and m["write_clat_p99_us"] == 1777.664
    _assert_idle(m, "trim")


# ---------------------------------------------------------------------------
# Several jobs
# ---------------------------------------------------------------------------

def _pooled(blocks):
    """Combined mean/sample stddev from per-job (N, mean, stddev) via sums of squares."""
    n = sum(b["N"] for b in blocks)
    total = sum(b["N"] * b["mean"] for b in blocks)
    squares = sum(b["stddev"] ** 2 * (b["N"] - 1) + b["N"] * b["mean"] ** 2 for b in blocks)
    mean = total / n
    return mean, math.sqrt((squares - n * mean ** 2) / (n - 1))


def test_numjobs2_without_group_reporting_sums_and_weights():
    result = _parse("randread_numjobs2_io_uring.json")
    jobs = _doc("randread_numjobs2_io_uring.json")["jobs"]
    m = result["metrics"]
    assert len(jobs) == 2 and jobs[0]["jobname"] == jobs[1]["jobname"] == "nj2"
    assert m["jobs"] == 2
    assert m["read_iops"] == pytest.approx(jobs[0]["read"]["iops"] + jobs[1]["read"]["iops"], rel=1e-12)
    assert m["read_iops"] == pytest.approx(87127.290903, rel=1e-12)
    assert m["read_bw_kib_s"] == sum(j["read"]["bw"] for j in jobs) == 348508
    assert m["read_io_bytes"] == sum(j["read"]["io_bytes"] for j in jobs)
    assert m["read_total_ios"] == sum(j["read"]["total_ios"] for j in jobs)
    assert m["read_runtime_ms"] == max(j["read"]["runtime"] for j in jobs)
    mean, stddev = _pooled([j["read"]["clat_ns"] for j in jobs])
    assert m["read_clat_mean_us"] == pytest.approx(mean / 1000, rel=1e-9)
    assert m["read_clat_stddev_us"] == pytest.approx(stddev / 1000, rel=1e-9)
    assert m["read_clat_min_us"] == min(j["read"]["clat_ns"]["min"] for j in jobs) / 1000
    assert m["read_clat_max_us"] == max(j["read"]["clat_ns"]["max"] for j in jobs) / 1000
    # No bins: the N-weighted mean of the per-job percentiles, flagged as approximate.
    n = [j["read"]["clat_ns"]["N"] for j in jobs]
    p99 = [j["read"]["clat_ns"]["percentile"]["99.000000"] for j in jobs]
    assert m["read_clat_p99_us"] == pytest.approx((p99[0] * n[0] + p99[1] * n[1]) / sum(n) / 1000, rel=1e-12)
    assert any("approximation" in w for w in result["warnings"])
    assert m["usr_cpu_pct"] == pytest.approx((jobs[0]["usr_cpu"] + jobs[1]["usr_cpu"]) / 2)
    assert len(result["details"]["jobs"]) == 2


def test_group_reporting_is_one_job_with_exact_percentiles():
    result = _parse("randread_numjobs2_group_reporting_io_uring.json")
    m = result["metrics"]
    assert m["jobs"] == 1 and result["warnings"] == []
    assert m["read_iops"] == 98237.920693
    assert m["read_clat_p99_us"] == 741.376 and m["read_clat_p999_us"] == 2342.912


def _percentile_from_counts(pairs, pct):
    """Independent reading of a histogram: first value whose cumulative count reaches pct % of N."""
    values = sorted(pairs)
    cumulative = []
    running = 0
    for _value, count in values:
        running += count
        cumulative.append(running)
    index = bisect.bisect_left(cumulative, pct / 100.0 * running)
    return values[index][0]


def test_json_plus_bins_reproduce_fios_own_percentiles():
    # The histogram reading is checked against fio itself, job by job.
    for job in _doc("randread_numjobs2_jsonplus.json")["jobs"]:
        clat = job["read"]["clat_ns"]
        pairs = [(int(k), v) for k, v in clat["bins"].items()]
        for key, value in clat["percentile"].items():
            assert _percentile_from_counts(pairs, float(key)) == value


def test_json_plus_merges_histograms_for_exact_percentiles():
    result = _parse("randread_numjobs2_jsonplus.json")
    jobs = _doc("randread_numjobs2_jsonplus.json")["jobs"]
    m = result["metrics"]
    assert m["jobs"] == 2
    assert not any("approximation" in w for w in result["warnings"])
    merged = {}
    for job in jobs:
        for key, count in job["read"]["clat_ns"]["bins"].items():
            merged[int(key)] = merged.get(int(key), 0) + count
    assert sum(merged.values()) == sum(j["read"]["clat_ns"]["N"] for j in jobs)
    for label, key in PCT_KEYS.items():
        assert m["read_clat_%s_us" % label] == _percentile_from_counts(list(merged.items()), float(key)) / 1000
    assert m["read_clat_p50_us"] == 158.72
    assert m["read_clat_p99_us"] == 1597.44
    assert m["read_iops"] == pytest.approx(sum(j["read"]["iops"] for j in jobs), rel=1e-12)


def test_stonewall_groups():
    result = _parse("stonewall_two_groups.json")
    jobs = _doc("stonewall_two_groups.json")["jobs"]
    m = result["metrics"]
    assert [j["groupid"] for j in jobs] == [0, 1]
    assert m["jobs"] == 2 and m["groups"] == 2
    assert m["write_iops"] == jobs[0]["write"]["iops"] == 72911.696101
    assert m["read_iops"] == jobs[1]["read"]["iops"] == 70533.488837
    # Each direction comes from one group only: no "ran one after another" warning.
    assert result["warnings"] == []
    assert result["details"]["global_options"]["size"] == "64M"


def test_stonewall_same_direction_warns():
    doc = _doc("stonewall_two_groups.json")
    doc["jobs"][0]["read"] = doc["jobs"][1]["read"]
    result = parse(json.dumps(doc, indent=2))
    assert result["metrics"]["read_iops"] == pytest.approx(2 * 70533.488837)
    assert any("ran one after another" in w for w in result["warnings"])


def test_status_interval_takes_the_last_document():
    result = _parse("randread_status_interval_1s.json")
    last = _doc("randread_status_interval_1s.json")["jobs"][0]["read"]
    assert read_fixture("fio", "randread_status_interval_1s.json").count('"fio version"') == 4
    assert result["metrics"]["read_io_bytes"] == last["io_bytes"] == 800018432
    assert result["metrics"]["read_iops"] == 65083.972009
    assert result["warnings"] == ["4 JSON documents in the output (--status-interval?); using the last one"]
    assert result["valid"] is True


def test_status_interval_truncated_final_document_is_invalid():
    text = read_fixture("fio", "randread_status_interval_1s.json")
    cut = text[:text.rindex('"fio version"') + 300]
    result = parse(cut)
    assert result["valid"] is False
    assert "final report is missing" in result["reasons"][0]


# ---------------------------------------------------------------------------
# Failures
# ---------------------------------------------------------------------------

def test_failed_job_next_to_a_good_one_is_invalid_with_errno_text():
    result = _parse("error_read_and_trim.json")
    m = result["metrics"]
    assert result["valid"] is False
    assert result["reasons"] == ["fio job randtrim error 25 (Inappropriate ioctl for device)"]
    # the fio: line before the JSON is skipped and kept
    assert result["details"]["diagnostics"] == [
        "fio: pid=11979, err=25/file:ioengines.c:399, func=td_io_queue, error=Inappropriate ioctl for device"]
    assert "skipped 1 non-JSON line" in result["warnings"][0]
    assert m["jobs"] == 2
    assert m["read_iops"] == 43048.65045 and m["read_io_bytes"] == 529158144
    # trim: total_ios 1 but io_bytes 0 and runtime 0 -> not exercised
    _assert_idle(m, "trim")
    _assert_idle(m, "write")


def test_job_error_without_any_io_is_a_parse_error():
    with pytest.raises(ParseError) as exc:
        _parse("error_trim_only.json")
    message = str(exc.value)
    assert "no job did any I/O" in message
    assert "fio job trimfile error 25 (Inappropriate ioctl for device)" in message


def test_only_fio_error_lines_is_a_parse_error_quoting_them():
    with pytest.raises(ParseError) as exc:
        _parse("error_directory_missing.txt")
    assert "no JSON document found" in str(exc.value)
    assert "func=lstat, error=No such file or directory" in str(exc.value)


@pytest.mark.parametrize("text, pattern", [
    ("", "empty"),
    ("\n \n", "empty"),
    ("Usage: fio [options] [job options] <job file(s)>\n", "no JSON document"),
    ('{\n"start": {}, "end": {}, "intervals": []\n}\n', "no jobs list"),
    ('{\n"fio version": "fio-3.33", "jobs": []\n}\n', "jobs list is empty"),
])
def test_bad_input(text, pattern):
    with pytest.raises(ParseError, match=pattern):
        parse(text)


def test_truncated_json_is_refused():
    text = read_fixture("fio", "randread_4k_qd32_libaio.json")[:2000]
    with pytest.raises(ParseError, match="truncated"):
        parse(text)


def test_iperf3_output_is_refused():
    with pytest.raises(ParseError, match="no jobs list"):
        parse(read_fixture("iperf3", "tcp_3s.json"))


@pytest.mark.parametrize("bad", ["nan", "-nan", "NaN", "inf", "1e999"])
def test_nan_inf_are_refused(bad):
    text = read_fixture("fio", "randread_4k_qd32_libaio.json")
    target = '"iops" : 69754.748417'
    assert target in text
    with pytest.raises(ParseError, match="nan|NaN|inf|Infinity"):
        parse(text.replace(target, '"iops" : ' + bad))


def test_fio2_microsecond_keys_and_kib_io_bytes():
    doc = {
        "fio version": "fio-2.2.10",
        "jobs": [{
            "jobname": "old", "groupid": 0, "error": 0, "usr_cpu": 1.5, "sys_cpu": 2.5,
            "read": {"io_bytes": 1024, "bw": 341, "iops": 85.33, "runtime": 3000, "total_ios": 256,
                     "slat": {"min": 1, "max": 10, "mean": 2.0, "stddev": 1.0},
                     "clat": {"min": 100, "max": 900, "mean": 250.5, "stddev": 50.0,
                              "percentile": {"50.000000": 240, "99.000000": 800, "99.900000": 900}},
                     "lat": {"min": 101, "max": 901, "mean": 252.5, "stddev": 50.0}},
            "write": {"io_bytes": 0, "bw": 0, "iops": 0, "runtime": 0, "total_ios": 0},
        }],
    }
    result = parse(json.dumps(doc, indent=2))
    m = result["metrics"]
    assert m["read_io_bytes"] == 1024 * 1024  # KiB in fio <= 2.20
    assert m["read_bw_bytes_s"] == 341 * 1024
    assert m["read_clat_mean_us"] == 250.5 and m["read_clat_p99_us"] == 800
    assert m["read_clat_p95_us"] is None  # not in the table: null, never 0
    assert m["read_lat_mean_us"] == 252.5 and m["read_slat_mean_us"] == 2.0
    assert any("io_bytes read as KiB" in w for w in result["warnings"])
    _assert_idle(m, "write")


# ---------------------------------------------------------------------------
# The module
# ---------------------------------------------------------------------------

def test_module_src_and_dest(tmp_path):
    dest = tmp_path / "fio.json"
    src = fixture_path("fio", "randread_numjobs2_jsonplus.json")
    failed, result = run_module(fio_parse, {"src": src, "dest": str(dest), "keep_raw": False})
    assert failed is False and result["changed"] is True
    assert result["ansible_facts"]["fio"]["metrics"]["read_clat_p99_us"] == 1597.44
    written = json.loads(dest.read_text())
    assert written["metrics"]["jobs"] == 2 and written["valid"] is True
    assert "raw" not in written


def test_module_invalid_run_is_not_a_failure():
    failed, result = run_module(fio_parse, {"content": read_fixture("fio", "error_read_and_trim.json")})
    assert failed is False
    assert result["valid"] is False
    assert result["ansible_facts"]["fio"]["reasons"] == ["fio job randtrim error 25 (Inappropriate ioctl for device)"]


def test_module_failure_names_tool_and_source():
    src = fixture_path("fio", "error_trim_only.json")
    failed, result = run_module(fio_parse, {"src": src})
    assert failed is True
    assert result["msg"].startswith("fio output %s: no job did any I/O" % src)


# ---------------------------------------------------------------------------
# fio 2.1 (published output, see the fixture README): no N, no total_ios
# ---------------------------------------------------------------------------

def test_fio21_single_job_latencies_are_read():
    result = _parse("v2111_randread_single_job.json")
    m = result["metrics"]
    assert m["fio_version"] == "fio-2.1.11" and m["jobs"] == 1
    assert (m["read_iops"], m["read_bw_kib_s"], m["read_runtime_ms"]) == (5, 21, 2127550)
    assert m["read_io_bytes"] == 44920 * 1024
    assert (m["read_clat_mean_us"], m["read_clat_stddev_us"], m["read_clat_min_us"], m["read_clat_max_us"]) == (
        255.34, 94.40, 53, 6329)
    assert (m["read_clat_p50_us"], m["read_clat_p90_us"], m["read_clat_p95_us"], m["read_clat_p99_us"],
            m["read_clat_p999_us"]) == (243, 318, 370, 506, 812)
    assert m["read_lat_mean_us"] == 255.56
    # not printed by 2.1: null, each with a warning naming the version or the reason
    assert m["read_total_ios"] is None
    assert "read_total_ios is null: fio-2.1.11 does not print total_ios (added in fio 2.2)" in result["warnings"]
    assert m["read_slat_mean_us"] is None  # an all-zero slat block (sync engine): not 0
    assert any(w.startswith("read.slat is all zeros without a sample count") for w in result["warnings"])
    assert not any("pooled" in w for w in result["warnings"])  # one job: nothing estimated
    assert result["valid"] is True
    _assert_idle(m, "write")
    _assert_idle(m, "trim")


def test_fio21_four_jobs_are_pooled_with_estimated_counts():
    result = _parse("v2111_randread_numjobs4.json")
    jobs = [job["read"] for job in json.loads(read_fixture("fio", "v2111_randread_numjobs4.json"))["jobs"]]
    m = result["metrics"]
    assert m["jobs"] == 4
    assert m["read_iops"] == sum(j["iops"] for j in jobs) == 20
    assert m["read_io_bytes"] == sum(j["io_bytes"] for j in jobs) * 1024
    assert m["read_runtime_ms"] == max(j["runtime"] for j in jobs)
    weights = [j["iops"] * j["runtime"] / 1000.0 for j in jobs]
    mean = sum(w * j["clat"]["mean"] for w, j in zip(weights, jobs)) / sum(weights)
    assert m["read_clat_mean_us"] == pytest.approx(mean, rel=1e-12)
    assert min(j["clat"]["mean"] for j in jobs) <= m["read_clat_mean_us"] <= max(j["clat"]["mean"] for j in jobs)
    assert m["read_clat_min_us"] == 53 and m["read_clat_max_us"] == 6329
    within = sum((w - 1) * j["clat"]["stddev"] ** 2 for w, j in zip(weights, jobs))
    between = sum(w * (j["clat"]["mean"] - mean) ** 2 for w, j in zip(weights, jobs))
    assert m["read_clat_stddev_us"] == pytest.approx(math.sqrt((within + between) / (sum(weights) - 1)))
    assert m["read_clat_p99_us"] == pytest.approx(
        sum(w * j["clat"]["percentile"]["99.000000"] for w, j in zip(weights, jobs)) / sum(weights))
    assert m["read_total_ios"] is None and m["read_slat_mean_us"] is None
    assert any("fio-2.1.11 prints neither N nor total_ios: read latencies of 4 jobs" in w for w in result["warnings"])
    assert any("N-weighted mean of per-job percentiles" in w for w in result["warnings"])


def test_fio2_json_plus_bucket_indexes_are_not_taken_for_latencies():
    # fio 2.5-2.99 json+ writes clat.bins as bucket indexes plus FIO_IO_U_PLAT_* keys (stat.c, fio-2.15)
    doc = json.loads(read_fixture("fio", "v2111_randread_numjobs4.json"))
    for job in doc["jobs"]:
        bins = dict((str(i), 0) for i in range(1216))
        bins["250"] = 1000
        bins.update(FIO_IO_U_PLAT_BITS=6, FIO_IO_U_PLAT_VAL=64, FIO_IO_U_PLAT_NR=1216)
        job["read"]["clat"]["bins"] = bins
    result = parse(json.dumps(doc))
    assert 300 < result["metrics"]["read_clat_p99_us"] < 520  # the per-job percentiles, not index 250 or 1215
    assert any("fio 2.x bucket indexes" in w and "fio-2.1.11" in w for w in result["warnings"])


def test_fio3_before_3_20_without_n_weights_by_total_ios():
    # fio 3.0-3.19 print *_ns blocks without "N" (stat.c before fio-3.20): total_ios is the weight
    doc = _doc("randread_numjobs2_io_uring.json")
    for job in doc["jobs"]:
        for direction in ("read", "write", "trim"):
            for block in ("slat_ns", "clat_ns", "lat_ns"):
                job[direction][block].pop("N", None)
    doc["jobs"][0]["read"]["slat_ns"].update(min=0, max=0, mean=0.0, stddev=0.0)
    doc["jobs"][1]["read"]["slat_ns"].update(min=0, max=0, mean=0.0, stddev=0.0)
    result = parse(json.dumps(doc))
    reference = _parse("randread_numjobs2_io_uring.json")["metrics"]
    m = result["metrics"]
    for key in ("read_clat_mean_us", "read_clat_stddev_us", "read_clat_min_us", "read_clat_max_us",
                "read_lat_mean_us", "read_total_ios"):
        assert m[key] == pytest.approx(reference[key], rel=1e-9), key
    assert m["read_slat_mean_us"] is None
    assert any(w.startswith("read.slat is all zeros without a sample count (fio < 3.20")
               for w in result["warnings"])


def test_fio21_with_error_lines_before_the_json():
    text = "fio: pid=4242, err=5/file:io_u.c:1747, func=io_u error, error=Input/output error\n" + read_fixture(
        "fio", "v2111_randread_single_job.json")
    result = parse(text)
    assert result["metrics"]["read_clat_mean_us"] == 255.34
    assert result["details"]["diagnostics"][0].startswith("fio: pid=4242")
    assert any("skipped 1 non-JSON line" in w for w in result["warnings"])


@pytest.mark.parametrize("name, pattern", [
    ("terse_randread_psync.txt", r"this is fio's terse output \(--output-format=terse / --minimal, terse version 3\)"),
    ("normal_randread_psync.txt", r"this is fio's normal human-readable report"),
])
def test_other_fio_formats_are_named(name, pattern):
    """Issue #26 item 4: captured fio-3.33 terse and normal outputs are refused naming the format."""
    with pytest.raises(ParseError, match=pattern):
        _parse(name)


def test_terse_version_2_has_no_fio_version_field():
    line = "2;job1;0;0;" + ";".join(["0"] * 60) + "\n"
    with pytest.raises(ParseError, match="terse version 2"):
        parse(line, "terse2")
