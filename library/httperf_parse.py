#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: httperf_parse
short_description: Parse an httperf report into metrics and a validity verdict
description:
  - Parses the plain-text report httperf 0.9.x prints on stdout, run with C(LC_ALL=C) (0.9.0 captured, 0.9.1
    checked in its source; 0.8 is believed to print the same lines but was not verified - httperf prints no
    version to check; see docs/parsers.md).
  - Every line of httperf's report is required (C(Total:), rates, times, C(Reply status), C(CPU time),
    C(Net I/O) and both C(Errors:) lines); a report without them is truncated and makes the module fail.
  - Returns flat metrics with the unit in each name, a verdict RV(valid) with the reasons, and warnings.
  - Values httperf prints as C(0.0) placeholders because nothing was measured become null, never 0
    (reply-rate figures with 0 samples, connection/reply times and sizes when no reply came back).
  - "The run is invalid when: any C(fd-unavail), C(addrunavail) or C(ftab-full) error occurred (the client
    hit httperf's select()/FD_SETSIZE descriptor ceiling, about 1024, or ran out of ports: the load generator
    was the limit); the achieved connection rate is below O(min_rate_ratio) of the requested rate; client CPU
    reached O(max_client_cpu_pct) while the client fell more than 3 % behind the requested rate or ran out of
    descriptors (client CPU saturated); errors or unanswered requests exceed O(max_error_pct) of the connections
    or requests; no reply came back."
  - 4xx/5xx replies are not errors to httperf; they are counted in RV(metrics.status_4xx) and
    RV(metrics.status_5xx) and produce a warning.
version_added: "1.0.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
options:
  requested_rate:
    description:
      - The connection rate (conn/s) the run asked for.
      - Overrides the C(--rate) echoed on the report's first line; without both, the rate check is skipped
        and RV(metrics.requested_rate_per_s) is null.
      - With C(--wsess)/C(--wsesslog) the echoed C(--rate) is a session rate and is not compared; give this
        option to compare the connection rate anyway.
    type: float
  min_rate_ratio:
    description:
      - The achieved connection rate must reach this fraction of the requested rate, otherwise the run is
        invalid (client-bound or server saturated; the reason gives the numbers).
      - Must be above 0 and at most 1.
    type: float
    default: 0.9
  max_client_cpu_pct:
    description:
      - httperf's own CPU use (user + system, percent of one CPU, from its C(CPU time) line) at or above this
        value, together with an achieved rate more than 3 % below the requested one (or client-resource
        errors), makes the run invalid (client CPU saturated).
      - httperf polls, so it shows a high CPU share even at low rates; a busy CPU while the requested rate was
        met, or with no requested rate to compare with, only gives a warning.
    type: float
    default: 95.0
  max_error_pct:
    description:
      - Errors (C(errors_total) / connections) or unanswered requests ((requests - replies) / requests) above
        this percentage make the run invalid; a smaller non-zero share only gives a warning.
    type: float
    default: 1.0
seealso:
  - name: httperf man page
    description: The OUTPUT section describes every line of the report.
    link: https://github.com/httperf/httperf/blob/master/man/httperf.1
notes:
  - The C(raw) key holds the parsed text when O(keep_raw=true).
"""

EXAMPLES = r"""
- name: Run httperf against the system under test
  ansible.builtin.command:
    cmd: >-
      httperf --server 10.0.0.10 --port 80 --uri /index.html
      --rate 200 --num-conns 6000 --num-calls 1 --timeout 5
  environment:
    LC_ALL: C
  register: __bench_httperf
  changed_when: false

- name: Parse the report
  httperf_parse:
    content: "{{ __bench_httperf.stdout }}"
    dest: /var/tmp/bench/httperf-rate200.json
  register: __bench_httperf_result

- name: Parse a saved report, comparing with the rate from the plan
  httperf_parse:
    src: /var/tmp/bench/httperf-rate200.txt
    requested_rate: 200
    max_client_cpu_pct: 99

- name: Stop the sweep when the client was the bottleneck
  ansible.builtin.assert:
    that: ansible_facts.httperf.valid
    fail_msg: "{{ ansible_facts.httperf.reasons | join('; ') }}"
"""

RETURN = r"""
tool:
  description: Always C(httperf).
  returned: success
  type: str
  sample: httperf
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
  sample: /var/tmp/bench/httperf-rate200.txt
valid:
  description: Verdict on the measurement (not on the parsing, which either succeeds or fails the module).
  returned: success
  type: bool
  sample: true
reasons:
  description: Sentences explaining C(valid=false); empty when valid.
  returned: success
  type: list
  elements: str
  sample: ["the load generator (client) was the limit, not the system under test: ..."]
warnings:
  description: Odd but not disqualifying findings (0 reply-rate samples, 4xx/5xx replies, a few errors).
  returned: success
  type: list
  elements: str
  sample: []
