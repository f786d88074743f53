#!/usr/bin/env python3
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: how short can the gap between two LVS loads be while every load's counters stay exact?

    roles/lvs_compare/scripts/lvs-timetable-bench.py [--loads 8] [--rate 200] [--seconds 39] [--margin 0.4]
                                   [--tolerance 0.3] [--switch-every 0] [--switch-margin 0.8]
                                   [--vip 10.250.1.10]
                                   [--clients lvs-client1,lvs-client2] [--processes 2]
                                   [--real-servers 10.250.2.11,10.250.2.12,10.250.2.13]
                                   [--ssh-port 2222] [--ssh-key /var/lib/testbed/lab/id_ed25519]

The director's IPVS counters (``ipvsadm -Ln --stats``) are summed from per-CPU
counters only on the estimator's 2 s tick (kernels up to 6.1), so a tick must
fall between two loads. lvs-compare today waits for that tick after each load,
then starts the next one: with 40 s loads (20 periods) every gap is at least
one period. This benchmark tries the timetable instead, on the local lab (lab
up; addresses inside the lab's networks only, enforced): the next load is
launched *during* the current one (``lvs-httperf-run --start-at``, detached in
the client containers) to start at a predicted tick + --margin; the director
reads and zeroes its counters right after that tick (``lvs-director-stats
--after``, the script lvs-compare uses). With loads of an odd number of
seconds, load + gap fill whole periods with a gap of about 1 s.

What makes the counts exact is only that a tick falls between the end of one
load and the start of the next: ``ipvsadm -Ln --stats`` shows the last tick's
snapshot minus the one ``ipvsadm -Z`` kept, so the read and the zeroing may
come after the next load has started, as long as it is before the following
tick. The tick's period is measured as the loads go (an emulated guest's is
not exactly 2 s). --switch-every N changes the scheduler after every N loads
in the same director command as the read (``ipvsadm -C``, a new table with the
next scheduler), as lvs-compare's switch between two schedulers would; the load
after a switch starts --switch-margin after the tick instead of --margin.

Per load it prints: requested start, actual start and end of the load (all
clients), the tick the counters were read after, the predicted tick, the
gap to the next load, httperf's connections against the director's count,
and a verdict: ``exact`` (the tick fell after this load's end and before the
next load's start, the zeroing before the following tick, and the counts
agree), or what went wrong.
Last line: ``RESULT loads=<n> exact=<n> load_s=<sum> gap_s=<sum>
overhead_pct=<gaps / (loads + gaps)> gap_mean_s=<..> gap_max_s=<..>
tick_error_max_s=<..> end_excess_max_s=<..>``.

