# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of experiment 2, Ceph RBD vs ZFS zvol (roles/storage_compare).

* ``sc_variants``: the measured systems, baseline first;
* ``sc_workloads``: the sweep matrix's ``workloads`` from the settings;
* ``sc_point``: one point's result (metrics with units, verdict, raw outputs,
  the system and cache state in ``extra``) from the workload's runs;
* ``sc_report``: the report specification (a section per workload, ZFS vs
  Ceph relative change, notes);
* ``sc_report_tables``: the tables the report hook derives from the stored
  points (the study's figures beside the measured ones, rebuild time per used
  size, progress curves, integrity verdicts).

Pure functions (tests/unit/test_filters_storage_compare.py); bad input raises
``AnsibleFilterError`` naming the filter and the bad value. Throughput and
progress-curve arithmetic come from the role's module_utils
(``storage_compare_fileset``), the generic pieces from filter_plugins/.
"""

import json
import os
import re

try:
    from ansible.errors import AnsibleFilterError
except ImportError:  # pragma: no cover - only without ansible
    class AnsibleFilterError(Exception):
        pass

# One import convention (docs/architecture.md, "Python imports"): pure shared
# libraries live in a module_utils/ folder - the repository's, or a role's own -
# and are imported as ansible.module_utils.<name>, the name Ansible gives them in a
# module. On the controller every module_utils/ folder one to three levels above
# this file is put on that package's path; a collection build rewrites the imports.
import ansible.module_utils  # noqa: E402

for _up in (1, 2, 3):
    _dir = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * _up, "module_utils"))
    if os.path.isdir(_dir) and _dir not in ansible.module_utils.__path__:
        ansible.module_utils.__path__.append(_dir)

from ansible.module_utils import storage_compare_fileset as fileset  # noqa: E402
from ansible.module_utils import testbed_sweep as sweep  # noqa: E402
from ansible.module_utils.testbed_reports.derived import measured_with  # noqa: E402
from ansible.module_utils.testbed_stats import fidelity  # noqa: E402

VARIANTS = ("zfs", "ceph")
WORKLOADS = ("fio", "copy", "oltp", "rebuild")
FIO_PATTERNS = ("read", "write", "randread", "randwrite")
COPY_DIRECTIONS = ("write", "read")

# Each workload's metrics in the report, and whether higher is better.
METRICS = {
    "fio": ["iops", "bandwidth_mb_s", "clat_p50_us", "clat_p95_us", "clat_p99_us", "node_cpu_pct"],
    "copy": ["copy_mb_s", "copy_s", "node_cpu_pct"],
    "oltp": ["transactions_per_s", "queries_per_s", "latency_avg_ms", "latency_p95_ms", "node_cpu_pct"],
    "rebuild": ["rebuild_s", "integrity_mismatches", "integrity_files"],
}
LOWER_IS_BETTER = ("clat_p50_us", "clat_p95_us", "clat_p99_us", "node_cpu_pct", "copy_s", "latency_avg_ms",
                   "latency_p95_ms", "rebuild_s", "integrity_mismatches")
# Metrics that may be null in a valid point.
OPTIONAL = ("node_cpu_pct", "queries_per_s", "latency_avg_ms")

# The study's figures (Proxmox VE 5.1, two 1 TB HDDs, gigabit; Ceph Luminous, ZFS 0.7.8;
# docs/experiments.md section 2): (label, workload, where, metric, ceph, zfs).
STUDY_LABEL = "study (their hardware: 2 x 1 TB HDD storage node, Proxmox VE 5.1, Ceph Luminous, ZFS 0.7.8)"
STUDY = [
    ("4 KiB sequential read, IOPS", "fio", {"pattern": "read", "block_size": "4k", "iodepth": 32}, "iops", 2838, 3612),
    ("4 KiB sequential write, IOPS", "fio", {"pattern": "write", "block_size": "4k", "iodepth": 32}, "iops", 540, 4445),
    ("4 KiB random read, IOPS", "fio", {"pattern": "randread", "block_size": "4k", "iodepth": 32}, "iops", 92.7, 203),
    ("4 KiB random write, IOPS", "fio", {"pattern": "randwrite", "block_size": "4k", "iodepth": 32}, "iops", 41, 146),
    ("copy read, MB/s", "copy", {"direction": "read"}, "copy_mb_s", 20, 23.6),
    ("copy write, MB/s", "copy", {"direction": "write"}, "copy_mb_s", 5.3, 37),
    ("storage-node CPU during copy read, %", "copy", {"direction": "read"}, "node_cpu_pct", 16.4, 9.3),
    ("storage-node CPU during copy write, %", "copy", {"direction": "write"}, "node_cpu_pct", 14, 17.6),
    ("OLTP transactions/s", "oltp", {}, "transactions_per_s", 54, 168),
    ("rebuild with 20 GB used, s", "rebuild", {"used_mb": 20000}, "rebuild_s", 63 * 60, 3 * 60),
    ("rebuild with 40 GB used, s", "rebuild", {"used_mb": 40000}, "rebuild_s", 137 * 60, 6 * 60),
]
# What the study prints beside a mean (its three OLTP runs), and where its own figures disagree.
STUDY_SPREAD = {"OLTP transactions/s": ("max 65.7; min 48.1", "max 171.5; min 171.5 (!)")}
STUDY_CONTRADICTIONS = [
    "(!) The study prints ZFS's OLTP minimum as 171.5, the same as its maximum and above its mean of 168: "
    "the three figures cannot all hold (study-figures, section 2); its mean is the figure compared."]
NOT_MEASURED = "not measured at the study's parameters in this run"


def _fail(name, message):
    raise AnsibleFilterError(f"{name}: {message}")


def sc_variants(wanted, baseline="zfs"):
    """The measured systems in run order, the baseline first (every ratio is taken against it)."""
    fname = "sc_variants"
    wanted = list(wanted or VARIANTS)
    unknown = [w for w in wanted if w not in VARIANTS]
    if unknown:
        _fail(fname, f"storage_compare_variants names {', '.join(map(str, unknown))}; known: {', '.join(VARIANTS)}")
    if len(set(wanted)) != len(wanted):
        _fail(fname, f"storage_compare_variants lists a system twice: {wanted!r}")
    if baseline not in wanted:
        _fail(fname, f"the baseline variant {baseline!r} is not measured (variants: {', '.join(wanted)}); "
                     "every relative change is taken against it")
    return [baseline] + [v for v in VARIANTS if v in wanted and v != baseline]


def sc_workloads(settings, names):
    """The sweep matrix's ``workloads``: ``[{name, grid, parameters}]`` in the order of ``names``.

    ``settings`` holds the workload settings without the ``storage_compare_``
    prefix (``fio_patterns``, ``copy_total_mb``...).
    """
    fname = "sc_workloads"
    sweep.check_choices(fname, names, WORKLOADS, "storage_compare_workloads", "workload")
    if "rebuild" in names and names[-1] != "rebuild":
        _fail(fname, "rebuild must be the last workload (it fails and rebuilds a disk under the others' data)")

    def get(key):
        if key not in settings:
            _fail(fname, f"setting storage_compare_{key} is missing")
        return settings[key]

    def listed(key, allowed=None):
        values = get(key)
        if not isinstance(values, (list, tuple)) or not values:
            _fail(fname, f"storage_compare_{key} must be a non-empty list, got {values!r}")
        bad = [v for v in values if allowed is not None and v not in allowed]
        if bad:
            _fail(fname, f"storage_compare_{key}: unknown {', '.join(map(str, bad))}; known: {', '.join(allowed)}")
        return list(values)

    build = {
        "fio": lambda: ({"pattern": listed("fio_patterns", FIO_PATTERNS), "block_size": listed("fio_block_sizes"),
                         "iodepth": listed("fio_iodepths"), "numjobs": listed("fio_numjobs")},
                        {"runtime_s": get("fio_runtime_s"), "size_mb": get("fio_size_mb")}),
        "copy": lambda: ({"direction": listed("copy_directions", COPY_DIRECTIONS)},
                         {"files": get("copy_files"), "total_mb": get("copy_total_mb")}),
        "oltp": lambda: ({}, {"rows": get("oltp_rows"), "tables": get("oltp_tables"), "threads": get("oltp_threads"),
                              "duration_s": get("oltp_duration_s")}),
        "rebuild": lambda: ({"used_mb": listed("rebuild_used_mb")}, {"file_mb": get("rebuild_file_mb")}),
    }
    return [dict(zip(("name", "grid", "parameters"), (name,) + build[name]())) for name in names]


def _cpu(cpu):
    """The storage node's mean CPU busy % from a cpu_sample result (None, warning) when it has none."""
    metrics = (cpu or {}).get("metrics") if isinstance(cpu, dict) else None
    value = (metrics or {}).get("cpu_busy_mean_pct")
    if value is None:
        why = None
        if isinstance(cpu, dict):
            event = ((cpu.get("exception") or {}).get("event") or {}) if isinstance(cpu.get("exception"), dict) else {}
            why = cpu.get("msg") or "; ".join(cpu.get("reasons") or []) or event.get("msg")
        return None, "no CPU sample of the storage node over the load window" + (f": {why}" if why else "")
    return value, None


