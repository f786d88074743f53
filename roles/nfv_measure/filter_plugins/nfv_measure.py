# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the NFV experiment role (roles/nfv_measure).

* ``nfv_point``: one point's result (metrics with units, verdict, sources,
  raw outputs) from the tool runs of that point;
* ``nfv_fidelity``: the harness's baseline throughput against iperf3 run by hand (interleaved pairs, TOST);
* ``nfv_study_reference``: the study's published figures as the report's reference values, for the
  scenarios whose chain is one of the study's three (baseline, firewall, firewall + L4 proxy).

Pure functions (tests/unit/test_filters_nfv.py); bad input raises
``AnsibleFilterError`` naming the filter and the bad value. The statistics
come from the shared filter_plugins/testbed_stats.py.
"""

import os
import re

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

from ansible.module_utils import testbed_sweep as sweep  # noqa: E402
from ansible.module_utils.testbed_stats import core as stats  # noqa: E402
from ansible.module_utils.testbed_stats import fidelity  # noqa: E402

# The study's published figures (docs/experiments.md, section 3), by chain of VNF types: iperf3 TCP
# throughput (Gbit/s, mean of 3 x 30 s), mean ping RTT (ms; "N/A" through the L4 proxy, so absent),
# CPU per VNF container from docker stats during iperf3 (% of one CPU, "~" in the study).
STUDY_FIGURES = {
    (): {"throughput_gbps": 29.5, "icmp_rtt_avg_ms": 0.089},
    ("firewall",): {"throughput_gbps": 19.7, "icmp_rtt_avg_ms": 0.177, "vnf1_firewall_cpu_pct": 0.01},
    ("firewall", "loadbalancer"): {"throughput_gbps": 2.36, "vnf2_loadbalancer_cpu_pct": 118.42},
}
# The drops and rises as the study printed them (D_th against its baseline, K_lat of the ping RTT), shown
# beside ours in the relative tables: its rounding, not recomputed from the means above.
STUDY_RELATIVE = {
    ("firewall",): {"throughput_gbps": 33.2, "icmp_rtt_avg_ms": 98.8},
    ("firewall", "loadbalancer"): {"throughput_gbps": 92.0},
}
STUDY_LABEL = "study (its VM, 2 vCPU)"


def _fail(name, message):
    raise AnsibleFilterError(f"{name}: {message}")


def _fmt(value, digits=3):
    return stats.fmt_sig(value, digits)


def _fmt_summary(summary, digits=3):
    if summary is None:
        return "N/A"
    if summary["ci_half"] is None:
        return "{} (n={})".format(_fmt(summary["mean"], digits), summary["n"])
    return "{} \u00b1 {} (n={})".format(_fmt(summary["mean"], digits), _fmt(summary["ci_half"], 2), summary["n"])


def _fmt_pct(value):
    return "N/A" if value is None else f"{value:+.1f} %"


def _values(docs, metric):
    out = []
    for doc in docs:
        value = doc["metrics"].get(metric)
        if value is not None and not isinstance(value, bool) and isinstance(value, (int, float)):
            out.append(value)
    return out


def nfv_study_tables(docs, scenarios, baseline="baseline", include_invalid=False):
    """The study's three tables from point documents.

    ``docs`` are result point documents (``variant``, ``valid``, ``metrics``);
    ``scenarios`` the ``scenarios`` list of ``nfv_topology`` (order, chain,
    ICMP reason).  Invalid points are left out unless ``include_invalid``.
    Throughput drop = ``pct_drop(mean, baseline mean)`` (the study's D_th) and
    latency rise = ``pct_change(mean, baseline mean)`` (K_lat), both of the means.
    """
    fname = "nfv_study_tables"
    if not isinstance(docs, (list, tuple)):
        _fail(fname, f"docs must be a list of result documents, got {type(docs).__name__}")
    if not isinstance(scenarios, (list, tuple)) or not scenarios:
        _fail(fname, "scenarios must be the non-empty scenarios list of nfv_topology")
    by_variant = {}
    for number, doc in enumerate(docs):
        if not isinstance(doc, dict) or not isinstance(doc.get("metrics"), dict) or "variant" not in doc:
            _fail(fname, f"docs[{number}] is not a result document with variant and metrics")
        if doc.get("valid") is not True and not include_invalid:
            continue
        by_variant.setdefault(doc["variant"], []).append(doc)
    names = [s["name"] for s in scenarios]
    if baseline not in names:
        _fail(fname, "baseline {!r} is not a scenario ({})".format(baseline, ", ".join(names)))

    def summary_of(name, metric):
        values = _values(by_variant.get(name, []), metric)
        return stats.summary(values) if values else None

    base_tp = summary_of(baseline, "throughput_gbps")
    base_icmp = summary_of(baseline, "icmp_rtt_avg_ms")
    base_tcp = summary_of(baseline, "tcp_rtt_avg_ms")
    rows_tp, rows_lat, rows_cpu, derived = [], [], [], {}
    cpu_keys = ["client", "backend"]
    for scenario in scenarios:
        for key in scenario.get("containers", {}):
            if key not in cpu_keys:
                cpu_keys.append(key)
    notes = []
    for scenario in scenarios:
        name = scenario["name"]
        docs_here = by_variant.get(name, [])
        tp = summary_of(name, "throughput_gbps")
        icmp = summary_of(name, "icmp_rtt_avg_ms")
        tcp = summary_of(name, "tcp_rtt_avg_ms")
        drop = None if name == baseline or tp is None or base_tp is None else stats.pct_drop(tp["mean"], base_tp["mean"])
        icmp_rise = (None if name == baseline or icmp is None or base_icmp is None
                     else stats.pct_change(icmp["mean"], base_icmp["mean"]))
        tcp_rise = (None if name == baseline or tcp is None or base_tcp is None
                    else stats.pct_change(tcp["mean"], base_tcp["mean"]))
        derived[name] = {
            "points": len(docs_here),
            "throughput_gbps": tp["mean"] if tp else None,
            "throughput_drop_pct": drop,
            "icmp_rtt_avg_ms": icmp["mean"] if icmp else None,
            "icmp_latency_rise_pct": icmp_rise,
            "tcp_rtt_avg_ms": tcp["mean"] if tcp else None,
            "tcp_latency_rise_pct": tcp_rise,
        }
        rows_tp.append([name, scenario.get("chain", ""), _fmt_summary(tp),
                        "\u2014" if name == baseline else ("N/A" if drop is None else f"{drop:.1f} %")])
        icmp_cell = _fmt_summary(icmp) if scenario.get("icmp_passes", True) else "N/A (ICMP does not pass the L4 proxy)"
        rows_lat.append([name, icmp_cell, "\u2014" if name == baseline else _fmt_pct(icmp_rise),
                         _fmt_summary(tcp), "\u2014" if name == baseline else _fmt_pct(tcp_rise)])
        cpu_row = [name]
        for key in cpu_keys:
            if key not in scenario.get("containers", {}):
                cpu_row.append("\u2014")
                continue
            s = summary_of(name, f"{key}_cpu_pct")
            cpu_row.append(_fmt(s["mean"], 3) if s else "N/A")
        for metric in ("host_softirq_pct", "host_busy_pct"):
            s = summary_of(name, metric)
            cpu_row.append(_fmt(s["mean"], 3) if s else "N/A")
        rows_cpu.append(cpu_row)
        if name != baseline:
            parts = []
            if drop is not None:
                parts.append("throughput drop D_th = {:.1f} % ({} vs {} Gbit/s)".format(
                    drop, _fmt(tp["mean"], 4), _fmt(base_tp["mean"], 4)))
            if icmp_rise is not None:
                parts.append("ICMP latency rise K_lat = {:+.1f} % ({} vs {} ms)".format(
                    icmp_rise, _fmt(icmp["mean"], 3), _fmt(base_icmp["mean"], 3)))
            if tcp_rise is not None:
                parts.append("TCP request/response latency rise = {:+.1f} % ({} vs {} ms)".format(
                    tcp_rise, _fmt(tcp["mean"], 3), _fmt(base_tcp["mean"], 3)))
            if parts:
                notes.append("{} ({}): {}.".format(name, scenario.get("chain", ""), "; ".join(parts)))
        if not scenario.get("icmp_passes", True) and scenario.get("icmp_reason"):
            notes.append(f"{name}: {scenario['icmp_reason']}; the TCP request/response round trip (sockperf) "
                         "is measured through it instead.")
    tables = [
        {"title": "Throughput (iperf3, Gbit/s) and throughput drop D_th",
         "header": ["scenario", "chain", "throughput Gbit/s (mean \u00b1 95 % CI)", "D_th (drop vs baseline)"],
         "rows": rows_tp,
         "notes": ["D_th = (T_base \u2212 T_vnf) / T_base \u00d7 100 of the means (pct_drop)."]},
        {"title": "Latency: ICMP RTT (ping) and TCP request/response RTT (sockperf), rise K_lat",
         "header": ["scenario", "ICMP RTT ms", "K_lat ICMP", "TCP RTT ms", "K_lat TCP"],
         "rows": rows_lat,
         "notes": ["K_lat = (L_vnf \u2212 L_base) / L_base \u00d7 100 of the means (pct_change)."]},
        {"title": "CPU during iperf3 (% of one CPU per container; host columns % of all CPUs)",
         "header": ["scenario"] + [f"{k} %" for k in cpu_keys] + ["host softirq %", "host busy %"],
         "rows": rows_cpu,
         "notes": ["Container CPU comes from each container's cgroup (cpuacct) over the sampling window inside "
                   "the iperf3 run; kernel packet forwarding by the firewall runs in softirq context and is "
                   "mostly not charged to the firewall's cgroup: it shows in the host softirq column."]},
    ]
    return {"tables": tables, "derived": derived, "notes": notes, "cpu_keys": cpu_keys}


# Tabel 5's "main process" of each VNF type, as the study names it.
DASH = "\u2014"
STUDY_MAIN_PROCESS = {"firewall": "kernel (iptables NAT)", "loadbalancer": "user space (HAProxy)"}
STUDY_SHAPE_NOTE = ("The study's columns are its published figures (its VM, 2 vCPU; iperf3 3 x 30 s); this run's are "
                    "the means of its valid points (n), with the rise and drop computed as the study computes them.")


def study_consistency_notes():
    """The study's printed K_lat and D_th against the same formulas over its own printed means: the sign it
    gives (K_lat = (L_vnf - L_base) / L_base, a rise, positive when the chain adds latency; D_th = (T_base -
    T_vnf) / T_base, a drop, positive when it loses throughput) and the size, so a printed figure that its
    own means do not give is flagged where the table is printed."""
    base, notes = STUDY_FIGURES[()], []
    for hops, printed in STUDY_RELATIVE.items():
        for key, name, compute in (("icmp_rtt_avg_ms", "K_lat", stats.pct_change),
                                   ("throughput_gbps", "D_th", stats.pct_drop)):
            if key not in printed or key not in STUDY_FIGURES[hops]:
                continue
            own = compute(STUDY_FIGURES[hops][key], base[key])
            agrees = abs(own - printed[key]) <= 0.5 and (own > 0) == (printed[key] > 0)
            notes.append("{} of {} from the study's own means: {:+.1f} %, it prints {:+.1f} %{}".format(
                name, " + ".join(hops), own, printed[key],
                " (the same sign and size, to its rounding)" if agrees else " (!): the figure its means do not give"))
    return notes


def nfv_study_shape_tables(docs, scenarios, baseline="baseline"):
    """The study's Tabels 3, 4 and 5 in its own columns, this run's figures beside its published ones.

    Tabel 3 (scenario | mean latency ms | rise %: the ping RTT and K_lat), Tabel 4 (scenario |
    throughput Gbit/s | drop %: iperf3 and D_th) and Tabel 5 (VNF type | main process | CPU %: each
    VNF type's container CPU in the first scenario that has it, as the study's 1-VNF and 2-VNF chains).
    The study's cells come from STUDY_FIGURES and STUDY_RELATIVE for the scenarios whose chain is one
    of its three; a scenario that is not gets a blank study cell, and ICMP through the L4 proxy is
    "N/A" in both, as the study prints it."""
    measured = nfv_study_tables(docs, scenarios, baseline)["derived"]

    def num(value, digits=3):
        return "N/A" if value is None else _fmt(value, digits)

    def points(name):
        return measured[name]["points"]

    lat, thr, cpu = [], [], []
    for scenario in scenarios:
        name, hops = scenario["name"], tuple(scenario.get("hops") or ())
        study = STUDY_FIGURES.get(hops, {})
        rel = STUDY_RELATIVE.get(hops, {})
        is_base = name == baseline
        mine = measured[name]
        known = hops in STUDY_FIGURES
        if scenario.get("icmp_passes", True):
            lat_mine = f"{num(mine['icmp_rtt_avg_ms'])} (n={points(name)})"
            rise_mine = DASH if is_base else _fmt_pct(mine["icmp_latency_rise_pct"])
        else:
            lat_mine, rise_mine = "N/A (ICMP does not cross the L4 proxy)", "N/A"
        lat_study = (num(study.get("icmp_rtt_avg_ms")) if "icmp_rtt_avg_ms" in study
                     else ("N/A" if known else ""))
        rise_study = DASH if is_base and known else (f"+{rel['icmp_rtt_avg_ms']:.1f} %" if "icmp_rtt_avg_ms" in rel
                                                     else ("N/A" if known else ""))
        lat.append([name, lat_mine, rise_mine, lat_study, rise_study])
        if is_base:
            drop_mine = DASH
        elif mine["throughput_drop_pct"] is None:
            drop_mine = "N/A"
        else:
            drop_mine = f"{mine['throughput_drop_pct']:.1f} %"
        thr.append([name, f"{num(mine['throughput_gbps'])} (n={points(name)})", drop_mine,
                    num(study.get("throughput_gbps")) if "throughput_gbps" in study else "",
                    DASH if is_base and known else (f"{rel['throughput_gbps']:.1f} %" if "throughput_gbps" in rel else "")])
    seen = set()
    for scenario in scenarios:
        for hop, kind in enumerate(scenario.get("hops") or (), start=1):
            if kind in seen:
                continue
            seen.add(kind)
            key = f"vnf{hop}_{kind}_cpu_pct"
            values = _values([d for d in docs if isinstance(d, dict) and d.get("variant") == scenario["name"]
                              and d.get("valid") is True], key)
            study = STUDY_FIGURES.get(tuple(scenario["hops"]), {})
            cpu.append([kind, STUDY_MAIN_PROCESS.get(kind, ""),
                        "{} (n={}, {})".format(num(stats.summary(values)["mean"]) if values else "N/A", len(values),
                                               scenario["name"]),
                        f"~{study[key]:g}" if key in study else ""])
    return [
        {"title": "Study's Tabel 3 shape: mean latency (ping RTT, ms) and its rise K_lat",
         "header": ["scenario", "mean latency ms, this run", "rise %, this run", "mean latency ms, study",
                    "rise %, study"], "rows": lat,
         "notes": [STUDY_SHAPE_NOTE, "; ".join(study_consistency_notes()) + "."]},
        {"title": "Study's Tabel 4 shape: throughput (iperf3, Gbit/s) and its drop D_th",
         "header": ["scenario", "throughput Gbit/s, this run", "drop %, this run", "throughput Gbit/s, study",
                    "drop %, study"], "rows": thr, "notes": []},
        {"title": "Study's Tabel 5 shape: CPU per VNF type (% of one CPU during iperf3)",
         "header": ["VNF type", "main process", "CPU %, this run (scenario)", "CPU %, study"], "rows": cpu,
         "notes": ["This run's CPU is the VNF container's cgroup (the study read docker stats, which reads the same "
                   "counters); a kernel firewall's forwarding runs in softirq and is mostly not charged to it."]},
    ]


def nfv_study_reference(scenarios):
    """The report's ``reference`` (label, values per variant) from the study's figures.

    ``scenarios`` is the ``scenarios`` list of ``nfv_topology`` (``name`` and ``hops``, the VNF types
    in order). A scenario whose hops are one of the study's three chains gets that chain's figures
    under its own name (``values``) and, when the run has the baseline chain too, the study's published
    drop and rise (``relative``); the others get none. None when no scenario matches (no reference block).
    """
    fname = "nfv_study_reference"
    if not isinstance(scenarios, (list, tuple)):
        _fail(fname, f"scenarios must be the scenarios list of nfv_topology, got {type(scenarios).__name__}")
    values, relative = {}, {}
    for number, scenario in enumerate(scenarios):
        if not isinstance(scenario, dict) or "name" not in scenario or not isinstance(scenario.get("hops"), (list, tuple)):
            _fail(fname, f"scenarios[{number}] has no name and hops list")
        figures = STUDY_FIGURES.get(tuple(scenario["hops"]))
        if figures:
            values[scenario["name"]] = dict(figures)
        if tuple(scenario["hops"]) in STUDY_RELATIVE:
            relative[scenario["name"]] = dict(STUDY_RELATIVE[tuple(scenario["hops"])])
    # the study's drops and rises are against its baseline: only beside a run that has the baseline chain
    if not any(tuple(s["hops"]) == () for s in scenarios):
        relative = {}
    return {"label": STUDY_LABEL, "values": values, "relative": relative} if values else None


def nfv_fidelity(documents, tolerance_pct=5.0, alpha=0.05, minimum=None, cap=None):
    """The fidelity check: iperf3 by hand and through the harness in interleaved pairs (``fidelity_from_points``).

    The pairs are ``extra.fidelity_pairs`` (``[hand, harness]`` Gbit/s) of the valid baseline points
    (tasks/direct.yml fills them after the first one).  Returns ``fidelity_from_points``'s result
    (verdict, n, mean difference, 90 % interval, sentence), or ``{}`` when the run has no pairs; with
    ``minimum`` and ``cap`` the sentence says whether the test decided or the cap of pairs was reached.
    """
    return fidelity.fidelity_from_points(
        documents, "baseline", tolerance_pct, alpha, minimum=minimum, cap=cap,
        what="Gbit/s of iperf3 through the harness against iperf3 run directly (plain docker exec) on the baseline's "
             "client and backend, harness/hand \u2212 1 over interleaved pairs")


_PEER = re.compile(r"Accepted connection from ([0-9.]+)")


def _ok(run):
    """The parse result of a testbed_workload run, or None when it failed or did not run."""
    if not isinstance(run, dict) or not isinstance(run.get("parsed"), dict):
        return None
    return run["parsed"]


def _metric(parsed, key, scale=None):
    if parsed is None:
        return None
    value = (parsed.get("metrics") or {}).get(key)
    if value is None or scale is None:
        return value
    return value * scale


def nfv_point(runs, scenario, point, environment, started_at, finished_at, cgroups=None, direct=None):
    """One NFV point's result for the sweep's store, from its tool runs.

    ``runs``: ``{iperf3, ping, sockperf}`` results of the testbed_workload role
    (``ping`` absent or None where ICMP cannot cross the chain) and ``cpu``,
    the registered ``cpu_sample`` result.  ``scenario`` is the scenario of
    ``nfv_topology``; ``direct`` the fidelity pairs of the point (``{command,
    rc, pairs: [[hand, harness] Gbit/s], raws: [hand run stdout], load_s: the pairs' runs' seconds}``, or None):
    ``extra.fidelity_pairs`` and raw files ``direct-iperf3-N.json``.  Returns ``{point, metrics, valid, reasons, warnings, sources, raw,
    extra, environment, started_at, finished_at, load_s, summary}``: Gbit/s
    from iperf3's bit/s, ms from sockperf's microseconds, the CPU of every
    container of the scenario (null where not sampled), and a reason for
    every tool that failed or traffic that did not cross the chain.
    """
    fname = "nfv_point"
    if not isinstance(runs, dict):
        _fail(fname, f"runs must be a mapping of tool -> run, got {runs!r}")
    if not isinstance(scenario, dict) or "containers" not in scenario or "hops" not in scenario:
        _fail(fname, f"scenario must be a scenario of nfv_topology, got {scenario!r}")
    iperf3_run, ping_run, sockperf_run = runs.get("iperf3"), runs.get("ping"), runs.get("sockperf")
    cpu_run = runs.get("cpu") or {}
    if not isinstance(iperf3_run, dict) or not isinstance(sockperf_run, dict):
        _fail(fname, "runs must hold the iperf3 and sockperf runs")
    icmp = bool(scenario.get("icmp_passes"))
    ip, sp = _ok(iperf3_run), _ok(sockperf_run)
    pg = _ok(ping_run) if icmp else None
    cpu_ok = isinstance(cpu_run, dict) and not cpu_run.get("failed") and "metrics" in cpu_run
    cpu = cpu_run.get("metrics") or {} if cpu_ok else {}
    found = _PEER.search(iperf3_run.get("stdout") or "")
    peer = found.group(1) if found else None

    metrics = {
        "throughput_gbps": _metric(ip, "received_bps", 1e-9),
        "sent_gbps": _metric(ip, "sent_bps", 1e-9),
        "retransmits": _metric(ip, "retransmits"),
        "udp_lost_pct": _metric(ip, "lost_percent"),
        "udp_jitter_ms": _metric(ip, "jitter_ms"),
        "icmp_rtt_avg_ms": _metric(pg, "rtt_avg_ms"),
        "icmp_rtt_max_ms": _metric(pg, "rtt_max_ms"),
        "icmp_loss_pct": _metric(pg, "packet_loss_pct"),
        "tcp_rtt_avg_ms": _metric(sp, "rtt_avg_us", 1e-3),
        "tcp_rtt_p50_ms": _metric(sp, "rtt_p50_us", 1e-3),
        "tcp_rtt_p99_ms": _metric(sp, "rtt_p99_us", 1e-3),
        "tcp_round_trips_per_s": _metric(sp, "round_trips_per_s"),
        "host_softirq_pct": cpu.get("cpu_softirq_mean_pct"),
        "host_system_pct": cpu.get("cpu_system_mean_pct"),
        "host_busy_pct": cpu.get("cpu_busy_mean_pct"),
        "host_hottest_cpu_softirq_pct": cpu.get("cpu_hottest_softirq_mean_pct"),
        "cpu_window_s": cpu.get("window_s"),
        "backend_peer": peer,
        "hops": len(scenario["hops"]),
    }
    for key in scenario["containers"]:
        metrics[f"{key}_cpu_pct"] = cpu.get(f"{key}_cpu_pct")

    reasons = []
    if ip is None:
        reasons.append("iperf3: " + (iperf3_run.get("error") or "no output"))
    if not iperf3_run.get("finished", True):
        reasons.append("iperf3 did not finish: " + (iperf3_run.get("error") or "timeout"))
    stopped = sweep.load_stopped_reasons(iperf3_run, "iperf3")
    reasons.extend(stopped)
    expected = scenario.get("expected_peer")
    # the backend's "Accepted connection" line comes with a whole test: one cut short (stopped, or an
    # error such as a dead server) without it says nothing of the route the traffic took
    if ip is not None and peer != expected and (peer is not None or (ip.get("valid") is not False and not stopped)):
        reasons.append(f"the backend saw the test from {peer or 'an unknown address'}, not from {expected} "
                       "(the last hop): the traffic did not cross the chain as planned")
    if icmp and pg is None:
        reasons.append("ping: " + ((ping_run or {}).get("error") or "no output"))
    if sp is None:
        reasons.append("sockperf: " + (sockperf_run.get("error") or "no output"))
    if not cpu_ok:
        reasons.append("cpu_sample: " + str(cpu_run.get("msg") or "failed"))

    sources = {}
    for name, parsed in (("iperf3", ip), ("ping", pg), ("sockperf", sp)):
        if parsed is not None:
            sources[name] = parsed
    if cpu_ok:
        sources["cpu"] = (cpu_run.get("ansible_facts") or {}).get("cpu_sample", cpu_run)
    valid = not reasons and all(source.get("valid", True) for source in sources.values())
    warnings = [] if icmp else [f"{scenario.get('icmp_reason', 'ICMP does not cross this chain')}; "
                                "no ICMP RTT for this scenario"]
    raw = {"iperf3.json": iperf3_run.get("stdout") or "", "sockperf.txt": sockperf_run.get("stdout") or "",
           "cpu.json": _json_text((cpu_run.get("ansible_facts") or {}).get("cpu_sample", cpu_run))}
    if icmp:
        raw["ping.txt"] = (ping_run or {}).get("stdout") or ""
    if direct and direct.get("raw"):
        raw["direct-iperf3.json"] = direct["raw"]
    for number, text in enumerate((direct or {}).get("raws") or [], start=1):
        raw[f"direct-iperf3-{number}.json"] = text or ""
    # the fidelity pairs' runs (by hand and through the harness) load the chain too: their seconds are load
    load_s = sum(r.get("duration_s") or 0 for r in (iperf3_run, ping_run or {}, sockperf_run)) + float(
        (direct or {}).get("load_s") or 0)

    def fmt(value, pattern):
        return "N/A" if value is None else pattern % value

    summary = "{} Gbit/s, ICMP RTT {} ms, TCP RTT {} ms, host softirq {} %".format(
        fmt(metrics["throughput_gbps"], "%.3f"),
        fmt(metrics["icmp_rtt_avg_ms"], "%.3f"), fmt(metrics["tcp_rtt_avg_ms"], "%.4f"),
        fmt(metrics["host_softirq_pct"], "%.1f"))
    return {
        "point": point, "metrics": metrics, "valid": valid, "reasons": reasons, "warnings": warnings,
        "sources": sources, "raw": raw, "environment": environment,
        "extra": {"scenario": scenario, "cgroups": cgroups,
                  "fidelity_direct": {k: v for k, v in direct.items() if k not in ("raw", "raws", "pairs")} if direct else None,
                  "fidelity_pairs": direct.get("pairs") if direct else None},
        "started_at": started_at, "finished_at": finished_at, "load_s": round(load_s, 3), "summary": summary,
    }


def _links_down(info, links):
    """The links of a running container that are not up: ``[(interface, network, operstate, carrier)]``.

    ``links`` is the container's ``<interface> <operstate> <carrier> <mac>`` lines (read inside it from
    /sys/class/net); the network is the one whose MAC address Docker gave that interface.
    """
    networks = ((info.get("container") or {}).get("NetworkSettings") or {}).get("Networks") or {}
    by_mac = {(net or {}).get("MacAddress", "").lower(): name for name, net in networks.items()}
    down = []
    for line in (links or "").splitlines():
        fields = line.split()
        if len(fields) != 4 or fields[0] == "lo":
            continue
        interface, operstate, carrier, mac = fields
        if operstate != "up" or carrier != "1":
            down.append((interface, by_mac.get(mac.lower(), "?"), operstate, carrier))
    return down


def nfv_health(infos, links=None):
    """``{ok, problems: [{component, evidence}], links_down: [container]}`` from docker_container_info results
    (one per container) and, optionally, the results of reading every running container's links (``links``:
    one per container, ``item`` its name or its info result, ``stdout`` its ``<interface> <operstate> <carrier> <mac>`` lines).

    A running container with a link that is not up (its veth set down or pulled on the host: the end in the
    container has no carrier) forwards nothing on that network: a problem naming the container and the link,
    and the container in ``links_down`` (the recover hook restarts it: Docker gives it new veth pairs).
    """
    problems, links_down = [], []
    read = {}
    for result in links or []:
        item = result.get("item")   # the container's name, or its docker_container_info result
        if not result.get("skipped"):
            read[item.get("item") if isinstance(item, dict) else item] = result
    for info in infos or []:
        name = info.get("item") or "?"
        state = (info.get("container") or {}).get("State") if info.get("exists", True) else None
        if info.get("failed"):
            problems.append({"component": name, "evidence": "could not be inspected: " + str(info.get("msg", ""))})
        elif not state:
            problems.append({"component": name, "evidence": "the container does not exist"})
        elif not state.get("Running"):
            problems.append({"component": name, "evidence": "the container is {} (exit code {})".format(
                state.get("Status", "not running"), state.get("ExitCode"))})
        elif state.get("Paused"):
            problems.append({"component": name, "evidence": "the container is paused"})
        elif name in read and read[name].get("rc") != 0:   # no rc: the exec itself failed (its msg says why)
            problems.append({"component": name, "evidence": "its links could not be read: " + str(
                read[name].get("stderr") or read[name].get("msg") or "rc {}".format(read[name].get("rc")))[:300]})
        elif name in read:
            down = _links_down(info, read[name].get("stdout"))
            for interface, network, operstate, carrier in down:
                problems.append({"component": "{} link {}".format(name, interface), "evidence": (
                    "link {} of {} (network {}) is {}, carrier {}: it forwards nothing on that network".format(
                        interface, name, network, operstate, carrier))})
            if down:
                links_down.append(name)
    return {"ok": not problems, "problems": problems, "links_down": links_down}


def _json_text(value):
    import json
    return json.dumps(value, indent=4, sort_keys=True)


class FilterModule:
    """Filters of the NFV experiment role."""

    def filters(self):
        return {
            "nfv_point": nfv_point,
            "nfv_health": nfv_health,
            "nfv_study_tables": nfv_study_tables,
            "nfv_study_shape_tables": nfv_study_shape_tables,
            "nfv_fidelity": nfv_fidelity,
            "nfv_study_reference": nfv_study_reference,
        }
