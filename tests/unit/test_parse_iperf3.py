"""iperf3 -J parser and iperf3_parse module, on real iperf3 3.12 captures (tests/fixtures/iperf3)."""
import json
import statistics

import iperf3_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_iperf3 import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name):
    return parse(read_fixture("iperf3", name), source=name)


def _doc(name):
    return json.loads(read_fixture("iperf3", name))


def _interval_bps(doc):
    return [i["sum"]["bits_per_second"] for i in doc["intervals"] if not i["sum"]["omitted"]]


HTTPERF_TEXT = """httperf --timeout=5 --client=0/1 --server=127.0.0.1 --port=8080 --uri=/ --rate=150 --num-conns=2400
Maximum connect burst length: 3

Total: connections 2400 requests 2400 replies 2400 test-duration 15.998 s
"""


# ---------------------------------------------------------------------------
# Complete runs
# ---------------------------------------------------------------------------

def test_tcp_single_stream_every_metric():
    result = _parse("tcp_3s.json")
    m = result["metrics"]
    assert result["tool"] == "iperf3"
    assert result["valid"] is True and result["reasons"] == [] and result["warnings"] == []
    assert m["protocol"] == "TCP" and m["streams"] == 1
    assert m["reverse"] is False and m["bidir"] is False
    assert m["duration_s"] == 3.000099
    assert m["sent_bytes"] == 8223457280
    assert m["received_bytes"] == 8223260619
    assert m["sent_bps"] == 21928495772.972824
    assert m["received_bps"] == 21926451177.162872
    assert m["retransmits"] == 7
    assert m["host_cpu_total_pct"] == 88.468766678778536
    assert m["host_cpu_user_pct"] == 2.1751123675513657
    assert m["host_cpu_system_pct"] == 86.293654311227172
    assert m["remote_cpu_total_pct"] == 64.7064587572429
    assert m["remote_cpu_user_pct"] == 3.4362048364438089
    assert m["remote_cpu_system_pct"] == 61.270253920799114
    assert (m["mean_rtt_us"], m["min_rtt_us"], m["max_rtt_us"]) == (49, 46, 51)
    assert m["max_snd_cwnd_bytes"] == 1178694
    for key in ("jitter_ms", "lost_packets", "packets", "lost_percent", "out_of_order"):
        assert m[key] is None, key
    bps = [19948974448.791279, 22371159759.49081, 23465911233.391438]
    assert m["interval_bps_min"] == min(bps)
    assert m["interval_bps_max"] == max(bps)
    assert m["interval_bps_stdev"] == pytest.approx(statistics.stdev(bps), rel=1e-12)
    details = result["details"]
    assert details["version"] == "iperf 3.12"
    assert [(i["start"], i["end"]) for i in details["intervals"]] == [
        (0, 1.000272), (1.000272, 2.000047), (2.000047, 3.000099)]
    assert details["intervals"][1]["bps"] == 22371159759.49081
    assert details["streams"][0]["sent_bytes"] == 8223457280
    assert details["streams"][0]["received_bytes"] == 8223260619
    assert details["sender_tcp_congestion"] == "bbr"
    assert "bidir_reverse_sent_bytes" not in m


def test_tcp_four_streams_sums_and_rtt_weighted_by_bytes():
    result = _parse("tcp_3s_P4.json")
    doc = _doc("tcp_3s_P4.json")
    m = result["metrics"]
    assert result["valid"] is True
    assert m["streams"] == 4 and len(result["details"]["streams"]) == 4
    assert m["sent_bytes"] == doc["end"]["sum_sent"]["bytes"] == 6760693760
    assert m["received_bytes"] == doc["end"]["sum_received"]["bytes"] == 6750208000
    assert m["received_bps"] == 17985363030.0273
    assert m["retransmits"] == 75
    # The -P streams are already summed by iperf3: the per-stream bytes add up.
    assert sum(s["sender"]["bytes"] for s in doc["end"]["streams"]) == m["sent_bytes"]
    senders = [s["sender"] for s in doc["end"]["streams"]]
    weighted = sum(s["mean_rtt"] * s["bytes"] for s in senders) / sum(s["bytes"] for s in senders)
    assert m["mean_rtt_us"] == pytest.approx(weighted, rel=1e-12)
    assert m["min_rtt_us"] == min(s["min_rtt"] for s in senders) == 154
    assert m["max_rtt_us"] == max(s["max_rtt"] for s in senders) == 1760
    assert m["max_snd_cwnd_bytes"] == max(s["max_snd_cwnd"] for s in senders) == 4321878
    assert m["interval_bps_min"] == min(_interval_bps(doc))
    assert m["interval_bps_stdev"] == pytest.approx(statistics.stdev(_interval_bps(doc)), rel=1e-12)