def sc_memory(text):
    """The storage daemons' resident memory after a point, from ``ps -o comm=,rss=`` lines (KiB)
    and an ``zfs_arc_bytes N`` line: ``{daemons_rss_mb, zfs_arc_mb, by_daemon: {name: MiB summed}}``."""
    by_daemon, arc = {}, None
    for line in str(text or "").splitlines():
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            continue
        if fields[0] == "zfs_arc_bytes":
            arc = int(fields[1]) / 1048576.0
        else:
            by_daemon[fields[0]] = by_daemon.get(fields[0], 0.0) + int(fields[1]) / 1024.0
    storage = [v for k, v in by_daemon.items() if k.startswith("ceph-")]
    return {"daemons_rss_mb": sum(storage) if storage else None, "zfs_arc_mb": arc,
            "by_daemon": {k: round(v, 1) for k, v in sorted(by_daemon.items())}}


def _fio(result, run, pattern):
    side = "write" if "write" in str(pattern) else "read"
    found = ((run.get("parsed") or {}).get("metrics")) or {}
    bw = found.get(f"{side}_bw_bytes_s")
    result["metrics"].update({
        "iops": found.get(f"{side}_iops"), "bandwidth_mb_s": None if bw is None else bw / 1e6,
        "clat_p50_us": found.get(f"{side}_clat_p50_us"), "clat_p95_us": found.get(f"{side}_clat_p95_us"),
        "clat_p99_us": found.get(f"{side}_clat_p99_us")})


def _copy(point, data, environment, extra):
    copy = data.get("copy")
    if not isinstance(copy, dict):
        _fail("sc_point", "a copy point needs data.copy = {bytes, duration_s, rc, stdout, stderr, argv, started_at, finished_at}")
    seconds = sweep.delta_seconds(copy.get("duration_s"))
    nbytes = copy.get("bytes")
    if nbytes is None and point["parameters"].get("total_mb") is not None:
        nbytes = fileset.mb_to_bytes(point["parameters"]["total_mb"])
    rc = copy.get("rc")
    reasons = []
    if rc != 0:
        reasons.append(f"the copy failed (rc {rc}): {(copy.get('stderr') or '').strip()[:300]}")
    if not nbytes:
        reasons.append("the copy moved no bytes")
    try:
        rate = fileset.throughput_mb_s(nbytes, seconds)
    except fileset.FilesetError as exc:
        _fail("sc_point", str(exc))
    return {
        "point": point, "valid": not reasons, "reasons": reasons, "warnings": [], "sources": {},
        "metrics": {"copy_mb_s": rate, "copy_s": seconds, "copy_bytes": nbytes},
        "raw": {"copy.txt": (copy.get("stdout") or "") + (copy.get("stderr") or "")},
        "extra": dict(extra, argv=copy.get("argv")), "environment": environment,
        "started_at": copy.get("started_at"), "finished_at": copy.get("finished_at"), "load_s": seconds or 0,
    }


