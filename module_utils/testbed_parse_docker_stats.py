# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``docker stats --no-stream --format '{{json .}}'`` (one JSON object per line).

Pure function ``parse(text, source="<content>", aggregate="mean")``; see
docs/architecture.md.

Every value docker prints is a string (docker/cli formatter_stats.go):
``CPUPerc``/``MemPerc`` ``"12.34%"``; ``MemUsage`` ``"572KiB / 64MiB"`` in binary
units; ``NetIO``/``BlockIO`` ``"1.04kB / 0B"`` in decimal units (``%.3g``, so
``1e+03kB`` occurs); ``PIDs`` ``"3"``; ``"--"`` where the daemon had no value.

Several samples of the same container (repeated calls appended to one file)
are aggregated per container: ``aggregate=mean`` averages the gauges (CPU,
memory, PIDs) and keeps the last value of the cumulative counters (network and
block bytes, memory limit); ``aggregate=last`` keeps the last sample.

CLI 20.10 does not know ``--format json`` and prints the literal word ``json``
once per container: that is refused with a message pointing to
``--format '{{json .}}'``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible.module_utils.testbed_parse import (
    NUM,
    ParseError,
    new_result,
    require_text,
    to_number,
    warn,
)

TOOL = "docker_stats"
FIELDS = ("cpu_pct", "mem_usage_bytes", "mem_limit_bytes", "mem_pct", "net_rx_bytes", "net_tx_bytes",
          "block_read_bytes", "block_write_bytes", "pids")
GAUGES = ("cpu_pct", "mem_usage_bytes", "mem_pct", "pids")
REQUIRED_KEYS = ("CPUPerc", "MemUsage", "NetIO", "BlockIO")

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_SIZE = re.compile(r"^(?P<num>%s)\s*(?P<unit>[kKMGTPEZY]?i?B)$" % NUM)
_PCT = re.compile(r"^(?P<num>%s)\s*%%$" % NUM)
_BINARY = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3, "TiB": 1024 ** 4,
           "PiB": 1024 ** 5, "EiB": 1024 ** 6, "ZiB": 1024 ** 7, "YiB": 1024 ** 8}
_DECIMAL = {"B": 1, "kB": 1000, "KB": 1000, "MB": 1000 ** 2, "GB": 1000 ** 3, "TB": 1000 ** 4,
            "PB": 1000 ** 5, "EB": 1000 ** 6, "ZB": 1000 ** 7, "YB": 1000 ** 8}
_MISSING = ("--", "")

USE_JSON_TEMPLATE = "use --format '{{json .}}' (works with every docker CLI)"


def sanitize(name):
    """Container name -> metric-key fragment ([a-z0-9_])."""
    cleaned = re.sub(r"[^a-z0-9_]+", "_", str(name).lower()).strip("_")
    return cleaned or "container"


def _size(token, field, source, container):
    match = _SIZE.match(token.strip())
    if match is None:
        raise ParseError(TOOL, source, "%s of container %s is %r, not a size like 12.3MiB or 1.04kB"
                         % (field, container, token))
    number = to_number(match.group("num"), TOOL, source, "%s of container %s" % (field, container))
    unit = match.group("unit")
    table = _BINARY if "i" in unit else _DECIMAL
    if unit not in table:
        raise ParseError(TOOL, source, "%s of container %s has an unknown unit %r" % (field, container, unit))
    value = number * table[unit]
    return int(round(value))


def _pair(value, field, source, container, result):
    """'a / b' -> (bytes, bytes); '--' parts -> None with a warning."""
    if not isinstance(value, str):
        raise ParseError(TOOL, source, "%s of container %s is %r, expected a string 'x / y'"
                         % (field, container, value))
    parts = [p.strip() for p in value.split("/")]
    if len(parts) != 2:
        if value.strip() in _MISSING:
            parts = ["--", "--"]
        else:
            raise ParseError(TOOL, source, "%s of container %s is %r, expected 'x / y'" % (field, container, value))
    out = []
    for part in parts:
        if part in _MISSING:
            warn(result, "container %s: docker printed -- for %s (no value); reported as null" % (container, field))
            out.append(None)
        else:
            out.append(_size(part, field, source, container))
    return out


def _percent(value, field, source, container, result):
    if not isinstance(value, str):
        raise ParseError(TOOL, source, "%s of container %s is %r, expected a string like '1.23%%'"
                         % (field, container, value))
    text = value.strip()
    if text in _MISSING:
        warn(result, "container %s: docker printed -- for %s (no value); reported as null" % (container, field))
        return None
    match = _PCT.match(text)
    if match is None:
        raise ParseError(TOOL, source, "%s of container %s is %r, not a percentage" % (field, container, value))
    return to_number(match.group("num"), TOOL, source, "%s of container %s" % (field, container))


