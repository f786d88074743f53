# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU sampling from ``/proc/stat`` (and cgroup CPU usage) beside a load.

The maths is pure (``parse_proc_stat``, ``cpu_percentages``, ``cgroup_percent``,
``summarize``, ``cpu_window``) so that pytest checks it on real captured snapshots;
``sample()`` is the bounded sampler used by ``library/cpu_sample.py``, with the
clock, the sleep and the file reader injectable.  ``cpu_window`` reads the
continuous sampler's log (roles/cpu_sampler) for one time window.

Percentages follow ``top``/``mpstat``: the jiffies each CPU state gained between
two snapshots divided by all jiffies gained (user, nice, system, idle, iowait,
irq, softirq, steal; guest time is already inside user/nice, so it is not added
again).  ``busy`` = everything but idle and iowait.  A cgroup's percentage is
of ONE CPU, like ``docker stats`` and ``top`` (200 = two CPUs fully used).

The result has the parser shape: ``{tool, source, metrics, valid, reasons,
warnings, details}``.
"""

import math
import os
import re
import time

FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice")
# Fields summed into the total (guest/guest_nice are already counted in user/nice).
TOTAL_FIELDS = FIELDS[:8]
PCT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")

_CPU_LINE = re.compile(r"^(cpu\d*)\s+(\d+(?:\s+\d+)*)\s*$")
_CGROUP_V2_USAGE = re.compile(r"^usage_usec\s+(\d+)\s*$", re.MULTILINE)
# Where a relative cgroup path may live (cgroup v1 hybrid, v1 merged, v2).
CGROUP_LAYOUTS = ("cpuacct", "cpu,cpuacct", "cpuacct,cpu", "", "unified")
MAX_DURATION_S = 86400.0


class SamplingError(ValueError):
    """Unusable input (not /proc/stat, unknown cgroup...); one sentence why."""


# ---------------------------------------------------------------------------
# /proc/stat
# ---------------------------------------------------------------------------

def parse_proc_stat(text, source="/proc/stat"):
    """``{"cpu": {"user": n, ...}, "cpu0": {...}}`` from the text of /proc/stat.

    Fields a (very old) kernel does not print are absent from the dicts.
    """
    if not isinstance(text, str) or not text.strip():
        raise SamplingError(f"{source}: empty, not a /proc/stat snapshot")
    cpus = {}
    for line in text.splitlines():
        match = _CPU_LINE.match(line)
        if match:
            values = [int(v) for v in match.group(2).split()]
            if len(values) < 4:
                raise SamplingError(f"{source}: line {match.group(1)} has {len(values)} fields, expected at least 4")
            cpus[match.group(1)] = dict(zip(FIELDS, values))
    if "cpu" not in cpus:
        raise SamplingError(f"{source}: no aggregate 'cpu' line (truncated, or not /proc/stat?)")
    return cpus


def _as_snapshot(value, source):
    return parse_proc_stat(value, source) if isinstance(value, str) else value


def _total(fields):
    return sum(fields[name] for name in TOTAL_FIELDS if name in fields)


def _line_percentages(before, after, label, warnings):
    deltas = {}
    for name in TOTAL_FIELDS:
        if name in before and name in after:
            delta = after[name] - before[name]
            if delta < 0:
                # iowait (and, on some kernels, idle) may step backwards on NO_HZ kernels.
                warnings.append(f"{label} {name} went backwards by {-delta} jiffies; counted as 0")
                delta = 0
            deltas[name] = delta
    total = sum(deltas.values())
    result = {"total_jiffies": total}
    for name in PCT_FIELDS:
        if name not in deltas or total <= 0:
            result[name + "_pct"] = None
        else:
            result[name + "_pct"] = 100.0 * deltas[name] / total
    if total <= 0 or "idle" not in deltas:
        result["busy_pct"] = None
    else:
        idle = deltas["idle"] + deltas.get("iowait", 0)
        result["busy_pct"] = 100.0 * (total - idle) / total
    return result


def cpu_percentages(before, after):
    """CPU state percentages between two snapshots (text or ``parse_proc_stat`` dicts).

    Returns ``{"all": {...}, "per_cpu": {"cpu0": {...}}, "cpus": n, "warnings": [...]}``
    where each entry has ``user_pct`` … ``steal_pct``, ``busy_pct`` and
    ``total_jiffies``.  A zero-length window gives ``None`` percentages.
    """
    before = _as_snapshot(before, "before")
    after = _as_snapshot(after, "after")
    warnings = []
    result = {"all": _line_percentages(before["cpu"], after["cpu"], "cpu", warnings), "per_cpu": {}}
    names = sorted((n for n in before if n != "cpu"), key=lambda n: int(n[3:]))
    for name in names:
        if name not in after:
            warnings.append(f"{name} disappeared between the snapshots (CPU hot-unplugged?)")
            continue
        result["per_cpu"][name] = _line_percentages(before[name], after[name], name, warnings)
    result["cpus"] = len(result["per_cpu"])
    result["warnings"] = warnings
    return result


def cpu_window_s(before, after, hz=100):
    """Seconds of wall time between two snapshots, from the aggregate jiffies.

    The aggregate line counts every CPU, so the window is total / CPUs / USER_HZ.
    """
    before = _as_snapshot(before, "before")
    after = _as_snapshot(after, "after")
    cpus = len([n for n in after if n != "cpu"]) or 1
    return max(0, _total(after["cpu"]) - _total(before["cpu"])) / float(cpus) / float(hz)


# ---------------------------------------------------------------------------
# cgroups
# ---------------------------------------------------------------------------

def parse_cgroup_usage(text, kind, source="cgroup"):
    """CPU time used by a cgroup, in nanoseconds.

    ``kind`` is ``cpuacct.usage`` (cgroup v1, ns) or ``cpu.stat`` (cgroup v2,
    ``usage_usec`` line).
    """
    if kind == "cpuacct.usage":
        text = (text or "").strip()
        if not re.match(r"^\d+$", text):
            raise SamplingError(f"{source}: cpuacct.usage is {text!r}, expected nanoseconds")
        return int(text)
    if kind == "cpu.stat":
        match = _CGROUP_V2_USAGE.search(text or "")
        if match is None:
            raise SamplingError(f"{source}: cpu.stat has no usage_usec line")
        return int(match.group(1)) * 1000
    raise SamplingError(f"{source}: unknown cgroup usage file {kind!r}")


def resolve_cgroup(spec, root="/sys/fs/cgroup", exists=os.path.exists):
    """Find the usage file of a cgroup: returns ``(path_of_file, kind)``.

    ``spec`` is a cgroup directory (absolute) or a path relative to the
    controller mount, e.g. ``docker/<full container id>``, looked up under
    ``cpuacct/``, ``cpu,cpuacct/``, the v2 root and ``unified/``.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise SamplingError(f"cgroup path {spec!r} is empty")
    if os.path.isabs(spec):
        candidates = [spec]
    else:
        candidates = [os.path.join(root, layout, spec) if layout else os.path.join(root, spec)
                      for layout in CGROUP_LAYOUTS]
    for directory in candidates:
        for kind in ("cpuacct.usage", "cpu.stat"):
            path = os.path.join(directory, kind)
            if exists(path):
                return path, kind
    raise SamplingError(
        "cgroup {} not found: no cpuacct.usage or cpu.stat in {} (is the container running? "
        "docker needs the full id)".format(spec, ", ".join(candidates)))


