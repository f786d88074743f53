"""The shared parser machinery in module_utils/testbed_parse.py."""

import json
import os
import stat

import pytest
from ansible.module_utils.testbed_parse import (
    ParseError,
    json_documents,
    require_text,
    to_number,
    unit_of,
    write_json_atomic,
)


@pytest.mark.parametrize("value", ["nan", "-nan", "inf", "-inf", "NaN", float("nan"), float("inf")])
def test_to_number_rejects_non_finite(value):
    with pytest.raises(ParseError, match=r"^tool output src: rate is .*no usable value"):
        to_number(value, "tool", "src", "rate")


def test_to_number_types_and_errors():
    assert to_number("12", "t", "s", "n", integer=True) == 12
    assert to_number("1.5e3", "t", "s", "n") == 1500.0
    with pytest.raises(ParseError, match="expected a whole number"):
        to_number("1.5", "t", "s", "n", integer=True)
    with pytest.raises(ParseError, match="'abc', not a number"):
        to_number("abc", "t", "s", "n")
    with pytest.raises(ParseError, match="boolean"):
        to_number(True, "t", "s", "n")


def test_require_text_names_tool_and_source():
    with pytest.raises(ParseError, match=r"^fio output /tmp/x\.json: output is empty"):
        require_text("  \n", "fio", "/tmp/x.json")


@pytest.mark.parametrize("name,unit", [
    ("response_time_ms", "ms"), ("net_io_kb_s", "KB/s"), ("connection_rate_per_s", "1/s"),
    ("received_bps", "bit/s"), ("io_bytes", "B"), ("cpu_busy_mean_pct", "%"), ("clat_p99_us", "us"),
    ("test_duration_s", "s"), ("replies", "count"),
])
def test_unit_of(name, unit):
    assert unit_of(name) == unit


def test_json_documents_skips_leading_lines_and_keeps_them():
    text = 'fio: pid=1, err=25/file:ioengines.c:399\n{\n  "a": {\n    "b": 1\n  }\n}\ntrailer\n'
    found = json_documents(text, "fio", "src")
    assert [doc for doc, _s, _e in found["documents"]] == [{"a": {"b": 1}}]
    assert found["skipped"] == ["fio: pid=1, err=25/file:ioengines.c:399"]
    assert found["trailing"].strip() == "trailer"
    assert found["truncated"] is False


def test_json_documents_concatenated_and_truncated():
    one = json.dumps({"n": 1}, indent=2)
    two = json.dumps({"n": 2}, indent=2)
    found = json_documents(one + "\n" + two + "\n" + two[:8], "fio", "src")
    assert [doc["n"] for doc, _s, _e in found["documents"]] == [1, 2]
    assert found["truncated"] is True


def test_json_documents_nan_is_an_error_with_the_hint():
    with pytest.raises(ParseError, match=r"a number is 'nan' at line 2 \(old versions\)"):
        json_documents('{\n"x": nan\n}\n', "iperf3", "src", nan_hint=" (old versions)")


def test_json_documents_compact_document_without_own_line():
    found = json_documents('{"x": 1}', "iperf3", "src")
    assert found["documents"][0][0] == {"x": 1}


def test_write_json_atomic_mode_and_content(tmp_path):
    path = tmp_path / "sub" / "doc.json"
    write_json_atomic(str(path), {"b": 1, "a": [1, 2]})
    assert json.loads(path.read_text()) == {"a": [1, 2], "b": 1}
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask
    assert [p.name for p in path.parent.iterdir()] == ["doc.json"]  # no temp file left
