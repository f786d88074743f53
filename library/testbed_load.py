#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run one load where it runs, its CPU window sampled beside it, in one call (action plugin testbed_load)."""

DOCUMENTATION = r"""
---
module: testbed_load
short_description: Run one load (a benchmark tool) under its deadline, its CPU window sampled beside it, and parse it
description:
  - One call for what the role C(testbed_workload) otherwise does in a dozen tasks (its entry point C(load)).
    The tool runs where it runs (the task's host, or O(exec) into a container there) with C(LC_ALL=C), under
    C(timeout -k 3) at its deadline (O(timeout_s), else O(deadline_factor) x O(estimate_s) + O(deadline_margin_s),
    else O(deadline_default_s)), inside the watchdog when O(watch) names the hosts it needs, recorded as
    O(record) in O(record_dir) by the command itself when given (so that an interrupted run is stopped by its
    record); with O(cpu), C(/proc/stat) and the given cgroups are sampled on that host over the load's window
    (the rules of M(cpu_sample)); the output is parsed on the controller by the tool's parser (M(tool_parse)).
  - An action plugin builds the command on the controller (module_utils C(testbed_load)); this module runs it
    on the host, reads its output and returns; the parse runs on the controller. No Python runs beside the
    tool but this module, which waits.
  - The result is C(testbed_workload_result)'s shape (returned as RV(result)); a tool that fails, overruns or
    prints nothing gives a result with C(parsed) null and C(error) saying why - the task does not fail, the
    caller judges the point. Bad settings fail the task with one sentence.
version_added: "1.2.0"
author: Testbed contributors
options:
  tool:
    description: The tool (the command's name, and the parser M(tool_parse) uses).
    type: str
    required: true
  args:
    description: The tool's arguments.
    type: list
    elements: str
    default: []
  host:
    description: The inventory host the tool runs on, as the result names it (default the task's host).
    type: str
  exec:
    description: C(none) (on the host), or the runtime whose C(exec) runs it in O(container) there.
    type: str
    choices: [none, docker, podman, lxc]
    default: none
  container:
    description: The container O(exec) runs the tool in.
    type: str
    default: ""
  chdir:
    description: The working directory of the tool (where the tool runs).
    type: str
    default: ""
  wrapper:
    description: Argv put before the tool, inside the deadline (for example C([prlimit, --nofile=4096:])).
    type: list
    elements: str
    default: []
  output:
    description:
      - What the parser reads, C(stdout), C(stderr) or C(file) (O(output_file) in the working directory,
        removed before the run). Empty - the tool's own (stderr for xz, the file hpccoutf.txt for hpcc, stdout
        for the others).
    type: str
    default: ""
  output_file:
    description: The file the tool writes its report to, for O(output=file).
    type: str
    default: ""
  parse_options:
    description: The parser's own options (M(tool_parse)).
    type: dict
    default: {}
  timeout_s:
    description: The caller's own stop in seconds, for a tool that never ends by itself (0 - none).
    type: float
    default: 0
  estimate_s:
    description: The seconds the load is planned to take (0 - no estimate, the default deadline).
    type: float
    default: 0
  deadline_factor:
    description: The deadline is this many times the estimate, plus O(deadline_margin_s).
    type: float
    default: 3
  deadline_margin_s:
    description: Seconds added to the estimate's multiple.
    type: float
    default: 60
  deadline_default_s:
    description: The deadline of a load without an estimate.
    type: float
    default: 3600
  client_grace_s:
    description:
      - Seconds past the deadline's kill (3 s after the deadline) that the command may take to return. A command that
        has not returned by then - a C(docker exec) client waiting on a daemon that hangs, outside the tool's own
        C(timeout) - is killed; the run is an overrun and C(hung) in RV(result) says so.
    type: float
    default: 30
  watch:
    description: The hosts and guests the load needs, C([{name, address, port}]) (see C(testbed_workload_watch)).
    type: list
    elements: dict
    default: []
  watch_interval_s:
    description: Seconds between two rounds of the watchdog's probes.
    type: int
    default: 5
  watch_misses:
    description: Silent rounds in a row that stop the load.
    type: int
    default: 2
  watch_probe_timeout_s:
    description: The bound of one probe.
    type: int
    default: 2
  record:
    description: Record the run under this name (empty - not recorded).
    type: str
    default: ""
  record_dir:
    description: The absolute directory of the record, where the tool runs.
    type: str
    default: ""
  cpu:
    description:
      - The CPU window, sampled on the host while the load runs (M(cpu_sample)'s options C(duration),
        C(interval), C(warmup), C(cgroups), C(cgroup_root)); returned as RV(cpu). Omitted - no sampling.
    type: dict
  argv:
    description: Set by the action plugin (the command line it built from the options above); not given by hand.
    type: list
    elements: str
  reader:
    description: Set by the action plugin (the command that reads O(output_file)).
    type: list
    elements: str
    default: []
  before:
    description: Set by the action plugin (the command that removes the old O(output_file)).
    type: list
    elements: str
    default: []
  after:
    description: Set by the action plugin (the command that forgets the record once the run has ended).
    type: list
    elements: str
    default: []
  bound_s:
    description: Set by the action plugin (the deadline, its kill and O(client_grace_s)); 0 - no bound of its own.
    type: float
    default: 0
notes:
  - Call it as a task (the action plugin of the same name builds the command and parses); the module part runs
    the command on the host.
seealso:
  - module: cpu_sample
  - module: tool_parse
"""

EXAMPLES = r"""
- name: Run iperf3 in the client container, the CPU of the host and the chain's containers sampled over its window
  testbed_load:
    tool: iperf3
    exec: docker
    container: nfv-client
    args: [--client, 10.0.0.2, --time, "10", --json]
    estimate_s: 10
    record: iperf3_load
    record_dir: /run/testbed-nfv
    cpu: {duration: 8, interval: 1, warmup: 1, cgroups: {client: docker/0123abcd}}
  register: load
"""

