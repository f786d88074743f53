"""The NFV chains built by converge really carry traffic through their VNFs.

Layout (roles/nfv_chain, chain nfvmol on 10.232.0.0/16, 8 segments per
scenario, client side .10, backend side .20):
  baseline  client 10.232.0.10 -> backend 10.232.0.20
  1-vnf     client 10.232.8.10 -> firewall 10.232.8.20 | 10.232.9.10 -> backend 10.232.9.20
  2-vnf     client 10.232.16.10 -> firewall 10.232.16.20 | 10.232.17.10
            -> haproxy 10.232.17.20 | 10.232.18.10 -> backend 10.232.18.20
"""
import json
import re

import pytest

CLIENT = "nfvmol-client"
BACKEND = "nfvmol-backend"
FW1 = "nfvmol-1-vnf-hop1-firewall"
FW2 = "nfvmol-2-vnf-hop1-firewall"
LB2 = "nfvmol-2-vnf-hop2-loadbalancer"
CONTAINERS = (CLIENT, BACKEND, FW1, FW2, LB2)


def docker(host, *args):
    cmd = host.run("docker " + " ".join(args))
    assert cmd.rc == 0, cmd.stderr
    return cmd.stdout


def inspect(host, name):
    return json.loads(docker(host, "inspect", name))[0]


def dnat_packets(host, firewall, comment, table="nat", chain="PREROUTING"):
    """Packet counter of the rule with this comment (nat: first packet of each flow only)."""
    out = docker(host, "exec", firewall, "iptables", "-t", table, "-L", chain, "-v", "-n", "-x")
    for line in out.splitlines():
        if f"/* {comment} */" in line:
            return int(line.split()[0])
    raise AssertionError(f"no rule {comment} in {firewall}:\n{out}")


def iperf3_peer(host, entry):
    """Run a 1 s iperf3 test through the chain; return (bytes received, peer the backend saw).

    Bytes, not a rate: the test checks that traffic crosses the chain, and a
    throughput floor would depend on the machine's speed and load.
    """
    out = docker(host, "exec", CLIENT, "iperf3", "-c", entry, "-t", "1", "-J", "--get-server-output")
    result = json.loads(out)
    assert "error" not in result, result.get("error")
    match = re.search(r"Accepted connection from ([0-9.]+)", result["server_output_text"])
    assert match, result["server_output_text"]
    return result["end"]["sum_received"]["bytes"], match.group(1)


@pytest.mark.parametrize("name", CONTAINERS)
def test_containers_run_with_the_chain_label(host, name):
    state = inspect(host, name)
    assert state["State"]["Running"] is True
    assert state["Config"]["Labels"]["org.testbed.nfv-chain"] == "nfvmol"


@pytest.mark.parametrize("name", (FW1, FW2))
def test_firewall_has_net_admin_only_and_forwards(host, name):
    config = inspect(host, name)["HostConfig"]
    assert config["Privileged"] is False
    assert [c.replace("CAP_", "") for c in config["CapAdd"]] == ["NET_ADMIN"]
    assert config["Sysctls"] == {"net.ipv4.ip_forward": "1"}
    assert docker(host, "exec", name, "cat", "/proc/sys/net/ipv4/ip_forward").strip() == "1"


def test_networks_are_internal_with_fixed_bridges(host):
    net = json.loads(docker(host, "network", "inspect", "nfvmol-2-vnf-net1"))[0]
    assert net["Internal"] is True
    assert net["Options"]["com.docker.network.bridge.name"] == "nfm-s2n1"
    assert net["IPAM"]["Config"][0]["Subnet"] == "10.232.17.0/24"


def test_baseline_goes_straight_to_the_backend(host):
    received, peer = iperf3_peer(host, "10.232.0.20")
    assert peer == "10.232.0.10"
    assert received > 0


def test_one_vnf_traffic_crosses_the_firewall_nat(host):
    before = dnat_packets(host, FW1, "nfv-dnat-tcp-5201")
    received, peer = iperf3_peer(host, "10.232.8.20")
    # DNAT counted the new connections; MASQUERADE made the backend see the firewall.
    assert dnat_packets(host, FW1, "nfv-dnat-tcp-5201") >= before + 2
    assert peer == "10.232.9.10"
    assert received > 0


def test_icmp_crosses_the_firewall(host):
    before = dnat_packets(host, FW1, "nfv-allow-icmp", table="filter", chain="FORWARD")
    out = docker(host, "exec", CLIENT, "ping", "-c", "3", "-i", "0.2", "10.232.8.20")
    assert "3 received" in out
    # The echo flow was DNATed to the backend: the firewall's conntrack entry has the
    # client -> firewall original direction and a backend -> firewall-egress reply direction.
    assert dnat_packets(host, FW1, "nfv-allow-icmp", table="filter", chain="FORWARD") >= before + 1
    table = docker(host, "exec", FW1, "conntrack", "-L", "-p", "icmp")
    assert re.search(r"src=10\.232\.8\.10 dst=10\.232\.8\.20 type=8 .* src=10\.232\.9\.20 dst=10\.232\.9\.10 type=0",
                     table), table


def test_firewall_drops_what_it_does_not_forward(host):
    # Port 22 has no DNAT rule: it is addressed to the firewall itself and nothing listens.
    cmd = host.run(f"docker exec {CLIENT} iperf3 -c 10.232.8.20 -p 22 -t 1 --connect-timeout 1000")
    assert cmd.rc != 0


def test_two_vnf_traffic_crosses_firewall_and_proxy(host):
    before = dnat_packets(host, FW2, "nfv-dnat-tcp-5201")
    received, peer = iperf3_peer(host, "10.232.16.20")
    assert dnat_packets(host, FW2, "nfv-dnat-tcp-5201") >= before + 2
    # The proxy opened its own connection: the backend sees the proxy's egress address.
    assert peer == "10.232.18.10"
    assert received > 0


def test_tcp_round_trip_through_the_proxy(host):
    out = docker(host, "exec", CLIENT, "sockperf", "ping-pong", "--tcp", "-i", "10.232.16.20",
                 "-p", "11111", "-t", "1", "-m", "64", "--full-rtt")
    assert re.search(r"Summary: Round trip is [0-9.]+ usec", out), out
    # The backend's sockperf connection comes from the proxy, not from the client.
    conns = docker(host, "exec", BACKEND, "ss", "-Htn", "state", "all", "sport", "=", ":11111")
    assert "10.232.0.10" not in conns and "10.232.16.10" not in conns


def test_haproxy_runs_a_valid_tcp_config(host):
    out = host.run(f"docker exec {LB2} haproxy -c -f /usr/local/etc/haproxy/haproxy.cfg")
    assert out.rc == 0, out.stdout + out.stderr
    cfg = docker(host, "exec", LB2, "cat", "/usr/local/etc/haproxy/haproxy.cfg")
    assert "mode tcp" in cfg
    assert "server s1 10.232.18.20:5201" in cfg
