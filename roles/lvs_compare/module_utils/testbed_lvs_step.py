# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The LVS comparison's control between loads, as one pure step function.

The sweep (roles/testbed_sweep) calls the experiment's hooks; the LVS hooks
pipeline the loads on the IPVS estimator's tick (the timetable,
``testbed_timetable``): a point's load is launched during the previous one,
the director's counter read of a load is started during it (and switches the
scheduler for the next segment right after reading), and a point is parsed
and stored while the next load runs. All of that state is one mapping, the
fact ``lvs_compare_state``::

    prev     the point whose load ran and that is not stored yet (its clients'
             answers, load window, the read planned for it, and - once
             collected - every host's collect step)
    current  the point whose load runs now (None between points)
    next     the point launched during this load: {point_id, start_at, switch_to}
    tick     the estimator's tick on the controller's time line: {ref, period}
    table    the director's IPVS table as last seen (the report keeps it)
    do       what the hook's tasks do next (each task is guarded by one name)
    say      sentences the hook prints (why a point is measured again)

:func:`step` takes the state and one event and returns the next state; it
never changes its input. The events, in the order the hooks send them
(roles/lvs_compare/tasks/point.yml, segment.yml, health.yml, store.yml,
recover.yml, finish.yml), and the actions they put in ``do`` (each task of a
hook is guarded by one action name):

``begin``     (point, now, timing) - notes this point's start: launched during
              the previous load already (``wait``: ``wait_s`` until it has
              started, the director reads and switches first), or at the next
              predicted tick + margin (``launch``); ``collect``: the previous
              point is still to be collected from the hosts; ``store``: the
              previous point is evaluated and stored while this load runs;
              ``see_tick``: on the timetable, with a next point, look at the
              director's tick shortly before this load ends (``tick_after``).
``collected`` (collected, director's output) - keeps what a collect step left
              with the previous point, the table a switching read left (the
              load running now runs on it) and the tick it saw; ends ``collect``.
``stored``    (result of lvs_point) - ``hand``: give the result to the sweep; an
              unclean boundary drops the previous point and this one (both
              measured again in the next pass), a late or failed switch this one
              (``say`` tells why).
``handed``    - nothing waits for the previous point's counters any more.
``ticked``    (next point and segment, director's output) - the tick model; this
              point's counter read and the next point's start: ``read``,
              ``launch_next``, ``clock`` (the pass's last load), ``wait_load``.
``watched``   (done, probes, interval_s, misses, now) - one round of the watchdog
              while this load runs (before ``ticked``, until shortly before the
              load's end, and after it until its end): ``done``
              whether every client's load has ended, ``probes`` ``{real server:
              {answered, shown}}`` (each real server's web server probed through
              its own connection). A server silent ``misses`` rounds in a row
              ends the watch with ``current.watch.finding`` (``stopped the load N
              s in: NAME (ADDRESS port P) did not answer M probes I s apart``)
              and ``stop_load``: the clients' loads are stopped at once (no
              ``see_tick``; ``ticked`` then plans no read and launches nothing),
              and the point is judged invalid with that reason, probed and
              stored as a fault; detection takes ``misses`` x ``interval_s``
              plus one probe and the round's own time.
``stopped``   () - the clients' loads were stopped (``stop_load`` done): no
              ``stop_load`` any more, so no later round stops them again.
``ended``     (clients, window) - this point becomes the previous one;
              ``collect`` when nothing was launched during its load.
``settle``    (ahead) - between segments and at a pass's end: ``collect`` the
              previous point unless it is collected or this segment's first
              load was launched during it (``ahead``: that load's read switched).
``probed``    - a health probe opened the virtual service during this load: it
              is measured again.
``switched``  (table) - the segment hook switched the director itself.
``reset``     - a lab fault: the points in flight were stored as faults and
              stay pending; the timetable starts anew; nothing more to do.

A point whose load was launched during the previous one is always collected
after it (``begin``), never before: its start does not depend on that
collect's tick. Later passes (``timetable`` false) launch nothing ahead and start no read
during a load: the point is read after its end, then the next one launched.
"""

from __future__ import absolute_import, division, print_function

import math
import os
import re

from ansible.module_utils.testbed_collect import sections, to_controller_time
from ansible.module_utils.testbed_timetable import TimetableError, estimate_period, next_start, next_tick
from ansible.module_utils.testbed_watchdog import watchdog_finding_text

EVENTS = ("begin", "collected", "stored", "handed", "ticked", "watched", "stopped", "ended", "settle", "probed",
          "switched", "reset")

# The next load starts after the first predicted tick at least this long (s)
# after the read is due: a tick that comes a little early is still after the
# load and caught by the read.
TICK_SLACK_S = 0.3
# The tick that predicts the next start is looked for this long before this
# load's expected end (a few periods ahead of that start), not before it started.
TICK_LOOK_AHEAD_S = 7.0
# A load that follows no running one starts this long after "now" at the earliest
# (the launch reaches every client first).
LAUNCH_LEAD_S = 1.2


class StepError(ValueError):
    """An event the state cannot take (one sentence why)."""


def initial():
    """The state before the first point: nothing launched, collected or seen."""
    return {"prev": None, "current": None, "next": None, "tick": None, "table": "", "do": [], "say": [],
            "wait_s": 0, "tick_after": None}


def seconds_of(point):
    """A point's load length: connections / rate (s)."""
    try:
        params = point["parameters"]
        return float(params["num_conns"]) / float(params["rate"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise StepError("point %r has no usable rate and num_conns" % ((point or {}).get("point_id"),)) from exc


def tick_model(model, director_stdout, offset=None, nominal=2.0):
    """The estimator's tick after a director answer: ``{ref, period}`` on the controller's time line.

    ``ref``: the tick the answer saw (``=== tick-at`` or ``=== prev-tick-at`` of
    lvs-director-stats, shifted by the director's clock offset); ``period``:
    estimated from the previous model's tick. An answer without a tick leaves
    the model as it was.
    """
    found = sections(director_stdout or "")
    text = (found.get("tick-at") or found.get("prev-tick-at") or "").strip()
    if not text:
        return model
    try:
        tick = to_controller_time(float(text.split()[0]), (offset or {}).get("offset_s"))
    except ValueError as exc:
        raise StepError("tick-at must be epoch seconds, got %r" % (text,)) from exc
    period = float(nominal)
    if isinstance(model, dict) and model.get("ref") is not None:
        period = float(model.get("period") or nominal)
        if tick > float(model["ref"]):
            period = estimate_period(float(model["ref"]), tick, nominal=period)
    return {"ref": round(tick, 4), "period": round(period, 5)}


def start_at(model, earliest, margin):
    """When a load that follows no running one starts: ``margin`` after the first tick from
    ``earliest`` (``earliest`` itself without a tick model)."""
    if not isinstance(model, dict) or model.get("ref") is None:
        return round(float(earliest), 3)
    return round(next_tick(float(model["ref"]), float(model["period"]), float(earliest)) + float(margin), 3)


def planned_start(model, start, seconds, tolerance, margin):
    """When the load after the one starting at ``start`` and lasting ``seconds`` starts
    (None without a tick model): ``margin`` after the first tick past its end + ``tolerance``."""
    if not isinstance(model, dict) or model.get("ref") is None:
        return None
    return round(next_start(float(model["ref"]), float(model["period"]), float(start) + float(seconds),
                            float(tolerance), float(margin))[1], 3)


def until(at, now, extra=0.0, whole="ceil"):
    """Whole seconds from ``now`` until ``at`` + ``extra``, never negative."""
    seconds = float(at) + float(extra) - float(now)
    return max(int(math.ceil(seconds) if whole == "ceil" else math.floor(seconds)), 0)


def _copy(state):
    if state is None:
        return initial()
    if not isinstance(state, dict):
        raise StepError("the LVS state must be a mapping, got %r" % (type(state).__name__,))
    out = initial()
    out.update(state)
    out["do"], out["say"] = list(out.get("do") or []), []
    return out


def _flag(value):
    """A setting that may come as a string from a template."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _keep_collected(new, collected, director_stdout, offset):
    """A collect step's answer kept with ``prev``; the table a switching read left; the tick it saw."""
    if not collected or new["prev"] is None or new["prev"].get("collected"):
        return
    new["prev"] = dict(new["prev"], **collected)
    if collected.get("switch_table"):
        new["table"] = collected["switch_table"]
        if new["current"] is not None:
            new["current"] = dict(new["current"], table=new["table"])
    new["tick"] = tick_model(new["tick"], director_stdout, offset)


def _begin(new, point, now, timetable, margin, next_point=None, **_):
    new["do"] = []
    timetable = _flag(timetable)
    ahead = launched_ahead(new, point["point_id"])
    if ahead:
        begins = float(new["next"]["start_at"])
        new["do"].append("wait")
        new["wait_s"] = until(begins, now, 0.5)
    else:
        begins = start_at(new["tick"] if timetable else None, float(now) + LAUNCH_LEAD_S, float(margin))
    if new["prev"] is not None and not new["prev"].get("collected"):
        new["do"].append("collect")
    new["current"] = {"point": point, "start_at": begins, "start": begins, "end": begins, "clients": [],
                      "table": new["table"], "launched": ahead,
                      "watch": {"silent": {}, "done": False, "finding": None}}
    new["next"] = None
    if not ahead:
        new["do"].append("launch")
    if new["prev"] is not None:
        new["do"].append("store")
    new["tick_after"] = round(max(begins + 0.3, begins + seconds_of(point) - TICK_LOOK_AHEAD_S), 3)
    if timetable and next_point is not None:
        new["do"].append("see_tick")


def _collected(new, collected, director_stdout="", offset=None, **_):
    _keep_collected(new, collected, director_stdout, offset)
    new["do"] = [d for d in new["do"] if d != "collect"]


def _stored(new, result, **_):
    prev, current = new["prev"], new["current"]
    if prev is None:
        raise StepError("a store result came with no point waiting to be stored")
    retry, retry_next = bool(result.get("retry")), list(result.get("retry_next") or [])
    dropped = bool(prev.get("drop"))
    if retry or dropped:
        why = ("; ".join(result.get("retry_reasons") or []) if retry
               else prev.get("drop_reason") or "the load before it overlapped the tick")
        also = " and neither will %s" % current["point"]["label"] if retry and current else ""
        new["say"].append("Timetable: %s not stored (%s)%s: measured again in the next pass."
                          % (prev["point"].get("label"), why, also))
    elif retry_next:
        new["say"].append("Timetable: %s not stored (%s): measured again in the next pass."
                          % ((current or {}).get("point", {}).get("label", "the next point"), "; ".join(retry_next)))
    if current is not None and (retry or (retry_next and not dropped)):
        new["current"] = dict(current, drop=True, drop_reason=("the load before it overlapped the tick" if retry
                                                               else "; ".join(retry_next)))
    new["do"] = [d for d in new["do"] if d != "store"]
    if not retry and not dropped:
        new["do"].append("hand")


def _ticked(new, next_point, timetable, tolerance, margin, switch_margin, read_dir, next_variant=None,
            director_stdout="", offset=None, **_):
    new["do"] = []
    current = new["current"]
    if current is None:
        return
    if (current.get("watch") or {}).get("finding"):
        # the watchdog stopped this load: no read during it, nothing launched after it (a fault follows)
        new["do"].append("wait_load")
        return
    new["tick"] = tick_model(new["tick"], director_stdout, offset)
    if _flag(timetable):
        seconds = seconds_of(current["point"])
        begins = float(current["start_at"])
        upcoming = None
        if next_point is not None:
            upcoming = planned_start(new["tick"], begins, seconds, float(tolerance) + TICK_SLACK_S,
                                     switch_margin if next_variant is not None else margin)
        switch_to = next_variant if upcoming is not None else None
        if switch_to is not None and not re.match(r"^[a-z0-9]+$", str(switch_to)):
            raise StepError("the next segment's scheduler must be a scheduler name, got %r" % (switch_to,))
        new["current"] = dict(current, read_after=round(begins + seconds + float(tolerance), 3),
                              read_file=os.path.join(str(read_dir), "%s.read" % current["point"]["point_id"]),
                              read_wait_s=seconds * 2 + 120, next_start=upcoming, switch_to=switch_to)
        new["do"].append("read")
        if upcoming is not None:
            new["next"] = {"point_id": next_point["point_id"], "start_at": upcoming, "switch_to": switch_to}
            new["do"].append("launch_next")
    if next_point is None:
        new["do"].append("clock")
    new["do"].append("wait_load")


def _watched(new, done, probes, interval_s, misses, now, **_):
    current = new["current"]
    if current is None:
        raise StepError("a watchdog round came with no load running")
    watch = dict(current.get("watch") or {"silent": {}, "done": False, "finding": None})
    if watch["done"]:
        return
    misses = int(misses)
    if misses < 1:
        raise StepError("the watchdog's misses must be 1 or more, got %r" % (misses,))
    silent, shown = dict(watch["silent"]), {}
    for name in sorted(probes or {}):
        probe = probes[name] or {}
        shown[name] = probe.get("shown") or name
        silent[name] = 0 if probe.get("answered") else silent.get(name, 0) + 1
    down = [name for name in sorted(silent) if silent[name] >= misses]
    if down:
        watch["finding"] = watchdog_finding_text(float(now) - float(current["start_at"]),
                                                 [(name, shown.get(name, name)) for name in down], misses, interval_s)
        watch["done"] = True
        # no look at the tick of a load that is stopped
        new["do"] = [d for d in new["do"] if d not in ("stop_load", "see_tick")] + ["stop_load"]
    elif _flag(done):
        watch["done"] = True
    watch["silent"] = silent
    new["current"] = dict(current, watch=watch)


def _stopped(new, **_):
    new["do"] = [d for d in new["do"] if d != "stop_load"]


def _ended(new, clients, window, **_):
    new["do"] = []
    current = new["current"]
    if current is None:
        return
    new["prev"] = dict(current, clients=list(clients), start=window[0], end=window[1])
    new["current"] = None
    if new["next"] is None:
        new["do"].append("collect")


def _settle(new, ahead=False, **_):
    new["do"] = []
    if new["prev"] is not None and not new["prev"].get("collected") and not _flag(ahead):
        new["do"].append("collect")


def _probed(new, **_):
    current = new["current"]
    if current is not None and not current.get("drop"):
        new["current"] = dict(current, drop=True, drop_reason="the health probe opened the virtual service during its load")


def _handed(new, **_):
    new["prev"] = None
    new["do"] = [d for d in new["do"] if d != "hand"]


def _switched(new, table, **_):
    new["table"] = table or ""


def _reset(new, **_):
    kept = new["table"]
    new.update(initial())
    new["table"] = kept


_HANDLERS = {"begin": _begin, "collected": _collected, "stored": _stored, "handed": _handed, "ticked": _ticked,
             "watched": _watched, "stopped": _stopped, "ended": _ended, "settle": _settle, "probed": _probed, "switched": _switched, "reset": _reset}


def step(state, event, **context):
    """The state after ``event`` (one of EVENTS) with its ``do`` and ``say``; ``state`` is not changed."""
    if event not in _HANDLERS:
        raise StepError("unknown event %r (one of %s)" % (event, ", ".join(EVENTS)))
    new = _copy(state)
    try:
        _HANDLERS[event](new, **context)
    except TypeError as exc:
        raise StepError("event %r: %s" % (event, exc)) from exc
    except TimetableError as exc:
        raise StepError(str(exc)) from exc
    return new


def launched_ahead(state, point_id):
    """Whether the point ``point_id`` was launched during the previous load (its segment's switch is
    made by that load's read; the segment's probe must not open the virtual service)."""
    nxt = (state or {}).get("next")
    return nxt is not None and nxt.get("point_id") == point_id


def in_flight(state):
    """The points whose load ran and that are not stored yet (the previous point, and the one measured now)."""
    state = state or {}
    return [p for p in (state.get("prev"), state.get("current")) if p]