def _rebuild(point, data, environment, extra):
    poll, verify = data.get("poll"), data.get("verify")
    # unreachable: the node stopped answering during the point (the lab VM killed, say); the
    # point is then invalid with that reason, and the store's probe makes it a lab fault
    if not isinstance(poll, dict) or ("curve" not in poll and not poll.get("failed") and not poll.get("unreachable")):
        _fail("sc_point", "a rebuild point needs data.poll, the storage_rebuild_poll result")
    reasons, warnings = [], []
    if poll.get("unreachable"):
        reasons.append(f"reading the rebuild timer failed, the node did not answer: {poll.get('msg')}")
    elif poll.get("failed"):
        reasons.append(f"polling the status failed: {poll.get('msg')}")
    elif not poll.get("whole"):
        reasons.append(f"the system did not report itself whole within the timeout ({poll.get('samples')} polls)")
    if poll.get("whole") and not poll.get("observed_degraded"):
        warnings.append("no poll saw the system degraded: the rebuild finished before the first poll")
    mismatches = None
    if not isinstance(verify, dict) or "valid" not in verify:
        reasons.append("the manifest was not verified after the rebuild: " + str((verify or {}).get("msg") or "no result"))
    else:
        mismatches = len(verify.get("mismatches") or []) + len(verify.get("missing") or [])
        if not verify["valid"]:
            reasons.append("integrity: {} of {} files differ or are missing after the rebuild".format(
                mismatches, verify.get("files")))
            reasons.extend(verify.get("reasons") or [])
    integrity = None if not isinstance(verify, dict) else {
        k: verify.get(k) for k in ("valid", "files", "checked", "bytes", "mismatches", "missing", "extra")}
    return {
        "point": point, "valid": not reasons, "reasons": reasons, "warnings": warnings, "sources": {},
        "metrics": {"rebuild_s": poll.get("rebuild_s"), "rebuild_reported_s": poll.get("reported_s"),
                    "integrity_mismatches": mismatches,
                    "integrity_files": None if integrity is None else integrity.get("checked"),
                    "used_bytes": data.get("used_bytes"), "polls": poll.get("samples")},
        "raw": {"status-first.txt": poll.get("first_status") or "", "status-last.txt": poll.get("last_status") or ""},
        "extra": dict(extra, curve=poll.get("curve"), integrity=integrity, status_command=poll.get("command")),
        "environment": environment, "started_at": data.get("started_at"), "finished_at": data.get("finished_at"),
        "load_s": poll.get("rebuild_s") or 0,
    }


def sc_point(data, point, environment, extra=None):
    """One point's result for the sweep's store.

    ``data`` by workload: fio ``{run, cpu}`` (``run`` the fio
    ``testbed_workload_result``, ``cpu`` the ``cpu_sample`` result over its
    window); copy ``{copy, cpu}`` (``copy``: bytes, duration_s - seconds or a
    command's ``H:MM:SS.f`` delta -, rc, stdout, stderr, argv, started_at,
    finished_at); oltp ``{run, cpu}`` (sysbench); rebuild ``{poll, verify,
    used_bytes, started_at, finished_at}`` (``storage_rebuild_poll`` and
    ``storage_fileset`` verify results). ``extra`` (the system, its device,
    the cache state) is kept in the point's ``extra``.
    """
    fname = "sc_point"
    if not isinstance(point, dict) or not isinstance(point.get("parameters"), dict):
        _fail(fname, f"point must be a sweep point with parameters, got {point!r}")
    workload = point["parameters"].get("workload")
    if workload not in WORKLOADS:
        _fail(fname, f"point {point.get('id', '?')}: unknown workload {workload!r}")
    if not isinstance(data, dict):
        _fail(fname, f"data must be a mapping, got {data!r}")
    extra = dict(extra or {}, workload=workload)
    if workload in ("fio", "oltp"):
        run = data.get("run")
        tool = "fio" if workload == "fio" else "sysbench"
        if not isinstance(run, dict) or run.get("tool") != tool:
            _fail(fname, f"a {workload} point needs data.run, the {tool} testbed_workload_result, got {run!r}")
        if workload == "fio":
            result = sweep.workload_result(run, point, environment, metrics=[], extra=extra)
            _fio(result, run, point["parameters"].get("pattern"))
        else:
            result = sweep.workload_result(run, point, environment, metrics=[
                "transactions_per_s", "queries_per_s", "latency_avg_ms", "latency_p95_ms", "ignored_errors", "reconnects"],
                extra=extra)
            prepare = data.get("prepare")
            if isinstance(prepare, dict) and prepare.get("rc") not in (0, None):
                result["valid"] = False
                result["reasons"].append(f"sysbench prepare failed (rc {prepare.get('rc')}): "
                                         f"{(prepare.get('stderr') or '').strip()[:300]}")
            if isinstance(prepare, dict):
                result["raw"]["sysbench-prepare.txt"] = (prepare.get("stdout") or "") + (prepare.get("stderr") or "")
    elif workload == "copy":
        result = _copy(point, data, environment, extra)
    else:
        result = _rebuild(point, data, environment, extra)
    if workload != "rebuild":
        cpu, why = _cpu(data.get("cpu"))
        result["metrics"]["node_cpu_pct"] = cpu
        if why:
            result["warnings"].append(why)
        if isinstance(data.get("cpu"), dict) and data["cpu"].get("metrics"):
            result["extra"]["cpu"] = {k: data["cpu"]["metrics"].get(k) for k in (
                "cpu_busy_mean_pct", "cpu_busy_max_pct", "cpu_user_mean_pct", "cpu_system_mean_pct",
                "cpu_iowait_mean_pct", "samples", "window_s")}
    if "memory" in data:
        memory = sc_memory(data.get("memory"))
        result["metrics"]["ceph_daemons_rss_mb"] = memory["daemons_rss_mb"]
        result["metrics"]["zfs_arc_mb"] = memory["zfs_arc_mb"]
        result["extra"]["memory_mb"] = memory["by_daemon"]
    if result["valid"]:
        missing = [k for k in METRICS[workload] if k in result["metrics"] and result["metrics"][k] is None
                   and k not in OPTIONAL]
        if missing:
            result["valid"] = False
            result["reasons"].append(f"{workload}: no {', '.join(missing)}")
    shown = [f"{k} {v:.4g}" for k, v in list(result["metrics"].items())[:2]
             if isinstance(v, (int, float)) and not isinstance(v, bool)]
    result["summary"] = ", ".join(shown) or None
    return result


