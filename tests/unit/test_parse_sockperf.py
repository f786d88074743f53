"""sockperf parser and sockperf_parse module, on real sockperf 3.7 captures (tests/fixtures/sockperf)."""
import json

import pytest
import sockperf_parse
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_sockperf import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name, **kwargs):
    return parse(read_fixture("sockperf", name), source=name, **kwargs)


def test_tcp_full_rtt_every_metric():
    result = _parse("tcp_pingpong_fullrtt_t2_m64.txt")
    assert result["metrics"] == {
        "protocol": "TCP", "statistic": "round-trip",
        "run_time_s": 2.0, "warmup_ms": 400, "sent_messages": 69508, "received_messages": 69507,
        "skipped_messages": 0,
        "valid_run_time_s": 1.55, "valid_sent_messages": 54416, "valid_received_messages": 54416,
        "avg_us": 28.403, "stddev_us": 25.822,
        "mean_ad_us": None, "median_ad_us": None, "siqr_us": None, "std_error_us": None, "cv": None,
        "ci_level_pct": None, "ci_low_us": None, "ci_high_us": None,
        "dropped_messages": 0, "duplicated_messages": 0, "out_of_order_messages": 0,
        "observations": 54416, "min_us": 14.488, "max_us": 2246.876,
        "p99_999_us": 1639.158, "p99_99_us": 1252.092, "p99_9_us": 291.731, "p99_us": 51.219,
        "p90_us": 33.394, "p75_us": 31.104, "p50_us": 29.063, "p25_us": 24.426,
        "rtt_avg_us": 28.403, "rtt_min_us": 14.488, "rtt_max_us": 2246.876, "rtt_p50_us": 29.063,
        "rtt_p90_us": 33.394, "rtt_p99_us": 51.219, "rtt_p99_9_us": 291.731,
        "round_trips_per_s": pytest.approx(54416 / 1.55),
    }
    assert result["valid"] is True and result["reasons"] == []
    # 3.7 prints only avg and std-dev: the 3.8 statistics are null with a warning naming the version
    assert result["warnings"] == [
        "mean_ad_us, median_ad_us, siqr_us, std_error_us, cv, ci_level_pct, ci_low_us, ci_high_us are null: "
        "sockperf 3.7-no.git prints only avg and std-dev on its avg line (mean-ad, median-ad, siqr, cv, "
        "std-error and the confidence interval came in sockperf 3.8)"]
    assert result["details"]["version"] == "3.7-no.git"
    assert result["details"]["targets"] == [{"ip": "10.231.250.20", "port": 11111, "protocol": "TCP"}]
    assert result["details"]["test_end"] == "interrupted by timer"


def test_half_rtt_latency_is_doubled_into_rtt_metrics():
    m = _parse("tcp_pingpong_latency_t2_m64.txt")["metrics"]
    assert m["statistic"] == "one-way (half round trip)"
    assert (m["avg_us"], m["p50_us"], m["p99_us"], m["min_us"]) == (15.586, 14.926, 25.618, 10.081)
    assert m["rtt_avg_us"] == pytest.approx(31.172)
    assert m["rtt_p50_us"] == pytest.approx(29.852)
    assert m["rtt_p99_us"] == pytest.approx(51.236)
    assert m["rtt_min_us"] == pytest.approx(20.162)


def test_udp_report_names_the_protocol():
    result = _parse("udp_pingpong_fullrtt_t2_m64.txt")
    m = result["metrics"]
    assert (m["protocol"], m["avg_us"], m["stddev_us"], m["observations"]) == ("UDP", 29.71, 158.151, 51984)
    assert (m["run_time_s"], m["p99_9_us"]) == (2.004, 3318.599)
    assert result["valid"] is True


def test_fixed_message_rate():
    m = _parse("tcp_pingpong_fullrtt_mps1000.txt")["metrics"]
    assert (m["sent_messages"], m["valid_sent_messages"], m["observations"]) == (2001, 1550, 1550)
    assert m["round_trips_per_s"] == pytest.approx(1550 / 1.549)
    assert m["rtt_avg_us"] == 104.591


