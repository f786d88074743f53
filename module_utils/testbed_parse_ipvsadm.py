# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``ipvsadm -Ln`` in its three table forms.

Pure function ``parse(text, source="<content>", mode="auto")``; see
docs/architecture.md.  The layout follows ipvsadm.c ``list_all``/``print_title``/
``print_service_entry``/``print_largenum``:

``--stats`` (mode ``stats``)::

    IP Virtual Server version 1.2.1 (size=4096)
    Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes
      -> RemoteAddress:Port
    TCP  10.0.0.3:80                         8      132        0    34840        0
      -> 10.0.0.7:80                         4       90        0    24476        0

``--rate`` (mode ``rate``): ``CPS InPPS OutPPS InBPS OutBPS`` (BPS are *bytes*/s).
Plain ``-Ln`` (mode ``list``): ``Scheduler Flags`` on the service line and
``Forward Weight ActiveConn InActConn`` per real server.

Service lines start with ``TCP``/``UDP``/``SCTP`` + address, or ``FWM <mark>``
(``IPv6`` may follow); real-server lines start with ``->``.  Without
``--exact`` ipvsadm prints values >= 10**8 truncated with a K/M/G/T suffix
(powers of 1000): they are expanded and flagged as approximate.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.testbed_parse import (
    ParseError,
    new_result,
    require_text,
    search,
    warn,
)

TOOL = "ipvsadm"
MODES = ("auto", "stats", "rate", "list")
COLUMNS = {
    "stats": ("conns", "inpkts", "outpkts", "inbytes", "outbytes"),
    "rate": ("cps", "inpps", "outpps", "in_bytes_per_s", "out_bytes_per_s"),
}
LIST_COLUMNS = ("weight", "activeconn", "inactconn")

_HEADER = r"^IP Virtual Server version (?P<version>\d+\.\d+\.\d+) \(size=(?P<size>\d+)\)\s*$"
_TITLES = (
    ("stats", re.compile(r"^Prot LocalAddress:Port\s+Conns\s+InPkts\s+OutPkts\s+InBytes\s+OutBytes\s*$")),
    ("rate", re.compile(r"^Prot LocalAddress:Port\s+CPS\s+InPPS\s+OutPPS\s+InBPS\s+OutBPS\s*$")),
    ("list", re.compile(r"^Prot LocalAddress:Port\s+Scheduler\s+Flags\s*$")),
)
_OTHER_TITLE = re.compile(r"^Prot LocalAddress:Port\b")
_RS_TITLE = re.compile(r"^\s*->\s+RemoteAddress:Port\b")
_SERVICE = re.compile(
    r"^(?:(?P<proto>TCP|UDP|SCTP)\s+(?P<addr>\S+)|FWM\s+(?P<fwmark>\d+)(?P<fwm6>\s+IPv6)?)(?:\s+(?P<rest>.*?))?\s*$")
_REAL = re.compile(r"^\s+->\s+(?P<addr>\S+)(?:\s+(?P<rest>.*?))?\s*$")
_VALUE = re.compile(r"^(?P<num>\d+)(?P<suffix>[KMGT]?)$")
_SUFFIX = {"": 1, "K": 1000, "M": 1000 ** 2, "G": 1000 ** 3, "T": 1000 ** 4}
_FORWARD = ("Masq", "Local", "Tunnel", "Route", "FullNat", "SNAT")


def _key(text):
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")


def _split_addr(text):
    """'10.0.0.7:80' / '[2001:db8::7]:80' -> (address, port)."""
    match = re.match(r"^\[(?P<v6>[^\]]+)\]:(?P<port>[^:]+)$", text) or re.match(
        r"^(?P<v4>[^:\[\]]+):(?P<port>[^:]+)$", text)
    if match is None:
        return text, None
    address = match.groupdict().get("v6") or match.groupdict().get("v4")
    port = match.group("port")
    return address, int(port) if port.isdigit() else port