ACCESS = ("local", "network")


def _accesses(fname, access):
    """The run's access modes: one name (local, network) or their list in run order (storage_compare_access both)."""
    accesses = [access] if isinstance(access, str) else list(access) if isinstance(access, (list, tuple)) else None
    if not accesses or any(a not in ACCESS for a in accesses) or len(set(accesses)) != len(accesses):
        _fail(fname, f"access must be one of {', '.join(ACCESS)} or a list of them, got {access!r}")
    return accesses


def _access_of(doc, accesses):
    """A point's access: its parameter (a run of this code), else the run's only mode (an older run)."""
    return (doc.get("parameters") or {}).get("access") or accesses[0]


def _access_notes(access, lab, link_mbit=None):
    """What the access mode means for every figure of the report."""
    if access == "local":
        return ["Access: local - every workload ran on the storage node itself against its own block device (the zvol, "
                "the RBD image mapped by the kernel client); node_cpu_pct includes the load's own processes."]
    notes = ["Access: network (the study's setup) - the workloads ran inside a client VM on the compute node whose data "
             "disk was the storage node's volume: the ZFS zvol through the node's iSCSI target (LIO) and qemu's "
             "libiscsi, the Ceph RBD image through librbd in qemu (as Proxmox attaches them). node_cpu_pct is the "
             "storage node's CPU sampled while the client drove the load. Rebuild and integrity ran on the storage "
             "node's system; the rebuild fill was written and verified through the client VM's filesystem."]
    if lab:
        notes.append("Lab: the compute node is this host, the client VM runs under TCG emulation (emulated, like the "
                     "storage VM), and the storage network is a bridge of this host" +
                     (f" limited to {link_mbit} Mbit/s each way (tbf)" if link_mbit else " without a rate limit") +
                     ": the figures check the harness over the network path, they are not performance results.")
    return notes


def sc_report(variants, workloads, settings, baseline="zfs", lab=False, access="local", link_mbit=None,
              host_cpus=None):
    """The report specification: a section per workload, the relative change against the baseline, notes.

    ``access`` is the run's access mode or its list (both modes in one run: every point's parameter
    ``access`` says which; each table of the report then has a row per mode). ``host_cpus`` maps a VM
    (``storage VM``, ``client VM``) to the host CPUs its qemu was pinned to (taskset -c list; empty: not
    pinned), said in a note."""
    fname = "sc_report"
    accesses = _accesses(fname, access)
    pinned = {vm: str(cpus) for vm, cpus in (host_cpus or {}).items() if cpus not in (None, "")}
    if not isinstance(variants, (list, tuple)) or not variants or any(v not in VARIANTS for v in variants):
        _fail(fname, f"variants must be sc_variants's list, got {variants!r}")
    if not isinstance(workloads, (list, tuple)) or not workloads or any(w not in WORKLOADS for w in workloads):
        _fail(fname, f"workloads must name known workloads ({', '.join(WORKLOADS)}), got {workloads!r}")
    titles = {"fio": "fio on the raw block device (direct I/O, libaio)",
              "copy": "copy of the deterministic file set (caches dropped before each run)",
              "oltp": "sysbench OLTP on MariaDB (data directory on the device's filesystem)",
              "rebuild": "rebuild after a disk is wiped and put back, and integrity"}
    xs = {"fio": "pattern", "copy": "direction", "oltp": None, "rebuild": "used_mb"}
    sections, hib, relative = [], {}, {}
    for name in workloads:
        section = {"title": titles[name], "where": {"workload": name}, "metrics": list(METRICS[name])}
        section["x"] = xs[name]
        sections.append(section)
        for metric in METRICS[name]:
            hib[metric] = metric not in LOWER_IS_BETTER
    for metric in ("iops", "bandwidth_mb_s", "clat_p99_us", "copy_mb_s", "transactions_per_s", "latency_p95_ms",
                   "rebuild_s", "node_cpu_pct"):
        if any(metric in METRICS[w] for w in workloads):
            relative[metric] = "rise" if metric in LOWER_IS_BETTER else "drop"
    notes = [
        "Both systems ran on the same two disks, one system at a time: before each system was built the other one "
        "was removed and the disks were wiped (storage_wipe_devices). Each mirrors the two disks: a ZFS mirror vdev "
        "with a zvol, a Ceph replicated pool of size 2 (failure domain: the OSD) with a mapped RBD image.",
        "fio ran on the raw zvol / RBD device (direct I/O); copy and OLTP on an XFS filesystem made on it.",
        "Cache state per point: the page cache was dropped (echo 3 > /proc/sys/vm/drop_caches) before every copy read "
        "and rebuild verification" + (" (with network access in the client VM and on the node)" if "network" in accesses
                                      else "") + "; the ZFS ARC was "
        + " or ".join((["emptied by exporting and importing the pool (local)"] if "local" in accesses else [])
                      + (["flushed with `zinject -a` (network: the iSCSI target holds the zvol, so no export)"]
                         if "network" in accesses else []))
        + "; Ceph's OSD caches (BlueStore) were dropped with `ceph tell osd.* cache drop`, the OSD processes kept "
        "running - each point's extra.cache says what was done and whether it worked.",
        f"Relative changes are against {baseline}" + (", within each access mode." if len(accesses) > 1 else "."),
    ]
    if len(accesses) > 1:
        notes.append("Both access modes in one run: every point's parameter access says where its workload ran "
                     f"({' then '.join(accesses)} for each system); compare the modes row by row.")
    for mode in accesses:
        notes += _access_notes(mode, lab, link_mbit)
    if pinned:
        notes.append("Host CPUs: " + ", ".join(f"the {vm}'s qemu ran on host CPU {cpus}" for vm, cpus in pinned.items())
                     + " (taskset), each VM's emulation on its own core(s).")
    if lab:
        notes.append("Lab run: the storage node is a qemu VM under TCG emulation with its two data disks as files on "
                     "one host disk" + (" (the client VM too runs under TCG on the same host)" if "network" in accesses
                                        else "") + "; the numbers check that the harness works and are not "
                     "performance results. The study's figures are from their hardware and shown for reference only.")
    spec = {
        "title": "Ceph RBD vs ZFS zvol block storage",
        "baseline_variant": baseline,
        "metrics": sections[0]["metrics"][:1],
        "higher_is_better": hib,
        "sections": sections,
        "relative": {"baseline_variant": baseline, "metrics": relative,
                     "title": f"Relative change against {baseline}"},
        "notes": notes,
    }
    if "oltp" in workloads:
        # the study's OLTP figure shows each of its three runs, not only their mean
        spec["pivots"] = [{"title": "OLTP transactions/s, each run (the study's figure shows its three runs)"
                                    + (f", access {mode}" if len(accesses) > 1 else ""),
                           "metric": "transactions_per_s", "rows": "repetition",
                           "where": dict({"workload": "oltp"}, **({"access": mode} if len(accesses) > 1 else {})),
                           "notes": ["The study's means: Ceph 54, ZFS 168 transactions/s (their hardware)."]}
                          for mode in accesses]
    return spec


