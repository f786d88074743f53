"""ping parser and ping_parse module, on real iputils ping captures (tests/fixtures/ping)."""
import json

import ping_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_ping import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name, **kwargs):
    return parse(read_fixture("ping", name), source=name, **kwargs)


def test_normal_every_metric():
    result = _parse("normal_c5.txt")
    assert result["metrics"] == {
        "transmitted": 5, "received": 5, "duplicates": 0, "corrupted": 0, "errors": 0,
        "packet_loss_pct": 0.0, "time_ms": 812.0,
        "rtt_min_ms": 0.030, "rtt_avg_ms": 0.043, "rtt_max_ms": 0.070, "rtt_mdev_ms": 0.014,
        "ipg_ms": None, "ewma_ms": None, "pipe": None,
    }
    assert result["valid"] is True and result["reasons"] == [] and result["warnings"] == []
    assert (result["details"]["target"], result["details"]["address"]) == ("127.0.0.1", "127.0.0.1")


def test_adaptive_ipg_ewma():
    m = _parse("adaptive_A_c20.txt")["metrics"]
    assert (m["transmitted"], m["received"], m["time_ms"]) == (20, 20, 0.0)
    assert (m["rtt_min_ms"], m["rtt_avg_ms"], m["rtt_max_ms"], m["rtt_mdev_ms"]) == (0.004, 0.005, 0.037, 0.007)
    assert (m["ipg_ms"], m["ewma_ms"]) == (0.015, 0.007)


def test_flood_output_with_backspaces():
    result = _parse("flood_c200.txt")
    m = result["metrics"]
    assert (m["transmitted"], m["received"], m["packet_loss_pct"], m["time_ms"]) == (200, 200, 0.0, 3.0)
    assert (m["rtt_min_ms"], m["rtt_avg_ms"], m["rtt_max_ms"], m["rtt_mdev_ms"]) == (0.005, 0.005, 0.036, 0.002)
    assert (m["ipg_ms"], m["ewma_ms"]) == (0.013, 0.006)
    assert result["valid"] is True


@pytest.mark.parametrize("name, sent, time_ms", [("loss100_netns.txt", 5, 814.0),
                                                 ("loss100_lo_set_down.txt", 3, 406.0)])
def test_total_loss_is_invalid_not_an_error(name, sent, time_ms):
    result = _parse(name)
    m = result["metrics"]
    assert (m["transmitted"], m["received"], m["packet_loss_pct"], m["time_ms"]) == (sent, 0, 100.0, time_ms)
    for key in ("rtt_min_ms", "rtt_avg_ms", "rtt_max_ms", "rtt_mdev_ms", "ipg_ms", "ewma_ms"):
        assert m[key] is None
    assert result["valid"] is False
    assert result["reasons"] == ["100 %% packet loss: %d packets sent to 127.0.0.1, none answered" % sent]


def test_no_rtt_line_without_timestamps():
    result = _parse("small_s8_no_rtt.txt")
    m = result["metrics"]
    assert (m["transmitted"], m["received"], m["packet_loss_pct"], m["time_ms"]) == (3, 3, 0.0, 409.0)
    assert m["rtt_avg_ms"] is None
    assert result["valid"] is False
    assert "no rtt line although 3 replies arrived" in result["reasons"][0]


def test_partial_loss_duplicates_errors_and_fractional_loss():
    text = ("PING 127.0.0.2 (127.0.0.2) 56(84) bytes of data.\n\n--- 127.0.0.2 ping statistics ---\n"
            "3 packets transmitted, 2 received, +1 duplicates, +1 corrupted, +2 errors, 33.3333% packet loss, "
            "time 2003ms\nrtt min/avg/max/mdev = 0.100/0.200/0.300/0.050 ms, pipe 2\n")
    result = parse(text)
    m = result["metrics"]
    assert (m["received"], m["duplicates"], m["corrupted"], m["errors"]) == (2, 1, 1, 2)
    assert m["packet_loss_pct"] == 33.3333
    assert (m["time_ms"], m["pipe"]) == (2003.0, 2)
    assert result["valid"] is True
    assert len(result["warnings"]) == 4


