#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start, record and stop the background processes the testbed leaves on a host (module_utils testbed_procs)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: testbed_procs
short_description: Record the testbed's background processes on a host and stop exactly those later
description:
  - Every background process the testbed starts on a host (a server, a load generator, an async poller or writer)
    is recorded in a per-experiment directory on that host, C(/var/lib/testbed/<experiment>/procs/<name>.json) - its
    pid, its start time in clock ticks since boot (C(/proc/<pid>/stat) field 22), its cmdline and the host's boot id.
  - I(state=stopped) (the experiments' setup and recover hooks - the leftovers of an interrupted run) stops the
    recorded processes that are still alive B(and still match) - same start time, same cmdline, same boot - with their
    descendants, SIGTERM then SIGKILL after I(grace_s); then removes the records. A PID that another process took over
    is never signalled, whatever its name; a process the testbed did not record (an operator's own C(fio)) is never
    touched.
  - "Three ways to record: I(state=started) starts I(argv) detached (own session, stdin C(/dev/null), output to
    I(log)) and records it; I(state=recorded) records a running process by I(pid) or by a I(pidfile) it wrote
    (C(iperf3 --daemon --pidfile); a process started under Ansible's C(async) through C(sh -c 'echo $$ > FILE; exec
    \"$@\"')) - a pid file's process must have started before the file was written, else it is not the writer; a
    module of the project records its own process (C(proc_record) of M(storage_rebuild_poll) and M(storage_fileset))."
  - Ansible's async status file (C(~/.ansible_async/<jid>)) does not hold the job's pid while it runs (the jid's
    number is the pid of the wrapper process that exits at once), so an async job is recorded by its own process
    (a pid file, or the module recording itself), never through the status file.
version_added: "1.0.0"
author: Testbed contributors
options:
  state:
    description: C(started), C(recorded) or C(stopped).
    type: str
    choices: [started, recorded, stopped]
    default: stopped
  experiment:
    description: The experiment; the records are in C(/var/lib/testbed/<experiment>/procs) unless I(dir) is given.
    type: str
  dir:
    description: The record directory (overrides I(experiment)).
    type: path
  name:
    description: The record's name (I(state=started), I(state=recorded)), a file name without C(.json).
    type: str
  names:
    description: I(state=stopped) - only these records (default every record in the directory).
    type: list
    elements: str
  argv:
    description: I(state=started) - the command to start.
    type: list
    elements: str
  log:
    description: I(state=started) - the file its stdout and stderr are appended to (default C(<dir>/<name>.log)).
    type: path
  chdir:
    description: I(state=started) - its working directory.
    type: path
  pid:
    description: I(state=recorded) - the process id to record.
    type: int
  pidfile:
    description: I(state=recorded) - a file holding the process id (written by the process, or by its parent).
    type: path
  wait_s:
    description: I(state=recorded) - seconds to wait for I(pidfile) to appear (a daemon writes it after it forks).
    type: float
    default: 5
  grace_s:
    description: I(state=stopped) - seconds between SIGTERM and SIGKILL.
    type: float
    default: 10
notes:
  - Check mode - I(state=stopped) reports what it would stop (RV(stopped)) and signals and removes nothing;
    I(state=started) starts nothing; I(state=recorded) reads the process and writes no record.
  - Linux only (C(/proc)).
seealso:
  - module: storage_rebuild_poll
"""

EXAMPLES = r"""
- name: Stop what an interrupted run left (setup and recover hooks)
  testbed_procs:
    experiment: storage_compare
    state: stopped
  register: leftovers

- name: Start sockperf's server detached, recorded
  testbed_procs:
    experiment: container_compare
    state: started
    name: sockperf_server
    argv: [sockperf, server, --tcp, --ip, 0.0.0.0, --port, "11111"]

- name: Record the iperf3 daemon by the pid file it wrote
  testbed_procs:
    experiment: container_compare
    state: recorded
    name: iperf3_server
    pidfile: /var/lib/testbed/container_compare/procs/iperf3_server.pid

- name: Stop the servers of an earlier segment only
  testbed_procs:
    experiment: container_compare
    names: [iperf3_server, sockperf_server]
"""

RETURN = r"""
dir:
  description: The record directory.
  returned: always
  type: str
  sample: /var/lib/testbed/storage_compare/procs
record:
  description: The record written (I(state=started), I(state=recorded)); null when the process had already ended.
  returned: when state is started or recorded
  type: dict
  sample: {name: sockperf_server, pid: 4242, starttime: 1234567, cmdline: [sockperf, server], boot_id: "9f0c...",
           experiment: container_compare, recorded_at: 1764268800.5, how: started}
pid:
  description: The recorded process id (null when none).
  returned: when state is started or recorded
  type: int
  sample: 4242
stopped:
  description:
    - I(state=stopped) - the recorded processes found alive and stopped (in check mode, that would be), each with the
      pids signalled (the process, then its descendants) and the last signal needed (C(TERM) or C(KILL)).
  returned: when state is stopped
  type: list
  elements: dict
  sample: [{name: rebuild_poll, pid: 4242, cmdline: [/usr/bin/python3], pids: [4242, 4250], signal: TERM}]
gone:
  description: Records whose process had already ended (or the host rebooted since); removed.
  returned: when state is stopped
  type: list
  elements: dict
  sample: [{name: fio, pid: 4100, reason: no process 4100}]
reused:
  description: Records whose PID another process holds now (another start time or cmdline); that process is not
    touched, the record is removed.
  returned: when state is stopped
  type: list
  elements: dict
  sample: [{name: fio, pid: 4100, reason: "pid 4100 belongs to another process now (...)"}]
problems:
  description: Record files that could not be read (named, left in place).
  returned: when state is stopped
  type: list
  elements: str
  sample: []
msg:
  description: One sentence - what was stopped (names and pids), or that nothing was left.
  returned: always
  type: str
  sample: "stopped 1 left over: rebuild_poll (pid 4242)"
"""

import os  # noqa: E402 (Ansible modules import after their documentation)
import time  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_procs import (  # noqa: E402
    ProcsError,
    boot_id,
    boot_time,
    check_name,
    default_dir,
    make_record,
    read_pidfile,
    read_proc,
    record_pid,
    spawn,
    started_before,
    stop,
    write_record,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", default="stopped", choices=["started", "recorded", "stopped"]),
            experiment=dict(type="str"),
            dir=dict(type="path"),
            name=dict(type="str"),
            names=dict(type="list", elements="str"),
            argv=dict(type="list", elements="str"),
            log=dict(type="path"),
            chdir=dict(type="path"),
            pid=dict(type="int"),
            pidfile=dict(type="path"),
            wait_s=dict(type="float", default=5.0),
            grace_s=dict(type="float", default=10.0),
        ),
        required_one_of=[("experiment", "dir")],
        required_if=[("state", "started", ["name", "argv"]), ("state", "recorded", ["name"]),
                     ("state", "recorded", ["pid", "pidfile"], True)],
        mutually_exclusive=[("pid", "pidfile")],
        supports_check_mode=True,
    )
    p = module.params
    try:
        directory = p["dir"] or default_dir(p["experiment"])
        if p["name"] is not None:
            check_name(p["name"])
        for name in p["names"] or []:
            check_name(name)
        if p["state"] == "stopped":
            stopped(module, directory)
        elif p["state"] == "started":
            started(module, directory)
        else:
            recorded(module, directory)
    except (ProcsError, OSError, IOError, ValueError) as exc:
        module.fail_json(msg="testbed_procs (%s, %s): %s" % (p["state"], p["dir"] or p["experiment"], exc))


def stopped(module, directory):
    p = module.params
    result = stop(directory, p["names"], p["grace_s"], module.check_mode)
    result.pop("plan")
    done = ", ".join("%s (pid %s)" % (s["name"], s["pid"]) for s in result["stopped"])
    verb = "would stop" if module.check_mode else "stopped"
    msg = ("%s %d left over: %s" % (verb, len(result["stopped"]), done)) if done else "nothing recorded was left running"
    if result["reused"]:
        msg += "; not touched (pid reused): %s" % ", ".join("%s (pid %s)" % (r["name"], r["pid"]) for r in result["reused"])
    module.exit_json(changed=bool(result["stopped"] or result["removed"]), dir=directory, msg=msg, **result)


def started(module, directory):
    p = module.params
    if module.check_mode:
        module.exit_json(changed=True, dir=directory, record=None, pid=None,
                         msg="would start %s: %s" % (p["name"], " ".join(p["argv"])))
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o700)
    log = p["log"] or os.path.join(directory, p["name"] + ".log")
    pid = spawn(p["argv"], log, p["chdir"])
    record = record_pid(directory, p["name"], pid, p["experiment"], how="started")
    if record is None:
        module.fail_json(msg="testbed_procs: %s ended at once (pid %d); its output: %s"
                         % (" ".join(p["argv"]), pid, tail(log)), dir=directory)
    module.exit_json(changed=True, dir=directory, record=record, pid=pid, log=log,
                     msg="started and recorded %s (pid %d)" % (p["name"], pid))


def recorded(module, directory):
    p = module.params
    pid, mtime = p["pid"], None
    if p["pidfile"]:
        deadline = time.time() + p["wait_s"]
        while True:
            try:
                pid, mtime = read_pidfile(p["pidfile"])
                break
            except (OSError, IOError):
                if time.time() >= deadline:
                    module.fail_json(msg="testbed_procs: pid file %s did not appear within %.0f s"
                                     % (p["pidfile"], p["wait_s"]), dir=directory)
                time.sleep(0.05)
    proc = read_proc(pid)
    if proc is None or proc["state"] in ("Z", "X"):
        module.exit_json(changed=False, dir=directory, record=None, pid=None,
                         msg="%s: process %d has already ended, nothing to record" % (p["name"], pid))
    if mtime is not None and not started_before(proc["starttime"], os.sysconf("SC_CLK_TCK"), boot_time(), mtime):
        module.exit_json(changed=False, dir=directory, record=None, pid=None,
                         msg="%s: process %d started after %s was written: not its writer, nothing recorded"
                         % (p["name"], pid, p["pidfile"]))
    if module.check_mode:
        module.exit_json(changed=True, dir=directory, pid=pid,
                         record=make_record(p["name"], proc, boot_id(), p["experiment"], how="recorded"),
                         msg="would record %s (pid %d)" % (p["name"], pid))
    record = make_record(p["name"], proc, boot_id(), p["experiment"], how="pidfile" if p["pidfile"] else "pid")
    write_record(directory, record)
    module.exit_json(changed=True, dir=directory, record=record, pid=pid,
                     msg="recorded %s (pid %d)" % (p["name"], pid))


def tail(path, size=400):
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - size))
            return handle.read().decode("utf-8", "replace").strip()
    except (OSError, IOError):
        return ""


if __name__ == "__main__":
    main()
