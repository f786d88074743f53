# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One measured point of the LVS scheduler comparison, from raw outputs to metrics.

Pure functions (pytest imports them without a host); ``roles/lvs_compare/library/lvs_point.py``
is the thin module that calls :func:`evaluate_point` and stores the result.

A point's raw material:

* per client host, the JSON printed by ``lvs-httperf-run`` (roles/lvs_client):
  every httperf process's report, exit status and start/end times;
* the director's collect output: ``=== ipvsadm-stats`` (``ipvsadm -Ln --stats
  --exact`` read after the IPVS estimator tick, then zeroed) and ``=== cpu``;
* per host, ``=== cpu``: lines of the continuous sampler
  (roles/cpu_sampler) around the load window.

The generic pieces come from the top-level module_utils: the ``=== name``
sections and the controller's time line (clock offsets) from
``testbed_collect``, the sampler's CPU window from ``testbed_sampling``,
Jain's fairness index from ``testbed_stats.fairness``.

Every httperf report is parsed by the project's httperf parser with the
process's own requested rate, so each keeps its validity verdict; the point is
valid only when every process is valid, the processes together achieved the
requested rate, errors stay small and the director's counters could be read.
"""

from __future__ import absolute_import, division, print_function

import json

from ansible.module_utils.testbed_collect import (
    CollectError,
    normalize_offsets,
    sections,
    to_controller_time,
    to_host_time,
)
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_httperf import parse as parse_httperf
from ansible.module_utils.testbed_parse_ipvsadm import parse as parse_ipvsadm
from ansible.module_utils.testbed_sampling import SamplingError, cpu_window
from ansible.module_utils.testbed_stats.fairness import jain
from ansible.module_utils.testbed_timetable import boundary_problems
from ansible.module_utils.testbed_watchdog import watchdog_reason

# Counters summed over processes; rates summed; per-reply averages weighted by replies.
SUM_METRICS = (
    "connections", "requests", "replies", "errors_total", "errors_client_timo", "errors_socket_timo",
    "errors_connrefused", "errors_connreset", "errors_fd_unavail", "errors_addrunavail", "errors_ftab_full",
    "errors_other", "status_1xx", "status_2xx", "status_3xx", "status_4xx", "status_5xx",
    "connection_rate_per_s", "request_rate_per_s", "replies_per_s_derived", "net_io_kb_s", "net_io_bps",
)
SUM_IF_ALL = ("reply_rate_avg_per_s", "reply_rate_min_per_s", "reply_rate_max_per_s")
WEIGHTED_BY_REPLIES = ("response_time_ms", "transfer_time_ms", "connection_time_ms", "connect_time_ms",
                       "connection_time_median_ms", "reply_size_total_bytes")
MAX_METRICS = (("connection_time_max_ms", "connection_time_max_ms"), ("test_duration_s", "test_duration_s"),
               ("max_concurrent_connections", "max_concurrent_connections"),
               ("client_cpu_total_pct", "httperf_cpu_max_pct"))
MIN_METRICS = (("connection_time_min_ms", "connection_time_min_ms"),)


class PointError(ValueError):
    """Unusable module input (not a measurement problem); one sentence why."""


def _round(value, digits=3):
    return None if value is None else round(value, digits)


# ---------------------------------------------------------------------------
# httperf
# ---------------------------------------------------------------------------

def aggregate_httperf(results, requested_rate):
    """Combine per-process httperf results (list of (label, parse result)).

    Sums counters and rates, weights per-reply averages by replies, takes the
    maximum of durations, concurrency and client CPU. ``requested_rate`` is the
    point's total.
    """
    metrics = {}
    parsed = [m for _label, r in results for m in [r["metrics"]]]
    for name in SUM_METRICS:
        values = [m.get(name) for m in parsed]
        metrics[name] = None if any(v is None for v in values) else sum(values)
    for name in SUM_IF_ALL:
        values = [m.get(name) for m in parsed]
        metrics[name] = None if not values or any(v is None for v in values) else sum(values)
    replies = [m.get("replies") or 0 for m in parsed]
    for name in WEIGHTED_BY_REPLIES:
        pairs = [(m.get(name), r) for m, r in zip(parsed, replies) if m.get(name) is not None and r > 0]
        weight = sum(r for _v, r in pairs)
        metrics[name] = sum(v * r for v, r in pairs) / weight if weight else None
    for source, target in MAX_METRICS:
        values = [m.get(source) for m in parsed if m.get(source) is not None]
        metrics[target] = max(values) if values else None
    for source, target in MIN_METRICS:
        values = [m.get(source) for m in parsed if m.get(source) is not None]
        metrics[target] = min(values) if values else None
    metrics["requested_rate_per_s"] = float(requested_rate)
    achieved = metrics["connection_rate_per_s"]
    metrics["achieved_rate_pct"] = 100.0 * achieved / requested_rate if achieved is not None else None
    connections = metrics["connections"]
    metrics["error_pct"] = (100.0 * metrics["errors_total"] / connections
                            if connections and metrics["errors_total"] is not None else None)
    metrics["httperf_processes"] = len(parsed)
    for name, value in list(metrics.items()):
        if isinstance(value, float):
            metrics[name] = round(value, 4)
    return metrics


# ---------------------------------------------------------------------------
# The point
# ---------------------------------------------------------------------------

def _decode_runner(host, text):
    if not text or not text.strip():
        raise PointError("no output from the load runner")
    try:
        doc = json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        raise PointError("the load runner's output is not its JSON document (%s): %r" % (exc, text.strip()[:200])) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("processes"), list):
        raise PointError("the load runner's JSON has no processes list")
    return doc


def made_any(metrics):
    return bool(metrics.get("connections"))


def evaluate_point(clients, collect, real_servers, vip, port, requested_rate, num_conns,
                   min_rate_ratio=0.9, max_error_pct=1.0, max_client_cpu_pct=95.0,
                   director_counters=None, counters_zeroed_at=None, clock_offsets=None, read_after=None,
                   next_start=None, tick_period=2.0, switch_to=None, watchdog=None):
    """Metrics, verdict and raw material of one point.

    ``clients``: [{host, stdout, failed, msg}] (the load runner's output per client host);
    ``collect``: {host: {role, stdout, failed, msg}} (collect output per host; role is
    director, real_server or client); ``real_servers``: [{host, address, port, weight}].
    ``director_counters``: the director's counter read for this point (sections
    ``ipvsadm-stats`` / ``zeroed-at``, optionally prefixed ``prev-``) when it was read
    separately from ``collect`` (a sweep reads it in the background, after the IPVS
    estimator tick, while the next point runs); else the director's ``collect`` entry
    holds it. ``counters_zeroed_at``: when the counters were last zeroed before this
    point (epoch, the director's clock); later than the load's start means early
    connections went uncounted. ``clock_offsets``: {host: {offset_s, uncertainty_s}}
    (or {host: offset_s}), each host's clock minus the controller's (the
    clock_offset action); every time is put on the controller's time line with it
    before windows are cut or compared. Hosts not listed count as in step.
    ``read_after`` (controller time): set when the counter read was started
    during the load (a timetable on the estimator's tick), to the time it
    waited for; ``next_start``: when the next load was set to start (None when
    none was launched before this read); ``tick_period``: the estimator's
    period. Then ``retry`` lists what makes the counts inexact (the load ended
    after the tick its counts were read after, the next load started before
    it, the zeroing came after the following tick; module_utils/testbed_timetable):
    such a point, and the next one, are measured again, not stored.
    ``switch_to``: the scheduler the same read switched the director to after
    reading (the next segment's first load was launched during this one);
    ``retry_next`` says why that next point is not its scheduler's when the
    switch failed or came after the next load started (only that point is
    measured again: this one's counts were read before the switch).
    ``watchdog``: the sweep's watchdog finding when it stopped this load (a real server went silent
    during it): the first reason, ``the watchdog <finding>``; nothing is measured again for the timetable.
    Returns a dict: metrics, valid, reasons, warnings, sources, raw, started, finished,
    load_seconds, details, retry, retry_next.
    """
    if not isinstance(clients, list) or not clients:
        raise PointError("clients must be a non-empty list of {host, stdout} (the load runner's output per client)")
    if not isinstance(real_servers, list) or not real_servers:
        raise PointError("real_servers must be a non-empty list of {host, address, port, weight}")
    if not requested_rate or requested_rate <= 0:
        raise PointError("requested_rate must be above 0 conn/s, got %r" % (requested_rate,))
    try:
        offsets, uncertainty = normalize_offsets(clock_offsets)
    except CollectError as exc:
        raise PointError(str(exc)) from None
    # What every step adds to: the point as it is being evaluated.
    point = {"metrics": {}, "reasons": [], "warnings": [], "raw": {}, "sources": {}, "offsets": offsets,
             "details": {"real_servers": {}, "cpu": {}, "timetable": None,
                         "clock": {host: {"offset_s": offsets[host], "uncertainty_s": uncertainty[host]}
                                   for host in sorted(offsets)}}}
    results, total_processes = _client_loads(point, clients, min_rate_ratio, max_error_pct, max_client_cpu_pct)
    started, finished = point["started"], point["finished"]
    _load_metrics(point, results, requested_rate, num_conns, len(clients))
    director = next((h for h in sorted(collect or {}) if (collect[h] or {}).get("role") == "director"), None)
    retry, retry_next = [], []
    if read_after is not None:
        director_output = (director_counters if director_counters is not None
                           else (collect.get(director) or {}).get("stdout") if director else None)
        retry, point["details"]["timetable"] = _timetable_problems(
            director_output, offsets.get(director), float(read_after), finished, next_start, tick_period)
        if switch_to:
            retry_next = _switch_problems(director_output, offsets.get(director), switch_to, next_start,
                                          point["details"]["timetable"])
    if counters_zeroed_at is not None:
        # Both times on the controller's time line; only a lateness beyond what the
        # clock offsets' errors allow counts.
        late = to_controller_time(counters_zeroed_at, offsets.get(director)) - started
        slack = uncertainty.get(director, 0.0) + max([uncertainty.get(c.get("host"), 0.0) for c in clients] or [0.0])
        if late > slack:
            point["reasons"].append(
                "the director's counters were zeroed %.2f s after this point's load had started (the previous "
                "point's counter read came late), so its first connections were not counted" % late)
    _load_verdict(point, results, total_processes, requested_rate, min_rate_ratio, max_error_pct)
    if watchdog:
        point["reasons"].insert(0, watchdog_reason(watchdog))
        retry = retry_next = []
    _ipvs_counters(point, collect, director_counters, real_servers, vip, port)
    _cpu_windows(point, collect)
    metrics = point["metrics"]
    return {
        "metrics": metrics,
        "reasons": point["reasons"],
        "warnings": point["warnings"],
        "sources": point["sources"],
        "raw": point["raw"],
        "started": started,
        "finished": finished,
        "load_seconds": round(finished - started, 3),
        "details": point["details"],
        # Inexact only when the director's count differs from httperf's too: a boundary the clocks put
        # on the wrong side by their uncertainty, or one no connection crossed, changes nothing.
        "retry": retry if retry and (metrics.get("ipvs_conns_total") is None
                                     or metrics.get("ipvs_conns_total") != metrics.get("connections")) else [],
        "retry_next": retry_next,
    }


def _client_loads(point, clients, min_rate_ratio, max_error_pct, max_client_cpu_pct):
    """Every client's load runner output, parsed: ``(results, processes)``; sets the load window."""
    reasons, raw, sources, offsets = point["reasons"], point["raw"], point["sources"], point["offsets"]
    results, starts, ends = [], [], []
    total_processes = 0
    for client in clients:
        host = client.get("host") or "?"
        if client.get("failed") or client.get("unreachable"):
            reasons.append("load client %s failed: %s" % (host, client.get("msg") or "no message"))
            continue
        try:
            doc = _decode_runner(host, client.get("stdout"))
        except PointError as exc:
            reasons.append("load client %s: %s" % (host, exc))
            continue
        if doc.get("stopped_after_s") is not None:
            reasons.append("the load runner on %s was stopped (SIGTERM) %.1f s after the load started"
                           % (host, float(doc["stopped_after_s"])))
        # The runner's times are the client's clock; put them on the controller's.
        starts.append(to_controller_time(doc["started"], offsets.get(host)))
        ends.append(to_controller_time(doc["finished"], offsets.get(host)))
        for proc in doc["processes"]:
            total_processes += 1
            label = "httperf.%s.%s" % (host, proc.get("index"))
            raw[label + ".txt"] = proc.get("stdout") or ""
            if proc.get("stderr"):
                raw[label + ".stderr"] = proc["stderr"]
            try:
                result = parse_httperf(proc.get("stdout") or "", source="%s process %s" % (host, proc.get("index")),
                                       requested_rate=proc.get("rate_per_s"), min_rate_ratio=min_rate_ratio,
                                       max_client_cpu_pct=max_client_cpu_pct, max_error_pct=max_error_pct)
            except ParseError as exc:
                reasons.append("%s exited %s and its report is unusable: %s" % (label, proc.get("rc"), exc))
                continue
            if proc.get("rc") not in (0, None):
                result["valid"] = False
                result["reasons"].append("httperf exited with status %s" % proc.get("rc"))
            sources[label] = result
            results.append((label, result))
    if not starts:
        raise PointError("no load client produced a result: " + "; ".join(reasons))
    point["started"], point["finished"] = min(starts), max(ends)
    return results, total_processes


def _load_metrics(point, results, requested_rate, num_conns, client_hosts):
    """The load's metrics: httperf's, summed over its processes."""
    if results:
        metrics = aggregate_httperf(results, requested_rate)
    else:
        metrics = {"requested_rate_per_s": float(requested_rate)}
        point["reasons"].append("no httperf report could be parsed")
    metrics["num_conns"] = num_conns
    metrics["client_hosts"] = client_hosts
    metrics["load_seconds"] = round(point["finished"] - point["started"], 3)
    point["metrics"] = metrics


def _load_verdict(point, results, total_processes, requested_rate, min_rate_ratio, max_error_pct):
    """Why the load's numbers cannot be trusted, the primary cause first."""
    metrics, reasons = point["metrics"], point["reasons"]
    if results and len(results) < total_processes:
        reasons.append("%d of %d httperf processes gave no usable report; the totals are incomplete"
                       % (total_processes - len(results), total_processes))
    # The primary cause first: no reply, or most connections failed, without any
    # client-resource error means the service (or the path to it) did not answer.
    client_limits = sum(metrics.get(k) or 0 for k in ("errors_fd_unavail", "errors_addrunavail", "errors_ftab_full"))
    conns, replies = metrics.get("connections") or 0, metrics.get("replies")
    error_pct = metrics.get("error_pct")
    if results and not client_limits and conns and (replies == 0 or (error_pct or 0) >= 50.0):
        reasons.insert(0, "the service did not answer: %d of %d connections failed (client-timo %d, connrefused %d, "
                          "connreset %d) and %s replies came back, with no client-resource error"
                       % (metrics.get("errors_total") or 0, conns, metrics.get("errors_client_timo") or 0,
                          metrics.get("errors_connrefused") or 0, metrics.get("errors_connreset") or 0, replies))
    achieved = metrics.get("connection_rate_per_s")
    if achieved is not None and achieved < min_rate_ratio * requested_rate:
        reasons.append("the processes together achieved %.1f conn/s, %.1f %% of the requested %s conn/s "
                       "(below min_rate_ratio %s)" % (achieved, 100.0 * achieved / requested_rate,
                                                      requested_rate, min_rate_ratio))
    errors = metrics.get("error_pct")
    if errors is not None and errors > max_error_pct:
        reasons.append("errors dominate: %.2f %% of the connections failed (max_error_pct %s %%)"
                       % (errors, max_error_pct))


def _director_stats_text(point, collect, director_counters):
    """The director's ``ipvsadm -Ln --stats --exact`` text for this point, or None (with the reason)."""
    reasons = point["reasons"]
    director = [h for h, c in collect.items() if c.get("role") == "director"]
    if director_counters is not None:
        found = sections(director_counters)
        stats_text = found.get("ipvsadm-stats") or found.get("prev-ipvsadm-stats")
        if not stats_text:
            reasons.append("the director's counters were not read (no ipvsadm-stats in its output: %r)"
                           % director_counters.strip()[:200])
        return stats_text
    if not director:
        reasons.append("no director output: the IPVS counters were not read")
        return None
    entry = collect[director[0]]
    if entry.get("failed") or entry.get("unreachable"):
        reasons.append("the director %s could not be read: %s" % (director[0], entry.get("msg") or "no message"))
        return None
    stats_text = sections(entry.get("stdout")).get("ipvsadm-stats")
    if not stats_text:
        reasons.append("the director's output has no ipvsadm-stats section")
    return stats_text


def _ipvs_counters(point, collect, director_counters, real_servers, vip, port):
    """The IPVS counters of the virtual service: totals, per real server, fairness."""
    metrics, reasons, warnings = point["metrics"], point["reasons"], point["warnings"]
    # Every point carries the same metric names (null when not measured).
    for name in ("ipvs_conns_total", "ipvs_in_packets", "ipvs_out_packets", "ipvs_in_bytes", "ipvs_out_bytes",
                 "fairness_jain", "fairness_jain_weighted", "ipvs_conns_max_share_pct", "director_cpu_busy_pct",
                 "director_cpu_system_pct", "director_cpu_softirq_pct"):
        metrics[name] = None
    for rs in real_servers:
        metrics["ipvs_conns_%s" % (rs.get("host") or rs.get("address"))] = None
    stats_text = _director_stats_text(point, collect, director_counters)
    if not stats_text:
        return
    point["raw"]["ipvsadm-stats.txt"] = stats_text
    try:
        ipvs = parse_ipvsadm(stats_text, source="director ipvsadm -Ln --stats --exact", mode="stats")
    except ParseError as exc:
        reasons.append(str(exc))
        return
    point["sources"]["ipvsadm"] = ipvs
    service = None
    for svc in ipvs["details"]["services"]:
        if svc.get("address") == vip and svc.get("port") == int(port):
            service = svc
    if service is None:
        reasons.append("the director's table has no virtual service %s:%s" % (vip, port))
        return
    by_addr = {(r["address"], r["port"]): r for r in service["real_servers"]}
    conns, weighted = [], []
    for rs in real_servers:
        found = by_addr.get((rs["address"], int(rs.get("port") or port)))
        name = rs.get("host") or rs["address"]
        if found is None:
            warnings.append("real server %s (%s) is not in the director's table" % (name, rs["address"]))
            metrics["ipvs_conns_%s" % name] = None
            continue
        metrics["ipvs_conns_%s" % name] = found["conns"]
        point["details"]["real_servers"][name] = {k: found[k] for k in ("conns", "inpkts", "outpkts", "inbytes", "outbytes")}
        conns.append(found["conns"])
        weight = float(rs.get("weight") or 1)
        if weight > 0:
            weighted.append(found["conns"] / weight)
    totals = service.get("totals") or {}
    metrics["ipvs_conns_total"] = totals.get("conns")
    metrics["ipvs_in_packets"] = totals.get("inpkts")
    metrics["ipvs_out_packets"] = totals.get("outpkts")
    metrics["ipvs_in_bytes"] = totals.get("inbytes")
    metrics["ipvs_out_bytes"] = totals.get("outbytes")
    metrics["fairness_jain"] = _round(jain(conns), 4) if conns else None
    metrics["fairness_jain_weighted"] = _round(jain(weighted), 4) if weighted else None
    if conns and sum(conns) > 0:
        metrics["ipvs_conns_max_share_pct"] = _round(100.0 * max(conns) / sum(conns))
    elif made_any(metrics):
        reasons.append("the director counted no connection to any real server although httperf made "
                       "%s: the load did not go through this virtual service" % metrics.get("connections"))
    made = metrics.get("connections")
    total = totals.get("conns")
    if made and total is not None and abs(total - made) > max(5, 0.02 * made):
        warnings.append("the director counted %s connections, httperf made %s: %s"
                        % (total, made, "some bypassed or predate the point (counters not zeroed?)"
                           if total > made else "client ports reused IPVS entries still in TIME_WAIT, "
                           "or connections never reached the director"))


def _cpu_windows(point, collect):
    """Each host's CPU over the load window (its own clock), per role."""
    metrics, warnings, offsets = point["metrics"], point["warnings"], point["offsets"]
    started, finished = point["started"], point["finished"]
    role_values = {"real_server": [], "client": []}
    machine = None
    for host in sorted(collect):
        entry = collect[host]
        role = entry.get("role")
        if entry.get("failed") or entry.get("unreachable"):
            warnings.append("no CPU samples from %s (%s): %s" % (host, role, entry.get("msg") or "no message"))
            continue
        found = sections(entry.get("stdout"))
        text = found.get("cpu") or found.get("prev-cpu")
        if not text:
            warnings.append("no CPU samples from %s (%s): its output has no cpu section" % (host, role))
            continue
        point["raw"]["cpu.%s.txt" % host] = text
        try:
            # The samples carry the host's own clock.
            cpu = cpu_window(text, to_host_time(started, offsets.get(host)), to_host_time(finished, offsets.get(host)),
                             source="%s CPU samples" % host)
        except SamplingError as exc:
            warnings.append(str(exc))
            continue
        point["details"]["cpu"][host] = cpu
        if cpu["coverage"] is not None and cpu["coverage"] < 0.8:
            warnings.append("%s CPU samples cover only %.0f %% of the load window" % (host, 100 * cpu["coverage"]))
        if role == "director":
            metrics["director_cpu_busy_pct"] = cpu["busy_pct"]
            metrics["director_cpu_system_pct"] = cpu["system_pct"]
            metrics["director_cpu_softirq_pct"] = cpu["softirq_pct"]
            if cpu["container"]:
                metrics["director_cgroup_cpu_pct"] = cpu["cgroup_pct"]
            continue
        if cpu["container"]:
            # A container: /proc/stat is the whole machine's; its own share is the cgroup's.
            metrics["cpu_%s_cgroup_pct" % host] = cpu["cgroup_pct"]
            if machine is None:
                machine = cpu["busy_pct"]
            value = cpu["cgroup_pct"]
        else:
            metrics["cpu_%s_busy_pct" % host] = cpu["busy_pct"]
            value = cpu["busy_pct"]
        if role in role_values and value is not None:
            role_values[role].append(value)
    if machine is not None:
        metrics["lab_machine_cpu_busy_pct"] = machine
    for role, label in (("real_server", "real_servers"), ("client", "clients")):
        values = role_values[role]
        metrics["%s_cpu_max_pct" % label] = _round(max(values)) if values else None
        metrics["%s_cpu_mean_pct" % label] = _round(sum(values) / len(values)) if values else None


def _timetable_problems(director_output, offset, read_after, finished, next_start, period):
    """What makes a timetabled read inexact, from the director's read output: (problems, details)."""
    found = sections(director_output or "")
    problems = _boundary(found, offset, read_after, finished, next_start, period)

    def text(name):
        return (found.get(name) or found.get("prev-" + name) or "").strip() or None
    return problems, {"read_after": round(read_after, 3), "next_start": next_start, "load_end": round(finished, 3),
                      "tick_at_director": text("tick-at"), "zeroed_at_director": text("zeroed-at"),
                      "settled": text("settled"), "period_s": period}


def _switch_problems(director_output, offset, scheduler, next_start, timetable):
    """Why the load after a read that switched the scheduler is not that scheduler's ([] when it is)."""
    found = sections(director_output or "")
    if not (found.get("ipvsadm-stats") or found.get("prev-ipvsadm-stats")):
        return []          # not read at all: this point's own verdict says so
    text = (found.get("switched-at") or "").strip()
    timetable["switch_to"] = scheduler
    timetable["switched_at_director"] = text or None
    if not text:
        answer = " ".join((found.get("switch") or "no answer").split())[:200]
        return ["the director's switch to %s failed (%s)" % (scheduler, answer)]
    try:
        switched = to_controller_time(float(text.split()[0]), offset)
    except ValueError:
        return ["the director's switch to %s printed no time (%r)" % (scheduler, text[:80])]
    if next_start is not None and switched > float(next_start):
        return ["the director switched to %s %.2f s after the next load started" % (scheduler, switched - float(next_start))]
    return []


def _boundary(found, offset, read_after, finished, next_start, period):

    def when(name):
        text = (found.get(name) or found.get("prev-" + name) or "").strip()
        try:
            return to_controller_time(float(text.split()[0]), offset) if text else None
        except ValueError:
            return None
    zeroed = when("zeroed-at")
    if not (found.get("ipvsadm-stats") or found.get("prev-ipvsadm-stats")):
        return []          # not read at all: the verdict says so, a retry would not help
    tick = when("tick-at")
    if tick is None:
        # No tick seen (the read waited one full period after read_after instead): exact when
        # the load had ended by read_after and the next load started after the read.
        problems = []
        if finished > read_after:
            problems.append("the load ended %.2f s after the counter read was due, and no estimator tick was "
                            "seen" % (finished - read_after))
        if next_start is not None and zeroed is not None and next_start <= zeroed:
            problems.append("the next load started %.2f s before the counters were read, and no estimator tick "
                            "was seen" % (zeroed - next_start))
        return problems
    return boundary_problems(finished, tick, next_start, zeroed, float(period or 2.0))


def summary_line(label, metrics, valid, reasons):
    """One progress line: '<label>: valid, 199.8 of 200 conn/s, 1.2 ms, 0 errors, Jain 0.999, director CPU 31 %'."""
    def fmt(value, pattern):
        return "n/a" if value is None else pattern % value
    text = "%s: %s, %s of %s conn/s, response %s, %s errors, Jain %s, director CPU %s" % (
        label, "valid" if valid else "INVALID", fmt(metrics.get("connection_rate_per_s"), "%.1f"),
        fmt(metrics.get("requested_rate_per_s"), "%g"), fmt(metrics.get("response_time_ms"), "%.1f ms"),
        fmt(metrics.get("errors_total"), "%d"), fmt(metrics.get("fairness_jain"), "%.3f"),
        fmt(metrics.get("director_cpu_busy_pct"), "%.0f %%"))
    if not valid and reasons:
        text += " - " + reasons[0]
    return text
