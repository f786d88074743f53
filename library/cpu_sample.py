#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sample CPU usage from /proc/stat (and cgroups) beside a load."""

DOCUMENTATION = r"""
---
module: cpu_sample
short_description: Measure CPU usage of a host (and of cgroups) while a load runs
description:
  - Reads C(/proc/stat) every I(interval) seconds for I(duration) seconds, or until
    I(stop_file) is touched (bounded by I(duration)), and returns the CPU state
    percentages over the window and per interval, in the parser result shape
    (C(metrics), C(valid), C(reasons), C(warnings), C(details)).
  - Means are over the whole window; maxima over the intervals (a last interval shorter
    than half an I(interval) counts in the means only). Percentages are of all CPUs
    (100 = every CPU busy) except the cgroup ones, which are of one CPU like
    C(docker stats) and C(top) (200 = two CPUs fully used).
  - Meant to run with C(async) and C(poll 0) beside the load, then to be collected with
    C(ansible.builtin.async_status). It always finishes by itself after at most
    I(warmup) + I(duration) seconds.
  - Metrics are C(cpu_busy_mean_pct), C(cpu_busy_max_pct), C(cpu_user_mean_pct),
    C(cpu_system_mean_pct), C(cpu_nice_mean_pct), C(cpu_irq_mean_pct),
    C(cpu_softirq_mean_pct), C(cpu_softirq_max_pct), C(cpu_iowait_mean_pct),
    C(cpu_steal_mean_pct), C(cpu_hottest_busy_mean_pct) and C(cpu_hottest_softirq_mean_pct)
    (the busiest single CPU, where softirq-bound packet processing shows),
    C(samples) (intervals in the series), C(window_s), and C(<name>_cpu_pct) per cgroup.
version_added: "1.0.0"
author: Testbed contributors
options:
  duration:
    description: Longest sampling window in seconds (at most 86400).
    type: float
    required: true
  interval:
    description: Seconds between two snapshots.
    type: float
    default: 1.0
  warmup:
    description: Seconds to wait before the first snapshot (skip the load's ramp-up).
    type: float
    default: 0.0
  stop_file:
    description:
      - End the window early when this file is created or touched after the sampler
        started (a stale file from an earlier point is ignored). Checked every 0.2 s.
    type: path
  cgroups:
    description:
      - Name -> cgroup whose CPU usage to measure over the same window; gives metric
        C(<name>_cpu_pct). Names are letters, digits and C(_).
      - A cgroup is an absolute directory, or a path relative to the controller mount,
        looked up under C(<cgroup_root>/cpuacct/), C(cpu,cpuacct/), the cgroup v2 root and
        C(unified/) - for a Docker container C(docker/<full container id>)
        (cgroup v1 C(cpuacct.usage) or v2 C(cpu.stat) C(usage_usec)).
    type: dict
  cgroup_root:
    description: Mount point of the cgroup hierarchies.
    type: path
    default: /sys/fs/cgroup
  dest:
    description: Also write the result as JSON to this file (atomically).
    type: path
  active_files:
    description:
      - Counter files that grow while the load runs (their integers are summed), for example the storage
        interface's C(/sys/class/net/eth1/statistics/rx_bytes) and C(tx_bytes). The window then opens when
        they first grow at I(active_min_rate) per second or more and closes at the last poll (every 0.2 s)
        where they did, once they stayed below it for I(idle_s) - the load's window as this host sees it,
        without another machine's clock. The wait for the load counts in I(duration).
      - A load that never shows makes the result invalid (no metrics) with a reason naming the files.
    type: list
    elements: path
  active_min_rate:
    description: The growth per second of the I(active_files) sum that counts as the load running.
    type: float
    default: 32768.0
  idle_s:
    description: Seconds below I(active_min_rate) after which the load counts as ended (with I(active_files)).
    type: float
    default: 2.0
  ready_file:
    description:
      - Touched once the sampler is watching (after I(warmup)), so that the caller starts the load only then
        (M(ansible.builtin.wait_for) C(path)).
    type: path
notes:
  - In check mode nothing is sampled; the task returns C(skipped=true) with empty metrics.
seealso:
  - module: result_store
"""

EXAMPLES = r"""
- name: Start the CPU sampler on the director beside the load
  cpu_sample:
    duration: 70
    interval: 1
    stop_file: /tmp/testbed-load-done
    cgroups:
      lb: "docker/{{ lb_container.container.Id }}"
  async: 90
  poll: 0
  register: cpu_job

- name: Run the load
  ansible.builtin.command: httperf --server 127.0.0.1 --rate 2000 --num-conns 20000
  register: load
  changed_when: false

- name: Tell the sampler the load is over
  ansible.builtin.file:
    path: /tmp/testbed-load-done
    state: touch
    mode: "0644"

- name: Collect the CPU figures
  ansible.builtin.async_status:
    jid: "{{ cpu_job.ansible_job_id }}"
  register: cpu
  until: cpu.finished
  retries: 90
  delay: 1
"""