def cgroup_percent(usage_before_ns, usage_after_ns, window_s):
    """CPU % of one CPU used by a cgroup over ``window_s`` seconds (None if no window)."""
    if window_s is None or window_s <= 0:
        return None
    delta = usage_after_ns - usage_before_ns
    if delta < 0:
        return None
    return 100.0 * delta / 1e9 / window_s


# ---------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------

def _round(value, digits=3):
    if value is None:
        return None
    return round(value, digits)


def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


# ---------------------------------------------------------------------------
# The continuous sampler's log (roles/cpu_sampler)
# ---------------------------------------------------------------------------

def cpu_window(text, start, end, source="cpu"):
    """CPU figures of one host over [start, end] from the continuous sampler's lines.

    ``text`` is what roles/cpu_sampler's ``testbed-cpu-window`` prints: a header
    ``# cpus=N hz=H cgroup=PATH`` (``cgroup=-`` outside a container) and lines
    ``<epoch> <cgroup ns or -> cpu <user> <nice> <system> <idle> ...``; ``start``
    and ``end`` are epochs on the same host's clock. Uses the first and last
    samples inside the window when there are at least two, else the samples just
    around it. Returns a dict with ``busy_pct``, ``system_pct``, ``softirq_pct``,
    ``user_pct`` (of all the host's CPUs), ``cgroup_pct`` (of one CPU; None when
    the host is not a container), ``container``, ``window_s``, ``coverage`` (the
    share of [start, end] the samples span), ``samples`` (inside the window),
    ``cpus``; raises SamplingError when the lines cannot give a window.
    """
    samples = []
    header = {}
    for line in (text or "").replace("\r\n", "\n").split("\n"):
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            for item in line[1:].split():
                key, _sep, value = item.partition("=")
                header[key] = value
            continue
        parts = line.split()
        if len(parts) < 7 or parts[2] != "cpu":
            raise SamplingError("%s: not a sampler line: %r" % (source, line[:80]))
        try:
            stamp = float(parts[0])
            usage = None if parts[1] == "-" else int(parts[1])
        except ValueError:
            raise SamplingError("%s: bad timestamp or cgroup value in %r" % (source, line[:80])) from None
        samples.append((stamp, usage, "cpu  " + " ".join(parts[3:])))
    if len(samples) < 2:
        raise SamplingError("%s: %d sample(s) around the window, need at least 2 (was the sampler running?)"
                            % (source, len(samples)))
    samples.sort(key=lambda item: item[0])
    inside = [s for s in samples if start <= s[0] <= end]
    first, last = (inside[0], inside[-1]) if len(inside) >= 2 else (samples[0], samples[-1])
    window = last[0] - first[0]
    if window <= 0:
        raise SamplingError("%s: the samples around the window have no time between them" % source)
    before = parse_proc_stat(first[2], source)
    after = parse_proc_stat(last[2], source)
    result = cpu_percentages(before, after)["all"]
    cgroup_pct = None
    if first[1] is not None and last[1] is not None:
        cgroup_pct = cgroup_percent(first[1], last[1], window)
    coverage = max(0.0, min(end, last[0]) - max(start, first[0])) / (end - start) if end > start else None
    return {
        "busy_pct": _round(result["busy_pct"]),
        "system_pct": _round(result["system_pct"]),
        "softirq_pct": _round(result["softirq_pct"]),
        "user_pct": _round(result["user_pct"]),
        "cgroup_pct": _round(cgroup_pct),
        "container": header.get("cgroup", "-") != "-",
        "window_s": _round(window),
        "coverage": _round(coverage),
        "samples": len(inside),
        "cpus": int(header["cpus"]) if header.get("cpus", "").isdigit() else None,
    }