details:
  description: Extras that are not metrics.
  returned: success
  type: dict
  contains:
    command_line:
      description: The option line httperf echoed first, or null.
      type: str
    requested_rate_from:
      description: Where RV(metrics.requested_rate_per_s) came from (C(option requested_rate),
        C(command line --rate)) or null.
      type: str
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description:
    - Flat mapping; the unit is in each name (C(_ms), C(_s), C(_per_s), C(_kb_s) = 1024 B/s, C(_bps) = bit/s,
      C(_bytes), C(_pct)); plain counters have no suffix. Null where httperf gave no value.
  returned: success
  type: dict
  contains:
    connections:
      description: Connections issued (the C(Total) line).
      type: int
      sample: 2400
    requests:
      description: Requests sent.
      type: int
      sample: 2400
    replies:
      description: Replies received (all status classes).
      type: int
      sample: 2400
    test_duration_s:
      description: Test duration.
      type: float
      sample: 15.998
    connection_rate_per_s:
      description: Achieved connection rate (conn/s).
      type: float
      sample: 150.0
    connection_period_ms:
      description: Mean time between connections; null when no connection was issued.
      type: float
    max_concurrent_connections:
      description: Highest number of simultaneously open connections.
      type: int
      sample: 3
    connection_time_ms:
      description: Mean lifetime of connections that got a reply; null when none did.
      type: float
      sample: 0.5
    connection_time_min_ms:
      description: Shortest such lifetime; null when no reply came back.
      type: float
    connection_time_max_ms:
      description: Longest such lifetime; null when no reply came back.
      type: float
    connection_time_median_ms:
      description: Median lifetime (httperf's 1 ms histogram bins); null when no reply came back.
      type: float
    connection_time_stddev_ms:
      description: Standard deviation of the lifetimes; null when no reply came back.
      type: float
    connect_time_ms:
      description: Mean TCP connect time; null when no reply came back and httperf printed 0.0.
      type: float
    replies_per_connection:
      description: Replies per completed connection; null when no reply came back.
      type: float
    request_rate_per_s:
      description: Requests sent per second.
      type: float
    request_period_ms:
      description: Mean time between requests; null when none was sent.
      type: float
    request_size_bytes:
      description: Mean request size; null when none was sent.
      type: float
    reply_rate_min_per_s:
      description: Minimum of the 5 s reply-rate samples; null (with a warning) when there were 0 samples.
      type: float
    reply_rate_avg_per_s:
      description: Mean of the reply-rate samples; null when there were 0 samples.
      type: float
    reply_rate_max_per_s:
      description: Maximum of the reply-rate samples; null when there were 0 samples.
      type: float
    reply_rate_stddev_per_s:
      description: Standard deviation of the reply-rate samples; null with fewer than 2 samples.
      type: float
    reply_rate_samples:
      description: Number of reply-rate samples (one per 5 s).
      type: int
      sample: 3
    replies_per_s_derived:
      description: replies / test-duration; null when the duration is 0.
      type: float
      sample: 150.02
    response_time_ms:
      description: Mean time to the first byte of the reply; null when no reply came back.
      type: float
    transfer_time_ms:
      description: Mean time to receive the reply; null when no reply came back.
      type: float
    reply_size_header_bytes:
      description: Mean reply header size; null when no reply came back.
      type: float
    reply_size_content_bytes:
      description: Mean reply body size; null when no reply came back.
      type: float
    reply_size_footer_bytes:
      description: Mean reply footer size; null when no reply came back.
      type: float
    reply_size_total_bytes:
      description: Mean total reply size; null when no reply came back.
      type: float
      sample: 1593.0
    status_1xx:
      description: 1xx replies.
      type: int
    status_2xx:
      description: 2xx replies.
      type: int
    status_3xx:
      description: 3xx replies.
      type: int
    status_4xx:
      description: 4xx replies (not errors to httperf; a warning here).
      type: int
    status_5xx:
      description: 5xx replies (not errors to httperf; a warning here).
      type: int
    client_cpu_user_s:
      description: httperf's user CPU time.
      type: float
    client_cpu_system_s:
      description: httperf's system CPU time.
      type: float
    client_cpu_user_pct:
      description: httperf's user CPU share of the test duration.
      type: float
    client_cpu_system_pct:
      description: httperf's system CPU share of the test duration.
      type: float
    client_cpu_total_pct:
      description: httperf's total CPU share of the test duration.
      type: float
      sample: 89.2
    net_io_kb_s:
      description: Network throughput in KB/s (1 KB = 1024 B), as httperf prints it.
      type: float
    net_io_bps:
      description: The same throughput in bit/s, from httperf's C(*10^6 bps) figure (0.1 Mbit/s resolution).
      type: int
      sample: 2000000
    errors_total:
      description: Sum of all errors.
      type: int
    errors_client_timo:
      description: Client timeouts (C(--timeout)).
      type: int
    errors_socket_timo:
      description: TCP-level timeouts.
      type: int
    errors_connrefused:
      description: Connections refused.
      type: int
    errors_connreset:
      description: Connections reset by the peer.
      type: int
    errors_fd_unavail:
      description: Connections not made because the client ran out of file descriptors.
      type: int
    errors_addrunavail:
      description: Connections not made because the client ran out of local ports.
      type: int
    errors_ftab_full:
      description: Connections not made because the system file table was full.
      type: int
    errors_other:
      description: Other errors.
      type: int
    max_connect_burst_length:
      description: C(Maximum connect burst length) line; null when absent.
      type: int
    requested_rate_per_s:
      description: Requested connection rate (option O(requested_rate) or the echoed C(--rate)); null otherwise.
      type: float
    num_conns:
      description: The echoed C(--num-conns); null when the command line is absent.
      type: int
ansible_facts:
  description: The same result under C(ansible_facts.httperf).
  returned: success
  type: dict
  contains:
    httperf:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_httperf import parse  # noqa: E402

OPTIONS = dict(
    requested_rate=dict(type="float"),
    min_rate_ratio=dict(type="float", default=0.9),
    max_client_cpu_pct=dict(type="float", default=95.0),
    max_error_pct=dict(type="float", default=1.0),
)


def main():
    run_parse_module("httperf", parse, extra_spec=OPTIONS, option_names=tuple(OPTIONS))


if __name__ == "__main__":
    main()
