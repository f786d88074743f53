#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: lftp_parse
short_description: Parse lftp's transfer log and transfer summaries (get/put bytes, time, rate)
description:
  - lftp run with C(-c) prints nothing about a transfer unless told to. Run it with
    C(set log:enabled/xfer on; set log:file/xfer /dev/stdout) (the transfer log on stdout) and
    C(set cmd:verbose on) (a summary after each command); versions in docs/parsers.md.
  - "The transfer log has one line per file, C([YYYY-MM-DD HH:MM:SS ]SRC -> DST START-END RATE), for example
    C(2026-11-23 14:51:46 ftp://anonymous@127.0.0.1:2121/data-50m.bin -> /tmp/got.bin 0-52428800 190.38 MiB/s).
    RATE is bytes / transfer time with two decimals (C(B/s), C(KiB/s), C(MiB/s)); the transfer time is computed
    from it."
  - "C(cmd:verbose) prints C(N bytes transferred) and, from 1 s on, C(in S seconds (RATE)) with S rounded to whole
    seconds. Without a log line these give the bytes and, from 1 s on, the time (direction unknown, warning)."
  - The direction is C(get) when the source is a URL and the destination local, C(put) the other way
    (C(mixed) when a run did both; the C(get_*)/C(put_*) metrics split them).
  - lftp gives no time to the first byte (its log timestamps have one-second resolution and it keeps no such
    statistic), so RV(metrics.first_byte_s) is always null with a warning; measure it with
    C(curl -w '%{time_starttransfer}') against the same server.
  - "lftp error lines (C(get: Access failed: 550 ...), C(Fatal error: max-retries exceeded (Connection refused)))
    make the module fail when nothing was transferred, and the result C(valid=false) otherwise."
version_added: "1.2.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
"""

EXAMPLES = r"""
- name: Download and upload 50 MB over FTP on loopback, transfer log on stdout
  ansible.builtin.command:
    argv:
      - lftp
      - -c
      - >-
        set cmd:verbose on; set log:enabled/xfer on; set log:file/xfer /dev/stdout; set xfer:clobber on;
        set net:max-retries 1; open -p 2121 ftp://anonymous:@127.0.0.1;
        get data-50m.bin -o /var/tmp/bench/got.bin
  environment:
    LC_ALL: C
  register: __bench_lftp
  changed_when: false

- name: Parse it
  lftp_parse:
    content: "{{ __bench_lftp.stdout }}"
  register: __bench_lftp_parsed

- name: Use the rate
  ansible.builtin.debug:
    msg: "{{ __bench_lftp_parsed.metrics.get_rate_mib_s }} MiB/s"
"""

RETURN = r"""
tool:
  description: Always C(lftp).
  returned: success
  type: str
  sample: lftp
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: Verdict on the measurement (false with lftp errors, no time, or no byte).
  returned: success
  type: bool
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
warnings:
  description: No first-byte time, a resumed transfer, no transfer-log line.
  returned: success
  type: list
  elements: str
details:
  description: Extras.
  returned: success
  type: dict
  contains:
    transfers:
      description: One entry per transfer-log line (direction, src, dst, start, bytes, rate_bytes_per_s, seconds, logged_at).
      type: list
      elements: dict
    summaries:
      description: The C(N bytes transferred ...) lines (bytes, seconds_rounded, rate_bytes_per_s).
      type: list
      elements: dict
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description: Flat mapping; unit in each name. Null where lftp gave no value.
  returned: success
  type: dict
  contains:
    direction:
      description: C(get), C(put), C(mixed), C(copy) (URL to URL) or null (no log line).
      type: str
      sample: get
    transfers:
      description: Number of transfers.
      type: int
    transferred_bytes:
      description: Bytes transferred, all transfers.
      type: int
      sample: 52428800
    transfer_s:
      description: Transfer time (bytes / rate of each transfer, summed).
      type: float
    rate_mib_s:
      description: Bytes / transfer time, in MiB/s.
      type: float
      sample: 190.38
    get_bytes:
      description: Bytes downloaded (null without a download).
      type: int
    get_transfer_s:
      description: Download time.
      type: float
    get_rate_mib_s:
      description: Download rate.
      type: float
    put_bytes:
      description: Bytes uploaded (null without an upload).
      type: int
    put_transfer_s:
      description: Upload time.
      type: float
    put_rate_mib_s:
      description: Upload rate.
      type: float
    first_byte_s:
      description: Always null (lftp does not measure it); see the description.
      type: float
ansible_facts:
  description: The same result under C(ansible_facts.lftp).
  returned: success
  type: dict
  contains:
    lftp:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_lftp import parse  # noqa: E402


def main():
    run_parse_module("lftp", parse)


if __name__ == "__main__":
    main()