def summarize(snapshots, interval_s=None, elapsed_s=None, series_mask=None, cgroups=None, hz=100):
    """Metrics of a list of parsed snapshots (first = start, last = end of window).

    * means are over the whole window (first → last snapshot);
    * maxima and the series are per interval between consecutive snapshots,
      except intervals excluded by ``series_mask`` (a short final interval);
    * ``cgroups`` is ``{name: {"before_ns": n, "after_ns": n, ...}}``.
    """
    result = {"tool": "cpu_sample", "source": "/proc/stat", "metrics": {}, "valid": True,
              "reasons": [], "warnings": [], "details": {}}
    metrics = result["metrics"]
    if len(snapshots) < 2:
        raise SamplingError("need at least two /proc/stat snapshots")
    whole = cpu_percentages(snapshots[0], snapshots[-1])
    for warning in whole["warnings"]:
        if warning not in result["warnings"]:
            result["warnings"].append(warning)
    overall = whole["all"]
    series = []
    for number in range(1, len(snapshots)):
        if series_mask is not None and not series_mask[number - 1]:
            continue
        step = cpu_percentages(snapshots[number - 1], snapshots[number])
        if step["all"]["busy_pct"] is not None:
            series.append(step["all"])
    busy_series = [s["busy_pct"] for s in series]
    softirq_series = [s["softirq_pct"] for s in series if s["softirq_pct"] is not None]

    metrics["cpu_busy_mean_pct"] = _round(overall["busy_pct"])
    metrics["cpu_busy_max_pct"] = _round(max(busy_series)) if busy_series else None
    for name in ("user", "system", "nice", "irq", "softirq", "iowait", "steal"):
        metrics[f"cpu_{name}_mean_pct"] = _round(overall[name + "_pct"])
    metrics["cpu_softirq_max_pct"] = _round(max(softirq_series)) if softirq_series else None
    per_cpu = whole["per_cpu"]
    hottest = max(per_cpu.items(), key=lambda kv: -1 if kv[1]["busy_pct"] is None else kv[1]["busy_pct"],
                  default=(None, None))
    metrics["cpu_hottest_busy_mean_pct"] = _round(hottest[1]["busy_pct"]) if hottest[1] else None
    softest = [v["softirq_pct"] for v in per_cpu.values() if v["softirq_pct"] is not None]
    metrics["cpu_hottest_softirq_mean_pct"] = _round(max(softest)) if softest else None
    metrics["samples"] = len(busy_series)
    window = cpu_window_s(snapshots[0], snapshots[-1], hz=hz)
    metrics["window_s"] = _round(elapsed_s if elapsed_s is not None else window)

    if overall["busy_pct"] is None:
        result["valid"] = False
        result["reasons"].append(
            "no CPU time passed between the first and the last /proc/stat snapshot; the window was too short")
    cgroup_details = {}
    for name, info in sorted((cgroups or {}).items()):
        pct = None
        if info.get("before_ns") is not None and info.get("after_ns") is not None:
            pct = cgroup_percent(info["before_ns"], info["after_ns"], window)
            if pct is None and window > 0:
                result["warnings"].append(f"cgroup {name}: usage went backwards (the group was recreated?)")
        metrics[f"{name}_cpu_pct"] = _round(pct)
        cgroup_details[name] = dict(info, cpu_pct=_round(pct))
        for problem in info.get("problems", []):
            result["warnings"].append(f"cgroup {name}: {problem}")

    result["details"] = {
        "cpus": whole["cpus"],
        "interval_s": interval_s,
        "jiffies_window_s": _round(window),
        "busy_series_pct": [_round(v) for v in busy_series],
        "softirq_series_pct": [_round(v) for v in softirq_series],
        "per_cpu": {name: {k: _round(v) if k.endswith("_pct") else v for k, v in values.items()}
                    for name, values in per_cpu.items()},
        "cgroups": cgroup_details,
    }
    return result