def _matches(doc, workload, where):
    params = doc.get("parameters") or {}
    if params.get("workload") != workload:
        return False
    for key, value in where.items():
        got = params.get(key)
        if key == "block_size":
            if str(got).lower() != str(value).lower():
                return False
        elif got != value:
            return False
    return True


def _mean(values):
    values = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return sum(values) / len(values) if values else None


def _fmt(value, digits=4):
    if value is None:
        return "n/a"
    return f"{value:.{digits}g}"


def _ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def _cpu_table(valid, access, title_suffix=""):
    """The storage node's CPU during read and during write loads, per system (the study's CPU figure).

    ``valid`` holds the points of one access mode ``access``."""
    sides = [("fio", "read", ("read", "randread")), ("fio", "write", ("write", "randwrite")),
             ("copy", "read", ("read",)), ("copy", "write", ("write",)), ("oltp", "read+write", None)]
    rows = []
    for workload, side, keys in sides:
        cells = []
        for variant in ("ceph", "zfs"):
            values = [(d.get("metrics") or {}).get("node_cpu_pct") for d in valid
                      if d.get("variant") == variant and (d.get("parameters") or {}).get("workload") == workload
                      and (keys is None or (d.get("parameters") or {}).get(
                          "pattern" if workload == "fio" else "direction") in keys)]
            values = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            cells += [_fmt(_mean(values), 3), str(len(values))]
        if cells[1] != "0" or cells[3] != "0":
            rows.append([workload, side] + cells)
    if not rows:
        return None
    where = ("while the client VM on the compute node drove the load over the network" if access == "network"
             else "while the load ran on the node itself (its own processes included)")
    return {"title": "Storage-node CPU during read and during write" + title_suffix,
            "header": ["load", "side", "Ceph CPU %", "Ceph points", "ZFS CPU %", "ZFS points"], "rows": rows,
            "notes": [f"Mean CPU busy % of the storage node over each load window, sampled {where}; read = the fio "
                      "read/randread points or the copy read, write = write/randwrite or the copy write. The study: "
                      "copy read Ceph 16.4 %, ZFS 9.3 %; copy write Ceph 14 %, ZFS 17.6 % (their hardware)."]}


def sc_report_tables(documents, variants, lab=False, curve_rows=12, access="local"):
    """Tables the report hook derives from the run's point documents.

    Returns ``[table]`` (``{title, header, rows, notes}``, cells formatted):
    the study's figures beside the measured means (labelled as the study's
    hardware), rebuild time per used size, each rebuild's progress curve
    (``curve_rows`` evenly spaced samples) and the integrity verdicts.
    With both access modes in the run (``access`` a list of two) the study's
    table and the CPU table come once per mode and a rebuild names its mode.
    """
    fname = "sc_report_tables"
    if not isinstance(documents, (list, tuple)):
        _fail(fname, f"documents must be the run's point documents, got {type(documents).__name__}")
    accesses = _accesses(fname, access)
    # the measured points (a fault is not a result)
    docs = [d for d in documents if isinstance(d, dict) and d.get("valid") is not None and d.get("verdict") != "fault"]
    tables = []
    for mode in accesses:
        suffix = f" - access {mode}" if len(accesses) > 1 else ""
        tables += _mode_tables([d for d in docs if d.get("valid") and _access_of(d, accesses) == mode],
                               lab, mode, suffix)
    return tables + _rebuild_tables(docs, variants, curve_rows, accesses)


