"""IOzone parser and iozone_parse module, on real IOzone 3.489 captures (tests/fixtures/iozone)."""
import iozone_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError, unit_of
from ansible.module_utils.testbed_parse_iozone import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name):
    return parse(read_fixture("iozone", name), source=name)


def test_one_row_write_read():
    result = _parse("write_read_16m_4k.txt")
    assert result["metrics"] == {"write_kib_s": 144572, "rewrite_kib_s": 61934, "read_kib_s": 252585,
                                 "reread_kib_s": 550836}
    assert unit_of("write_kib_s") == "KiB/s"
    assert result["details"]["version"] == "3.489" and result["details"]["o_direct"] is False
    assert result["details"]["rows"] == [{"file_kib": 16384, "record_kib": 4, "values": {
        "write": 144572, "rewrite": 61934, "read": 252585, "reread": 550836}}]
    assert result["valid"] is True


def test_o_direct_is_recorded():
    assert _parse("write_read_16m_4k_direct.txt")["details"]["o_direct"] is True


def test_blank_columns_keep_their_place():
    # -i 0 -i 2: read and reread are blank, the random columns follow them
    result = _parse("write_random_8m_4k_ops.txt")
    assert result["metrics"] == {"write_ops_per_s": 157915, "rewrite_ops_per_s": 492321,
                                 "random_read_ops_per_s": 216078, "random_write_ops_per_s": 183515}
    assert unit_of("random_read_ops_per_s") == "1/s"


def test_several_rows_are_named_by_file_and_record_size():
    m = _parse("write_read_random_8m_4k_64k.txt")["metrics"]
    assert m["f8192k_r4k_random_write_kib_s"] == 584898
    assert m["f8192k_r64k_read_kib_s"] == 3491912
    assert len(m) == 12


def test_throughput_mode():
    result = _parse("throughput_t2_write_read.txt")
    m = result["metrics"]
    assert (m["write_children_kib_s"], m["write_parent_kib_s"]) == (938120.88, 464441.93)
    assert (m["reread_min_process_kib_s"], m["reread_max_process_kib_s"]) == (144601.39, 319014.72)
    assert result["details"]["processes"] == 2
    names = {k.split("_children")[0] for k in _parse("throughput_t1_all_tests.txt")["metrics"] if "_children" in k}
    assert names == {"write", "rewrite", "read", "reread", "bkwd_read", "stride_read", "random_read", "mixed",
                     "random_write", "pwrite", "pread"}
    assert "fread_children_kib_s" in _parse("throughput_t1_fwrite_fread.txt")["metrics"]


def test_cannot_open_names_iozones_message():
    with pytest.raises(ParseError, match="IOzone stopped before the end: Can not open temp file: /nonexistent/dir/f"):
        _parse("cannot_open_file.txt")


def test_truncated_and_foreign_and_shifted_columns():
    text = read_fixture("iozone", "write_read_16m_4k.txt")
    with pytest.raises(ParseError, match="no 'iozone test complete.' line"):
        parse(text.replace("iozone test complete.", ""), "cut")
    with pytest.raises(ParseError, match="not an IOzone report"):
        parse("hello\n", "other")
    shifted = text.replace("   144572    61934", "  144572     61934")
    with pytest.raises(ParseError, match="not at a test column's end"):
        parse(shifted, "shifted")


def test_module():
    failed, result = run_module(iozone_parse, {"src": fixture_path("iozone", "write_read_16m_4k.txt"), "keep_raw": False})
    assert not failed and result["ansible_facts"]["iozone"]["metrics"]["read_kib_s"] == 252585
