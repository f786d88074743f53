# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``ceph status -f json`` and ``ceph pg stat -f json`` (Ceph 16.2 Pacific).

Both print one JSON document (``-f json-pretty`` too).  Shapes, from real captures of
Ceph 16.2.15 (tests/fixtures/ceph/README.md) and ``PGMapDigest::print_summary`` /
``print_oneline_summary`` (src/mon/PGMap.cc)::

    ceph status -f json
    {"fsid": ..., "health": {"status": "HEALTH_WARN", "checks": {...}, "mutes": []},
     "osdmap": {"num_osds": 2, "num_up_osds": 1, "num_in_osds": 2, "num_remapped_pgs": 0, ...},
     "pgmap": {"pgs_by_state": [{"state_name": "active+undersized+degraded", "count": 32}, ...],
               "num_pgs": 33, "num_objects": 512, "data_bytes": ..., "bytes_used": ...,
               "degraded_objects": 512, "degraded_total": 1024, "degraded_ratio": 0.5,
               "misplaced_objects": ..., "recovering_objects_per_sec": 12,
               "recovering_bytes_per_sec": 12582912, ...}, ...}

    ceph pg stat -f json
    {"pg_ready": true, "pg_summary": {"num_pg_by_state": [{"name": "active+clean", "num": 33}],
     "num_pgs": 33, "num_bytes": ..., "degraded_objects": ..., "recovering_bytes_per_sec": ...}}

Older layouts (docs/parsers.md; tests/fixtures/ceph/older-layouts): Luminous 12.2 and Jewel 10.2 health
sections (see ``_health``); ``osdmap`` nested once more (``osdmap.osdmap``, Jewel to Nautilus); Jewel's
``pgmap`` without ``num_objects`` (null, warned); ``ceph pg stat`` before Nautilus without ``pg_ready``,
with ``raw_bytes_used`` / ``raw_bytes`` for the used / total bytes, inside ``pg_summary`` (Jewel's
PGMonitor) or with ``num_pg_by_state`` at the top.

The degraded / misplaced / unfound / recovery / client-io keys appear only while they are
non-zero: absent means 0 here.  ``kind`` is detected (``status`` has ``pgmap``, ``pg_stat``
has ``pg_summary``) or given.  ``pg stat`` has no health and no OSD counts (null).

``whole`` (details) is true when every PG is ``active+clean`` (``active+clean+scrubbing``
and ``+deep`` count as clean) and nothing is degraded, misplaced or unfound: every object
has all its replicas where they belong.  ``metrics.progress_fraction`` (0..1) is the
rebuild progress: ``1 - degraded_ratio - misplaced_ratio - unfound_ratio`` (objects
copies that are where they belong, the quantity recovery/backfill drives to 1), except
when that is 1 but some PGs are not yet active+clean (peering right after an OSD comes
back): then the fraction of PGs active+clean.  ``metrics.pgs_active_clean_fraction`` is
kept beside it.

``valid`` is false when the snapshot cannot say anything about the data: no PG at all,
every PG ``unknown`` (no mgr has reported: the pgmap is stale or empty), or
``pg_ready`` false.  Not JSON, a truncated document, another command's JSON, or
``nan`` ratios are a ParseError.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible.module_utils.testbed_parse import (
    ParseError,
    invalidate,
    json_documents,
    new_result,
    require_text,
    to_number,
)

TOOL = "ceph"
KINDS = ("auto", "status", "pg_stat")
# OSD counters of ceph status's osdmap (and pgs_remapped); ceph pg stat has none
OSD_COUNTS = ("num_osds", "num_up_osds", "num_in_osds", "num_remapped_pgs")

