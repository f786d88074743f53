"""lftp parser and lftp_parse module, on real lftp 4.9.2 captures against vsftpd on loopback (tests/fixtures/lftp)."""
import lftp_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError, unit_of
from ansible.module_utils.testbed_parse_lftp import parse
from conftest import fixture_path, read_fixture
from helpers import run_module

MIB = 1024 * 1024
NO_FIRST_BYTE = ("first_byte_s is null: lftp prints no time to the first byte (its log timestamps have 1 s "
                 "resolution); measure it with curl -w '%{time_starttransfer}'")


def _parse(name):
    return parse(read_fixture("lftp", name), source=name)


def test_get_and_put_split_by_direction():
    result = _parse("lftp-get-put-50m.txt")
    m = result["metrics"]
    assert (m["direction"], m["transfers"], m["transferred_bytes"]) == ("mixed", 2, 2 * 52428800)
    assert m["get_bytes"] == m["put_bytes"] == 52428800
    assert m["get_rate_mib_s"] == pytest.approx(190.38)
    assert m["put_rate_mib_s"] == pytest.approx(439.30)
    assert m["get_transfer_s"] == pytest.approx(50 / 190.38)
    assert m["transfer_s"] == pytest.approx(50 / 190.38 + 50 / 439.30)
    assert m["rate_mib_s"] == pytest.approx(100 / (50 / 190.38 + 50 / 439.30))
    assert m["first_byte_s"] is None
    assert result["valid"] is True and result["warnings"] == [NO_FIRST_BYTE]
    first = result["details"]["transfers"][0]
    assert first["src"] == "ftp://anonymous@127.0.0.1:2121/data-50m.bin" and first["dst"] == "/tmp/ccp/ftp/got.bin"
    assert first["logged_at"] == "2026-11-23 14:51:46"
    assert [s["seconds_rounded"] for s in result["details"]["summaries"]] == [None, None]


def test_get_longer_than_a_second_has_both_lines():
    result = _parse("lftp-get-50m-limit-rate.txt")
    m = result["metrics"]
    assert (m["direction"], m["transferred_bytes"], m["rate_mib_s"]) == ("get", 52428800, pytest.approx(33.03))
    assert m["put_bytes"] is None and m["put_rate_mib_s"] is None
    assert result["details"]["summaries"] == [{"bytes": 52428800, "seconds_rounded": 2,
                                               "rate_bytes_per_s": pytest.approx(33.03 * MIB)}]


def test_summary_only_gives_time_from_one_second_on():
    result = parse("52428800 bytes transferred in 2 seconds (33.03 MiB/s)\n")
    m = result["metrics"]
    assert m["direction"] is None and m["rate_mib_s"] == pytest.approx(33.03)
    assert result["valid"] is True and "no transfer-log line" in result["warnings"][0]
    short = parse("52428800 bytes transferred\n")
    assert short["metrics"]["transfer_s"] is None and short["valid"] is False


def test_resumed_transfer_counts_the_range_only():
    result = parse("/tmp/a -> ftp://u@127.0.0.1/a 1000-5000 2.0 KiB/s\n")
    assert (result["metrics"]["direction"], result["metrics"]["transferred_bytes"]) == ("put", 4000)
    assert result["metrics"]["transfer_s"] == pytest.approx(4000 / 2048.0)
    assert any("resumed at byte 1000" in w for w in result["warnings"])


def test_error_after_a_transfer_is_invalid():
    text = read_fixture("lftp", "lftp-get-50m-limit-rate.txt") + read_fixture("lftp", "lftp-get-missing.txt")
    result = parse(text)
    assert result["valid"] is False and "550 Failed to open file" in result["reasons"][0]


@pytest.mark.parametrize("name, match", [
    ("lftp-get-missing.txt", "550 Failed to open file"),
    ("lftp-get-refused.txt", r"max-retries exceeded \(Connection refused\)"),
])
def test_failed_transfers_raise_with_lftp_message(name, match):
    with pytest.raises(ParseError, match=match):
        _parse(name)


