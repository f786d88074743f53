"""httperf parser and httperf_parse module, on real httperf 0.9.0 captures (tests/fixtures/httperf)."""
import json

import httperf_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_httperf import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name, **options):
    return parse(read_fixture("httperf", name), source=name, **options)


def _reasons(result):
    return " | ".join(result["reasons"])


def _warnings(result):
    return " | ".join(result["warnings"])


# ---------------------------------------------------------------------------
# Every metric of a normal run, straight from normal_rate150.txt
# ---------------------------------------------------------------------------

NORMAL_RATE150 = {
    "connections": 2400, "requests": 2400, "replies": 2400, "test_duration_s": 15.998,
    "connection_rate_per_s": 150.0, "connection_period_ms": 6.7, "max_concurrent_connections": 3,
    "connection_time_min_ms": 0.1, "connection_time_ms": 0.5, "connection_time_max_ms": 16.2,
    "connection_time_median_ms": 0.5, "connection_time_stddev_ms": 1.0, "connect_time_ms": 0.0,
    "replies_per_connection": 1.0,
    "request_rate_per_s": 150.0, "request_period_ms": 6.7, "request_size_bytes": 62.0,
    "reply_rate_min_per_s": 150.0, "reply_rate_avg_per_s": 150.0, "reply_rate_max_per_s": 150.0,
    "reply_rate_stddev_per_s": 0.0, "reply_rate_samples": 3,
    "response_time_ms": 0.5, "transfer_time_ms": 0.0,
    "reply_size_header_bytes": 239.0, "reply_size_content_bytes": 1354.0, "reply_size_footer_bytes": 0.0,
    "reply_size_total_bytes": 1593.0,
    "status_1xx": 0, "status_2xx": 2400, "status_3xx": 0, "status_4xx": 0, "status_5xx": 0,
    "client_cpu_user_s": 3.84, "client_cpu_system_s": 10.44, "client_cpu_user_pct": 24.0,
    "client_cpu_system_pct": 65.2, "client_cpu_total_pct": 89.2,
    "net_io_kb_s": 242.5, "net_io_bps": 2000000,
    "errors_total": 0, "errors_client_timo": 0, "errors_socket_timo": 0, "errors_connrefused": 0,
    "errors_connreset": 0, "errors_fd_unavail": 0, "errors_addrunavail": 0, "errors_ftab_full": 0,
    "errors_other": 0,
    "max_connect_burst_length": 3, "requested_rate_per_s": 150.0, "num_conns": 2400,
    "replies_per_s_derived": 2400 / 15.998,
}


def test_normal_run_every_metric():
    result = _parse("normal_rate150.txt")
    assert result["tool"] == "httperf"
    assert result["source"] == "normal_rate150.txt"
    assert set(result["metrics"]) == set(NORMAL_RATE150)
    for name, expected in NORMAL_RATE150.items():
        assert result["metrics"][name] == pytest.approx(expected), name
    assert isinstance(result["metrics"]["connections"], int)
    assert isinstance(result["metrics"]["net_io_bps"], int)
    assert result["valid"] is True
    assert result["reasons"] == []
    assert result["warnings"] == []
    assert result["details"]["command_line"].startswith("httperf --timeout=5 --client=0/1 --server=127.0.0.1")
    assert result["details"]["requested_rate_from"] == "command line --rate"


def test_short_run_has_no_reply_rate_samples():
    m = _parse("short_rate100.txt")["metrics"]
    assert (m["connections"], m["replies"], m["test_duration_s"]) == (100, 100, 0.993)
    assert m["reply_rate_samples"] == 0
    for name in ("reply_rate_min_per_s", "reply_rate_avg_per_s", "reply_rate_max_per_s", "reply_rate_stddev_per_s"):
        assert m[name] is None, name
    assert m["replies_per_s_derived"] == pytest.approx(100 / 0.993)
    assert m["connection_rate_per_s"] == 100.7
    assert m["client_cpu_total_pct"] == 60.0
    assert m["net_io_bps"] == 1300000
    assert m["requested_rate_per_s"] == 100.0


