"""ipvsadm parser and ipvsadm_parse module.

This host's kernel has no IPVS, so the table fixtures (``format-*.txt``) are derived from the printf
formats of ipvsadm.c (see tests/fixtures/ipvsadm/README.md); ``error_no_ipvs_kernel.stderr.txt`` is a
real capture.
"""
import json

import ipvsadm_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_ipvsadm import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name, **options):
    return parse(read_fixture("ipvsadm", name), source=name, **options)


def test_stats_exact_every_counter():
    result = _parse("format-stats-exact.txt")
    m = result["metrics"]
    assert result["valid"] is True and result["warnings"] == []
    assert result["details"]["mode"] == "stats"
    assert result["details"]["ipvs_version"] == "1.2.1" and result["details"]["table_size"] == 4096
    assert m["services"] == 5 and m["real_servers"] == 7
    assert (m["rs_10_0_0_7_80_conns"], m["rs_10_0_0_7_80_inpkts"], m["rs_10_0_0_7_80_outpkts"],
            m["rs_10_0_0_7_80_inbytes"], m["rs_10_0_0_7_80_outbytes"]) == (
        761700, 49382716, 43827160, 3271605493, 61728394506)
    assert m["rs_10_0_0_8_80_conns"] == 761712
    assert m["svc_tcp_10_0_0_3_80_conns"] == 1523412
    assert m["svc_tcp_10_0_0_3_80_outbytes"] == 123456789012
    assert m["svc_udp_10_0_0_3_53_inbytes"] == 240
    assert m["rs_10_0_0_7_53_outbytes"] == 240
    assert m["rs_2001_db8_7_80_inpkts"] == 30 and m["svc_tcp_2001_db8_3_80_conns"] == 3
    assert m["svc_fwm_7_inpkts"] == 340 and m["rs_10_0_0_9_0_conns"] == 12
    services = result["details"]["services"]
    assert [(s["protocol"], s["address"], s["port"], s["fwmark"]) for s in services] == [
        ("TCP", "10.0.0.3", 80, None), ("TCP", "10.0.0.3", 443, None), ("UDP", "10.0.0.3", 53, None),
        ("TCP", "2001:db8::3", 80, None), ("FWM", None, None, 7)]
    assert services[3]["ipv6"] is True and services[0]["ipv6"] is False
    assert services[0]["scheduler"] is None  # not printed with --stats
    assert services[0]["totals"] == {"conns": 1523412, "inpkts": 98765432, "outpkts": 87654321,
                                     "inbytes": 6543210987, "outbytes": 123456789012}
    assert [r["address"] for r in services[0]["real_servers"]] == ["10.0.0.7", "10.0.0.8"]
    assert services[3]["real_servers"][0]["address"] == "2001:db8::7"


def test_stats_without_exact_expands_suffixes_with_a_warning():
    result = _parse("format-stats-suffix.txt")
    m = result["metrics"]
    assert m["svc_tcp_10_0_0_3_80_inbytes"] == 6543 * 1000 ** 2
    assert m["svc_tcp_10_0_0_3_80_outbytes"] == 123 * 1000 ** 3
    assert m["rs_10_0_0_7_80_outbytes"] == 61728 * 1000 ** 2
    assert m["rs_10_0_0_7_80_inpkts"] == 49382716  # below 10**8: exact
    assert any("approximate" in w and "--exact" in w for w in result["warnings"])
    assert result["valid"] is True


def test_rate_exact():
    result = _parse("format-rate-exact.txt")
    m = result["metrics"]
    assert result["details"]["mode"] == "rate"
    assert (m["rs_10_0_0_8_80_cps"], m["rs_10_0_0_8_80_inpps"], m["rs_10_0_0_8_80_outpps"],
            m["rs_10_0_0_8_80_in_bytes_per_s"], m["rs_10_0_0_8_80_out_bytes_per_s"]) == (
        760, 49383, 43827, 3271605, 61728395)
    assert m["svc_tcp_10_0_0_3_80_cps"] == 1520
    assert m["svc_tcp_10_0_0_3_80_out_bytes_per_s"] == 123456789
    assert m["svc_fwm_7_in_bytes_per_s"] == 180
    assert "rs_10_0_0_8_80_conns" not in m


def test_plain_list_mode():
    result = _parse("format-list.txt")
    m = result["metrics"]
    assert result["details"]["mode"] == "list"
    assert m["services"] == 5 and m["real_servers"] == 7
    assert m["svc_tcp_10_0_0_3_80_scheduler"] == "wlc"
    assert m["svc_tcp_10_0_0_3_80_activeconn"] == 37 and m["svc_tcp_10_0_0_3_80_inactconn"] == 1041
    assert (m["rs_10_0_0_8_80_weight"], m["rs_10_0_0_8_80_activeconn"], m["rs_10_0_0_8_80_inactconn"]) == (2, 25, 701)
    assert m["rs_10_0_0_8_80_forward"] == "Masq"
    assert m["rs_10_0_0_9_0_forward"] == "Route" and m["rs_2001_db8_7_80_forward"] == "Tunnel"
    services = result["details"]["services"]
    assert services[1]["scheduler"] == "sh" and services[1]["flags"] == "persistent 300"
    assert services[0]["flags"] is None
    assert services[4]["scheduler"] == "rr" and services[4]["fwmark"] == 7


