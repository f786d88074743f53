"""ab parser and ab_parse module, on real ab 2.3 captures (tests/fixtures/ab)."""
import json

import ab_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_ab import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name, with_stderr=False, **opts):
    stderr = read_fixture("ab", name.replace(".txt", ".stderr")) if with_stderr else None
    return parse(read_fixture("ab", name), source=name, stderr=stderr, **opts)


NORMAL_N2000 = {
    "concurrency": 1, "time_taken_s": 0.364, "complete_requests": 2000, "failed_requests": 0,
    "failed_connect": None, "failed_receive": None, "failed_length": None, "failed_exceptions": None,
    "write_errors": 0, "non_2xx_responses": 0, "keepalive_requests": None,
    "total_transferred_bytes": 3176000, "html_transferred_bytes": 2708000, "total_body_sent_bytes": None,
    "document_length_bytes": 1354,
    "requests_per_s": 5494.69, "time_per_request_ms": 0.182, "time_per_request_all_ms": 0.182,
    "transfer_rate_kb_s": 8521.06, "sent_kb_s": None, "total_kb_s": None,
    "connect_min_ms": 0, "connect_mean_ms": 0, "connect_sd_ms": 0.3, "connect_median_ms": 0, "connect_max_ms": 8,
    "processing_min_ms": 0, "processing_mean_ms": 0, "processing_sd_ms": 0.3, "processing_median_ms": 0,
    "processing_max_ms": 5,
    "waiting_min_ms": 0, "waiting_mean_ms": 0, "waiting_sd_ms": 0.3, "waiting_median_ms": 0, "waiting_max_ms": 5,
    "total_min_ms": 0, "total_mean_ms": 0, "total_sd_ms": 0.5, "total_median_ms": 0, "total_max_ms": 10,
    "p50_ms": 0, "p66_ms": 0, "p75_ms": 0, "p80_ms": 0, "p90_ms": 0, "p95_ms": 0, "p98_ms": 2, "p99_ms": 3,
    "p100_ms": 10,
}


def test_normal_every_metric():
    result = _parse("normal_n2000.txt")
    assert result["metrics"] == NORMAL_N2000
    assert result["valid"] is True
    assert result["reasons"] == [] and result["warnings"] == []
    d = result["details"]
    assert (d["version"], d["server_software"], d["server_hostname"], d["server_port"], d["document_path"]) == (
        "2.3", "nginx/1.22.1", "127.0.0.1", "8080", "/")
    assert d["percentile_table"] is True


def test_concurrency_run():
    m = _parse("concurrency_c20.txt")["metrics"]
    assert (m["concurrency"], m["complete_requests"], m["time_taken_s"]) == (20, 4000, 0.607)
    assert (m["requests_per_s"], m["time_per_request_ms"], m["time_per_request_all_ms"]) == (6587.50, 3.036, 0.152)
    assert m["transfer_rate_kb_s"] == 10215.77
    assert (m["total_min_ms"], m["total_mean_ms"], m["total_sd_ms"], m["total_median_ms"], m["total_max_ms"]) == (
        1, 3, 1.1, 3, 6)
    assert (m["connect_mean_ms"], m["processing_mean_ms"], m["waiting_mean_ms"]) == (1, 2, 1)
    assert [m["p%d_ms" % p] for p in (50, 66, 75, 80, 90, 95, 98, 99, 100)] == [3, 4, 4, 4, 4, 5, 5, 6, 6]


def test_non_2xx_is_invalid():
    result = _parse("non2xx_404.txt")
    m = result["metrics"]
    assert (m["complete_requests"], m["failed_requests"], m["non_2xx_responses"]) == (300, 0, 300)
    assert m["document_length_bytes"] == 153
    assert m["requests_per_s"] == 4644.90
    assert result["valid"] is False
    assert "300 of 300 responses were not 2xx" in result["reasons"][0]
    # ab's own ERROR remark about the waiting time becomes a warning
    assert any("waiting time are more than twice the standard deviation apart" in w for w in result["warnings"])


def test_length_failures_only_warn():
    result = _parse("length_failures_keepalive.txt")
    m = result["metrics"]
    assert (m["failed_requests"], m["failed_connect"], m["failed_receive"], m["failed_length"],
            m["failed_exceptions"]) == (255, 0, 0, 255, 0)
    assert m["keepalive_requests"] == 300
    assert m["document_length_bytes"] == 10
    assert (m["total_transferred_bytes"], m["html_transferred_bytes"]) == (47655, 3255)
    assert m["requests_per_s"] == 17209.73
    assert result["valid"] is True
    assert result["reasons"] == []
    assert "255 requests 'failed' on Length only" in result["warnings"][0]


