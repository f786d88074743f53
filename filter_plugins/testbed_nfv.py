# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the NFV service-chain experiment (playbooks/nfv-chain.yml).

* ``nfv_topology``: the whole chain layout (networks, addresses, containers,
  entry point, what the backend must see) computed from the scenario list, so
  that the roles only apply it;
* ``nfv_study_tables``: the study's tables (throughput + drop, latency + rise,
  CPU per container) from the stored point documents, with the drop/rise
  computed by ``pct_drop`` / ``pct_change`` of filter_plugins/testbed_stats.py;
* ``nfv_fidelity``: the harness's baseline throughput against iperf3 run by hand.

Pure functions; bad input raises ``AnsibleFilterError`` naming the filter and
the bad value.
"""

import ipaddress
import math
import os
import re
import sys

try:
    from ansible.errors import AnsibleFilterError
except ImportError:  # pragma: no cover - only without ansible
    class AnsibleFilterError(Exception):
        pass

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import testbed_stats as stats  # noqa: E402

# VNF types a hop may be, and what each lets through.
VNF_TYPES = {
    # iptables DNAT + MASQUERADE in the kernel: forwards packets, ICMP and UDP included.
    "firewall": {"layer": 3, "icmp": True, "udp": True},
    # HAProxy in mode tcp: terminates TCP connections and opens new ones; no ICMP, no UDP.
    "loadbalancer": {"layer": 4, "icmp": False, "udp": False},
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
MAX_BRIDGE_NAME = 15  # IFNAMSIZ - 1


def _fail(name, message):
    raise AnsibleFilterError(f"{name}: {message}")


def _int(name, value, what, low, high):
    if isinstance(value, bool):
        _fail(name, f"{what} must be a whole number, got {value!r}")
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        _fail(name, f"{what} must be a whole number, got {value!r}")
    if not low <= number <= high:
        _fail(name, f"{what} must be between {low} and {high}, got {number}")
    return number


def cgroup_key(hop, vnf_type):
    """Metric prefix of a VNF container: ``vnf1_firewall``."""
    return f"vnf{hop}_{vnf_type}"


def nfv_topology(scenarios, name="nfv", subnet_prefix="10.231", segments_per_scenario=8,
                 bridge_prefix="nfv-", left_host=10, right_host=20):
    """The chain layout for a list of scenarios ``[{name, hops: [type, ...]}]``.

    Scenario ``i`` (0-based) has ``len(hops) + 1`` segments; segment ``j`` is
    the /24 ``<subnet_prefix>.<i * segments_per_scenario + j>.0`` on bridge
    ``<bridge_prefix>s<i>n<j>``.  On every segment the node on the client side
    gets host number ``left_host`` and the node on the backend side
    ``right_host``; ``.1`` is the bridge.  One client and one backend serve
    every scenario: the client sits on segment 0 of each scenario, the backend
    on its last segment.  Each hop listens on its ingress address and forwards
    to the next node's ingress address (the backend's address at the end).
    """
    fname = "nfv_topology"
    if not isinstance(scenarios, (list, tuple)) or not scenarios:
        _fail(fname, f"scenarios must be a non-empty list of {{name, hops}}, got {scenarios!r}")
    if not isinstance(name, str) or not _NAME.match(name):
        _fail(fname, f"chain name {name!r} must be lower-case letters, digits, '_', '.', '-'")
    per = _int(fname, segments_per_scenario, "segments_per_scenario", 2, 64)
    left = _int(fname, left_host, "left_host", 2, 254)
    right = _int(fname, right_host, "right_host", 2, 254)
    if left == right:
        _fail(fname, f"left_host and right_host must differ, both are {left}")
    octets = str(subnet_prefix).split(".")
    if len(octets) != 2 or not all(o.isdigit() and 0 <= int(o) <= 255 for o in octets):
        _fail(fname, f"subnet_prefix must be the first two octets like '10.231', got {subnet_prefix!r}")
    if not ipaddress.ip_network(f"{subnet_prefix}.0.0/16").is_private:
        _fail(fname, f"subnet_prefix {subnet_prefix} is not a private range (use 10.x, 172.16-31.x or 192.168)")
    if len(scenarios) * per > 256:
        _fail(fname, f"{len(scenarios)} scenarios x {per} segments do not fit in {subnet_prefix}.0.0/16")
    if not isinstance(bridge_prefix, str) or not re.match(r"^[a-z0-9-]{0,8}$", bridge_prefix):
        _fail(fname, f"bridge_prefix must be up to 8 of [a-z0-9-], got {bridge_prefix!r}")

    client = {"name": f"{name}-client", "role": "client", "networks": []}
    backend = {"name": f"{name}-backend", "role": "backend", "networks": []}
    networks, vnfs, out = [], [], []
    seen = set()
    for index, scenario in enumerate(scenarios):
        where = f"scenarios[{index}]"
        if not isinstance(scenario, dict):
            _fail(fname, f"{where} must be a mapping with name and hops, got {scenario!r}")
        unknown = sorted(set(scenario) - {"name", "hops", "description"})
        if unknown:
            _fail(fname, "{} has unknown key(s) {} (allowed: name, hops, description)".format(where, ", ".join(unknown)))
        sname = scenario.get("name")
        if not isinstance(sname, str) or not _NAME.match(sname):
            _fail(fname, f"{where}.name {sname!r} must be lower-case letters, digits, '_', '.', '-'")
        if sname in seen:
            _fail(fname, f"{where}.name {sname!r} is used twice")
        seen.add(sname)
        hops = scenario.get("hops", [])
        if hops is None:
            hops = []
        if not isinstance(hops, (list, tuple)):
            _fail(fname, f"{where}.hops must be a list of VNF types, got {hops!r}")
        for number, hop in enumerate(hops):
            if hop not in VNF_TYPES:
                _fail(fname, "{}.hops[{}] is {!r}; VNF types are {}".format(where, number, hop, ", ".join(sorted(VNF_TYPES))))
        if len(hops) + 1 > per:
            _fail(fname, f"{where} has {len(hops)} hops; at most {per - 1} fit (raise segments_per_scenario)")

        segments = []
        for seg in range(len(hops) + 1):
            third = index * per + seg
            subnet = f"{subnet_prefix}.{third}"
            bridge = f"{bridge_prefix}s{index}n{seg}"
            if len(bridge) > MAX_BRIDGE_NAME:
                _fail(fname, f"bridge name {bridge} is longer than {MAX_BRIDGE_NAME} characters")
            net = {"name": f"{name}-{sname}-net{seg}", "bridge": bridge, "subnet": f"{subnet}.0/24",
                   "gateway": f"{subnet}.1", "scenario": sname, "segment": seg,
                   "left": f"{subnet}.{left}", "right": f"{subnet}.{right}"}
            networks.append(net)
            segments.append(net)
        client["networks"].append({"name": segments[0]["name"], "ipv4_address": segments[0]["left"]})
        backend["networks"].append({"name": segments[-1]["name"], "ipv4_address": segments[-1]["right"]})

        cgroups = {"client": client["name"], "backend": backend["name"]}
        scenario_vnfs = []
        for number, vnf_type in enumerate(hops, start=1):
            ingress, egress = segments[number - 1], segments[number]
            next_hop = egress["right"]
            vnf = {
                "name": f"{name}-{sname}-hop{number}-{vnf_type}",
                "type": vnf_type,
                "scenario": sname,
                "hop": number,
                "key": cgroup_key(number, vnf_type),
                "networks": [{"name": ingress["name"], "ipv4_address": ingress["right"]},
                             {"name": egress["name"], "ipv4_address": egress["left"]}],
                "ingress_address": ingress["right"],
                "egress_address": egress["left"],
                "next_hop": next_hop,
            }
            vnfs.append(vnf)
            scenario_vnfs.append(vnf)
            cgroups[vnf["key"]] = vnf["name"]
        l4 = [f"hop {v['hop']} ({v['type']})" for v in scenario_vnfs if not VNF_TYPES[v["type"]]["icmp"]]
        out.append({
            "name": sname,
            "index": index,
            "description": scenario.get("description") or (
                "client and backend on one network" if not hops else "client -> {} -> backend".format(" -> ".join(hops))),
            "hops": list(hops),
            "chain": "+".join(hops) if hops else "none",
            "entry": segments[0]["right"],
            "client_address": segments[0]["left"],
            "backend_address": segments[-1]["right"],
            # Whom the backend sees as its peer: the client, or the last hop's egress address
            # (MASQUERADE of a firewall, the new connection of a proxy).
            "expected_peer": segments[0]["left"] if not hops else segments[-1]["left"],
            "icmp_passes": not l4,
            "icmp_reason": None if not l4 else (
                "ICMP does not pass {}: an L4 proxy relays TCP connections, not packets, so a ping would "
                "only measure the way to the proxy".format(", ".join(l4))),
            "udp_passes": all(VNF_TYPES[v["type"]]["udp"] for v in scenario_vnfs),
            "vnfs": [v["name"] for v in scenario_vnfs],
            "containers": cgroups,
            "networks": [s["name"] for s in segments],
        })
    return {"name": name, "client": client, "backend": backend, "networks": networks, "vnfs": vnfs,
            "scenarios": out, "subnets": [n["subnet"] for n in networks]}


def nfv_plan(topology, repetitions, parameters=None, order="interleaved"):
    """The result_run plan: every scenario x repetition (1..n) with the same parameters.

    ``order`` ``interleaved`` gives rep 1 of every scenario, then rep 2...;
    ``grouped`` all repetitions of one scenario, then the next.
    """
    fname = "nfv_plan"
    if not isinstance(topology, dict) or not isinstance(topology.get("scenarios"), list):
        _fail(fname, "topology must be the result of nfv_topology")
    reps = _int(fname, repetitions, "repetitions", 1, 1000)
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, dict):
        _fail(fname, f"parameters must be a mapping, got {parameters!r}")
    if order not in ("interleaved", "grouped"):
        _fail(fname, f"order must be interleaved or grouped, got {order!r}")
    names = [s["name"] for s in topology["scenarios"]]
    if order == "interleaved":
        pairs = [(rep, name) for rep in range(1, reps + 1) for name in names]
    else:
        pairs = [(rep, name) for name in names for rep in range(1, reps + 1)]
    return [{"variant": name, "parameters": dict(parameters), "repetition": rep} for rep, name in pairs]


def nfv_cgroups(topology, containers, cgroup_driver="cgroupfs"):
    """Per scenario, role key -> cgroup of the container (for cpu_sample).

    ``containers`` is ``community.docker.docker_host_info``'s ``containers``
    list (``Names`` and ``Id``); the cgroup is ``docker/<id>`` with the
    cgroupfs driver and ``system.slice/docker-<id>.scope`` with systemd.
    """
    fname = "nfv_cgroups"
    if not isinstance(topology, dict) or not isinstance(topology.get("scenarios"), list):
        _fail(fname, "topology must be the result of nfv_topology")
    if not isinstance(containers, (list, tuple)):
        _fail(fname, f"containers must be docker_host_info's containers list, got {containers!r}")
    if cgroup_driver not in ("cgroupfs", "systemd"):
        _fail(fname, f"cgroup_driver must be cgroupfs or systemd, got {cgroup_driver!r}")
    ids = {}
    for item in containers:
        names = item.get("Names") or [] if isinstance(item, dict) else []
        if not names or not item.get("Id"):
            _fail(fname, f"container entry {item!r} has no Names/Id")
        for name in names:
            ids[name.lstrip("/")] = item["Id"]
    pattern = "system.slice/docker-{}.scope" if cgroup_driver == "systemd" else "docker/{}"
    out = {}
    for scenario in topology["scenarios"]:
        groups = {}
        for key, name in scenario["containers"].items():
            if name not in ids:
                _fail(fname, f"container {name} of scenario {scenario['name']} is not running")
            groups[key] = pattern.format(ids[name])
        out[scenario["name"]] = groups
    return out


# ---------------------------------------------------------------------------
# study tables
# ---------------------------------------------------------------------------

def _fmt(value, digits=3):
    if value is None:
        return "N/A"
    if value == 0:
        return "0"
    decimals = max(0, min(6, digits - 1 - int(math.floor(math.log10(abs(value))))))
    return f"{value:.{decimals}f}"


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


def nfv_fidelity(direct, harness, tolerance_pct=5.0, direct_scale=1.0):
    """Compare iperf3 run by hand (``direct`` values x ``direct_scale`` = Gbit/s) with the
    harness's baseline throughputs (Gbit/s).

    Returns ``{direct_mean, harness_mean, difference_pct, tolerance_pct, passed, sentence}``
    where difference = pct_change(direct mean, harness mean).
    """
    fname = "nfv_fidelity"
    if not isinstance(direct, (list, tuple)) or not direct:
        _fail(fname, f"direct must be a non-empty list of throughputs, got {direct!r}")
    try:
        scale = float(direct_scale)
    except (TypeError, ValueError):
        _fail(fname, f"direct_scale must be a number, got {direct_scale!r}")
    direct = [stats._number(fname, v, "direct value") * scale for v in direct]
    if not isinstance(harness, (list, tuple)) or not harness:
        _fail(fname, f"harness must be a non-empty list of throughputs, got {harness!r}")
    try:
        tolerance = float(tolerance_pct)
    except (TypeError, ValueError):
        _fail(fname, f"tolerance_pct must be a number, got {tolerance_pct!r}")
    if not tolerance > 0:
        _fail(fname, f"tolerance_pct must be > 0, got {tolerance_pct!r}")
    d = stats.summary(list(direct))
    h = stats.summary(list(harness))
    diff = stats.pct_change(d["mean"], h["mean"])
    passed = abs(diff) <= tolerance
    # For scale: how far the repetitions of each side spread ((max - min) / mean), i.e. the
    # machine's own run-to-run noise that the difference has to be read against.
    spread_h = (h["max"] - h["min"]) / h["mean"] * 100.0 if h["n"] > 1 and h["mean"] else None
    spread_d = (d["max"] - d["min"]) / d["mean"] * 100.0 if d["n"] > 1 and d["mean"] else None
    sentence = ("Fidelity check {}: iperf3 run directly (plain docker exec, no harness) on the baseline's client "
                "and backend gave {} Gbit/s (n={}), the harness's baseline {} Gbit/s (n={}); difference {:+.2f} % "
                "(tolerance \u00b1{:g} %).").format(
        "passed" if passed else "FAILED", _fmt(d["mean"], 4), d["n"], _fmt(h["mean"], 4), h["n"], diff, tolerance)
    if spread_h is not None and spread_d is not None:
        sentence += (" Run-to-run spread (max \u2212 min) / mean on this machine: harness {:.1f} %, direct {:.1f} %."
                     ).format(spread_h, spread_d)
    return {"direct_mean": d["mean"], "harness_mean": h["mean"], "difference_pct": diff,
            "tolerance_pct": tolerance, "passed": passed, "direct_n": d["n"], "harness_n": h["n"],
            "harness_spread_pct": spread_h, "direct_spread_pct": spread_d, "sentence": sentence}


class FilterModule:
    """Filters of the NFV chain experiment."""

    def filters(self):
        return {
            "nfv_topology": nfv_topology,
            "nfv_cgroups": nfv_cgroups,
            "nfv_plan": nfv_plan,
            "nfv_study_tables": nfv_study_tables,
            "nfv_fidelity": nfv_fidelity,
        }
