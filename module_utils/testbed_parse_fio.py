# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``fio --output-format=json`` and ``json+``.

Pure function ``parse(text, source="<content>")``; see docs/architecture.md.

* Lines before the JSON (``fio: pid=..., err=...``) are skipped with a warning;
  the document starts at the first line that is exactly ``{``.
* Several concatenated documents (``--status-interval``): the last complete one.
* Jobs are combined per direction (``read``/``write``/``trim``, ``mixed`` with
  unified_rw_reporting): iops, bandwidth, bytes and I/O counts are summed,
  runtime is the maximum, latency means are weighted by each job's sample count
  (``N``, else ``total_ios``), the standard deviation is pooled, min/max are the
  extremes.  Percentiles are exact for one job or when every job carries
  json+ ``bins`` (the histograms are merged and read the way fio does); otherwise
  they are the N-weighted mean of the per-job percentiles, with a warning.
* A direction no job exercised (``io_bytes`` and ``runtime`` 0) has null
  metrics, not zeros.
* fio 2.x latency keys in µs (``clat``) and ``io_bytes`` in KiB (<= 2.20, no
  ``io_kbytes``) are recognised by key presence.
* fio <= 2.1 prints neither ``N`` nor ``total_ios``: one job's latencies are
  exact; several jobs are pooled with each job's I/O count estimated as
  iops x runtime (warning naming the version); ``total_ios`` is null with a
  warning.  Before 3.20 (no ``N``) an all-zero latency block (slat of sync
  engines) is null with a warning, not 0.  Versions: docs/parsers.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import re

from ansible.module_utils.testbed_parse import (
    ParseError,
    invalidate,
    json_documents,
    new_result,
    require_text,
    to_number,
    warn,
)

TOOL = "fio"
DIRECTIONS = ("read", "write", "trim", "mixed")
PERCENTILES = (("p50", 50.0), ("p90", 90.0), ("p95", 95.0), ("p99", 99.0), ("p999", 99.9))
DIRECTION_METRICS = (
    "iops", "bw_kib_s", "bw_bytes_s", "io_bytes", "runtime_ms", "total_ios",
    "clat_mean_us", "clat_stddev_us", "clat_min_us", "clat_max_us",
    "clat_p50_us", "clat_p90_us", "clat_p95_us", "clat_p99_us", "clat_p999_us",
    "lat_mean_us", "slat_mean_us",
)


def _documents(text, source):
    """Split stdout into (documents, skipped text lines, truncated flag, invalid reason)."""
    found = json_documents(text, TOOL, source)
    skipped = list(found["skipped"])
    if not found["truncated"]:
        skipped.extend(line.strip() for line in found["trailing"].splitlines() if line.strip())
    return [doc for doc, _start, _end in found["documents"]], skipped, found["truncated"], found["invalid"]


class _Reader(object):
    def __init__(self, source):
        self.source = source

    def number(self, mapping, key, path, integer=False):
        if not isinstance(mapping, dict) or key not in mapping or mapping[key] is None:
            return None
        value = mapping[key]
        if isinstance(value, str):
            raise ParseError(TOOL, self.source, "%s.%s is the string %r, expected a number" % (path, key, value))
        return to_number(value, TOOL, self.source, "%s.%s" % (path, key), integer=integer)


def _lat_block(direction, name):
    """(block, divisor to µs, key) for slat/clat/lat: *_ns in 3.x, µs in 2.x."""
    if isinstance(direction.get(name + "_ns"), dict):
        return direction[name + "_ns"], 1000.0, name + "_ns"
    if isinstance(direction.get(name), dict):
        return direction[name], 1.0, name
    return None, None, None


def _percentile_value(block, wanted):
    table = block.get("percentile") if isinstance(block, dict) else None
    if not isinstance(table, dict):
        return None
    for key, value in table.items():
        try:
            if abs(float(key) - wanted) < 1e-6:
                return value
        except ValueError:
            continue
    return None


def _numeric_bins(block):
    """json+ ``bins`` as a list of (value, count), or None if absent/old-style."""
    bins = block.get("bins") if isinstance(block, dict) else None
    if not isinstance(bins, dict) or not bins or "FIO_IO_U_PLAT_NR" in bins or "FIO_IO_U_PLAT_NR" in block:
        return None  # fio 2.x json+: bucket indexes with FIO_IO_U_PLAT_* keys, not latency values
    out = []
    for key, count in bins.items():
        try:
            out.append((float(key), int(count)))
        except (TypeError, ValueError):
            return None
    return out


def _percentiles_from_bins(bins, wanted):
    """Read percentiles off a merged histogram the way fio's calc_clat_percentiles does."""
    bins = sorted(bins)
    total = sum(count for _value, count in bins)
    if total == 0:
        return dict.fromkeys(wanted)
    out = {}
    for pct in wanted:
        threshold = pct / 100.0 * total
        running = 0
        for value, count in bins:
            running += count
            if running >= threshold:
                out[pct] = value
                break
    return out


def _direction_summary(reader, job, index, name, result):
    """Per-job view of one direction, or None when the direction was idle."""
    path = "jobs[%d].%s" % (index, name)
    direction = job.get(name)
    if not isinstance(direction, dict):
        return None
    io_bytes = reader.number(direction, "io_bytes", path, integer=True)
    runtime = reader.number(direction, "runtime", path)
    if not io_bytes and not runtime:
        return None
    if "io_kbytes" not in direction and io_bytes is not None:
        io_bytes *= 1024  # fio <= 2.20 wrote io_bytes in KiB
        warn(result, "no io_kbytes key (fio <= 2.20): io_bytes read as KiB")
    bw_kib = reader.number(direction, "bw", path)
    bw_bytes = reader.number(direction, "bw_bytes", path)
    if bw_bytes is None and bw_kib is not None:
        bw_bytes = bw_kib * 1024
    summary = {
        "iops": reader.number(direction, "iops", path),
        "bw_kib_s": bw_kib,
        "bw_bytes_s": bw_bytes,
        "io_bytes": io_bytes,
        "runtime_ms": runtime,
        "total_ios": reader.number(direction, "total_ios", path, integer=True),
    }
    for lat in ("clat", "lat", "slat"):
        block, scale, key = _lat_block(direction, lat)
        entry = {"n": None, "n_estimated": False, "mean": None, "stddev": None, "min": None, "max": None,
                 "percentiles": {}, "bins": None}
        if block is not None:
            lpath = "%s.%s" % (path, key)
            n = reader.number(block, "N", lpath, integer=True)
            entry["n"] = n if n is not None else summary["total_ios"]
            for stat in ("mean", "stddev", "min", "max"):
                value = reader.number(block, stat, lpath)
                entry[stat] = None if value is None else value / scale
            if n is None and entry["min"] == 0 and entry["max"] == 0 and not entry["mean"]:
                # before fio 3.20 (no N) an all-zero block means nothing was sampled (slat of sync engines)
                entry.update(n=None, mean=None, stddev=None, min=None, max=None)
                warn(result, "%s.%s is all zeros without a sample count (fio < 3.20 prints no N; nothing was "
                     "sampled): %s_%s metrics are null, not 0" % (name, lat, name, lat))
            elif entry["n"] == 0:
                entry.update(mean=None, stddev=None, min=None, max=None)
            elif entry["n"] is None:
                # fio <= 2.1 prints neither N nor total_ios.  Its iops is
                # 1000 * total_io_u / runtime (integer), so iops * runtime / 1000
                # gives the I/O count back to within one second's worth of I/Os:
                # good enough as a relative weight when jobs are pooled.
                iops, runtime = summary["iops"], summary["runtime_ms"]
                entry["n"] = iops * runtime / 1000.0 if iops and runtime else 1.0
                entry["n_estimated"] = True
            for label, pct in PERCENTILES:
                value = _percentile_value(block, pct)
                if value is not None:
                    entry["percentiles"][label] = to_number(value, TOOL, reader.source,
                                                            "%s.percentile[%s]" % (lpath, pct)) / scale
            bins = _numeric_bins(block)
            if bins is not None:
                entry["bins"] = [(value / scale, count) for value, count in bins]
            elif isinstance(block.get("bins"), dict) and "FIO_IO_U_PLAT_NR" in block["bins"]:
                entry["bins_old_style"] = True
        summary[lat] = entry
    return summary


def _combine_latency(entries, result, direction, name, version=None):
    """Pool latency stats of several jobs (list of per-job entries)."""
    entries = [e for e in entries if e["n"] and e["mean"] is not None]
    out = {"mean": None, "stddev": None, "min": None, "max": None}
    out.update(dict.fromkeys(label for label, _pct in PERCENTILES))
    if not entries:
        return out
    if len(entries) > 1 and any(e["n_estimated"] for e in entries):
        warn(result, "%s prints neither N nor total_ios: %s latencies of %d jobs are pooled with each job's I/O "
             "count estimated as iops x runtime (fio <= 2.1; use group_reporting for exact values)"
             % (version or "this fio", direction, len(entries)))
    total = sum(e["n"] for e in entries)
    mean = sum(e["mean"] * e["n"] for e in entries) / total
    out["mean"] = mean
    mins = [e["min"] for e in entries if e["min"] is not None]
    maxs = [e["max"] for e in entries if e["max"] is not None]
    out["min"] = min(mins) if mins else None
    out["max"] = max(maxs) if maxs else None
    if all(e["stddev"] is not None for e in entries) and total > 1:
        # fio's stddev uses n-1; pooling with (n_i - 1) and the between-job term is exact.
        within = sum((e["n"] - 1) * e["stddev"] ** 2 for e in entries)
        between = sum(e["n"] * (e["mean"] - mean) ** 2 for e in entries)
        out["stddev"] = math.sqrt((within + between) / (total - 1))
    if len(entries) == 1:
        for label, _pct in PERCENTILES:
            out[label] = entries[0]["percentiles"].get(label)
    elif all(e["bins"] for e in entries):
        merged = {}
        for e in entries:
            for value, count in e["bins"]:
                merged[value] = merged.get(value, 0) + count
        values = _percentiles_from_bins(list(merged.items()), [pct for _label, pct in PERCENTILES])
        for label, pct in PERCENTILES:
            out[label] = values.get(pct)
    else:
        for label, _pct in PERCENTILES:
            have = [e for e in entries if label in e["percentiles"]]
            if have:
                weight = sum(e["n"] for e in have)
                out[label] = sum(e["percentiles"][label] * e["n"] for e in have) / weight
        if any(e.get("bins_old_style") for e in entries):
            warn(result, "the json+ bins of %s are fio 2.x bucket indexes (FIO_IO_U_PLAT_*), not latencies; "
                 "they are not merged" % (version or "this fio"))
        if name == "clat" and any(e["percentiles"] for e in entries):
            warn(result, "%s %s percentiles of %d jobs are the N-weighted mean of per-job percentiles "
                 "(an approximation; use --output-format=json+ or group_reporting for exact values)"
                 % (direction, name, len(entries)))
    return out


def _job_error(job):
    errno = job.get("error")
    name = job.get("jobname", "?")
    try:
        text = os.strerror(int(errno))
    except (TypeError, ValueError, OverflowError):
        text = "unknown error"
    return "fio job %s error %s (%s)" % (name, errno, text)


def parse(text, source="<content>"):
    """Parse ``fio --output-format=json[+]`` output; see the module docstring."""
    text = require_text(text, TOOL, source)
    result = new_result(TOOL, source)
    reader = _Reader(source)
    document = _last_document(text, source, result)
    jobs = _jobs(document, source)
    version = _header(result, document, jobs)
    per_job = _per_job(reader, jobs, result, source)
    used_directions = [name for name in DIRECTIONS
                       if name != "mixed" or any("mixed" in job for job in jobs)]
    for name in used_directions:
        active = [(jobs[i], dirs[name]) for i, dirs in enumerate(per_job) if dirs[name]]
        values = _direction_metrics(result, name, active, version)
        for key in DIRECTION_METRICS:
            result["metrics"]["%s_%s" % (name, key)] = values[key]
    _cpu(reader, jobs, result["metrics"])
    details = result["details"]
    details["jobs"] = _job_details(reader, jobs, per_job)
    if isinstance(document.get("global options"), dict):
        details["global_options"] = document["global options"]
    details["timestamp"] = document.get("timestamp")
    return result


def _last_document(text, source, result):
    """The last JSON document of the output (several with --status-interval); notes what surrounds it."""
    documents, skipped, truncated, invalid = _documents(text, source)
    if not documents and invalid:
        raise ParseError(TOOL, source, "invalid JSON (%s)" % invalid)
    if not documents:
        if truncated:
            raise ParseError(TOOL, source, "truncated JSON: the document stops after %d bytes without its "
                             "closing brace (interrupted copy or killed fio?)" % len(text.encode("utf-8")))
        other = _other_format(text)
        if other:
            raise ParseError(TOOL, source, "no JSON document: this is %s; run fio with --output-format=json "
                             "(or json+)" % other)
        said = " | ".join(skipped)[:300]
        raise ParseError(TOOL, source, "no JSON document found (not fio --output-format=json output?); "
                         "the output says: %r" % said)
    if skipped:
        result["details"]["diagnostics"] = skipped
        warn(result, "skipped %d non-JSON line(s) around the JSON: %s" % (len(skipped), " | ".join(skipped)[:300]))
    if len(documents) > 1:
        warn(result, "%d JSON documents in the output (--status-interval?); using the last one" % len(documents))
    if truncated:
        invalidate(result, "the output is truncated after the last complete JSON document; "
                   "fio's final report is missing")
    return documents[-1]


# fio's other output formats (stat.c): terse lines "VER;fio-X;jobname;groupid;error;..." (version 2 has no
# fio version field) with 100+ fields, and the normal report's "jobname: (groupid=N, jobs=N): err= N" and
# "Run status group N (all jobs):" lines.
_TERSE = re.compile(r"^(?P<ver>[1-5]);(?:fio-[^;]*;)?[^;\n]*;\d+;\d+;(?:[^;\n]*;){20,}", re.MULTILINE)
_NORMAL = re.compile(r"^\S.*: \(groupid=\d+, jobs=\d+\): err=\s*\d+|^Run status group \d+ \(all jobs\):",
                     re.MULTILINE)


def _other_format(text):
    """What fio output without a JSON document is, when it is recognisably another fio format (else None)."""
    terse = _TERSE.search(text)
    if terse:
        return "fio's terse output (--output-format=terse / --minimal, terse version %s)" % terse.group("ver")
    if _NORMAL.search(text):
        return "fio's normal human-readable report (--output-format=normal, the default)"
    return None


def _jobs(document, source):
    """The document's non-empty list of job objects."""
    if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
        raise ParseError(TOOL, source, "JSON document has no jobs list (not fio --output-format=json output)")
    jobs = document["jobs"]
    if not jobs:
        raise ParseError(TOOL, source, "the jobs list is empty")
    if not all(isinstance(job, dict) for job in jobs):
        raise ParseError(TOOL, source, "a jobs[] entry is not an object")
    return jobs


def _header(result, document, jobs):
    """fio version, job and group counts into the metrics; returns the version."""
    metrics = result["metrics"]
    version = document.get("fio version")
    if version is None:
        warn(result, "no 'fio version' key in the JSON")
    metrics["fio_version"] = version
    metrics["jobs"] = len(jobs)
    groups = sorted(set(job.get("groupid", 0) for job in jobs), key=str)
    metrics["groups"] = len(groups)
    return version


def _per_job(reader, jobs, result, source):
    """Each job's direction summaries; a job error invalidates, no I/O at all is a ParseError."""
    errors = [_job_error(job) for job in jobs if job.get("error") not in (0, None)]
    per_job = [dict((name, _direction_summary(reader, job, index, name, result)) for name in DIRECTIONS)
               for index, job in enumerate(jobs)]
    if not any(summary for job_dirs in per_job for summary in job_dirs.values()):
        raise ParseError(TOOL, source, "no job did any I/O (every direction has io_bytes 0 and runtime 0)%s"
                         % (": " + "; ".join(errors) if errors else ""))
    for reason in errors:
        invalidate(result, reason)
    return per_job


def _total(summaries, key):
    items = [s[key] for s in summaries if s[key] is not None]
    return sum(items) if items else None


def _direction_metrics(result, name, active, version):
    """One direction's metrics over the jobs active in it (``(job, summary)`` pairs); all None if none."""
    values = dict.fromkeys(DIRECTION_METRICS)
    if not active:
        return values
    summaries = [summary for _job, summary in active]
    values.update(iops=_total(summaries, "iops"), bw_kib_s=_total(summaries, "bw_kib_s"),
                  bw_bytes_s=_total(summaries, "bw_bytes_s"), io_bytes=_total(summaries, "io_bytes"),
                  total_ios=_total(summaries, "total_ios"))
    runtimes = [s["runtime_ms"] for s in summaries if s["runtime_ms"] is not None]
    values["runtime_ms"] = max(runtimes) if runtimes else None
    clat = _combine_latency([s["clat"] for s in summaries], result, name, "clat", version)
    values.update(clat_mean_us=clat["mean"], clat_stddev_us=clat["stddev"],
                  clat_min_us=clat["min"], clat_max_us=clat["max"])
    for label, _pct in PERCENTILES:
        values["clat_%s_us" % label] = clat[label]
    values["lat_mean_us"] = _combine_latency([s["lat"] for s in summaries], result, name, "lat",
                                             version)["mean"]
    values["slat_mean_us"] = _combine_latency([s["slat"] for s in summaries], result, name, "slat",
                                              version)["mean"]
    if values["total_ios"] is None:
        warn(result, "%s_total_ios is null: %s does not print total_ios (added in fio 2.2)"
             % (name, version or "this fio"))
    active_groups = set(job.get("groupid", 0) for job, _summary in active)
    if len(active_groups) > 1:
        warn(result, "%s jobs of %d reporting groups (stonewall) ran one after another; their iops and "
             "bandwidth are summed as if they had run together" % (name, len(active_groups)))
    return values


def _cpu(reader, jobs, metrics):
    """Mean user and system CPU over the jobs that report it."""
    cpu = {}
    for key in ("usr_cpu", "sys_cpu"):
        items = [reader.number(job, key, "jobs[%d]" % i) for i, job in enumerate(jobs)]
        items = [v for v in items if v is not None]
        cpu[key] = sum(items) / len(items) if items else None
    metrics["usr_cpu_pct"] = cpu["usr_cpu"]
    metrics["sys_cpu_pct"] = cpu["sys_cpu"]


def _job_details(reader, jobs, per_job):
    """One entry per job: name, group, error, runtime, CPU, options and its active directions."""
    job_details = []
    for index, job in enumerate(jobs):
        entry = {
            "index": index,
            "name": job.get("jobname"),
            "groupid": job.get("groupid"),
            "error": job.get("error"),
            "job_runtime_ms": reader.number(job, "job_runtime", "jobs[%d]" % index),
            "usr_cpu_pct": reader.number(job, "usr_cpu", "jobs[%d]" % index),
            "sys_cpu_pct": reader.number(job, "sys_cpu", "jobs[%d]" % index),
        }
        options = job.get("job options")
        if isinstance(options, dict):
            entry["options"] = dict((k, options[k]) for k in ("rw", "bs", "iodepth", "ioengine", "numjobs")
                                    if k in options)
        for name in DIRECTIONS:
            summary = per_job[index][name]
            if summary:
                entry[name] = {
                    "iops": summary["iops"], "bw_kib_s": summary["bw_kib_s"], "io_bytes": summary["io_bytes"],
                    "runtime_ms": summary["runtime_ms"], "total_ios": summary["total_ios"],
                    "clat_mean_us": summary["clat"]["mean"],
                    "clat_p99_us": summary["clat"]["percentiles"].get("p99"),
                }
        job_details.append(entry)
    return job_details
