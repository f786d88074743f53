#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: tool_parse
short_description: Parse any supported tool's raw output with the project's parser for that tool
description:
  - One entry point to every C(<tool>_parse) module, for roles that run a tool chosen at run time
    (M(ansible.builtin.include_role) C(testbed_workload)). O(tool) picks the parser; O(options) are
    that parser's own options (for example C(requested_rate) for httperf, C(max_drop_pct) for sockperf).
  - C(ceph) is the parser of M(ceph_status_parse) (C(ceph status -f json), C(ceph pg stat -f json)) and C(zpool)
    the parser of M(zpool_status_parse) (C(zpool status -p)); the tool name is the command's name, so
    C(testbed_workload) runs them like any other tool.
  - The result is exactly what the tool's own module returns (C(ansible_facts.<tool>) and the same keys
    at the top level); see its documentation for the metrics.
version_added: "1.1.0"
author: Testbed contributors
extends_documentation_fragment: testbed_parse
options:
  tool:
    description: The tool whose output this is.
    type: str
    required: true
    choices: [ab, ceph, curl, docker_stats, fio, hpcc, httperf, iozone, iperf3, ipvsadm, lftp, netperf, nuttcp, ping, postal,
              sockperf, sysbench, xz, zpool]
  options:
    description:
      - Options of that tool's parser, by name (as the tool's own module takes them).
      - An option the parser does not know makes the module fail naming it.
    type: dict
    default: {}
seealso:
  - module: iperf3_parse
  - module: fio_parse
  - module: httperf_parse
"""

EXAMPLES = r"""
- name: Parse an httperf report against its requested rate
  tool_parse:
    tool: httperf
    src: /var/tmp/run/httperf.txt
    options:
      requested_rate: 200
  register: parsed

- name: Parse iperf3 JSON held in a variable, without keeping the raw text
  tool_parse:
    tool: iperf3
    content: "{{ iperf3_run.stdout }}"
    keep_raw: false
"""

RETURN = r"""
ansible_facts:
  description: C(<tool>) holds the parse result (the tool's own module documents its metrics).
  returned: success
  type: dict
tool:
  description: The tool.
  returned: success
  type: str
metrics:
  description: Flat mapping of metrics, the unit in every numeric name; null where the tool gave no value.
  returned: success
  type: dict
valid:
  description: Whether the measurement can be trusted.
  returned: success
  type: bool
reasons:
  description: Why it cannot (empty when valid).
  returned: success
  type: list
  elements: str
raw:
  description: The raw text (with O(keep_raw)).
  returned: when keep_raw
  type: str
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_parse import PARSE_ARGUMENT_SPEC, parse_and_exit  # noqa: E402
from ansible.module_utils.testbed_parsers import PARSERS, parser_options  # noqa: E402


def main():
    spec = dict(PARSE_ARGUMENT_SPEC)
    spec.update(tool=dict(type="str", required=True, choices=sorted(PARSERS)),
                options=dict(type="dict", default={}))
    module = AnsibleModule(argument_spec=spec, mutually_exclusive=[("src", "content")],
                           required_one_of=[("src", "content")], supports_check_mode=True)
    params = module.params
    tool = params["tool"]
    known = parser_options(tool)
    unknown = sorted(set(params["options"]) - set(known))
    if unknown:
        module.fail_json(msg="tool_parse: options %s are not options of the %s parser (it takes: %s)"
                         % (", ".join(unknown), tool, ", ".join(known) or "none"), tool=tool)
    parse_and_exit(module, tool, PARSERS[tool], params["options"])


if __name__ == "__main__":
    main()