RETURN = r"""
tool:
  description: Always C(cpu_sample).
  returned: success
  type: str
  sample: cpu_sample
source:
  description: Always C(/proc/stat).
  returned: success
  type: str
  sample: /proc/stat
metrics:
  description: The CPU figures (unit in the name; null when there was no window).
  returned: always
  type: dict
  sample:
    cpu_busy_mean_pct: 41.231
    cpu_busy_max_pct: 57.0
    cpu_user_mean_pct: 12.5
    cpu_system_mean_pct: 20.1
    cpu_softirq_mean_pct: 8.6
    cpu_softirq_max_pct: 11.2
    cpu_iowait_mean_pct: 0.0
    cpu_steal_mean_pct: 0.0
    cpu_hottest_busy_mean_pct: 70.2
    cpu_hottest_softirq_mean_pct: 16.3
    samples: 30
    window_s: 30.004
    lb_cpu_pct: 33.9
valid:
  description: False when no CPU time passed during the window.
  returned: success
  type: bool
  sample: true
reasons:
  description: Why the result is not valid.
  returned: success
  type: list
  elements: str
  sample: []
warnings:
  description:
    - Counters that went backwards, vanished cgroups, a stop file that never came...
    - Shown as Ansible warnings; the list itself is in C(ansible_facts.cpu_sample.warnings).
  returned: success
  type: list
  elements: str
  sample: []
details:
  description:
    - Per-CPU percentages over the window, the per-interval series, cgroup details, how the window ended
      (C(stopped_by) C(duration), C(stop_file), or C(idle) - the I(active_files) stopped growing).
  returned: success
  type: dict
  sample:
    cpus: 2
    interval_s: 1.0
    stopped_by: stop_file
    busy_series_pct: [40.5, 41.0]
    softirq_series_pct: [8.1, 9.0]
    per_cpu: {cpu0: {busy_pct: 70.2, softirq_pct: 16.3}}
    cgroups: {lb: {spec: docker/0123abcd, file: /sys/fs/cgroup/cpuacct/docker/0123abcd/cpuacct.usage, kind: cpuacct.usage, cpu_pct: 33.9}}
ansible_facts:
  description: The same result as C(cpu_sample) (when not run with async).
  returned: success
  type: dict
"""

import re  # noqa: E402 (Ansible modules import after their documentation)

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_parse import write_json_atomic  # noqa: E402
from ansible.module_utils.testbed_sampling import MAX_DURATION_S, SamplingError, sample  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec=dict(
            duration=dict(type="float", required=True),
            interval=dict(type="float", default=1.0),
            warmup=dict(type="float", default=0.0),
            stop_file=dict(type="path"),
            cgroups=dict(type="dict"),
            cgroup_root=dict(type="path", default="/sys/fs/cgroup"),
            dest=dict(type="path"),
            active_files=dict(type="list", elements="path"),
            active_min_rate=dict(type="float", default=32768.0),
            idle_s=dict(type="float", default=2.0),
            ready_file=dict(type="path"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    if not 0 < params["duration"] <= MAX_DURATION_S:
        module.fail_json(msg=f"cpu_sample: duration must be > 0 and <= {MAX_DURATION_S:.0f} s, got {params['duration']}")
    if params["interval"] <= 0:
        module.fail_json(msg=f"cpu_sample: interval must be > 0 s, got {params['interval']}")
    if not 0 <= params["warmup"] <= MAX_DURATION_S:
        module.fail_json(msg=f"cpu_sample: warmup must be between 0 and {MAX_DURATION_S:.0f} s, got {params['warmup']}")
    cgroups = params["cgroups"] or {}
    for name, spec in cgroups.items():
        if not re.match(r"^[A-Za-z][A-Za-z0-9_]*$", name):
            module.fail_json(msg=f"cpu_sample: cgroups key {name!r} must be letters, digits and '_' "
                                 "(it becomes the metric <name>_cpu_pct)")
        if not isinstance(spec, str) or not spec.strip():
            module.fail_json(msg=f"cpu_sample: cgroups.{name} must be a cgroup path, got {spec!r}")
    if module.check_mode:
        module.exit_json(changed=False, skipped=True, msg="check mode: no CPU sampling done",
                         metrics={}, valid=True, reasons=[], details={})
    try:
        result = sample(params["duration"], interval=params["interval"], stop_file=params["stop_file"],
                        cgroups=cgroups, warmup=params["warmup"], cgroup_root=params["cgroup_root"],
                        active_files=params["active_files"], active_min_rate=params["active_min_rate"],
                        idle_s=params["idle_s"], ready_file=params["ready_file"])
    except SamplingError as exc:
        module.fail_json(msg=f"cpu_sample: {exc}")
    except OSError as exc:
        module.fail_json(msg=f"cpu_sample: cannot read {exc.filename or '/proc/stat'}: {exc.strerror or exc}")
    changed = False
    if params["dest"]:
        try:
            write_json_atomic(params["dest"], result)
        except OSError as exc:
            module.fail_json(msg=f"cpu_sample: cannot write dest {params['dest']}: {exc}")
        changed = True
    # ``warnings`` is reserved by Ansible (deprecated in exit_json since 2.19): show
    # each through module.warn; the list stays in ansible_facts.cpu_sample.warnings.
    for message in result["warnings"]:
        module.warn(f"cpu_sample: {message}")
    top_level = {key: value for key, value in result.items() if key != "warnings"}
    module.exit_json(changed=changed, ansible_facts={"cpu_sample": result}, **top_level)


if __name__ == "__main__":
    main()
