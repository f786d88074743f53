#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: docker_stats_parse
short_description: Parse docker stats JSON lines into per-container metrics
description:
  - Parses C(docker stats --no-stream --format '{{json .}}') (any CLI) or C(--format json) (CLI 23.0+) - one JSON
    object per container per line, every value a string.
  - C(MemUsage) is in binary units (KiB, MiB, GiB, with or without a space); C(NetIO) and C(BlockIO) in decimal
    units (kB, MB, GB, including C(1e+03kB)); C(--) (no value) becomes null with a warning.
  - A stopped container (listed by C(--all) with a 0 B memory limit and no PIDs) has null values and a warning.
  - Several samples of the same container (repeated calls appended to one file) are aggregated per container as
    O(aggregate) says.
  - The literal word C(json) per line (CLI 20.10 given C(--format json)) and the default table layout make the
    module fail with a message to use C(--format '{{json .}}').
version_added: "1.0.0"
author:
  - Infrastructure testbed contributors
extends_documentation_fragment:
  - testbed_parse
options:
  aggregate:
    description:
      - How several samples of one container are combined.
      - C(mean) averages the gauges (CPU, memory use and percent, PIDs) and keeps the last value of the cumulative
        counters (network and block bytes) and of the memory limit.
      - C(last) keeps the last sample of everything.
    type: str
    choices: [mean, last]
    default: mean
notes:
  - Container names become metric-name prefixes - lower-cased, anything outside C([a-z0-9_]) replaced by C(_);
    when two names collide the second gets its container id appended (with a warning).
"""

EXAMPLES = r"""
- name: Sample the containers under test three times
  ansible.builtin.shell:
    cmd: |
      set -e
      for i in 1 2 3; do
        docker stats --no-stream --format '{% raw %}{{json .}}{% endraw %}' lb1 web1 web2
      done
  environment:
    LC_ALL: C
  register: __bench_docker_stats
  changed_when: false

- name: Parse the samples
  docker_stats_parse:
    content: "{{ __bench_docker_stats.stdout }}"
    aggregate: mean
    dest: /var/tmp/bench/docker-stats.json

- name: CPU of the load balancer
  ansible.builtin.debug:
    msg: "{{ ansible_facts.docker_stats.metrics.lb1_cpu_pct }} %"
"""

RETURN = r"""
tool:
  description: Always C(docker_stats).
  returned: success
  type: str
  sample: docker_stats
source:
  description: The O(src) path, or C(<content>).
  returned: success
  type: str
  sample: <content>
valid:
  description: Always true when parsing succeeds (docker stats carries no error verdict of its own).
  returned: success
  type: bool
  sample: true
reasons:
  description: Empty.
  returned: success
  type: list
  elements: str
  sample: []
warnings:
  description: >-
    Values printed as C(--), stopped containers, name collisions, terminal escape codes; shown as Ansible
    warnings, the list itself is in C(ansible_facts.docker_stats.warnings).
  returned: success
  type: list
  elements: str
  sample: []
details:
  description: Extras that are not metrics.
  returned: success
  type: dict
  contains:
    containers:
      description: Per container - C(name), C(id), C(samples), C(metric_prefix) and the per-container fields
        of RV(metrics) without the prefix.
      type: list
      elements: dict
    samples:
      description: Number of samples per container name.
      type: dict
    aggregate:
      description: The O(aggregate) used.
      type: str
raw:
  description: The parsed text (only with O(keep_raw=true)).
  returned: when O(keep_raw=true)
  type: str
metrics:
  description:
    - Flat mapping. C(containers) (count), C(cpu_total_pct) (sum over containers, percent of one CPU), and per
      container C(<name>_cpu_pct), C(<name>_mem_usage_bytes), C(<name>_mem_limit_bytes), C(<name>_mem_pct),
      C(<name>_net_rx_bytes), C(<name>_net_tx_bytes), C(<name>_block_read_bytes), C(<name>_block_write_bytes),
      C(<name>_pids).
    - Byte values are docker's rounded figures (3 or 4 significant digits) converted to bytes.
  returned: success
  type: dict
  sample:
    containers: 2
    cpu_total_pct: 49.67
    tbfx_busy_cpu_pct: 49.67
    tbfx_busy_mem_usage_bytes: 585728
    tbfx_busy_mem_limit_bytes: 67108864
    tbfx_busy_net_rx_bytes: 806
ansible_facts:
  description: The same result under C(ansible_facts.docker_stats).
  returned: success
  type: dict
  contains:
    docker_stats:
      description: The parse result (keys as above).
      type: dict
"""

from ansible.module_utils.testbed_parse import run_parse_module  # noqa: E402
from ansible.module_utils.testbed_parse_docker_stats import parse  # noqa: E402

OPTIONS = dict(
    aggregate=dict(type="str", choices=["mean", "last"], default="mean"),
)


def main():
    run_parse_module("docker_stats", parse, extra_spec=OPTIONS, option_names=tuple(OPTIONS))


if __name__ == "__main__":
    main()
