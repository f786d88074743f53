"""The LVS hooks' control flow as one pure step function (roles/lvs_compare/module_utils/testbed_lvs_step.py).

A small driver sends the events in the order the hooks send them (tasks/point.yml,
segment.yml, store.yml, finish.yml, health.yml, recover.yml) and records the actions;
the sequences are those of the timetable: two segments x three points, an unclean
boundary, a late switch, a lab fault with a point in flight, a second pass without it.
"""
import pytest
from ansible.module_utils.testbed_lvs_step import (
    StepError,
    in_flight,
    initial,
    launched_ahead,
    planned_start,
    start_at,
    step,
    tick_model,
)

TIMING = {"timetable": True, "margin": 0.5, "switch_margin": 0.8, "tolerance": 0.1, "read_dir": "/var/lib/testbed/lvs-compare"}
OK = {"retry": False, "retry_reasons": [], "retry_next": []}


def _point(variant, rate, index):
    return {"point_id": f"{variant}__rate-{rate}__rep1", "variant": variant, "label": f"[{index}] {variant} @ {rate}",
            "parameters": {"rate": rate, "num_conns": rate * 20}, "repetition": 1}


def _segments(*variants, rates=(50, 100, 150)):
    n = 0
    out = []
    for variant in variants:
        points = []
        for rate in rates:
            n += 1
            points.append(_point(variant, rate, n))
        out.append({"variant": variant, "points": points})
    return out