def test_length_failures_of_a_static_document_invalidate():
    result = _parse("length_failures_keepalive.txt", static_document=True)
    assert result["valid"] is False
    assert result["reasons"] == ["255 of 300 responses had a body length other than the first response's (10 bytes) "
                                 "although the page is static: the server sent truncated or different documents"]
    assert not any("Length only" in w for w in result["warnings"])
    # a static document without Length failures stays valid
    assert _parse("concurrency_c20.txt", static_document=True)["valid"] is True


def test_static_document_must_be_a_bool():
    with pytest.raises(ParseError, match="option static_document must be true or false, not 'yes'"):
        _parse("concurrency_c20.txt", static_document="yes")


def test_module_static_document_option():
    failed, result = run_module(ab_parse, {"src": fixture_path("ab", "length_failures_keepalive.txt"),
                                           "static_document": True})
    assert failed is False
    assert result["valid"] is False and "although the page is static" in result["reasons"][0]


def test_variable_document_length():
    result = _parse("variable_length_l.txt")
    m = result["metrics"]
    assert m["document_length_bytes"] is None
    assert result["details"]["document_length_variable"] is True
    assert (m["failed_requests"], m["failed_length"], m["keepalive_requests"]) == (0, None, 300)
    assert (m["requests_per_s"], m["transfer_rate_kb_s"]) == (16963.53, 2631.50)
    assert result["valid"] is True


def test_no_percentiles_with_d():
    result = _parse("no_percentiles_d.txt")
    m = result["metrics"]
    for pct in (50, 66, 75, 80, 90, 95, 98, 99, 100):
        assert m["p%d_ms" % pct] is None
    assert (m["concurrency"], m["complete_requests"], m["requests_per_s"]) == (4, 1000, 4630.19)
    assert (m["total_mean_ms"], m["total_max_ms"], m["processing_sd_ms"]) == (1, 4, 0.5)
    assert result["details"]["percentile_table"] is False
    assert result["valid"] is True
    assert "processing time" in result["warnings"][0]


def test_hard_failures_invalidate():
    text = read_fixture("ab", "length_failures_keepalive.txt").replace(
        "(Connect: 0, Receive: 0, Length: 255, Exceptions: 0)", "(Connect: 3, Receive: 2, Length: 250, Exceptions: 0)")
    result = parse(text)
    assert (result["metrics"]["failed_connect"], result["metrics"]["failed_receive"]) == (3, 2)
    assert result["valid"] is False
    assert "5 of 300 requests failed (Connect 3, Receive 2)" in result["reasons"]


def test_write_errors_invalidate():
    text = read_fixture("ab", "normal_n2000.txt").replace(
        "Failed requests:        0\n", "Failed requests:        0\nWrite errors:           7\n")
    result = parse(text)
    assert result["metrics"]["write_errors"] == 7
    assert result["valid"] is False
    assert "7 write errors" in result["reasons"][0]


def test_connection_times_without_confidence_columns():
    text = read_fixture("ab", "normal_n2000.txt")
    start = text.index("Connection Times (ms)")
    end = text.index("Percentage of the requests")
    table = ("Connection Times (ms)\n              min   avg   max\nConnect:        0     0     8\n"
             "Processing:     0     0     5\nWaiting:        0     0     5\nTotal:          0     0    10\n\n")
    m = parse(text[:start] + table + text[end:])["metrics"]
    assert (m["total_min_ms"], m["total_mean_ms"], m["total_max_ms"]) == (0, 0, 10)
    assert m["total_sd_ms"] is None and m["total_median_ms"] is None
    assert m["connect_max_ms"] == 8


# ---------------------------------------------------------------------------
# Failed runs and bad input
# ---------------------------------------------------------------------------

def test_connection_refused_names_apr_message():
    with pytest.raises(ParseError) as info:
        _parse("connrefused.txt", with_stderr=True)
    assert str(info.value) == ("ab output connrefused.txt: ab stopped before its report: "
                               "apr_socket_recv: Connection refused (111)")


def test_connection_refused_without_stderr():
    with pytest.raises(ParseError, match="stopped after 'Benchmarking"):
        _parse("connrefused.txt")


def test_timeout_names_apr_message():
    with pytest.raises(ParseError, match=r"apr_pollset_poll: The timeout specified has expired \(70007\)"):
        _parse("timeout_s1.txt", with_stderr=True)


def test_mixed_streams_with_completed_count():
    text = read_fixture("ab", "connrefused.txt") + "\nTotal of 42 requests completed\n" + \
        read_fixture("ab", "connrefused.stderr")
    with pytest.raises(ParseError, match="after 42 completed requests: apr_socket_recv"):
        parse(text)


def test_empty_stdout_with_stderr():
    with pytest.raises(ParseError, match="apr_socket_recv"):
        parse("", stderr=read_fixture("ab", "connrefused.stderr"))


