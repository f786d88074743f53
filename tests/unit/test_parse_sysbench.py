"""sysbench parser and sysbench_parse module, on real sysbench 1.0.20 captures (tests/fixtures/sysbench)."""
import json

import pytest
import sysbench_parse
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_sysbench import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name):
    return parse(read_fixture("sysbench", name), source=name)


COMMON_CPU_T2 = {
    "test": "cpu", "threads": 2, "total_time_s": 5.0023, "total_events": 2454,
    "latency_min_ms": 0.97, "latency_avg_ms": 4.07, "latency_max_ms": 94.73, "latency_p95_ms": 9.73,
    "latency_sum_ms": 9981.82,
    "fairness_events_avg": 1227.0, "fairness_events_stddev": 38.0,
    "fairness_exec_time_avg_s": 4.9909, "fairness_exec_time_stddev_s": 0.0,
    "events_per_s": 490.35,
}


def test_cpu_every_metric():
    result = _parse("cpu_t2.txt")
    assert result["metrics"] == COMMON_CPU_T2
    assert isinstance(result["metrics"]["total_events"], int)
    assert result["valid"] is True and result["reasons"] == [] and result["warnings"] == []
    assert result["details"]["version"] == "1.0.20"
    assert result["details"]["latency_percentile"] == 95
    assert "intervals" not in result["details"]


def test_cpu_percentile_99_keeps_its_name():
    m = _parse("cpu_t1_p99.txt")["metrics"]
    assert m["latency_p99_ms"] == 3.07
    assert "latency_p95_ms" not in m
    assert (m["threads"], m["total_events"], m["events_per_s"]) == (1, 1346, 671.79)


def test_cpu_percentile_disabled():
    result = _parse("cpu_t1_percentile_off.txt")
    m = result["metrics"]
    assert not [name for name in m if name.startswith("latency_p")]
    assert (m["latency_min_ms"], m["latency_avg_ms"], m["latency_max_ms"], m["latency_sum_ms"]) == (
        1.14, 1.53, 5.62, 2000.46)
    assert result["details"]["latency_percentile"] is None
    assert result["valid"] is True


def test_report_interval_lines():
    result = _parse("cpu_t2_report_interval.txt")
    assert result["details"]["intervals"] == [
        {"t_s": 1.0, "threads": 2, "eps": 847.31, "lat_ms": 5.57, "lat_percentile": "95"},
        {"t_s": 2.0, "threads": 2, "eps": 781.36, "lat_ms": 5.57, "lat_percentile": "95"},
    ]
    assert result["metrics"]["events_per_s"] == 785.41
    assert result["metrics"]["total_events"] == 2358


def test_memory():
    m = _parse("memory_t1.txt")["metrics"]
    assert m["test"] == "memory"
    assert (m["total_operations"], m["operations_per_s"]) == (2097152, 3117294.87)
    assert (m["transferred_mib"], m["transfer_mib_s"]) == (2048.0, 3044.23)
    assert (m["total_time_s"], m["total_events"], m["latency_max_ms"], m["latency_sum_ms"]) == (
        0.6703, 2097152, 0.66, 345.62)
    assert (m["fairness_events_avg"], m["fairness_exec_time_avg_s"]) == (2097152.0, 0.3456)


def test_fileio():
    result = _parse("fileio_rndrw_64m.txt")
    m = result["metrics"]
    assert m["test"] == "fileio"
    assert (m["reads_per_s"], m["writes_per_s"], m["fsyncs_per_s"]) == (17951.68, 11967.79, 1197.18)
    assert (m["read_mib_s"], m["written_mib_s"]) == (280.50, 187.00)
    assert (m["total_time_s"], m["total_events"], m["latency_p95_ms"], m["latency_max_ms"]) == (
        5.0015, 155686, 0.02, 27.79)
    assert result["valid"] is True


OLTP = {
    "test": "oltp", "threads": 2,
    "queries_read": 48706, "queries_write": 13916, "queries_other": 6958, "queries_total": 69580,
    "transactions": 3479, "transactions_per_s": 347.69, "queries": 69580, "queries_per_s": 6953.85,
    "ignored_errors": 0, "ignored_errors_per_s": 0.0, "reconnects": 0, "reconnects_per_s": 0.0,
    "total_time_s": 10.0044, "total_events": 3479,
    "latency_min_ms": 1.48, "latency_avg_ms": 5.75, "latency_max_ms": 127.08, "latency_p95_ms": 14.21,
    "latency_sum_ms": 19988.86,
    "fairness_events_avg": 1739.5, "fairness_events_stddev": 108.5,
    "fairness_exec_time_avg_s": 9.9944, "fairness_exec_time_stddev_s": 0.0,
}


