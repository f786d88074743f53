# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the LVS experiment role (roles/lvs_compare).

What a sweep step needs from the hosts' last answers, in tested Python rather
than Jinja loops (tests/unit/test_filters_lvs.py):

* ``lvs_real_servers``: the real servers from the inventory (address = host
  var ``lvs_rip``, required; weight = ``lvs_weight``, default 1);
* ``lvs_loads``: the load axis of the plan (rate and the connection count
  derived from it);
* ``lvs_role_of``: each host's role in the experiment;
* ``lvs_clock_offsets``: each host's clock offset from the controller;
* ``lvs_host_results``: every host's answer to one raw step;
* ``lvs_load_window``: [first httperf start, last end] over the clients, on
  the controller's time line;
* ``lvs_collect_command``: the shell line a host runs to print what the
  previous point left (director counters, CPU samples of its load window);
* ``lvs_read_command``: the director's counter read of a point
  (roles/lvs_director's lvs-director-read), started during its load and left
  running (the timetable); ``lvs_tick_command``: the director's look at one tick;
* ``lvs_step``: the hooks' state after one event - the timetable's control
  flow, one pure function (module_utils/testbed_lvs_step.py);
  ``lvs_launched_ahead``, ``lvs_wait_next_started``: what the segment and
  health hooks read from that state;
* ``lvs_clock_note``: the report's sentence on clock offsets and drift;
* ``lvs_study_reference``: the study's cells of one metric as the report
  pivot's reference (``lvs_compare_study_cells``);
* ``lvs_in_flight``: the points whose load ran but that are not stored yet,
  as the sweep stores them when a lab fault finds them in flight;
* ``lvs_hand_commands``: the httperf command lines the load runner
  (roles/lvs_client, ``lvs-httperf-run``) runs on one client for a point, for
  the fidelity check's run by hand (tasks/fidelity_pair.yml);
  ``lvs_hand_result``: those runs' reports, parsed and added up;
  ``lvs_fidelity_pair``: one ``[hand, harness]`` pair of the fidelity check.
"""

import ipaddress
import json
import math
import os
import re
import shlex

try:
    from ansible.errors import AnsibleFilterError
except ImportError:  # pragma: no cover - only without ansible
    class AnsibleFilterError(Exception):
        pass

# One import convention (docs/architecture.md, "Python imports"): pure shared
# libraries live in a module_utils/ folder - the repository's, or a role's own -
# and are imported as ansible.module_utils.<name>, the name Ansible gives them in a
# module. On the controller every module_utils/ folder one to three levels above
# this file is put on that package's path; a collection build rewrites the imports.
import ansible.module_utils  # noqa: E402

for _up in (1, 2, 3):
    _dir = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * _up, "module_utils"))
    if os.path.isdir(_dir) and _dir not in ansible.module_utils.__path__:
        ansible.module_utils.__path__.append(_dir)

from ansible.module_utils.testbed_collect import sections, to_controller_time, to_host_time  # noqa: E402
from ansible.module_utils.testbed_lvs import aggregate_httperf  # noqa: E402
from ansible.module_utils.testbed_lvs_step import StepError, in_flight, launched_ahead, step, until  # noqa: E402
from ansible.module_utils.testbed_parse import ParseError  # noqa: E402
from ansible.module_utils.testbed_parse_httperf import parse as parse_httperf  # noqa: E402
from ansible.module_utils.testbed_parse_httperf import processes_per_host  # noqa: E402
from ansible.module_utils.testbed_stats.fidelity import fidelity_value  # noqa: E402
from ansible.module_utils.testbed_watchdog import watchdog_reason  # noqa: E402

ROLES = (("lvs_director", "director"), ("lvs_real_servers", "real_server"), ("lvs_clients", "client"))


def _fail(name, message):
    raise AnsibleFilterError(f"{name}: {message}")


def _number(name, value, what):
    if isinstance(value, bool):
        _fail(name, f"{what} must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        _fail(name, f"{what} must be a number, got {value!r}")
    if not math.isfinite(number):
        _fail(name, f"{what} must be a finite number, got {value!r}")
    return number


def lvs_real_servers(hosts, hostvars, port=80):
    """``[{host, address, port, weight}]`` of the real servers.

    The address is the host var ``lvs_rip`` (the real server's address on the
    director's private network); a real server without it is an error, never
    a fallback to its management address.
    """
    fname = "lvs_real_servers"
    out = []
    for host in hosts or []:
        facts = hostvars[host]
        rip = facts.get("lvs_rip") if hasattr(facts, "get") else None
        if not rip:
            _fail(fname, f"real server {host} has no lvs_rip (its address on the director's private network); "
                         "set it in the inventory, e.g. `lvs-web1: {lvs_rip: 10.250.2.11}`")
        try:
            ipaddress.ip_address(str(rip))
        except ValueError:
            _fail(fname, f"real server {host}: lvs_rip must be an IP address, got {rip!r}")
        weight = facts.get("lvs_weight", 1)
        if isinstance(weight, bool) or _number(fname, weight, f"{host}'s lvs_weight") != int(float(weight)) \
                or int(float(weight)) < 0:
            _fail(fname, f"real server {host}: lvs_weight must be a whole number >= 0, got {weight!r}")
        out.append({"host": host, "address": str(rip), "port": int(_number(fname, port, "port")),
                    "weight": int(float(weight))})
    return out


def lvs_loads(rates, run_seconds=None, num_conns=20000):
    """The load axis: ``[{rate, num_conns}]``; num_conns = rate x run_seconds when that is set."""
    fname = "lvs_loads"
    if isinstance(rates, (str, bytes)) or not isinstance(rates, (list, tuple)) or not rates:
        _fail(fname, f"rates must be a non-empty list of connection rates, got {rates!r}")
    out = []
    for rate in rates:
        value = _number(fname, rate, "every rate")
        if value <= 0 or value != int(value):
            _fail(fname, f"every rate must be a whole number of connections/s > 0, got {rate!r}")
        if run_seconds not in (None, "", 0):
            conns = int(round(value * _number(fname, run_seconds, "run_seconds")))
        else:
            conns = int(_number(fname, num_conns, "num_conns"))
        if conns < 1:
            _fail(fname, f"a point needs at least one connection (rate {rate}, run_seconds {run_seconds})")
        out.append({"rate": int(value), "num_conns": conns})
    return out


def lvs_point_seconds(loads):
    """Mean seconds one point's load lasts (connections / rate), for the plan's estimate."""
    if not loads:
        _fail("lvs_point_seconds", "loads must be a non-empty list of {rate, num_conns}")
    return sum(float(x["num_conns"]) / float(x["rate"]) for x in loads) / len(loads)


def lvs_role_of(groups):
    """``{host: director | real_server | client}`` from the inventory groups."""
    out = {}
    for group, role in ROLES:
        for host in (groups or {}).get(group, []):
            out[host] = role
    return out


def lvs_clock_offsets(hostvars, hosts, var="lvs_compare_clock"):
    """``{host: {offset_s, uncertainty_s}}`` of the hosts whose clock offset was measured."""
    out = {}
    for host in hosts:
        clock = hostvars[host].get(var) if hasattr(hostvars[host], "get") else None
        if isinstance(clock, dict) and clock.get("offset_s") is not None:
            out[host] = {"offset_s": float(clock["offset_s"]), "uncertainty_s": float(clock.get("uncertainty_s") or 0)}
    return out


def lvs_host_results(hostvars, role_of, var, only=None):
    """Every host's answer to one raw step: ``{host: {host, role, stdout, failed, msg}}``.

    ``only`` keeps the hosts of one role (e.g. ``client``).
    """
    out = {}
    for host, role in role_of.items():
        if only is not None and role != only:
            continue
        step = hostvars[host].get(var) if hasattr(hostvars[host], "get") else None
        step = step if isinstance(step, dict) else {}
        failed = step.get("rc", 1) != 0 or bool(step.get("unreachable")) or not step
        out[host] = {"host": host, "role": role, "stdout": step.get("stdout") or "", "failed": failed,
                     "msg": " ".join(str(x) for x in (step.get("msg") or "", step.get("stderr") or "")).strip()}
    return out


def lvs_load_window(clients, offsets, now=None):
    """[first httperf start, last end] of a point over all clients, on the controller's time line.

    ``clients`` is ``lvs_host_results`` of the clients' run step (the runner
    prints ``{"started": .., "finished": ..}``); ``offsets`` the clock offsets.
    Without any client time it is ``[now, now]``.
    """
    starts, ends = [], []
    for host, result in (clients or {}).items():
        try:
            doc = json.loads(result.get("stdout") or "")
            start, end = float(doc["started"]), float(doc["finished"])
        except (ValueError, KeyError, TypeError):
            continue
        offset = (offsets or {}).get(host, {}).get("offset_s")
        starts.append(to_controller_time(start, offset))
        ends.append(to_controller_time(end, offset))
    if not starts:
        if now is None:
            _fail("lvs_load_window", "no client reported its start and end, and no fallback time was given")
        return [float(now), float(now)]
    return [min(starts), max(ends)]


def lvs_collect_command(prev, is_director, offset, paths):
    """The shell line that prints what the previous point left on this host.

    The director reads its counters once the IPVS estimator has ticked after
    that load (``--after <end>``, shifted into its clock and past the offset's
    uncertainty) and zeroes them - or, when its read was started during the
    load (the timetable: ``read_file``), prints what that read wrote; every
    host prints its CPU samples of the load window (``=== prev-cpu``). Empty
    when no point waits. ``paths``: ``{stats, window, samples}`` - the
    director's lvs-director-stats and the CPU sampler's window command and
    samples file (roles/lvs_compare/vars: ``__lvs_compare_paths``).
    """
    if not prev:
        return ""
    offset = offset or {}
    shift = offset.get("offset_s")
    margin = float(offset.get("uncertainty_s") or 0.0)
    start, end = to_host_time(prev["start"], shift), to_host_time(prev["end"], shift)
    parts = []
    if is_director and prev.get("read_file"):
        # The read was started during the load (lvs_read_command): wait for its file, print it.
        read_file = shlex.quote(str(prev["read_file"]))
        wait = int(float(prev.get("read_wait_s") or 60) * 10)
        return (f"i=0; while [ ! -f {read_file} ] && [ \"$i\" -lt {wait} ]; do sleep 0.1; i=$((i+1)); done; "
                f"if [ -f {read_file} ]; then cat {read_file}; rm -f {read_file}; "
                f"else echo 'lvs-compare: no counter read in {prev['read_file']}' >&2; exit 1; fi;")
    if is_director:
        parts.append(f"{paths['stats']} --after {end + margin:.3f} --zero;")
    parts.append(f"echo '=== prev-cpu'; {paths['window']} -v start={start:.3f} -v end={end:.3f} "
                 f"{shlex.quote(paths['samples'])};")
    return " ".join(parts)


def lvs_read_command(current, offset, read_cmd):
    """The director's read of the point measured now (``lvs_compare_state.current``), started during
    its load and left running on its own: ``lvs-director-read`` (roles/lvs_director) with the load's
    read time (``read_after``: expected end + tolerance), the start of its CPU window (1 s before the
    load) and, when the next segment's first load was launched during this one, the scheduler to
    switch to right after reading (``switch_to``) - all shifted into the director's clock.
    As roles/cpu_sampler starts its sampler: nohup + setsid -f (its own session, not a background
    job of the ssh session's shell, which a terminal session hangs up or holds).
    """
    current = current or {}
    shift = (offset or {}).get("offset_s")
    try:
        at = to_host_time(float(current["read_after"]), shift)
        start = to_host_time(float(current["start_at"]) - 1.0, shift)
    except (KeyError, TypeError, ValueError):
        _fail("lvs_read_command", f"the point needs read_after and start_at as epoch seconds, got {current!r}")
    read_file = current.get("read_file")
    if not read_file or not str(read_file).startswith("/"):
        _fail("lvs_read_command", f"read_file must be an absolute path, got {read_file!r}")
    switch = current.get("switch_to")
    if switch is not None and not re.fullmatch(r"[a-z0-9]+", str(switch)):
        _fail("lvs_read_command", f"switch_to must be a scheduler name, got {switch!r}")
    args = f"--after {at:.3f} --cpu-start {start:.3f} --out {shlex.quote(str(read_file))}"
    if switch is not None:
        args += f" --switch {switch}"
    return f"nohup setsid -f {read_cmd} {args} < /dev/null > /dev/null 2>&1"


def lvs_tick_command(after, offset, stats_cmd):
    """The director's line that waits for the first estimator tick after ``after`` (controller time) and prints it.

    Run while a load runs (its counters change on every tick): ``=== tick-at``
    is the timetable's first reference (lvs_step: ticked). Nothing is zeroed.
    """
    try:
        at = to_host_time(float(after), (offset or {}).get("offset_s"))
    except (TypeError, ValueError):
        _fail("lvs_tick_command", f"after must be epoch seconds, got {after!r}")
    return f"{stats_cmd} --after {at:.3f}"


def lvs_step(state, event, **context):
    """The LVS hooks' state after one event (module_utils/testbed_lvs_step.py: ``step``)."""
    try:
        return step(state, event, **context)
    except StepError as exc:
        _fail("lvs_step", str(exc))


def lvs_launched_ahead(state, point_id):
    """Whether ``point_id`` was launched during the previous load (testbed_lvs_step.launched_ahead)."""
    return launched_ahead(state, point_id)


def lvs_seconds_until(at, now):
    """Whole seconds from ``now`` until ``at`` (rounded down), never negative: a wait_for's timeout."""
    try:
        return until(float(at), float(now), 0.0, whole="floor")
    except (TypeError, ValueError):
        _fail("lvs_seconds_until", f"at and now must be epoch seconds, got {at!r} and {now!r}")


def lvs_wait_next_started(state, now):
    """Whole seconds until the load launched ahead has started (+ 0.5 s); 0 when none was."""
    nxt = (state or {}).get("next")
    return until(nxt["start_at"], now, 0.5) if nxt else 0


def lvs_clock_note(first, last, every_segments):
    """The report's sentence on the hosts' clock offsets and their drift ('' without measurements)."""
    start, drift = [], []
    for host in sorted(first or {}):
        a = first[host]
        start.append(f"{host} {a['offset_s']:+.3f} s (+/- {a['uncertainty_s']:.3f})")
        b = (last or {}).get(host)
        if b is not None:
            drift.append((abs(b["offset_s"] - a["offset_s"]), host))
    if not start:
        return ""
    text = ("Clock offsets from the controller (host minus controller) at the start of the last sweep: "
            + ", ".join(start) + ".")
    if drift:
        worst = max(drift)
        text += f" Largest change by its last measurement {worst[0]:.3f} s ({worst[1]})."
    return text + (f" The offsets were measured again every {every_segments} schedulers; load windows, CPU "
                   "samples and the director's counter resets were put on the controller's time line with them.")


def lvs_study_reference(cells, metric, label):
    """The report pivot's ``reference`` for one metric from ``lvs_compare_study_cells``
    ({metric, rate, scheduler, value} each): {label, values: {rate: {scheduler: value}}}, or None
    when no cell is of that metric (the table is then printed without the study's cells)."""
    values = {}
    for cell in cells or []:
        if cell.get("metric") == metric:
            values.setdefault(str(int(cell["rate"])), {})[cell["scheduler"]] = float(cell["value"])
    return {"label": label, "values": values} if values else None


def lvs_self_probe_command(server, timeout=2):
    """The watchdog's probe of one real server, run on that server (its own connection): its web
    server accepts a TCP connection at the server's address and port within ``timeout`` seconds
    (prints ``answered``; exit 0), else exit 1. Nothing crosses the director."""
    fname = "lvs_self_probe_command"
    if not isinstance(server, dict) or not str(server.get("address") or "").strip():
        _fail(fname, "the server must be {host, address, port} (from lvs_compare_real_servers), got %r" % (server,))
    address = str(server["address"]).strip()
    if address.startswith("-") or any(c.isspace() or c in "'\"/" for c in address):
        _fail(fname, "the address of %s is not a host name or IP address: %r" % (server.get("host"), address))
    port = int(_number(fname, server.get("port", 80), "port"))
    seconds = int(_number(fname, timeout, "timeout"))
    if not 0 < port < 65536 or seconds < 1:
        _fail(fname, "the port must be 1-65535 and the timeout 1 s or more, got %r and %r" % (port, timeout))
    return ("timeout %d bash -c 'exec 3<>/dev/tcp/%s/%d' 2>/dev/null && echo answered" % (seconds, address, port))


def lvs_watch_probes(hostvars, real_servers, var):
    """``{real server: {answered, shown}}`` from each server's watchdog probe (``var``, registered by
    lvs_self_probe_command): answered is an exit 0 printing ``answered``; an unreachable server
    (a stopped container or host) or one whose probe timed out did not answer."""
    out = {}
    for server in real_servers or []:
        host = server.get("host")
        step = _host_var(hostvars, host, var) or {}
        answered = (not step.get("unreachable") and not step.get("skipped") and step.get("rc") == 0
                    and "answered" in str(step.get("stdout") or ""))
        out[host] = {"answered": bool(answered), "shown": "%s port %s" % (server.get("address"), server.get("port", 80))}
    return out


def lvs_probe_command(role, vip, port, real_servers, timeout=3, through_vip=True):
    """The shell line of one host's health probe (printed in ``=== name`` sections).

    Every host answers (the probe runs at all); a client opens the virtual
    service (client -> VIP, through the director; not with ``through_vip``
    false: while a load runs, whose connections the director counts, that
    path is judged by the load itself); the director opens every
    real server (director -> real server, the web server answering) and
    counts NETDEV WATCHDOG lines in its kernel log (a virtio NIC whose
    transmit queue stopped).

    The director opens its real servers at the same time, in one ``bash``
    under one ``timeout`` (each answer, or bash's error, into its own file;
    the first line of each is printed in order afterwards): every process
    costs a lot on an emulated director, and the probe runs before every
    segment. A real server that does not answer within ``timeout`` seconds
    prints an empty section (no answer), as with one ``timeout`` each.
    """
    def http(address):
        return ("timeout {t} bash -c 'exec 3<>/dev/tcp/{a}/{p} && printf \"HEAD / HTTP/1.0\\r\\n\\r\\n\" >&3 "
                "&& head -c 15 <&3' 2>&1 | head -1 || echo FAILED").format(t=int(timeout), a=address, p=int(port))
    lines = ["echo '=== alive'; echo ok"]
    if role == "client" and through_vip:
        lines.append(f"echo '=== vip'; {http(vip)}; echo")
    if role == "director":
        lines.append("echo '=== watchdog'; (dmesg 2>/dev/null || true) | grep 'NETDEV WATCHDOG' | tail -n 2")
        servers = list(real_servers or [])
        if servers:
            targets = " ".join(shlex.quote(f"{server['address']}/{int(server['port'])}") for server in servers)
            opener = ('d=$1; shift; i=0; for a in "$@"; do i=$((i+1)); '
                      '(exec 3<>"/dev/tcp/$a" && printf "HEAD / HTTP/1.0\\r\\n\\r\\n" >&3 '
                      '&& IFS= read -r -N 15 l <&3; printf "%s\\n" "$l") >"$d/$i" 2>&1 & done; wait')
            lines.append(f"d=$(mktemp -d) && {{ timeout {int(timeout)} bash -c {shlex.quote(opener)} bash \"$d\" {targets}")
            for number, server in enumerate(servers, 1):
                lines.append(f"echo '=== rs {server['host']}'; l=''; IFS= read -r l < \"$d/{number}\"; echo \"$l\"")
            lines.append('rm -rf "$d"; }')
    return "; ".join(lines)


def _sections(text):
    found, current = {}, None
    for line in (text or "").replace("\r", "").splitlines():
        if line.startswith("=== "):
            current = line[4:].strip()
            found[current] = []
        elif current is not None:
            found[current].append(line)
    return {name: "\n".join(body).strip() for name, body in found.items()}


def lvs_health(results, real_servers, through_vip=True):
    """``{ok, problems: [{component, evidence}]}`` from every host's probe (``lvs_host_results``).

    ``through_vip``: whether the clients opened the virtual service (lvs_probe_command).
    """
    problems = []
    for host, result in sorted((results or {}).items()):
        found = _sections(result.get("stdout"))
        if result.get("failed") and "alive" not in found:
            problems.append({"component": host, "evidence": "did not answer the health probe: "
                             + (result.get("msg") or "unreachable")[:300]})
            continue
        role = result.get("role")
        if role == "client" and through_vip and not found.get("vip", "").startswith("HTTP/"):
            problems.append({"component": "virtual service (via the director)",
                             "evidence": f"client {host} -> VIP: {found.get('vip') or 'no answer'}"})
        if role == "director":
            watchdog = found.get("watchdog", "")
            if watchdog:
                problems.append({"component": host, "evidence": "NIC transmit queue stalled, kernel log: "
                                 + watchdog.splitlines()[-1][:300]})
            for server in real_servers or []:
                answer = found.get(f"rs {server['host']}", "")
                if not answer.startswith("HTTP/"):
                    problems.append({"component": server["host"],
                                     "evidence": f"{host} -> {server['address']}:{server['port']}: {answer or 'no answer'}"})
    problems = _private_side(results, real_servers, problems)
    # A broken director or real server also breaks the path through the VIP: name the cause only.
    named = {p["component"] for p in problems}
    if named - {"virtual service (via the director)"}:
        problems = [p for p in problems if p["component"] != "virtual service (via the director)"] or problems
    return {"ok": not problems, "problems": problems}


_NO_ROUTE = ("no answer", "No route to host", "Network is unreachable", "timed out")


def _private_side(results, real_servers, problems):
    """Name the director when none of its real servers is reachable from it but each is alive.

    Every real server unreachable from the director (no answer, no route, unreachable network;
    a refused connection reached its host) while each answered its own probe: the cause is the
    director's private side (its NIC, link or network), not N broken servers.
    """
    director = next((h for h, r in sorted((results or {}).items()) if r.get("role") == "director"), None)
    hosts = [server["host"] for server in real_servers or []]
    if director is None or len(hosts) < 2:
        return problems
    lost = [p for p in problems if p["component"] in hosts and p["evidence"].startswith(f"{director} -> ")
            and any(mark in p["evidence"] for mark in _NO_ROUTE)]
    alive = all(host in results and not results[host].get("failed") and "alive" in _sections(results[host].get("stdout"))
                for host in hosts)
    if len(lost) != len(hosts) or not alive:
        return problems
    detail = "; ".join(p["evidence"][len(director) + 4:] for p in lost)
    return [p for p in problems if p not in lost] + [{
        "component": director,
        "evidence": (f"reaches none of its {len(hosts)} real servers, each of which answers its own probe: its "
                     f"private side (NIC, link or network) is broken ({detail})")[:600]}]


def lvs_in_flight(state, environment, director_kind="hardware"):
    """The points in flight (``lvs_compare_state``: the previous point not stored yet, the point being
    measured) as results for the sweep.

    Each ``{point, clients, start, end}`` becomes ``{point, metrics: {}, started_at, finished_at,
    environment, raw, extra}``: its load window on the controller's time line, every client's
    runner output as raw evidence (``<host>.run.json``), nothing measured (it was never collected),
    and as its reason the watchdog's finding when the watchdog stopped its load. roles/testbed_sweep
    stores these as lab faults when a fault is found before they are stored.
    """
    out = []
    for prev in in_flight(state):
        if not prev:
            continue
        if not isinstance(prev, dict) or not isinstance(prev.get("point"), dict):
            _fail("lvs_in_flight", f"a point in flight must be a mapping with point, got {prev!r}")
        try:
            start, end = float(prev["start"]), float(prev["end"])
        except (KeyError, TypeError, ValueError):
            _fail("lvs_in_flight", f"point {prev['point'].get('point_id')!r} in flight has no load window (start, end)")
        raw = {}
        for client in prev.get("clients") or []:
            if isinstance(client, dict) and client.get("stdout") and re.match(r"^[A-Za-z0-9_.-]+$", str(client.get("host"))):
                raw[f"{client['host']}.run.json"] = client["stdout"]
        finding = (prev.get("watch") or {}).get("finding")
        out.append({"point": prev["point"], "metrics": {}, "started_at": start, "finished_at": max(start, end),
                    "environment": environment, "raw": raw,
                    # a load the watchdog stopped (tasks/watch.yml) says so
                    "reasons": [watchdog_reason(finding)] if finding else [],
                    "extra": {"scheduler": prev["point"].get("variant"), "director_kind": director_kind}})
    return out


def lvs_collected(hostvars, role_of, director, var="lvs_compare_step"):
    """What one collect step left, to keep with the point until it is stored.

    ``{collected: true, collect: lvs_host_results(...), director_counters: <director's stdout>,
    switch_table: <the table after a switch the read made, or None>}``:
    a point collected at a scheduler switch is stored after the next load, when the hosts'
    ``var`` holds a later step.
    """
    if director not in role_of:
        _fail("lvs_collected", f"the director {director!r} is not one of the hosts {sorted(role_of)}")
    collect = lvs_host_results(hostvars, role_of, var)
    found = sections(collect[director]["stdout"] or "")
    # A read that switched the scheduler too (lvs_read_command: switch): the table after it, when it succeeded.
    table = found.get("switch-table") if found.get("switched-at") else None
    return {"collected": True, "collect": collect, "director_counters": collect[director]["stdout"],
            "switch_table": (table or "").strip() or None}


# ---------------------------------------------------------------------------
# The fidelity check (tasks/fidelity.yml, fidelity_pair.yml)
# ---------------------------------------------------------------------------

def lvs_hand_commands(point, clients, host_index, server, port=80, uri="/", timeout=5, hog=True,
                      processes="auto", max_rate_per_process=1000, httperf="httperf"):
    """The httperf command lines the load runner runs on one client for ``point``, to start them by hand.

    The same split as ``lvs-httperf-run`` (roles/lvs_client/files; tests/unit/test_filters_lvs.py runs the
    runner and compares): the point's total rate R and connection count N over H client hosts
    (``clients``) x P processes each (``processes``, ``auto`` as filter ``httperf_processes``: none above
    ``max_rate_per_process``); process i (0-based over every host; this host's are
    ``host_index`` x P ...) gets R / (H x P) conn/s, N / (H x P) connections (the remainder to the
    first ones) and ``--client=i/(H x P)``. ``point`` is a planned point (its ``parameters``) or
    the parameters ``{rate, num_conns}``. Returns this host's ``[{index, num_conns, rate_per_s,
    expected_s, command}]`` (``command`` an argv list; ``expected_s`` = connections / rate + timeout).
    """
    fname = "lvs_hand_commands"
    params = point.get("parameters", point) if isinstance(point, dict) else None
    if not isinstance(params, dict) or "rate" not in params or "num_conns" not in params:
        _fail(fname, f"point must be a planned point with parameters rate and num_conns, got {point!r}")
    rate = _number(fname, params["rate"], "the point's rate")
    num_conns = _number(fname, params["num_conns"], "the point's num_conns")
    hosts = int(_number(fname, clients, "clients"))
    index_of_host = int(_number(fname, host_index, "host_index"))
    if rate <= 0 or num_conns < 1 or num_conns != int(num_conns):
        _fail(fname, f"the point's rate must be > 0 and num_conns a whole number >= 1, got {params!r}")
    if hosts < 1 or not 0 <= index_of_host < hosts:
        _fail(fname, f"host_index must lie in [0, clients), got {host_index!r} of {clients!r} client(s)")
    try:
        per_host = processes_per_host(rate, hosts, processes, max_rate_per_process)
    except ValueError as exc:
        _fail(fname, str(exc))
    total = hosts * per_host
    num_conns = int(num_conns)
    if num_conns < total:
        _fail(fname, f"num_conns {num_conns} is smaller than the {total} httperf processes (the load runner refuses it too)")
    base, extra = divmod(num_conns, total)
    share_rate = rate / total
    timeout = _number(fname, timeout, "timeout")
    out = []
    for local in range(per_host):
        index = index_of_host * per_host + local
        conns = base + (1 if index < extra else 0)
        command = [str(httperf), "--server", str(server), "--port", str(int(_number(fname, port, "port"))),
                   "--uri", str(uri), "--num-conns", str(conns), "--rate", "%.6g" % share_rate,
                   "--timeout", "%g" % timeout, "--client=%d/%d" % (index, total)]
        if _bool(hog):
            command.insert(1, "--hog")
        out.append({"index": index, "num_conns": conns, "rate_per_s": float("%.6g" % share_rate),
                    "expected_s": conns / share_rate + timeout, "command": command})
    return out


def _bool(value):
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _host_var(hostvars, host, var):
    try:
        facts = hostvars[host]
    except (KeyError, TypeError):
        return None
    value = facts.get(var) if hasattr(facts, "get") else None
    return value if isinstance(value, dict) else None


def lvs_hand_result(hostvars, clients, var="__lvs_compare_hand", metric="response_time_ms", min_rate_ratio=0.9,
                    max_error_pct=1.0, max_client_cpu_pct=95.0):
    """The run by hand of the fidelity check, as its operator reads it: every httperf report, combined.

    ``clients``: the client hosts; ``var``: each one's registered ``async_status`` loop over its
    processes (an item's ``item.item`` is the ``lvs_hand_commands`` entry it started). Every report
    is parsed by the httperf parser with the process's own requested rate and the sweep's
    thresholds (the same verdict a harness process gets), and the reports are combined the way
    ``lvs_point`` combines the harness's (``aggregate_httperf``: rates and counts added up, per-reply
    times weighted by replies); ``metric`` is read from that. Returns ``{valid, metrics: {metric},
    reasons, processes}`` (``fidelity_value`` reads it): not valid when a client has no result, a
    process did not finish, exited non-zero, gave an unusable or invalid report, or the combined
    reports lack the metric.
    """
    reasons, parsed_all, requested, processes = [], [], 0.0, 0
    for host in clients or []:
        step = _host_var(hostvars, host, var)
        if step is None or step.get("skipped") or step.get("unreachable") or not isinstance(step.get("results"), list) \
                or not step["results"]:
            reasons.append(f"{host}: no run by hand (the client was skipped, unreachable or started nothing)")
            continue
        for item in step["results"]:
            started = item.get("item") if isinstance(item.get("item"), dict) else {}
            entry = started.get("item") if isinstance(started.get("item"), dict) else {}
            label = f"{host} process {entry.get('index', '?')}"
            processes += 1
            if item.get("skipped") or not item.get("finished") or item.get("unreachable"):
                reasons.append(f"{label}: httperf did not start or did not finish "
                               f"({item.get('msg') or started.get('msg') or 'no answer'})")
                continue
            if item.get("rc") != 0:
                reasons.append(f"{label}: httperf exited with status {item.get('rc')} "
                               f"({' '.join(str(item.get('stderr') or '').split())[:200]})")
                continue
            try:
                parsed = parse_httperf(item.get("stdout") or "", source=label, requested_rate=entry.get("rate_per_s"),
                                       min_rate_ratio=min_rate_ratio, max_client_cpu_pct=max_client_cpu_pct,
                                       max_error_pct=max_error_pct)
            except ParseError as exc:
                reasons.append(f"{label}: unusable report ({exc})")
                continue
            if not parsed.get("valid"):
                reasons.append(f"{label}: " + "; ".join(parsed.get("reasons") or ["judged invalid"]))
                continue
            parsed_all.append((label, parsed))
            requested += float(entry.get("rate_per_s") or 0)
    if not processes and not reasons:
        reasons.append("no client ran httperf by hand")
    value = None
    if not reasons:
        value = aggregate_httperf(parsed_all, requested or 1.0).get(metric)
        if value is None:
            reasons.append(f"the reports by hand give no {metric}")
    return {"valid": not reasons, "metrics": {metric: None if reasons else round(float(value), 4)},
            "reasons": reasons, "processes": processes}


def lvs_fidelity_pair(hand, harness, metric="response_time_ms", hand_switched=True, harness_switched=True):
    """One pair of the fidelity check: ``[hand, harness]`` values of ``metric``; a side is null when its run failed.

    ``hand``: ``lvs_hand_result``'s answer; ``harness``: the ``lvs_point`` answer (``store: false``)
    for the harness's run of the same point. A side is null (the pair is left out and counted by
    ``fidelity_from_points``) when its run was not valid or gave no value, or when the director's
    switch before it (scheduler set, counters zeroed) failed (``hand_switched`` /
    ``harness_switched`` false).
    """
    return [fidelity_value(hand, metric) if _bool(hand_switched) else None,
            fidelity_value(harness, metric) if _bool(harness_switched) else None]


class FilterModule:
    """Filters of the LVS experiment role."""

    def filters(self):
        return {
            "lvs_real_servers": lvs_real_servers,
            "lvs_loads": lvs_loads,
            "lvs_point_seconds": lvs_point_seconds,
            "lvs_role_of": lvs_role_of,
            "lvs_clock_offsets": lvs_clock_offsets,
            "lvs_host_results": lvs_host_results,
            "lvs_collected": lvs_collected,
            "lvs_load_window": lvs_load_window,
            "lvs_collect_command": lvs_collect_command,
            "lvs_read_command": lvs_read_command,
            "lvs_tick_command": lvs_tick_command,
            "lvs_step": lvs_step,
            "lvs_self_probe_command": lvs_self_probe_command,
            "lvs_watch_probes": lvs_watch_probes,
            "lvs_launched_ahead": lvs_launched_ahead,
            "lvs_wait_next_started": lvs_wait_next_started,
            "lvs_seconds_until": lvs_seconds_until,
            "lvs_clock_note": lvs_clock_note,
            "lvs_study_reference": lvs_study_reference,
            "lvs_probe_command": lvs_probe_command,
            "lvs_health": lvs_health,
            "lvs_in_flight": lvs_in_flight,
            "lvs_hand_commands": lvs_hand_commands,
            "lvs_hand_result": lvs_hand_result,
            "lvs_fidelity_pair": lvs_fidelity_pair,
        }