class _Parser(object):
    def __init__(self, text, source, mode):
        self.text = text
        self.source = source
        self.mode = mode
        self.result = new_result(TOOL, source)
        self.approximate = False
        self.names_resolved = False

    def fail(self, message):
        raise ParseError(TOOL, self.source, message)

    def values(self, tokens, count, line_no, what):
        if len(tokens) != count:
            self.fail("line %d (%s) has %d value(s), expected %d" % (line_no, what, len(tokens), count))
        out = []
        for token in tokens:
            match = _VALUE.match(token)
            if match is None:
                self.fail("line %d (%s): %r is not a counter" % (line_no, what, token))
            if match.group("suffix"):
                self.approximate = True
            out.append(int(match.group("num")) * _SUFFIX[match.group("suffix")])
        return out

    def run(self):
        text = self.text
        if re.search(r"Can't initialize ipvs", text):
            message = re.search(r"^.*Can't initialize ipvs.*$", text, re.MULTILINE).group(0).strip()
            self.fail("ipvsadm cannot reach IPVS (%r): the kernel lacks IPVS (ip_vs not built in and not "
                      "loadable); run it on a host whose kernel has CONFIG_IP_VS" % message)
        header = search(_HEADER, text, TOOL, self.source, "the 'IP Virtual Server version' header line")
        first_line_no = text.count("\n", 0, header.end()) + 2
        lines = list(enumerate(text[header.end():].split("\n")[1:], first_line_no))
        details = self.result["details"]
        details["ipvs_version"] = header.group("version")
        details["table_size"] = int(header.group("size"))

        lines = [(number, line.rstrip("\r")) for number, line in lines if line.strip()]
        if not lines:
            self.fail("missing the 'Prot LocalAddress:Port' title line (truncated output?)")
        title = lines[0][1]
        mode = None
        for name, pattern in _TITLES:
            if pattern.match(title):
                mode = name
        if mode is None:
            if _OTHER_TITLE.match(title):
                self.fail("unsupported table layout %r (use -Ln, -Ln --stats or -Ln --rate)" % title.strip())
            self.fail("missing the 'Prot LocalAddress:Port' title line after the header (not ipvsadm -Ln output?)")
        if self.mode != "auto" and self.mode != mode:
            self.fail("mode=%s but the table is the %s layout (%s)" % (
                self.mode, mode, {"stats": "--stats", "rate": "--rate", "list": "plain -Ln"}[mode]))
        details["mode"] = mode

        services = []
        current = None
        for line_no, line in lines[1:]:
            if _RS_TITLE.match(line):
                continue
            real = _REAL.match(line)
            if real:
                if current is None:
                    self.fail("line %d: a real server before any service" % line_no)
                current["real_servers"].append(self.real_server(real, mode, line_no))
                continue
            service = _SERVICE.match(line)
            if service is None:
                self.fail("line %d is neither a service nor a real server line: %r" % (line_no, line.strip()))
            current = self.service(service, mode, line_no)
            services.append(current)
        details["services"] = services
        self.publish(services, mode)
        return self.result

    def service(self, match, mode, line_no):
        rest = (match.group("rest") or "").split()
        entry = {
            "protocol": match.group("proto") or "FWM",
            "address": None,
            "port": None,
            "fwmark": int(match.group("fwmark")) if match.group("fwmark") else None,
            "ipv6": bool(match.group("fwm6")),
            "scheduler": None,
            "flags": None,
            "totals": {},
            "real_servers": [],
        }
        if match.group("addr"):
            entry["address"], entry["port"] = _split_addr(match.group("addr"))
            entry["ipv6"] = match.group("addr").startswith("[")
            if not isinstance(entry["port"], int):
                self.names_resolved = True
        if mode == "list":
            if not rest:
                self.fail("line %d: service without a scheduler" % line_no)
            entry["scheduler"] = rest[0]
            entry["flags"] = " ".join(rest[1:]) or None
        else:
            entry["totals"] = dict(zip(COLUMNS[mode], self.values(rest, 5, line_no, "service")))
        return entry

    def real_server(self, match, mode, line_no):
        address, port = _split_addr(match.group("addr"))
        if not isinstance(port, int):
            self.names_resolved = True
        entry = {"address": address, "port": port}
        rest = (match.group("rest") or "").split()
        if mode == "list":
            if len(rest) < 4 or rest[0] not in _FORWARD:
                self.fail("line %d: real server line %r lacks Forward Weight ActiveConn InActConn"
                          % (line_no, match.group(0).strip()))
            entry["forward"] = rest[0]
            # ipvsadm >= 1.30 --tun-info adds a TunnelInfo column after Forward.
            numbers = rest[-3:]
            if len(rest) > 4:
                entry["tunnel_info"] = " ".join(rest[1:-3])
            try:
                entry.update(zip(LIST_COLUMNS, [int(v) for v in numbers]))
            except ValueError:
                self.fail("line %d: weight/activeconn/inactconn are not whole numbers: %r" % (line_no, numbers))
        else:
            entry.update(zip(COLUMNS[mode], self.values(rest, 5, line_no, "real server")))
        return entry

    def publish(self, services, mode):
        metrics = self.result["metrics"]
        metrics["services"] = len(services)
        metrics["real_servers"] = sum(len(s["real_servers"]) for s in services)
        columns = COLUMNS.get(mode, LIST_COLUMNS)
        seen = {}
        for service in services:
            for real in service["real_servers"]:
                pair = (real["address"], real["port"])
                seen[pair] = seen.get(pair, 0) + 1
        for service in services:
            if service["fwmark"] is not None:
                svc_key = "fwm_%d%s" % (service["fwmark"], "_ipv6" if service["ipv6"] else "")
            else:
                svc_key = _key("%s_%s_%s" % (service["protocol"], service["address"], service["port"]))
            service["metric_prefix"] = "svc_" + svc_key
            if mode == "list":
                metrics["svc_%s_scheduler" % svc_key] = service["scheduler"]
                for column in ("activeconn", "inactconn"):
                    metrics["svc_%s_%s" % (svc_key, column)] = sum(r[column] for r in service["real_servers"])
            else:
                for column in columns:
                    metrics["svc_%s_%s" % (svc_key, column)] = service["totals"][column]
            for real in service["real_servers"]:
                rs_key = _key("%s_%s" % (real["address"], real["port"]))
                if seen[(real["address"], real["port"])] > 1:
                    rs_key = "%s_%s" % (rs_key, svc_key)
                real["metric_prefix"] = "rs_" + rs_key
                for column in columns:
                    metrics["rs_%s_%s" % (rs_key, column)] = real[column]
                if mode == "list":
                    metrics["rs_%s_forward" % rs_key] = real["forward"]
        if any(count > 1 for count in seen.values()):
            warn(self.result, "a real server serves several services; its metric names carry the service "
                 "(rs_<ip>_<port>_<service>_...)")
        if self.approximate:
            warn(self.result, "values with a K/M/G/T suffix were truncated by ipvsadm and are approximate "
                 "(lower bounds); run ipvsadm with --exact")
        if self.names_resolved:
            warn(self.result, "addresses or ports are names, not numbers; run ipvsadm with -n")


def parse(text, source="<content>", mode="auto"):
    if mode not in MODES:
        raise ParseError(TOOL, source, "mode must be one of %s, not %r" % (", ".join(MODES), mode))
    text = require_text(text, TOOL, source)
    return _Parser(text, source, mode).run()
