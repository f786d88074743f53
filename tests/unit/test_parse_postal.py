"""postal parser and postal_parse module, on real postal (Debian 0.76) captures against Postfix on loopback."""
import postal_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError, unit_of
from ansible.module_utils.testbed_parse_postal import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name, **kwargs):
    return parse(read_fixture("postal", name), source=name, **kwargs)


def test_two_lines_totals_and_full_minute_rates():
    result = _parse("postal-t10-135s.txt")
    assert result["metrics"] == {
        "messages": 6648 + 10041, "data_kib": 36246 + 54320, "errors": 1, "connections": 6658 + 10041,
        "ssl_connections": 0, "lines": 2, "full_minutes": 1,
        "messages_per_min": 10041.0, "data_kib_per_min": 54320.0, "errors_per_min": 1.0,
        "connections_per_min": 10041.0, "messages_per_s": pytest.approx(10041 / 60.0),
        "data_kib_s": pytest.approx(54320 / 60.0), "error_pct": pytest.approx(100.0 / 10042),
    }
    assert result["valid"] is True and result["reasons"] == []
    assert result["warnings"] == ["1 errors in the full minutes (0.010 %)"]
    assert result["details"]["minutes"][0] == {"time": "14:51", "messages": 6648, "data_kib": 36246, "errors": 0,
                                               "connections": 6658, "ssl_connections": 0}
    assert result["details"]["ssl_column"] is True


def test_error_limit():
    result = _parse("postal-t10-135s.txt", max_error_pct=0.001)
    assert result["valid"] is False and "limit 0.001 %" in result["reasons"][0]


def test_run_shorter_than_a_minute_printed_nothing():
    # postal buffers stdout: killed by timeout before the first minute boundary, it printed nothing at all
    with pytest.raises(ParseError, match="crossed no minute boundary"):
        _parse("postal-t10-20s-empty.txt")


def test_header_only_is_invalid():
    result = parse("time,messages,data(K),errors,connections,SSL connections\n")
    assert result["metrics"]["messages"] is None and result["metrics"]["messages_per_min"] is None
    assert result["valid"] is False and "crossed no minute boundary" in result["reasons"][0]


def test_refused_run_one_partial_minute_is_invalid():
    result = _parse("postal-refused-70s.txt")
    m = result["metrics"]
    assert (m["messages"], m["errors"], m["lines"], m["full_minutes"]) == (0, 12, 1, 0)
    assert m["messages_per_min"] is None
    assert result["valid"] is False and "one line only" in result["reasons"][0]


def test_all_errors_in_full_minutes_is_invalid():
    text = read_fixture("postal", "postal-refused-70s.txt") + "14:54,0,0,40,0,0\n"
    result = parse(text)
    assert result["valid"] is False and result["reasons"] == ["no message was sent in 1 full minute(s) (40 errors)"]


def test_build_without_tls_column():
    result = parse("time,messages,data(K),errors,connections\n10:00,5,20,0,5\n10:01,60,300,0,60\n")
    assert result["metrics"]["ssl_connections"] is None and result["metrics"]["messages_per_min"] == 60.0
    assert any("without TLS" in w for w in result["warnings"])


def test_stray_lines_are_warned_about():
    text = read_fixture("postal", "postal-t10-135s.txt") + "Can't connect to 127.0.0.1 port 25.\n"
    result = parse(text)
    assert any("not per-minute lines" in w for w in result["warnings"])


@pytest.mark.parametrize("text, match", [
    ("", "empty: postal buffers"),
    (None, "no output"),
    ("14:51,6648,36246,0,6658,0\n", "missing the 'time,messages"),
    ("Can't block SIGPIPE.\n", "postal failed: Can't block SIGPIPE"),
    ("time,messages,data(K),errors,connections,SSL connections\n14:51,1,2,3\n", "has 3 values, the header announces 5"),
    ("random text\n", "not postal output"),
])
def test_bad_outputs_raise(text, match):
    with pytest.raises(ParseError, match=match):
        parse(text)


def test_usage_raises():
    with pytest.raises(ParseError, match="usage"):
        _parse("postal-usage.txt")


def test_metric_units():
    assert unit_of("messages_per_min") == "1/min" and unit_of("messages_per_s") == "1/s"
    assert unit_of("data_kib_s") == "KiB/s" and unit_of("data_kib") == "KiB" and unit_of("error_pct") == "%"


def test_module_option_and_tool_parse():
    failed, result = run_module(postal_parse, {"src": fixture_path("postal", "postal-t10-135s.txt"),
                                               "max_error_pct": 0.001})
    assert not failed and result["valid"] is False
    failed, result = run_module(postal_parse, {"src": fixture_path("postal", "postal-usage.txt")})
    assert failed and "usage" in result["msg"]
    import tool_parse
    failed, result = run_module(tool_parse, {"tool": "postal", "content": read_fixture("postal", "postal-t10-135s.txt"),
                                             "options": {"max_error_pct": 5}})
    assert not failed and result["valid"] is True


# ---------------------------------------------------------------------------
# postal.log (log_duration_s): accepted messages of a short bounded run
# ---------------------------------------------------------------------------

def _log():
    return read_fixture("postal", "postal-log-t10-10s.log")


def test_log_counts_accepted_messages():
    text = _log()
    result = parse(text, "postal.log", log_duration_s=10)
    assert result["valid"], result["reasons"]
    lines = len(text.splitlines())
    assert result["metrics"]["messages"] == lines
    assert result["metrics"]["messages_per_min"] == pytest.approx(lines * 6.0)
    assert result["metrics"]["errors"] is None
    assert any("errors is null" in w for w in result["warnings"])


def test_log_last_line_cut_is_ignored_with_a_warning():
    text = _log()
    cut = text.rstrip("\n") + "\n46406795ad35cb9863e7054dcaa1dd58 <user3@exa"
    result = parse(cut, "postal.log", log_duration_s=10)
    assert result["metrics"]["messages"] == len(text.splitlines())
    assert any("cut by the end of the run" in w for w in result["warnings"])


def test_log_empty_is_invalid():
    result = parse("", "postal.log", log_duration_s=5)
    assert not result["valid"]
    assert "no message was accepted in 5 s" in result["reasons"][0]


def test_log_refuses_other_text():
    with pytest.raises(ParseError, match="not a postal.log"):
        parse("time,messages,data(K),errors,connections\n14:51,1,2,0,1\n", "x", log_duration_s=10)
    with pytest.raises(ParseError, match="log_duration_s must be > 0"):
        parse(_log(), "x", log_duration_s=0)