@pytest.mark.parametrize("text, match", [
    ("", "empty"),
    ("\n\n", "empty"),
    ("2026-11-23 14:51:46 ftp://a@127.0.0.1/x -> /tmp/x 0-", "no transfer-log line"),
    ("some other tool\n", "no transfer-log line"),
    ("Usage: lftp [OPTS] <site>\n", "usage"),
    ("ftp://h/x -> /tmp/x 0-10 nan MiB/s\n", "nan"),
])
def test_bad_outputs_raise(text, match):
    with pytest.raises(ParseError, match=match):
        parse(text)


def test_metric_units():
    assert unit_of("get_rate_mib_s") == "MiB/s" and unit_of("transfer_s") == "s" and unit_of("first_byte_s") == "s"
    assert unit_of("put_bytes") == "B" and unit_of("transferred_bytes") == "B"


def test_module_and_tool_parse():
    failed, result = run_module(lftp_parse, {"src": fixture_path("lftp", "lftp-get-put-50m.txt")})
    assert not failed and result["ansible_facts"]["lftp"]["metrics"]["direction"] == "mixed"
    failed, result = run_module(lftp_parse, {"src": fixture_path("lftp", "lftp-get-refused.txt")})
    assert failed and "Connection refused" in result["msg"]
    import tool_parse
    failed, result = run_module(tool_parse, {"tool": "lftp", "content": read_fixture("lftp", "lftp-get-50m-limit-rate.txt")})
    assert not failed and result["metrics"]["direction"] == "get"


@pytest.mark.parametrize("rate, bytes_per_s", [
    ("55.59M/s", 55.59 * 1048576),     # Speedometer::GetStr of older lftp
    ("512.3K/s", 512.3 * 1024),
    ("900b/s", 900.0),
    ("512.0K/s", 512.0 * 1024),
    ("1.25G/s", 1.25 * 1024 ** 3),     # no lftp source read prints G/s; read as 1024**3 all the same
    ("1.1e+06 bytes/s", 1.1e6),        # lftp 2.x: %g bytes/s
    ("55.59 MiB/s", 55.59 * 1048576),  # lftp 4.x (captured fixtures), for comparison
])
def test_summary_rates_of_every_lftp_generation(rate, bytes_per_s):
    """Built from the formats of CopyJob::FormatBytesTimeRate / CopyJobEnv::SayFinal at those versions."""
    result = parse("104857600 bytes transferred in 2 seconds (%s)\n" % rate, "summary")
    entry = result["details"]["summaries"][0]
    assert entry["bytes"] == 104857600 and entry["rate_bytes_per_s"] == pytest.approx(bytes_per_s)
    assert result["metrics"]["transfer_s"] == pytest.approx(104857600 / bytes_per_s)


def test_an_mget_summary_counts_its_files():
    text = ("4194304 bytes transferred in 1 second (4.00M/s)\nTotal 4 files transferred\n")
    result = parse(text, "mget")
    assert result["details"]["files_total"] == 4 and result["metrics"]["transferred_bytes"] == 4194304
    assert result["metrics"]["files_transferred"] == 4 and result["metrics"]["transfer_s"] == pytest.approx(1.0)
    assert result["valid"] is True


def test_the_brief_older_lftp_line_is_read_not_refused():
    """The line of issue #26 item 4: refused before with 'no ... bytes transferred line'."""
    result = parse("1048576 bytes transferred in 2 seconds (512.0K/s)\n", "old")
    m = result["metrics"]
    assert (m["transferred_bytes"], m["transfer_s"], m["rate_mib_s"]) == (1048576, pytest.approx(2.0), 0.5)
    assert m["files_transferred"] == 1 and result["valid"] is True


def test_an_mget_of_empty_files_prints_only_the_total():
    """CopyJobEnv::SayFinal prints no bytes line when 0 bytes moved, only 'Total N files transferred'."""
    result = parse("Total 4 files transferred\n", "mget-empty")
    m = result["metrics"]
    assert (m["files_transferred"], m["transfers"], m["transferred_bytes"], m["transfer_s"]) == (4, 0, 0, None)
    assert result["valid"] is False and "Total 4 files transferred" in result["reasons"][0]


def test_files_transferred_of_single_gets_counts_their_lines():
    assert _parse("lftp-get-put-50m.txt")["metrics"]["files_transferred"] == 2
    assert parse("52428800 bytes transferred in 2 seconds (33.03 MiB/s)\n")["metrics"]["files_transferred"] == 1