def test_short_run_is_valid_with_a_sample_warning():
    result = _parse("short_rate100.txt")
    assert result["valid"] is True
    assert "0 samples" in _warnings(result)
    assert "replies_per_s_derived" in _warnings(result)


def test_single_sample_stddev_is_null():
    text = read_fixture("httperf", "normal_rate150.txt").replace("(3 samples)", "(1 samples)")
    result = parse(text)
    assert result["metrics"]["reply_rate_samples"] == 1
    assert result["metrics"]["reply_rate_stddev_per_s"] is None
    assert result["metrics"]["reply_rate_avg_per_s"] == 150.0
    assert "single" in _warnings(result)


def test_connrefused_is_invalid_with_placeholders_nulled():
    result = _parse("connrefused.txt")
    m = result["metrics"]
    assert (m["connections"], m["requests"], m["replies"]) == (50, 0, 0)
    assert (m["errors_total"], m["errors_connrefused"]) == (50, 50)
    assert m["connection_rate_per_s"] == 51.0
    assert m["request_rate_per_s"] == 0.0
    # httperf printed 0.0 for these because nothing was measured
    for name in ("connection_time_ms", "connection_time_min_ms", "connection_time_max_ms", "connect_time_ms",
                 "response_time_ms", "transfer_time_ms", "reply_size_total_bytes", "request_size_bytes",
                 "replies_per_connection", "reply_rate_avg_per_s"):
        assert m[name] is None, name
    assert m["replies_per_s_derived"] == 0.0
    assert result["valid"] is False
    # the primary cause first: nothing answered, and the client had every resource it needed
    assert result["reasons"][0].startswith("the service did not answer: 50 of 50 connections failed (client-timo 0, "
                                           "socket-timo 0, connrefused 50, connreset 0, other 0) and 0 replies came back")


def test_client_timeouts_are_invalid():
    result = _parse("client_timo.txt")
    m = result["metrics"]
    assert (m["connections"], m["requests"], m["replies"]) == (40, 40, 0)
    assert (m["errors_total"], m["errors_client_timo"]) == (40, 40)
    assert m["max_concurrent_connections"] == 21
    assert m["net_io_kb_s"] == 0.8
    assert m["net_io_bps"] == 0
    assert result["valid"] is False
    assert "client-timo 40" in _reasons(result)
    # 13.6 conn/s achieved for 20 requested: the rate check names both numbers
    assert "13.6 conn/s is 68.0 % of the requested 20.0 conn/s" in _reasons(result)
    assert result["reasons"][0].startswith("the service did not answer: 40 of 40 connections failed (client-timo 40")


def test_a_service_that_does_not_answer_is_not_blamed_on_the_client_cpu():
    """A dead path (the lab VM's hung NIC): httperf busy-polls on timeouts and falls behind the rate.

    Its CPU is then no evidence of client saturation: the primary cause is the service.
    """
    result = _parse("client_timo.txt", requested_rate=20, max_client_cpu_pct=40)
    assert result["valid"] is False
    assert result["reasons"][0].startswith("the service did not answer")
    assert "client CPU saturated" not in _reasons(result)
    assert "the client was the bottleneck" not in _reasons(result)
    assert "the service did not answer (see the first reason)" in _reasons(result)
    assert "httperf busy-polls while its connections wait" in _warnings(result)


def test_fd_unavail_blames_the_client():
    result = _parse("fd_unavail.txt")
    m = result["metrics"]
    assert (m["connections"], m["requests"], m["replies"], m["status_2xx"]) == (5879, 5879, 5879, 5879)
    assert (m["errors_total"], m["errors_fd_unavail"]) == (2121, 2121)
    assert m["connection_rate_per_s"] == 2934.3
    assert m["net_io_kb_s"] == 4742.5
    assert m["net_io_bps"] == 38900000
    assert (m["requested_rate_per_s"], m["num_conns"]) == (4000.0, 8000)
    assert result["valid"] is False
    reasons = _reasons(result)
    assert "the load generator (client) was the limit, not the system under test" in reasons
    assert "fd-unavail 2121" in reasons
    assert "FD_SETSIZE (~1024)" in reasons
    assert "select()" in reasons
    assert "2934.3 conn/s is 73.4 % of the requested 4000.0 conn/s" in reasons
    assert "the client was the bottleneck" in reasons
    assert "errors_total 2121 / connections 5879 = 36.08 %" in reasons
    assert "5879 of the 8000 connections" in _warnings(result)


