#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: fio_parse
short_description: Parse fio JSON (json or json+) output into metrics and a validity verdict
description:
  - Parses the document C(fio --output-format=json) or C(json+) prints (fio 2.0.10, the first with JSON output, to 3.x; captured with 3.33, a
    published fio-2.1.11 output among the fixtures; every version and variant is listed in docs/parsers.md).
  - "Lines before the document (C(fio: pid=..., err=...)) are skipped with a warning and kept in
    RV(details.diagnostics); the document starts at the first line that is exactly C({)."
  - Several concatenated documents (C(--status-interval)) - the last complete one is used, with a warning.
  - Jobs are combined per direction (C(read), C(write), C(trim), and C(mixed) with unified_rw_reporting) -
    iops, bandwidth, bytes and I/O counts are summed; runtime is the maximum; latency means are weighted by each
    job's sample count (C(N), else C(total_ios)); the standard deviation is pooled exactly; min/max are the
    extremes.
  - Percentiles are exact for one job (or C(group_reporting)) and when every job has json+ C(bins) (the
    histograms are merged and read as fio does); otherwise they are the N-weighted mean of the per-job
    percentiles and a warning says they are approximate.
  - A direction no job exercised (C(io_bytes) and C(runtime) 0) has null metrics, not zeros.
  - A job with C(error) other than 0 makes the run invalid (C(fio job <name> error <errno> (<strerror>))); when no
    job did any I/O at all the module fails with those errors.
  - fio 2.x keys (C(clat) in microseconds; C(io_bytes) in KiB without C(io_kbytes), up to 2.20) are recognised by
    key presence.
  - fio 2.0/2.1 print neither C(N) nor C(total_ios) - one job's latencies are exact; several jobs are pooled with
    each job's I/O count estimated as iops x runtime, with a warning naming the version; C(<dir>_total_ios) is
    null with a warning. Before fio 3.20 (no C(N)) an all-zero latency block (slat of sync engines) is null with a
    warning, not 0. fio 2.x json+ C(bins) (bucket indexes) are not merged.
version_added: "1.0.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
seealso:
  - name: fio output documentation
    description: Meaning of the JSON fields.
    link: https://fio.readthedocs.io/en/latest/fio_doc.html#json-output
notes:
  - Several reporting groups (C(stonewall)) ran one after another; summing their iops in one direction gives a
    warning.
"""

EXAMPLES = r"""
- name: Run fio
  ansible.builtin.command:
    cmd: >-
      fio --name=randread --rw=randread --bs=4k --iodepth=32 --ioengine=libaio --direct=1
      --filename=/srv/bench/fio.dat --size=4G --runtime=60 --time_based --output-format=json+
  environment:
    LC_ALL: C
  register: __bench_fio
  changed_when: false
  failed_when: false

- name: Parse it
  fio_parse:
    content: "{{ __bench_fio.stdout }}"
    dest: /var/tmp/bench/fio-randread.json

- name: Require a valid run
  ansible.builtin.assert:
    that: ansible_facts.fio.valid
    fail_msg: "{{ ansible_facts.fio.reasons | join('; ') }}"
"""

RETURN = r"""
tool:
  description: Always C(fio).
  returned: success
  type: str
  sample: fio
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
  sample: /var/tmp/bench/fio-randread.raw.json
valid:
  description: Verdict on the measurement; false when a job reported an error or the output is truncated
    after an interim C(--status-interval) document.
  returned: success
  type: bool
  sample: true
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
  sample: ["fio job randtrim error 25 (Inappropriate ioctl for device)"]
warnings:
  description: >-
    Odd but not disqualifying findings (skipped lines, approximate percentiles, several documents); shown
    as Ansible warnings, the list itself is in C(ansible_facts.fio.warnings).
  returned: success
  type: list
  elements: str
  sample: []
details:
  description: Extras that are not metrics.
  returned: success
  type: dict
  contains:
    jobs:
      description: Per job - C(index), C(name), C(groupid), C(error), C(job_runtime_ms), C(usr_cpu_pct),
        C(sys_cpu_pct), C(options) (rw, bs, iodepth, ioengine, numjobs) and per exercised direction
        C({iops, bw_kib_s, io_bytes, runtime_ms, total_ios, clat_mean_us, clat_p99_us}).
      type: list
      elements: dict
    diagnostics:
      description: Non-JSON lines around the document.
      type: list
      elements: str
    global_options:
      description: The C(global options) of a job file.
      type: dict
    timestamp:
      description: fio's C(timestamp) (epoch seconds).
      type: int
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description:
    - Flat mapping. C(fio_version), C(jobs), C(groups), C(usr_cpu_pct) and C(sys_cpu_pct) (means over jobs),
      then for each direction C(read), C(write), C(trim) (and C(mixed) when present) the keys below prefixed
      with C(<direction>_), all null for a direction no job exercised.
    - C(iops) (I/O per second, sum), C(bw_kib_s) (KiB/s, sum), C(bw_bytes_s) (B/s, sum), C(io_bytes) (sum),
      C(runtime_ms) (max), C(total_ios) (sum), C(clat_mean_us), C(clat_stddev_us) (pooled), C(clat_min_us),
      C(clat_max_us), C(clat_p50_us), C(clat_p90_us), C(clat_p95_us), C(clat_p99_us), C(clat_p999_us),
      C(lat_mean_us), C(slat_mean_us).
  returned: success
  type: dict
  sample:
    fio_version: fio-3.33
    jobs: 1
    groups: 1
    read_iops: 69754.748417
    read_bw_kib_s: 279018
    read_clat_p99_us: 3948.544
    write_iops: null
    usr_cpu_pct: 7.533333
ansible_facts:
  description: The same result under C(ansible_facts.fio).
  returned: success
  type: dict
  contains:
    fio:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_fio import parse  # noqa: E402


def main():
    run_parse_module("fio", parse)


if __name__ == "__main__":
    main()