# (metric name, key in pgmap / pg_summary) - absent means 0 (Ceph prints them only when non-zero)
OPTIONAL_COUNTERS = (
    ("degraded_objects", "degraded_objects", True),
    ("degraded_total", "degraded_total", True),
    ("degraded_ratio", "degraded_ratio", False),
    ("misplaced_objects", "misplaced_objects", True),
    ("misplaced_total", "misplaced_total", True),
    ("misplaced_ratio", "misplaced_ratio", False),
    ("unfound_objects", "unfound_objects", True),
    ("unfound_total", "unfound_total", True),
    ("unfound_ratio", "unfound_ratio", False),
    ("recovering_objects_per_s", "recovering_objects_per_sec", False),
    ("recovering_bytes_per_s", "recovering_bytes_per_sec", False),
    ("recovering_keys_per_s", "recovering_keys_per_sec", False),
    ("objects_recovered", "num_objects_recovered", True),
    ("bytes_recovered_bytes", "num_bytes_recovered", True),
    ("client_read_bytes_per_s", "read_bytes_sec", False),
    ("client_write_bytes_per_s", "write_bytes_sec", False),
    ("client_read_ops_per_s", "read_op_per_sec", False),
    ("client_write_ops_per_s", "write_op_per_sec", False),
)
CLEAN_EXTRA = frozenset(("scrubbing", "deep", "snaptrim", "snaptrim_wait", "laggy", "wait"))


def is_active_clean(state_name):
    """True for ``active+clean`` optionally with scrubbing/deep/snaptrim flags (data fully replicated)."""
    parts = set(state_name.split("+"))
    return "active" in parts and "clean" in parts and parts <= CLEAN_EXTRA | {"active", "clean"}


def _number(container, key, source, where, integer, default=None):
    if key not in container:
        return default
    return to_number(container[key], TOOL, source, "%s.%s" % (where, key), integer=integer)


def _states(entries, name_key, count_key, source, where):
    if not isinstance(entries, list):
        raise ParseError(TOOL, source, "%s is %r, expected a list" % (where, entries))
    by_state = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get(name_key), str) or count_key not in entry:
            raise ParseError(TOOL, source, "%s entry %r has no %s/%s" % (where, entry, name_key, count_key))
        by_state[entry[name_key]] = by_state.get(entry[name_key], 0) + to_number(
            entry[count_key], TOOL, source, "%s %s" % (where, entry[name_key]), integer=True)
    return by_state


def rebuild_fraction(first_progress, progress):
    """Share (0..1) of a rebuild done, from the progress_fraction of its first sample and of now.

    Ceph's progress_fraction starts where the loss left it (0.5 with size 2 and one of two OSDs
    lost); this rescales it to 0 at the first sample and 1 when whole.  None when either is None;
    1.0 when the first sample was already whole.
    """
    if first_progress is None or progress is None:
        return None
    if first_progress >= 1.0:
        return 1.0
    return max(0.0, min(1.0, (progress - first_progress) / (1.0 - first_progress)))


def detect_kind(document):
    if isinstance(document, dict) and isinstance(document.get("pgmap"), dict):
        return "status"
    if isinstance(document, dict) and isinstance(document.get("pg_summary"), dict):
        return "pg_stat"
    # ceph pg stat printed without the pg_summary object (print_oneline_summary's keys at the top)
    if isinstance(document, dict) and isinstance(document.get("num_pg_by_state"), list) and "pgmap" not in document:
        return "pg_stat"
    return None


def other_document(document):
    """What a Ceph JSON document is when it is neither ``ceph status`` nor ``ceph pg stat`` (None: unknown)."""
    if isinstance(document, list) and document and all(isinstance(d, dict) for d in document):
        if all("pool_name" in d and ("client_io_rate" in d or "recovery_rate" in d) for d in document):
            return "ceph osd pool stats JSON (per-pool client I/O and recovery rates)"
    if not isinstance(document, dict):
        return None
    if "status" in document and "checks" in document:
        return "ceph health JSON (ceph health [detail] -f json)"
    if "nodes" in document and "stray" in document:
        return "ceph osd tree JSON"
    if "stats" in document and "pools" in document:
        return "ceph df JSON"
    if "pg_stats" in document or "pg_map" in document:
        return "ceph pg dump JSON"
    return None