def _pids(value, source, container, result):
    text = str(value).strip()
    if text in _MISSING:
        warn(result, "container %s: docker printed -- for PIDs (no value); reported as null" % container)
        return None
    if not re.match(r"^\d+$", text):
        raise ParseError(TOOL, source, "PIDs of container %s is %r, not a whole number" % (container, value))
    return int(text)


def _lines(text, source, result):
    if _ANSI.search(text):
        warn(result, "terminal escape sequences removed (stats captured without --no-stream?)")
        text = _ANSI.sub("\n", text)
    objects = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line == "json":
            raise ParseError(TOOL, source, "the docker CLI printed the literal word 'json' instead of the stats "
                             "(CLI < 23.0 does not know --format json); " + USE_JSON_TEMPLATE)
        if line.startswith("CONTAINER") or line.startswith("NAME"):
            raise ParseError(TOOL, source, "this is the table output of docker stats; " + USE_JSON_TEMPLATE)
        if not line.startswith("{"):
            raise ParseError(TOOL, source, "line %d is not a JSON object (not docker stats --format '{{json .}}' "
                             "output?): %r" % (number, line[:120]))
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise ParseError(TOOL, source, "line %d is not valid JSON (truncated?): %s" % (number, exc)) from None
        if not isinstance(obj, dict) or not all(key in obj for key in REQUIRED_KEYS):
            missing = [key for key in REQUIRED_KEYS if not isinstance(obj, dict) or key not in obj]
            raise ParseError(TOOL, source, "line %d lacks %s (not docker stats output?)"
                             % (number, ", ".join(missing)))
        objects.append(obj)
    return objects


def parse(text, source="<content>", aggregate="mean"):
    if aggregate not in ("mean", "last"):
        raise ParseError(TOOL, source, "aggregate must be mean or last, not %r" % (aggregate,))
    text = require_text(text, TOOL, source)
    result = new_result(TOOL, source)
    objects = _lines(text, source, result)
    if not objects:
        raise ParseError(TOOL, source, "no container lines")

    containers = []  # ordered by first appearance
    by_key = {}
    for obj in objects:
        name = obj.get("Name") or obj.get("Container") or obj.get("ID")
        if not name:
            raise ParseError(TOOL, source, "a line has neither Name, Container nor ID")
        cid = obj.get("ID") or ""
        label = str(name)
        sample = {}
        sample["cpu_pct"] = _percent(obj["CPUPerc"], "CPUPerc", source, label, result)
        sample["mem_pct"] = _percent(obj.get("MemPerc", "--"), "MemPerc", source, label, result)
        sample["mem_usage_bytes"], sample["mem_limit_bytes"] = _pair(obj["MemUsage"], "MemUsage", source, label,
                                                                     result)
        sample["net_rx_bytes"], sample["net_tx_bytes"] = _pair(obj["NetIO"], "NetIO", source, label, result)
        sample["block_read_bytes"], sample["block_write_bytes"] = _pair(obj["BlockIO"], "BlockIO", source, label,
                                                                        result)
        sample["pids"] = _pids(obj.get("PIDs", "--"), source, label, result)
        if sample["mem_limit_bytes"] == 0 and not sample["pids"]:
            warn(result, "container %s is not running (0 B memory limit, no PIDs); its sample is null" % label)
            sample = dict.fromkeys(FIELDS)
        key = cid or label
        if key not in by_key:
            by_key[key] = {"name": label, "id": cid, "samples": []}
            containers.append(by_key[key])
        by_key[key]["samples"].append(sample)

    metrics = result["metrics"]
    metrics["containers"] = len(containers)
    details = []
    used = {}
    for entry in containers:
        samples = entry["samples"]
        summary = {"name": entry["name"], "id": entry["id"], "samples": len(samples)}
        for field in FIELDS:
            values = [s[field] for s in samples if s[field] is not None]
            if not values:
                summary[field] = None
            elif aggregate == "mean" and field in GAUGES and len(values) > 1:
                summary[field] = sum(values) / len(values)
            else:
                summary[field] = values[-1]
        prefix = sanitize(entry["name"])
        if prefix in used:
            new_prefix = "%s_%s" % (prefix, sanitize(entry["id"])[:12] or len(used))
            warn(result, "containers %s and %s share the metric prefix %s; the second uses %s"
                 % (used[prefix], entry["name"], prefix, new_prefix))
            prefix = new_prefix
        used[prefix] = entry["name"]
        summary["metric_prefix"] = prefix
        for field in FIELDS:
            metrics["%s_%s" % (prefix, field)] = summary[field]
        details.append(summary)
    cpu_values = [c["cpu_pct"] for c in details if c["cpu_pct"] is not None]
    metrics["cpu_total_pct"] = sum(cpu_values) if cpu_values else None
    result["details"] = {"containers": details, "aggregate": aggregate,
                         "samples": dict((c["name"], c["samples"]) for c in details)}
    return result