def test_oltp_read_write_every_metric():
    result = _parse("oltp_read_write_t2.txt")
    assert result["metrics"] == OLTP
    assert result["valid"] is True and result["warnings"] == []


def test_oltp_ignored_errors_and_reconnects_warn():
    text = read_fixture("sysbench", "oltp_read_write_t2.txt")
    text = text.replace("ignored errors:                      0      (0.00 per sec.)",
                        "ignored errors:                      12     (1.20 per sec.)")
    text = text.replace("reconnects:                          0      (0.00 per sec.)",
                        "reconnects:                          1      (0.10 per sec.)")
    result = parse(text)
    assert (result["metrics"]["ignored_errors"], result["metrics"]["ignored_errors_per_s"]) == (12, 1.2)
    assert result["metrics"]["reconnects"] == 1
    assert result["valid"] is True
    assert len(result["warnings"]) == 2


def test_zero_events_is_invalid():
    text = read_fixture("sysbench", "cpu_t2.txt").replace("total number of events:              2454",
                                                          "total number of events:              0")
    result = parse(text)
    assert result["metrics"]["total_events"] == 0
    assert result["valid"] is False
    assert "no events" in result["reasons"][0]


# ---------------------------------------------------------------------------
# Failures and bad input
# ---------------------------------------------------------------------------

def test_fatal_fileio_without_prepare():
    with pytest.raises(ParseError) as info:
        _parse("fatal_fileio_no_prepare.txt")
    assert str(info.value) == (
        "sysbench output fatal_fileio_no_prepare.txt: sysbench failed: FATAL: Cannot open file 'test_file.0' "
        "errno = 2 (No such file or directory) (Did you forget to run the prepare step?)")


def test_fatal_oltp_missing_table():
    with pytest.raises(ParseError, match="MySQL error: 1146 \"Table 'sbtest.sbtest1' doesn't exist\""):
        _parse("fatal_oltp_no_table.txt")


def test_fatal_after_a_complete_report_still_fails():
    text = read_fixture("sysbench", "cpu_t2.txt") + "FATAL: something went wrong at exit\n"
    with pytest.raises(ParseError, match="something went wrong"):
        parse(text)


def test_usage_text():
    with pytest.raises(ParseError, match="usage text"):
        _parse("usage_help.txt")


@pytest.mark.parametrize("text", ["", " \n", None])
def test_empty(text):
    with pytest.raises(ParseError, match="empty|no output"):
        parse(text)


@pytest.mark.parametrize("tool, name", [("httperf", "normal_rate150.txt"), ("ab", "normal_n2000.txt"),
                                        ("ping", "normal_c5.txt")])
def test_other_tools_output(tool, name):
    with pytest.raises(ParseError, match="not a sysbench report"):
        parse(read_fixture(tool, name))


def test_truncated_before_general_statistics():
    text = read_fixture("sysbench", "oltp_read_write_t2.txt")
    with pytest.raises(ParseError, match="General statistics"):
        parse(text[:text.index("General statistics")])


def test_truncated_before_fairness():
    text = read_fixture("sysbench", "cpu_t2.txt")
    with pytest.raises(ParseError, match="Threads fairness"):
        parse(text[:text.index("Threads fairness")])


def test_truncated_inside_latency():
    text = read_fixture("sysbench", "cpu_t2.txt")
    with pytest.raises(ParseError, match="sum:"):
        parse(text[:text.index("         sum:")])


def test_missing_sql_line():
    text = read_fixture("sysbench", "oltp_read_write_t2.txt").replace("    queries:  ", "    queriez:  ")
    with pytest.raises(ParseError, match="'queries:'"):
        parse(text)


@pytest.mark.parametrize("bad", ["nan", "inf", "-nan"])
def test_non_finite(bad):
    text = read_fixture("sysbench", "cpu_t2.txt").replace("events per second:   490.35",
                                                          "events per second:   %s" % bad)
    with pytest.raises(ParseError, match="events_per_s is"):
        parse(text)


def test_old_format_rejected():
    with pytest.raises(ParseError, match="0.4/0.5"):
        parse("sysbench 0.4.12:  multi-threaded system evaluation benchmark\n\nGeneral statistics:\n")


# ---------------------------------------------------------------------------
# The module
# ---------------------------------------------------------------------------

