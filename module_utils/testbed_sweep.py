# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sweep skeleton's arithmetic, shared by every experiment (roles/testbed_sweep).

A pure library (module_utils/): filter_plugins/testbed_sweep.py makes its
functions filters; the experiments' own filters import it.

Pure functions, unit-tested in tests/unit/test_filters_sweep.py:

* ``sweep_plan(matrix)``: variants x workloads x parameter grid x repetitions
  -> the plan (list of ``{variant, parameters, repetition}``) in run order;
* ``sweep_segments(points, keys)``: the pending points of ``result_run``'s
  answer, numbered and labelled, grouped into segments so that a costly switch
  (scheduler, chain, pool, runtime) happens once per segment;
* ``sweep_progress(...)``: one progress line with the remaining time,
  estimated from the points measured so far;
* ``sweep_overhead(...)``: wall time of a sweep against the time the load
  itself ran (the orchestration overhead);
* ``sweep_unbuilt(hosts, hostvars)``: the hosts a sweep needs that its build
  plays did not mark built, each with the step that failed;
* ``sweep_outcome(status, ...)``: what a run ended as, and the exit status
  ``ansible-playbook`` gives it (callback_plugins/testbed_exit.py).
"""

from __future__ import absolute_import, division, print_function

import itertools
import math
import re

from ansible.module_utils.testbed_results.summary import format_duration
from ansible.module_utils.testbed_watchdog import watchdog_reason

try:  # Ansible is there at run time; the tests import the module without it too.
    from ansible.errors import AnsibleFilterError
except ImportError:  # pragma: no cover
    class AnsibleFilterError(Exception):
        """Stand-in when ansible is not importable."""

ORDERS = ("interleaved", "grouped")
MAX_POINTS = 100000


def _fail(name, message):
    raise AnsibleFilterError(f"{name}: {message}")


def _count(name, value, what, minimum=1):
    if isinstance(value, bool):
        _fail(name, f"{what} must be a whole number >= {minimum}, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        _fail(name, f"{what} must be a whole number >= {minimum}, got {value!r}")
    if not math.isfinite(number) or number != int(number) or number < minimum:
        _fail(name, f"{what} must be a whole number >= {minimum}, got {value!r}")
    return int(number)


def _names(name, values, what):
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)) or not values:
        _fail(name, f"{what} must be a non-empty list, got {values!r}")
    out = []
    for value in values:
        if isinstance(value, dict):
            value = value.get("name")
        if not isinstance(value, str) or not value:
            _fail(name, f"every entry of {what} must be a name (or a mapping with a name), got {value!r}")
        if value in out:
            _fail(name, f"{what} lists {value!r} twice")
        out.append(value)
    return out


def check_choices(name, values, known, setting, kind):
    """Check an experiment setting that picks from a fixed list (e.g. its workloads):
    a non-empty list of known names, none twice. Fails naming the setting."""
    if not isinstance(values, (list, tuple)) or not values:
        _fail(name, f"{setting} must be a non-empty list, got {values!r}")
    unknown = [v for v in values if v not in known]
    if unknown:
        _fail(name, f"unknown {kind}(s) {', '.join(map(str, unknown))}; known: {', '.join(known)}")
    if len(set(values)) != len(values):
        _fail(name, f"{setting} lists a {kind} twice: {values!r}")


def _grid(name, grid, what):
    """A grid mapping -> list of parameter mappings (cartesian product, keys in order).

    A value that is itself a mapping sets several parameters at once (e.g. a
    rate and the connection count derived from it).
    """
    if grid is None:
        return [{}]
    if not isinstance(grid, dict):
        _fail(name, f"{what} must be a mapping of parameter -> list of values, got {grid!r}")
    axes = []
    for key, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)) or not values:
            _fail(name, f"{what}.{key} must be a non-empty list of values, got {values!r}")
        axis = []
        for value in values:
            axis.append(dict(value) if isinstance(value, dict) else {key: value})
        axes.append(axis)
    out = []
    for combo in itertools.product(*axes):
        merged = {}
        for piece in combo:
            merged.update(piece)
        out.append(merged)
    return out


def sweep_plan(matrix):
    """Expand an experiment's matrix into its plan.

    ``matrix`` keys:

    * ``variants`` (required): names, or mappings with a ``name``;
    * ``repetitions`` (default 1);
    * ``grid``: ``{parameter: [values]}``, every combination is a point;
    * ``parameters``: fixed parameters of every point;
    * ``workloads``: optional ``[{name, grid, parameters}]``; each point then has
      ``parameters.workload`` and the workload's own grid (combined with ``grid``);
    * ``outer``: ``{parameter: [values]}`` varied outside everything above - every
      point of a variant and repetition for the first combination, then for the
      next (a setting under which all workloads run, such as where they run);
    * ``order``: ``interleaved`` (repetition outermost: rep 1 of everything,
      then rep 2..., so drift hits every variant alike) or ``grouped`` (every
      repetition of a variant before the next variant).

    Returns ``[{variant, parameters, repetition}]`` in run order.
    """
    fname = "sweep_plan"
    if not isinstance(matrix, dict):
        _fail(fname, f"the matrix must be a mapping, got {matrix!r}")
    unknown = sorted(set(matrix) - {"variants", "repetitions", "grid", "parameters", "workloads", "order", "outer"})
    if unknown:
        _fail(fname, f"unknown matrix key(s) {', '.join(unknown)}; known: variants, repetitions, grid, "
                     "parameters, workloads, order, outer")
    variants = _names(fname, matrix.get("variants"), "variants")
    reps = _count(fname, matrix.get("repetitions", 1), "repetitions")
    order = matrix.get("order") or "interleaved"
    if order not in ORDERS:
        _fail(fname, f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    fixed = matrix.get("parameters") or {}
    if not isinstance(fixed, dict):
        _fail(fname, f"parameters must be a mapping, got {fixed!r}")
    common = _grid(fname, matrix.get("grid"), "grid")
    workloads = matrix.get("workloads")
    if workloads is None:
        cells = [dict(fixed, **combo) for combo in common]
    else:
        if isinstance(workloads, (str, bytes)) or not isinstance(workloads, (list, tuple)) or not workloads:
            _fail(fname, f"workloads must be a non-empty list of mappings, got {workloads!r}")
        names = _names(fname, workloads, "workloads")
        cells = []
        for wname, workload in zip(names, workloads):
            own = workload if isinstance(workload, dict) else {}
            extra = own.get("parameters") or {}
            if not isinstance(extra, dict):
                _fail(fname, f"workload {wname}: parameters must be a mapping, got {extra!r}")
            for combo in common:
                for wcombo in _grid(fname, own.get("grid"), f"workload {wname} grid"):
                    cell = dict(fixed)
                    cell.update(extra)
                    cell.update(combo)
                    cell.update(wcombo)
                    cell["workload"] = wname
                    cells.append(cell)
    outer = _grid(fname, matrix.get("outer"), "outer")
    cells = [dict(cell, **combo) for combo in outer for cell in cells]
    if order == "interleaved":
        triples = [(rep, variant, cell) for rep in range(1, reps + 1) for variant in variants for cell in cells]
    else:
        triples = [(rep, variant, cell) for variant in variants for rep in range(1, reps + 1) for cell in cells]
    if len(triples) > MAX_POINTS:
        _fail(fname, f"the matrix expands to {len(triples)} points (at most {MAX_POINTS})")
    return [{"variant": variant, "parameters": dict(cell), "repetition": rep} for rep, variant, cell in triples]


def _point_key(point, keys):
    out = {}
    for key in keys:
        if key in ("variant", "repetition"):
            out[key] = point.get(key)
        else:
            out[key] = (point.get("parameters") or {}).get(key)
    return out


def _label(index, total, point, label_parameters):
    params = point.get("parameters") or {}
    shown = [f"{k}={params[k]}" for k in (label_parameters if label_parameters is not None else sorted(params))
             if k in params]
    text = f"[{index}/{total}] {point.get('variant')}"
    if shown:
        text += " " + " ".join(shown)
    return text + f" rep {point.get('repetition', 1)}"


def sweep_segments(points, keys=None, label_parameters=None):
    """Number and label every point of a run; group the pending ones into segments.

    ``points`` is ``result_run``'s ``points`` (all of the plan, each with a
    ``done`` flag).  ``keys`` name what a segment shares (``variant``,
    ``repetition`` or a parameter name; default ``[variant]``): consecutive
    pending points with equal keys form one segment, so a costly switch runs
    once per segment.  Returns ``[{index, key, label, points}]``; every point
    gains ``index`` (its place in the plan, 1-based) and ``label``.
    """
    fname = "sweep_segments"
    if isinstance(points, (str, bytes)) or not isinstance(points, (list, tuple)):
        _fail(fname, f"points must be result_run's list of points, got {points!r}")
    keys = list(keys) if keys else ["variant"]
    total = len(points)
    segments = []
    for index, point in enumerate(points, start=1):
        if not isinstance(point, dict) or "variant" not in point:
            _fail(fname, f"point {index} is not a planned point: {point!r}")
        if point.get("done"):
            continue
        labelled = dict(point, index=index, label=_label(index, total, point, label_parameters))
        key = _point_key(point, keys)
        if not segments or segments[-1]["key"] != key:
            text = ", ".join(f"{k} {v}" for k, v in key.items())
            segments.append({"index": len(segments), "key": key, "label": text, "points": []})
        segments[-1]["points"].append(labelled)
    return segments


def sweep_progress(durations, remaining, estimate_s_per_point=None):
    """Remaining time of a sweep from the points measured so far in this invocation.

    ``durations``: wall seconds each finished point took (load plus
    orchestration); ``remaining``: points still to run.  The mean measured
    duration replaces the plan's estimate as soon as one point is done.
    Returns ``{remaining_s, mean_s, text}``.
    """
    fname = "sweep_progress"
    if isinstance(durations, (str, bytes)) or not isinstance(durations, (list, tuple)):
        _fail(fname, f"durations must be a list of seconds, got {durations!r}")
    values = []
    for value in durations:
        try:
            number = float(value)
        except (TypeError, ValueError):
            _fail(fname, f"durations must be numbers of seconds, got {value!r}")
        if math.isfinite(number) and number >= 0:
            values.append(number)
    left = _count(fname, remaining, "remaining", minimum=0)
    if values:
        mean = sum(values) / len(values)
        basis = f"mean {mean:.1f} s per point so far"
    elif estimate_s_per_point is not None:
        mean = float(estimate_s_per_point)
        basis = "plan estimate"
    else:
        return {"remaining_s": None, "mean_s": None, "text": f"{left} to go"}
    seconds = mean * left
    if left == 0:
        return {"remaining_s": 0.0, "mean_s": round(mean, 3), "text": "last point"}
    return {"remaining_s": round(seconds, 1), "mean_s": round(mean, 3),
            "text": f"{left} to go, about {format_duration(seconds)} left ({basis})"}


def sweep_overhead(started, finished, load_seconds):
    """Orchestration overhead of a sweep: wall time minus the time the load ran.

    ``started``/``finished`` are epoch seconds of the sweep on the
    controller; ``load_seconds`` the load time of every point measured.
    Returns ``{points, wall_s, load_s, overhead_s, overhead_pct, overhead_per_point_s}`` (``None``
    when nothing was measured); ``overhead_per_point_s``: the orchestration per point measured.
    """
    fname = "sweep_overhead"
    if isinstance(load_seconds, (str, bytes)) or not isinstance(load_seconds, (list, tuple)):
        _fail(fname, f"load_seconds must be a list, got {load_seconds!r}")
    if not load_seconds:
        return None
    try:
        wall = float(finished) - float(started)
        load = sum(float(x) for x in load_seconds)
    except (TypeError, ValueError) as exc:
        _fail(fname, f"times must be numbers of seconds ({exc})")
    if not math.isfinite(wall) or wall <= 0:
        _fail(fname, f"the sweep must have a positive wall time, got {wall!r}")
    return {"points": len(load_seconds), "wall_s": round(wall, 1), "load_s": round(load, 1),
            "overhead_s": round(wall - load, 1), "overhead_pct": round(100.0 * (wall - load) / wall, 1),
            "overhead_per_point_s": round((wall - load) / len(load_seconds), 1)}


def _short(text, limit=160):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def sweep_result_lines(results, stored=None):
    """One line per result a hook handed over: its label and verdict, primary cause first.

    ``results`` are the hook's results; ``stored`` the ``result_store`` answers
    (in order), whose ``valid`` is the stored verdict.  A result's ``summary``
    (its metrics in a few words) comes first when given; an invalid point
    shows its first reason, shortened to 160 characters.
    """
    fname = "sweep_result_lines"
    if isinstance(results, (str, bytes)) or not isinstance(results, (list, tuple)):
        _fail(fname, f"results must be a list, got {results!r}")
    answers = list(stored or [])
    lines = []
    for number, result in enumerate(results):
        if not isinstance(result, dict):
            _fail(fname, f"result {number} must be a mapping, got {result!r}")
        valid = result.get("valid")
        reasons = result.get("reasons") or []
        if answers:
            answer = answers.pop(0)
            if isinstance(answer, dict):
                valid = answer.get("valid", valid)
                reasons = (answer.get("document") or {}).get("reasons", reasons)
        point = result.get("point") or {}
        label = result.get("label") or point.get("label") or point.get("point_id") or result.get("point_id") or "point"
        verdict = "valid" if valid else "INVALID: " + (_short(reasons[0]) if reasons else "no reason given")
        summary = result.get("summary")
        if summary and str(summary).startswith(str(label)):
            lines.append(_short(summary, 400) if valid else f"{_short(summary, 240)}")
        else:
            lines.append(f"{label}: " + (f"{_short(summary, 240)}; " if summary else "") + verdict)
    return lines


def workload_result(run, point, environment, metrics=None, scale=None, raw_name=None, extra=None):
    """A storable point from one ``testbed_workload`` run (the common single-tool point).

    ``metrics`` picks the parser's metrics to keep (all when omitted; a
    missing one is null); ``scale`` maps ``{new_name: [metric, factor]}`` for
    unit conversions (e.g. ``{throughput_gbps: [received_bps, 1e-9]}``). The
    verdict is the parser's; a run whose output could not be parsed (the tool
    failed, timed out, printed no report) is invalid with that reason.
    Returns ``{point, metrics, valid, reasons, warnings, sources, raw, extra,
    environment, started_at, finished_at, load_s, summary}``.
    """
    fname = "workload_result"
    if not isinstance(run, dict) or "tool" not in run:
        _fail(fname, f"run must be the testbed_workload_result of a run, got {run!r}")
    tool = run["tool"]
    parsed = run.get("parsed") if isinstance(run.get("parsed"), dict) else None
    found = (parsed or {}).get("metrics") or {}
    names = list(found) if metrics is None else list(metrics)
    out = {name: found.get(name) for name in names}
    for name, rule in (scale or {}).items():
        if not isinstance(rule, (list, tuple)) or len(rule) != 2:
            _fail(fname, f"scale.{name} must be [metric, factor], got {rule!r}")
        value = found.get(rule[0])
        out[name] = None if value is None else value * float(rule[1])
    reasons, warnings = [], []
    if parsed is None:
        reasons.append(f"{tool}: " + (run.get("error") or "no output"))
    else:
        reasons.extend(parsed.get("reasons") or [])
        warnings.extend(parsed.get("warnings") or [])
    if not run.get("finished", True):
        reasons.append(f"{tool} did not finish in time")
    reasons.extend(load_stopped_reasons(run, tool))
    valid = parsed is not None and bool(parsed.get("valid", True)) and not reasons
    shown = [f"{k} {v}" for k, v in list(out.items())[:3] if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return {
        "point": point, "metrics": out, "valid": valid, "reasons": reasons, "warnings": warnings,
        "sources": {tool: parsed} if parsed is not None else {},
        # the text the parser read: stdout, or output_text (stderr, an output file) when the role says so
        "raw": {raw_name or f"{tool}.txt": (run.get("stdout") if run.get("output_text") is None
                                            else run.get("output_text")) or ""},
        "extra": dict(extra or {}, argv=run.get("argv"), host=run.get("host"), rc=run.get("rc")),
        "environment": environment, "started_at": run.get("started_at"), "finished_at": run.get("finished_at"),
        "load_s": run.get("duration_s") or 0, "summary": ", ".join(shown) or None,
    }


def load_stopped_reasons(run, tool=None):
    """Why a load was stopped before its end, as reasons: its deadline (``overran``), its command killed at its
    own bound (``hung``) and the watchdog (its line on the run's stderr). ``run`` is a ``testbed_workload_result``."""
    tool = tool or run.get("tool") or "the load"
    reasons = []
    finding = watchdog_finding(run.get("stderr"))
    # The watchdog's TERM goes to the deadline's `timeout`, whose -k then kills a load stuck in I/O (exit 137,
    # as at the deadline): a load the watchdog stopped did not reach its deadline.
    if run.get("hung"):
        reasons.append(f"{tool}: {run['hung']}")
    elif run.get("overran") and not finding:
        estimate = run.get("estimate_s")
        reasons.append(f"{tool} exceeded its deadline of {run.get('deadline_s')} s "
                       + (f"(estimate {estimate:g} s)" if isinstance(estimate, (int, float)) and estimate
                          else "(no estimate: the default deadline, testbed_workload_deadline_default_s)")
                       + " and was stopped")
    if finding:
        reasons.append(watchdog_reason(finding))
    return reasons


def workload_deadline(timeout_s=0, estimate_s=0, factor=3, margin_s=60, default_s=3600):
    """The deadline of one load: ``{deadline_s, from, estimate_s}``.

    ``timeout_s`` > 0 is the caller's own stop (a tool that never ends by itself, such as postal:
    stopping it there is how it ends, ``from: timeout``). Else ``factor`` x ``estimate_s`` +
    ``margin_s`` when the load has an estimate (``from: estimate``), else ``default_s``
    (``from: default``). Every load gets one: no value makes it unbounded."""
    fname = "workload_deadline"
    values = {}
    for name, value, least in (("timeout_s", timeout_s, 0), ("estimate_s", estimate_s, 0), ("factor", factor, 1),
                               ("margin_s", margin_s, 0), ("default_s", default_s, 1)):
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = None
        if number is None or isinstance(value, bool) or not math.isfinite(number) or number < least:
            _fail(fname, f"{name} must be a number >= {least}, got {value!r}")
        values[name] = number
    if values["timeout_s"] > 0:
        return {"deadline_s": int(math.ceil(values["timeout_s"])), "from": "timeout", "estimate_s": values["estimate_s"] or None}
    if values["estimate_s"] > 0:
        deadline = values["factor"] * values["estimate_s"] + values["margin_s"]
        return {"deadline_s": int(math.ceil(deadline)), "from": "estimate", "estimate_s": values["estimate_s"]}
    return {"deadline_s": int(math.ceil(values["default_s"])), "from": "default", "estimate_s": None}


# The watchdog around a load (filter workload_watch_argv): a POSIX sh that starts the load in the
# background, probes each target every interval (ping, or a TCP connect through bash's /dev/tcp when the
# target has a port, or for a block device - an address that is a path - one direct 4 KiB read at a random
# place, not waited for beyond the probe timeout: a volume whose storage went away hangs its reads) and,
# after ``misses`` rounds in a row with a target silent, stops the load (TERM to its timeout, which passes
# it on) and says so on stderr in one line starting "testbed-watchdog: stopped".
# A host that does not answer before the load (no ping there, ICMP filtered) is not watched, with a
# line saying so; with none left the load runs alone (exec). A device is always watched: the load needs it.
# It exits with the load's status; a signal it gets goes on to the load (its trap is set before the
# load starts; one that comes before the load ends the watchdog, 143, and the load never starts). Arguments: interval, misses,
# probe timeout, then (name, address, port or "") per target, then "--" and the load's argv.
WATCH_SCRIPT = r"""iv=$1 max=$2 pt=$3; shift 3
stop= load=
trap 'stop=1; [ -z "$load" ] || kill -TERM "$load" 2>/dev/null' TERM INT HUP
probe() {
  case $1 in
  /*)
    at=0; [ "${2:-0}" -gt 1 ] && at=$(( $(od -An -N4 -tu4 /dev/urandom) % $2 ))
    dd if="$1" of=/dev/null bs=4096 count=1 skip="$at" iflag=direct status=none </dev/null >/dev/null 2>&1 & d=$!
    w=0
    while kill -0 "$d" 2>/dev/null; do
      [ "$w" -lt $((pt * 10)) ] || return 1
      sleep 0.1; w=$((w + 1))
    done
    wait "$d";;
  *)
    if [ -n "$2" ]; then timeout "$pt" bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>/dev/null
    else ping -n -q -c 1 -W "$pt" "$1" >/dev/null 2>&1; fi;;
  esac
}
n=0
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
  p=$3 dev=
  case $2 in
  /*) what=dd dev=1  # a device: its size in 4 KiB blocks (the probes read anywhere in it)
      p=$(( $(timeout "$pt" blockdev --getsize64 "$2" 2>/dev/null || timeout "$pt" stat -L -c %s "$2" 2>/dev/null \
              || echo 0) / 4096 ));;
  *) if [ -n "$3" ]; then what=bash; else what=ping; fi;;
  esac
  if ! command -v "$what" >/dev/null 2>&1; then
    echo "testbed-watchdog: not watching $1 ($2${3:+ port $3}): no $what where the load runs" >&2
  elif [ -n "$dev" ] || probe "$2" "$p"; then
    # a device the load uses is always watched: one that hangs already is a fault, not a filtered probe
    eval "t_name_$n=\$1 t_addr_$n=\$2 t_port_$n=\$p"; n=$((n + 1))
  else
    echo "testbed-watchdog: not watching $1 ($2${3:+ port $3}): it did not answer before the load" >&2
  fi
  shift 3
done
shift
[ -z "$stop" ] || exit 143
[ "$n" -gt 0 ] || exec "$@"
t0=$(date +%s)
"$@" &
load=$!
[ -z "$stop" ] || kill -TERM "$load" 2>/dev/null
(
  trap 'kill "$s" 2>/dev/null; exit 0' TERM
  bad=0
  while :; do
    sleep "$iv" & s=$!; wait "$s"
    kill -0 "$load" 2>/dev/null || exit 0
    down= i=0
    while [ "$i" -lt "$n" ]; do
      eval "name=\$t_name_$i addr=\$t_addr_$i port=\$t_port_$i"
      case $addr in /*) shown=$addr;; *) shown="$addr${port:+ port $port}";; esac
      probe "$addr" "$port" || down="$down $name ($shown)"
      i=$((i + 1))
    done
    if [ -n "$down" ]; then bad=$((bad + 1)); else bad=0; fi
    if [ "$bad" -ge "$max" ]; then
      echo "testbed-watchdog: stopped the load $(( $(date +%s) - t0 )) s in:$down did not answer $max probes $iv s apart" >&2
      kill -TERM "$load" 2>/dev/null
      exit 0
    fi
  done
) &
watch=$!
wait "$load"; rc=$?
while kill -0 "$load" 2>/dev/null; do wait "$load"; rc=$?; done
kill "$watch" 2>/dev/null
wait "$watch" 2>/dev/null
exit "$rc"
"""

WATCH_STOPPED = "testbed-watchdog: stopped"


def workload_watch_argv(targets, interval_s=5, misses=2, probe_timeout_s=2):
    """The argv prefix that puts a load under the watchdog (WATCH_SCRIPT); ``[]`` without targets.

    ``targets``: ``[{name, address, port?}]`` - the hosts and guests the load needs, probed from where
    the load runs (ping, or TCP to ``port``; an ``address`` that is an absolute path is a block device
    the load uses, probed with one direct read: its storage over the network). A target silent ``misses`` rounds in a row, ``interval_s``
    apart (each probe bounded by ``probe_timeout_s``), stops the load: found within ``misses`` x
    ``interval_s`` plus one probe, not at the tool's own timeout."""
    fname = "workload_watch_argv"
    if not targets:
        return []
    if not isinstance(targets, (list, tuple)):
        _fail(fname, f"the targets must be a list of {{name, address, port}}, got {targets!r}")
    numbers = {}
    for name, value in (("interval_s", interval_s), ("misses", misses), ("probe_timeout_s", probe_timeout_s)):
        numbers[name] = _count(fname, value, name)
    argv = ["sh", "-c", WATCH_SCRIPT, "testbed-watchdog",
            str(numbers["interval_s"]), str(numbers["misses"]), str(numbers["probe_timeout_s"])]
    for target in targets:
        if not isinstance(target, dict) or not str(target.get("address") or "").strip():
            _fail(fname, f"each target needs an address (and a name, and a port for a TCP probe), got {target!r}")
        address = str(target["address"]).strip()
        if address.startswith("-") or any(c.isspace() for c in address):
            _fail(fname, f"the address of target {target.get('name')!r} is not a host name or IP address: {address!r}")
        port = target.get("port")
        if address.startswith("/") and port not in (None, ""):
            _fail(fname, f"target {target.get('name')!r} is a device ({address}), which is read, not connected to: "
                         f"give it no port")
        if port in (None, ""):
            port = ""
        else:
            port = str(_count(fname, port, f"the port of {address}"))
            if int(port) > 65535:
                _fail(fname, f"the port of {address} must be 1-65535, got {port}")
        argv += [str(target.get("name") or address), address, port]
    return argv + ["--"]


def workload_watch_shown(argv):
    """``argv`` as a result keeps it: the watchdog's script (WATCH_SCRIPT, the text after ``sh -c``)
    replaced by ``<testbed-watchdog>``; its arguments (interval, misses, probe timeout, the targets)
    stay. Any other argv is returned as it is."""
    argv = list(argv or [])
    for i in range(len(argv) - 2):
        if argv[i] == "sh" and argv[i + 1] == "-c" and argv[i + 2] == WATCH_SCRIPT:
            return argv[:i + 2] + ["<testbed-watchdog>"] + argv[i + 3:]
    return argv


def watchdog_finding(stderr):
    """The watchdog's line in a load's stderr (WATCH_STOPPED ...), without its prefix word; None without one."""
    for line in (stderr or "").splitlines():
        if line.startswith(WATCH_STOPPED):
            return line[len("testbed-watchdog: "):].strip()
    return None


def delta_seconds(delta):
    """Seconds of a command module's ``delta`` (``H:MM:SS.ffffff``); ``None`` stays ``None``."""
    if delta is None or delta == "":
        return None
    if isinstance(delta, (int, float)) and not isinstance(delta, bool):
        return float(delta)
    parts = str(delta).strip().split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        hours, minutes, seconds = int(parts[0]), int(parts[1]), float(parts[2])
    except ValueError:
        _fail("delta_seconds", f"expected H:MM:SS.ffffff, got {delta!r}")
    return round(hours * 3600 + minutes * 60 + seconds, 6)


def sweep_unbuilt(hosts, hostvars):
    """One sentence per host of ``hosts`` that the build plays did not mark built (roles/testbed_sweep build.yml).

    A host whose build step failed names the step and its message; a host with
    no mark at all was unreachable or skipped while the testbed was built.
    Empty when every host is built.
    """
    if isinstance(hosts, (str, bytes)) or not isinstance(hosts, (list, tuple)):
        _fail("sweep_unbuilt", f"expected a list of inventory host names, got {hosts!r}")
    sentences = []
    for host in hosts:
        facts = hostvars[host] if host in hostvars else {}
        if facts.get("testbed_sweep_built") is True:
            continue
        failed = facts.get("testbed_sweep_build_failed")
        if isinstance(failed, dict) and failed:
            sentences.append(f"{host}: building it failed at '{failed.get('task', '?')}': "
                             f"{_short(str(failed.get('msg', '')), 400)}")
        else:
            sentences.append(f"{host}: it was not built (unreachable, or skipped by the build plays)")
    return sentences


def sweep_unreachable_problems(hosts, hostvars, register, label):
    """One health problem ``{component, evidence}`` per host of ``hosts`` whose own ``ping``
    (registered as ``register`` with ``ignore_unreachable``) did not answer during ``label``.

    A host without that registered result (the ping was skipped) is not judged.
    """
    if isinstance(hosts, (str, bytes)) or not isinstance(hosts, (list, tuple)):
        _fail("sweep_unreachable_problems", f"expected a list of inventory host names, got {hosts!r}")
    problems = []
    for host in hosts:
        result = (hostvars[host] if host in hostvars else {}).get(register)
        if not isinstance(result, dict) or result.get("skipped") or result.get("ping") == "pong":
            continue
        evidence = _short(str(result.get("msg") or "no answer"), 300)
        problems.append({"component": f"host {host} (stopped answering during {label})", "evidence": evidence})
    return problems


# The exit status of an experiment playbook (README "Exit status"; callback_plugins/testbed_exit.py).
# 0, 2 (a task failed that is none of these), 4 (a host unreachable) and 99 (interrupted) are
# ansible-playbook's own; the testbed adds its outcomes above them.
EXIT_CODES = {
    "complete": 0,      # every planned point stored and valid (or invalid for a reason the experiment accepts)
    "refused": 10,      # an input was refused before any host was touched
    "unrecovered": 11,  # a lab fault was found and recovery failed
    "invalid": 12,      # every point stored, some of them invalid
    "incomplete": 13,   # points are missing for another reason (a host not built, a full disk, ...)
    "busy": 14,         # a host is locked by another run (one run per host): nothing was changed
}


def _ids(points, limit=8):
    ids = [p["point_id"] for p in points]
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def sweep_outcome(status, unrecovered=None, accepted_invalid=None):
    """What a run ended as: ``{status, exit_code, message, invalid, accepted, pending}``.

    ``status`` is result_run's answer (``points`` with ``done``/``valid``/``reasons``,
    ``pending``, ``total``); ``unrecovered`` names the components a failed
    recovery left broken; ``accepted_invalid`` lists regular expressions: an
    invalid point all of whose reasons match one of them is an accepted
    result (for example an overload the experiment measures on purpose).
    """
    if not isinstance(status, dict) or not isinstance(status.get("points"), list):
        _fail("sweep_outcome", f"expected result_run's answer with a points list, got {status!r}")
    patterns = []
    for pattern in accepted_invalid or []:
        try:
            patterns.append(re.compile(str(pattern)))
        except re.error as exc:
            _fail("sweep_outcome", f"accepted_invalid pattern {pattern!r} is not a regular expression: {exc}")
    points = status["points"]
    total = len(points)
    pending = [p for p in points if not p.get("done")]
    done_invalid = [p for p in points if p.get("done") and p.get("valid") is not True]
    accepted = [p for p in done_invalid
                if p.get("reasons") and all(any(r.search(reason) for r in patterns) for reason in p["reasons"])]
    invalid = [p for p in done_invalid if p not in accepted]
    result = {"invalid": [p["point_id"] for p in invalid], "accepted": [p["point_id"] for p in accepted],
              "pending": [p["point_id"] for p in pending], "total": total}
    if unrecovered:
        names = ", ".join(unrecovered) if isinstance(unrecovered, (list, tuple)) else str(unrecovered)
        result.update(status="unrecovered", message=(
            f"a lab fault was not recovered ({names}); {len(pending)} of {total} points are not measured. Repair it "
            "and run the same command again"))
    elif pending:
        result.update(status="incomplete", message=(
            f"the run is incomplete: {len(pending)} of {total} points are not stored ({_ids(pending)}). Run the same "
            "command again to measure only those"))
    elif invalid:
        first = invalid[0].get("reasons") or ["no reason given"]
        result.update(status="invalid", message=(
            f"the run is complete, but {len(invalid)} of {total} points are invalid ({_ids(invalid)}; the first: "
            f"{_short(first[0])}). Fix the cause and measure them again with -e testbed_remeasure_invalid=true"))
    else:
        note = f" ({len(accepted)} invalid for a reason the experiment accepts)" if accepted else ""
        result.update(status="complete", message=f"every one of the {total} points is a valid measurement{note}")
    result["exit_code"] = EXIT_CODES[result["status"]]
    return result


def exit_status(outcome, refused=None, failed=False, busy=None):
    """``(exit code, sentence)`` of an experiment playbook, or ``(None, None)`` to keep ansible-playbook's own.

    ``outcome`` is the sweep's ``testbed_sweep_outcome`` (None when the sweep did not
    end, e.g. ``--tags plan``); ``refused`` the message of a refused input;
    ``failed`` whether any host failed or was unreachable; ``busy`` the sentence of a
    host another run holds (its lock, before anything changed). A refusal wins, then busy; an
    unrecovered fault or missing points give their code even though a task
    failed (they are why it failed); a complete run, with or without invalid
    points, gives its code only when nothing failed - a failed cleanup keeps
    ansible-playbook's 2.
    """
    if refused:
        return EXIT_CODES["refused"], f"input refused before any host was touched: {_short(refused, 400)}"
    if busy:
        return EXIT_CODES["busy"], f"a host is in use by another run, nothing was changed: {_short(busy, 400)}"
    if not isinstance(outcome, dict) or outcome.get("status") not in EXIT_CODES:
        return None, None
    if outcome["status"] in ("unrecovered", "incomplete") or not failed:
        return EXIT_CODES[outcome["status"]], outcome.get("message", "")
    return None, None