@pytest.mark.parametrize("text", ["", "\n", None])
def test_empty(text):
    with pytest.raises(ParseError, match="empty|no output"):
        parse(text)


def test_usage_text():
    with pytest.raises(ParseError, match="usage text"):
        parse(read_fixture("ab", "usage_h.stderr"))
    with pytest.raises(ParseError, match="usage text"):
        parse("", stderr=read_fixture("ab", "usage_h.stderr"))


@pytest.mark.parametrize("tool, name", [("httperf", "normal_rate150.txt"), ("sysbench", "cpu_t2.txt"),
                                        ("ping", "normal_c5.txt")])
def test_other_tools_output(tool, name):
    with pytest.raises(ParseError, match="not an ab report"):
        parse(read_fixture(tool, name))


def test_truncated_after_connection_times():
    text = read_fixture("ab", "normal_n2000.txt")
    with pytest.raises(ParseError, match="truncated"):
        parse(text[:text.index("Connection Times (ms)")])


def test_truncated_percentile_table():
    text = read_fixture("ab", "normal_n2000.txt")
    with pytest.raises(ParseError, match="100%"):
        parse(text[:text.index(" 100%")])


def test_truncated_before_html_transferred():
    text = read_fixture("ab", "normal_n2000.txt")
    with pytest.raises(ParseError, match="HTML transferred"):
        parse(text[:text.index("HTML transferred")])


def test_failed_without_breakdown():
    text = read_fixture("ab", "length_failures_keepalive.txt").replace(
        "   (Connect: 0, Receive: 0, Length: 255, Exceptions: 0)\n", "")
    with pytest.raises(ParseError, match="breakdown"):
        parse(text)


@pytest.mark.parametrize("bad", ["nan", "inf", "-nan"])
def test_non_finite(bad):
    text = read_fixture("ab", "normal_n2000.txt").replace("5494.69 [#/sec]", "%s [#/sec]" % bad)
    with pytest.raises(ParseError, match="requests_per_s is"):
        parse(text)


# ---------------------------------------------------------------------------
# The module
# ---------------------------------------------------------------------------

def test_module_src_dest(tmp_path):
    dest = tmp_path / "ab.json"
    failed, result = run_module(ab_parse, {"src": fixture_path("ab", "concurrency_c20.txt"), "dest": str(dest)})
    assert failed is False and result["changed"] is True
    assert result["ansible_facts"]["ab"]["metrics"]["requests_per_s"] == 6587.5
    assert json.loads(dest.read_text())["metrics"]["p99_ms"] == 6


def test_module_content_with_stderr_failure():
    failed, result = run_module(ab_parse, {"content": read_fixture("ab", "connrefused.txt"),
                                           "stderr": read_fixture("ab", "connrefused.stderr")})
    assert failed is True
    assert result["msg"] == "ab output <content>: ab stopped before its report: apr_socket_recv: Connection refused (111)"


def test_module_invalid_measurement_succeeds():
    failed, result = run_module(ab_parse, {"src": fixture_path("ab", "non2xx_404.txt"), "keep_raw": False})
    assert failed is False
    assert result["valid"] is False
    assert "raw" not in result["ansible_facts"]["ab"]


# ---------------------------------------------------------------------------
# httpd 2.2's ab 2.3 (published output) and other ab versions
# ---------------------------------------------------------------------------

def test_httpd22_total_posted_and_sent_rates():
    result = parse(read_fixture("ab", "httpd22_total_posted.txt"), source="httpd22")
    m = result["metrics"]
    assert (m["concurrency"], m["complete_requests"], m["failed_requests"], m["time_taken_s"]) == (
        10000, 10000, 0, 13.323)
    assert m["total_body_sent_bytes"] == 1594670  # "Total POSTed:" of httpd 2.2 (2.4: "Total body sent:")
    assert (m["requests_per_s"], m["transfer_rate_kb_s"], m["sent_kb_s"], m["total_kb_s"]) == (
        750.58, 120.21, 116.89, 237.10)
    assert (m["connect_mean_ms"], m["connect_sd_ms"], m["waiting_median_ms"], m["total_max_ms"]) == (
        1653, 2119.5, 469, 11185)
    assert (m["p50_ms"], m["p99_ms"], m["p100_ms"]) == (1797, 7952, 11185)
    assert result["valid"] is True and result["warnings"] == []


def test_httpd22_total_put():
    text = read_fixture("ab", "httpd22_total_posted.txt").replace("Total POSTed:     ", "Total PUT:        ")
    assert parse(text)["metrics"]["total_body_sent_bytes"] == 1594670


def test_other_ab_versions_are_refused():
    text = read_fixture("ab", "normal_n2000.txt").replace("Version 2.3 ", "Version 2.0.40-dev ")
    with pytest.raises(ParseError, match="ab version 2.0.40-dev is not supported"):
        parse(text)
