# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the LVS director role (roles/lvs_director).

The director may share its host with other IPVS users (keepalived,
kube-proxy, an operator's own services): the role touches only its own
virtual service, the one of lvs_director_vip:lvs_director_port/protocol.
These filters work on ``ipvsadm -Sn`` text (one command per line, the form
``ipvsadm -R`` reads back) and never look at another service's lines
(tests/unit/test_filters_lvs_director.py):

* ``lvs_director_service_key``: ``-t VIP:PORT`` / ``-u VIP:PORT``, as -Sn prints it;
* ``lvs_director_service_lines``: the lines of one service in a table;
* ``lvs_director_sync``: the ``ipvsadm -R`` lines (-A/-E and -a/-e/-d, never -C)
  that turn the live service into the wanted one; [] when they are the same.
"""

import ipaddress

try:
    from ansible.errors import AnsibleFilterError
except ImportError:  # pragma: no cover - only without ansible
    class AnsibleFilterError(Exception):
        pass

_PROTOCOL_FLAGS = {"tcp": "-t", "udp": "-u"}


def _fail(name, message):
    raise AnsibleFilterError(f"{name}: {message}")


def _norm(line):
    return " ".join(str(line).split())


def lvs_director_service_key(vip, port, protocol="tcp"):
    """The service as ipvsadm -Sn names it: '-t 192.0.2.10:80', '-u [2001:db8::10]:53'."""
    name = "lvs_director_service_key"
    flag = _PROTOCOL_FLAGS.get(str(protocol).lower())
    if flag is None:
        _fail(name, f"protocol {protocol!r} is not one of {sorted(_PROTOCOL_FLAGS)}")
    try:
        address = ipaddress.ip_address(str(vip).strip())
    except ValueError:
        _fail(name, f"the VIP {vip!r} is not an IP address")
    try:
        number = int(port)
    except (TypeError, ValueError):
        number = -1
    if not 0 < number < 65536:
        _fail(name, f"the port {port!r} is not a port number (1-65535)")
    host = f"[{address}]" if address.version == 6 else str(address)
    return f"{flag} {host}:{number}"


def _check_key(name, key):
    parts = _norm(key).split()
    if len(parts) != 2 or parts[0] not in _PROTOCOL_FLAGS.values():
        _fail(name, f"the service key {key!r} is not '-t ADDRESS:PORT' or '-u ADDRESS:PORT'")
    return " ".join(parts)


def _belongs(line, key):
    """True for the '-A KEY ...' / '-a KEY ...' lines of the service KEY (line normalised)."""
    return line[:3] in ("-A ", "-a ") and (line[3:] + " ").startswith(key + " ")


def lvs_director_service_lines(table, key):
    """The lines of the service ``key`` in ``ipvsadm -Sn`` text, whitespace normalised, in order."""
    key = _check_key("lvs_director_service_lines", key)
    lines = (_norm(line) for line in str(table or "").splitlines())
    return [line for line in lines if _belongs(line, key)]


def _real_server(name, line):
    tokens = line.split()
    if "-r" not in tokens[:-1]:
        _fail(name, f"the real server line {line!r} has no '-r ADDRESS:PORT'")
    return tokens[tokens.index("-r") + 1]


def lvs_director_sync(live, want, key):
    """The ``ipvsadm -R`` lines that turn the live service ``key`` into ``want``; [] when already so.

    live: ``ipvsadm -Sn`` of the whole table (other services' lines are
    ignored); want: the service's own lines (its '-A' line, then one '-a' line
    per real server), in -Sn form. A missing service is added (-A, -a); an
    existing one is edited (-E when its line differs, -d for real servers no
    longer wanted, -e for changed ones, -a for new ones): never -C, never -D.
    """
    name = "lvs_director_sync"
    key = _check_key(name, key)
    wanted = [_norm(line) for line in str(want or "").splitlines() if line.strip()]
    strangers = [line for line in wanted if not _belongs(line, key)]
    if strangers:
        _fail(name, f"the wanted table has lines that are not of the service {key}: {strangers!r}")
    services = [line for line in wanted if line.startswith("-A ")]
    if len(services) != 1 or wanted[0] != services[0]:
        _fail(name, f"the wanted table of {key} must start with its one '-A' line, got {wanted!r}")
    have = lvs_director_service_lines(live, key)
    if sorted(have) == sorted(wanted):
        return []
    have_service = [line for line in have if line.startswith("-A ")]
    if not have_service:
        return wanted
    commands = []
    if have_service[0] != wanted[0]:
        commands.append("-E " + wanted[0][3:])
    have_rs = {_real_server(name, line): line for line in have if line.startswith("-a ")}
    want_rs = {_real_server(name, line): line for line in wanted[1:]}
    commands.extend(f"-d {key} -r {rs}" for rs in have_rs if rs not in want_rs)
    for rs, line in want_rs.items():
        if rs not in have_rs:
            commands.append(line)
        elif have_rs[rs] != line:
            commands.append("-e " + line[3:])
    return commands


class FilterModule:
    """Filters of the LVS director role."""

    def filters(self):
        return {
            "lvs_director_service_key": lvs_director_service_key,
            "lvs_director_service_lines": lvs_director_service_lines,
            "lvs_director_sync": lvs_director_sync,
        }
