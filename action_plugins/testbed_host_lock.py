# -*- coding: utf-8 -*-
"""Action plugin: take or release the one-run-per-host lock (module library/testbed_host_lock.py).

On the controller it fills in the owner - the experiment, the run id when given, this controller's
host name and boot id, and the ansible-playbook process (the worker's parent) with its start
time - runs the module on the host, and when the host's lock is another run's, asks whether that
run still runs: on this controller in this boot by its process (pid and start time), after a
reboot it does not, on another controller it cannot tell. A lock whose run is gone is taken over
(the result's ``msg`` says so); any other is refused with one sentence that names the other run.
The rules are module_utils/testbed_host_lock.py's. Documentation: library/testbed_host_lock.py.
"""
from __future__ import annotations

import os
import socket
import time

from ansible.module_utils.testbed_host_lock import (
    DEFAULT_PATH,
    describe,
    holder_alive,
    pid_start_of,
    refusal,
    takeover_note,
    token,
)
from ansible.plugins.action import ActionBase


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def controller_owner(experiment, run=None):
    """This ansible-playbook run as a lock owner (called in a worker process, whose parent is the playbook)."""
    pid = os.getppid()
    stat = _read("/proc/%d/stat" % pid)
    pid_start = pid_start_of(stat)
    boot_id = (_read("/proc/sys/kernel/random/boot_id") or "").strip() or "unknown"
    started = None
    if pid_start is not None:
        btime = [line.split()[1] for line in (_read("/proc/stat") or "").splitlines() if line.startswith("btime ")]
        if btime:
            started = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                    time.gmtime(int(btime[0]) + pid_start / os.sysconf("SC_CLK_TCK")))
    owner = {"experiment": experiment, "controller": socket.gethostname(), "boot_id": boot_id, "pid": pid,
             "pid_start": pid_start if pid_start is not None else 0,
             "started": started or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if run:
        owner["run"] = run
    return owner


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("state", "experiment", "run", "path", "directory_mode", "subject"))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        state = args.get("state", "present")
        path = args.get("path") or DEFAULT_PATH
        experiment = args.get("experiment")
        if state not in ("present", "absent") or not experiment:
            return dict(result, failed=True,
                        msg="testbed_host_lock: needs experiment and state present or absent, got %r" % (dict(args),))
        owner = controller_owner(experiment, args.get("run"))
        task_vars = task_vars or {}
        delegated = task_vars.get("ansible_delegated_vars") or {}
        host = next(iter(delegated), None) or task_vars.get("inventory_hostname", "host")
        module_args = {"state": state, "path": path, "owner": owner}
        if args.get("directory_mode") is not None:
            module_args["directory_mode"] = args["directory_mode"]
        subject = args.get("subject")
        # the module's own failures (a lock it cannot write) name the host, or what the lock is of
        module_args["subject"] = subject or host
        out = self._execute_module(module_name="testbed_host_lock", module_args=module_args, task_vars=task_vars)
        result.update(out)
        if out.get("failed") or out.get("unreachable") or state == "absent" or out.get("taken"):
            return result
        holder = out.get("held_by")
        alive = holder_alive(holder, owner, _read("/proc/%s/stat" % (holder or {}).get("pid")))
        if alive is False:
            again = self._execute_module(module_name="testbed_host_lock",
                                         module_args=dict(module_args, takeover=token(holder)), task_vars=task_vars)
            result.update(again)
            if again.get("taken") and not again.get("failed"):
                result["msg"] = takeover_note(subject or host, holder)
                return result
            holder = again.get("held_by") or holder
        result.update(failed=True, msg=refusal(host, holder, path, subject), holder=describe(holder))
        return result