def test_4xx_replies_are_counted_and_warned():
    result = _parse("status_4xx_rate20.txt")
    m = result["metrics"]
    assert (m["status_2xx"], m["status_4xx"], m["status_5xx"], m["errors_total"]) == (0, 60, 0, 0)
    assert m["reply_size_total_bytes"] == 308.0
    assert m["client_cpu_total_pct"] == 58.4
    assert result["valid"] is True
    assert "60 of 60 replies were HTTP errors (4xx 60, 5xx 0)" in _warnings(result)


def test_5xx_replies_and_busy_client_cpu_that_kept_up():
    # httperf polls: 98.5 % CPU at 20 conn/s is not saturation when the rate was met
    result = _parse("status_5xx_rate20.txt")
    m = result["metrics"]
    assert (m["status_4xx"], m["status_5xx"]) == (0, 60)
    assert m["client_cpu_total_pct"] == 98.5
    assert result["valid"] is True
    assert "client CPU 98.5 % (at or above max_client_cpu_pct" in _warnings(result)
    assert "the achieved 20.3 conn/s kept up with the requested 20.0" in _warnings(result)
    assert "(4xx 0, 5xx 60)" in _warnings(result)


def test_busy_client_cpu_that_fell_behind_is_saturated():
    # the same real run judged against a higher request: CPU-bound client
    result = _parse("status_5xx_rate20.txt", requested_rate=25)
    assert result["valid"] is False
    assert "client CPU saturated: httperf used 98.5 %" in _reasons(result)
    assert "achieved only" in _reasons(result)


def test_client_cpu_threshold_is_an_option():
    busy = _parse("status_4xx_rate50.txt", requested_rate=60)  # 96.0 % >= 95 and behind
    assert busy["valid"] is False
    assert "client CPU saturated" in _reasons(busy)
    relaxed = _parse("status_4xx_rate50.txt", requested_rate=60, max_client_cpu_pct=99)
    assert relaxed["metrics"]["client_cpu_total_pct"] == 96.0
    assert "client CPU saturated" not in _reasons(relaxed)
    assert relaxed["valid"] is False  # 50.8 conn/s < 0.9 x 60 requested
    assert "achieved connection rate" in _reasons(relaxed)


def test_no_rate_on_the_command_line():
    result = _parse("no_rate_calls2.txt")
    m = result["metrics"]
    assert (m["connections"], m["requests"], m["replies"]) == (500, 1000, 1000)
    assert m["replies_per_connection"] == 2.0
    assert m["requested_rate_per_s"] is None
    assert m["num_conns"] == 500
    assert m["net_io_bps"] == 162100000
    assert result["valid"] is True
    assert result["details"]["requested_rate_from"] is None


def test_requested_rate_option_overrides_the_echo():
    result = _parse("normal_rate150.txt", requested_rate=200)
    assert result["metrics"]["requested_rate_per_s"] == 200.0
    assert result["details"]["requested_rate_from"] == "option requested_rate"
    assert result["valid"] is False
    assert "150.0 conn/s is 75.0 % of the requested 200.0 conn/s" in _reasons(result)
    assert "client had headroom (client CPU 89.2 %)" in _reasons(result)
    # a ratio of 0.75 tolerates it
    assert _parse("normal_rate150.txt", requested_rate=200, min_rate_ratio=0.75)["valid"] is True


def test_rate_option_without_echo_line():
    text = read_fixture("httperf", "normal_rate150.txt").split("\n", 1)[1]  # drop the echoed command
    result = parse(text)
    assert result["metrics"]["requested_rate_per_s"] is None
    assert result["metrics"]["num_conns"] is None
    assert result["details"]["command_line"] is None
    assert parse(text, requested_rate=150)["metrics"]["requested_rate_per_s"] == 150.0