# The tools behind each workload's rows of the study's table (their versions from the points'
# environment); the node's CPU (node_cpu_pct) is read from /proc/stat by the testbed's own sampler.
STUDY_TOOLS = {"fio": ["fio"], "copy": ["cp"], "oltp": ["sysbench", "mariadbd"], "rebuild": ["zfs", "ceph"]}


def _mode_tables(valid, lab, access, suffix):
    """The study's figures beside the measured means, and the node's CPU, of one access mode's valid points."""
    tables = []

    rows, measured = [], 0
    for label, workload, where, metric, ceph, zfs in STUDY:
        chosen = [d for d in valid if _matches(d, workload, where)]
        got = {v: _mean([(d.get("metrics") or {}).get(metric) for d in chosen if d.get("variant") == v])
               for v in ("ceph", "zfs")}
        spread = STUDY_SPREAD.get(label, ("", ""))
        study = [_fmt(ceph) + (f" ({spread[0]})" if spread[0] else ""),
                 _fmt(zfs) + (f" ({spread[1]})" if spread[1] else ""), _fmt(_ratio(zfs, ceph), 3)]
        if got["ceph"] is None and got["zfs"] is None:
            # every row of the study is printed; one this run did not measure says so
            rows.append([label] + study + ["\u2014", "\u2014", "\u2014", NOT_MEASURED])
            continue
        measured += 1
        tools = [] if metric == "node_cpu_pct" else STUDY_TOOLS[workload]
        used = "; ".join(measured_with(chosen, t) for t in tools) if tools else "/proc/stat (cpu_sampler)"
        rows.append([label] + study + [_fmt(got["ceph"]), _fmt(got["zfs"]), _fmt(_ratio(got["zfs"], got["ceph"]), 3),
                                       used])
    if measured:
        notes = [f"Study columns: {STUDY_LABEL}; tests inside VMs whose disks were on the storage, Iometer for IOPS, "
                 "60 min each. Measured columns: this run's valid points (means); every row of the study is "
                 f"printed, \u2014 where this run has no point at its parameters (e.g. the lab's rebuilds are of "
                 "megabytes, the study's of 20 and 40 GB: the rebuild table below)."] + STUDY_CONTRADICTIONS
        if lab:
            notes.append("The measured columns come from the lab (TCG-emulated VM, file-backed disks): compare the "
                         "direction of the ZFS/Ceph ratio at most, never the figures.")
        tables.append({"title": "The study's figures (their hardware) beside this run's" + suffix,
                       "header": ["test", "study Ceph", "study ZFS", "study ZFS/Ceph", "measured Ceph",
                                  "measured ZFS", "measured ZFS/Ceph", "measured with"],
                       "rows": rows, "notes": notes})
    cpu = _cpu_table(valid, access, suffix)
    if cpu:
        tables.append(cpu)
    return tables


def _rebuild_tables(docs, variants, curve_rows, accesses):
    """Rebuild time per used size with integrity, the progress chart and curves, mismatches file by file
    (``docs``: the measured points)."""
    order = {v: n for n, v in enumerate(variants or [])}
    modes = {a: n for n, a in enumerate(accesses)}
    tables = []

    def system(doc):
        return doc.get("variant") if len(accesses) == 1 else f"{doc.get('variant')} ({_access_of(doc, accesses)})"

    rebuilds = sorted([d for d in docs if (d.get("parameters") or {}).get("workload") == "rebuild"],
                      key=lambda d: (modes.get(_access_of(d, accesses), 0), d["parameters"].get("used_mb", 0),
                                     order.get(d.get("variant"), len(order)), d.get("repetition", 0)))
    if rebuilds:
        rows = []
        for doc in rebuilds:
            m = doc.get("metrics") or {}
            integrity = (doc.get("extra") or {}).get("integrity") or {}
            verdict = ("passed" if integrity.get("valid") else
                       ("FAILED" if integrity.get("valid") is False else "not checked"))
            rows.append([system(doc), str(doc["parameters"].get("used_mb")), str(doc.get("repetition")),
                         _fmt(m.get("rebuild_s")), _fmt(None if m.get("used_bytes") is None else m["used_bytes"] / 1e6),
                         str(m.get("polls")), _fmt(m.get("rebuild_reported_s")), verdict,
                         f"{integrity.get('checked')} / {integrity.get('files')}" if integrity else "n/a"])
        series = {}
        for doc in rebuilds:
            curve = [p for p in (doc.get("extra") or {}).get("curve") or []
                     if isinstance(p, (list, tuple)) and len(p) == 2 and isinstance(p[0], (int, float))]
            if curve:
                label = "{} {} MB (rep {})".format(system(doc), doc["parameters"].get("used_mb"),
                                                   doc.get("repetition"))
                series[label] = [[t, None if f is None else round(f * 100.0, 2)] for t, f in curve]
        chart = {"x_label": "seconds since the disk was back", "y_label": "rebuild progress [%]",
                 "series": series} if series else None
        tables.append({"title": "Rebuild time per used size and integrity", "chart": chart,
                       "header": ["system", "used MB (planned)", "rep", "rebuild s", "fs used MB", "polls",
                                  "system's own s", "integrity", "files verified"],
                       "rows": rows,
                       "notes": ["Rebuild: one disk taken out, wiped and put back; the time runs from the moment it was back until the"
                                 " system's own status reported full redundancy (ZFS: resilver finished, pool and vdevs ONLINE; Ceph: "
                                 "every PG active+clean, nothing degraded or misplaced), polled at most once a second (the next poll "
                                 "starts when the previous status command returned; the polls column counts them); the timer runs "
                                 "on the node from before the loss, and its t = 0 is the mark the builder role touches just before "
                                 "`zpool replace` / the new OSD's start. \"system's own s\": ZFS's "
                                 "own resilver time (`resilvered X in HH:MM:SS`, whole seconds); Ceph reports none. Integrity: the "
                                 "sha256 manifest written before the failure, verified after the rebuild with caches dropped; any "
                                 "mismatch invalidates the point and is listed file by file in its reasons."]})
        mismatched = [d for d in rebuilds if ((d.get("extra") or {}).get("integrity") or {}).get("mismatches")]
        if mismatched:
            tables.append({"title": "Integrity mismatches, file by file",
                           "header": ["system", "used MB", "rep", "file", "expected sha256", "actual sha256"],
                           "rows": [[system(d), str(d["parameters"].get("used_mb")), str(d.get("repetition")),
                                     m.get("path"), m.get("expected_sha256"), m.get("actual_sha256")]
                                    for d in mismatched for m in d["extra"]["integrity"]["mismatches"]]})
        for doc in rebuilds:
            curve = (doc.get("extra") or {}).get("curve") or []
            if not curve:
                continue
            n = min(len(curve), max(2, int(curve_rows)))
            step = (len(curve) - 1) / float(n - 1) if n > 1 else 0
            picked = [curve[int(round(i * step))] for i in range(n)] if len(curve) > 1 else curve
            title = "Rebuild progress: {} with {} MB used (rep {})".format(
                system(doc), doc["parameters"].get("used_mb"), doc.get("repetition"))
            tables.append({"title": title,
                           "header": ["t s", "progress %"],
                           "rows": [[_fmt(t, 5), "n/a" if f is None else f"{f * 100:.1f}"] for t, f in picked]})
    return tables


