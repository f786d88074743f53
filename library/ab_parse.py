#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ab_parse
short_description: Parse an ApacheBench (ab) report into metrics and a validity verdict
description:
  - Parses the report C(ab) 2.3 prints on stdout (the ab of httpd 2.2.x and 2.4.x), run with C(LC_ALL=C).
    Any other ab version banner (httpd 2.0's 2.0.40-dev) makes the module fail; see docs/parsers.md. Keep stderr apart (progress lines and
    APR errors go there) and pass it as O(stderr) so a failed run names ab's own message.
  - When ab hits an APR error (connection refused, timeout) its stdout stops at C(Benchmarking ... (be patient))
    and it exits with the APR status modulo 256 (111, 119...); the module then fails naming ab's message.
  - ab prints C(Write errors) and C(Non-2xx responses) only when they are non-zero, so their absence is
    reported as 0. The C(Failed requests) breakdown (Connect, Receive, Length, Exceptions) is printed only when
    requests failed; the C(failed_*) metrics are null otherwise. C(Keep-Alive requests) exists only with C(-k)
    (null otherwise).
  - The percentile table is absent with C(-d) or a single request (C(p*_ms) null); C(Document Length Variable)
    (C(-l)) gives RV(metrics.document_length_bytes) null.
  - The run is invalid when requests failed on Connect, Receive or Exceptions, any response was not 2xx, write
    errors occurred, or nothing completed. Length-only failures (varying body sizes) only give a warning, as do
    ab's own "median and mean ... not reliable" remarks.
version_added: "1.0.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
options:
  stderr:
    description:
      - ab's stderr, used only to name ab's error message (for example
        C(apr_socket_recv Connection refused (111))) when stdout holds no report.
    type: str
  static_document:
    description:
      - The URL serves one fixed file. Then a response whose body length differs from the first response's (ab's
        C(Length) failure) makes the measurement invalid; otherwise (a dynamic page) it is only a warning.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Run ab against the system under test
  ansible.builtin.command:
    cmd: ab -n 20000 -c 32 http://10.0.0.10/index.html
  environment:
    LC_ALL: C
  register: __bench_ab
  changed_when: false
  failed_when: false   # a refused connection exits 111; let ab_parse explain it

- name: Parse the report
  ab_parse:
    content: "{{ __bench_ab.stdout }}"
    stderr: "{{ __bench_ab.stderr }}"
    dest: /var/tmp/bench/ab-c32.json

- name: Parse a saved report
  ab_parse:
    src: /var/tmp/bench/ab-c32.txt
  register: __bench_ab_result
"""

RETURN = r"""
tool:
  description: Always C(ab).
  returned: success
  type: str
  sample: ab
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: Verdict on the measurement.
  returned: success
  type: bool
  sample: true
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
warnings:
  description: Odd but not disqualifying findings (Length-only failures of a dynamic page, ab's reliability remarks).
  returned: success
  type: list
  elements: str
details:
  description: Server software, hostname, port, document path, ab version, whether the percentile table was there.
  returned: success
  type: dict
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description:
    - Flat mapping; unit in each name (C(_kb_s) is ab's Kbytes/sec, 1024 B/s). Null where ab gave no value.
    - C(connect_*), C(processing_*), C(waiting_*), C(total_*) come from the Connection Times table as
      C(_min_ms), C(_mean_ms), C(_sd_ms), C(_median_ms), C(_max_ms) (sd and median null with C(-S)).
  returned: success
  type: dict
  contains:
    concurrency:
      description: Concurrency Level.
      type: int
      sample: 20
    time_taken_s:
      description: Time taken for tests.
      type: float
      sample: 0.607
    complete_requests:
      description: Complete requests.
      type: int
      sample: 4000
    failed_requests:
      description: Failed requests (all kinds).
      type: int
      sample: 0
    failed_connect:
      description: Failed on connect; null when ab printed no breakdown (no failures).
      type: int
    failed_receive:
      description: Failed on receive; null when no breakdown.
      type: int
    failed_length:
      description: Body length differed from the first response; null when no breakdown.
      type: int
    failed_exceptions:
      description: Exceptions; null when no breakdown.
      type: int
    non_2xx_responses:
      description: Non-2xx responses; 0 when ab omitted the line (it prints it only when non-zero).
      type: int
    write_errors:
      description: Write errors; 0 when ab omitted the line (it prints it only when non-zero).
      type: int
    keepalive_requests:
      description: Keep-Alive requests; null without C(-k).
      type: int
    total_transferred_bytes:
      description: Total bytes received (headers and bodies).
      type: int
    html_transferred_bytes:
      description: Body bytes received.
      type: int
    total_body_sent_bytes:
      description: Request body bytes sent with C(-p)/C(-u); null otherwise.
      type: int
    document_length_bytes:
      description: Length of the first response body; null with C(Document Length Variable).
      type: int
    requests_per_s:
      description: Requests per second (mean); null when ab printed no rates.
      type: float
      sample: 6587.5
    time_per_request_ms:
      description: Mean time per request (concurrency x time / requests).
      type: float
    time_per_request_all_ms:
      description: Mean time per request across all concurrent requests.
      type: float
    transfer_rate_kb_s:
      description: Receive rate in Kbytes/sec (1024 B).
      type: float
    sent_kb_s:
      description: Send rate with a request body; null otherwise.
      type: float
    total_kb_s:
      description: Send + receive rate with a request body; null otherwise.
      type: float
    total_mean_ms:
      description: Mean total time of a request (Connection Times table); see the note on the table columns.
      type: int
    p50_ms:
      description: 50 % of requests were served within this time; null without the percentile table.
      type: int
    p66_ms:
      description: 66th percentile; null without the table.
      type: int
    p75_ms:
      description: 75th percentile; null without the table.
      type: int
    p80_ms:
      description: 80th percentile; null without the table.
      type: int
    p90_ms:
      description: 90th percentile; null without the table.
      type: int
    p95_ms:
      description: 95th percentile; null without the table.
      type: int
    p98_ms:
      description: 98th percentile; null without the table.
      type: int
    p99_ms:
      description: 99th percentile; null without the table.
      type: int
    p100_ms:
      description: Longest request; null without the table.
      type: int
ansible_facts:
  description: The same result under C(ansible_facts.ab).
  returned: success
  type: dict
  contains:
    ab:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_ab import parse  # noqa: E402

OPTIONS = dict(stderr=dict(type="str"), static_document=dict(type="bool", default=False))


def main():
    run_parse_module("ab", parse, extra_spec=OPTIONS, option_names=tuple(OPTIONS))


if __name__ == "__main__":
    main()
