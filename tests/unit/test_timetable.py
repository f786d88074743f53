"""module_utils/testbed_timetable: loads on the IPVS estimator's tick (values from the lab's benchmark)."""

import pytest
from ansible.module_utils.testbed_timetable import (
    TimetableError,
    boundary_problems,
    estimate_period,
    next_start,
    next_tick,
)


def test_period_from_two_ticks_of_an_emulated_guest():
    # 2026-11-26 lab: ticks observed 40.26 s and then 21 periods (42.39 s) apart
    assert estimate_period(120.82, 120.82 + 40.26) == pytest.approx(2.013)
    assert estimate_period(120.82, 163.21) == pytest.approx(42.39 / 21)


def test_too_few_periods_keep_the_nominal_one():
    assert estimate_period(10.0, 17.9) == 2.0          # 4 periods
    assert estimate_period(10.0, 17.9, min_periods=4) == pytest.approx(7.9 / 4)


@pytest.mark.parametrize("first, last, nominal", [(5.0, 5.0, 2.0), (6.0, 5.0, 2.0), (0.0, 10.0, 0.0)])
def test_period_refuses_unusable_ticks(first, last, nominal):
    with pytest.raises(TimetableError):
        estimate_period(first, last, nominal=nominal)


def test_next_tick_is_strictly_after():
    assert next_tick(100.0, 2.0, 100.0) == 102.0
    assert next_tick(100.0, 2.0, 101.99) == 102.0
    assert next_tick(100.0, 2.0, 139.2) == 140.0
    assert next_tick(100.0, 2.0, 99.0) == 100.0         # before the reference tick: the reference itself
    assert next_tick(100.0, 2.0175, 139.5) == pytest.approx(140.35)
    with pytest.raises(TimetableError):
        next_tick(0.0, 0.0, 1.0)


def test_a_39_s_load_leaves_one_period_minus_the_load_and_margin():
    # Load started 0.5 s after the tick at 100: expected end 139.5, read after the tick at 140.
    tick, start = next_start(100.0, 2.0, 139.5, tolerance=0.2, margin=0.5)
    assert (tick, start) == (140.0, 140.5)
    # 40 s: the end falls past the 20th period; the next start one period later.
    tick, start = next_start(100.0, 2.0, 140.5, tolerance=0.2, margin=0.5)
    assert (tick, start) == (142.0, 142.5)


@pytest.mark.parametrize("tolerance, margin", [(-0.1, 0.5), (0.2, -0.5), (0.2, 2.0)])
def test_next_start_refuses_a_margin_that_cannot_work(tolerance, margin):
    with pytest.raises(TimetableError):
        next_start(100.0, 2.0, 139.5, tolerance=tolerance, margin=margin)


def test_exact_boundary():
    # load 3 of the benchmark: end 160.349, tick 160.770, next start 161.240, zeroed 160.991
    assert boundary_problems(160.349, 160.770, 161.240, 160.991, 2.0176) == []
    # read and zeroed after the next load had started, before the following tick: still exact
    assert boundary_problems(39.0, 39.82, 40.0, 40.10, 2.0) == []


def test_overrun_early_start_and_late_zero_are_named():
    overran = boundary_problems(41.0, 40.26, 40.45, 40.6, 2.0)
    assert len(overran) == 1 and "ended 0.74 s after the tick" in overran[0]
    early = boundary_problems(39.55, 40.26, 40.0, 40.63, 2.0)
    assert len(early) == 1 and "next load started 0.26 s before the tick" in early[0]
    late = boundary_problems(39.0, 39.8, 40.3, 41.9, 2.0)
    assert len(late) == 1 and "zeroed 0.10 s after the following tick" in late[0]
    assert "no estimator tick" in boundary_problems(39.0, None, 40.3, 40.0, 2.0)[0]
    assert boundary_problems(39.0, 39.8, None, None, 2.0) == []   # the last load
