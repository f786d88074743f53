"""netperf parser and netperf_parse module, on real netperf 2.7.0 captures (tests/fixtures/netperf)."""
import netperf_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError, unit_of
from ansible.module_utils.testbed_parse_netperf import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name, **options):
    return parse(read_fixture("netperf", name), source=name, **options)


def test_tcp_rr_classic_study_sizes():
    result = _parse("tcp_rr_r100_200.txt")
    m = result["metrics"]
    assert (m["request_bytes"], m["response_bytes"], m["elapsed_s"], m["transactions_per_s"]) == (100, 200, 2.01, 23844.21)
    assert m["rtt_mean_us"] == pytest.approx(1e6 / 23844.21)
    assert (m["local_send_socket_bytes"], m["remote_recv_socket_bytes"]) == (16384, 131072)
    assert m["rtt_p99_us"] is None and m["local_cpu_pct"] is None
    assert any("latency distribution" in w for w in result["warnings"])
    assert any("-c (local) and -C (remote)" in w for w in result["warnings"])
    assert result["details"] == {"test": "TCP_RR", "layout": "classic"}
    assert result["valid"] is True


def test_udp_rr_is_named_from_the_banner():
    result = _parse("udp_rr_r100_200.txt")
    assert result["details"]["test"] == "UDP_RR"
    assert result["metrics"]["transactions_per_s"] == 33768.83


def test_udp_rr_omni_keyval_as_container_compare_runs_it():
    """The -k keys roles/container_compare asks for (UDP_RR, study B's 100/200 bytes)."""
    result = _parse("udp_rr_r100_200_keyval.txt")
    m = result["metrics"]
    assert result["details"]["test"] == "UDP_RR" and result["details"]["protocol"] == "UDP"
    assert (m["request_bytes"], m["response_bytes"], m["transactions_per_s"]) == (100, 200, 55209.07)
    assert (m["rtt_mean_us"], m["rtt_p50_us"], m["rtt_p99_us"]) == (18.07, 13.0, 67.0)
    assert result["valid"] is True


def test_cpu_columns_and_service_demand():
    m = _parse("tcp_rr_r100_200_cpu.txt")["metrics"]
    assert (m["local_cpu_pct"], m["remote_cpu_pct"]) == (99.5, 99.5)
    assert (m["local_service_demand_us"], m["remote_service_demand_us"]) == (62.491, 62.491)
    assert unit_of("local_service_demand_us") == "us"


def test_omni_keyval_has_the_distribution_and_null_cpu():
    result = _parse("tcp_rr_r100_200_keyval.txt")
    m = result["metrics"]
    assert (m["rtt_mean_us"], m["rtt_p50_us"], m["rtt_p99_us"], m["rtt_max_us"]) == (28.98, 14.0, 263.0, 25568.0)
    assert m["transactions_per_s"] == 34431.16 and m["request_bytes"] == 100 and m["response_bytes"] == 200
    assert m["local_cpu_pct"] is None and m["remote_cpu_pct"] is None
    assert "local CPU was not measured (run netperf with -c)" in result["warnings"]
    assert result["details"]["layout"] == "omni key=value (-k)"


def test_no_headings_layout_inferred_or_given():
    result = _parse("tcp_rr_r100_200_p0.txt")
    assert result["details"] == {"test": "TCP_RR", "layout": "no headings (-P 0)"}
    assert result["metrics"]["transactions_per_s"] == 40347.68
    assert _parse("tcp_rr_r100_200_p0.txt", test="udp_rr")["details"]["test"] == "UDP_RR"


def test_stream_throughput_in_bit_per_s():
    result = _parse("tcp_stream.txt")
    assert result["metrics"]["throughput_bps"] == pytest.approx(9461.47e6)
    assert result["metrics"]["message_bytes"] == 16384
    assert result["details"]["test"] == "TCP_STREAM"


def test_other_test_than_expected_is_refused():
    with pytest.raises(ParseError, match="this is a TCP_STREAM report, the caller expected TCP_RR"):
        _parse("tcp_stream.txt", test="TCP_RR")


def test_no_netserver_names_host_and_port():
    with pytest.raises(ParseError, match=r"^netperf output no_netserver.txt: .*127\.0\.0\.1 port 12865: no netserver"):
        _parse("no_netserver.txt")


def test_zero_rate_is_invalid():
    text = read_fixture("netperf", "tcp_rr_r100_200.txt").replace("23844.21", "0.00")
    result = parse(text, "edited")
    assert result["valid"] is False and result["metrics"]["rtt_mean_us"] is None


@pytest.mark.parametrize("text,match", [
    ("MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 () port 0 AF_INET\nLocal /Remote\n", "no data row"),
    ("16384  131072 100\n", "has 3 numbers"),
])
def test_truncated_output_is_refused(text, match):
    with pytest.raises(ParseError, match=match):
        parse(text, "t")


def test_module_and_tool_parse():
    failed, result = run_module(netperf_parse, {"src": fixture_path("netperf", "tcp_rr_r100_200.txt"), "test": "TCP_RR"})
    assert not failed and result["ansible_facts"]["netperf"]["metrics"]["request_bytes"] == 100
    failed, result = run_module(netperf_parse, {"src": fixture_path("netperf", "no_netserver.txt")})
    assert failed and "no netserver" in result["msg"]
    import tool_parse
    failed, result = run_module(tool_parse, {"tool": "netperf", "content": read_fixture("netperf", "tcp_stream.txt")})
    assert not failed and result["metrics"]["elapsed_s"] == 2.0
