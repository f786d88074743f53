"""lab_network on the lab host: bridges, taps, accept rules."""

import json


def test_bridges_with_the_gateway_address(host):
    for bridge, address in (("tb-mt-a", "10.252.1.254/24"), ("tb-mt-b", "10.252.2.254/24")):
        kind = json.loads(host.check_output("ip -j -d link show dev %s" % bridge))[0]["linkinfo"]["info_kind"]
        assert kind == "bridge"
        links = json.loads(host.check_output("ip -j addr show dev %s" % bridge))
        addrs = ["%s/%s" % (a["local"], a["prefixlen"]) for a in links[0]["addr_info"] if a["family"] == "inet"]
        assert addrs == [address]


def test_taps_enslaved_and_up(host):
    for tap, bridge in (("tb-mt-tap-a", "tb-mt-a"), ("tb-mt-tap-b", "tb-mt-b")):
        link = json.loads(host.check_output("ip -j -d link show dev %s" % tap))[0]
        assert link["master"] == bridge
        assert "UP" in link["flags"]
        assert link["linkinfo"]["info_kind"] == "tun"


def test_docker_networks_not_masqueraded(host):
    info = json.loads(host.check_output("docker network inspect molecule-lab-a"))[0]
    assert info["Options"]["com.docker.network.bridge.name"] == "tb-mt-a"
    assert info["Options"]["com.docker.network.bridge.enable_ip_masquerade"] == "false"
    assert info["IPAM"]["Config"][0]["Subnet"] == "10.252.1.0/24"
    assert "-s 10.252.1.0/24 ! -o tb-mt-a -j MASQUERADE" not in host.check_output("iptables -t nat -S POSTROUTING")


def test_accept_rules_only_bridged_traffic(host):
    rules = [r for r in host.check_output("iptables -S DOCKER-USER").splitlines() if "testbed-molecule-net" in r]
    assert len(rules) == 2
    for bridge in ("tb-mt-a", "tb-mt-b"):
        assert any("-i %s -o %s" % (bridge, bridge) in r and r.endswith("-j ACCEPT") for r in rules)
