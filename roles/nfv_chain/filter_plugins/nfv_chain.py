# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the NFV chain builder (roles/nfv_chain).

* ``nfv_topology``: the whole chain layout (networks, addresses, containers,
  entry point, what the backend must see) computed from the scenario list, so
  that the roles only apply it;
* ``nfv_cgroups``: each scenario's containers -> their cgroup paths for the
  CPU sampler.

Pure functions (tests/unit/test_filters_nfv.py); bad input raises
``AnsibleFilterError`` naming the filter and the bad value.
"""

import ipaddress
import re

try:
    from ansible.errors import AnsibleFilterError
except ImportError:  # pragma: no cover - only without ansible
    class AnsibleFilterError(Exception):
        pass

# VNF types a hop may be, and what each lets through.
VNF_TYPES = {
    # iptables DNAT + MASQUERADE in the kernel: forwards packets, ICMP and UDP included.
    "firewall": {"layer": 3, "icmp": True, "udp": True},
    # HAProxy in mode tcp: terminates TCP connections and opens new ones; no ICMP, no UDP.
    "loadbalancer": {"layer": 4, "icmp": False, "udp": False},
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
MAX_BRIDGE_NAME = 15  # IFNAMSIZ - 1
_TOPOLOGY = "nfv_topology"  # the filter named in its error messages


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
    if not isinstance(scenarios, (list, tuple)) or not scenarios:
        _fail(_TOPOLOGY, f"scenarios must be a non-empty list of {{name, hops}}, got {scenarios!r}")
    layout = _layout(len(scenarios), name, subnet_prefix, segments_per_scenario, bridge_prefix, left_host, right_host)
    client = {"name": f"{name}-client", "role": "client", "networks": []}
    backend = {"name": f"{name}-backend", "role": "backend", "networks": []}
    networks, vnfs, out = [], [], []
    seen = set()
    for index, scenario in enumerate(scenarios):
        sname, hops = _scenario_hops(index, scenario, seen, layout["per"])
        segments = _segments(layout, index, sname, len(hops) + 1)
        networks.extend(segments)
        client["networks"].append({"name": segments[0]["name"], "ipv4_address": segments[0]["left"]})
        backend["networks"].append({"name": segments[-1]["name"], "ipv4_address": segments[-1]["right"]})
        scenario_vnfs = _scenario_vnfs(name, sname, hops, segments)
        vnfs.extend(scenario_vnfs)
        cgroups = {"client": client["name"], "backend": backend["name"]}
        cgroups.update((vnf["key"], vnf["name"]) for vnf in scenario_vnfs)
        out.append(_scenario_entry(index, scenario, hops, segments, scenario_vnfs, cgroups))
    return {"name": name, "client": client, "backend": backend, "networks": networks, "vnfs": vnfs,
            "scenarios": out, "subnets": [n["subnet"] for n in networks]}


def _layout(count, name, subnet_prefix, segments_per_scenario, bridge_prefix, left_host, right_host):
    """nfv_topology's checked parameters for ``count`` scenarios, as one mapping."""
    if not isinstance(name, str) or not _NAME.match(name):
        _fail(_TOPOLOGY, f"chain name {name!r} must be lower-case letters, digits, '_', '.', '-'")
    per = _int(_TOPOLOGY, segments_per_scenario, "segments_per_scenario", 2, 64)
    left = _int(_TOPOLOGY, left_host, "left_host", 2, 254)
    right = _int(_TOPOLOGY, right_host, "right_host", 2, 254)
    if left == right:
        _fail(_TOPOLOGY, f"left_host and right_host must differ, both are {left}")
    octets = str(subnet_prefix).split(".")
    if len(octets) != 2 or not all(o.isdigit() and 0 <= int(o) <= 255 for o in octets):
        _fail(_TOPOLOGY, f"subnet_prefix must be the first two octets like '10.231', got {subnet_prefix!r}")
    if not ipaddress.ip_network(f"{subnet_prefix}.0.0/16").is_private:
        _fail(_TOPOLOGY, f"subnet_prefix {subnet_prefix} is not a private range (use 10.x, 172.16-31.x or 192.168)")
    if count * per > 256:
        _fail(_TOPOLOGY, f"{count} scenarios x {per} segments do not fit in {subnet_prefix}.0.0/16")
    if not isinstance(bridge_prefix, str) or not re.match(r"^[a-z0-9-]{0,8}$", bridge_prefix):
        _fail(_TOPOLOGY, f"bridge_prefix must be up to 8 of [a-z0-9-], got {bridge_prefix!r}")
    return {"name": name, "subnet_prefix": subnet_prefix, "per": per, "left": left, "right": right,
            "bridge_prefix": bridge_prefix}


