# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the LVS real server role (roles/lvs_real_server).

LVS-NAT makes the director the real server's default gateway. On real hardware
Ansible's own connection usually arrives through the current default gateway,
so replacing it would cut the play off mid-run. These filters decide, from what
the host says (``SSH_CONNECTION``, ``ip -j route get``, ``ip -j route show``),
whether that would happen (tests/unit/test_filters_lvs_real_server.py):

* ``lvs_real_server_ssh_client``: the controller's address from SSH_CONNECTION;
* ``lvs_real_server_routes``: the management routes, checked and normalised;
* ``lvs_real_server_management_check``: '' when the new default route leaves
  the management connection alone, else the sentence that says what to set;
* ``lvs_real_server_default_route_restore``: the ``ip route`` commands that put
  back the default routes recorded before the role replaced them (absent).
"""

import ipaddress

try:
    from ansible.errors import AnsibleFilterError
except ImportError:  # pragma: no cover - only without ansible
    class AnsibleFilterError(Exception):
        pass


def _fail(name, message):
    raise AnsibleFilterError(f"{name}: {message}")


def _address(name, value, what):
    """An ipaddress address from text (IPv4-mapped IPv6 addresses become IPv4)."""
    try:
        addr = ipaddress.ip_address(str(value).strip().split("%", 1)[0])
    except ValueError:
        _fail(name, f"{what} {value!r} is not an IP address")
    if addr.version == 6 and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


def lvs_real_server_ssh_client(ssh_connection):
    """The client address of SSH_CONNECTION ('client port server port'); '' when unset."""
    text = str(ssh_connection or "").strip()
    if not text:
        return ""
    fields = text.split()
    if len(fields) != 4:
        _fail("lvs_real_server_ssh_client",
              f"SSH_CONNECTION {text!r} is not 'client-address client-port server-address server-port'")
    return str(_address("lvs_real_server_ssh_client", fields[0], "the SSH_CONNECTION client"))


def lvs_real_server_routes(routes):
    """The management routes as [{to: network/prefix, via: address}], checked; raises on a bad entry."""
    name = "lvs_real_server_routes"
    if routes in (None, ""):
        return []
    if not isinstance(routes, list):
        _fail(name, f"lvs_real_server_management_routes must be a list of {{to, via}}, got {routes!r}")
    out = []
    for index, route in enumerate(routes):
        if not isinstance(route, dict) or not route.get("to") or not route.get("via"):
            _fail(name, f"lvs_real_server_management_routes[{index}] must be {{to: CIDR, via: gateway}}, "
                        f"got {route!r}")
        try:
            network = ipaddress.ip_network(str(route["to"]).strip(), strict=False)
        except ValueError:
            _fail(name, f"lvs_real_server_management_routes[{index}].to {route['to']!r} is not a network "
                        "(e.g. 203.0.113.5/32)")
        via = _address(name, route["via"], f"lvs_real_server_management_routes[{index}].via")
        if via.version != network.version:
            _fail(name, f"lvs_real_server_management_routes[{index}]: {network} and gateway {via} are not "
                        "of the same IP version")
        out.append({"to": str(network), "via": str(via)})
    return out


def _route_entry(route_get, address):
    name = "lvs_real_server_management_check"
    if isinstance(route_get, dict):
        route_get = [route_get]
    if not isinstance(route_get, list) or not route_get or not isinstance(route_get[0], dict):
        _fail(name, f"'ip -j route get {address}' gave {route_get!r}, not a list with one route")
    return route_get[0]


def _covered_by_specific_route(addr, main_routes):
    """True when a main-table route other than the default one matches the address."""
    for route in main_routes or []:
        dst = route.get("dst") if isinstance(route, dict) else None
        if not dst or dst == "default" or route.get("type") in ("unreachable", "prohibit", "blackhole"):
            continue
        try:
            network = ipaddress.ip_network(dst, strict=False)
        except ValueError:
            continue
        if network.version == addr.version and addr in network:
            return True
    return False


def lvs_real_server_management_check(route_get, address, gateway, management_routes=None, main_routes=None):
    """'' when LVS-NAT's new default route (via gateway) keeps the management connection, else why not.

    route_get: ``ip -j route get <address>`` (parsed); address: the controller's
    address ('' = not an ssh connection, nothing to check); gateway: the new
    default gateway (the director); management_routes: lvs_real_server_management_routes;
    main_routes: ``ip -j route show table main`` of the address's family (parsed).
    """
    name = "lvs_real_server_management_check"
    if not address:
        return ""
    addr = _address(name, address, "the controller's address")
    new_gateway = _address(name, gateway, "lvs_real_server_gateway")
    for route in lvs_real_server_routes(management_routes):
        network = ipaddress.ip_network(route["to"])
        if network.version == addr.version and addr in network:
            return ""
    if addr.version != new_gateway.version:
        return ""  # the new default route is of the other IP version
    entry = _route_entry(route_get, address)
    current = entry.get("gateway")
    if not current:
        return ""  # on-link (or local): no gateway involved
    if str(entry.get("table", "main")) not in ("main", "254"):
        return ""  # policy routing picks another table than the one whose default route changes
    current = _address(name, current, f"the gateway of 'ip -j route get {address}'")
    if current == new_gateway:
        return ""  # already through the director
    if _covered_by_specific_route(addr, main_routes):
        return ""  # a more specific route than the default one carries it
    device = entry.get("dev")
    return (f"Ansible's connection comes from {addr}, which this host reaches via {current}"
            f"{' on ' + device if device else ''} through its default route; LVS-NAT would replace that "
            f"default route with one via {new_gateway} (lvs_real_server_gateway) and cut the connection. "
            f"Keep a route for the controller: set lvs_real_server_management_routes: "
            f"[{{to: {addr}/{addr.max_prefixlen}, via: {current}}}] (or your management network instead "
            f"of the /{addr.max_prefixlen}).")


def _default_route_key(name, route):
    if not isinstance(route, dict):
        _fail(name, f"{route!r} is not a route of 'ip -j route show default'")
    metric = route.get("metric")
    return (route.get("gateway") or "", route.get("dev") or "", int(metric) if metric not in (None, "") else 0,
            route.get("protocol") or "")


def lvs_real_server_default_route_restore(current, recorded):
    """The argv lists that turn the live default routes back into the recorded ones; [] when they are the same.

    current, recorded: ``ip -j route show default`` (parsed) now and before the
    role first replaced the default route. A recorded route missing now is put
    back with ``ip route replace`` (which takes the place of the route with the
    same metric, the one the role set); a live route that is not recorded and
    that no replace took the place of is deleted.
    """
    name = "lvs_real_server_default_route_restore"
    for what, value in (("current", current), ("recorded", recorded)):
        if not isinstance(value, list):
            _fail(name, f"the {what} default routes must be the list 'ip -j route show default' prints, got {value!r}")

    def defaults(routes):
        return [_default_route_key(name, r) for r in routes
                if not isinstance(r, dict) or r.get("dst", "default") == "default"]

    now, before = defaults(current), defaults(recorded)
    if sorted(now) == sorted(before):
        return []
    commands = []
    replaced = set()
    for gateway, dev, metric, protocol in before:
        if (gateway, dev, metric, protocol) in now:
            continue
        family = ["-6"] if ":" in gateway else []
        command = ["ip"] + family + ["route", "replace", "default"]
        command += (["via", gateway] if gateway else []) + (["dev", dev] if dev else [])
        command += ["metric", str(metric)] if metric else []
        command += ["proto", protocol] if protocol else []
        commands.append(command)
        replaced.add(("-6" if family else "-4", metric))
    for gateway, dev, metric, protocol in now:
        family = "-6" if ":" in gateway else "-4"
        if (gateway, dev, metric, protocol) in before or (family, metric) in replaced:
            continue
        command = ["ip"] + (["-6"] if family == "-6" else []) + ["route", "del", "default"]
        command += (["via", gateway] if gateway else []) + (["dev", dev] if dev else [])
        command += ["metric", str(metric)] if metric else []
        commands.append(command)
    return commands


class FilterModule:
    """Filters of the LVS real server role."""

    def filters(self):
        return {
            "lvs_real_server_ssh_client": lvs_real_server_ssh_client,
            "lvs_real_server_routes": lvs_real_server_routes,
            "lvs_real_server_management_check": lvs_real_server_management_check,
            "lvs_real_server_default_route_restore": lvs_real_server_default_route_restore,
        }