Run it with the project's python (``.venv/bin/python roles/lvs_compare/scripts/lvs-timetable-bench.py``): it
reads the tools' output with the project's parsers. The clients need roles/lvs_client (the load runner). Bounded: at most 30 loads of at most 120 s at most 400 conn/s; nothing but the
lab's VIP receives traffic. It adds a virtual service when the director has
none for the VIP (removed at the end) and leaves an existing one as it is
(its counters are zeroed). Exit status 0 when every load was exact, 3 when
not, 1 on a usage or setup error.
"""

import argparse
import ipaddress
import json
import os
import subprocess
import sys
import time

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

from ansible.module_utils.testbed_collect import sections  # noqa: E402
from ansible.module_utils.testbed_parse import ParseError  # noqa: E402
from ansible.module_utils.testbed_parse_httperf import parse as parse_httperf  # noqa: E402
from ansible.module_utils.testbed_parse_ipvsadm import parse as parse_ipvsadm  # noqa: E402
from ansible.module_utils.testbed_sweep import sweep_overhead  # noqa: E402
from ansible.module_utils.testbed_timetable import (  # noqa: E402
    NOMINAL_PERIOD,
    boundary_problems,
    estimate_period,
    next_start,
    next_tick,
)

LAB_NET = ipaddress.ip_network("10.250.0.0/16")
RUNNER = "/usr/local/bin/lvs-httperf-run"
STATS = "/usr/local/sbin/lvs-director-stats"
WORKDIR = "/var/lib/testbed/lvs-client/timetable-bench"


def run(argv, timeout=180):
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(argv[:6]), proc.returncode, proc.stderr.strip()[:300]))
    return proc.stdout


def main(argv):
    args = _arguments(argv)
    bench = {"args": args, "clients": args.clients.split(","), "ssh": _ssh_command(args),
             "schedulers": ["rr", "wrr", "lc", "wlc"]}
    bench["offset"] = _clock_offset(bench)
    _prepare(bench)
    sweep = _tick_phase(bench)
    if sweep is None:
        return 1
    try:
        for k in range(args.loads):
            _one_load(bench, sweep, k)
    finally:
        _restore(bench)
    return _report(bench, sweep)


def _arguments(argv):
    """The command line, checked against the lab's network and the bounds."""
    p = argparse.ArgumentParser(prog="lvs-timetable-bench")
    p.add_argument("--loads", type=int, default=8)
    p.add_argument("--rate", type=float, default=200)
    p.add_argument("--seconds", type=float, default=39)
    p.add_argument("--margin", type=float, default=0.4, help="start this long after the predicted tick")
    p.add_argument("--tolerance", type=float, default=0.3, help="read after the first tick past end + this")
    p.add_argument("--switch-every", type=int, default=0, help="change the scheduler after every N loads")
    p.add_argument("--switch-margin", type=float, default=0.8, help="start after a switch this long after the tick")
    p.add_argument("--vip", default="10.250.1.10")
    p.add_argument("--clients", default="lvs-client1,lvs-client2")
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--real-servers", default="10.250.2.11,10.250.2.12,10.250.2.13")
    p.add_argument("--ssh-port", type=int, default=2222)
    p.add_argument("--ssh-key", default="/var/lib/testbed/lab/id_ed25519")
    args = p.parse_args(argv)
    addrs = [args.vip] + args.real_servers.split(",")
    if any(ipaddress.ip_address(a) not in LAB_NET for a in addrs):
        p.error("only addresses inside the lab's %s are allowed" % LAB_NET)
    if not (1 <= args.loads <= 30 and 0 < args.rate <= 400 and 5 <= args.seconds <= 120):
        p.error("bounded: 1-30 loads, rate <= 400 conn/s, 5-120 s per load")
    return args


def _ssh_command(args):
    """ssh to the director, without the command."""
    return ["ssh", "-p", str(args.ssh_port), "-i", args.ssh_key, "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
            # one connection for every command (as Ansible's ControlPersist): a new ssh handshake costs ~0.7 s
            # against the emulated director
            "-o", "ControlMaster=auto", "-o", "ControlPath=/tmp/lvs-timetable-bench-%C", "-o", "ControlPersist=120",
            "root@127.0.0.1"]


def _director(bench, cmd, timeout=180):
    return run(bench["ssh"] + [cmd], timeout=timeout)


def _clock_offset(bench):
    """The director's clock against this one (its RTC starts it with 1 s resolution): shortest round trip of 5."""
    _director(bench, "true")
    best = None
    for _ in range(5):
        t0 = time.time()
        remote = float(_director(bench, "date +%s.%N"))
        t1 = time.time()
        if best is None or t1 - t0 < best[0]:
            best = (t1 - t0, remote - (t0 + t1) / 2)
    rtt, offset = best
    print("# director clock offset %+.3f s (round trip %.3f s)" % (offset, rtt))
    return offset


def _table(bench, scheduler):
    """The director command that replaces the IPVS table with the VIP on ``scheduler``."""
    args = bench["args"]
    return ("ipvsadm -C && ipvsadm -A -t %s:80 -s %s && " % (args.vip, scheduler)
            + " && ".join("ipvsadm -a -t %s:80 -r %s:80 -m" % (args.vip, rs) for rs in args.real_servers.split(",")))


def _prepare(bench):
    """The VIP's service (added when missing: ``bench["added"]``, its scheduler kept) and the clients' workdirs."""
    args = bench["args"]
    listing = parse_ipvsadm(_director(bench, "ipvsadm -Ln"), source="director ipvsadm -Ln", mode="list")
    service = [svc for svc in listing["details"]["services"] if svc.get("address") == args.vip and svc.get("port") == 80]
    bench["added"] = not service
    bench["original"] = service[0]["scheduler"] if service else "rr"
    if bench["added"]:
        _director(bench, _table(bench, "rr"))
    for c in bench["clients"]:
        if subprocess.run(["docker", "exec", c, "test", "-x", RUNNER], capture_output=True).returncode != 0:
            raise RuntimeError("client %s has no %s: configure the clients first (roles/lvs_client, e.g. through "
                               "playbooks/lvs-compare.yml)" % (c, RUNNER))
        run(["docker", "exec", c, "sh", "-c", "mkdir -p %s && rm -f %s/*.json" % (WORKDIR, WORKDIR)])


