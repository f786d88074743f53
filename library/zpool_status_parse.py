#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: zpool_status_parse
short_description: Parse zpool status -p into pool state, vdev tree, scan progress and a whole verdict
description:
  - Parses C(zpool status -p [-P] POOL) of OpenZFS 2.1 (layout of C(cmd/zpool/zpool_main.c) at zfs-2.1.11,
    captured with 2.1.11; docs/parsers.md lists the versions) for one pool, with C(LC_ALL=C).
  - Sections C(pool), C(state), C(status), C(action), C(see), C(scan), C(remove), C(checkpoint), C(config) (the
    vdev tree with READ/WRITE/CKSUM counters, optional SLOW column, classes C(logs), C(cache), C(spares),
    C(dedup), C(special)) and C(errors).
  - "C(-p) makes only the error counters exact: the scan line sizes are always rounded C(zfs_nicebytes)
    (1024-based, three significant digits: C(1.50G)); the C(P% done) figure (issued / total, two decimals) is the
    precise progress. Without C(-p) the counters are rounded too (a warning says so)."
  - Scan forms - none requested; scrub or resilver in progress (scanned/issued/total, rates, resilvered or
    repaired bytes, percent, time to go); paused scrub; finished (C(resilvered X in HH:MM:SS with N errors on
    DATE)); canceled; the sequential rebuild of C(zpool replace -s) (C(resilver (mirror-0) ...)).
  - "Older versions give the same fields: ZFS on Linux 0.6/0.7 (the storage study ran 0.7.8, which has no C(-p):
    run C(zpool status POOL)) and illumos print C(X scanned out of Y at R/s, HhMm to go) and C(W resilvered, P%
    done) (issued bytes and issue rate null, warned); OpenSolaris before build 147 and zfs-fuse print
    C(scrub: resilver in progress for HhMm, P% done, HhMm to go). A decimal comma (non-C locale) fails."
  - RV(details.whole) is true when the pool and every vdev are ONLINE (spares AVAIL/INUSE), no resilver or
    rebuild runs, no interim C(replacing-N)/C(spare-N) vdev is left and there are no known data errors.
  - RV(metrics.progress_fraction) (0..1) is the running resilver's (or rebuild's) percentage / 100, 1.0 when
    whole, 0.0 when not whole with nothing resilvering.
  - "C(cannot open 'x': no such pool), C(no pools available), usage text, and output cut before C(errors:) or in
    the middle of the vdev tree make the module fail. A configuration that C(cannot be determined) parses with
    C(valid=false)."
version_added: "1.3.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
seealso:
  - module: ceph_status_parse
  - module: tool_parse
"""

EXAMPLES = r"""
- name: Read the pool state
  ansible.builtin.command:
    cmd: zpool status -p -P tank
  environment:
    LC_ALL: C
  register: __storage_zpool_status
  changed_when: false

- name: Parse it
  zpool_status_parse:
    content: "{{ __storage_zpool_status.stdout }}"
    keep_raw: false
  register: __storage_zpool_parsed

- name: Show the resilver progress
  ansible.builtin.debug:
    msg: "{{ __storage_zpool_parsed.metrics.progress_fraction }} whole={{ __storage_zpool_parsed.details.whole }}"