def test_interrupted_run_is_invalid_with_its_numbers():
    result = _parse("tcp_sigint_with_stats.txt")
    assert result["valid"] is False
    assert result["reasons"] == [
        "the test did not run its full time: sockperf says 'Test end (interrupted by user)' after 0.856 s"]
    assert (result["metrics"]["rtt_avg_us"], result["metrics"]["observations"]) == (48.276, 8384)


def test_dropped_messages_over_the_limit_are_invalid():
    result = _parse("udp_underload_drops.txt")
    m = result["metrics"]
    assert (m["dropped_messages"], m["valid_sent_messages"], m["valid_received_messages"]) == (122, 5099, 4977)
    assert result["valid"] is False
    assert result["reasons"] == ["122 of 5099 messages (2.39 %) were dropped, more than max_drop_pct 1 %"]
    # The timer ended the test; the later "interrupted by signal 2" line is not the reason.
    assert result["details"]["test_end"] == "interrupted by timer"


def test_dropped_messages_under_the_limit_are_a_warning():
    result = _parse("udp_underload_drops.txt", max_drop_pct=5)
    assert result["valid"] is True
    assert "122 of 5099 messages (2.39 %) were dropped" in result["warnings"]
    assert [w for w in result["warnings"] if "dropped" in w] == ["122 of 5099 messages (2.39 %) were dropped"]


@pytest.mark.parametrize("name, message", [
    ("tcp_connection_refused.txt", "sockperf failed: Can`t connect socket (errno=111 Connection refused)"),
    ("tcp_server_killed.txt", "sockperf failed: A connection was forcibly closed by a peer (errno=0 Success)"),
    ("udp_pingpong_no_server.txt",
     "sockperf measured nothing: No messages were received from the server. Is the server down?"),
    ("tcp_sigint_before_test.txt", "sockperf measured nothing: No messages were sent"),
    ("udp_pingpong_no_valid_observations.txt",
     "server 0: sockperf measured nothing: No valid observations found. "
     "Try tune parameters: --time/--mps/--reply-every"),
    ("usage_bad_option.txt", "usage text instead of a report (bad option?)"),
    ("udp_throughput_mode_t1.txt",
     "this is sockperf's throughput-mode report (sockperf tp: 154051 msg/s and a bandwidth, no latency), not a "
     "ping-pong or under-load one: run sockperf ping-pong or under-load for round trips"),
])
def test_failures_are_parse_errors_quoting_sockperf(name, message):
    with pytest.raises(ParseError) as info:
        _parse(name)
    assert str(info.value) == "sockperf output %s: %s" % (name, message)


@pytest.mark.parametrize("text, fragment", [
    ("", "output is empty"),
    ("   \n", "output is empty"),
    ("PING 10.0.0.1 (10.0.0.1) 56(84) bytes of data.\n", "not sockperf client output"),
])
def test_not_sockperf_output(text, fragment):
    with pytest.raises(ParseError) as info:
        parse(text, source="x")
    assert fragment in str(info.value)


@pytest.mark.parametrize("cut_after, missing", [
    ("Printing statistics for Server No: 0", "[Valid Duration]"),
    ("[Valid Duration] RunTime=1.550 sec; SentMessages=54416; ReceivedMessages=54416", "avg-rtt"),
    ("Summary: Round trip is 28.403 usec", "Total N observations"),
    ("percentile 75.000 =   31.104", "<MIN> observation"),
])
def test_truncated_reports_are_errors(cut_after, missing):
    text = read_fixture("sockperf", "tcp_pingpong_fullrtt_t2_m64.txt")
    cut = text[:text.index(cut_after) + len(cut_after)]
    with pytest.raises(ParseError) as info:
        parse(cut, source="cut")
    assert missing in str(info.value)


