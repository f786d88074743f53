#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ping_parse
short_description: Parse the summary of ping (iputils, BusyBox) into loss and round-trip metrics
description:
  - Parses the C(packets transmitted) summary and the C(rtt min/avg/max/mdev) line of iputils ping, run with
    C(LC_ALL=C). The BusyBox, GNU inetutils and BSD C(round-trip min/avg/max[/stddev]) form is accepted too;
    what such a ping does not print (mdev, total time) is null with a warning naming it (versions and variants
    in docs/parsers.md).
  - With no rtt line (no reply) iputils prints C(pipe N) on a line of its own (old iputils C(, pipe N)); it is read
    from there too. iputils C(-j) (JSON) output makes the module fail.
  - C(+N duplicates), C(+N corrupted) and C(+N errors) are printed only when non-zero, so their absence is
    reported as 0. C(ipg/ewma) (with C(-A) or flood mode) fills RV(metrics.ipg_ms) and RV(metrics.ewma_ms).
  - 100 % loss is a complete report of a bad measurement, not a parse failure. It returns C(valid=false) with
    null round-trip times (ping exits 1 then). So does a run without an rtt line (C(-s) below 16 bytes).
  - Output without a C(packets transmitted) line (ping's hard errors such as
    C(connect Network is unreachable), or bad options, which exit 2 with an empty stdout) makes the module
    fail, naming ping's message when it is in the text or in O(stderr).
version_added: "1.0.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
options:
  stderr:
    description:
      - ping's stderr, used only to name ping's error when stdout holds no summary.
    type: str
"""

EXAMPLES = r"""
- name: Measure the round-trip time to the director
  ansible.builtin.command:
    cmd: ping -c 20 -i 0.2 10.0.0.1
  environment:
    LC_ALL: C
  register: __bench_ping
  changed_when: false
  failed_when: false   # 100 % loss exits 1; ping_parse reports it as valid=false

- name: Parse the summary
  ping_parse:
    content: "{{ __bench_ping.stdout }}"
    stderr: "{{ __bench_ping.stderr }}"
  register: __bench_ping_result

- name: Require a reachable target
  ansible.builtin.assert:
    that: __bench_ping_result.valid
    fail_msg: "{{ __bench_ping_result.reasons | join('; ') }}"
"""

RETURN = r"""
tool:
  description: Always C(ping).
  returned: success
  type: str
  sample: ping
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: False with 100 % loss or without round-trip times.
  returned: success
  type: bool
  sample: true
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
warnings:
  description: Partial loss, duplicates, corrupted replies, ICMP errors.
  returned: success
  type: list
  elements: str
details:
  description: Target name and address from the C(PING) header, the rtt spread name (mdev or stddev).
  returned: success
  type: dict
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description: Flat mapping; unit in each name. Null where ping gave no value.
  returned: success
  type: dict
  contains:
    transmitted:
      description: Packets transmitted.
      type: int
      sample: 5
    received:
      description: Replies received.
      type: int
      sample: 5
    duplicates:
      description: Duplicate replies (0 when not printed).
      type: int
    corrupted:
      description: Corrupted replies (0 when not printed).
      type: int
    errors:
      description: ICMP error replies (0 when not printed).
      type: int
    packet_loss_pct:
      description: Packet loss in percent.
      type: float
      sample: 0.0
    time_ms:
      description: Total time ping reports; null when not printed (BusyBox, BSD).
      type: float
    rtt_min_ms:
      description: Minimum round-trip time; null without an rtt line.
      type: float
    rtt_avg_ms:
      description: Mean round-trip time; null without an rtt line.
      type: float
      sample: 0.043
    rtt_max_ms:
      description: Maximum round-trip time; null without an rtt line.
      type: float
    rtt_mdev_ms:
      description: Mean deviation (iputils mdev, BSD stddev); null when not printed.
      type: float
    ipg_ms:
      description: Inter-packet gap (C(-A)/flood only); null otherwise.
      type: float
    ewma_ms:
      description: Exponentially weighted moving average rtt (C(-A)/flood only); null otherwise.
      type: float
    pipe:
      description: Maximum number of packets in flight (C(pipe N)); null when not printed.
      type: int
ansible_facts:
  description: The same result under C(ansible_facts.ping).
  returned: success
  type: dict
  contains:
    ping:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_ping import parse  # noqa: E402

OPTIONS = dict(stderr=dict(type="str"))


def main():
    run_parse_module("ping", parse, extra_spec=OPTIONS, option_names=tuple(OPTIONS))


if __name__ == "__main__":
    main()
