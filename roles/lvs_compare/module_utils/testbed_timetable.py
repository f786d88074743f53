# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Loads scheduled on a counter that is only summed on a periodic tick.

The director's IPVS counters (kernels up to 6.1) are summed from per-CPU
counters on the rate estimator's tick, nominally every 2 s: ``ipvsadm -Ln
--stats`` shows the last tick's snapshot minus the one ``ipvsadm -Z`` kept. So
one load's counts are exact when a tick falls after its end and before the
next load's start, and the read and the zeroing happen after that tick and
before the following one. A timetable starts each load a margin after a
predicted tick; an emulated guest's tick is not exactly periodic, so its
period is estimated from the ticks observed.

All times are seconds on one time line (the controller's). Pure functions;
``roles/lvs_compare/scripts/lvs-timetable-bench.py`` uses them and tests/unit covers them.
"""

from __future__ import absolute_import, division, print_function

import math

NOMINAL_PERIOD = 2.0


class TimetableError(ValueError):
    """Unusable input (one sentence why)."""


def estimate_period(first, last, nominal=NOMINAL_PERIOD, min_periods=5):
    """The tick's period from two observed ticks ``first`` < ``last``.

    The number of periods between them is the nearest whole number of nominal
    periods; fewer than ``min_periods`` say too little (``nominal`` is returned).
    """
    if nominal <= 0:
        raise TimetableError("the nominal period must be positive, got %r" % (nominal,))
    if last <= first:
        raise TimetableError("the last tick (%r) must come after the first (%r)" % (last, first))
    periods = int(round((last - first) / nominal))
    if periods < min_periods:
        return nominal
    return (last - first) / periods


def next_tick(ref, period, after):
    """The first predicted tick strictly after ``after``, ticks at ``ref`` + k x ``period``."""
    if period <= 0:
        raise TimetableError("the period must be positive, got %r" % (period,))
    k = math.floor((after - ref) / period) + 1
    return ref + k * period


def next_start(ref, period, expected_end, tolerance, margin):
    """When the next load starts: ``margin`` after the first tick past ``expected_end`` + ``tolerance``.

    Returns ``(tick, start)``: the tick the previous load's counts are read
    after, and the next load's start.
    """
    if tolerance < 0 or margin < 0:
        raise TimetableError("tolerance and margin must not be negative, got %r and %r" % (tolerance, margin))
    if margin >= period:
        raise TimetableError("a margin of %r s is not shorter than the period (%r s): the next load would start "
                             "after the following tick" % (margin, period))
    tick = next_tick(ref, period, expected_end + tolerance)
    return tick, tick + margin


def boundary_problems(load_end, tick, next_load_start, zeroed_at, period):
    """What makes the counts of the load ending at ``load_end`` inexact ([] when none).

    ``tick``: the tick the counts were read after (None when none was seen);
    ``next_load_start``: when the next load started (None when it is the last);
    ``zeroed_at``: when the counters were zeroed.
    """
    if tick is None:
        return ["no estimator tick was seen before the read, so the counts may miss the load's last connections"]
    problems = []
    if load_end > tick:
        problems.append("the load ended %.2f s after the tick its counts were read after (it overran its slot): "
                        "its last connections are counted in the next load" % (load_end - tick))
    if next_load_start is not None and next_load_start <= tick:
        problems.append("the next load started %.2f s before the tick the counts were read after: its first "
                        "connections are counted in this load" % (tick - next_load_start))
    if zeroed_at is not None and zeroed_at >= tick + period:
        problems.append("the counters were zeroed %.2f s after the following tick: the next load's counts lose "
                        "what that tick summed" % (zeroed_at - tick - period))
    return problems