class Driver:
    """Plays the hooks against step(): what each task would do, and a clock that the loads advance."""

    def __init__(self, timing=None, results=None, now=1000.0):
        self.state = step(None, "reset")
        self.timing = dict(TIMING, **(timing or {}))
        self.now = now
        self.results = results or {}          # point_id -> lvs_point answer (default OK)
        self.log = []                         # (point_id, action)
        self.stored = []                      # point ids handed to the sweep
        self.launched = []                    # point ids launched (start_at)
        self.director_tick = 999.9            # the director's real tick phase (period 2 s)

    def _director_says(self, after):
        """lvs-director-stats --after: the first tick after ``after``."""
        k = int((after - self.director_tick) // 2.0) + 1
        return f"=== tick-at\n{self.director_tick + 2.0 * k:.3f}\n=== ipvsadm-stats\n"

    def _collect(self):
        if "collect" in self.state["do"]:
            prev = self.state["prev"]
            self.log.append((prev["point"]["point_id"], "collect"))
            table = f"-A -t vip:80 -s {prev['switch_to']}" if prev.get("switch_to") else None
            collected = {"collected": True, "collect": {}, "director_counters": "", "switch_table": table}
            self.state = step(self.state, "collected", collected=collected,
                              director_stdout=self._director_says(prev["end"]), offset={})
            assert "collect" not in self.state["do"]

    def _store(self):
        prev = self.state["prev"]
        result = self.results.get(prev["point"]["point_id"], OK)
        self.state = step(self.state, "stored", result=result)
        if "hand" in self.state["do"]:
            self.stored.append(prev["point"]["point_id"])
        self.log.append((prev["point"]["point_id"], "hand" if "hand" in self.state["do"] else "dropped"))
        if self.fault_at_store == prev["point"]["point_id"]:
            self.in_flight_at_fault = [p["point"]["point_id"] for p in in_flight(self.state)]
            self.state = step(self.state, "reset")
            self.fault_at_store = None
        self.state = step(self.state, "handed")

    fault_at_store = None
    in_flight_at_fault = None

    def point(self, point, next_point, next_segment):
        pid = point["point_id"]
        self.state = step(self.state, "begin", point=point, next_point=next_point, now=self.now, **self.timing)
        do = list(self.state["do"])
        self.log.append((pid, "begin:" + ",".join(do)))
        if "wait" in do:
            self.now += self.state["wait_s"]
        self._collect()
        if "launch" in self.state["do"]:
            self.launched.append((pid, self.state["current"]["start_at"]))
        if "store" in self.state["do"]:
            self._store()
        director = ""
        if "see_tick" in self.state["do"]:
            director = self._director_says(self.state["tick_after"])
        self.state = step(self.state, "ticked", next_point=next_point,
                          next_variant=next_segment["variant"] if next_segment else None,
                          director_stdout=director, offset={}, **self.timing)
        self.log.append((pid, "ticked:" + ",".join(self.state["do"])))
        if "launch_next" in self.state["do"]:
            self.launched.append((next_point["point_id"], self.state["next"]["start_at"]))
        if "wait_load" in self.state["do"]:
            current = self.state["current"]
            end = float(current["start_at"]) + current["point"]["parameters"]["num_conns"] / current["point"]["parameters"]["rate"]
            self.now = max(self.now, end + 0.2)
            self.state = step(self.state, "ended", clients=[{"host": "c1"}], window=[current["start_at"], end])
            self._collect()

    def segment(self, segment):
        ahead = launched_ahead(self.state, segment["points"][0]["point_id"])
        self.state = step(self.state, "settle", ahead=ahead)
        self._collect()
        if not ahead:
            self.log.append((segment["variant"], "switch"))
            self.state = step(self.state, "switched", table=f"-A -t vip:80 -s {segment['variant']}")

    def finish(self):
        if self.state["prev"] is not None:
            self.state = step(self.state, "settle")
            self._collect()
            self._store()

    def run_pass(self, segments, pending=None):
        plan = [(s, p) for s in segments for p in s["points"] if pending is None or p["point_id"] in pending]
        order = [p for _, p in plan]
        for index, (segment, point) in enumerate(plan):
            first_of_segment = index == 0 or plan[index - 1][0] is not segment
            if first_of_segment:
                self.segment(segment)
            nxt = order[index + 1] if index + 1 < len(order) else None
            next_segment = plan[index + 1][0] if nxt is not None and plan[index + 1][0] is not segment else None
            self.point(point, nxt, next_segment)
        self.finish()


def test_two_segments_of_three_points_run_back_to_back_on_the_timetable():
    segments = _segments("rr", "wrr")
    run = Driver()
    run.run_pass(segments)
    ids = [p["point_id"] for s in segments for p in s["points"]]
    assert run.stored == ids                                   # every point stored once, in order
    # only the first point is launched on its own; every other one during the load before it
    assert [pid for pid, _ in run.launched] == ids
    assert [a for p, a in run.log if p == ids[0]][0] == "begin:launch,see_tick"
    for pid in ids[1:]:
        begin = [a for p, a in run.log if p == pid and a.startswith("begin:")][0]
        assert "wait" in begin and "launch" not in begin.split(":")[1].split(","), (pid, begin)
    # the director switched once by itself (first segment), the second switch was made by the read
    assert [a for p, a in run.log if a == "switch"] == ["switch"]
    last_of_rr = [s for s in run.log if s[0] == ids[2] and s[1].startswith("ticked:")][0][1]
    assert "launch_next" in last_of_rr and "read" in last_of_rr
    # starts on the tick model: 0.5 s after a tick, 0.8 s at the switch (director tick phase 999.9 + 2k)
    starts = dict(run.launched)
    assert round((starts[ids[1]] - 999.9) % 2.0, 3) == 0.5
    assert round((starts[ids[3]] - 999.9) % 2.0, 3) == 0.8
    # the pass's last load measures the clock offsets again and is collected at once
    assert "clock" in [s for s in run.log if s[0] == ids[-1] and s[1].startswith("ticked:")][0][1]
    assert run.state["prev"] is None and run.state["current"] is None and run.state["next"] is None
    # the table of the point measured after the switching read is the new scheduler's
    assert run.state["table"].endswith("-s wrr")


def test_an_unclean_boundary_drops_both_points_and_the_next_pass_measures_them_again():
    segments = _segments("rr", "wrr")
    ids = [p["point_id"] for s in segments for p in s["points"]]
    retry = {"retry": True, "retry_reasons": ["the load ended 0.30 s after the tick"], "retry_next": []}
    run = Driver(results={ids[1]: retry})
    run.run_pass(segments)
    assert ids[1] not in run.stored and ids[2] not in run.stored
    assert run.stored == [ids[0]] + ids[3:]
    said = [s for s in run.log if s == (ids[2], "dropped")]
    assert said, run.log
    # the second pass, off the timetable, measures them point after point
    again = Driver(timing={"timetable": False}, now=run.now)
    again.run_pass(segments, pending={ids[1], ids[2]})
    assert again.stored == [ids[1], ids[2]]
    assert not any("launch_next" in a or "see_tick" in a or "read" in a.split(":")[-1].split(",") for _, a in again.log)
    # each point launched on its own and collected at once after its load
    assert [pid for pid, _ in again.launched] == [ids[1], ids[2]]
    assert sum(1 for _, a in again.log if a == "collect") == 2


def test_a_late_switch_measures_only_the_next_point_again():
    segments = _segments("rr", "wrr")
    ids = [p["point_id"] for s in segments for p in s["points"]]
    late = dict(OK, retry_next=["the director switched to wrr 0.30 s after the next load started"])
    run = Driver(results={ids[2]: late})
    run.run_pass(segments)
    assert ids[2] in run.stored and ids[3] not in run.stored          # read before the switch: stored
    assert run.stored == ids[:3] + ids[4:]


def test_the_sentences_say_why_a_point_is_measured_again():
    state = initial()
    state["prev"] = {"point": _point("rr", 50, 1), "collected": True}
    state["current"] = {"point": _point("rr", 100, 2), "start_at": 1.0}
    out = step(state, "stored", result={"retry": True, "retry_reasons": ["overran"], "retry_next": []})
    assert out["say"] == ["Timetable: [1] rr @ 50 not stored (overran) and neither will [2] rr @ 100: measured again "
                          "in the next pass."]
    assert out["current"]["drop"] is True and "hand" not in out["do"]
    assert state["current"].get("drop") is None                          # the input is not changed
    with pytest.raises(StepError, match="no point waiting"):
        step(initial(), "stored", result=OK)


def test_a_fault_with_a_point_in_flight_resets_the_timetable():
    segments = _segments("rr", "wrr")
    ids = [p["point_id"] for s in segments for p in s["points"]]
    suspect = dict(OK)
    run = Driver(results={ids[1]: suspect})
    run.fault_at_store = ids[1]
    run.run_pass(segments)
    # when the sweep found the fault storing ids[1], ids[2]'s load was running: both were in flight
    assert run.in_flight_at_fault == [ids[1], ids[2]]
    # after the reset nothing more of that point was done: not read, not awaited, not kept
    after = run.log[run.log.index((ids[1], "hand")) + 1:]
    assert after[0] == (ids[2], "ticked:")
    # ids[3] follows on a fresh timetable: launched on its own (nothing was launched ahead)
    begin = [a for p, a in run.log if p == ids[3] and a.startswith("begin:")][0]
    assert "launch" in begin and "wait" not in begin
    assert ids[2] not in run.stored and run.stored[-3:] == ids[3:]


def test_a_probe_during_a_load_drops_it_and_the_timetable_off_the_first_pass():
    state = step(initial(), "begin", point=_point("rr", 50, 1), next_point=None, now=1000.0, **TIMING)
    probed = step(state, "probed")
    assert probed["current"]["drop"] is True and "probe" in probed["current"]["drop_reason"]
    assert step(probed, "probed")["current"]["drop_reason"] == probed["current"]["drop_reason"]
    off = step(initial(), "begin", point=_point("rr", 50, 1), next_point=_point("rr", 100, 2), now=1000.0,
               **dict(TIMING, timetable="False"))
    assert off["do"] == ["launch"] and off["current"]["start_at"] == 1001.2


def test_events_refuse_what_they_cannot_take():
    with pytest.raises(StepError, match="unknown event 'later'"):
        step(initial(), "later")
    with pytest.raises(StepError, match="must be a mapping"):
        step("x", "reset")
    with pytest.raises(StepError, match="event 'begin'"):
        step(initial(), "begin")
    with pytest.raises(StepError, match="no usable rate"):
        step(initial(), "begin", point={"point_id": "p", "parameters": {}}, now=1.0, **TIMING)
    state = step(initial(), "begin", point=_point("rr", 50, 1), next_point=_point("wrr", 50, 2), now=1000.0, **TIMING)
    with pytest.raises(StepError, match="scheduler name"):
        step(state, "ticked", next_point=_point("x", 50, 2), next_variant="rr; reboot",
             director_stdout="=== tick-at\n1000.0\n", **TIMING)


def test_tick_model_learns_the_period_from_the_ticks_it_sees():
    first = tick_model(None, "=== settled\ntick 0.62\n=== tick-at\n1000.500\n=== ipvsadm-stats\n", {"offset_s": 0.5})
    assert first == {"ref": 1000.0, "period": 2.0}
    later = tick_model(first, "=== tick-at\n1040.853\n", {"offset_s": 0.5})   # 20 periods of 2.01765 s
    assert later == {"ref": 1040.353, "period": pytest.approx(2.01765)}
    assert tick_model(later, "=== settled\nperiod 2.1\n=== ipvsadm-stats\n") == later   # no tick seen
    assert tick_model(None, "") is None
    with pytest.raises(StepError, match="epoch seconds"):
        tick_model(None, "=== tick-at\nsoon\n")


def test_starts_on_the_tick_model():
    model = {"ref": 1000.0, "period": 2.0}
    assert start_at(None, 1003.3, 0.5) == 1003.3                # no model: as soon as asked
    assert start_at(model, 1003.3, 0.5) == 1004.5               # 0.5 s after the first tick from then
    # a 39 s load started at 1004.5: read after the tick past 1043.7, the next load 0.5 s after it
    assert planned_start(model, 1004.5, 39.0, 0.2, 0.5) == 1044.5
    assert planned_start(None, 1004.5, 39.0, 0.2, 0.5) is None
    with pytest.raises(StepError, match="not shorter than the period"):
        step({"current": {"point": _point("rr", 50, 1), "start_at": 1004.5}, "tick": model}, "ticked",
             next_point=_point("rr", 100, 2), **dict(TIMING, margin=2.5))


def _running(start_at=1000.0):
    """A state whose load runs (ticked: wait_load, the watch started)."""
    point = _point("rr", 50, 1)
    state = step(None, "reset")
    state = step(state, "begin", point=point, next_point=None, now=start_at - 2.0, **TIMING)
    state = step(state, "ticked", next_point=None, next_variant=None, director_stdout="", offset={}, **TIMING)
    assert "wait_load" in state["do"] and state["current"]["watch"] == {"silent": {}, "done": False, "finding": None}
    return state


WEB = {"lvs-web1": {"answered": True, "shown": "10.250.2.11 port 80"},
       "lvs-web2": {"answered": True, "shown": "10.250.2.12 port 80"}}


def _round(state, at, silent=(), done=False, misses=2):
    probes = {name: dict(probe, answered=name not in silent) for name, probe in WEB.items()}
    return step(state, "watched", done=done, probes=probes, interval_s=5, misses=misses, now=at)


def test_the_watchdog_stops_a_load_after_misses_silent_rounds_in_a_row_and_names_the_server():
    state = _running()
    start = state["current"]["start_at"]
    state = _round(state, start + 5, silent=["lvs-web2"])
    assert "stop_load" not in state["do"] and state["current"]["watch"]["silent"] == {"lvs-web1": 0, "lvs-web2": 1}
    state = _round(state, start + 10)                        # it answered again: the count starts over
    state = _round(state, start + 15, silent=["lvs-web2"])
    assert "stop_load" not in state["do"]
    state = _round(state, start + 20.7, silent=["lvs-web2"])
    assert state["do"][-1] == "stop_load" and "wait_load" in state["do"]
    watch = state["current"]["watch"]
    assert watch["done"] is True
    assert watch["finding"] == "stopped the load 20 s in: lvs-web2 (10.250.2.12 port 80) did not answer 2 probes 5 s apart"
    # once the loads are stopped (event stopped) nothing asks to stop them again; a round after the
    # finding changes nothing; the point carries the finding once its load ended
    state = step(state, "stopped")
    assert "stop_load" not in state["do"] and "wait_load" in state["do"] and state["current"]["watch"] == watch
    assert _round(state, start + 25, silent=["lvs-web1", "lvs-web2"]) == state
    ended = step(state, "ended", clients=[{"host": "c1"}], window=[start, start + 21])
    assert ended["prev"]["watch"]["finding"] == watch["finding"] and "stop_load" not in ended["do"]


def test_the_watch_ends_quietly_when_every_client_is_done():
    state = _round(_running(), 1010.0, done=True)
    assert state["current"]["watch"] == {"silent": {"lvs-web1": 0, "lvs-web2": 0}, "done": True, "finding": None}
    assert "stop_load" not in state["do"]
    # with one miss allowed, a single silent round is enough; two silent servers are both named
    state = _round(_running(), 1003.0, silent=["lvs-web1", "lvs-web2"], misses=1)
    assert state["current"]["watch"]["finding"].endswith(
        "lvs-web1 (10.250.2.11 port 80) lvs-web2 (10.250.2.12 port 80) did not answer 1 probes 5 s apart")


def test_a_watch_round_refuses_what_it_cannot_take():
    with pytest.raises(StepError, match="no load running"):
        step(None, "watched", done=False, probes={}, interval_s=5, misses=2, now=1.0)
    with pytest.raises(StepError, match="misses must be 1 or more"):
        step(_running(), "watched", done=False, probes={}, interval_s=5, misses=0, now=1.0)


def test_a_load_stopped_before_the_tick_plans_no_read_and_launches_nothing():
    segments = _segments("rr", rates=(50, 100))
    first, second = segments[0]["points"]
    state = step(None, "reset")
    state = step(state, "begin", point=first, next_point=second, now=999.0, **TIMING)
    assert state["current"]["watch"] == {"silent": {}, "done": False, "finding": None}
    state = step(state, "switched", table="-A -t vip:80 -s rr")
    state = dict(state, do=state["do"] + ["see_tick"], tick_after=1015.0)   # on the timetable, a tick to look at
    for at in (1005.0, 1010.0):
        state = step(state, "watched", done=False, probes={"lvs-web2": {"answered": False, "shown": "10.250.2.12 port 80"}},
                     interval_s=5, misses=2, now=at)
    assert "see_tick" not in state["do"] and state["do"][-1] == "stop_load"
    state = step(state, "ticked", next_point=second, next_variant=None, director_stdout="", offset={}, **TIMING)
    assert state["do"] == ["wait_load"] and state["next"] is None