def test_reverse_client_has_no_rtt_or_cwnd():
    result = _parse("tcp_3s_reverse.json")
    m = result["metrics"]
    assert result["valid"] is True
    assert m["reverse"] is True
    assert m["received_bytes"] == 5823791104 and m["sent_bytes"] == 5824839680
    assert m["received_bps"] == 15530021607.210892
    assert m["retransmits"] == 1
    # The receiving client reports 0 for RTT/cwnd: null, never 0.
    assert m["mean_rtt_us"] is None and m["min_rtt_us"] is None and m["max_rtt_us"] is None
    assert m["max_snd_cwnd_bytes"] is None


def test_bidir_detected_from_the_reverse_sums_of_3_12():
    result = _parse("tcp_3s_bidir.json")
    doc = _doc("tcp_3s_bidir.json")
    m = result["metrics"]
    assert "bidir" not in doc["start"]["test_start"]  # 3.12 has no flag; the parser infers it
    assert result["valid"] is True
    assert m["bidir"] is True and m["reverse"] is False
    assert m["sent_bytes"] == 3060531200 and m["received_bytes"] == 3056599040
    assert m["retransmits"] == 1
    assert m["bidir_reverse_sent_bytes"] == 1378877440
    assert m["bidir_reverse_received_bytes"] == 1376518144
    assert m["bidir_reverse_sent_bps"] == 3676925614.303152
    assert m["bidir_reverse_received_bps"] == 3669340271.1783986
    assert m["bidir_reverse_retransmits"] == 81
    # RTT only from the stream this host sends on (sender: true), not the reverse one (27 us).
    assert (m["mean_rtt_us"], m["min_rtt_us"], m["max_rtt_us"]) == (448, 336, 633)
    assert m["max_snd_cwnd_bytes"] == 1833524


def test_udp_loss_jitter_from_the_receiver():
    result = _parse("udp_3s_100M.json")
    m = result["metrics"]
    assert result["valid"] is True and result["warnings"] == []
    assert m["protocol"] == "UDP"
    assert m["retransmits"] is None and m["mean_rtt_us"] is None and m["max_snd_cwnd_bytes"] is None
    assert m["sent_bytes"] == 37519360 and m["received_bytes"] == 36470784
    assert m["sent_bps"] == 100048925.34568232 and m["received_bps"] == 97238893.388124
    assert m["jitter_ms"] == 0.01794426597062874
    assert m["lost_packets"] == 32 and m["packets"] == 1145
    assert m["lost_percent"] == 2.7947598253275108
    assert m["out_of_order"] == 0
    assert result["details"]["streams"][0]["packets"] == 1145


def test_udp_before_3_11_falls_back_to_end_sum_with_a_warning():
    doc = _doc("udp_3s_100M.json")
    del doc["end"]["sum_sent"], doc["end"]["sum_received"]
    result = parse(json.dumps(doc, indent=1))
    m = result["metrics"]
    assert m["sent_bytes"] == 37519360 and m["sent_bps"] == 100048925.34568232
    assert m["received_bytes"] is None and m["received_bps"] is None
    assert m["lost_packets"] == 32 and m["jitter_ms"] == 0.01794426597062874
    assert "end.sum" in " ".join(result["warnings"])