def test_empty_table_is_valid():
    result = _parse("format-stats-empty.txt")
    assert result["valid"] is True
    assert result["metrics"] == {"services": 0, "real_servers": 0}
    assert result["details"]["services"] == []


def test_kernel_without_ipvs_is_a_parse_error():
    text = read_fixture("ipvsadm", "error_no_ipvs_kernel.stderr.txt")
    assert "Can't initialize ipvs: Protocol not available" in text
    with pytest.raises(ParseError) as exc:
        parse(text, source="stderr")
    assert "kernel lacks IPVS" in str(exc.value)
    assert "Protocol not available" in str(exc.value)


@pytest.mark.parametrize("mode", ["stats", "auto"])
def test_mode_matches(mode):
    assert _parse("format-stats-exact.txt", mode=mode)["details"]["mode"] == "stats"


@pytest.mark.parametrize("name, mode", [
    ("format-stats-exact.txt", "rate"),
    ("format-rate-exact.txt", "list"),
    ("format-list.txt", "stats"),
])
def test_mode_mismatch_is_refused(name, mode):
    with pytest.raises(ParseError, match="mode=%s but the table is the" % mode):
        _parse(name, mode=mode)


def test_real_server_behind_two_services_gets_the_service_in_its_name():
    text = "\n".join([
        "IP Virtual Server version 1.2.1 (size=4096)",
        "Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes",
        "  -> RemoteAddress:Port",
        "TCP  10.0.0.3:80                         5       50       40     5000     4000",
        "  -> 10.0.0.7:80                         5       50       40     5000     4000",
        "TCP  10.0.0.4:80                         2       20       10     2000     1000",
        "  -> 10.0.0.7:80                         2       20       10     2000     1000",
    ])
    result = parse(text)
    m = result["metrics"]
    assert m["rs_10_0_0_7_80_tcp_10_0_0_3_80_conns"] == 5
    assert m["rs_10_0_0_7_80_tcp_10_0_0_4_80_conns"] == 2
    assert "rs_10_0_0_7_80_conns" not in m
    assert any("several services" in w for w in result["warnings"])


@pytest.mark.parametrize("text, pattern", [
    ("", "empty"),
    ("Total: connections 2400 requests 2400 replies 2400 test-duration 15.998 s\n", "IP Virtual Server version"),
    ("IP Virtual Server version 1.2.1 (size=4096)\n", "title line"),
    ("IP Virtual Server version 1.2.1 (size=4096)\nsomething else\n", "title line"),
    ("IP Virtual Server version 1.2.1 (size=4096)\n"
     "Prot LocalAddress:Port               Uthreshold Lthreshold ActiveConn InActConn\n", "unsupported table"),
    ("IP Virtual Server version 1.2.1 (size=4096)\n"
     "Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes\n"
     "  -> RemoteAddress:Port\n"
     "TCP  10.0.0.3:80                         8      132        0    34840\n", "has 4 value"),
    ("IP Virtual Server version 1.2.1 (size=4096)\n"
     "Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes\n"
     "  -> RemoteAddress:Port\n"
     "  -> 10.0.0.7:80                         4       90        0    24476        0\n", "before any service"),
    ("IP Virtual Server version 1.2.1 (size=4096)\n"
     "Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes\n"
     "  -> RemoteAddress:Port\n"
     "TCP  10.0.0.3:80                         8      nan        0    34840        0\n", "'nan' is not a counter"),
])
def test_bad_input(text, pattern):
    with pytest.raises(ParseError, match=pattern):
        parse(text)


def test_bad_mode_option():
    with pytest.raises(ParseError, match="mode must be one of"):
        parse(read_fixture("ipvsadm", "format-list.txt"), mode="thresholds")


def test_module_src_and_dest(tmp_path):
    dest = tmp_path / "ipvs.json"
    src = fixture_path("ipvsadm", "format-stats-exact.txt")
    failed, result = run_module(ipvsadm_parse, {"src": src, "dest": str(dest), "mode": "stats"})
    assert failed is False and result["changed"] is True
    assert result["ansible_facts"]["ipvsadm"]["metrics"]["rs_10_0_0_7_80_inbytes"] == 3271605493
    assert json.loads(dest.read_text())["metrics"]["services"] == 5


def test_module_failure_names_tool_and_source():
    src = fixture_path("ipvsadm", "error_no_ipvs_kernel.stderr.txt")
    failed, result = run_module(ipvsadm_parse, {"src": src})
    assert failed is True
    assert result["msg"].startswith("ipvsadm output %s: " % src)
    assert "kernel lacks IPVS" in result["msg"]
