"""nuttcp parser and nuttcp_parse module, on real nuttcp 6.1.2 captures (tests/fixtures/nuttcp)."""
import nuttcp_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_nuttcp import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name, **options):
    return parse(read_fixture("nuttcp", name), source=name, **options)


def test_brief_transmit():
    result = _parse("tx.txt", direction="transmit")
    m = result["metrics"]
    assert (m["transferred_mib"], m["duration_s"], m["rate_bps"]) == (3755.6843, 2.0, pytest.approx(15727.4356e6))
    assert (m["tx_cpu_pct"], m["rx_cpu_pct"], m["retransmits"], m["rtt_ms"]) == (33.0, 29.0, 0, 0.08)
    assert m["loss_pct"] is None and result["warnings"] == [] and result["valid"] is True
    assert result["details"] == {"direction": "transmit", "layout": "brief", "intervals": [], "protocol": "tcp"}


def test_brief_receive_and_intervals():
    assert _parse("rx.txt", direction="receive")["metrics"]["rate_bps"] == pytest.approx(13521.9938e6)
    result = _parse("tx_i1.txt")
    assert [i["rate_bps"] for i in result["details"]["intervals"]] == [
        pytest.approx(5315.4693e6), pytest.approx(3513.5973e6), pytest.approx(1581.7561e6)]
    assert result["metrics"]["duration_s"] == 3.03


def test_fparse_layouts():
    m = _parse("tx_fparse.txt")["metrics"]
    assert (m["transferred_mib"], m["rate_bps"], m["rx_cpu_pct"], m["rtt_ms"]) == (
        3294.9345, pytest.approx(13809.5444e6), 62.0, 0.13)
    result = _parse("rx_fparse.txt")
    assert result["metrics"]["rtt_ms"] is None
    assert "rtt_ms is null: this nuttcp output does not print it" in result["warnings"]
    intervals = _parse("tx_fparse_i1.txt")["details"]["intervals"]
    assert len(intervals) == 1 and intervals[0]["s"] == 1.02


def test_udp_loss_is_a_warning_with_the_counts():
    result = _parse("udp_50m.txt")
    m = result["metrics"]
    assert (m["drops"], m["packets"], m["loss_pct"]) == (355, 1521, 23.34)
    assert result["valid"] is True and result["details"]["protocol"] == "udp"
    assert result["warnings"] == ["UDP: 355 of 1521 packets lost (23.34 %); the rate is what arrived"]
    assert _parse("udp_fparse.txt")["metrics"]["loss_pct"] == 0.13169


def test_connection_refused_and_usage_are_refused():
    with pytest.raises(ParseError, match="nothing was measured: connect: Connection refused"):
        _parse("no_server.txt")
    with pytest.raises(ParseError, match="usage text"):
        parse("Usage: nuttcp or nuttcp -h\tprints this usage info\n", "u")


def test_zero_data_is_invalid_and_two_summaries_refused():
    result = parse(" 0.0000 MB /   2.00 sec =    0.0000 Mbps 0 %TX 0 %RX 0 retrans 0.10 msRTT\n", "z")
    assert result["valid"] is False
    text = read_fixture("nuttcp", "tx.txt") * 2
    with pytest.raises(ParseError, match="found 2"):
        parse(text, "two")


def test_bad_direction_and_module():
    with pytest.raises(ParseError, match="direction must be transmit or receive"):
        _parse("tx.txt", direction="up")
    failed, result = run_module(nuttcp_parse, {"src": fixture_path("nuttcp", "rx.txt"), "direction": "receive"})
    assert not failed and result["ansible_facts"]["nuttcp"]["details"]["direction"] == "receive"
