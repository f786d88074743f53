"""ipvsadm parser on REAL tables captured in the LVS lab's director VM.

Debian kernel 6.1.0-56-amd64 under qemu (TCG), ipvsadm v1.31, NAT service 10.250.1.10:80 with
three real servers (tests/fixtures/ipvsadm/README.md says how each file was captured).
"""
import ipvsadm_parse
from ansible.module_utils.testbed_parse_httperf import parse as parse_httperf
from ansible.module_utils.testbed_parse_ipvsadm import parse
from conftest import fixture_path, read_fixture
from helpers import run_module

RS = ("10_250_2_11_80", "10_250_2_12_80", "10_250_2_13_80")
SVC = "svc_tcp_10_250_1_10_80"


def _parse(name, **options):
    return parse(read_fixture("ipvsadm", name), source=name, **options)


def test_captured_stats_exact_every_counter():
    result = _parse("captured-stats-exact.txt")
    m = result["metrics"]
    assert result["valid"] is True and result["warnings"] == []
    assert result["details"]["mode"] == "stats"
    assert result["details"]["ipvs_version"] == "1.2.1" and result["details"]["table_size"] == 4096
    assert m["services"] == 1 and m["real_servers"] == 3
    assert (m[SVC + "_conns"], m[SVC + "_inpkts"], m[SVC + "_outpkts"], m[SVC + "_inbytes"], m[SVC + "_outbytes"]) == (
        797, 4805, 3208, 313202, 358028)
    assert [m["rs_%s_conns" % rs] for rs in RS] == [266, 265, 266]
    assert [m["rs_%s_inpkts" % rs] for rs in RS] == [1604, 1597, 1604]
    assert [m["rs_%s_outpkts" % rs] for rs in RS] == [1071, 1065, 1072]
    assert [m["rs_%s_inbytes" % rs] for rs in RS] == [104572, 104058, 104572]
    assert [m["rs_%s_outbytes" % rs] for rs in RS] == [119505, 118966, 119557]
    service = result["details"]["services"][0]
    assert (service["protocol"], service["address"], service["port"]) == ("TCP", "10.250.1.10", 80)
    assert [r["address"] for r in service["real_servers"]] == ["10.250.2.11", "10.250.2.12", "10.250.2.13"]


def test_captured_counts_add_up_to_the_service_total():
    m = _parse("captured-stats-exact.txt")["metrics"]
    for column in ("conns", "inpkts", "outpkts", "inbytes", "outbytes"):
        assert sum(m["rs_%s_%s" % (rs, column)] for rs in RS) == m["%s_%s" % (SVC, column)]


def test_captured_counts_vs_the_client():
    # httperf made 800 connections; IPVS counted 797 (3 client ports hit entries still in TIME_WAIT).
    client = parse_httperf(read_fixture("ipvsadm", "captured-httperf-client.txt"), source="client")
    assert client["metrics"]["connections"] == 800 and client["metrics"]["replies"] == 800
    assert client["valid"] is True
    assert _parse("captured-stats-exact.txt")["metrics"][SVC + "_conns"] == 797


def test_captured_stats_without_exact_same_numbers():
    exact = _parse("captured-stats-exact.txt")["metrics"]
    plain = _parse("captured-stats.txt")
    assert plain["metrics"] == exact
    assert plain["warnings"] == []


def test_captured_rate_during_traffic():
    result = _parse("captured-rate-exact.txt")
    m = result["metrics"]
    assert result["details"]["mode"] == "rate"
    assert (m[SVC + "_cps"], m[SVC + "_inpps"], m[SVC + "_outpps"],
            m[SVC + "_in_bytes_per_s"], m[SVC + "_out_bytes_per_s"]) == (49, 296, 198, 19272, 22042)
    assert [m["rs_%s_cps" % rs] for rs in RS] == [16, 16, 16]
    assert [m["rs_%s_inpps" % rs] for rs in RS] == [99, 98, 99]
    assert [m["rs_%s_out_bytes_per_s" % rs] for rs in RS] == [7352, 7324, 7366]


def test_captured_list_after_the_run():
    result = _parse("captured-list.txt")
    m = result["metrics"]
    assert result["details"]["mode"] == "list"
    assert m[SVC + "_scheduler"] == "rr"
    assert [m["rs_%s_forward" % rs] for rs in RS] == ["Masq", "Masq", "Masq"]
    assert [m["rs_%s_weight" % rs] for rs in RS] == [1, 1, 1]
    assert [m["rs_%s_activeconn" % rs] for rs in RS] == [3, 2, 3]
    assert [m["rs_%s_inactconn" % rs] for rs in RS] == [1844, 1824, 1830]
    assert m[SVC + "_activeconn"] == 8 and m[SVC + "_inactconn"] == 5498


def test_captured_wrr_point_exact_split():
    m = _parse("captured-stats-exact-wrr.txt")["metrics"]
    assert m[SVC + "_conns"] == 1000
    assert [m["rs_%s_conns" % rs] for rs in RS] == [334, 333, 333]
    assert [m["rs_%s_inbytes" % rs] for rs in RS] == [128256, 127872, 127872]


def test_captured_wrong_mode_refused():
    failed, result = run_module(ipvsadm_parse, {"src": fixture_path("ipvsadm", "captured-rate-exact.txt"),
                                                "mode": "stats"})
    assert failed is True
    assert "mode=stats but the table is the rate layout" in result["msg"]


def test_captured_through_the_module():
    failed, result = run_module(ipvsadm_parse, {"src": fixture_path("ipvsadm", "captured-stats-exact.txt"),
                                                "mode": "stats"})
    assert failed is False, result
    assert result["ansible_facts"]["ipvsadm"]["metrics"]["rs_10_250_2_12_80_conns"] == 265