def sc_fidelity(documents, baseline, tolerance_pct=5.0, alpha=0.05):
    """The fidelity check: fio by hand and fio through the harness, in interleaved pairs (``fidelity_from_points``).

    The pairs are ``extra.fidelity_pairs`` (``[hand, harness]`` IOPS) of the valid fio points of
    ``baseline`` (tasks/fidelity_pair.yml fills them after the first fio point).  Returns
    ``fidelity_from_points``'s result (verdict, n, mean difference, 90 % interval, sentence), or ``{}``
    when the run has no pairs.
    """
    points = [d for d in documents or [] if isinstance(d, dict) and (d.get("parameters") or {}).get("workload") == "fio"]
    pattern = next(((d.get("parameters") or {}).get("pattern") for d in points
                    if d.get("variant") == baseline and (d.get("extra") or {}).get("fidelity_pairs")), None)
    what = (f"IOPS of {pattern} fio through the harness against fio run by hand (a plain command) on the same "
            f"{baseline} device, harness/hand − 1 over interleaved pairs, caches emptied before each run")
    return fidelity.fidelity_from_points(points, baseline, tolerance_pct, alpha, what=what)


def _ceph_status(stdout):
    """(status JSON, daemon counts {mon, mgr, osd}) from the health probe's output."""
    text = stdout or ""
    daemons = {}
    body = []
    for line in text.splitlines():
        if line.startswith("daemons:"):
            counts = line.split(":", 1)[1].split()
            if len(counts) == 3 and all(c.isdigit() for c in counts):
                daemons = dict(zip(("mon", "mgr", "osd"), (int(c) for c in counts)))
        else:
            body.append(line)
    try:
        status = json.loads("\n".join(body).strip() or "null")
    except ValueError:
        status = None
    return status, daemons


def sc_health(probe, variant, host, benign=(), brought=False):
    """The health hook's verdict ``{ok, problems: [{component, evidence}]}``.

    ``probe``: ``{reachable, ping_msg, built, status}`` - ``status`` the
    command result of the system's own status (ZFS: ``zpool list -H -o health
    POOL``; Ceph: ``ceph status -f json`` then a ``daemons: MON MGR OSD`` count
    line). ZFS is healthy when the pool is ONLINE; Ceph when HEALTH_OK, or
    HEALTH_WARN with every check in ``benign``, the mon, mgr and two OSD
    daemons running and both OSDs up. ``brought``: a Ceph cluster the
    operator brought (storage_compare_ceph_existing_conf), reached as a client:
    its daemons run elsewhere and its warnings are its own, so it is healthy
    unless ``ceph status`` fails or says HEALTH_ERR.
    """
    fname = "sc_health"
    if not isinstance(probe, dict):
        _fail(fname, f"probe must be a mapping, got {probe!r}")
    if variant not in VARIANTS:
        _fail(fname, f"unknown variant {variant!r}")
    problems = []
    if not probe.get("reachable"):
        problems.append({"component": f"storage node {host}",
                         "evidence": str(probe.get("ping_msg") or "unreachable")[:300]})
        return {"ok": False, "problems": problems}
    status = probe.get("status")
    if not probe.get("built") or not isinstance(status, dict) or status.get("skipped"):
        return {"ok": True, "problems": []}
    out = (status.get("stdout") or "").strip()
    if variant == "zfs":
        if status.get("rc") != 0 or out != "ONLINE":
            problems.append({"component": "ZFS pool on " + host,
                             "evidence": f"zpool list health: {out or (status.get('stderr') or '').strip()}"[:300]})
        return {"ok": not problems, "problems": problems}
    parsed, daemons = _ceph_status(out)
    if status.get("rc") != 0 or not isinstance(parsed, dict):
        problems.append({"component": "Ceph cluster on " + host,
                         "evidence": ("ceph status failed: " + (status.get("stderr") or out))[:300]})
        return {"ok": False, "problems": problems}
    health = parsed.get("health") or {}
    checks = sorted((health.get("checks") or {}).keys())
    level = health.get("status")
    if brought:
        if level == "HEALTH_ERR":
            problems.append({"component": "Ceph cluster (storage_compare_ceph_existing_conf) seen from " + host,
                             "evidence": f"{level}: {', '.join(checks) or 'no checks listed'}"})
        return {"ok": not problems, "problems": problems}
    if level != "HEALTH_OK" and not (level == "HEALTH_WARN" and checks and all(c in benign for c in checks)):
        problems.append({"component": "Ceph cluster on " + host,
                         "evidence": f"{level}: {', '.join(checks) or 'no checks listed'}"})
    need = {"mon": 1, "mgr": 1, "osd": 2}
    short = [f"{name} {daemons.get(name, 0)}/{count}" for name, count in need.items() if daemons.get(name, 0) < count]
    if short:
        problems.append({"component": "Ceph daemons on " + host, "evidence": "running: " + ", ".join(short)})
    osdmap = parsed.get("osdmap") or {}
    osdmap = osdmap.get("osdmap", osdmap)
    up = osdmap.get("num_up_osds")
    if isinstance(up, int) and up < 2:
        problems.append({"component": "Ceph OSDs on " + host, "evidence": f"{up} of {osdmap.get('num_osds')} OSDs up"})
    return {"ok": not problems, "problems": problems}


