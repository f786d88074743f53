#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: curl_parse
short_description: Parse curl's -w '%{json}' object (time to first byte, transfer time, rate) for one URL
description:
  - "Run curl (7.70 or later) with the body elsewhere (C(-o /dev/null) to download, C(-T FILE) to upload) and
    C(-w '%{json}\\n'): stdout is then one JSON object with every C(-w) variable. This gives the time to the first
    byte of an FTP or HTTP transfer, which lftp cannot (see M(lftp_parse)). Versions in docs/parsers.md."
  - RV(metrics.first_byte_s) is C(time_starttransfer), RV(metrics.transfer_s) is C(time_total - time_starttransfer),
    RV(metrics.rate_mib_s) is curl's C(speed_download) (C(speed_upload) for an upload) in MiB/s.
  - A non-zero C(exitcode) with nothing transferred makes the module fail with curl's C(errormsg)
    (for example C(Failed to connect to 127.0.0.1 port 2122)); after a partial transfer the result is
    C(valid=false). Several URLs in one run make the module fail.
  - For FTP, curl 7.88 reports C(time_pretransfer) a little below C(time_connect) (its FTP timers); the values are
    kept as printed.
version_added: "1.2.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
"""

EXAMPLES = r"""
- name: Download 50 MB over FTP on loopback with curl, timings as JSON
  ansible.builtin.command:
    argv: [curl, -sS, -o, /dev/null, -w, "%{json}\n", "ftp://127.0.0.1:2121/data-50m.bin"]
  environment:
    LC_ALL: C
  register: __bench_curl
  changed_when: false
  failed_when: false

- name: Parse it
  curl_parse:
    content: "{{ __bench_curl.stdout }}"
  register: __bench_curl_parsed

- name: Use the time to the first byte
  ansible.builtin.debug:
    msg: "{{ __bench_curl_parsed.metrics.first_byte_s }} s"
"""

RETURN = r"""
tool:
  description: Always C(curl).
  returned: success
  type: str
  sample: curl
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
valid:
  description: Verdict on the measurement (false after a partial transfer or with no byte).
  returned: success
  type: bool
reasons:
  description: Sentences explaining C(valid=false).
  returned: success
  type: list
  elements: str
warnings:
  description: Always empty for now.
  returned: success
  type: list
  elements: str
details:
  description: url, scheme, exitcode, errormsg, num_connects, time_namelookup, time_pretransfer, remote_ip, remote_port, curl_version.
  returned: success
  type: dict
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description: Flat mapping; unit in each name.
  returned: success
  type: dict
  contains:
    direction:
      description: C(get) or C(put) (C(size_upload) above 0).
      type: str
      sample: get
    transferred_bytes:
      description: C(size_download) (C(size_upload) for an upload).
      type: int
      sample: 52428800
    first_byte_s:
      description: C(time_starttransfer).
      type: float
      sample: 0.015837
    connect_s:
      description: C(time_connect).
      type: float
    total_s:
      description: C(time_total).
      type: float
    transfer_s:
      description: C(time_total - time_starttransfer).
      type: float
    rate_mib_s:
      description: curl's speed (bytes / time_total) in MiB/s.
      type: float
    response_code:
      description: The last FTP/HTTP response code (226 for a complete FTP transfer).
      type: int
      sample: 226
ansible_facts:
  description: The same result under C(ansible_facts.curl).
  returned: success
  type: dict
  contains:
    curl:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_curl import parse  # noqa: E402


def main():
    run_parse_module("curl", parse)


if __name__ == "__main__":
    main()