def test_omitted_intervals_are_left_out_of_the_interval_statistics():
    result = _parse("tcp_3s_omit1.json")
    doc = _doc("tcp_3s_omit1.json")
    m = result["metrics"]
    assert doc["intervals"][0]["sum"]["omitted"] is True
    assert [i["omitted"] for i in result["details"]["intervals"]] == [True, False, False, False]
    kept = _interval_bps(doc)
    assert len(kept) == 3
    assert m["interval_bps_min"] == min(kept) == 9143363635.249504
    assert m["interval_bps_max"] == max(kept) == 13127002569.094305
    assert m["interval_bps_stdev"] == pytest.approx(statistics.stdev(kept), rel=1e-12)
    assert m["received_bytes"] == 4270456832


# ---------------------------------------------------------------------------
# Verdicts and failures
# ---------------------------------------------------------------------------

def test_interrupted_client_is_invalid_with_iperf3s_message():
    result = _parse("error_interrupted_sigint.json")
    m = result["metrics"]
    assert result["valid"] is False
    assert result["reasons"][0] == "iperf3 reported an error: 'interrupt - the client has terminated'"
    assert "the receiver got 0 bytes" in result["reasons"][1]
    assert m["sent_bytes"] == 3430940672 and m["received_bytes"] == 0
    assert m["duration_s"] == 1.582762
    # The server never sent its results: remote CPU 0/0/0 is not a measurement.
    assert m["remote_cpu_total_pct"] is None and m["remote_cpu_user_pct"] is None
    assert m["host_cpu_total_pct"] == 39.54145360099548
    assert result["details"]["error"] == "interrupt - the client has terminated"


@pytest.mark.parametrize("name, message", [
    ("error_connection_refused.json", "unable to connect to server: Connection refused"),
    ("error_server_busy.json", "the server is busy running a test. try again later"),
])
def test_error_without_results_is_a_parse_error_quoting_iperf3(name, message):
    with pytest.raises(ParseError) as exc:
        _parse(name)
    assert message in str(exc.value)
    assert str(exc.value).startswith("iperf3 output %s: " % name)


def test_usage_text_is_refused():
    with pytest.raises(ParseError, match=r"not JSON \(usage text / parameter error\?"):
        _parse("error_parameter_usage.txt")


def test_truncated_copy_is_refused():
    text = read_fixture("iperf3", "tcp_3s_truncated_2000B.json")
    assert len(text.encode()) == 2000
    with pytest.raises(ParseError, match="truncated"):
        parse(text)


@pytest.mark.parametrize("text, pattern", [
    ("", "empty"),
    ("   \n\n", "empty"),
    (None, "no output"),
    (HTTPERF_TEXT, "not JSON"),
    ('{\n"jobs": [], "fio version": "fio-3.33"\n}\n', "not an iperf3 -J report"),
    ("[1, 2]\n", "not JSON"),
])
def test_bad_input(text, pattern):
    with pytest.raises(ParseError, match=pattern):
        parse(text)


def test_nan_and_inf_are_refused():
    text = read_fixture("iperf3", "tcp_3s.json")
    target = '"bits_per_second":\t21926451177.162872'
    assert target in text
    for bad in ("nan", "-nan", "NaN", "Infinity", "1e999"):
        with pytest.raises(ParseError, match="nan|NaN|Infinity|inf"):
            parse(text.replace(target, '"bits_per_second":\t' + bad))


def test_null_number_is_null_with_a_warning_never_zero():
    doc = _doc("tcp_3s.json")
    doc["end"]["sum_received"]["bits_per_second"] = None
    result = parse(json.dumps(doc))
    assert result["metrics"]["received_bps"] is None
    assert result["metrics"]["received_bytes"] == 8223260619
    assert any("end.sum_received.bits_per_second" in w for w in result["warnings"])


@pytest.mark.parametrize("value", [4294967294, 4294967295, 18446744073709551615, -1])
def test_retransmit_sentinel_is_null(value):
    doc = _doc("tcp_3s.json")
    doc["end"]["sum_sent"]["retransmits"] = value
    result = parse(json.dumps(doc))
    assert result["metrics"]["retransmits"] is None
    assert any("sentinel" in w for w in result["warnings"])


