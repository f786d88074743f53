#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: netperf_parse
short_description: Parse netperf 2.x request/response (TCP_RR, UDP_RR) and stream (TCP_STREAM) reports
description:
  - Parses the client output of netperf 2.x (2.7.0 is Debian's, non-free; versions in docs/parsers.md) in three
    layouts - the classic report (banner, headings, data row, remote socket sizes; with C(-c)/C(-C) CPU use and
    service demand), the same without banner and headings (C(-P 0)), and the omni key=value output
    (C(-- -k THROUGHPUT,THROUGHPUT_UNITS,MEAN_LATENCY,...)) - into one set of metric names.
  - "For a request/response test (study B: C(netperf -t TCP_RR -- -r 100,200)): RV(metrics.transactions_per_s),
    RV(metrics.rtt_mean_us) (1 / rate with one transaction in flight, or the omni C(MEAN_LATENCY)), the latency
    distribution when the omni output has it (null with a warning otherwise), CPU use when measured (null with a
    warning otherwise)."
  - For a stream test, RV(metrics.throughput_bps) in bit/s from the unit the heading prints (C(10^6bits/sec) by
    default, any C(-f) unit).
  - "No netserver (C(establish control: are you sure there is a netserver listening)) and the usage text make the
    module fail: nothing was measured. A rate of 0 is C(valid=false)."
version_added: "1.3.0"
author:
  - Infrastructure testbed contributors
options:
  test:
    description:
      - The netperf test (C(TCP_RR), C(UDP_RR), C(TCP_STREAM)...) the caller ran. Needed only for C(-P 0) output,
        which has no banner (otherwise inferred from the data row's width); when given, a report of another test
        makes the module fail.
    type: str
extends_documentation_fragment:
  - testbed_parse
"""

EXAMPLES = r"""
- name: Study B's latency exchange, 100-byte request and 200-byte response, CPU use on both sides
  ansible.builtin.command:
    argv: [netperf, -H, 10.99.0.2, -t, TCP_RR, -l, "30", -c, -C, --, -r, "100,200"]
  environment:
    LC_ALL: C
  register: __bench_netperf
  changed_when: false

- name: Parse it
  netperf_parse:
    content: "{{ __bench_netperf.stdout }}"
    test: TCP_RR
  register: __bench_netperf_parsed
"""

RETURN = r"""
tool:
  description: Always C(netperf).
  returned: success
  type: str
  sample: netperf
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
  description: CPU not measured, latency distribution not in this layout.
  returned: success
  type: list
  elements: str
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
ansible_facts:
  description: The same result under C(ansible_facts.netperf).
  returned: success
  type: dict
  contains:
    netperf:
      description: The parse result (keys as above).
      type: dict
details:
  description: Extras.
  returned: success
  type: dict
  contains:
    test:
      description: The test (C(TCP_RR), C(UDP_RR), C(TCP_STREAM)...), from the banner, O(test) or the row's width.
      type: str
    layout:
      description: C(classic), C(no headings (-P 0)) or C(omni key=value (-k)).
      type: str
metrics:
  description: Flat mapping; unit in each name. Null where netperf gave no value.
  returned: success
  type: dict
  contains:
    transactions_per_s:
      description: Request/response transactions per second.
      type: float
    rtt_mean_us:
      description: Mean round trip in microseconds (1 / rate, or the omni C(MEAN_LATENCY)).
      type: float
    rtt_p99_us:
      description: 99th percentile round trip (omni output only; null otherwise).
      type: float
    request_bytes:
      description: Request size.
      type: int
    response_bytes:
      description: Response size.
      type: int
    local_cpu_pct:
      description: Local CPU use (C(-c)); null when not measured.
      type: float
    remote_cpu_pct:
      description: Remote CPU use (C(-C)); null when not measured.
      type: float
    throughput_bps:
      description: Stream throughput in bit/s (stream tests).
      type: float
    elapsed_s:
      description: Test length.
      type: float
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_netperf import parse  # noqa: E402

OPTIONS = dict(test=dict(type="str"))


def main():
    run_parse_module("netperf", parse, extra_spec=OPTIONS, option_names=tuple(OPTIONS))


if __name__ == "__main__":
    main()