"""

RETURN = r"""
tool:
  description: Always C(zpool).
  returned: success
  type: str
  sample: zpool
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: False when zpool could not determine the pool configuration.
  returned: success
  type: bool
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
metrics:
  description: Flat numbers; unit in each name. Scan sizes are rounded by zpool (three significant digits).
  returned: success
  type: dict
  contains:
    progress_fraction:
      description: Rebuild progress 0..1 (see the description).
      type: float
      sample: 0.5
    vdevs:
      description: Rows of the vdev tree, the pool root included.
      type: int
    leaf_vdevs:
      description: Leaf vdevs (disks and files), spares excluded.
      type: int
    leaf_vdevs_online:
      description: Leaf vdevs ONLINE.
      type: int
    read_errors:
      description: READ errors summed over the leaf vdevs.
      type: int
    write_errors:
      description: WRITE errors summed over the leaf vdevs.
      type: int
    checksum_errors:
      description: CKSUM errors summed over the leaf vdevs.
      type: int
    data_errors:
      description: Known data errors (the C(errors:) line); null when zpool gave no count.
      type: int
    scan_percent_done:
      description: The scan's C(P% done); 100.0 when finished; null with no scan.
      type: float
    scan_scanned_bytes:
      description: Bytes scanned (running scan only; rounded).
      type: int
    scan_issued_bytes:
      description: Bytes issued (running scan only; rounded).
      type: int
    scan_total_bytes:
      description: Bytes to examine in all (running scan only; rounded).
      type: int
    scan_processed_bytes:
      description: Bytes resilvered or repaired (rounded).
      type: int
    scan_rate_bytes_per_s:
      description: Scan rate of this pass (running, not paused).
      type: int
    scan_issue_rate_bytes_per_s:
      description: Issue rate of this pass (running, not paused).
      type: int
    scan_to_go_s:
      description: zpool's estimate of the time left; null when it gives none.
      type: int
    scan_duration_s:
      description: Duration of a finished scan.
      type: int
    scan_errors:
      description: Errors of a finished scan.
      type: int
details:
  description: Pool, state, texts, scan and vdev tree.
  returned: success
  type: dict
  contains:
    pool:
      description: Pool name.
      type: str
    state:
      description: Pool state (ONLINE, DEGRADED, FAULTED, SUSPENDED...).
      type: str
    status:
      description: The C(status:) text (null when the pool has nothing to say).
      type: str
    action:
      description: The C(action:) text.
      type: str
    see:
      description: The C(see:) link.
      type: str
    scan:
      description: >-
        The scan that matters for a rebuild (the running resilver/rebuild, else the last resilver/rebuild, else the
        scrub or none) - C(function) (scrub, resilver, rebuild or null), C(state) (none, in_progress, paused, finished,
        canceled), C(vdev) (rebuild), C(started)/C(ended) (zpool's local-time text) and C(started_iso)/C(ended_iso),
        the byte counts, rates, C(percent_done), C(to_go_s), C(duration_s), C(errors), C(text). Null when zpool
        printed no C(scan:) line (OpenZFS 2.1 prints none for a pool never scrubbed or resilvered).
      type: dict
    scans:
      description: Every C(scan:) entry (a scrub and a rebuild can both be shown).
      type: list
      elements: dict
    remove:
      description: The C(remove:) text (device removal), null without one.
      type: str
    checkpoint:
      description: The C(checkpoint:) text, null without one.
      type: str
    vdevs:
      description: >-
        The tree in order - C(name), C(state), C(depth) (0 = pool root or class member level), C(class) (data, logs,
        cache, spares, dedup, special), C(parent), C(leaf), C(read_errors), C(write_errors), C(checksum_errors),
        C(slow_ios), C(note) (text after the counters, e.g. C(was /dev/vdc), C((resilvering))), C(resilvering).
      type: list
      elements: dict
    errors:
      description: The C(errors:) text.
      type: str
    counters_exact:
      description: True when the error counters were exact (C(-p)).
      type: bool
    whole:
      description: Full redundancy, nothing resilvering, no data errors.
      type: bool
    not_whole_reasons:
      description: Why C(whole) is false.
      type: list
      elements: str
    resilvering_vdevs:
      description: Leaf vdevs marked C((resilvering)).
      type: list
      elements: str
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
ansible_facts:
  description: The same result under C(ansible_facts.zpool).
  returned: success
  type: dict
  contains:
    zpool:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_zpool import parse  # noqa: E402


def main():
    run_parse_module("zpool", parse)


if __name__ == "__main__":
    main()