def test_truncated_before_the_total_line():
    text = read_fixture("sockperf", "tcp_pingpong_fullrtt_t2_m64.txt")
    with pytest.raises(ParseError) as info:
        parse(text[:text.index("[Total Run]")], source="cut")
    assert "missing the [Total Run] line" in str(info.value)


def test_nan_average_is_rejected():
    text = read_fixture("sockperf", "tcp_pingpong_fullrtt_t2_m64.txt").replace("avg-rtt=28.403", "avg-rtt=nan")
    with pytest.raises(ParseError) as info:
        parse(text, source="nan")
    assert "avg_us is nan" in str(info.value)


def test_newer_avg_line_fields():
    # sockperf >= 3.8 prints more statistics in the avg line (format string of Mellanox/sockperf
    # src/client.cpp client_statistics); the real 3.7 capture with that line rewritten in it.
    text = read_fixture("sockperf", "tcp_pingpong_fullrtt_t2_m64.txt").replace(
        "avg-rtt=28.403 (std-dev=25.822)",
        "avg-rtt=28.403 (std-dev=25.822, mean-ad=2.101, median-ad=1.934, siqr=1.166, cv=0.909, "
        "std-error=0.111, 99.0% ci=[28.117, 28.689])")
    m = parse(text, source="new")["metrics"]
    assert (m["mean_ad_us"], m["median_ad_us"], m["siqr_us"], m["cv"], m["std_error_us"]) == (
        2.101, 1.934, 1.166, 0.909, 0.111)
    assert (m["ci_level_pct"], m["ci_low_us"], m["ci_high_us"]) == (99.0, 28.117, 28.689)
    assert not any("came in sockperf 3.8" in w for w in parse(text, source="new")["warnings"])


def test_negative_drop_limit_is_refused():
    with pytest.raises(ParseError) as info:
        _parse("tcp_pingpong_fullrtt_t2_m64.txt", max_drop_pct=-1)
    assert "max_drop_pct must be >= 0" in str(info.value)


def test_module_src_and_dest(tmp_path):
    dest = tmp_path / "out" / "sockperf.json"
    failed, result = run_module(sockperf_parse, {
        "src": fixture_path("sockperf", "tcp_pingpong_fullrtt_t2_m64.txt"), "dest": str(dest)})
    assert failed is False and result["changed"] is True
    assert result["metrics"]["rtt_p99_us"] == 51.219
    assert result["ansible_facts"]["sockperf"]["metrics"]["observations"] == 54416
    assert "Round trip is 28.403 usec" in result["raw"]
    assert json.loads(dest.read_text())["metrics"]["rtt_avg_us"] == 28.403


def test_module_content_option_and_failure():
    failed, result = run_module(sockperf_parse, {
        "content": read_fixture("sockperf", "udp_underload_drops.txt"), "max_drop_pct": 3.0, "keep_raw": False})
    assert failed is False and result["valid"] is True and "raw" not in result
    failed, result = run_module(sockperf_parse, {"content": read_fixture("sockperf", "tcp_connection_refused.txt")})
    assert failed is True
    assert result["msg"] == ("sockperf output <content>: sockperf failed: "
                             "Can`t connect socket (errno=111 Connection refused)")


def test_tcp_round_trip_through_the_haproxy_chain():
    # Captured by playbooks/nfv-chain.yml in the 2-VNF scenario (firewall + HAProxy in mode tcp).
    result = _parse("tcp_pingpong_fullrtt_t3_via_haproxy.txt")
    m = result["metrics"]
    assert (m["rtt_avg_us"], m["stddev_us"], m["rtt_p50_us"], m["rtt_p99_us"]) == (83.585, 76.296, 73.882, 162.098)
    assert (m["valid_run_time_s"], m["observations"]) == (2.55, 30481)
    assert result["details"]["targets"] == [{"ip": "10.231.16.20", "port": 11111, "protocol": "TCP"}]
    assert result["valid"] is True