def test_leading_garbage_is_skipped_with_a_warning():
    text = "warning: JSON data length overflow\n" + read_fixture("iperf3", "tcp_3s.json")
    result = parse(text)
    assert result["valid"] is True
    assert result["metrics"]["received_bytes"] == 8223260619
    assert result["details"]["skipped_lines"] == ["warning: JSON data length overflow"]
    assert "skipped 1 line" in result["warnings"][0]


def test_error_printed_after_the_json_invalidates():
    text = read_fixture("iperf3", "tcp_3s.json") + "iperf3: error - control socket has closed unexpectedly\n"
    result = parse(text)
    assert result["valid"] is False
    assert result["reasons"] == ["iperf3 printed an error after the JSON: control socket has closed unexpectedly"]


# ---------------------------------------------------------------------------
# The module
# ---------------------------------------------------------------------------

def test_module_src_and_dest(tmp_path):
    dest = tmp_path / "out" / "iperf3.json"
    failed, result = run_module(iperf3_parse, {"src": fixture_path("iperf3", "tcp_3s.json"), "dest": str(dest)})
    assert failed is False and result["changed"] is True
    facts = result["ansible_facts"]["iperf3"]
    assert facts["metrics"]["received_bytes"] == 8223260619
    assert facts["raw"] == read_fixture("iperf3", "tcp_3s.json")
    assert result["valid"] is True
    written = json.loads(dest.read_text())
    assert written["metrics"]["sent_bps"] == 21928495772.972824
    assert written["source"] == fixture_path("iperf3", "tcp_3s.json")


def test_module_content_check_mode_writes_nothing(tmp_path):
    dest = tmp_path / "iperf3.json"
    failed, result = run_module(iperf3_parse, {
        "content": read_fixture("iperf3", "udp_3s_100M.json"), "dest": str(dest), "keep_raw": False,
        "_ansible_check_mode": True})
    assert failed is False and result["changed"] is False
    assert not dest.exists()
    assert result["ansible_facts"]["iperf3"]["metrics"]["lost_packets"] == 32
    assert "raw" not in result["ansible_facts"]["iperf3"]
    assert result["source"] == "<content>"


def test_module_failure_names_tool_source_and_message():
    src = fixture_path("iperf3", "error_server_busy.json")
    failed, result = run_module(iperf3_parse, {"src": src})
    assert failed is True
    assert result["msg"].startswith("iperf3 output %s: " % src)
    assert "the server is busy running a test" in result["msg"]


def test_module_missing_file():
    failed, result = run_module(iperf3_parse, {"src": "/nonexistent/iperf3.json"})
    assert failed is True
    assert "iperf3 output /nonexistent/iperf3.json: cannot read src" in result["msg"]


# ---------------------------------------------------------------------------
# Older versions (published outputs, see the fixture README) and layouts taken
# from iperf3's own source (src/iperf_api.c at the tag named in each test)
# ---------------------------------------------------------------------------

def test_v36_rtt_and_cwnd_without_the_per_stream_sender_flag():
    # 3.6 has no "sender" flag in end.streams[] (it came in 3.7): this host sent (no -R)
    result = _parse("v36_tcp_n.json")
    m = result["metrics"]
    assert "sender" not in _doc("v36_tcp_n.json")["end"]["streams"][0]["sender"]
    assert (m["mean_rtt_us"], m["min_rtt_us"], m["max_rtt_us"]) == (139053, 138776, 139855)
    assert m["max_snd_cwnd_bytes"] == 3994496
    assert (m["sent_bytes"], m["received_bytes"], m["retransmits"]) == (210509696, 208654208, 437)
    assert m["duration_s"] == 13.234713792800903
    assert result["valid"] is True and result["warnings"] == []
    assert result["details"]["stream_sender_flag"] == "inferred"
    assert result["details"]["streams"][0]["local_sender"] is True


def test_v36_layout_with_reverse_gives_null_rtt_with_a_warning():
    # 3.6 -R: the client received; its "sender" block carries the local zeros (iperf_api.c 3.6, line ~2824)
    doc = _doc("v36_tcp_n.json")
    doc["start"]["test_start"]["reverse"] = 1
    for key in ("max_snd_cwnd", "max_rtt", "min_rtt", "mean_rtt"):
        doc["end"]["streams"][0]["sender"][key] = 0
    result = parse(json.dumps(doc))
    m = result["metrics"]
    assert m["mean_rtt_us"] is None and m["min_rtt_us"] is None and m["max_snd_cwnd_bytes"] is None
    assert any("iperf3 3.6 (before 3.7" in w for w in result["warnings"])
    assert result["details"]["streams"][0]["local_sender"] is False


