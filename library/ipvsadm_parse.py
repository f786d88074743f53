#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ipvsadm_parse
short_description: Parse the ipvsadm -Ln table (plain, --stats or --rate) into per-service and per-real-server metrics
description:
  - Parses C(ipvsadm -Ln), C(ipvsadm -Ln --stats --exact) and C(ipvsadm -Ln --rate --exact) (layout of ipvsadm
    1.26-1.31, C(print_title)/C(print_service_entry)).
  - The C(IP Virtual Server version) header line is required; the C(Can't initialize ipvs) error of a kernel
    without IPVS makes the module fail with a message saying so.
  - Without C(--exact), ipvsadm truncates values of 10^8 and more to C(NNNK)/C(M)/C(G)/C(T) (powers of 1000);
    they are expanded (a lower bound) and a warning says they are approximate.
  - An empty table (no services) is a valid result with 0 services.
version_added: "1.0.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
options:
  mode:
    description:
      - Which table layout is expected - C(stats) (C(--stats)), C(rate) (C(--rate)), C(list) (plain C(-Ln)), or
        C(auto) to take it from the title line.
      - With anything but C(auto), a different layout makes the module fail.
    type: str
    choices: [auto, stats, rate, list]
    default: auto
notes:
  - Always run ipvsadm with C(-n); names instead of addresses are kept but give a warning.
  - C(--stats) counters are cumulative since the service was created; take the difference of two snapshots
    for a measurement window.
"""

EXAMPLES = r"""
- name: Snapshot the director's counters
  ansible.builtin.command:
    cmd: ipvsadm -Ln --stats --exact
  environment:
    LC_ALL: C
  register: __lvs_ipvsadm_stats
  changed_when: false

- name: Parse them
  ipvsadm_parse:
    content: "{{ __lvs_ipvsadm_stats.stdout }}"
    mode: stats
    dest: /var/tmp/bench/ipvsadm-stats.json

- name: Connections per real server
  ansible.builtin.debug:
    msg: "{{ ansible_facts.ipvsadm.metrics.rs_10_0_0_7_80_conns }}"
"""

RETURN = r"""
tool:
  description: Always C(ipvsadm).
  returned: success
  type: str
  sample: ipvsadm
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
  sample: <content>
valid:
  description: Always true when parsing succeeds.
  returned: success
  type: bool
  sample: true
reasons:
  description: Empty.
  returned: success
  type: list
  elements: str
  sample: []
warnings:
  description: >-
    Approximate (suffixed) values, resolved names, a real server shared by several services; shown as
    Ansible warnings, the list itself is in C(ansible_facts.ipvsadm.warnings).
  returned: success
  type: list
  elements: str
  sample: []
details:
  description: Extras that are not metrics.
  returned: success
  type: dict
  contains:
    ipvs_version:
      description: Kernel IPVS version from the header.
      type: str
      sample: 1.2.1
    table_size:
      description: Connection hash table size from the header.
      type: int
      sample: 4096
    mode:
      description: The layout found (C(stats), C(rate) or C(list)).
      type: str
    services:
      description:
        - Per service - C(protocol) (TCP, UDP, SCTP or FWM), C(address), C(port), C(fwmark), C(ipv6),
          C(scheduler) and C(flags) (list mode only, else null), C(totals) (the service line's counters),
          C(metric_prefix), and C(real_servers).
        - Each real server - C(address), C(port), C(metric_prefix) and the counters of the mode (stats -
          C(conns), C(inpkts), C(outpkts), C(inbytes), C(outbytes); rate - C(cps), C(inpps), C(outpps),
          C(in_bytes_per_s), C(out_bytes_per_s); list - C(forward), C(weight), C(activeconn), C(inactconn)).
      type: list
      elements: dict
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description:
    - Flat mapping. C(services) and C(real_servers) (counts).
    - Per real server C(rs_<ip>_<port>_<counter>) and per service C(svc_<proto>_<ip>_<port>_<counter>) (or
      C(svc_fwm_<mark>_<counter>)), names sanitised to C([a-z0-9_]); a real server behind several services
      gets the service appended (C(rs_<ip>_<port>_<proto>_<vip>_<vport>_<counter>)).
    - Counters - stats mode C(conns), C(inpkts), C(outpkts), C(inbytes), C(outbytes) (cumulative); rate mode
      C(cps), C(inpps), C(outpps), C(in_bytes_per_s), C(out_bytes_per_s); list mode C(weight), C(activeconn),
      C(inactconn), C(forward) per real server and C(scheduler), C(activeconn), C(inactconn) (sums) per service.
  returned: success
  type: dict
  sample:
    services: 1
    real_servers: 2
    svc_tcp_10_0_0_3_80_conns: 1523412
    rs_10_0_0_7_80_conns: 761700
    rs_10_0_0_7_80_inbytes: 3271605493
ansible_facts:
  description: The same result under C(ansible_facts.ipvsadm).
  returned: success
  type: dict
  contains:
    ipvsadm:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_ipvsadm import parse  # noqa: E402

OPTIONS = dict(
    mode=dict(type="str", choices=["auto", "stats", "rate", "list"], default="auto"),
)


def main():
    run_parse_module("ipvsadm", parse, extra_spec=OPTIONS, option_names=tuple(OPTIONS))


if __name__ == "__main__":
    main()