_INI_SECTION = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]\s*$")
_INI_VALUE = re.compile(r"^\s*([A-Za-z0-9_ .-]+?)\s*=\s*(.*?)\s*$")


def _ini(text):
    """{section: {key: value}} of a ceph.conf or keyring (keys with spaces, dashes and underscores alike)."""
    sections, current = {}, None
    for line in (text or "").splitlines():
        line = line.split("#", 1)[0].split(";", 1)[0]
        head = _INI_SECTION.match(line)
        if head:
            current = sections.setdefault(head.group(1).strip(), {})
            continue
        value = _INI_VALUE.match(line)
        if value and current is not None:
            current[re.sub(r"[ _-]+", "_", value.group(1).strip().lower())] = value.group(2)
    return sections


def sc_ceph_client(conf_text, keyring_text, client, conf_path="the configuration", keyring_path="the keyring"):
    """An operator's Ceph cluster as the client VM's qemu reaches it (network access, storage_compare_ceph_existing_conf):
    ``{user, key, monitors}`` from the cluster's configuration (its ``mon_host``, as written: librbd reads the same
    syntax) and the client's keyring (``[client.NAME] key = ...``). Nothing is made on the operator's cluster: the
    client VM uses the operator's own cephx user. Raises with one sentence naming what is missing and where."""
    fname = "sc_ceph_client"
    client = str(client or "").strip()
    if not client.startswith("client.") or len(client) <= len("client."):
        _fail(fname, f"storage_compare_ceph_existing_client must be a cephx client such as client.ops, got {client!r}")
    monitors = (_ini(conf_text).get("global") or {}).get("mon_host", "").strip()
    if not monitors:
        _fail(fname, f"{conf_path} names no mon_host in its [global] section: the client VM's qemu on the compute node "
                     "must be told the monitors; give the cluster's ceph.conf as storage_compare_ceph_existing_conf")
    key = (_ini(keyring_text).get(client) or {}).get("key", "").strip()
    if not key:
        _fail(fname, f"{keyring_path} holds no key of {client}: give that client's keyring as "
                     "storage_compare_ceph_existing_keyring, or name its client in storage_compare_ceph_existing_client")
    return {"user": client[len("client."):], "key": key, "monitors": [monitors]}


_MON_ENTRY = re.compile(r"^(?:v[12]:)?(?P<addr>\[[0-9A-Fa-f:.]+\]|[^:/\s]+)")


def _mon_addresses(mon_host):
    """The host part of each monitor address of a ``mon_host`` value as written: ``10.0.0.1``,
    ``10.0.0.1:6789``, ``[v2:10.0.0.1:3300,v1:10.0.0.1:6789]``, ``[::1]:6789``, ``mon1.example``;
    entries separated by commas, semicolons or spaces."""
    hosts = []
    for group in re.findall(r"\[v[12]:(?:\[[^\]]*\]|[^\]])*\]|[^,;\s]+", mon_host or ""):
        entries = group[1:-1].split(",") if group.startswith("[v") else [group]
        for entry in entries:
            entry = entry.strip()
            if entry.count(":") > 1 and not entry.startswith(("[", "v1:", "v2:")):
                hosts.append(entry)  # a bare IPv6 address
                continue
            found = _MON_ENTRY.match(entry)
            if found:
                hosts.append(found.group("addr").strip("[]"))
    return [h for h in hosts if h]


def _is_loopback(host):
    host = host.lower().rstrip(".")
    return host in ("localhost", "localhost.localdomain", "ip6-localhost", "::1") or host.startswith("127.")


def sc_ceph_monitor_problems(conf_text, conf_path, node, compute_node):
    """The preflight's sentence (a list, empty when fine) for an operator's cluster reached over the network
    whose ``mon_host`` names only loopback addresses while the client VM runs on another host
    (``compute_node`` not ``node``): its qemu would wait for ``Connection timed out`` on its own loopback.
    Host names other than localhost are not resolved here and pass."""
    if not compute_node or compute_node == node:
        return []
    monitors = (_ini(conf_text).get("global") or {}).get("mon_host", "").strip()
    hosts = _mon_addresses(monitors)
    if not hosts or not all(_is_loopback(h) for h in hosts):
        return []
    return [f"{conf_path} on {node} gives the monitors as {monitors} (mon_host), a loopback address that the client "
            f"VM on the compute node {compute_node} cannot reach: give the cluster's configuration with the monitors' "
            "addresses on the storage network as storage_compare_ceph_existing_conf, or run the client on the node "
            "itself (storage_compare_access=local)."]


class FilterModule:
    def filters(self):
        return {"sc_variants": sc_variants, "sc_workloads": sc_workloads, "sc_point": sc_point,
                "sc_report": sc_report, "sc_report_tables": sc_report_tables, "sc_fidelity": sc_fidelity, "sc_health": sc_health,
                "sc_memory": sc_memory, "sc_ceph_client": sc_ceph_client,
                "sc_ceph_monitor_problems": sc_ceph_monitor_problems}