def test_module_src_dest(tmp_path):
    dest = tmp_path / "sb.json"
    failed, result = run_module(sysbench_parse, {"src": fixture_path("sysbench", "oltp_read_write_t2.txt"),
                                                 "dest": str(dest)})
    assert failed is False and result["changed"] is True
    assert result["ansible_facts"]["sysbench"]["metrics"]["transactions_per_s"] == 347.69
    assert json.loads(dest.read_text())["metrics"]["queries_total"] == 69580


def test_module_fatal_fails():
    path = fixture_path("sysbench", "fatal_fileio_no_prepare.txt")
    failed, result = run_module(sysbench_parse, {"src": path})
    assert failed is True
    assert result["msg"].startswith("sysbench output %s: sysbench failed: FATAL: Cannot open file" % path)


def test_module_content():
    failed, result = run_module(sysbench_parse, {"content": read_fixture("sysbench", "memory_t1.txt")})
    assert failed is False
    assert result["source"] == "<content>"
    assert result["metrics"]["transfer_mib_s"] == 3044.23


# ---------------------------------------------------------------------------
# sysbench 1.1 (published outputs of 1.1.0 builds) and a byte-order mark
# ---------------------------------------------------------------------------

COMMON_11_FIELDS = ("total_time_s", "total_events", "latency_min_ms", "latency_avg_ms", "latency_max_ms",
                    "latency_p95_ms", "latency_sum_ms", "fairness_events_avg", "fairness_events_stddev",
                    "fairness_exec_time_avg_s", "fairness_exec_time_stddev_s")


def test_v11_cpu_every_metric():
    result = _parse("v11_cpu_t1.txt")
    assert result["metrics"] == {
        "test": "cpu", "threads": 1, "events_per_s": 853.70, "total_time_s": 10.0012, "total_events": 8538,
        "latency_min_ms": 1.15, "latency_avg_ms": 1.17, "latency_max_ms": 4.83, "latency_p95_ms": 1.23,
        "latency_sum_ms": 9993.21, "fairness_events_avg": 8538.0, "fairness_events_stddev": 0.0,
        "fairness_exec_time_avg_s": 9.9932, "fairness_exec_time_stddev_s": 0.0,
    }
    assert result["valid"] is True and result["warnings"] == []
    assert (result["details"]["version"], result["details"]["layout"]) == ("1.1.0-5cd1244", "1.1")


def test_v11_memory():
    m = _parse("v11_memory_t1.txt")["metrics"]
    assert (m["test"], m["total_operations"], m["operations_per_s"], m["transferred_mib"], m["transfer_mib_s"]) == (
        "memory", 8271480, 827143.22, 8077.62, 807.76)
    assert (m["total_time_s"], m["total_events"], m["latency_max_ms"], m["fairness_exec_time_avg_s"]) == (
        10.0001, 8271480, 0.36, 3.3840)


def test_v11_oltp_read_write():
    result = _parse("v11_oltp_read_write_t1.txt")
    m = result["metrics"]
    assert (m["test"], m["queries_read"], m["queries_write"], m["queries_other"], m["queries_total"]) == (
        "oltp", 10416, 2976, 1488, 14880)
    assert (m["transactions"], m["transactions_per_s"], m["queries_per_s"]) == (744, 74.37, 1487.35)
    assert (m["total_time_s"], m["total_events"], m["latency_p95_ms"], m["latency_sum_ms"]) == (
        10.0044, 744, 15.27, 10000.99)
    assert result["valid"] is True and result["warnings"] == []


def test_v11_fileio_new_summary_and_missing_fields_warn():
    result = _parse("v11_fileio_rndrw_t4.txt")
    m = result["metrics"]
    assert (m["test"], m["threads"]) == ("fileio", 4)
    assert (m["reads_per_s"], m["read_mib_s"], m["writes_per_s"], m["written_mib_s"], m["fsyncs_per_s"]) == (
        9159.58, 89.45, 6109.47, 59.66, 163.45)
    assert (m["latency_min_ms"], m["latency_avg_ms"], m["latency_max_ms"], m["latency_p95_ms"],
            m["latency_sum_ms"]) == (0.06, 0.26, 10.40, 0.55, 2570.92)
    # 1.1 fileio does not print these: null, and a warning naming the version says why
    for key in ("total_time_s", "total_events", "fairness_events_avg", "fairness_events_stddev",
                "fairness_exec_time_avg_s", "fairness_exec_time_stddev_s"):
        assert m[key] is None, key
    assert result["valid"] is True
    assert len(result["warnings"]) == 1 and "sysbench 1.1.0-df89d34 fileio" in result["warnings"][0]
    # the same metric names as the 1.0 fileio report
    assert set(m) == set(_parse("fileio_rndrw_64m.txt")["metrics"])


