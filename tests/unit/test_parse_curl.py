"""curl -w '%{json}' parser and curl_parse module, on real curl 7.88.1 captures against vsftpd on loopback."""
import json

import curl_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError, unit_of
from ansible.module_utils.testbed_parse_curl import parse
from conftest import fixture_path, read_fixture
from helpers import run_module

MIB = 1024 * 1024


def _parse(name):
    return parse(read_fixture("curl", name), source=name)


def test_ftp_get_first_byte_and_rate():
    result = _parse("curl-ftp-get-50m.json")
    assert result["metrics"] == {
        "direction": "get", "transferred_bytes": 52428800, "first_byte_s": 0.015837, "connect_s": 0.01452,
        "total_s": 0.241122, "transfer_s": pytest.approx(0.241122 - 0.015837),
        "rate_mib_s": pytest.approx(217436816 / MIB), "response_code": 226,
    }
    assert result["valid"] is True and result["reasons"] == [] and result["warnings"] == []
    assert result["details"]["url"] == "ftp://127.0.0.1:2121/data-50m.bin" and result["details"]["scheme"] == "FTP"


def test_ftp_put():
    m = _parse("curl-ftp-put-50m.json")["metrics"]
    assert (m["direction"], m["transferred_bytes"], m["first_byte_s"]) == ("put", 52428800, 0.040017)
    assert m["rate_mib_s"] == pytest.approx(225738089 / MIB)


@pytest.mark.parametrize("name, match", [
    ("curl-ftp-refused.json", "curl exited 7: Failed to connect to 127.0.0.1 port 2122"),
    ("curl-ftp-missing.json", "curl exited 78: The file does not exist"),
])
def test_failures_raise_with_curl_message(name, match):
    with pytest.raises(ParseError, match=match):
        _parse(name)


def test_partial_transfer_is_invalid():
    doc = json.loads(read_fixture("curl", "curl-ftp-get-50m.json"))
    doc.update(exitcode=18, errormsg="Transferred a partial file", size_download=1000)
    result = parse(json.dumps(doc))
    assert result["valid"] is False and "curl exited 18 after 1000 bytes" in result["reasons"][0]


@pytest.mark.parametrize("text, match", [
    ("", "empty"),
    ("curl: (6) Could not resolve host: x\n", "curl said: curl: \\(6\\)"),
    ("hello\n", "no JSON object"),
    (read_fixture("curl", "curl-ftp-get-50m.json")[:200], "does not decode"),
    (read_fixture("curl", "curl-ftp-get-50m.json") * 2, "one URL per run"),
    ('{"exitcode": 0}\n', "lacks time_starttransfer"),
    (read_fixture("curl", "curl-ftp-get-50m.json").replace('"time_total":0.241122', '"time_total":NaN'), "NaN"),
])
def test_bad_outputs_raise(text, match):
    with pytest.raises(ParseError, match=match):
        parse(text)


def test_metric_units():
    assert unit_of("first_byte_s") == "s" and unit_of("rate_mib_s") == "MiB/s" and unit_of("transferred_bytes") == "B"


def test_module_and_tool_parse():
    failed, result = run_module(curl_parse, {"src": fixture_path("curl", "curl-ftp-get-50m.json")})
    assert not failed and result["ansible_facts"]["curl"]["metrics"]["first_byte_s"] == 0.015837
    failed, result = run_module(curl_parse, {"src": fixture_path("curl", "curl-ftp-refused.json")})
    assert failed and "Failed to connect" in result["msg"]
    import tool_parse
    failed, result = run_module(tool_parse, {"tool": "curl", "content": read_fixture("curl", "curl-ftp-put-50m.json")})
    assert not failed and result["metrics"]["direction"] == "put"
