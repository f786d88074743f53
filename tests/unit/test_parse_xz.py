"""xz parser and xz_parse module, on real xz 5.4.1 captures (tests/fixtures/xz)."""
import pytest
import xz_parse
from ansible.module_utils.testbed_parse import ParseError, unit_of
from ansible.module_utils.testbed_parse_xz import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name):
    return parse(read_fixture("xz", name), source=name)


def test_two_threads_vv_every_metric():
    result = _parse("xz-T2-vv-64mib.txt")
    assert result["metrics"] == {
        "uncompressed_mib": 64.0, "compressed_mib": 25.0,
        "uncompressed_bytes": 67108864, "compressed_bytes": 26214400,
        "ratio": 0.391, "throughput_mib_s": 4.2, "elapsed_s": 15, "threads": 2,
    }
    assert result["valid"] is True and result["reasons"] == [] and result["warnings"] == []
    assert result["details"]["file"] == "xz-input.bin"
    assert result["details"]["filter_chain"].startswith("--lzma2=dict=2MiB")


def test_single_v_has_no_thread_count():
    result = _parse("xz-T1-v-64mib.txt")
    m = result["metrics"]
    assert (m["ratio"], m["throughput_mib_s"], m["elapsed_s"], m["threads"]) == (0.39, 1.5, 42, None)
    assert result["valid"] is True
    assert result["warnings"] == ["threads is null: xz prints the number of threads only with -vv"]


def test_single_threaded_vv_is_one_thread():
    text = read_fixture("xz", "xz-T2-vv-64mib.txt").replace("xz: Using up to 2 threads.\n", "")
    assert parse(text)["metrics"]["threads"] == 1


def test_reduced_threads_named():
    text = read_fixture("xz", "xz-T2-vv-64mib.txt").replace(
        "xz: Using up to 2 threads.\n",
        "xz: Reduced the number of threads from 8 to 3 to not exceed the memory usage limit of 200 MiB\n")
    result = parse(text)
    assert result["metrics"]["threads"] == 3
    assert "from 8 to 3" in result["warnings"][0]
    assert result["valid"] is True


def test_short_run_has_no_speed_and_is_invalid():
    result = _parse("xz-T2-vv-small.txt")
    m = result["metrics"]
    assert m["throughput_mib_s"] is None and m["elapsed_s"] is None
    assert m["uncompressed_bytes"] == round(976.6 * 1024) and m["compressed_bytes"] == round(386.6 * 1024)
    assert result["valid"] is False and "less than 3 s" in result["reasons"][0]
    assert "give the command's wall time (option wall_s) or use a larger input" in result["reasons"][0]


def test_short_run_with_its_wall_time_is_a_measurement():
    """A fast machine: xz prints no speed below 3 s; the rate is the input over the measured wall time."""
    text = read_fixture("xz", "xz-T2-vv-small.txt")
    result = parse(text, "small", wall_s=0.5)
    m = result["metrics"]
    assert result["valid"] is True, result["reasons"]
    assert m["throughput_mib_s"] == pytest.approx(976.6 / 1024 / 0.5)
    assert result["details"]["throughput_source"] == "wall time" and result["details"]["wall_s"] == 0.5
    assert any("wall time, 0.500 s" in w for w in result["warnings"])
    # xz's own speed wins when it printed one
    long_run = parse(read_fixture("xz", "xz-d-vv.txt"), "long", wall_s=100)
    assert long_run["metrics"]["throughput_mib_s"] == 7.4 and long_run["details"]["throughput_source"] == "xz"


@pytest.mark.parametrize("wall_s", [0, -1, "soon"])
def test_a_wall_time_that_is_not_a_duration_is_refused(wall_s):
    with pytest.raises(ParseError, match="wall_s"):
        parse(read_fixture("xz", "xz-T2-vv-small.txt"), "small", wall_s=wall_s)


def test_decompression_line_from_stdin():
    result = _parse("xz-d-vv.txt")
    assert result["details"]["file"] == "(stdin)"
    assert (result["metrics"]["throughput_mib_s"], result["metrics"]["elapsed_s"]) == (7.4, 8)


def test_speed_units_and_hours():
    result = parse("big.tar: 1.2 GiB / 10.0 GiB = 0.120, 980 KiB/s, 2:58:31\n")
    m = result["metrics"]
    assert m["throughput_mib_s"] == pytest.approx(980 / 1024.0)
    assert m["elapsed_s"] == 2 * 3600 + 58 * 60 + 31
    assert m["compressed_mib"] == pytest.approx(1.2 * 1024)


def test_ratio_above_limit_is_null_with_warning():
    result = parse("random.bin: 12.0 MiB / 1.0 MiB > 9.999, 3.0 MiB/s, 0:04\n")
    assert result["metrics"]["ratio"] is None
    assert any("> 9.999" in w for w in result["warnings"])


def test_interrupted_line_with_percentage_is_invalid():
    text = "xz-input.bin: 45.3 %, 11.0 MiB / 29.0 MiB = 0.379, 4.1 MiB/s, 0:07\nxz: xz-input.bin: Compressed data is corrupt\n"
    result = parse(text)
    assert result["valid"] is False
    assert "45.3" in result["reasons"][0] and "Compressed data is corrupt" in result["reasons"][0]


def test_missing_file_names_xz_error():
    with pytest.raises(ParseError, match="missing.bin: No such file or directory"):
        _parse("xz-missing.txt")


@pytest.mark.parametrize("text, match", [
    ("", "empty"),
    ("xz: Filter chain: --lzma2=dict=2MiB\nxz-input.bin: 25.0 MiB / 64", "missing the 'NAME"),
    ("garbage\n\x00\x01 line\n", "missing the 'NAME"),
    ("Usage: xz [OPTION]... [FILE]...\n", "usage"),
    ("a: 1.0 MiB / 2.0 MiB = 0.500, 3.0 MiB/s, 0:04\nb: 1.0 MiB / 2.0 MiB = 0.500, 3.0 MiB/s, 0:04\n", "one file"),
    ("a: nan MiB / 2.0 MiB = 0.500, 3.0 MiB/s, 0:04\n", "nan"),
])
def test_bad_outputs_raise(text, match):
    with pytest.raises(ParseError, match=match):
        parse(text)


def test_metric_units():
    assert unit_of("throughput_mib_s") == "MiB/s" and unit_of("elapsed_s") == "s"
    assert unit_of("uncompressed_bytes") == "B" and unit_of("compressed_mib") == "MiB"


def test_module_and_tool_parse():
    failed, result = run_module(xz_parse, {"src": fixture_path("xz", "xz-T2-vv-64mib.txt"), "keep_raw": False})
    assert not failed and result["ansible_facts"]["xz"]["metrics"]["threads"] == 2
    failed, result = run_module(xz_parse, {"src": fixture_path("xz", "xz-missing.txt")})
    assert failed and "No such file" in result["msg"]
    import tool_parse
    failed, result = run_module(tool_parse, {"tool": "xz", "content": read_fixture("xz", "xz-d-vv.txt")})
    assert not failed and result["metrics"]["throughput_mib_s"] == 7.4