def _health(health_doc, source):
    """``(status, checks, layout)`` of the health section of ``ceph status -f json``.

    Luminous and later: ``{"status", "checks": {NAME: {"severity", "summary": {"message"}}}}``
    (``{"severity", "message"}`` in the 12.1 release candidates; Luminous also keeps the deprecated
    ``overall_status``, HEALTH_WARN with a "format has changed" summary: ``status`` wins). Jewel and
    older have no ``status``: ``{"overall_status", "summary": [{"severity", "summary"}],
    "detail", "timechecks", "health": {"health_services"}}``; its unnamed summary entries
    become checks ``summary_1``, ``summary_2``...
    """
    if not isinstance(health_doc, dict):
        raise ParseError(TOOL, source, "ceph status JSON without a health section")
    checks = {}
    if isinstance(health_doc.get("status"), str):
        status, layout = health_doc["status"], "luminous"
        for name, check in sorted((health_doc.get("checks") or {}).items()):
            check = check if isinstance(check, dict) else {}
            summary = check.get("summary", {})
            message = summary.get("message") if isinstance(summary, dict) else None
            # the Luminous release candidates (12.1) put the message in the check itself
            checks[name] = {"severity": check.get("severity"),
                            "message": message if message is not None else check.get("message")}
    elif isinstance(health_doc.get("overall_status"), str):
        status, layout = health_doc["overall_status"], "jewel"
        summary = health_doc.get("summary") or []
        if not isinstance(summary, list):
            raise ParseError(TOOL, source, "Jewel-style health.summary is %r, not a list" % (summary,))
        for number, entry in enumerate(summary, start=1):
            entry = entry if isinstance(entry, dict) else {}
            checks["summary_%d" % number] = {"severity": entry.get("severity"), "message": entry.get("summary")}
    else:
        raise ParseError(TOOL, source, "ceph status JSON without health.status (Luminous and later) or "
                                       "health.overall_status (Jewel and older)")
    if not re.match(r"^HEALTH_(OK|WARN|ERR)$", status):
        raise ParseError(TOOL, source, "health status %r is not HEALTH_OK/WARN/ERR" % status)
    return status, checks, layout


def parse(text, source="<content>", kind="auto"):
    """Parse ``ceph status -f json`` or ``ceph pg stat -f json`` (``kind``: auto, status, pg_stat)."""
    if kind not in KINDS:
        raise ParseError(TOOL, source, "kind %r is not one of %s" % (kind, ", ".join(KINDS)))
    text = require_text(text, TOOL, source)
    found = _one_document(text, source)
    document = found["documents"][0][0]
    detected = _kind(document, kind, source)
    if detected == "status":
        snap = _status_snapshot(document, source)
    else:
        snap = _pg_stat_snapshot(document, source)
    snap.update(kind=detected, document=document)
    _check_pg_count(snap, source)
    metrics = _counters(snap, source)

    result = new_result(TOOL, source)
    if snap["layout"] == "jewel" and snap["num_objects"] is None:
        result["warnings"].append("objects is null: ceph status of Jewel (10.2) and older prints no "
                                  "pgmap.num_objects (Luminous has it)")
    _wholeness(snap, metrics, result)
    result["metrics"] = _metrics(snap, metrics)
    result["details"] = _details(snap)
    for line in found["skipped"]:
        result["warnings"].append("text beside the JSON: %s" % line[:200])
    return result


def _one_document(text, source):
    """``json_documents`` of ``text``, which must hold exactly one JSON document and nothing after it."""
    found = json_documents(text, TOOL, source)
    if found["truncated"]:
        raise ParseError(TOOL, source, "the JSON document stops in the middle (truncated output)")
    if not found["documents"]:
        try:  # a JSON array is a document too, of another command (ceph osd pool stats...)
            other = other_document(json.loads(text))
        except ValueError:
            other = None
        if other:
            raise ParseError(TOOL, source, "neither ceph status (pgmap) nor ceph pg stat (pg_summary) JSON: "
                                           "this is %s" % other)
        first = text.strip().splitlines()[0][:160]
        raise ParseError(TOOL, source, "no JSON document (run ceph with -f json; got %r%s)"
                         % (first, "; " + found["invalid"] if found["invalid"] else ""))
    if len(found["documents"]) > 1:
        raise ParseError(TOOL, source, "%d JSON documents, expected one" % len(found["documents"]))
    if found["trailing"].strip():
        raise ParseError(TOOL, source, "text after the JSON document: %r (several documents?)"
                         % found["trailing"].strip()[:120])
    return found


