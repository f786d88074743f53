# -*- coding: utf-8 -*-
"""Action plugin: one load in one call (module library/testbed_load.py; testbed_workload's entry point ``load``).

On the controller it builds the command the way roles/testbed_workload/tasks/run.yml does (the rules
are module_utils/testbed_load.py's), runs the module where the tool runs - the tool under its deadline,
the CPU window sampled beside it - and parses the output here with the tool's parser
(module_utils/testbed_parsers.py), so that a load costs one round trip, not a dozen tasks.
"""
from __future__ import annotations

import datetime
import os

# One import convention (docs/architecture.md, "Python imports"): pure shared
# libraries live in a module_utils/ folder - the repository's, or a role's own -
# and are imported as ansible.module_utils.<name>, the name Ansible gives them in a
# module. On the controller every module_utils/ folder one to three levels above
# this file is put on that package's path; a collection build rewrites the imports.
import ansible.module_utils  # noqa: E402

for _up in (1, 2, 3):
    _dir = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * _up, "module_utils"))
    if os.path.isdir(_dir) and _dir not in ansible.module_utils.__path__:
        ansible.module_utils.__path__.append(_dir)

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible.module_utils.testbed_load import KILL_AFTER_S, parse_options, workload_command, workload_result  # noqa: E402
from ansible.module_utils.testbed_parse import ParseError  # noqa: E402
from ansible.module_utils.testbed_parsers import PARSERS, parser_options  # noqa: E402
from ansible.plugins.action import ActionBase  # noqa: E402

OPTIONS = {  # option: default (None: required or optional without a default)
    "tool": None, "args": [], "host": None, "exec": "none", "container": "", "chdir": "", "wrapper": [],
    "output": "", "output_file": "", "parse_options": {}, "timeout_s": 0, "estimate_s": 0, "deadline_factor": 3,
    "deadline_margin_s": 60, "deadline_default_s": 3600, "watch": [], "watch_interval_s": 5, "watch_misses": 2,
    "watch_probe_timeout_s": 2, "record": "", "record_dir": "", "cpu": None, "client_grace_s": 30,
}


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(OPTIONS)

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        opts = {name: self._task.args.get(name, default) for name, default in OPTIONS.items()}
        tool = opts["tool"]
        if tool not in PARSERS:
            return dict(result, failed=True, msg=f"testbed_load: tool must be one of {', '.join(sorted(PARSERS))} "
                                                 f"(a tool with a parser), got {tool!r}")
        unknown = sorted(set(opts["parse_options"] or {}) - set(parser_options(tool)))
        if unknown:
            return dict(result, failed=True, msg=f"testbed_load: parse_options {', '.join(unknown)} are not options of "
                                                 f"the {tool} parser (it takes: {', '.join(parser_options(tool)) or 'none'})")
        if opts["cpu"] is not None and (not isinstance(opts["cpu"], dict) or "duration" not in opts["cpu"]):
            return dict(result, failed=True, msg=f"testbed_load: cpu must be the window {{duration, interval, warmup, "
                                                 f"cgroups}}, got {opts['cpu']!r}")
        try:
            command = workload_command(
                tool, opts["args"], opts["exec"], opts["container"], opts["chdir"], opts["wrapper"], opts["output"],
                opts["output_file"], opts["timeout_s"], opts["estimate_s"], opts["deadline_factor"],
                opts["deadline_margin_s"], opts["deadline_default_s"], opts["watch"], opts["watch_interval_s"],
                opts["watch_misses"], opts["watch_probe_timeout_s"], opts["record"], opts["record_dir"])
        except AnsibleFilterError as exc:
            return dict(result, failed=True, msg=f"testbed_load: {exc}")
        delegated = task_vars.get("ansible_delegated_vars") or {}
        host = opts["host"] or next(iter(delegated), None) or task_vars.get("inventory_hostname")
        try:
            grace = float(opts["client_grace_s"])
        except (TypeError, ValueError):
            grace = -1.0
        if grace < 0:
            return dict(result, failed=True, msg=f"testbed_load: client_grace_s must be a number of seconds, 0 or more, "
                                                 f"got {opts['client_grace_s']!r}")
        # the command's own bound: its client (docker exec, ...) runs outside the tool's timeout
        module_args = {"tool": tool, "argv": command["argv"], "reader": command["reader"], "before": command["before"],
                       "after": command["after"], "bound_s": float(command["deadline"]["deadline_s"]) + KILL_AFTER_S + grace}
        if opts["cpu"] is not None:
            module_args["cpu"] = opts["cpu"]
        started = _now()
        answer = self._execute_module(module_name="testbed_load", module_args=module_args, task_vars=task_vars)
        finished = _now()
        if answer.get("unreachable"):
            # the host stopped answering: the sweep probes it (a fault); the result says what the run got
            gone = {"rc": None, "msg": answer.get("msg") or "unreachable", "stdout": "", "stderr": ""}
            return dict(result, **answer, cpu=None, result=workload_result(tool, host, command, gone, started, finished,
                                                                           None, "no output: the host did not answer"))
        if answer.get("failed"):
            # the module could not run (no Python there, ...): the run has no output, and the result says why
            answer = {"rc": None, "msg": answer.get("msg") or "the module failed", "stdout": "", "stderr": ""}
        text = {"stdout": answer.get("stdout"), "stderr": answer.get("stderr"),
                "file": answer.get("reader_stdout")}[command["output"]] or ""
        parsed, parse_error = None, None
        try:
            parsed = PARSERS[tool](text, source=f"{tool} on {host}",
                                   **parse_options(tool, opts["parse_options"], answer.get("duration_s")))
        except ParseError as exc:
            parse_error = str(exc)
        warnings = [f"{tool} on {host}: {message}" for message in (parsed or {}).get("warnings") or []]
        cpu = answer.get("cpu")
        if opts["cpu"] is not None and cpu is None:
            cpu = {"failed": True, "msg": answer.get("cpu_error") or "no CPU window was sampled"}
        elif cpu is not None:
            warnings += [f"cpu window on {host}: {message}" for message in cpu.get("warnings") or []]
        if warnings:
            result["warnings"] = warnings
        result.update(changed=False, cpu=cpu,
                      result=workload_result(tool, host, command, answer, started, finished, parsed, parse_error))
        return result
