#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nuttcp_parse
short_description: Parse nuttcp 6.x client output (TCP/UDP bandwidth, transmit or receive)
description:
  - Parses the client output of nuttcp 6.x (6.1.2 is Debian's; versions in docs/parsers.md), the brief summary line
    (C(3755.6843 MB / 2.00 sec = 15727.4356 Mbps 33 %TX 29 %RX 0 retrans 0.08 msRTT); UDP with
    C(355 / 1521 drop/pkt 23.34 %loss)) or the C(-fparse) key=value line, with the C(-i) interval lines before it.
  - nuttcp's MB is 2^20 bytes and its Mbps 10^6 bit/s. C(%TX)/C(%RX) are the CPU use of the transmitting and the
    receiving nuttcp process. The output does not say which way the data went; O(direction) records it.
  - "A connection error (C(nuttcp-t: v6.1.2: Error: connect: Connection refused)) and the usage text make the
    module fail: nothing was measured. No data moved is C(valid=false); UDP loss is a warning (the rate is what
    arrived)."
version_added: "1.3.0"
author:
  - Infrastructure testbed contributors
options:
  direction:
    description: Which way the client sent the data (C(transmit) for C(-t), C(receive) for C(-r)); recorded in details.
    type: str
    choices: [transmit, receive]
extends_documentation_fragment:
  - testbed_parse
"""

EXAMPLES = r"""
- name: Study B's bandwidth, receive direction (the server transmits to this client)
  ansible.builtin.command:
    argv: [nuttcp, -r, -T, "30", -fparse, 10.99.0.2]
  environment:
    LC_ALL: C
  register: __bench_nuttcp
  changed_when: false

- name: Parse it
  nuttcp_parse:
    content: "{{ __bench_nuttcp.stdout }}"
    direction: receive
  register: __bench_nuttcp_parsed
"""

RETURN = r"""
tool:
  description: Always C(nuttcp).
  returned: success
  type: str
  sample: nuttcp
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: Verdict on the measurement.
  returned: success
  type: bool
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
warnings:
  description: UDP loss; CPU or RTT not printed by this output.
  returned: success
  type: list
  elements: str
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
ansible_facts:
  description: The same result under C(ansible_facts.nuttcp).
  returned: success
  type: dict
  contains:
    nuttcp:
      description: The parse result (keys as above).
      type: dict
details:
  description: Extras.
  returned: success
  type: dict
  contains:
    direction:
      description: O(direction).
      type: str
    layout:
      description: C(brief) or C(-fparse).
      type: str
    protocol:
      description: C(tcp) or C(udp) (from the drop/packet counts).
      type: str
    intervals:
      description: The C(-i) reports, each with C(mib), C(s) and C(rate_bps).
      type: list
      elements: dict
metrics:
  description: Flat mapping; unit in each name. Null where nuttcp gave no value.
  returned: success
  type: dict
  contains:
    rate_bps:
      description: Bandwidth in bit/s.
      type: float
    transferred_mib:
      description: Data moved in MiB.
      type: float
    duration_s:
      description: Run length.
      type: float
    tx_cpu_pct:
      description: CPU use of the transmitting nuttcp process.
      type: float
    rx_cpu_pct:
      description: CPU use of the receiving nuttcp process.
      type: float
    retransmits:
      description: TCP retransmissions (TCP only).
      type: int
    rtt_ms:
      description: Round trip time nuttcp measured (TCP; null when not printed).
      type: float
    loss_pct:
      description: UDP data loss (UDP only).
      type: float
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_nuttcp import parse  # noqa: E402

OPTIONS = dict(direction=dict(type="str", choices=["transmit", "receive"]))


def main():
    run_parse_module("nuttcp", parse, extra_spec=OPTIONS, option_names=tuple(OPTIONS))


if __name__ == "__main__":
    main()
