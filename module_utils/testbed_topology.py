# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Topology pictures of the experiments (Mermaid flowcharts in Markdown), from an inventory's facts.

Pure: ``topology_markdown(facts)`` takes what playbooks/show-topology.yml gathers from the inventory
(hosts, addresses, networks; each experiment's part absent when the inventory has no host for it)
and returns one Markdown page with a picture per experiment. docs/topology.md is the lab
inventory's page (``make topology``; tests/unit/test_topology.py checks it is current).
"""

import re


class TopologyError(ValueError):
    """Facts that cannot make a picture (a required key missing)."""


def _id(name):
    """A Mermaid node id for a host or network name."""
    return "n_" + re.sub(r"[^A-Za-z0-9_]", "_", str(name))


def _label(*lines):
    """A node label: lines joined with <br/>, quotes removed (Mermaid's label syntax)."""
    return "<br/>".join(str(line).replace('"', "'") for line in lines if line not in (None, ""))


def _node(name, *lines, shape="box"):
    text = _label(*lines)
    if shape == "net":
        return f'  {_id(name)}(["{text}"])'
    if shape == "round":
        return f'  {_id(name)}("{text}")'
    return f'  {_id(name)}["{text}"]'


def _need(facts, what, *keys):
    missing = [k for k in keys if k not in facts]
    if missing:
        raise TopologyError(f"{what}: the facts lack {', '.join(missing)}")


def lvs_mermaid(facts):
    """LVS: clients -> VIP on the director -> real servers (NAT: the director is their gateway)."""
    _need(facts, "lvs", "clients", "director", "real_servers", "vip", "forwarding")
    director = facts["director"]
    out = ["flowchart LR"]
    out.append(_node("lvs_public", "public network", facts.get("public_network") or "", shape="net"))
    out.append(_node("lvs_private", "private network", facts.get("private_network") or "", shape="net"))
    for client in facts["clients"]:
        out.append(_node(client["name"], client["name"], client.get("address"), "httperf"))
        out.append(f"  {_id(client['name'])} --- {_id('lvs_public')}")
    out.append(_node(director["name"], director["name"], f"VIP {facts['vip']}",
                     f"public {director['public_address']}" if director.get("public_address") else "",
                     f"private {director['private_address']}" if director.get("private_address") else "",
                     f"IPVS, forwarding {facts['forwarding']}"))
    out.append(f"  {_id('lvs_public')} --- {_id(director['name'])}")
    out.append(f"  {_id(director['name'])} --- {_id('lvs_private')}")
    for server in facts["real_servers"]:
        out.append(_node(server["name"], server["name"], server.get("address"), "Apache"))
        out.append(f"  {_id('lvs_private')} --- {_id(server['name'])}")
    return out


def storage_mermaid(facts):
    """Storage: the compute node (or the client VM) reaches the storage node's volume over the network."""
    _need(facts, "storage", "nodes", "compute", "clients", "access")
    out = ["flowchart LR"]
    network = facts.get("network") or {}
    out.append(_node("storage_net", "storage network", network.get("subnet") or "", shape="net"))
    for node in facts["nodes"]:
        out.append(_node(node["name"], node["name"], node.get("address"), "ZFS zvol or Ceph RBD",
                         "data disks: " + ", ".join(node.get("disks") or []) if node.get("disks") else ""))
        out.append(f"  {_id('storage_net')} --- {_id(node['name'])}")
    for host in facts["compute"]:
        out.append(_node(host["name"], host["name"], host.get("address"), f"access: {facts['access']}"))
        out.append(f"  {_id(host['name'])} --- {_id('storage_net')}")
    for client in facts["clients"]:
        out.append(_node(client["name"], client["name"], "fio, IOzone on the volume", shape="round"))
        for host in facts["compute"]:
            out.append(f"  {_id(host['name'])} -. runs .-> {_id(client['name'])}")
    return out


def containers_mermaid(facts):
    """Containers: one host runs the same workloads natively and in each guest."""
    _need(facts, "containers", "host", "guests")
    out = ["flowchart TB"]
    out.append(_node(facts["host"], facts["host"], "the workloads' clients and servers"))
    for guest in facts["guests"]:
        out.append(_node(guest["name"], guest["name"], guest.get("variant"), guest.get("connection"), shape="round"))
        out.append(f"  {_id(facts['host'])} --- {_id(guest['name'])}")
    return out


def nfv_mermaid(facts):
    """NFV: per scenario, client -> the chain's VNFs -> backend, each segment a network of its own."""
    _need(facts, "nfv", "host", "scenarios")
    out = ["flowchart LR"]
    for scenario in facts["scenarios"]:
        name = scenario["name"]
        out.append(f'  subgraph {_id("s_" + name)}["{_label(name)}"]')
        vnfs = sorted((v for v in facts.get("vnfs") or [] if v.get("scenario") == name), key=lambda v: v.get("hop", 0))
        chain = ([("client", scenario.get("client_address"))]
                 + [(vnf["type"], f"{vnf.get('ingress_address')} / {vnf.get('egress_address')}") for vnf in vnfs]
                 + [("backend", scenario.get("backend_address"))])
        previous = None
        for index, (kind, address) in enumerate(chain):
            node = f"{name}_{index}_{kind}"
            out.append("  " + _node(node, kind, address, shape="round" if kind in ("client", "backend") else "box"))
            if previous:
                out.append(f"    {_id(previous)} --> {_id(node)}")
            previous = node
        out.append("  end")
    out.append(f'  %% every container runs on {facts["host"]}')
    return out


def hosts_mermaid(facts):
    """The worked example: the load runs on each host of the group."""
    _need(facts, "cpu_scaling", "hosts")
    out = ["flowchart LR"]
    for host in facts["hosts"]:
        out.append(_node(host, host, "sysbench cpu"))
    return out


# The variables of a host the pictures read (topology_vars picks them from its hostvars).
TOPOLOGY_VARS = ("ansible_host", "ansible_connection", "lab_ipv4_address", "lab_director_public_address",
                 "lab_director_private_address", "lab_network_networks", "lvs_rip", "lvs_director_vip",
                 "lvs_director_forwarding", "lvs_director_private_network", "storage_compare_access",
                 "storage_compare_lab_network", "storage_compare_export_address", "container_compare_variant")


def topology_vars(host_vars):
    """The TOPOLOGY_VARS a host has (from its hostvars, templated by Ansible when read)."""
    out = {}
    for key in TOPOLOGY_VARS:
        try:
            if key in host_vars:
                out[key] = host_vars[key]
        except Exception:  # pylint: disable=broad-except  # a variable whose template fails is left out
            continue
    return out


def topology_facts(groups, host_vars, defaults=None, nfv_topology=None):
    """What the pictures need, from the inventory's ``groups``, ``host_vars`` ({host: topology_vars})
    and the roles' ``defaults`` (lvs_director_forwarding, storage_compare_access) for a setting the
    inventory does not give; ``nfv_topology`` is roles/nfv_chain's computed layout (nfv_topology)."""
    defaults = defaults or {}

    def hv(host):
        return host_vars.get(host) or {}

    facts = {}
    director = (groups.get("lvs_director") or [None])[0]
    if director:
        d = hv(director)
        networks = d.get("lab_network_networks") or []
        facts["lvs"] = {
            "clients": [{"name": h, "address": hv(h).get("lab_ipv4_address") or hv(h).get("ansible_host")}
                        for h in groups.get("lvs_clients") or []],
            "director": {"name": director,
                         "public_address": d.get("lab_director_public_address") or d.get("ansible_host"),
                         "private_address": d.get("lab_director_private_address")},
            "real_servers": [{"name": h, "address": hv(h).get("lvs_rip")} for h in groups.get("lvs_real_servers") or []],
            "vip": d.get("lvs_director_vip", "(lvs_director_vip)"),
            "forwarding": d.get("lvs_director_forwarding", defaults.get("lvs_director_forwarding")),
            "public_network": (networks[0] if networks else {}).get("subnet"),
            "private_network": d.get("lvs_director_private_network"),
        }
    node = (groups.get("storage_nodes") or [None])[0]
    if node:
        n = hv(node)
        facts["storage"] = {
            "nodes": [{"name": h, "address": hv(h).get("storage_compare_export_address") or hv(h).get("ansible_host")}
                      for h in groups.get("storage_nodes") or []],
            "compute": [{"name": h} for h in groups.get("storage_compute_nodes") or []],
            "clients": [{"name": h} for h in groups.get("storage_clients") or []],
            "access": n.get("storage_compare_access", defaults.get("storage_compare_access")),
            "network": n.get("storage_compare_lab_network") or {},
        }
    if groups.get("nfv_docker_host") and nfv_topology:
        facts["nfv"] = {"host": groups["nfv_docker_host"][0], "scenarios": nfv_topology.get("scenarios") or [],
                        "vnfs": nfv_topology.get("vnfs") or []}
    if groups.get("container_host"):
        facts["containers"] = {
            "host": groups["container_host"][0],
            "guests": [{"name": h, "variant": hv(h).get("container_compare_variant"),
                        "connection": hv(h).get("ansible_connection", "ssh")} for h in groups.get("container_guests") or []],
        }
    if groups.get("cpu_scaling_hosts"):
        facts["cpu_scaling"] = {"hosts": list(groups["cpu_scaling_hosts"])}
    return facts


SECTIONS = (
    ("lvs", "Experiment 1: LVS schedulers (`playbooks/lvs-compare.yml`)", lvs_mermaid),
    ("storage", "Experiment 2: Ceph RBD vs ZFS zvol over the network (`playbooks/storage-compare.yml`)",
     storage_mermaid),
    ("nfv", "Experiment 3: the Docker NFV chain (`playbooks/nfv-chain.yml`)", nfv_mermaid),
    ("containers", "Experiment 4: container runtimes and KVM vs native (`playbooks/container-compare.yml`)",
     containers_mermaid),
    ("cpu_scaling", "The worked example: CPU scaling (`playbooks/cpu-scaling.yml`)", hosts_mermaid),
)


def topology_markdown(facts, inventory="the inventory"):
    """One Markdown page, a picture per experiment the facts describe (in the order of SECTIONS)."""
    out = [f"# Topology of {inventory}", "",
           "Generated by `ansible-playbook playbooks/show-topology.yml -i <inventory>` from the inventory's hosts "
           "and settings (`make topology` for the lab); a picture per experiment the inventory has hosts for.", ""]
    shown = 0
    for key, title, draw in SECTIONS:
        part = (facts or {}).get(key)
        if not part:
            continue
        out += [f"## {title}", "", "```mermaid"] + draw(part) + ["```", ""]
        shown += 1
    if not shown:
        out += ["The inventory has no host of any experiment's groups.", ""]
    return "\n".join(out)
