#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ceph_status_parse
short_description: Parse ceph status / ceph pg stat JSON into PG states, recovery progress and a whole verdict
description:
  - Parses C(ceph status -f json) (keys C(health), C(osdmap), C(pgmap)) or C(ceph pg stat -f json)
    (C(pg_ready), C(pg_summary)) of Ceph 16.2 Pacific (captured with 16.2.15; shapes in docs/parsers.md).
    O(kind) is detected from the document or given.
  - "Older layouts give the same fields: Luminous 12.2 (the storage study's; C(health.status) with named
    C(checks), the deprecated C(overall_status) ignored) and Jewel 10.2 (C(health.overall_status) with unnamed
    C(summary) entries, no C(pgmap.num_objects): null, warned); the nested C(osdmap.osdmap); C(pg stat) without
    C(pg_ready), with C(raw_bytes_used)/C(raw_bytes), with or without the C(pg_summary) object."
  - The degraded, misplaced, unfound, recovery-rate and client-io keys are printed by Ceph only while they are
    non-zero; absent they are 0 here.
  - RV(details.whole) is true when every PG is C(active+clean) (scrubbing flags allowed) and no object copy is
    degraded, misplaced or unfound.
  - RV(metrics.progress_fraction) (0..1) is C(1 - degraded_ratio - misplaced_ratio - unfound_ratio) (the share of
    object copies where they belong), or the share of PGs active+clean when no copy is missing but PGs are still
    peering; 1.0 when whole. A rebuild curve is these values over time; with size 2 and one disk lost it starts
    near 0.5, not 0 (C(rebuild_fraction) in C(module_utils/testbed_parse_ceph.py) rescales it from the
    first sample to 0..1 of the rebuild itself).
  - RV(valid) is false when the snapshot says nothing about the data (no PG, every PG C(unknown), C(pg_ready)
    false); then C(progress_fraction) is null.
  - Not JSON, a truncated document, several documents, another command's JSON, a ratio outside 0..1, or PG
    counts that do not add up to C(num_pgs) make the module fail.
version_added: "1.3.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
options:
  kind:
    description: Which command printed the JSON; C(auto) detects it (C(pgmap) or C(pg_summary)).
    type: str
    choices: [auto, status, pg_stat]
    default: auto
seealso:
  - module: zpool_status_parse
  - module: tool_parse
"""

EXAMPLES = r"""
- name: Read the cluster state
  ansible.builtin.command:
    cmd: ceph status -f json
  environment:
    LC_ALL: C
  register: __storage_ceph_status
  changed_when: false

- name: Parse it
  ceph_status_parse:
    content: "{{ __storage_ceph_status.stdout }}"
    keep_raw: false
  register: __storage_ceph_parsed

- name: Wait for the data to be whole again
  ansible.builtin.debug:
    msg: "{{ __storage_ceph_parsed.metrics.progress_fraction }} ({{ __storage_ceph_parsed.details.not_whole_reasons }})"
"""

RETURN = r"""
tool:
  description: Always C(ceph).
  returned: success
  type: str
  sample: ceph
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: False when the snapshot says nothing about the data (no PG, all PGs unknown, pg_ready false).
  returned: success
  type: bool
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
metrics:
  description: Flat numbers; unit in each name; object and PG counts are counts.
  returned: success
  type: dict
  contains:
    progress_fraction:
      description: Rebuild progress 0..1 (see the description); null when not valid.
      type: float
      sample: 0.575
    pgs:
      description: Number of PGs.
      type: int
      sample: 33
    pgs_active_clean:
      description: PGs active+clean (scrubbing/snaptrim flags allowed).
      type: int
    pgs_active_clean_fraction:
      description: pgs_active_clean / pgs; null without PGs.
      type: float
    pgs_degraded:
      description: PGs with the degraded flag.
      type: int
    pgs_undersized:
      description: PGs with the undersized flag.
      type: int
    pgs_recovering:
      description: PGs recovering or recovery_wait.
      type: int
    pgs_backfilling:
      description: PGs backfilling or backfill_wait.
      type: int
    pgs_inactive:
      description: PGs without the active flag.
      type: int
    pgs_peering:
      description: PGs peering.
      type: int
    pgs_remapped:
      description: osdmap num_remapped_pgs; null for pg stat.
      type: int
    degraded_objects:
      description: Object copies degraded (0 when Ceph omitted the key).
      type: int
    degraded_total:
      description: Object copies in all (the ratio's denominator; 0 when omitted).
      type: int
    degraded_ratio:
      description: degraded_objects / degraded_total.
      type: float
    misplaced_objects:
      description: Object copies misplaced.
      type: int
    misplaced_total:
      description: Denominator of misplaced_ratio.
      type: int
    misplaced_ratio:
      description: misplaced_objects / misplaced_total.
      type: float
    unfound_objects:
      description: Objects unfound.
      type: int
    unfound_total:
      description: Denominator of unfound_ratio.
      type: int
    unfound_ratio:
      description: unfound_objects / unfound_total.
      type: float
    recovering_objects_per_s:
      description: Recovery rate, objects per second.
      type: float
    recovering_bytes_per_s:
      description: Recovery rate, bytes per second.
      type: float
    recovering_keys_per_s:
      description: Recovery rate, omap keys per second.
      type: float
    objects_recovered:
      description: Objects recovered in the mgr's last interval.
      type: int
    bytes_recovered_bytes:
      description: Bytes recovered in the mgr's last interval.
      type: int
    client_read_bytes_per_s:
      description: Client read rate.
      type: float
    client_write_bytes_per_s:
      description: Client write rate.
      type: float
    client_read_ops_per_s:
      description: Client read operations per second (status only).
      type: float
    client_write_ops_per_s:
      description: Client write operations per second (status only).
      type: float
    objects:
      description: Objects stored (status only; null for pg stat).
      type: int
    data_bytes:
      description: Bytes of data stored (before replication).
      type: int
    used_bytes:
      description: Raw bytes used on the OSDs.
      type: int
    total_bytes:
      description: Raw capacity.
      type: int
    osds:
      description: OSDs in the map (status only).
      type: int
    osds_up:
      description: OSDs up (status only).
      type: int
    osds_in:
      description: OSDs in (status only).
      type: int
details:
  description: Health, PG states and the whole verdict.
  returned: success
  type: dict
  contains:
    kind:
      description: C(status) or C(pg_stat).
      type: str
    health:
      description: HEALTH_OK, HEALTH_WARN or HEALTH_ERR (null for pg stat).
      type: str
    health_checks:
      description: Check name to C(severity) and C(message).
      type: dict
    fsid:
      description: The cluster fsid (status only).
      type: str
    pgs_by_state:
      description: PG state name (C(active+clean)...) to count.
      type: dict
    pg_state_flags:
      description: Each state flag (C(active), C(degraded)...) to the number of PGs carrying it.
      type: dict
    pg_ready:
      description: pg stat's C(pg_ready) (null for status).
      type: bool
    whole:
      description: All PGs active+clean and no copy degraded, misplaced or unfound.
      type: bool
    not_whole_reasons:
      description: Why C(whole) is false.
      type: list
      elements: str
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
ansible_facts:
  description: The same result under C(ansible_facts.ceph).
  returned: success
  type: dict
  contains:
    ceph:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_ceph import KINDS, parse  # noqa: E402

OPTIONS = dict(kind=dict(type="str", choices=list(KINDS), default="auto"))


def main():
    run_parse_module("ceph", parse, extra_spec=OPTIONS, option_names=tuple(OPTIONS))


if __name__ == "__main__":
    main()
