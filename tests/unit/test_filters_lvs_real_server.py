"""Filters of the LVS real server role (roles/lvs_real_server/filter_plugins/lvs_real_server.py).

The route outputs are captured from iproute2 6.1 (`ip -j route get`, `ip -j -4 route show table main`)
on a host whose default gateway is 192.0.2.1 on eth0.
"""
import json

import pytest
from lvs_real_server import (
    AnsibleFilterError,
    FilterModule,
    lvs_real_server_default_route_restore,
    lvs_real_server_management_check,
    lvs_real_server_routes,
    lvs_real_server_ssh_client,
)

GET_VIA_DEFAULT = json.loads(
    '[{"dst":"203.0.113.5","gateway":"192.0.2.1","dev":"eth0","prefsrc":"192.0.2.2","flags":[],"uid":0,"cache":[]}]')
GET_ON_LINK = json.loads(
    '[{"dst":"192.0.2.7","dev":"eth0","prefsrc":"192.0.2.2","flags":[],"uid":0,"cache":[]}]')
GET_LOCAL = json.loads(
    '[{"type":"local","dst":"127.0.0.1","dev":"lo","prefsrc":"127.0.0.1","flags":[],"uid":0,"cache":["local"]}]')
MAIN = json.loads(
    '[{"dst":"default","gateway":"192.0.2.1","dev":"eth0","flags":[]},'
    '{"dst":"10.250.2.0/24","dev":"tb-lvs-priv","protocol":"kernel","scope":"link","prefsrc":"10.250.2.254",'
    '"flags":[]},'
    '{"dst":"192.0.2.0/24","dev":"eth0","protocol":"kernel","scope":"link","prefsrc":"192.0.2.2","flags":[]}]')
DIRECTOR = "10.250.2.1"


def test_ssh_client_is_the_first_field():
    assert lvs_real_server_ssh_client("203.0.113.5 51234 192.0.2.2 22") == "203.0.113.5"
    assert lvs_real_server_ssh_client("::ffff:203.0.113.5 51234 ::ffff:192.0.2.2 22") == "203.0.113.5"
    assert lvs_real_server_ssh_client("2001:db8::5 51234 2001:db8::2 22") == "2001:db8::5"
    assert lvs_real_server_ssh_client("") == ""
    assert lvs_real_server_ssh_client(None) == ""
    with pytest.raises(AnsibleFilterError, match="not 'client-address"):
        lvs_real_server_ssh_client("203.0.113.5")
    with pytest.raises(AnsibleFilterError, match="not an IP address"):
        lvs_real_server_ssh_client("controller 51234 192.0.2.2 22")


def test_routes_are_checked_and_normalised():
    assert lvs_real_server_routes([]) == []
    assert lvs_real_server_routes(None) == []
    assert lvs_real_server_routes([{"to": "203.0.113.5", "via": "192.0.2.1"},
                                   {"to": "198.51.100.7/24", "via": "192.0.2.1"}]) == [
        {"to": "203.0.113.5/32", "via": "192.0.2.1"}, {"to": "198.51.100.0/24", "via": "192.0.2.1"}]
    with pytest.raises(AnsibleFilterError, match=r"\[0\] must be \{to: CIDR, via: gateway\}"):
        lvs_real_server_routes([{"to": "203.0.113.5/32"}])
    with pytest.raises(AnsibleFilterError, match=r"\[0\]\.to 'controller' is not a network"):
        lvs_real_server_routes([{"to": "controller", "via": "192.0.2.1"}])
    with pytest.raises(AnsibleFilterError, match=r"\[0\]\.via 'gw' is not an IP address"):
        lvs_real_server_routes([{"to": "203.0.113.5/32", "via": "gw"}])
    with pytest.raises(AnsibleFilterError, match="not of the same IP version"):
        lvs_real_server_routes([{"to": "2001:db8::/64", "via": "192.0.2.1"}])
    with pytest.raises(AnsibleFilterError, match="must be a list"):
        lvs_real_server_routes({"to": "203.0.113.5/32", "via": "192.0.2.1"})


def test_refuses_when_the_controller_is_behind_the_replaced_default_route():
    msg = lvs_real_server_management_check(GET_VIA_DEFAULT, "203.0.113.5", DIRECTOR, [], MAIN)
    assert msg.startswith("Ansible's connection comes from 203.0.113.5, which this host reaches via 192.0.2.1 "
                          "on eth0 through its default route;")
    assert "one via 10.250.2.1 (lvs_real_server_gateway)" in msg
    assert "lvs_real_server_management_routes: [{to: 203.0.113.5/32, via: 192.0.2.1}]" in msg
    # Also without the main table (the default route is then assumed to carry it).
    assert lvs_real_server_management_check(GET_VIA_DEFAULT, "203.0.113.5", DIRECTOR) == msg


def test_a_management_route_covering_the_controller_passes():
    for to in ("203.0.113.5/32", "203.0.113.0/24"):
        routes = [{"to": to, "via": "192.0.2.1"}]
        assert lvs_real_server_management_check(GET_VIA_DEFAULT, "203.0.113.5", DIRECTOR, routes, MAIN) == ""
    other = [{"to": "198.51.100.0/24", "via": "192.0.2.1"}]
    assert lvs_real_server_management_check(GET_VIA_DEFAULT, "203.0.113.5", DIRECTOR, other, MAIN) != ""


def test_second_run_with_the_routes_in_place_passes():
    # After the first run the main table holds the /32 and the default route via the director.
    main = [{"dst": "default", "gateway": DIRECTOR, "dev": "eth1", "flags": []},
            {"dst": "203.0.113.5", "gateway": "192.0.2.1", "dev": "eth0", "flags": []}] + MAIN[1:]
    routes = [{"to": "203.0.113.5/32", "via": "192.0.2.1"}]
    assert lvs_real_server_management_check(GET_VIA_DEFAULT, "203.0.113.5", DIRECTOR, routes, main) == ""
    # The same table without the variable: the route set by hand carries it.
    assert lvs_real_server_management_check(GET_VIA_DEFAULT, "203.0.113.5", DIRECTOR, [], main) == ""


