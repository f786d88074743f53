# -*- coding: utf-8 -*-
"""Action plugin: how far a host's clock is from the controller's.

The sweep compares times taken on different machines: httperf's start and end
on the clients, CPU samples on every host, the moment the director zeroed its
counters. Machines (and a qemu guest, whose clock starts from a 1 s RTC) are
not in step, so the controller measures each host's offset once, the way NTP
does: it reads its own clock, runs ``date +%s.%N`` on the host over the
play's connection, reads its clock again, and keeps the round with the
shortest round trip. offset = remote - midpoint; the error is at most half
that round trip.

The pure functions (parse_epoch, estimate_offset) are unit-tested; the plugin
only runs the command. Documentation: library/clock_offset.py.
"""
from __future__ import annotations

import time

from ansible.plugins.action import ActionBase

COMMAND = "LC_ALL=C date +%s.%N"


class ClockError(ValueError):
    """A clock reading that cannot be used; the message names host and output."""


def parse_epoch(text, host="host"):
    """The epoch seconds printed by ``date +%s.%N`` (the last non-empty line)."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not lines:
        raise ClockError("clock_offset: %s printed nothing for `%s`" % (host, COMMAND))
    value = lines[-1]
    try:
        seconds = float(value)
    except ValueError:
        raise ClockError("clock_offset: %s printed %r for `%s`, not epoch seconds "
                         "(is its date GNU date, with %%N?)" % (host, value[:80], COMMAND)) from None
    if "." not in value or seconds <= 0:
        raise ClockError("clock_offset: %s printed %r for `%s`: no sub-second part (date without %%N), "
                         "too coarse to align load windows" % (host, value[:80], COMMAND))
    return seconds


def estimate_offset(samples):
    """Offset of a remote clock from samples [(local_before, remote, local_after)].

    Keeps the sample with the shortest round trip (the least queueing):
    offset_s = remote - (before + after) / 2, uncertainty_s = (after - before) / 2.
    Returns {offset_s, uncertainty_s, rtt_s, samples}.
    """
    good = [(b, r, a) for b, r, a in samples if a >= b]
    if not good:
        raise ClockError("clock_offset: no usable sample (the controller's clock went backwards in every round)")
    before, remote, after = min(good, key=lambda s: s[2] - s[0])
    return {
        "offset_s": round(remote - (before + after) / 2.0, 4),
        "uncertainty_s": round((after - before) / 2.0, 4),
        "rtt_s": round(after - before, 4),
        "samples": len(good),
    }


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("rounds",))

    def run(self, tmp=None, task_vars=None):
        # Failures are returned, not raised, so that failed_when / ignore_errors apply
        # (a sweep keeps a dead host's last offset and goes on).
        result = super().run(tmp, task_vars)
        result["changed"] = False
        rounds = self._task.args.get("rounds", 5)
        try:
            rounds = int(rounds)
        except (TypeError, ValueError):
            return dict(result, failed=True, msg="clock_offset: rounds must be an integer, got %r" % (rounds,))
        if not 1 <= rounds <= 50:
            return dict(result, failed=True, msg="clock_offset: rounds must be between 1 and 50, got %d" % rounds)
        host = (task_vars or {}).get("inventory_hostname", "host")
        samples = []
        for _round in range(rounds):
            before = time.time()
            out = self._low_level_execute_command(COMMAND, sudoable=False)
            after = time.time()
            if out.get("rc") != 0:
                return dict(result, failed=True, rc=out.get("rc"),
                            msg="clock_offset: `%s` on %s exited %s: %s"
                            % (COMMAND, host, out.get("rc"), (out.get("stderr") or out.get("stdout") or "").strip()[:200]))
            try:
                samples.append((before, parse_epoch(out.get("stdout"), host), after))
            except ClockError as exc:
                return dict(result, failed=True, msg=str(exc))
        result.update(estimate_offset(samples))
        return result