def _read(bench, after, switch_to=None):
    """Counters after the first tick past `after` (this clock), zeroed; returns (tick, zeroed_at, conns, raw)."""
    args, offset = bench["args"], bench["offset"]
    out = _director(bench, "%s --after %.3f --zero" % (STATS, after + offset)
                    + (" && %s" % _table(bench, switch_to) if switch_to else ""))
    found = sections(out)
    settled = found.get("settled", "")
    tick = float(found["tick-at"]) - offset if found.get("tick-at") else None   # when the script saw it
    zeroed = float(found["zeroed-at"]) - offset
    conns = None
    stats = parse_ipvsadm(found.get("ipvsadm-stats", ""), source="director ipvsadm -Ln --stats --exact",
                          mode="stats")
    for service in stats["details"]["services"]:
        if service.get("address") == args.vip and service.get("port") == 80:
            conns = (service.get("totals") or {}).get("conns")
    return tick, zeroed, conns, settled.strip()


def _launch(bench, k, start_at):
    """Start load ``k`` on every client, detached, to begin at ``start_at`` (this clock)."""
    args, clients = bench["args"], bench["clients"]
    num = int(round(args.rate * args.seconds))
    for i, c in enumerate(clients):
        cmd = ("%s --server %s --port 80 --uri / --rate %g --num-conns %d --timeout 5 --hosts %d --host-index %d "
               "--processes %d --hog --nofile 4096 --outdir %s/p%d --start-at %.3f > %s/p%d.%s.json 2>&1"
               % (RUNNER, args.vip, args.rate, num, len(clients), i, args.processes, WORKDIR, k, start_at,
                  WORKDIR, k, c))
        run(["docker", "exec", "-d", c, "sh", "-c", cmd])


def _results(bench, k):
    """Load ``k``'s (first start, last end, httperf's connections; None when a report is unusable)."""
    args = bench["args"]
    docs = []
    for c in bench["clients"]:
        deadline = time.time() + args.seconds * 2 + 60
        while True:
            text = run(["docker", "exec", c, "sh", "-c", "cat %s/p%d.%s.json 2>/dev/null || true" % (WORKDIR, k, c)])
            if text.strip().endswith("}"):
                docs.append(json.loads(text))
                break
            if time.time() > deadline:
                raise RuntimeError("load %d: no result from %s" % (k, c))
            time.sleep(0.2)
    conns = 0
    for d in docs:
        for proc in d["processes"]:
            try:
                conns += parse_httperf(proc["stdout"], source="%s process %s" % (d["host"], proc["index"]))[
                    "metrics"]["connections"]
            except ParseError:
                conns = None   # an unusable report: the count cannot be compared ("httperf made None")
                break
        if conns is None:
            break
    return min(d["started"] for d in docs), max(d["finished"] for d in docs), conns


def _tick_phase(bench):
    """The tick's phase, then the first load launched; the sweep mapping, or None when no tick shows.

    A 2 s warm-up load (an idle table shows no change on a tick), then one read.
    """
    args, clients = bench["args"], bench["clients"]
    period = NOMINAL_PERIOD
    run(["docker", "exec", clients[0], "httperf", "--server", args.vip, "--port", "80", "--uri", "/",
         "--num-conns", "40", "--rate", "20", "--timeout", "5"], timeout=60)
    ref, zeroed, _, settled = _read(bench, time.time() + 1.0)
    if ref is None:
        print("# no tick observed (%s): the timetable needs a kernel whose estimator ticks every 2 s (<= 6.1)" % settled)
        return None
    starts = [max(next_tick(ref, period, time.time() + 1.5) + args.margin, zeroed + args.margin)]
    _launch(bench, 0, starts[0])
    return {"ref": ref, "period": period, "starts": starts, "rows": [], "exact": 0}


