# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the container-vs-native experiment role (roles/container_compare).

* ``cc_variants``: the variants of a run from the inventory's guest hosts;
* ``cc_workloads``: the sweep matrix's ``workloads`` from the settings;
* ``cc_point``: one point's result (the workload's metrics with units, the
  verdict, raw outputs, the runtime fingerprint) from its tool runs;
* ``cc_report``: the report specification (sections per workload, the overall
  index of study A's Table 3.1, the studies' figures as a labelled reference);
* ``cc_tool_sections``: the report's sections titled with the tool and version
  that measured each workload's rows (from the point documents, at report time);
* ``cc_disk_patterns``: every disk pattern's fio settings (rw, block size,
  iodepth, jobs, read share), checked;
* ``cc_hpcc``: hpcc's HPL problem size N for the run, from the memory of the
  smallest measured guest or host (module_utils/testbed_cc_hpcc.py), with
  ``cc_hpcc_timeout_s`` (a point's bound from its N), ``cc_hpcc_note`` (the
  report's sentence on the N the stored points measured) and ``cc_memtotal_kib``
  (MemTotal from /proc/meminfo).

Pure functions (tests/unit/test_filters_container_compare.py); bad input raises
``AnsibleFilterError`` naming the filter and the bad value. Generic pieces
(``workload_result``, the statistics) come from the shared filter_plugins/.
"""

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

from ansible.module_utils import testbed_cc_hpcc as hpcc_size  # noqa: E402
from ansible.module_utils import testbed_sampling as sampling  # noqa: E402
from ansible.module_utils import testbed_sweep as sweep  # noqa: E402

VARIANTS = ("native", "docker", "podman", "lxc", "lxd", "kvm")

# Every workload: the tools that can measure it (the first is the default; a
# workload with several reads its choice from the setting <workload>_tool) and
# for each the metrics a point keeps (new name: [parser metric, factor]), where
# it runs (guest: inside the variant's guest; client: on the host, against the
# guest's services) and the report's x parameter (None: one column).
WORKLOADS = {
    "web": {"tools": {"ab": {
        "requests_per_s": ["requests_per_s", 1], "time_per_request_ms": ["time_per_request_ms", 1],
        "time_taken_s": ["time_taken_s", 1], "p50_ms": ["p50_ms", 1], "p99_ms": ["p99_ms", 1], "failed_requests": ["failed_requests", 1],
        "transfer_rate_kb_s": ["transfer_rate_kb_s", 1]}}, "runs_in": "client", "x": "concurrency"},
    "ftp": {"tools": {"lftp": {
        "rate_mib_s": ["rate_mib_s", 1], "transfer_s": ["transfer_s", 1], "bytes": ["transferred_bytes", 1]}},
        "runs_in": "client", "x": "direction"},
    "mail": {"tools": {"postal": {
        "messages_per_min": ["messages_per_min", 1], "messages": ["messages", 1], "errors": ["errors", 1]}},
        "runs_in": "client", "x": None},
    "cpu": {"tools": {"sysbench": {
        "events_per_s": ["events_per_s", 1], "latency_avg_ms": ["latency_avg_ms", 1],
        "latency_p95_ms": ["latency_p95_ms", 1]}}, "runs_in": "guest", "x": "threads"},
    "compress": {"tools": {"xz": {"ratio": ["ratio", 1], "xz_speed_mib_s": ["throughput_mib_s", 1]}},
                 "runs_in": "guest", "x": "threads"},
    "hpcc": {"tools": {"hpcc": {
        "hpl_gflops": ["hpl_gflops", 1], "stream_copy_gb_s": ["single_stream_copy_gb_s", 1],
        "stream_scale_gb_s": ["single_stream_scale_gb_s", 1], "stream_add_gb_s": ["single_stream_add_gb_s", 1],
        "stream_triad_gb_s": ["single_stream_triad_gb_s", 1],
        "random_access_gups": ["single_random_access_gups", 1]}}, "runs_in": "guest", "x": None},
    "memory": {"tools": {"sysbench": {
        "memory_mib_s": ["transfer_mib_s", 1], "operations_per_s": ["operations_per_s", 1]}},
        "runs_in": "guest", "x": "operation"},
    "disk": {"tools": {"fio": {}}, "runs_in": "guest", "x": "pattern"},
    # Study A's IOzone write and read (-i 0 -i 1): IOzone's kB/s are KiB/s.
    "disk_rw": {"tools": {"iozone": {
        "write_mib_s": ["write_kib_s", 1 / 1024.0], "rewrite_mib_s": ["rewrite_kib_s", 1 / 1024.0],
        "read_mib_s": ["read_kib_s", 1 / 1024.0], "reread_mib_s": ["reread_kib_s", 1 / 1024.0]}},
        "runs_in": "guest", "x": None},
    # client_cpu_pct / server_cpu_pct: the tool's own figures for its two processes (nuttcp's %TX/%RX,
    # matched to client and server by the direction in cc_point; iperf3's host/remote CPU).
    "net_bw": {
        "tools": {
            "nuttcp": {"throughput_gbps": ["rate_bps", 1e-9], "retransmits": ["retransmits", 1],
                       "rtt_ms": ["rtt_ms", 1]},
            "iperf3": {"throughput_gbps": ["received_bps", 1e-9], "retransmits": ["retransmits", 1],
                       "client_cpu_pct": ["host_cpu_total_pct", 1], "server_cpu_pct": ["remote_cpu_total_pct", 1]}},
        "runs_in": "client", "x": "direction"},
    "net_lat": {
        "tools": {
            "netperf": {"rtt_avg_us": ["rtt_mean_us", 1], "rtt_p50_us": ["rtt_p50_us", 1], "rtt_p99_us": ["rtt_p99_us", 1],
                        "transactions_per_s": ["transactions_per_s", 1], "request_bytes": ["request_bytes", 1],
                        "response_bytes": ["response_bytes", 1]},
            "sockperf": {"rtt_avg_us": ["rtt_avg_us", 1], "rtt_p50_us": ["rtt_p50_us", 1], "rtt_p99_us": ["rtt_p99_us", 1],
                         "transactions_per_s": ["round_trips_per_s", 1]}},
        "runs_in": "client", "x": "protocol"},
}

# fio's --rw values a disk pattern may use (the mixed ones take a read share, rwmixread).
FIO_RW = ("read", "write", "randread", "randwrite", "rw", "randrw")
BLOCK_SIZE = re.compile(r"^[0-9]+[kKmMgG]?$")

# Metrics that may be null in a valid point (not every run reports them).
OPTIONAL = ("first_byte_ms", "retransmits", "errors", "xz_speed_mib_s", "host_busy_pct", "host_system_pct",
            "host_softirq_pct", "rtt_ms", "rtt_p50_us", "rtt_p99_us", "client_cpu_pct", "server_cpu_pct")

# The whole host's CPU over the point's workload (/proc/stat read before and after it, % of all CPUs):
# study A loaded the machine to ~99 %, study B charged the network's cost to the host (perf stat -a).
HOST_CPU = {"host_busy_pct": "busy_pct", "host_system_pct": "system_pct", "host_softirq_pct": "softirq_pct"}

# Study A's overall index (Table 3.1): four metrics, each a ratio to native.
# label: (workload, metric, extra condition from the settings, study A's tool). The disk rows are
# IOzone's (workload disk_rw) when it is measured, else fio's sequential read/write patterns.
INDEX_ITEMS = [
    ("disk read", "disk_rw", "read_mib_s", None, "IOzone read"),
    ("disk write", "disk_rw", "write_mib_s", None, "IOzone write"),
    ("disk read", "disk", "bandwidth_mib_s", {"pattern": "read"}, "IOzone read; here fio sequential read"),
    ("disk write", "disk", "bandwidth_mib_s", {"pattern": "write"}, "IOzone write; here fio sequential write"),
    ("RAM", "memory", "memory_mib_s", None, "RAMspeed; here sysbench memory"),
    ("CPU", "cpu", "events_per_s", None, "sysbench cpu"),
]

# The studies' own figures (their hardware), shown beside the measured ones.
# Study A, Table 3.1: per-metric ratios to native (Docker / LXC / LXD).
STUDY_A_RATIOS = {
    "docker": {"disk read": 0.74, "disk write": 0.82, "RAM": 0.98, "CPU": 0.73},
    "lxc": {"disk read": 0.81, "disk write": 0.77, "RAM": 0.97, "CPU": 0.91},
    "lxd": {"disk read": 0.85, "disk write": 0.83, "RAM": 0.99, "CPU": 0.95},
}
# Study A's per-test figures from its text (shared/docs/study-figures.md, their hardware), each a
# change against native: (workload, metric, extra condition, finding, {variant: the study's figure}).
# The cpu and memory rows take the overall index's condition (threads, operation), ftp the get direction.
STUDY_A_TESTS = [
    ("web", "requests_per_s", None, "A: ab requests per second (up to 2000 concurrent)",
     {"docker": "A: 3.1-5.9 % lower", "lxc": "A: 0.91-3.5 % lower", "lxd": "A: 0.005-10.8 % lower"}),
    ("web", "time_taken_s", None, "A: ab total time",
     {"docker": "A: 3.37-6.38 % longer", "lxc": "A: 0.06-3.9 % longer", "lxd": "A: 0.16-12.6 % longer"}),
    ("ftp", "transfer_s", {"direction": "get"}, "A: FTP total time (500 MB file)",
     {"docker": "A: 29.9 % shorter", "lxc": "A: 44.18 % shorter", "lxd": "A: 47.42 % shorter (35.125 s, the best)"}),
    ("ftp", "rate_mib_s", {"direction": "get"}, "A: FTP transfer rate",
     {"docker": "A: 25.8 % higher", "lxc": "A: 34.04 % higher", "lxd": "A: 33.05 % higher"}),
    ("mail", "messages_per_min", None, "A: postal (10 threads, 25 MB messages, one minute)",
     {"docker": "A: 2.09 % overhead", "lxc": "A: 1.85 % overhead", "lxd": "A: 1.91 % overhead"}),
    ("cpu", "events_per_s", "index", "A: sysbench CPU",
     {"docker": "A: 0.27 % overhead; its Table 3.1: 0.73 (!)", "lxc": "A: 0.094 % overhead; its Table 3.1: 0.91 (!)",
      "lxd": "A: 0.047 % overhead; its Table 3.1: 0.95 (!)"}),
    ("disk_rw", "read_mib_s", None, "A: IOzone read",
     {"docker": "A: 82.22 % of native, 83.088 Mbps; its Table 3.1: 0.74 (!)",
      "lxc": "A: 80.52 % of native, 92.32 Mbps; its Table 3.1: 0.81 (!)", "lxd": "A: 85.41 % of native, 97.93 Mbps"}),
    ("disk_rw", "write_mib_s", None, "A: IOzone write",
     {"docker": "A: 79.38 % of native, 88.95 Mbps", "lxc": "A: 77 % of native, 86.27 Mbps",
      "lxd": "A: 83.54 % of native, 93.61 Mbps"}),
    ("memory", "memory_mib_s", "index", "A: RAMspeed (here sysbench memory)",
     {"docker": "A: 97.52 % of native, 6997.45 Mbps", "lxc": "A: 97.25 % of native, 6978.58 Mbps",
      "lxd": "A: 99.03 % of native, 7106.172 Mbps"}),
]
# Where study A contradicts itself, said where its figures are printed (both are printed as it gives them).
STUDY_A_CONTRADICTION = (
    "(!) Study A contradicts itself: its Table 3.1 gives CPU 0.73 / 0.91 / 0.95 (Docker / LXC / LXD) against "
    "overheads of 0.27 / 0.094 / 0.047 % in its text, and IOzone read 0.74 (Docker) and 0.81 (LXC) against "
    "82.22 % and 80.52 % in its text. Both are printed as the study gives them; neither is corrected here.")

# Study B (4-core i5; rkt's row is Podman's here): pxz MB/s, Linpack GFLOPS, RandomAccess GUPS and its
# 16 STREAM values (GB/s), as it prints them.
STUDY_B = {
    "native": {"compress_mb_s": 7.94, "hpl_gflops": 26.94, "random_access_gups": 0.0550,
               "stream_add_gb_s": 11.8211, "stream_copy_gb_s": 11.4309, "stream_scale_gb_s": 11.3928,
               "stream_triad_gb_s": 11.7716},
    "docker": {"compress_mb_s": 7.00, "hpl_gflops": 26.86, "random_access_gups": 0.0515,
               "stream_add_gb_s": 11.8406, "stream_copy_gb_s": 11.4464, "stream_scale_gb_s": 11.4289,
               "stream_triad_gb_s": 11.7792},
    "podman": {"compress_mb_s": 7.35, "hpl_gflops": 25.93, "random_access_gups": 0.0520,
               "stream_add_gb_s": 11.7503, "stream_copy_gb_s": 11.1776, "stream_scale_gb_s": 11.1505,
               "stream_triad_gb_s": 11.7169},
    "kvm": {"compress_mb_s": 6.2, "hpl_gflops": 18.49, "random_access_gups": 0.0545,
            "stream_add_gb_s": 11.5224, "stream_copy_gb_s": 11.2618, "stream_scale_gb_s": 11.2498,
            "stream_triad_gb_s": 11.513},
}


def _fail(name, message):
    raise AnsibleFilterError(f"{name}: {message}")


def cc_variants(hosts, hostvars, wanted=None, baseline="native", group="container_guests"):
    """The run's variants from the guest hosts of the inventory.

    ``hosts``: the guest group's hosts; ``hostvars``: Ansible's hostvars (each
    host gives ``container_compare_variant`` and optionally
    ``container_compare_emulated``); ``wanted``: variant names to keep (empty:
    all). Returns ``[{host, variant, emulated}]`` in the canonical order
    (native, docker, podman, lxc, lxd, kvm) with the baseline first; stops when
    a variant is unknown, given twice, wanted but absent, or when the baseline
    is not measured.
    """
    fname = "cc_variants"
    if not isinstance(hosts, (list, tuple)) or not hosts:
        _fail(fname, f"group {group} has no hosts: the inventory lists one guest host per variant "
                     "(see inventories/example_hardware)")
    guests = []
    for host in hosts:
        hv = hostvars[host] if host in hostvars else {}
        guests.append({"host": host, "variant": hv.get("container_compare_variant"),
                       "emulated": hv.get("container_compare_emulated", False)})
    seen = {}
    for guest in guests:
        variant = guest.get("variant")
        if variant not in VARIANTS:
            _fail(fname, f"host {guest['host']} of group {group}: container_compare_variant must be one of "
                         f"{', '.join(VARIANTS)}, got {variant!r}")
        if variant in seen:
            _fail(fname, f"variant {variant} is given by two hosts ({seen[variant]['host']} and {guest['host']}); "
                         "keep one host per variant")
        seen[variant] = {"host": guest["host"], "variant": variant, "emulated": bool(guest.get("emulated", False))}
    wanted = list(wanted or [])
    missing = [w for w in wanted if w not in seen]
    if missing:
        _fail(fname, f"container_compare_variants names {', '.join(map(str, missing))}, which no guest host gives "
                     f"(the inventory has {', '.join(v for v in VARIANTS if v in seen)})")
    keep = [v for v in VARIANTS if v in seen and (not wanted or v in wanted)]
    if baseline not in keep:
        _fail(fname, f"the baseline variant {baseline!r} is not measured (variants: {', '.join(keep)}); "
                     "every ratio is taken against it")
    keep.remove(baseline)
    return [seen[v] for v in [baseline] + keep]


def workload_tool(name, settings, fname="cc_workloads"):
    """The tool that measures workload ``name``: the setting ``<name>_tool`` where the workload has a choice."""
    tools = list(WORKLOADS[name]["tools"])
    if len(tools) == 1:
        return tools[0]
    tool = (settings or {}).get(f"{name}_tool") or tools[0]
    if tool not in tools:
        _fail(fname, f"container_compare_{name}_tool must be one of {', '.join(tools)}, got {tool!r}")
    return tool


def cc_disk_patterns(settings):
    """Every disk pattern's fio settings ``{pattern: {rw, block_size, iodepth, jobs, rwmixread}}``.

    A pattern is a key of ``disk_pattern_settings`` (study B's: 1 MiB sequential at
    iodepth 16, 4 KiB random with 1 and with 8 jobs, a 70/30 mix), or a plain fio
    ``--rw`` value that takes ``disk_block_size`` and ``disk_iodepth`` with one job.
    """
    fname = "cc_disk_patterns"
    table = (settings or {}).get("disk_pattern_settings") or {}
    if not isinstance(table, dict):
        _fail(fname, f"container_compare_disk_pattern_settings must be a mapping of pattern name to its fio settings, "
                     f"got {table!r}")
    out = {}
    for pattern in (settings or {}).get("disk_patterns") or []:
        entry = table.get(pattern)
        if entry is None:
            if pattern not in FIO_RW:
                _fail(fname, f"disk pattern {pattern!r} is neither a key of container_compare_disk_pattern_settings "
                             f"({', '.join(map(str, table)) or 'none'}) nor a fio --rw value ({', '.join(FIO_RW)}): "
                             "add its settings there or remove it from container_compare_disk_patterns")
            entry = {"rw": pattern}
        if not isinstance(entry, dict):
            _fail(fname, f"container_compare_disk_pattern_settings.{pattern} must be a mapping (rw, block_size, "
                         f"iodepth, jobs, rwmixread), got {entry!r}")
        unknown = sorted(set(entry) - {"rw", "block_size", "iodepth", "jobs", "rwmixread"})
        if unknown:
            _fail(fname, f"container_compare_disk_pattern_settings.{pattern} has unknown key(s) {', '.join(unknown)}; "
                         "the keys are rw, block_size, iodepth, jobs, rwmixread")
        fio = {"rw": entry.get("rw", pattern), "block_size": str(entry.get("block_size", settings.get("disk_block_size"))),
               "iodepth": entry.get("iodepth", settings.get("disk_iodepth")), "jobs": entry.get("jobs", 1)}
        if fio["rw"] not in FIO_RW:
            _fail(fname, f"container_compare_disk_pattern_settings.{pattern}.rw must be one of {', '.join(FIO_RW)}, "
                         f"got {fio['rw']!r}")
        if not BLOCK_SIZE.match(fio["block_size"]):
            _fail(fname, f"container_compare_disk_pattern_settings.{pattern}.block_size is {fio['block_size']!r}, "
                         "not a block size such as 4k, 64k or 1m")
        for key, top in (("iodepth", 1024), ("jobs", 256)):
            value = fio[key]
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
                _fail(fname, f"container_compare_disk_pattern_settings.{pattern}.{key} must be a whole number from 1 "
                             f"to {top}, got {value!r}")
        if "rwmixread" in entry:
            mix = entry["rwmixread"]
            if fio["rw"] not in ("rw", "randrw") or isinstance(mix, bool) or not isinstance(mix, int) \
                    or not 0 <= mix <= 100:
                _fail(fname, f"container_compare_disk_pattern_settings.{pattern}.rwmixread (the read share of a mixed "
                             f"pattern, rw or randrw) must be a whole number from 0 to 100, got {mix!r} with rw "
                             f"{fio['rw']!r}")
            fio["rwmixread"] = mix
        out[pattern] = fio
    return out


def cc_hpcc(settings, variants, memory=None):
    """hpcc's problem for the run, one N for every variant (testbed_cc_hpcc.size: the N, why, the
    estimate and timeout, the plan's line, and ``problem``: None or the sentences that refuse the input).

    ``settings``: ``{n: auto or a whole number, nb, p, q, fraction, memory_mb}``; ``variants``: the
    measured variants; ``memory``: ``{host_kib, kvm_mib, limits: {variant: runtime_<variant>_memory}}``.
    """
    if not isinstance(settings, dict):
        _fail("cc_hpcc", f"settings must be a mapping (n, nb, p, q, fraction, memory_mb), got {settings!r}")
    if memory is not None and not isinstance(memory, dict):
        _fail("cc_hpcc", f"memory must be a mapping (host_kib, kvm_mib, limits), got {memory!r}")
    return hpcc_size.size(settings, variants or [], memory)


def cc_hpcc_timeout_s(parameters):
    """A hpcc point's bound in seconds, from its own parameters (n, p, q): three times its estimate + 5 min,
    at least 30 min."""
    if not isinstance(parameters, dict) or hpcc_size.whole_number(parameters.get("n")) is None:
        _fail("cc_hpcc_timeout_s", f"parameters must be a hpcc point's (a whole number n, p, q), got {parameters!r}")
    return hpcc_size.timeout_s(parameters["n"], parameters.get("p", 1), parameters.get("q", 1))


def cc_hpcc_note(documents):
    """The report's sentence on the N the stored hpcc points measured and why (None without any)."""
    return hpcc_size.report_note(documents)


def cc_memtotal_kib(meminfo):
    """MemTotal in KiB from /proc/meminfo's text."""
    try:
        return hpcc_size.memtotal_kib(meminfo)
    except hpcc_size.HpccError as exc:
        _fail("cc_memtotal_kib", str(exc))


def cc_workloads(settings, names):
    """The sweep matrix's ``workloads`` list: ``[{name, grid, parameters}]`` in the order of ``names``.

    ``settings`` holds the workload settings (the role's defaults without the
    ``container_compare_`` prefix, e.g. ``web_concurrency``). A workload measured
    by a chosen tool (net_bw, net_lat) names it in its parameters.
    """
    fname = "cc_workloads"
    sweep.check_choices(fname, names, WORKLOADS, "container_compare_workloads", "workload")

    def get(key):
        if key not in settings:
            _fail(fname, f"setting container_compare_{key} is missing")
        return settings[key]

    def hpcc_n():
        # the N of the run (cc_hpcc's n): a whole number, or auto while no memory is known yet (the plan)
        n = get("hpcc_n")
        whole = hpcc_size.whole_number(n)
        if whole is None and n != "auto":
            _fail(fname, f"hpcc's N must be a whole number or auto (cc_hpcc's n), got {n!r}")
        return n if whole is None else whole

    build = {
        "web": lambda: ({"concurrency": get("web_concurrency")},
                        {"requests": get("web_requests"), "timeout_s": get("web_timeout_s")}),
        "ftp": lambda: ({"direction": get("ftp_directions")}, {"file_mb": get("ftp_file_mb")}),
        "mail": lambda: ({}, {"threads": get("mail_threads"), "duration_s": get("mail_duration_s"),
                              "rate_per_min": get("mail_rate_per_min"), "max_kb": get("mail_max_kb"),
                              "min_kb": get("mail_min_kb"), "per_connection": get("mail_per_connection")}),
        "cpu": lambda: ({"threads": get("cpu_threads")},
                        {"duration_s": get("cpu_duration_s"), "max_prime": get("cpu_max_prime")}),
        "compress": lambda: ({"threads": get("compress_threads")},
                             {"level": get("compress_level"), "file_mb": get("compress_file_mb")}),
        "hpcc": lambda: ({}, {"n": hpcc_n(), "nb": get("hpcc_nb"), "p": get("hpcc_p"), "q": get("hpcc_q")}),
        "memory": lambda: ({"operation": get("memory_operations")},
                           {"block_kb": get("memory_block_kb"), "total_gb": get("memory_total_gb")}),
        "disk": lambda: ({"pattern": get("disk_patterns")},
                         {"size_mb": get("disk_size_mb"), "runtime_s": get("disk_runtime_s"),
                          "direct": bool(get("disk_direct"))}),
        "disk_rw": lambda: ({}, {"file_mb": get("disk_rw_file_mb"), "record_kb": get("disk_rw_record_kb"),
                                 "direct": bool(get("disk_rw_direct"))}),
        "net_bw": lambda: ({"direction": get("net_directions")},
                           {"tool": workload_tool("net_bw", settings), "duration_s": get("net_duration_s"),
                            "streams": get("net_streams")}),
        "net_lat": lambda: ({"protocol": get("lat_protocols")},
                            {"tool": workload_tool("net_lat", settings), "request_bytes": get("lat_request_bytes"),
                             "response_bytes": get("lat_response_bytes"), "duration_s": get("lat_duration_s")}),
    }
    if "disk" in names:
        cc_disk_patterns(settings)  # checked before anything runs; the point's task reads its pattern's entry
    out = []
    for name in names:
        grid, parameters = build[name]()
        out.append({"name": name, "grid": grid, "parameters": parameters})
    return out


def _disk_metrics(parsed, rw):
    """fio's figures of the pattern's direction(s): a mixed pattern (rw, randrw) adds reads and writes
    (iops, bandwidth), its p99 is the larger side's and its mean latency the iops-weighted mean."""
    found = (parsed or {}).get("metrics") or {}
    rw = str(rw)
    sides = ["read", "write"] if rw in ("rw", "randrw") else (["write"] if "write" in rw else ["read"])

    def total(key):
        values = [found.get(f"{side}_{key}") for side in sides]
        return None if any(v is None for v in values) else sum(values)

    iops, bw = total("iops"), total("bw_bytes_s")
    p99 = [found.get(f"{side}_clat_p99_us") for side in sides]
    means = [(found.get(f"{side}_lat_mean_us"), found.get(f"{side}_iops")) for side in sides]
    weight = sum(w for m, w in means if m is not None and w)
    return {"iops": iops, "bandwidth_mib_s": None if bw is None else bw / 1048576.0,
            "clat_p99_us": None if any(v is None for v in p99) else max(p99),
            "lat_mean_us": (sum(m * w for m, w in means if m is not None and w) / weight
                            if weight and all(pair[0] is not None for pair in means) else None)}


def _host_cpu(host_stat):
    """{host_busy_pct, ...} from the host's /proc/stat text before and after the workload
    (``[before, after]``), with a warning when they cannot be read; all None without them."""
    empty = dict.fromkeys(HOST_CPU)
    if not host_stat:
        return empty, []
    if not isinstance(host_stat, (list, tuple)) or len(host_stat) != 2 or not all(isinstance(t, str) for t in host_stat):
        return empty, ["host CPU not computed: host_stat must be the /proc/stat text before and after the workload"]
    try:
        whole = sampling.cpu_percentages(host_stat[0], host_stat[1])["all"]
    except (ValueError, KeyError, TypeError) as exc:
        return empty, [f"host CPU not computed: {exc}"]
    return {name: whole.get(key) for name, key in HOST_CPU.items()}, []


def _tool_version(run, environment, fingerprint):
    """The version of the run's tool: the guest's (fingerprint ``tools``) or its host's (environment)."""
    tool = run.get("tool")
    hosts = (environment or {}).get("hosts") if isinstance(environment, dict) else None
    for where in (((hosts or {}).get(run.get("host")) or {}).get("tools"), (fingerprint or {}).get("tools")):
        if isinstance(where, dict) and where.get(tool):
            return where[tool]
    return None


def cc_point(runs, point, environment, fingerprint, extra=None, host_stat=None):
    """One point's result for the sweep's store from its tool runs.

    ``runs``: the ``testbed_workload_result`` of each tool run of the point
    (the measuring run last; earlier ones, e.g. a preparation, only have to
    succeed); ``point``: the sweep point (``parameters.workload`` names the
    workload); ``fingerprint``: the variant's runtime fingerprint, kept in the
    point's ``extra.runtime``; ``host_stat``: the host's /proc/stat text before and after the
    workload, for the host-wide CPU metrics (``host_busy_pct``, ``host_system_pct``,
    ``host_softirq_pct``: % of all CPUs). Returns the storable result (``workload_result``
    shape) with the workload's metrics under their report names.
    """
    fname = "cc_point"
    if not isinstance(point, dict) or not isinstance(point.get("parameters"), dict):
        _fail(fname, f"point must be a sweep point with parameters, got {point!r}")
    workload = point["parameters"].get("workload")
    if workload not in WORKLOADS:
        _fail(fname, f"point {point.get('id', '?')}: unknown workload {workload!r}")
    if isinstance(runs, dict):
        runs = [runs]
    if not isinstance(runs, (list, tuple)) or not runs or not all(isinstance(r, dict) and "tool" in r for r in runs):
        _fail(fname, f"runs must be a non-empty list of testbed_workload results, got {runs!r}")
    spec = WORKLOADS[workload]
    measured = runs[-1]
    tool = point["parameters"].get("tool") or next(iter(spec["tools"]))
    if tool not in spec["tools"] or measured["tool"] != tool:
        _fail(fname, f"workload {workload} is measured by {tool}, the last run is {measured['tool']}")
    result = sweep.workload_result(measured, point, environment, metrics=[], scale=spec["tools"][tool],
                                   extra=dict(extra or {}, runtime=fingerprint, workload=workload,
                                              tool={"name": tool,
                                                    "version": _tool_version(measured, environment, fingerprint)}))
    if workload == "disk":
        # the pattern's fio settings, which the point's task keeps in extra.fio
        fio = (extra or {}).get("fio") or {"rw": point["parameters"].get("pattern")}
        result["metrics"] = _disk_metrics(measured.get("parsed"), fio.get("rw"))
    elif workload == "net_bw" and tool == "nuttcp":
        # nuttcp's %TX / %RX are the transmitter's and the receiver's: the guest receives when the client transmits.
        found = ((measured.get("parsed") or {}).get("metrics") or {})
        client, server = ("tx_cpu_pct", "rx_cpu_pct") if point["parameters"].get("direction") == "receive" \
            else ("rx_cpu_pct", "tx_cpu_pct")
        result["metrics"]["client_cpu_pct"] = found.get(client)
        result["metrics"]["server_cpu_pct"] = found.get(server)
    elif workload == "ftp":
        # lftp's wall time (login, transfer, logout) and curl's time to the first byte (lftp has none).
        result["metrics"]["total_s"] = measured.get("duration_s")
        curl = [r for r in runs[:-1] if r.get("tool") == "curl" and isinstance(r.get("parsed"), dict)]
        first = (curl[-1]["parsed"].get("metrics") or {}).get("first_byte_s") if curl else None
        result["metrics"]["first_byte_ms"] = None if first is None else first * 1000.0
        if curl:
            result["sources"]["curl"] = curl[-1]["parsed"]
    elif workload == "hpcc":
        # the N hpcc ran is the point's: an input file out of step with the plan is never stored as its result
        ran = ((measured.get("parsed") or {}).get("metrics") or {}).get("hpl_n")
        planned = point["parameters"].get("n")
        if ran is not None and planned is not None and ran != planned:
            result["valid"] = False
            result["reasons"].append(f"hpcc ran HPL with N {ran}, the point is planned with N {planned}")
    elif workload == "compress":
        # MB/s of uncompressed data over xz's wall time (xz prints its own speed only after 3 s, 2-3 digits).
        found = ((measured.get("parsed") or {}).get("metrics") or {})
        size, seconds = found.get("uncompressed_bytes"), measured.get("duration_s")
        result["metrics"]["compress_mb_s"] = size / seconds / 1e6 if size and seconds else None
    host, warnings = _host_cpu(host_stat)
    result["metrics"].update(host)
    result.setdefault("warnings", []).extend(warnings)
    for run in runs[:-1]:
        if run.get("rc") not in (0, None) or not run.get("finished", True):
            result["valid"] = False
            result["reasons"].append(f"{run['tool']} (preparation) failed: rc {run.get('rc')} "
                                     f"{(run.get('stderr') or '').strip()[:200]}")
        result["raw"][f"{run['tool']}-prep.txt"] = (run.get("stdout") or "") + (run.get("stderr") or "")
    if result["valid"]:
        missing = [k for k, v in result["metrics"].items() if v is None and k not in OPTIONAL]
        if missing:
            result["valid"] = False
            result["reasons"].append(f"{tool} gave no {', '.join(missing)} for workload {workload}")
    # every run of the point loaded the guest: its preparations and its fidelity pairs' runs (by hand and through
    # the harness, extra.fidelity_load_s) are load too, not orchestration (the sweep's overhead)
    result["load_s"] = round(float(result.get("load_s") or 0) + sum(float(r.get("duration_s") or 0) for r in runs[:-1])
                             + float((extra or {}).get("fidelity_load_s") or 0), 3)
    shown = [f"{k} {v:.4g}" for k, v in list(result["metrics"].items())[:2] if isinstance(v, (int, float))]
    result["summary"] = ", ".join(shown) or None
    return result


def _index_items(workloads, settings):
    """The overall index's items that this run measures, with their ``where`` conditions."""
    items = []
    for label, workload, metric, condition, tool in INDEX_ITEMS:
        if workload not in workloads or any(i["label"] == label for i in items):
            continue
        where = {"workload": workload}
        if condition:
            if condition["pattern"] not in (settings.get("disk_patterns") or []):
                continue
            where.update(condition)
        elif workload == "cpu" and settings.get("cpu_threads"):
            where["threads"] = settings["cpu_threads"][0]
        elif workload == "memory" and settings.get("memory_operations"):
            where["operation"] = settings["memory_operations"][0]
        items.append({"metric": metric, "label": label, "where": where, "tool": tool})
    return items


def cc_report(variants, workloads, settings, baseline="native", lab=False):
    """The report specification: one section per workload, study A's overall index, study B's figures.

    ``variants``: ``cc_variants``'s list; ``workloads``: the names measured;
    ``settings``: the workload settings (as for ``cc_workloads``).
    """
    fname = "cc_report"
    if not isinstance(variants, (list, tuple)) or not variants:
        _fail(fname, f"variants must be cc_variants's list, got {variants!r}")
    if not isinstance(workloads, (list, tuple)) or not workloads or any(w not in WORKLOADS for w in workloads):
        _fail(fname, f"workloads must name known workloads ({', '.join(WORKLOADS)}), got {workloads!r}")
    names = [v["variant"] for v in variants]
    emulated = [v["variant"] for v in variants if v.get("emulated")]
    sections, hib, tools = [], {}, {}
    for name in workloads:
        spec = WORKLOADS[name]
        tool = workload_tool(name, settings, fname)
        metrics = list(spec["tools"][tool]) if name != "disk" else ["iops", "bandwidth_mib_s", "clat_p99_us"]
        metrics += {"ftp": ["total_s", "first_byte_ms"], "compress": ["compress_mb_s"],
                    "net_bw": ["client_cpu_pct", "server_cpu_pct"] if tool == "nuttcp" else []}.get(name, [])
        # the metrics the tool itself gives (not the host's CPU), for "Measured with <tool> <version>"
        tools.update({metric: tool for metric in metrics if metric not in tools})
        metrics += list(HOST_CPU)
        section = {"title": section_title(name, tool), "where": {"workload": name}, "metrics": metrics}
        if spec["x"]:
            section["x"] = spec["x"]
        sections.append(section)
        for metric in metrics:
            hib[metric] = not metric.endswith(("_ms", "_us", "total_s", "transfer_s", "time_taken_s", "errors",
                                               "failed_requests", "retransmits", "_cpu_pct", "_bytes")) \
                and metric not in HOST_CPU
    items = _index_items(workloads, settings)
    notes = []
    if emulated:
        notes.append("Variant(s) {} ran under emulation (qemu TCG: this machine's /dev/kvm cannot run guests); "
                     "their rows show that the harness works there and are never a performance comparison."
                     .format(", ".join(emulated)))
    if "podman" in names:
        notes.append("Podman takes the row of study B's rkt (rkt was archived in 2020).")
    if items:
        notes.append("Overall index items and study A's tools: " + "; ".join(
            f"{i['label']} = {i['tool']} ({', '.join(f'{k} {v}' for k, v in i['where'].items())})" for i in items)
            + ". The reference columns are study A's Table 3.1 ratios (their hardware). "
            + STUDY_A_CONTRADICTION.replace("(!) ", ""))
    notes.append("Tools the studies used that Debian does not package: pxz (xz -T here), RAMspeed (sysbench "
                 "memory and hpcc's STREAM), Linpack (hpcc's HPL). " + _tool_note(workloads, settings))
    if lab:
        notes.append("Lab run: every guest shares one small machine with the load generators, so the numbers "
                     "check that the harness works; they are not performance results.")
    spec = {
        "title": "Container runtimes and KVM vs native",
        "baseline_variant": baseline,
        "metrics": sections[0]["metrics"][:1],
        "higher_is_better": hib,
        "sections": sections,
        "notes": notes,
    }
    # An emulated variant is never compared as performance: it stays out of the
    # overall index and out of the comparison with the studies' figures.
    real = [n for n in names if n not in emulated]
    if items:
        spec["overall_index"] = {
            "baseline_variant": baseline,
            "metrics": [{k: i[k] for k in ("metric", "label", "where")} for i in items],
            "higher_is_better": {i["metric"]: True for i in items},
            "title": "Overall index: each metric's mean as a ratio to native, averaged (study A, Table 3.1)",
            "reference": {v: r for v, r in STUDY_A_RATIOS.items() if v in real},
        }
        if emulated:
            spec["overall_index"]["where"] = {"variant": real}
    reference = {v: dict(STUDY_B[v]) for v in real if v in STUDY_B}
    if reference:
        spec["reference"] = {"label": "study B (their 4-core i5; Podman = rkt's row)", "values": reference}
        if emulated:
            spec["reference"]["where"] = {"variant": real}
    findings = _findings(workloads, real, baseline, items)
    if findings:
        spec["findings"] = {"title": "The studies' findings beside this run's (their hardware)",
                            "label": "the study", "items": findings}
        if any("(!)" in i["study"] for i in findings):
            spec["findings"]["notes"] = [STUDY_A_CONTRADICTION]
        # the tool behind each finding's metric (its version from the points' extra.tool)
        spec["tools"] = tools
    if emulated:
        notes[0] += " They are left out of the overall index and of the comparison with the studies' figures."
    return spec


def _findings(workloads, real, baseline, index_items=()):
    """The studies' findings given in words or ranges (docs/experiments.md), each beside the same
    quantity from this run: only for workloads measured and variants measured at real speed."""
    items = []
    only_real = {"variant": real}
    # study A's per-test figures: each variant of its (docker, lxc, lxd) against the baseline
    index_where = {i["where"]["workload"]: i["where"] for i in index_items}
    for workload, metric, condition, finding, figures in STUDY_A_TESTS:
        if workload not in workloads or baseline not in real:
            continue
        where = dict(index_where.get(workload, {"workload": workload})) if condition == "index" else \
            dict({"workload": workload}, **(condition or {}))
        for variant in ("docker", "lxc", "lxd"):
            if variant in real:
                items.append({"finding": f"{finding}, {variant} against {baseline}", "study": figures[variant],
                              "value": "change", "metric": metric, "variant": variant, "baseline": baseline,
                              "where": where})
    # study A's "~99 %" is the machine's load during its system tests (IOzone, RAMspeed, the CPU test),
    # not during the web test: the same workloads here (IOzone or fio, sysbench memory, sysbench cpu)
    system = [w for w in ("disk_rw", "disk", "memory", "cpu") if w in workloads]
    if system:
        items.append({"finding": "A: host CPU busy during the system tests ({}), highest".format(", ".join(system)),
                      "study": "A: ~99 %", "value": "max", "metric": "host_busy_pct",
                      "where": dict(only_real, workload=system)})
    if "net_bw" in workloads:
        items.append({"finding": "B: network bandwidth (nuttcp), every platform", "study": "B: the same maximum "
                      "everywhere", "value": "range", "metric": "throughput_gbps", "by": "direction",
                      "where": dict(only_real, workload="net_bw")})
    if "net_lat" in workloads:
        for variant, study in (("docker", "B: roughly doubled (NAT)"), ("podman", "B: roughly doubled (rkt, NAT)"),
                               ("kvm", "B: +80 %")):
            if variant in real and baseline in real:
                items.append({"finding": f"B: TCP request/response latency, {variant} against {baseline}",
                              "study": study, "value": "change", "metric": "rtt_avg_us", "variant": variant,
                              "baseline": baseline, "where": {"workload": "net_lat", "protocol": "tcp"}})
    if "hpcc" in workloads:
        stream = ["stream_copy_gb_s", "stream_scale_gb_s", "stream_add_gb_s", "stream_triad_gb_s"]
        items.append({"finding": "B: STREAM Copy/Scale/Add/Triad (hpcc), every platform",
                      "study": "B: ~11.2-11.8 GB/s everywhere", "value": "range", "metric": stream,
                      "where": dict(only_real, workload="hpcc")})
    if "disk" in workloads and "kvm" in real and baseline in real:
        items.append({"finding": f"B: 4 KiB random read IOPS (fio), kvm against {baseline}", "study": "B: KVM loses",
                      "value": "change", "metric": "iops", "variant": "kvm", "baseline": baseline,
                      "where": {"workload": "disk", "pattern": "randread"}})
    return items


def section_title(name, tool, versions=None):
    """A workload section's title: the workload, the tool (with its version(s) once measured), where it runs."""
    where = "in the guest" if WORKLOADS[name]["runs_in"] == "guest" else "client on the host"
    versions = [v for v in (versions or []) if v]
    return f"{name} ({tool}{' ' + ', '.join(versions) if versions else ''}, {where})"


def _tool_note(workloads, settings):
    """Which of the studies' own packaged tools this run measures with, and the substitutes it uses instead."""
    chosen = {name: workload_tool(name, settings, "cc_report") for name in workloads}
    own = {"net_bw": ("nuttcp", "study B's bandwidth tool"), "net_lat": ("netperf", "study B's latency tool")}
    parts = []
    for name, (tool, what) in own.items():
        if name in chosen:
            parts.append(f"{name}: {chosen[name]}" + ("" if chosen[name] == tool else
                                                      f" (a substitute: {tool}, {what}, is the other choice, "
                                                      f"container_compare_{name}_tool)"))
    if "net_lat" in chosen and chosen["net_lat"] == "sockperf":
        parts.append("sockperf's reply has the request's size, not study B's 200-byte response")
    parts.append("study A's disk rows: " + ("IOzone (workload disk_rw)" if "disk_rw" in workloads else
                                            "fio's sequential read and write (IOzone, iozone3 in non-free, is workload "
                                            "disk_rw, not measured in this run)"))
    return "Tools of this run: " + "; ".join(parts) + "."


def cc_tool_sections(sections, documents):
    """The report's sections titled with the tool and version(s) that measured their rows.

    ``sections``: the report spec's sections (``cc_report``); ``documents``: the run's
    point documents, whose ``extra.tool`` names each point's tool and version.
    """
    if not isinstance(sections, (list, tuple)):
        _fail("cc_tool_sections", f"sections must be the report spec's sections, got {sections!r}")
    seen = {}
    for doc in documents or []:
        extra = (doc or {}).get("extra") or {}
        tool = extra.get("tool") or {}
        if extra.get("workload") in WORKLOADS and tool.get("name"):
            versions = seen.setdefault((extra["workload"], tool["name"]), [])
            if tool.get("version") and tool["version"] not in versions:
                versions.append(tool["version"])
    out = []
    for section in sections:
        name = ((section or {}).get("where") or {}).get("workload")
        used = [(tool, versions) for (workload, tool), versions in seen.items() if workload == name]
        if name in WORKLOADS and len(used) == 1:
            section = dict(section, title=section_title(name, used[0][0], sorted(used[0][1])))
        out.append(section)
    return out


class FilterModule:
    def filters(self):
        return {"cc_variants": cc_variants, "cc_workloads": cc_workloads, "cc_point": cc_point,
                "cc_report": cc_report, "cc_tool_sections": cc_tool_sections, "cc_disk_patterns": cc_disk_patterns,
                "cc_hpcc": cc_hpcc, "cc_hpcc_timeout_s": cc_hpcc_timeout_s, "cc_hpcc_note": cc_hpcc_note,
                "cc_memtotal_kib": cc_memtotal_kib}
