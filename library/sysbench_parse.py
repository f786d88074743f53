#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: sysbench_parse
short_description: Parse a sysbench 1.x report (cpu, memory, fileio, oltp) into metrics
description:
  - Parses the report sysbench 1.0/1.1 prints on stdout, run with C(LC_ALL=C) (versions and variants in
    docs/parsers.md). 1.0 prints C(General statistics) and C(total time); 1.1 prints C(Throughput) with
    C(events/s) and C(time elapsed) - both give the same metrics.
  - "sysbench 1.1 fileio prints its own summary (C(read:  IOPS=...), C(write:), C(fsync:)) and neither the total
    time, the event count nor the thread fairness; those metrics are null with a warning naming the version."
  - A UTF-8 byte-order mark before the version line is ignored.
  - The test is detected from its result block (C(CPU speed), C(Total operations), C(File operations),
    C(SQL statistics) for every OLTP Lua test) and returned as RV(metrics.test).
  - sysbench reports errors as C(FATAL) lines on stdout (exit 1). Any C(FATAL) line, or a report without
    C(General statistics) (1.0) or C(Throughput) (1.1), makes the module fail with sysbench's FATAL text (for example a fileio run without
    C(prepare), or an OLTP run against a missing table).
  - The latency percentile keeps the level sysbench printed, so the default gives RV(metrics.latency_p95_ms)
    and C(--percentile=99) gives C(latency_p99_ms); C(--percentile=0) gives no percentile metric.
  - C(--report-interval) lines are returned in RV(details.intervals).
  - sysbench 0.4/0.5 output (older format) is rejected.
version_added: "1.0.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
"""

EXAMPLES = r"""
- name: Run the OLTP read/write test
  ansible.builtin.command:
    cmd: >-
      sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1
      --mysql-user=sbtest --mysql-password={{ bench_db_password }} --mysql-db=sbtest
      --tables=4 --table-size=100000 --threads=8 --time=60 run
  environment:
    LC_ALL: C
  register: __bench_sysbench
  changed_when: false
  failed_when: false   # a FATAL exits 1; let sysbench_parse name it

- name: Parse the report
  sysbench_parse:
    content: "{{ __bench_sysbench.stdout }}"
    dest: /var/tmp/bench/sysbench-oltp-t8.json

- name: Use the throughput
  ansible.builtin.debug:
    msg: "{{ ansible_facts.sysbench.metrics.transactions_per_s }} tps"
"""

RETURN = r"""
tool:
  description: Always C(sysbench).
  returned: success
  type: str
  sample: sysbench
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: Verdict on the measurement (false when no event completed).
  returned: success
  type: bool
  sample: true
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
warnings:
  description: Ignored SQL errors, reconnects, an unrecognised test.
  returned: success
  type: list
  elements: str
details:
  description: Extras.
  returned: success
  type: dict
  contains:
    version:
      description: sysbench version from the banner.
      type: str
      sample: 1.0.20
    latency_percentile:
      description: The percentile level of the latency line, null when disabled.
      type: float
      sample: 95
    intervals:
      description: One entry per C(--report-interval) line (t_s, threads, tps/qps/eps, lat_ms, err_per_s...).
      type: list
      elements: dict
      returned: with --report-interval
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description: Flat mapping; unit in each name (C(_mib_s) MiB/s, C(_mib) MiB). Null where sysbench gave no value.
  returned: success
  type: dict
  contains:
    test:
      description: C(cpu), C(memory), C(fileio), C(oltp) or C(unknown).
      type: str
      sample: oltp
    threads:
      description: Number of threads; null when the options block is missing.
      type: int
    total_time_s:
      description: Total time.
      type: float
    total_events:
      description: Total number of events (transactions for OLTP).
      type: int
    latency_min_ms:
      description: Minimum event latency.
      type: float
    latency_avg_ms:
      description: Mean event latency.
      type: float
    latency_max_ms:
      description: Maximum event latency.
      type: float
    latency_p95_ms:
      description: 95th percentile latency (the name follows C(--percentile)).
      type: float
    latency_sum_ms:
      description: Sum of the event latencies.
      type: float
    fairness_events_avg:
      description: Events per thread, mean.
      type: float
    fairness_events_stddev:
      description: Events per thread, standard deviation.
      type: float
    fairness_exec_time_avg_s:
      description: Execution time per thread, mean.
      type: float
    fairness_exec_time_stddev_s:
      description: Execution time per thread, standard deviation.
      type: float
    events_per_s:
      description: cpu test only.
      type: float
    total_operations:
      description: memory test only.
      type: int
    operations_per_s:
      description: memory test only.
      type: float
    transferred_mib:
      description: memory test only.
      type: float
    transfer_mib_s:
      description: memory test only.
      type: float
    reads_per_s:
      description: fileio test only.
      type: float
    writes_per_s:
      description: fileio test only.
      type: float
    fsyncs_per_s:
      description: fileio test only.
      type: float
    read_mib_s:
      description: fileio test only.
      type: float
    written_mib_s:
      description: fileio test only.
      type: float
    queries_read:
      description: oltp only; read queries performed.
      type: int
    queries_write:
      description: oltp only; write queries performed.
      type: int
    queries_other:
      description: oltp only; other queries (BEGIN/COMMIT...).
      type: int
    queries_total:
      description: oltp only; all queries performed.
      type: int
    transactions:
      description: oltp only.
      type: int
    transactions_per_s:
      description: oltp only.
      type: float
      sample: 347.69
    queries:
      description: oltp only.
      type: int
    queries_per_s:
      description: oltp only.
      type: float
    ignored_errors:
      description: oltp only; SQL errors the script ignored.
      type: int
    ignored_errors_per_s:
      description: oltp only.
      type: float
    reconnects:
      description: oltp only.
      type: int
    reconnects_per_s:
      description: oltp only.
      type: float
ansible_facts:
  description: The same result under C(ansible_facts.sysbench).
  returned: success
  type: dict
  contains:
    sysbench:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_sysbench import parse  # noqa: E402


def main():
    run_parse_module("sysbench", parse)


if __name__ == "__main__":
    main()