def test_small_error_share_only_warns():
    text = read_fixture("httperf", "normal_rate150.txt")
    text = text.replace("connrefused 0 connreset 0", "connrefused 0 connreset 1").replace(
        "Errors: total 0 ", "Errors: total 1 ")
    result = parse(text)
    assert result["metrics"]["errors_total"] == 1
    assert result["metrics"]["errors_connreset"] == 1
    assert result["valid"] is True
    assert "errors_total 1 / connections 2400 = 0.04 %" in _warnings(result)
    strict = parse(text, max_error_pct=0)
    assert strict["valid"] is False
    assert "errors dominate" in _reasons(strict)


def test_unanswered_requests_invalidate():
    text = read_fixture("httperf", "normal_rate150.txt").replace(
        "requests 2400 replies 2400", "requests 2400 replies 2000")
    result = parse(text)
    assert result["metrics"]["replies"] == 2000
    assert result["valid"] is False
    assert "400 of 2400 requests got no reply (16.67 %)" in _reasons(result)


def test_wsess_rate_is_not_compared():
    text = read_fixture("httperf", "normal_rate150.txt").replace("--rate=150", "--rate=10 --wsess=10,5,1")
    result = parse(text)
    assert result["valid"] is True
    assert "sessions/s" in _warnings(result)


# ---------------------------------------------------------------------------
# Bad input: ParseError, never zeros
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "   \n\n", None])
def test_empty_input(text):
    with pytest.raises(ParseError, match="empty|no output"):
        parse(text, source="run.txt")


def test_truncated_capture_is_rejected():
    with pytest.raises(ParseError) as info:
        _parse("truncated_normal_rate150.txt")
    assert "truncated" in str(info.value)
    assert "'Errors:' lines are missing" in str(info.value)
    assert str(info.value).startswith("httperf output truncated_normal_rate150.txt: ")


def test_second_errors_line_missing():
    text = read_fixture("httperf", "normal_rate150.txt").replace(
        "Errors: fd-unavail 0 addrunavail 0 ftab-full 0 other 0\n", "")
    with pytest.raises(ParseError, match="second 'Errors:' line is missing"):
        parse(text)


def test_middle_line_missing():
    text = "\n".join(line for line in read_fixture("httperf", "normal_rate150.txt").splitlines()
                     if not line.startswith("Reply status"))
    with pytest.raises(ParseError, match="Reply status"):
        parse(text)


def test_cut_before_total():
    text = read_fixture("httperf", "normal_rate150.txt").split("Total:")[0]
    with pytest.raises(ParseError, match="Total: connections"):
        parse(text)


def test_usage_text():
    with pytest.raises(ParseError, match="usage text"):
        _parse("usage_help.txt")


def test_stderr_only_is_not_a_report():
    with pytest.raises(ParseError, match="not an httperf report"):
        _parse("usage_bad_option.stderr")


@pytest.mark.parametrize("tool, name", [("ab", "normal_n2000.txt"), ("sysbench", "cpu_t2.txt"),
                                        ("ping", "normal_c5.txt")])
def test_other_tools_output(tool, name):
    with pytest.raises(ParseError, match="not an httperf report"):
        parse(read_fixture(tool, name), source=name)


def test_iperf3_json_is_rejected():
    doc = json.dumps({"start": {"version": "iperf 3.12"}, "intervals": [], "end": {"sum_received": {}}})
    with pytest.raises(ParseError, match="not an httperf report"):
        parse(doc)


@pytest.mark.parametrize("bad", ["inf", "-nan", "nan"])
def test_non_finite_rate(bad):
    text = read_fixture("httperf", "normal_rate150.txt").replace(
        "Connection rate: 150.0 conn/s", "Connection rate: %s conn/s" % bad)
    with pytest.raises(ParseError, match="connection_rate_per_s is"):
        parse(text)


def test_non_finite_duration():
    text = read_fixture("httperf", "normal_rate150.txt").replace("test-duration 15.998 s", "test-duration nan s")
    with pytest.raises(ParseError, match="test_duration_s"):
        parse(text)


def test_two_reports_are_rejected():
    text = read_fixture("httperf", "normal_rate150.txt")
    with pytest.raises(ParseError, match="2 httperf reports"):
        parse(text + text)