def _kind(document, kind, source):
    """The document's kind (status or pg_stat), which must be the one asked for unless ``kind`` is auto."""
    detected = detect_kind(document)
    if detected is None:
        other = other_document(document)
        raise ParseError(TOOL, source, "neither ceph status (pgmap) nor ceph pg stat (pg_summary) JSON"
                         + (": this is %s" % other if other else ""))
    if kind != "auto" and kind != detected:
        raise ParseError(TOOL, source, "expected ceph %s JSON, got ceph %s JSON"
                         % (kind.replace("_", " "), detected.replace("_", " ")))
    return detected


def _status_snapshot(document, source):
    """PG map, PG states, health, OSD counts and sizes of ``ceph status -f json``."""
    pgmap = document["pgmap"]
    where = "pgmap"
    by_state = _states(pgmap.get("pgs_by_state", []), "state_name", "count", source, "pgmap.pgs_by_state")
    health, checks, layout = _health(document.get("health"), source)
    osdmap = document.get("osdmap")
    if not isinstance(osdmap, dict):
        raise ParseError(TOOL, source, "ceph status JSON without osdmap")
    osdmap = osdmap.get("osdmap", osdmap)  # Nautilus and older nest it once more
    osds = {}
    for key in OSD_COUNTS:
        osds[key] = _number(osdmap, key, source, "osdmap", True)
    return {
        "pgmap": pgmap, "where": where, "by_state": by_state,
        "health": health, "checks": checks, "layout": layout, "osds": osds, "pg_ready": None,
        "num_objects": _number(pgmap, "num_objects", source, where, True),
        "data_bytes": _number(pgmap, "data_bytes", source, where, True),
        "used_bytes": _number(pgmap, "bytes_used", source, where, True),
        "total_bytes": _number(pgmap, "bytes_total", source, where, True),
    }


def _pg_stat_snapshot(document, source):
    """PG summary, PG states and sizes of ``ceph pg stat -f json`` (no health, no OSD counts)."""
    pgmap = document.get("pg_summary", document)
    where = "pg_summary" if "pg_summary" in document else "pg stat"
    by_state = _states(pgmap.get("num_pg_by_state", []), "name", "num", source, "pg_summary.num_pg_by_state")
    return {
        "pgmap": pgmap, "where": where, "by_state": by_state,
        "health": None, "checks": {}, "layout": None, "osds": dict.fromkeys(OSD_COUNTS),
        "pg_ready": document.get("pg_ready"),
        "num_objects": None,
        "data_bytes": _number(pgmap, "num_bytes", source, where, True),
        # Jewel/Luminous (print_oneline_summary): raw_bytes_used / raw_bytes (KiB counts shifted to bytes)
        "used_bytes": _number(pgmap, "total_used_raw_bytes", source, where, True,
                              default=_number(pgmap, "raw_bytes_used", source, where, True)),
        "total_bytes": _number(pgmap, "total_bytes", source, where, True,
                               default=_number(pgmap, "raw_bytes", source, where, True)),
    }


def _check_pg_count(snap, source):
    """``num_pgs`` must be present and equal the sum of the PG states; kept in ``snap``."""
    pgmap, where, by_state = snap["pgmap"], snap["where"], snap["by_state"]
    if "num_pgs" not in pgmap:
        raise ParseError(TOOL, source, "%s without num_pgs" % where)
    num_pgs = _number(pgmap, "num_pgs", source, where, True)
    if sum(by_state.values()) != num_pgs:
        raise ParseError(TOOL, source, "PG states add up to %d, num_pgs is %d" % (sum(by_state.values()), num_pgs))
    snap["num_pgs"] = num_pgs