def _one_load(bench, sweep, k):
    """Launch load k+1 on its predicted start, read load k's counters after its tick, compare, add its row."""
    args = bench["args"]
    starts, ref, period = sweep["starts"], sweep["ref"], sweep["period"]
    expected_end = starts[k] + args.seconds
    switch = args.switch_every > 0 and (k + 1) % args.switch_every == 0 and k + 1 < args.loads
    predicted, start = next_start(ref, period, expected_end, args.tolerance,
                                  args.switch_margin if switch else args.margin)
    if k + 1 < args.loads:
        starts.append(start)
        _launch(bench, k + 1, start)
    tick, zeroed, ipvs_conns, settled = _read(
        bench, expected_end + args.tolerance,
        bench["schedulers"][((k + 1) // args.switch_every) % 4] if switch else None)
    started, finished, conns = _results(bench, k)
    # The next load's requested start: its actual one is checked when its result is read.
    problems = boundary_problems(finished, tick, starts[k + 1] if k + 1 < args.loads else None, zeroed, period)
    # (a runner never starts before its --start-at: the actual start is no earlier)
    if tick is None:
        problems[0] += " (%s)" % settled
    if ipvs_conns != conns:
        problems.append("director counted %s, httperf made %s" % (ipvs_conns, conns))
    sweep["exact"] += not problems
    if tick is not None:
        sweep["period"] = estimate_period(ref, tick, nominal=period) if tick > ref else period
        sweep["ref"] = tick
    sweep["rows"].append({"k": k, "switch": switch, "requested": starts[k], "started": started, "finished": finished,
                          "tick": tick, "predicted": predicted, "zeroed": zeroed, "conns": conns, "ipvs": ipvs_conns,
                          "problems": problems})


def _restore(bench):
    """Stop the clients' httperf; remove the service added, or put back the original scheduler."""
    args = bench["args"]
    for c in bench["clients"]:
        subprocess.run(["docker", "exec", c, "pkill", "-x", "httperf"], capture_output=True)
    if bench["added"]:
        _director(bench, "ipvsadm -D -t %s:80" % args.vip)
    elif args.switch_every:
        _director(bench, _table(bench, bench["original"]))


def _report(bench, sweep):
    """One line per load and the RESULT line; exit status 0 when every load was exact, else 3."""
    args, rows, exact = bench["args"], sweep["rows"], sweep["exact"]
    t0 = rows[0]["requested"]

    def rel(v):
        return "-" if v is None else "%.3f" % (v - t0)

    print("load\trequested\tstarted\tfinished\ttick\tpredicted\tzeroed\tgap_next_s\tconns\tdirector\tverdict")
    gaps, load_s = [], 0.0
    for i, r in enumerate(rows):
        load_s += r["finished"] - r["started"]
        gap = rows[i + 1]["started"] - r["finished"] if i + 1 < len(rows) else None
        if gap is not None:
            gaps.append(gap)
        print("\t".join([str(r["k"]), rel(r["requested"]), rel(r["started"]), rel(r["finished"]), rel(r["tick"]),
                         rel(r["predicted"]), rel(r["zeroed"]), "-" if gap is None else "%.3f" % gap,
                         str(r["conns"]), str(r["ipvs"]),
                         ("switch; " if r["switch"] else "") + ("; ".join(r["problems"]) or "exact")]))
    tick_err = [abs(r["tick"] - r["predicted"]) for r in rows if r["tick"] is not None]
    excess = [r["finished"] - r["started"] - args.seconds for r in rows]
    gap_s = sum(gaps)
    # loads + gaps span the first start to the last end: the sweep's own overhead measure
    overhead = sweep_overhead(rows[0]["started"], rows[-1]["finished"], [r["finished"] - r["started"] for r in rows])
    print("RESULT loads=%d exact=%d load_s=%.1f gap_s=%.1f overhead_pct=%.1f gap_mean_s=%.3f gap_max_s=%.3f "
          "tick_error_max_s=%.3f end_excess_max_s=%.3f period_s=%.4f" % (
              len(rows), exact, load_s, gap_s, overhead["overhead_pct"],
              gap_s / len(gaps) if gaps else 0.0, max(gaps) if gaps else 0.0, max(tick_err) if tick_err else -1,
              max(excess), sweep["period"]))
    return 0 if exact == len(rows) else 3


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (RuntimeError, OSError, subprocess.TimeoutExpired, ValueError, ParseError) as exc:
        print("lvs-timetable-bench: %s" % exc, file=sys.stderr)
        sys.exit(1)