RETURN = r"""
result:
  description:
    - The run as C(testbed_workload_result) has it - C(tool), C(argv), C(output), C(host), C(rc), C(deadline_s),
      C(estimate_s), C(overran), C(finished), C(watchdog), C(stdout), C(stderr), C(output_text), C(started_at),
      C(finished_at), C(duration_s), C(parsed) (the parser's result, or null), C(error) and C(hung) (null, or
      why the command was killed at its own bound).
  returned: always
  type: dict
cpu:
  description: The CPU window's result (M(cpu_sample)'s shape), or null without O(cpu).
  returned: always
  type: dict
"""

import os  # noqa: E402
import signal  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_sampling import SamplingError, sample  # noqa: E402


def _quiet(module, argv):
    """Run a helper command (remove the old output file, forget the record); its failure is not the load's."""
    if argv:
        module.run_command(argv, check_rc=False, errors="surrogate_then_replace")


def _children():
    """The pids of this process's children (read from /proc: run_command does not give its child's pid)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields and int(fields[1]) == os.getpid():
            pids.append(int(entry))
    return pids


def _run_bounded(module, argv, bound_s):
    """module.run_command under a bound of its own: ``(rc, stdout, stderr, hung)``. The tool's ``timeout`` runs
    inside the exec prefix; a client outside it (``docker exec`` waiting on a daemon that hangs) is killed at
    ``bound_s`` and ``hung`` says so."""
    box = {}

    def target():
        box["answer"] = module.run_command(argv, check_rc=False, errors="surrogate_then_replace")
    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(bound_s if bound_s > 0 else None)
    if not worker.is_alive():
        return box["answer"] + ("",)
    killed = []
    for pid in _children():
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except OSError:
            pass
    worker.join(10)
    out, err = box.get("answer", (137, "", ""))[1:]
    hung = (f"the command had not returned {bound_s:g} s after it started and was killed (pid "
            f"{', '.join(map(str, killed)) or 'none found'}): {argv[0]}, outside the tool's own timeout, did not "
            f"return after the deadline - a daemon that hangs?")
    return 137, out, err, hung


def main():
    module = AnsibleModule(
        argument_spec=dict(
            tool=dict(type="str", required=True),
            args=dict(type="list", elements="str", default=[]),
            host=dict(type="str"),
            exec=dict(type="str", choices=["none", "docker", "podman", "lxc"], default="none"),
            container=dict(type="str", default=""),
            chdir=dict(type="str", default=""),
            wrapper=dict(type="list", elements="str", default=[]),
            output=dict(type="str", default=""),
            output_file=dict(type="str", default=""),
            parse_options=dict(type="dict", default={}),
            timeout_s=dict(type="float", default=0),
            estimate_s=dict(type="float", default=0),
            deadline_factor=dict(type="float", default=3),
            deadline_margin_s=dict(type="float", default=60),
            deadline_default_s=dict(type="float", default=3600),
            client_grace_s=dict(type="float", default=30),
            watch=dict(type="list", elements="dict", default=[]),
            watch_interval_s=dict(type="int", default=5),
            watch_misses=dict(type="int", default=2),
            watch_probe_timeout_s=dict(type="int", default=2),
            record=dict(type="str", default=""),
            record_dir=dict(type="str", default=""),
            cpu=dict(type="dict"),
            argv=dict(type="list", elements="str"),
            reader=dict(type="list", elements="str", default=[]),
            before=dict(type="list", elements="str", default=[]),
            after=dict(type="list", elements="str", default=[]),
            bound_s=dict(type="float", default=0),
        ),
        supports_check_mode=False,
    )
    params = module.params
    if not params["argv"]:
        module.fail_json(msg="testbed_load: run it as a task (its action plugin builds the command line), not the module alone")
    _quiet(module, params["before"])
    # The CPU window is sampled in a thread beside the tool; the tool ends by itself or at its deadline (the
    # `timeout -k 3` in its argv, inside the exec prefix).
    sampled = {}
    spec = params["cpu"]

    def sampler():
        try:
            sampled["result"] = sample(float(spec["duration"]), interval=float(spec.get("interval", 1.0)),
                                       cgroups=spec.get("cgroups") or {}, warmup=float(spec.get("warmup", 0.0)),
                                       cgroup_root=spec.get("cgroup_root") or "/sys/fs/cgroup")
        except (SamplingError, OSError, KeyError, TypeError, ValueError) as exc:
            sampled["error"] = f"cpu window: {exc}"
    thread = threading.Thread(target=sampler, daemon=True) if spec else None
    clock = time.monotonic()
    if thread:
        thread.start()
    rc, out, err, hung = _run_bounded(module, params["argv"], params["bound_s"])
    duration = time.monotonic() - clock
    if thread:
        thread.join(timeout=float(spec.get("duration", 0)) + float(spec.get("warmup", 0)) + 30)
    _quiet(module, params["after"])
    reader = {}
    if params["reader"]:
        code, text, problem = module.run_command(params["reader"], check_rc=False, errors="surrogate_then_replace")
        reader = {"reader_stdout": text.rstrip("\r\n"), "reader_stderr": problem.rstrip("\r\n") or ("" if code == 0 else f"rc {code}")}
    module.exit_json(changed=False, rc=rc, stdout=out.rstrip("\r\n"), stderr=err.rstrip("\r\n"), msg="", hung=hung,
                     duration_s=round(duration, 6), cpu=sampled.get("result"), cpu_error=sampled.get("error"), **reader)


if __name__ == "__main__":
    main()
