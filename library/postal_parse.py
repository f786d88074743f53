#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: postal_parse
short_description: Parse postal's per-minute SMTP report (messages, data, errors, connections)
description:
  - "postal (the SMTP benchmark, Debian 0.76) prints on stdout a CSV header,
    C(time,messages,data(K),errors,connections,SSL connections) (the last column only in TLS builds, as Debian's),
    then one line at every wall-clock minute boundary: C(HH:MM) (the minute that starts), then the messages sent,
    kilobytes of message data sent (postal's C(K)), errors and connections (and TLS connections) since the previous
    line. Example: C(14:52,10041,54320,1,10041,0). postal's own problems (C(Can't connect to ...),
    C(Server timed out on read.)) go to stderr and are counted in the C(errors) column."
  - postal never stops by itself and prints no total; bound it with C(timeout). What it sent after the last
    minute boundary is never printed, and the first line covers only the part of a minute since the start. So
    the totals are the printed lines, and the rates (C(*_per_min), C(*_per_s)) are the mean over the full minutes
    (the second line on).
  - Bound postal to at least 130 s (C(timeout 190) gives two full minutes or more). postal buffers stdout and its
    header comes out with the first line, so a run that crossed no minute boundary printed nothing (the module
    fails saying so); one with a single line (no full minute) is C(valid=false) with the rates null.
  - postal writes C(postal.log) into its working directory; run it in a scratch directory.
  - Usage text (bad option, missing user list) and C(Can't ...) setup failures make the module fail.
version_added: "1.2.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
options:
  max_error_pct:
    description:
      - Errors above this share of the SMTP transactions of the full minutes (errors / (messages + errors)) make
        the run invalid.
    type: float
    default: 1.0
  log_duration_s:
    description:
      - Parse C(postal.log) instead of stdout - one line per message the server accepted - of a run bounded to
        this many seconds (C(timeout)), for windows too short to cross postal's minute boundaries. C(errors) is
        then null (postal.log lists accepted messages only).
    type: float
"""

EXAMPLES = r"""
- name: Send mail with 10 threads for a bit over three minutes (user list of example.com addresses)
  ansible.builtin.command:
    argv: [timeout, "190", postal, -t, "10", -m, "10", 127.0.0.1, /var/tmp/bench/postal-users.txt]
    chdir: /var/tmp/bench
  environment:
    LC_ALL: C
  register: __bench_postal
  changed_when: false
  failed_when: false   # timeout exits 124

- name: Parse the per-minute lines
  postal_parse:
    content: "{{ __bench_postal.stdout }}"
  register: __bench_postal_parsed

- name: Use the rate
  ansible.builtin.debug:
    msg: "{{ __bench_postal_parsed.metrics.messages_per_min }} messages/min"
"""

RETURN = r"""
tool:
  description: Always C(postal).
  returned: success
  type: str
  sample: postal
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: Verdict on the measurement (false without a full minute, without messages, or with too many errors).
  returned: success
  type: bool
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
warnings:
  description: Errors below the limit, lines that are not per-minute lines, no TLS column.
  returned: success
  type: list
  elements: str
details:
  description: Extras.
  returned: success
  type: dict
  contains:
    minutes:
      description: One entry per line (time, messages, data_kib, errors, connections, ssl_connections).
      type: list
      elements: dict
    ssl_column:
      description: Whether postal printed the C(SSL connections) column.
      type: bool
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description: Flat mapping; unit in each name. Totals over the printed lines, rates over the full minutes.
  returned: success
  type: dict
  contains:
    messages:
      description: Messages sent (printed lines).
      type: int
      sample: 16689
    data_kib:
      description: Message data sent, postal's C(data(K)).
      type: int
    errors:
      description: Errors postal counted.
      type: int
    connections:
      description: SMTP connections opened.
      type: int
    ssl_connections:
      description: TLS connections (null when postal has no TLS column).
      type: int
    lines:
      description: Per-minute lines printed.
      type: int
    full_minutes:
      description: Lines that cover a full minute (all but the first).
      type: int
    messages_per_min:
      description: Messages per full minute (mean).
      type: float
      sample: 10041.0
    data_kib_per_min:
      description: Data per full minute.
      type: float
    errors_per_min:
      description: Errors per full minute.
      type: float
    connections_per_min:
      description: Connections per full minute.
      type: float
    messages_per_s:
      description: messages_per_min / 60.
      type: float
    data_kib_s:
      description: data_kib_per_min / 60.
      type: float
    error_pct:
      description: errors / (messages + errors) over the full minutes, in %.
      type: float
ansible_facts:
  description: The same result under C(ansible_facts.postal).
  returned: success
  type: dict
  contains:
    postal:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_postal import parse  # noqa: E402

OPTIONS = dict(
    max_error_pct=dict(type="float", default=1.0),
    log_duration_s=dict(type="float"),
)


def main():
    run_parse_module("postal", parse, extra_spec=OPTIONS, option_names=tuple(OPTIONS))


if __name__ == "__main__":
    main()