def test_busybox_round_trip_form():
    text = ("PING 127.0.0.1 (127.0.0.1): 56 data bytes\n\n--- 127.0.0.1 ping statistics ---\n"
            "4 packets transmitted, 4 packets received, 0% packet loss\n"
            "round-trip min/avg/max = 0.055/0.071/0.092 ms\n")
    result = parse(text)
    m = result["metrics"]
    assert (m["transmitted"], m["received"], m["packet_loss_pct"]) == (4, 4, 0.0)
    assert (m["rtt_min_ms"], m["rtt_avg_ms"], m["rtt_max_ms"]) == (0.055, 0.071, 0.092)
    assert m["rtt_mdev_ms"] is None and m["time_ms"] is None
    assert result["valid"] is True


def test_bsd_stddev_form():
    text = ("--- 127.0.0.1 ping statistics ---\n2 packets transmitted, 2 packets received, 0.0% packet loss\n"
            "round-trip min/avg/max/stddev = 0.041/0.060/0.079/0.019 ms\n")
    result = parse(text)
    assert result["metrics"]["rtt_mdev_ms"] == 0.019
    assert result["details"]["rtt_spread"] == "stddev"


# ---------------------------------------------------------------------------
# Hard errors and bad input
# ---------------------------------------------------------------------------

def test_unreachable_empty_stdout():
    with pytest.raises(ParseError, match="output is empty"):
        _parse("unreachable_fresh_netns.txt")


def test_unreachable_names_stderr():
    with pytest.raises(ParseError) as info:
        _parse("unreachable_fresh_netns.txt", stderr=read_fixture("ping", "unreachable_fresh_netns.stderr"))
    assert str(info.value) == ("ping output unreachable_fresh_netns.txt: output is empty; ping said: "
                               "ping: connect: Network is unreachable")


def test_unreachable_mixed_streams():
    with pytest.raises(ParseError, match="Network is unreachable"):
        _parse("unreachable_fresh_netns.stderr")


def test_usage():
    with pytest.raises(ParseError, match="invalid option -- 'Z'"):
        _parse("usage_bad_option.stderr")


@pytest.mark.parametrize("text", ["", "\n", None])
def test_empty(text):
    with pytest.raises(ParseError, match="empty|no output"):
        parse(text)


def test_killed_after_header():
    text = read_fixture("ping", "normal_c5.txt")
    with pytest.raises(ParseError, match="truncated"):
        parse(text[:text.index("---")])


@pytest.mark.parametrize("tool, name", [("httperf", "normal_rate150.txt"), ("ab", "normal_n2000.txt"),
                                        ("sysbench", "cpu_t2.txt")])
def test_other_tools_output(tool, name):
    with pytest.raises(ParseError, match="packets transmitted"):
        parse(read_fixture(tool, name))


@pytest.mark.parametrize("bad", ["nan", "inf", "-nan"])
def test_non_finite_rtt(bad):
    text = read_fixture("ping", "normal_c5.txt").replace("0.030/0.043", "0.030/%s" % bad)
    with pytest.raises(ParseError, match="rtt_avg_ms is"):
        parse(text)


def test_damaged_summary():
    text = read_fixture("ping", "normal_c5.txt").replace(", 0% packet loss", "")
    with pytest.raises(ParseError, match="packet loss"):
        parse(text)


# ---------------------------------------------------------------------------
# The module
# ---------------------------------------------------------------------------

def test_module_src_dest(tmp_path):
    dest = tmp_path / "ping.json"
    failed, result = run_module(ping_parse, {"src": fixture_path("ping", "adaptive_A_c20.txt"), "dest": str(dest)})
    assert failed is False and result["changed"] is True
    assert result["ansible_facts"]["ping"]["metrics"]["ewma_ms"] == 0.007
    assert json.loads(dest.read_text())["metrics"]["ipg_ms"] == 0.015


def test_module_total_loss_succeeds_invalid():
    failed, result = run_module(ping_parse, {"src": fixture_path("ping", "loss100_netns.txt")})
    assert failed is False
    assert result["valid"] is False
    assert result["metrics"]["rtt_avg_ms"] is None


