"""The clock_offset action's pure part (action_plugins/clock_offset.py)."""
import clock_offset as co
import pytest


def test_parse_epoch_takes_the_last_line():
    assert co.parse_epoch("motd noise\n1795281210.219000123\n", "lvs-director") == pytest.approx(1795281210.219)


@pytest.mark.parametrize("text,match", [
    ("", "lvs-director printed nothing"),
    ("date: invalid date\n", "printed 'date: invalid date'.*not epoch seconds"),
    ("1795281210.%N\n", "not epoch seconds"),
    ("1795281210\n", "no sub-second part"),
])
def test_parse_epoch_names_host_and_output(text, match):
    with pytest.raises(co.ClockError, match=match):
        co.parse_epoch(text, "lvs-director")


def test_estimate_offset_keeps_the_shortest_round_trip():
    samples = [(100.0, 100.9, 101.0),    # 1 s round trip: midpoint 100.5 -> +0.4
               (200.0, 200.75, 200.1),   # 0.1 s: midpoint 200.05 -> +0.7
               (300.0, 300.8, 300.4)]
    assert co.estimate_offset(samples) == {"offset_s": 0.7, "uncertainty_s": 0.05, "rtt_s": 0.1, "samples": 3}


def test_estimate_offset_behind_and_bad_samples():
    result = co.estimate_offset([(10.0, 8.02, 10.04), (20.0, 0.0, 19.0)])
    assert result["offset_s"] == pytest.approx(-2.0) and result["samples"] == 1
    with pytest.raises(co.ClockError, match="no usable sample"):
        co.estimate_offset([(20.0, 0.0, 19.0)])