def test_v11_fileio_nothing_done_is_invalid():
    text = read_fixture("sysbench", "v11_fileio_rndrw_t4.txt")
    for old, new in (("IOPS=9159.58", "IOPS=0.00"), ("IOPS=6109.47", "IOPS=0.00"), ("IOPS=163.45", "IOPS=0.00")):
        text = text.replace(old, new)
    result = parse(text)
    assert result["valid"] is False and "nothing was measured" in result["reasons"][0]


@pytest.mark.parametrize("name", ["v11_cpu_t1.txt", "v11_memory_t1.txt", "v11_oltp_read_write_t1.txt"])
def test_v11_same_metric_names_as_v10(name):
    v10 = {"v11_cpu_t1.txt": "cpu_t2.txt", "v11_memory_t1.txt": "memory_t1.txt",
           "v11_oltp_read_write_t1.txt": "oltp_read_write_t2.txt"}[name]
    assert set(_parse(name)["metrics"]) == set(_parse(v10)["metrics"])
    assert all(_parse(name)["metrics"][key] is not None for key in COMMON_11_FIELDS)


def test_v11_truncated_before_throughput_names_both_layouts():
    text = read_fixture("sysbench", "v11_cpu_t1.txt")
    with pytest.raises(ParseError, match=r"stopped before its report.*") as info:
        parse(text[:text.index("Throughput:")])
    assert "'Throughput:' of 1.1" in str(info.value) and "sysbench 1.1.0-5cd1244" in str(info.value)


def test_v11_truncated_before_fairness():
    text = read_fixture("sysbench", "v11_memory_t1.txt")
    with pytest.raises(ParseError, match="Threads fairness"):
        parse(text[:text.index("Threads fairness")])


def test_v11_fileio_truncated_inside_summary():
    text = read_fixture("sysbench", "v11_fileio_rndrw_t4.txt")
    with pytest.raises(ParseError, match="'fsync: IOPS='"):
        parse(text[:text.index("         fsync:")] + "\nLatency (ms):\n")


def test_byte_order_mark_is_ignored():
    text = read_fixture("sysbench", "bom_cpu_t2.txt")
    assert text.startswith("\ufeffsysbench 1.0.20")
    result = parse(text)
    assert result["metrics"] == COMMON_CPU_T2
    assert result["details"]["version"] == "1.0.20"


def test_module_byte_order_mark_and_v11_fileio_warning():
    failed, result = run_module(sysbench_parse, {"src": fixture_path("sysbench", "bom_cpu_t2.txt")})
    assert failed is False and result["metrics"]["events_per_s"] == 490.35
    failed, result = run_module(sysbench_parse, {"src": fixture_path("sysbench", "v11_fileio_rndrw_t4.txt")})
    assert failed is False and result["metrics"]["total_events"] is None
    assert "1.1.0-df89d34" in result["ansible_facts"]["sysbench"]["warnings"][0]


def test_old_format_without_banner_rejected():
    # the 0.4/0.5 common block (sysbench/sb_logger.c of that code base, e.g. commit 80df3b3^): no "Latency (ms):"
    text = ("General statistics:\n"
            "    total time:                          10.0012s\n"
            "    total number of events:              10000\n"
            "    total time taken by event execution: 9.9964\n"
            "    per-request statistics:\n"
            "         min:                                  0.87ms\n")
    with pytest.raises(ParseError, match="0.4/0.5"):
        parse(text)


def test_memory_rate_padded_by_printf():
    # sysbench prints the rates with %8.2f: under 10000 they are padded ("( 5641.62 per second)");
    # captured in an emulated guest, with --time=0's "endless test" warning in front.
    result = _parse("memory_read_padded_rate.txt")
    m = result["metrics"]
    assert result["valid"], result["reasons"]
    assert (m["total_operations"], m["operations_per_s"]) == (1024, 5641.62)
    assert (m["transferred_mib"], m["transfer_mib_s"]) == (1024.0, 5641.62)


@pytest.mark.parametrize("name, events", [("threads_t2.txt", 461), ("mutex_t2.txt", None)])
def test_threads_and_mutex_have_only_the_common_statistics(name, events):
    """Captured sysbench 1.0.20: these tests print no block of their own and no line naming them (their
    print_mode lines of 0.4 are gone), so the test is 'unknown' and the warning says why."""
    result = _parse(name)
    assert result["metrics"]["test"] == "unknown"
    assert any("threads and mutex tests print none" in w for w in result["warnings"])
    if events is not None:
        assert result["metrics"]["total_events"] == events
