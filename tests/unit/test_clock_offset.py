"""The clock_offset action (action_plugins/clock_offset.py): its pure part and its run() with a fake connection."""
import time
import types

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


def _action(monkeypatch, outputs, args=None):
    """The action with its connection replaced by canned `date` results (a callable is called at each command)."""
    monkeypatch.setattr(co.ActionBase, "run", lambda self, tmp=None, task_vars=None: {})
    action = co.ActionModule.__new__(co.ActionModule)
    action._task = types.SimpleNamespace(args=args or {})
    replies = iter(outputs)

    def execute(cmd, sudoable=False):
        reply = next(replies)
        return reply() if callable(reply) else reply
    action._low_level_execute_command = execute
    return action


def test_action_measures(monkeypatch):
    # The remote clock runs 5 s ahead: its reply is made when the command runs, so the offset holds
    # however long the test takes to get there.
    def remote_date():
        return {"rc": 0, "stdout": "%.6f\n" % (time.time() + 5.0)}
    action = _action(monkeypatch, [remote_date] * 3, {"rounds": 3})
    result = action.run(task_vars={"inventory_hostname": "lvs-director"})
    assert result["samples"] == 3 and not result.get("failed")
    assert result["offset_s"] == pytest.approx(5.0, abs=0.5)


def test_action_returns_failures_instead_of_raising(monkeypatch):
    # A stopped container: the sweep's failed_when: false must be able to keep the host.
    gone = {"rc": 1, "stdout": "", "stderr": "Error response from daemon: Container abc is not running"}
    result = _action(monkeypatch, [gone]).run(task_vars={"inventory_hostname": "lvs-web2"})
    assert result["failed"] is True and "on lvs-web2 exited 1: Error response from daemon" in result["msg"]
    result = _action(monkeypatch, [{"rc": 0, "stdout": "1795281210\n"}]).run(task_vars={"inventory_hostname": "h"})
    assert result["failed"] is True and "no sub-second part" in result["msg"]
    assert _action(monkeypatch, [], {"rounds": 0}).run(task_vars={})["msg"].endswith("between 1 and 50, got 0")
    assert "must be an integer" in _action(monkeypatch, [], {"rounds": "many"}).run(task_vars={})["msg"]