def test_nothing_to_do_when_the_default_route_does_not_carry_the_connection():
    check = lvs_real_server_management_check
    assert check(GET_VIA_DEFAULT, "", DIRECTOR) == ""  # not ssh (docker, local)
    assert check(GET_ON_LINK, "192.0.2.7", DIRECTOR, [], MAIN) == ""  # same subnet, no gateway
    assert check(GET_LOCAL, "127.0.0.1", DIRECTOR, [], MAIN) == ""
    via_director = [dict(GET_VIA_DEFAULT[0], gateway=DIRECTOR)]
    assert check(via_director, "203.0.113.5", DIRECTOR, [], MAIN) == ""  # already through the director
    specific = MAIN + [{"dst": "203.0.113.0/24", "gateway": "192.0.2.1", "dev": "eth0", "flags": []}]
    assert check(GET_VIA_DEFAULT, "203.0.113.5", DIRECTOR, [], specific) == ""  # a specific route
    blackhole = MAIN + [{"type": "blackhole", "dst": "203.0.113.0/24", "flags": []}]
    assert check(GET_VIA_DEFAULT, "203.0.113.5", DIRECTOR, [], blackhole) != ""
    other_table = [dict(GET_VIA_DEFAULT[0], table="100")]
    assert check(other_table, "203.0.113.5", DIRECTOR, [], MAIN) == ""  # policy routing
    assert check([{"dst": "2001:db8::5", "gateway": "fe80::1", "dev": "eth0"}], "2001:db8::5", DIRECTOR) == ""


def test_bad_inputs_are_named():
    with pytest.raises(AnsibleFilterError, match="'ip -j route get 203.0.113.5' gave"):
        lvs_real_server_management_check([], "203.0.113.5", DIRECTOR)
    with pytest.raises(AnsibleFilterError, match="lvs_real_server_gateway 'director' is not an IP address"):
        lvs_real_server_management_check(GET_VIA_DEFAULT, "203.0.113.5", "director")


def test_filter_module_exports():
    assert set(FilterModule().filters()) == {
        "lvs_real_server_ssh_client", "lvs_real_server_routes", "lvs_real_server_management_check",
        "lvs_real_server_default_route_restore"}


# `ip -j route show default` (iproute2 6.1): a DHCP default route, and the one LVS-NAT puts in its place
# (ip route replace default via the director: same metric 0, protocol boot).
DHCP_DEFAULT = json.loads('[{"dst":"default","gateway":"192.0.2.1","dev":"eth0","protocol":"dhcp",'
                          '"prefsrc":"192.0.2.2","metric":0,"flags":[]}]')
DIRECTOR_DEFAULT = json.loads('[{"dst":"default","gateway":"10.250.2.1","dev":"eth0","flags":[]}]')
DOCKER_DEFAULT = json.loads('[{"dst":"default","gateway":"172.17.0.1","dev":"eth0","flags":[]}]')


def test_restore_nothing_when_the_default_route_is_the_recorded_one():
    assert lvs_real_server_default_route_restore(DHCP_DEFAULT, DHCP_DEFAULT) == []
    assert lvs_real_server_default_route_restore([], []) == []


def test_restore_puts_the_recorded_route_in_place_of_the_director():
    assert lvs_real_server_default_route_restore(DIRECTOR_DEFAULT, DHCP_DEFAULT) == [
        ["ip", "route", "replace", "default", "via", "192.0.2.1", "dev", "eth0", "proto", "dhcp"]]
    assert lvs_real_server_default_route_restore(DIRECTOR_DEFAULT, DOCKER_DEFAULT) == [
        ["ip", "route", "replace", "default", "via", "172.17.0.1", "dev", "eth0"]]


def test_restore_deletes_a_default_route_that_was_not_there():
    # no default route before: the director's is deleted
    assert lvs_real_server_default_route_restore(DIRECTOR_DEFAULT, []) == [
        ["ip", "route", "del", "default", "via", "10.250.2.1", "dev", "eth0"]]
    # a second default route (metric 100) before: put back; the director's metric-0 one deleted
    backup = [dict(DOCKER_DEFAULT[0], metric=100)]
    assert lvs_real_server_default_route_restore(DIRECTOR_DEFAULT, backup) == [
        ["ip", "route", "replace", "default", "via", "172.17.0.1", "dev", "eth0", "metric", "100"],
        ["ip", "route", "del", "default", "via", "10.250.2.1", "dev", "eth0"]]


def test_restore_ipv6_default_route():
    before = [{"dst": "default", "gateway": "fe80::1", "dev": "eth0", "protocol": "ra", "metric": 1024, "flags": []}]
    now = [{"dst": "default", "gateway": "2001:db8::1", "dev": "eth0", "metric": 1024, "flags": []}]
    assert lvs_real_server_default_route_restore(now, before) == [
        ["ip", "-6", "route", "replace", "default", "via", "fe80::1", "dev", "eth0", "metric", "1024", "proto", "ra"]]


def test_restore_refuses_what_is_not_a_route_list():
    with pytest.raises(AnsibleFilterError, match="recorded default routes must be the list"):
        lvs_real_server_default_route_restore(DIRECTOR_DEFAULT, {"gateway": "192.0.2.1"})
    with pytest.raises(AnsibleFilterError, match="is not a route of 'ip -j route show default'"):
        lvs_real_server_default_route_restore(["default via 192.0.2.1"], [])