def _counters(snap, source):
    """The optional object counters and ratios (absent means 0); ratios must lie in 0..1."""
    metrics = {}
    for name, key, integer in OPTIONAL_COUNTERS:
        metrics[name] = _number(snap["pgmap"], key, source, snap["where"], integer, default=0)
    for name in ("degraded_ratio", "misplaced_ratio", "unfound_ratio"):
        if not 0.0 <= metrics[name] <= 1.0:
            raise ParseError(TOOL, source, "%s is %r, outside 0..1" % (name, metrics[name]))
    return metrics


def _wholeness(snap, metrics, result):
    """PG flags, whether the data is whole (and why not), the verdict and the progress fraction."""
    num_pgs, by_state = snap["num_pgs"], snap["by_state"]
    active_clean = sum(count for state, count in by_state.items() if is_active_clean(state))
    flags = {}
    for state, count in by_state.items():
        for flag in state.split("+"):
            flags[flag] = flags.get(flag, 0) + count
    fraction_clean = float(active_clean) / num_pgs if num_pgs else None
    copies_in_place = 1.0 - metrics["degraded_ratio"] - metrics["misplaced_ratio"] - metrics["unfound_ratio"]
    copies_in_place = max(0.0, copies_in_place)

    not_whole = []
    if num_pgs and active_clean < num_pgs:
        not_whole.append("%d of %d PGs are not active+clean" % (num_pgs - active_clean, num_pgs))
    for what in ("degraded", "misplaced", "unfound"):
        if metrics[what + "_objects"]:
            not_whole.append("%d/%d object copies %s" % (metrics[what + "_objects"], metrics[what + "_total"], what))
    if num_pgs == 0:
        invalidate(result, "no placement group at all: nothing to say about the data")
    elif flags.get("unknown", 0) == num_pgs:
        invalidate(result, "every PG is unknown (no mgr has reported PG states)")
    if snap["pg_ready"] is False:
        invalidate(result, "pg_ready is false (the mgr has no PG map yet)")
    if not result["valid"]:
        not_whole.append("the snapshot says nothing about the data")
    whole = not not_whole

    if not result["valid"]:
        progress = None
    elif whole:
        progress = 1.0
    elif copies_in_place < 1.0:
        progress = copies_in_place
    else:
        progress = fraction_clean
    snap.update(active_clean=active_clean, flags=flags, fraction_clean=fraction_clean,
                not_whole=not_whole, whole=whole, progress=progress)


def _metrics(snap, metrics):
    """``metrics`` (the counters) followed by progress, PG, size and OSD figures."""
    num_pgs, flags, osds = snap["num_pgs"], snap["flags"], snap["osds"]
    metrics.update({
        "progress_fraction": snap["progress"],
        "pgs": num_pgs,
        "pgs_active_clean": snap["active_clean"],
        "pgs_active_clean_fraction": snap["fraction_clean"],
        "pgs_degraded": flags.get("degraded", 0),
        "pgs_undersized": flags.get("undersized", 0),
        "pgs_recovering": flags.get("recovering", 0) + flags.get("recovery_wait", 0),
        "pgs_backfilling": flags.get("backfilling", 0) + flags.get("backfill_wait", 0),
        "pgs_inactive": num_pgs - flags.get("active", 0),
        "pgs_peering": flags.get("peering", 0),
        "objects": snap["num_objects"],
        "data_bytes": snap["data_bytes"],
        "used_bytes": snap["used_bytes"],
        "total_bytes": snap["total_bytes"],
        "osds": osds["num_osds"],
        "osds_up": osds["num_up_osds"],
        "osds_in": osds["num_in_osds"],
        "pgs_remapped": osds["num_remapped_pgs"],
    })
    return metrics


def _details(snap):
    """Kind, health, PG states and flags, and why the data is not whole."""
    return {
        "kind": snap["kind"],
        "health": snap["health"],
        "health_checks": snap["checks"],
        "health_layout": snap["layout"],
        "fsid": snap["document"].get("fsid"),
        "pgs_by_state": dict(sorted(snap["by_state"].items())),
        "pg_state_flags": dict(sorted(snap["flags"].items())),
        "pg_ready": snap["pg_ready"],
        "whole": snap["whole"],
        "not_whole_reasons": snap["not_whole"],
    }