def test_v36_reverse_never_takes_the_peer_numbers_as_local_rtt():
    doc = _doc("v36_tcp_n.json")
    doc["start"]["test_start"]["reverse"] = 1
    assert parse(json.dumps(doc))["metrics"]["mean_rtt_us"] is None


def test_v3011_no_rtt_or_cwnd_is_null_with_a_warning_naming_the_version():
    result = _parse("v3011_tcp_5s.json")
    m = result["metrics"]
    assert (m["sent_bytes"], m["received_bytes"], m["retransmits"]) == (16245572, 15641924, 14)
    assert (m["sent_bps"], m["received_bps"]) == (2.59925e+07, 2.50267e+07)
    assert m["duration_s"] == 5.00008
    assert m["interval_bps_min"] == 2.49496e+07 and m["interval_bps_max"] == 3.01563e+07
    assert m["mean_rtt_us"] is None and m["max_snd_cwnd_bytes"] is None
    assert result["warnings"] == [
        "RTT and congestion window are null: iperf3 3.0.11 does not report them (added in iperf3 3.1)"]
    assert result["valid"] is True


def test_sctp_layout_nulls_are_explained():
    # SCTP (3.1+): sender_has_retransmits is set for Ptcp only, so the sender blocks and sum_sent
    # carry no retransmits, cwnd or RTT (iperf_api.c 3.12 iperf_print_results)
    doc = _doc("tcp_3s.json")
    doc["start"]["test_start"]["protocol"] = "SCTP"
    for stream in doc["end"]["streams"]:
        for key in ("retransmits", "max_snd_cwnd", "max_snd_wnd", "max_rtt", "min_rtt", "mean_rtt"):
            stream["sender"].pop(key, None)
    doc["end"]["sum_sent"].pop("retransmits")
    result = parse(json.dumps(doc))
    m = result["metrics"]
    assert m["protocol"] == "SCTP"
    assert m["retransmits"] is None and m["mean_rtt_us"] is None and m["max_snd_cwnd_bytes"] is None
    assert m["sent_bytes"] == doc["end"]["sum_sent"]["bytes"]
    assert any("not SCTP" in w for w in result["warnings"])
    assert any(w.startswith("retransmits is null: iperf3 3.12") and "SCTP" in w for w in result["warnings"])


def test_current_fixtures_keep_printed_sender_flag():
    assert _parse("tcp_3s.json")["details"]["stream_sender_flag"] == "printed"
    assert _parse("tcp_3s_P4.json")["warnings"] == []


def test_server_side_json_is_refused():
    # the server writes start.accepted_connection instead of start.connecting_to (iperf_api.c, 3.0.11 to 3.19)
    doc = _doc("tcp_3s.json")
    doc["start"]["accepted_connection"] = doc["start"].pop("connecting_to")
    with pytest.raises(ParseError, match="iperf3 server's JSON"):
        parse(json.dumps(doc))


@pytest.mark.parametrize("text, pattern", [
    (read_fixture("iperf3", "tcp_2s_text_no_J.txt"), r"this is iperf3's human-readable text report \(the client was "
                                                     r"run without -J\)"),
    ("-----------------------------------------------------------\nServer listening on 5201 (test #1)\n"
     "-----------------------------------------------------------\n", r"the iperf3 server's text report"),
    ("------------------------------------------------------------\nClient connecting to 10.0.0.2, TCP port 5001\n"
     "TCP window size: 85.0 KByte (default)\n", r"iperf 2 output"),
])
def test_other_iperf_outputs_are_named(text, pattern):
    """Issue #26 item 4: a refusal names what the input is (captured iperf3 3.12 text report; iperf 2 / server
    banners as src/iperf_locale.c and iperf 2's Locale.c print them)."""
    with pytest.raises(ParseError, match=pattern):
        parse(text, "other")
