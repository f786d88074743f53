#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: sockperf_parse
short_description: Parse a sockperf ping-pong / under-load client report into round-trip metrics
description:
  - Parses the client report of C(sockperf ping-pong) (or C(under-load)), run with C(LC_ALL=C) -
    the C([Total Run]) and C([Valid Duration]) lines, the C(====> avg-rtt=) (with C(--full-rtt)) or
    C(avg-latency=) line, dropped/duplicated/out-of-order counts and the percentile table.
  - ANSI colour codes, which sockperf prints even into a pipe, are removed first.
  - sockperf exits 0 after most failures, so the text decides. A report without statistics (C(ERROR:) lines
    such as C(Can't connect socket), C(No messages were received from the server), C(No valid observations
    found), usage text after a bad option) makes the module fail, quoting sockperf.
  - A complete report of a run that did not last its C(-t) time (C(Test end (interrupted by user))), that
    carries an C(ERROR:) line, or that dropped more than O(max_drop_pct) of its messages returns C(valid=false).
  - sockperf 3.7 prints only avg and std-dev on its avg line; the statistics added in 3.8 (mean-ad, median-ad,
    siqr, cv, std-error, confidence interval) are null there, with a warning naming the version (see
    docs/parsers.md).
  - Times are in microseconds, as sockperf prints them. Without C(--full-rtt) sockperf halves each round trip;
    the C(rtt_*_us) metrics are always round trips (doubled back when needed), RV(metrics.statistic) says what
    the C(avg_us)/C(pNN_us) values are.
version_added: "1.0.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
options:
  max_drop_pct:
    description:
      - Share of dropped messages (of the valid window's sent messages) above which the run is C(valid=false).
        Any drop at all is a warning.
    type: float
    default: 1.0
"""

EXAMPLES = r"""
- name: TCP request/response round trip through the chain (works through an L4 proxy)
  community.docker.docker_container_exec:
    container: nfv-client
    argv: [sockperf, ping-pong, --tcp, -i, 10.231.0.20, -p, "11111", -t, "5", -m, "64", --full-rtt]
    env:
      LC_ALL: C
  register: __nfv_sockperf
  changed_when: false

- name: Parse the report
  sockperf_parse:
    content: "{{ __nfv_sockperf.stdout }}"
  register: __nfv_sockperf_result

- name: Show the mean and the 99th percentile round trip
  ansible.builtin.debug:
    msg: "{{ __nfv_sockperf_result.metrics.rtt_avg_us }} us, p99 {{ __nfv_sockperf_result.metrics.rtt_p99_us }} us"
"""

RETURN = r"""
tool:
  description: Always C(sockperf).
  returned: success
  type: str
  sample: sockperf
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: False when the test was interrupted, sockperf printed an error, or too many messages were dropped.
  returned: success
  type: bool
  sample: true
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
warnings:
  description: Dropped (below the limit), duplicated or out-of-order messages, few observations, several servers.
  returned: success
  type: list
  elements: str
details:
  description: >-
    C(version), C(targets) (ip, port, protocol per server), C(test_end) (why the test stopped) and
    C(servers) (the metrics of every server block, keyed by server number).
  returned: success
  type: dict
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description: Flat mapping; unit in each name (C(_us) microseconds, C(_s) seconds). Null where sockperf gave no value.
  returned: success
  type: dict
  contains:
    protocol:
      description: C(TCP) or C(UDP), from the target line.
      type: str
      sample: TCP
    statistic:
      description: C(round-trip) (C(--full-rtt)) or C(one-way (half round trip)); what C(avg_us) and C(pNN_us) are.
      type: str
      sample: round-trip
    run_time_s:
      description: Whole run including warm-up (C([Total Run] RunTime)).
      type: float
      sample: 2.0
    warmup_ms:
      description: Warm-up time; null for a run bounded by a packet count.
      type: int
    sent_messages:
      description: Messages sent in the whole run.
      type: int
    received_messages:
      description: Replies received in the whole run.
      type: int
    skipped_messages:
      description: Messages sockperf skipped (0 when not printed).
      type: int
    valid_run_time_s:
      description: Length of the window the statistics cover (C([Valid Duration] RunTime)).
      type: float
      sample: 1.55
    valid_sent_messages:
      description: Messages sent in the valid window.
      type: int
    valid_received_messages:
      description: Replies received in the valid window.
      type: int
    avg_us:
      description: Mean as printed (round trip or half of it, see C(statistic)).
      type: float
      sample: 28.403
    stddev_us:
      description: Standard deviation as printed.
      type: float
    mean_ad_us:
      description: Mean absolute deviation (sockperf 3.8 and later); null otherwise.
      type: float
    median_ad_us:
      description: Median absolute deviation (sockperf 3.8 and later); null otherwise.
      type: float
    siqr_us:
      description: Semi-interquartile range (sockperf 3.8 and later); null otherwise.
      type: float
    std_error_us:
      description: Standard error of the mean (sockperf 3.8 and later); null otherwise.
      type: float
    cv:
      description: Coefficient of variation, a ratio (sockperf 3.8 and later); null otherwise.
      type: float
    ci_level_pct:
      description: Confidence level of sockperf's interval (3.8 and later); null otherwise.
      type: float
    ci_low_us:
      description: Lower end of sockperf's confidence interval of the mean; null before 3.8.
      type: float
    ci_high_us:
      description: Upper end of sockperf's confidence interval of the mean; null before 3.8.
      type: float
    dropped_messages:
      description: Messages without a reply in the valid window.
      type: int
    duplicated_messages:
      description: Duplicated replies.
      type: int
    out_of_order_messages:
      description: Out-of-order replies (left out of the statistics by sockperf).
      type: int
    observations:
      description: Round trips the statistics are computed from.
      type: int
      sample: 54416
    min_us:
      description: Smallest observation as printed.
      type: float
    max_us:
      description: Largest observation as printed.
      type: float
    p25_us:
      description: 25th percentile as printed (likewise C(p50_us), C(p75_us), C(p90_us), C(p99_us), C(p99_9_us),
        C(p99_99_us), C(p99_999_us); null when sockperf skipped one for lack of observations).
      type: float
    rtt_avg_us:
      description: Mean round-trip time (doubled back from C(avg-latency) when needed).
      type: float
      sample: 28.403
    rtt_min_us:
      description: Smallest round trip.
      type: float
    rtt_max_us:
      description: Largest round trip.
      type: float
    rtt_p50_us:
      description: Median round trip (likewise C(rtt_p90_us), C(rtt_p99_us), C(rtt_p99_9_us)).
      type: float
    round_trips_per_s:
      description: Request/response transactions per second in the valid window.
      type: float
ansible_facts:
  description: The same result under C(ansible_facts.sockperf).
  returned: success
  type: dict
  contains:
    sockperf:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_sockperf import parse  # noqa: E402

OPTIONS = dict(max_drop_pct=dict(type="float", default=1.0))


def main():
    run_parse_module("sockperf", parse, extra_spec=OPTIONS, option_names=tuple(OPTIONS))


if __name__ == "__main__":
    main()