def test_module_hard_error_fails():
    failed, result = run_module(ping_parse, {"content": "",
                                             "stderr": read_fixture("ping", "unreachable_fresh_netns.stderr")})
    assert failed is True
    assert result["msg"] == "ping output <content>: output is empty; ping said: ping: connect: Network is unreachable"


# ---------------------------------------------------------------------------
# Other pings and other iputils versions (published outputs, see the fixture README)
# ---------------------------------------------------------------------------

def test_pipe_on_its_own_line_when_no_reply():
    result = _parse("pipe_own_line_no_reply.txt")
    m = result["metrics"]
    assert (m["transmitted"], m["received"], m["errors"], m["packet_loss_pct"], m["time_ms"]) == (5, 0, 3, 100.0,
                                                                                                  3999.0)
    assert m["pipe"] == 4
    assert m["rtt_avg_ms"] is None and m["ipg_ms"] is None
    assert result["valid"] is False and result["details"]["flavour"] == "iputils"


def test_pipe_line_of_old_iputils_starts_with_a_comma():
    m = _parse("pipe_comma_line_old_iputils.txt")["metrics"]
    assert (m["transmitted"], m["received"], m["errors"], m["pipe"]) == (5, 0, 5, 3)


def test_pipe_and_ipg_without_rtt_line():
    # -s 8 (no timestamps) with -A: iputils prints "pipe N, ipg/ewma x/y ms" alone (ping_output.c)
    text = read_fixture("ping", "small_s8_no_rtt.txt").rstrip("\n") + "\npipe 2, ipg/ewma 0.015/0.007 ms\n"
    m = parse(text)["metrics"]
    assert (m["pipe"], m["ipg_ms"], m["ewma_ms"]) == (2, 0.015, 0.007)


def test_a_later_line_is_not_taken_for_the_pipe_line():
    text = read_fixture("ping", "loss100_netns.txt").rstrip("\n") + "\n\nsomething else: pipe 9\n"
    assert parse(text)["metrics"]["pipe"] is None


def test_busybox_missing_fields_are_null_with_a_warning():
    result = _parse("busybox_w4.txt")
    m = result["metrics"]
    assert (m["transmitted"], m["received"], m["packet_loss_pct"]) == (4, 4, 0.0)
    assert (m["rtt_min_ms"], m["rtt_avg_ms"], m["rtt_max_ms"]) == (0.150, 0.182, 0.217)
    assert m["rtt_mdev_ms"] is None and m["time_ms"] is None
    assert result["valid"] is True and result["details"]["flavour"] == "BusyBox"
    assert any("time_ms is null: BusyBox" in w for w in result["warnings"])
    assert any("rtt_mdev_ms is null: BusyBox" in w for w in result["warnings"])
    assert (result["details"]["target"], result["details"]["address"]) == ("container2.isolated_nw", "172.20.0.2")


def test_busybox_total_loss():
    result = _parse("busybox_loss100.txt")
    assert (result["metrics"]["transmitted"], result["metrics"]["received"]) == (4, 0)
    assert result["valid"] is False and "100 % packet loss" in result["reasons"][0]
    assert any("time_ms is null" in w for w in result["warnings"])


def test_inetutils_stddev_and_interrupt_echo():
    result = _parse("inetutils_localhost.txt")
    m = result["metrics"]
    assert (m["transmitted"], m["received"]) == (3, 3)
    assert (m["rtt_min_ms"], m["rtt_avg_ms"], m["rtt_max_ms"], m["rtt_mdev_ms"]) == (0.088, 0.091, 0.096, 0.0)
    assert result["details"]["rtt_spread"] == "stddev" and result["details"]["flavour"] == "inetutils/BSD"
    assert result["warnings"] == ["time_ms is null: inetutils/BSD ping prints no total time on its summary line"]


def test_iputils_json_output_is_rejected():
    text = ('{"host": "127.0.0.1", "transmitted": 1, "received": 1, "duplicates": 0, "corrupted": 0, '
            '"errors": 0, "loss": 0}\n')
    with pytest.raises(ParseError, match="ping -j"):
        parse(text)