@pytest.mark.parametrize("options, field", [({"min_rate_ratio": 0}, "min_rate_ratio"),
                                            ({"min_rate_ratio": 1.5}, "min_rate_ratio"),
                                            ({"requested_rate": -5}, "requested_rate"),
                                            ({"max_client_cpu_pct": float("nan")}, "max_client_cpu_pct"),
                                            ({"max_error_pct": 101}, "max_error_pct")])
def test_bad_options(options, field):
    with pytest.raises(ParseError, match="option %s" % field):
        _parse("normal_rate150.txt", **options)


def test_zero_duration_gives_null_derived_rate():
    text = read_fixture("httperf", "short_rate100.txt").replace("test-duration 0.993 s", "test-duration 0.000 s")
    result = parse(text)
    assert result["metrics"]["replies_per_s_derived"] is None
    assert "0.000 s" in _warnings(result)


# ---------------------------------------------------------------------------
# The module
# ---------------------------------------------------------------------------

def test_module_src_and_dest(tmp_path):
    dest = tmp_path / "out" / "httperf.json"
    failed, result = run_module(httperf_parse, {"src": fixture_path("httperf", "normal_rate150.txt"),
                                                "dest": str(dest)})
    assert failed is False
    assert result["changed"] is True
    facts = result["ansible_facts"]["httperf"]
    assert facts["metrics"]["replies"] == 2400
    assert facts["valid"] is True
    assert facts["raw"] == read_fixture("httperf", "normal_rate150.txt")
    assert result["metrics"]["connection_rate_per_s"] == 150.0
    written = json.loads(dest.read_text())
    assert written["metrics"]["net_io_bps"] == 2000000
    assert written["source"] == fixture_path("httperf", "normal_rate150.txt")


def test_module_content_with_options():
    failed, result = run_module(httperf_parse, {"content": read_fixture("httperf", "fd_unavail.txt"),
                                                "keep_raw": False, "max_client_cpu_pct": 99})
    assert failed is False
    assert result["changed"] is False
    facts = result["ansible_facts"]["httperf"]
    assert facts["source"] == "<content>"
    assert "raw" not in facts
    assert facts["valid"] is False
    assert facts["metrics"]["errors_fd_unavail"] == 2121


def test_module_failure_names_tool_and_source():
    path = fixture_path("httperf", "truncated_normal_rate150.txt")
    failed, result = run_module(httperf_parse, {"src": path})
    assert failed is True
    assert result["msg"].startswith("httperf output %s: " % path)
    assert "truncated" in result["msg"]


def test_module_missing_file(tmp_path):
    failed, result = run_module(httperf_parse, {"src": str(tmp_path / "nope.txt")})
    assert failed is True
    assert "httperf output" in result["msg"] and "nope.txt" in result["msg"]


def test_module_bad_option_value():
    failed, result = run_module(httperf_parse, {"content": read_fixture("httperf", "normal_rate150.txt"),
                                                "min_rate_ratio": 2})
    assert failed is True
    assert "min_rate_ratio" in result["msg"]


def test_periodic_stats_lines_of_httperf_091_are_ignored():
    # httperf 0.9.1 (git master) with --periodic-stats prints "[T s] 200=N, 302=N" lines during the run
    # and a "Periodic stats:" line after "Reply status" (src/stat/basic.c dump()); the report is the same
    text = read_fixture("httperf", "normal_rate150.txt")
    text = text.replace("Maximum connect burst length: 3\n",
                        "Maximum connect burst length: 3\n[5.000000 s] 200=750, 302=0\n")
    text = text.replace("Reply status: 1xx=0 2xx=2400 3xx=0 4xx=0 5xx=0\n\n",
                        "Reply status: 1xx=0 2xx=2400 3xx=0 4xx=0 5xx=0\n\nPeriodic stats: 200=2400 302=0\n\n")
    assert "Periodic stats" in text
    result = parse(text)
    assert result["metrics"] == parse(read_fixture("httperf", "normal_rate150.txt"))["metrics"]
    assert result["valid"] is True