# ---------------------------------------------------------------------------
# The sampler
# ---------------------------------------------------------------------------

def _read_text(path):
    with open(path, "r", encoding="ascii", errors="replace") as handle:
        return handle.read()


def _stop_file_fresh(stop_file, started_wall, getmtime=os.path.getmtime):
    """True when the stop file exists and was touched after the sampler started
    (a stale one left by an earlier point is ignored)."""
    try:
        return getmtime(stop_file) >= started_wall - 0.5
    except OSError:
        return False


def _touch(path):
    """Create or touch ``path`` (the sampler's ready file)."""
    with open(path, "a", encoding="ascii"):
        os.utime(path)


class _Activity(object):
    """Whether the load runs, seen from counters that grow while it does - the bytes
    through the storage node's interface (``/sys/class/net/IF/statistics/rx_bytes``):
    the node cuts the load's window itself, without the clock of another machine."""

    def __init__(self, files, min_rate, idle_s, read_text, clock):
        if isinstance(files, (str, bytes)) or not isinstance(files, (list, tuple)) or not files:
            raise SamplingError(f"active_files must be a non-empty list of counter files, got {files!r}")
        for name, value in (("active_min_rate", min_rate), ("idle_s", idle_s)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
                raise SamplingError(f"{name} must be a number > 0, got {value!r}")
        self.files, self.min_rate, self.idle_s = list(files), float(min_rate), float(idle_s)
        self.read_text, self.clock = read_text, clock
        self.last = (clock(), self._value())
        self.last_active = None

    def _value(self):
        total = 0
        for path in self.files:
            try:
                text = self.read_text(path).strip()
            except OSError as exc:
                raise SamplingError(f"cannot read the counter {path} ({exc})") from exc
            if not re.match(r"^\d+$", text):
                raise SamplingError(f"{path} holds {text[:40]!r}, not a counter (one integer)")
            total += int(text)
        return total

    def poll(self):
        """True while the counters grow at ``min_rate`` per second or more (since the last poll)."""
        now, value = self.clock(), self._value()
        then, before = self.last
        self.last = (now, value)
        active = now > then and (value - before) / (now - then) >= self.min_rate
        if active:
            self.last_active = now
        return active

    def idle(self):
        """The load has run and then stayed below the rate for ``idle_s``."""
        return self.last_active is not None and self.last[0] - self.last_active >= self.idle_s


def _check_window(duration, interval, warmup):
    for name, value in (("duration", duration), ("interval", interval), ("warmup", warmup)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or math.isinf(value):
            raise SamplingError(f"{name} must be a number of seconds, got {value!r}")
    if duration <= 0 or duration > MAX_DURATION_S:
        raise SamplingError(f"duration must be > 0 and <= {MAX_DURATION_S:.0f} s, got {duration!r}")
    if interval <= 0:
        raise SamplingError(f"interval must be > 0 s, got {interval!r}")
    if warmup < 0 or warmup > MAX_DURATION_S:
        raise SamplingError(f"warmup must be between 0 and {MAX_DURATION_S:.0f} s, got {warmup!r}")


def _wait_for_load(activity, stop, deadline, clock, sleep):
    """Poll until the load shows (True), or the stop file or the deadline comes first (False)."""
    while clock() < deadline:
        if activity.poll():
            return True
        if stop():
            return False
        sleep(min(0.2, max(deadline - clock(), 0.0)))
    return False


def sample(duration, interval=1.0, stop_file=None, cgroups=None, warmup=0.0, cgroup_root="/sys/fs/cgroup",
           proc_stat="/proc/stat", read_text=_read_text, clock=time.monotonic, sleep=time.sleep,
           wall=time.time, getmtime=os.path.getmtime, hz=None, active_files=None, active_min_rate=32768.0,
           idle_s=2.0, ready_file=None, touch=_touch):
    """Sample /proc/stat every ``interval`` s for ``duration`` s (after ``warmup`` s),
    or until ``stop_file`` is touched, whichever comes first.  Always bounded:
    it returns within warmup + duration + one read.

    With ``active_files`` (counters that grow while the load runs, summed) the
    window opens when they first grow at ``active_min_rate`` per second and
    closes at the last poll they did, once they have stayed below it for
    ``idle_s``: the window is the load's, as this host saw it (the wait counts
    in ``duration``).  ``ready_file`` is touched once the sampler is watching,
    so the caller starts the load only then.
    """
    _check_window(duration, interval, warmup)
    if hz is None:
        try:
            hz = os.sysconf("SC_CLK_TCK")
        except (ValueError, OSError, AttributeError):
            hz = 100
    warnings = []
    if interval > duration:
        warnings.append(f"interval {interval} s is longer than duration {duration} s; one interval of {duration} s taken")
        interval = duration
    started_wall = wall()
    groups = {}
    for name, spec in sorted((cgroups or {}).items()):
        path, kind = resolve_cgroup(spec, root=cgroup_root)
        groups[name] = {"spec": spec, "file": path, "kind": kind, "problems": []}
    activity = _Activity(active_files, active_min_rate, idle_s, read_text, clock) if active_files else None

    def read_groups(key):
        for info in groups.values():
            try:
                info[key] = parse_cgroup_usage(read_text(info["file"]), info["kind"], info["file"])
            except (OSError, SamplingError) as exc:
                info[key] = None
                info["problems"].append(f"cannot read {info['file']} ({exc})")

    def stopped():
        return bool(stop_file) and _stop_file_fresh(stop_file, started_wall, getmtime)

    if warmup:
        sleep(warmup)
    deadline = clock() + duration
    if ready_file:
        touch(ready_file)
    if activity and not _wait_for_load(activity, stopped, deadline, clock, sleep):
        return _no_load(activity, stopped(), duration, warmup, hz, warnings)
    stopped_by = "duration"
    start = clock()
    snapshots = [(start, parse_proc_stat(read_text(proc_stat), proc_stat))]
    last_active = snapshots[0]
    read_groups("before_ns")
    poll = min(interval, 0.2)
    step_start = start
    while stopped_by == "duration":
        target = min(step_start + interval, deadline)
        while clock() < target:
            if stopped():
                stopped_by = "stop_file"
                break
            if activity and activity.poll():
                last_active = (clock(), parse_proc_stat(read_text(proc_stat), proc_stat))
            elif activity and activity.idle():
                stopped_by = "idle"
                break
            # (a poll that saw the load reads /proc/stat too: the target may have passed meanwhile)
            sleep(max(0.0, min(poll, target - clock()) if (stop_file or activity) else target - clock()))
        if stopped_by == "idle":
            break
        step_start = clock()
        snapshots.append((step_start, parse_proc_stat(read_text(proc_stat), proc_stat)))
        if step_start >= deadline - 1e-6:
            break
    if stopped_by == "idle" and last_active[0] > start:
        # the window ends at the last poll that saw the load, not after the idle time
        snapshots = [snap for snap in snapshots if snap[0] < last_active[0]] + [last_active]
    elif stopped_by == "idle":
        snapshots.append((clock(), parse_proc_stat(read_text(proc_stat), proc_stat)))
        warnings.append(f"the load showed for less than one poll (0.2 s); the window includes {idle_s} s after it")
    read_groups("after_ns")
    for info in groups.values():
        if info.get("before_ns") is not None and info.get("after_ns") is None:
            info["problems"].append("the group vanished during the window (container stopped?)")
    # A short last interval (stop file, idle, or duration not a multiple of interval)
    # counts in the means but not in the per-interval series and maxima.
    times = [snap[0] for snap in snapshots]
    mask = [(times[n] - times[n - 1]) >= 0.5 * interval or n == 1 for n in range(1, len(times))]
    result = summarize([snap[1] for snap in snapshots], interval_s=interval, elapsed_s=times[-1] - start,
                       series_mask=mask, cgroups=groups, hz=hz)
    result["warnings"] = warnings + result["warnings"]
    result["details"].update(stopped_by=stopped_by, duration_s=duration, warmup_s=warmup)
    if activity:
        result["details"]["window"] = "the load's, from " + ", ".join(activity.files)
    if stopped_by == "duration" and stop_file:
        result["warnings"].append(f"stop file {stop_file} did not appear; sampling ran the full {duration} s")
    return result


def _no_load(activity, by_stop_file, duration, warmup, hz, warnings):
    """The result of a sampler whose load never showed: nothing measured, and why."""
    result = {"tool": "cpu_sample", "source": "/proc/stat", "metrics": {}, "valid": False,
              "reasons": [f"the load never showed on {', '.join(activity.files)} (no growth of "
                          f"{activity.min_rate:.0f}/s) before " + ("the stop file" if by_stop_file else
                                                                   f"the {duration} s bound")],
              "warnings": list(warnings),
              "details": {"stopped_by": "stop_file" if by_stop_file else "duration", "duration_s": duration,
                          "warmup_s": warmup, "hz": hz}}
    return result