def _scenario_hops(index, scenario, seen, per):
    """``(name, hops)`` of ``scenarios[index]``, checked; the name is added to ``seen``."""
    where = f"scenarios[{index}]"
    if not isinstance(scenario, dict):
        _fail(_TOPOLOGY, f"{where} must be a mapping with name and hops, got {scenario!r}")
    unknown = sorted(set(scenario) - {"name", "hops", "description"})
    if unknown:
        _fail(_TOPOLOGY, "{} has unknown key(s) {} (allowed: name, hops, description)".format(where, ", ".join(unknown)))
    sname = scenario.get("name")
    if not isinstance(sname, str) or not _NAME.match(sname):
        _fail(_TOPOLOGY, f"{where}.name {sname!r} must be lower-case letters, digits, '_', '.', '-'")
    if sname in seen:
        _fail(_TOPOLOGY, f"{where}.name {sname!r} is used twice")
    seen.add(sname)
    hops = scenario.get("hops", [])
    if hops is None:
        hops = []
    if not isinstance(hops, (list, tuple)):
        _fail(_TOPOLOGY, f"{where}.hops must be a list of VNF types, got {hops!r}")
    for number, hop in enumerate(hops):
        if hop not in VNF_TYPES:
            _fail(_TOPOLOGY, "{}.hops[{}] is {!r}; VNF types are {}".format(
                where, number, hop, ", ".join(sorted(VNF_TYPES))))
    if len(hops) + 1 > per:
        _fail(_TOPOLOGY, f"{where} has {len(hops)} hops; at most {per - 1} fit (raise segments_per_scenario)")
    return sname, hops


def _segments(layout, index, sname, count):
    """The ``count`` network segments of scenario ``index`` (bridge, /24, both side addresses)."""
    name, per = layout["name"], layout["per"]
    segments = []
    for seg in range(count):
        third = index * per + seg
        subnet = f"{layout['subnet_prefix']}.{third}"
        bridge = f"{layout['bridge_prefix']}s{index}n{seg}"
        if len(bridge) > MAX_BRIDGE_NAME:
            _fail(_TOPOLOGY, f"bridge name {bridge} is longer than {MAX_BRIDGE_NAME} characters")
        segments.append({"name": f"{name}-{sname}-net{seg}", "bridge": bridge, "subnet": f"{subnet}.0/24",
                         "gateway": f"{subnet}.1", "scenario": sname, "segment": seg,
                         "left": f"{subnet}.{layout['left']}", "right": f"{subnet}.{layout['right']}"})
    return segments


def _scenario_vnfs(name, sname, hops, segments):
    """One container per hop, between the segment before it and the one after."""
    scenario_vnfs = []
    for number, vnf_type in enumerate(hops, start=1):
        ingress, egress = segments[number - 1], segments[number]
        scenario_vnfs.append({
            "name": f"{name}-{sname}-hop{number}-{vnf_type}",
            "type": vnf_type,
            "scenario": sname,
            "hop": number,
            "key": cgroup_key(number, vnf_type),
            "networks": [{"name": ingress["name"], "ipv4_address": ingress["right"]},
                         {"name": egress["name"], "ipv4_address": egress["left"]}],
            "ingress_address": ingress["right"],
            "egress_address": egress["left"],
            "next_hop": egress["right"],
        })
    return scenario_vnfs


def _scenario_entry(index, scenario, hops, segments, scenario_vnfs, cgroups):
    """A scenario's summary: chain, addresses, the backend's expected peer, what passes."""
    l4 = [f"hop {v['hop']} ({v['type']})" for v in scenario_vnfs if not VNF_TYPES[v["type"]]["icmp"]]
    return {
        "name": scenario["name"],
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
    }


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

class FilterModule:
    """Filters of the NFV chain builder."""

    def filters(self):
        return {
            "nfv_topology": nfv_topology,
            "nfv_cgroups": nfv_cgroups,
        }
