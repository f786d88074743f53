#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: iperf3_parse
short_description: Parse iperf3 -J (JSON) client output into metrics and a validity verdict
description:
  - Parses the JSON document C(iperf3 -c ... -J) prints on stdout (iperf3 3.0 and later; captured with 3.12,
    published 3.0.11 and 3.6 outputs among the fixtures; versions and variants in docs/parsers.md).
  - TCP throughput comes from C(end.sum_sent) and C(end.sum_received); UDP from the same blocks (iperf3 3.11+),
    else from C(end.sum) with a warning (it mixes sender bytes with receiver loss).
  - RTT and congestion window come from C(end.streams[].sender) of the streams this host sent on; the
    receiving client of C(-R) has none, so they are null there. Before 3.7 (no per-stream C(sender) flag) the
    client sent on every stream unless C(-R) was given; 3.0 reports no RTT/cwnd and SCTP no retransmits, RTT or
    cwnd - null with a warning naming the version or protocol.
  - "Lines before the opening C({) line are skipped with a warning; text after the document that looks like
    C(iperf3: error - ...) makes the run invalid."
  - An C(error) key without an end summary (connection refused, server busy, bad server) makes the module fail
    with iperf3's own message; an C(error) with a complete end summary (interrupted client) gives
    RV(valid=false) with the message in RV(reasons). 0 bytes received also makes the run invalid.
  - Usage text (parameter error), truncated JSON, another tool's output and nan/inf numbers make the module
    fail. A C(null) number (cJSON's rendering of nan) becomes null with a warning, never 0.
  - Counters holding an unsigned -1 sentinel (iperf3 < 3.14, e.g. retransmits 4294967294) become null with a
    warning.
version_added: "1.0.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
seealso:
  - name: iperf3 JSON output (iperf_api.c)
    description: Where the keys are written.
    link: https://github.com/esnet/iperf/blob/master/src/iperf_api.c
notes:
  - Exit status is no evidence of success (iperf3 3.11-3.13 exits 0 on errors with C(-J)); always parse.
"""

EXAMPLES = r"""
- name: Run iperf3 against the server under test
  ansible.builtin.command:
    cmd: iperf3 -c 10.0.0.10 -p 5201 -t 10 -P 4 -J
  environment:
    LC_ALL: C
  register: __bench_iperf3
  changed_when: false
  failed_when: false

- name: Parse the JSON report
  iperf3_parse:
    content: "{{ __bench_iperf3.stdout }}"
    dest: /var/tmp/bench/iperf3-P4.json

- name: Parse a saved report on the target
  iperf3_parse:
    src: /var/tmp/bench/iperf3-P4.raw.json
  register: __bench_iperf3_result

- name: Show the goodput in Gbit/s
  ansible.builtin.debug:
    msg: "{{ (ansible_facts.iperf3.metrics.received_bps / 1e9) | round(2) }} Gbit/s"
"""

RETURN = r"""
tool:
  description: Always C(iperf3).
  returned: success
  type: str
  sample: iperf3
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
  sample: /var/tmp/bench/iperf3-P4.raw.json
valid:
  description: Verdict on the measurement (iperf3 C(error) key, 0 bytes received or sent, 0 s duration).
  returned: success
  type: bool
  sample: true
reasons:
  description: Sentences explaining C(valid=false), quoting iperf3's message.
  returned: success
  type: list
  elements: str
  sample: ["iperf3 reported an error: 'interrupt - the client has terminated'"]
warnings:
  description: >-
    Odd but not disqualifying findings (skipped lines, null numbers, sentinels, pre-3.11 UDP sums); shown
    as Ansible warnings, the list itself is in C(ansible_facts.iperf3.warnings).
  returned: success
  type: list
  elements: str
  sample: []
details:
  description: Extras that are not metrics.
  returned: success
  type: dict
  contains:
    version:
      description: iperf3's version string (C(start.version)).
      type: str
      sample: iperf 3.12
    duration_configured_s:
      description: The requested duration (C(-t)).
      type: float
    error:
      description: iperf3's C(error) text when present.
      type: str
    streams:
      description: Per stream; TCP keys C(socket), C(local_sender), C(sent_bytes), C(sent_bps),
        C(received_bytes), C(received_bps), C(retransmits), C(mean_rtt_us), C(min_rtt_us), C(max_rtt_us),
        C(max_snd_cwnd_bytes); UDP keys C(bytes), C(bps), C(jitter_ms), C(lost_packets), C(packets),
        C(lost_percent), C(out_of_order).
      type: list
      elements: dict
    intervals:
      description: The interval series from C(intervals[].sum), each C({start, end, bps, omitted}) (s, s, bit/s).
      type: list
      elements: dict
    skipped_lines:
      description: Non-JSON lines found before the document.
      type: list
      elements: str
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description: Flat mapping; the unit is in each name (C(_bps) = bit/s). Null where iperf3 gave no value.
  returned: success
  type: dict
  contains:
    protocol:
      description: C(TCP), C(UDP) or C(SCTP).
      type: str
      sample: TCP
    streams:
      description: Parallel streams (C(-P)).
      type: int
      sample: 4
    reverse:
      description: The server sent (C(-R)).
      type: bool
    bidir:
      description: Both directions at once (C(--bidir)).
      type: bool
    duration_s:
      description: Measured duration of the sender (C(end.sum_sent.seconds)).
      type: float
      sample: 3.000099
    sent_bytes:
      description: Bytes sent (C(end.sum_sent.bytes)).
      type: int
    received_bytes:
      description: Bytes received (C(end.sum_received.bytes)).
      type: int
    sent_bps:
      description: Sender throughput in bit/s.
      type: float
    received_bps:
      description: Receiver throughput (goodput) in bit/s.
      type: float
      sample: 21926451177.16
    retransmits:
      description: TCP retransmits of the sender; null for UDP or an unset counter.
      type: int
    host_cpu_total_pct:
      description: CPU use of the local iperf3 (percent of one CPU).
      type: float
    host_cpu_user_pct:
      description: User part of it.
      type: float
    host_cpu_system_pct:
      description: System part of it.
      type: float
    remote_cpu_total_pct:
      description: CPU use of the server's iperf3; null when the server sent no results.
      type: float
    remote_cpu_user_pct:
      description: User part of it.
      type: float
    remote_cpu_system_pct:
      description: System part of it.
      type: float
    mean_rtt_us:
      description: Mean smoothed RTT of the sending streams, weighted by bytes sent; null on the receiving side.
      type: float
    min_rtt_us:
      description: Smallest RTT of the sending streams.
      type: float
    max_rtt_us:
      description: Largest RTT of the sending streams.
      type: float
    max_snd_cwnd_bytes:
      description: Largest send congestion window of the sending streams.
      type: float
    jitter_ms:
      description: UDP jitter seen by the receiver; null for TCP.
      type: float
    lost_packets:
      description: UDP datagrams lost; null for TCP.
      type: int
    packets:
      description: UDP datagrams; null for TCP.
      type: int
    lost_percent:
      description: UDP loss in percent; null for TCP.
      type: float
    out_of_order:
      description: UDP datagrams received out of order; null for TCP.
      type: int
    interval_bps_min:
      description: Lowest interval throughput (bit/s) over the non-omitted intervals.
      type: float
    interval_bps_max:
      description: Highest interval throughput (bit/s).
      type: float
    interval_bps_stdev:
      description: Sample standard deviation of the interval throughputs (bit/s); null with fewer than 2.
      type: float
    bidir_reverse_sent_bytes:
      description: Only with C(--bidir) - bytes sent on the reverse direction.
      type: int
    bidir_reverse_received_bytes:
      description: Only with C(--bidir) - bytes received on the reverse direction.
      type: int
    bidir_reverse_sent_bps:
      description: Only with C(--bidir) - reverse sender throughput (bit/s).
      type: float
    bidir_reverse_received_bps:
      description: Only with C(--bidir) - reverse receiver throughput (bit/s).
      type: float
    bidir_reverse_retransmits:
      description: Only with C(--bidir) - TCP retransmits on the reverse direction.
      type: int
ansible_facts:
  description: The same result under C(ansible_facts.iperf3).
  returned: success
  type: dict
  contains:
    iperf3:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_iperf3 import parse  # noqa: E402


def main():
    run_parse_module("iperf3", parse)


if __name__ == "__main__":
    main()
