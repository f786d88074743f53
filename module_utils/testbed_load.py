# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One load in one call: the command a load runs with, and the result it gives (controller side).

testbed_workload's entry point ``load`` (action plugin ``testbed_load``) runs a tool where it runs -
under its deadline and watchdog, recorded, its CPU window sampled beside it - in one module call, and
parses its output on the controller. The rules are the ones the role's ``run.yml`` applies task by task:
the exec prefix (``LC_ALL=C``, ``docker``/``podman exec``, ``lxc-attach``), the working directory, the
deadline's ``timeout -k 3`` (``workload_deadline``) inside the watchdog (``workload_watch_argv``), the
record written by the command before it execs the tool (``record_argv``), which output the parser reads,
and the result's shape (``testbed_workload_result``).
"""
from __future__ import absolute_import, division, print_function

import re

from ansible.module_utils.testbed_procs import ProcsError, record_argv, stop_argv
from ansible.module_utils.testbed_sweep import (
    WATCH_STOPPED,
    _fail,
    workload_deadline,
    workload_watch_argv,
    workload_watch_shown,
)

EXECS = ("none", "docker", "podman", "lxc")
# What the parser reads when no output is given: stdout unless the tool is listed (xz -v reports on
# stderr; hpcc appends to hpccoutf.txt in its working directory).
OUTPUTS = {"xz": "stderr", "hpcc": "file"}
OUTPUT_FILES = {"hpcc": "hpccoutf.txt"}
# Parsers that take the run's wall time as an option, and its name (xz prints no speed below 3 s).
WALL_TIME_OPTIONS = {"xz": "wall_s"}
# The deadline's `timeout -k`: the tool is killed this many seconds after its deadline's TERM.
KILL_AFTER_S = 3
# A record's stop grace when the run has ended (the shell stop signals nothing then).
FORGET_GRACE_S = 5


def exec_prefix(exec_kind="none", container=""):
    """The argv prefix that runs a command with ``LC_ALL=C`` on the host or inside a container."""
    fname = "workload_exec_prefix"
    if exec_kind not in EXECS:
        _fail(fname, f"exec must be one of {', '.join(EXECS)}, got {exec_kind!r}")
    if exec_kind != "none" and not str(container or "").strip():
        _fail(fname, f"exec {exec_kind} needs the container's name")
    return {"none": ["env", "LC_ALL=C", "LANG=C"],
            "docker": ["docker", "exec", "--env", "LC_ALL=C", "--env", "LANG=C", str(container)],
            "podman": ["podman", "exec", "--env", "LC_ALL=C", "--env", "LANG=C", str(container)],
            "lxc": ["lxc-attach", "--name", str(container), "--", "env", "LC_ALL=C", "LANG=C"]}[exec_kind]


def _strings(fname, value, what):
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, (list, tuple)):
        _fail(fname, f"{what} must be a list, got {value!r}")
    return [str(item) for item in value]


def workload_command(tool, args=(), exec_kind="none", container="", chdir="", wrapper=(), output="", output_file="",
                     timeout_s=0, estimate_s=0, deadline_factor=3, deadline_margin_s=60, deadline_default_s=3600,
                     watch=(), watch_interval_s=5, watch_misses=2, watch_probe_timeout_s=2, record="", record_dir=""):
    """What one load runs: ``{argv, shown, prefix, output, output_path, reader, before, after, deadline}``.

    ``argv`` is run where the tool runs; ``shown`` is the argv a result keeps (without the record's
    prefix, the watchdog's script shown as ``<testbed-watchdog>``); ``reader`` reads the output file
    (``output: file``) and ``before`` removes it first (the tool may append to it); ``after`` forgets
    the record once the run has ended. Every load gets a deadline (``workload_deadline``)."""
    fname = "workload_command"
    if not re.match(r"^[a-z][a-z0-9_]*$", str(tool or "")):
        _fail(fname, f"tool must be a tool's name (lower-case letters, digits, _), got {tool!r}")
    args = _strings(fname, args, "args")
    wrapper = _strings(fname, wrapper, "wrapper")
    mode = output or OUTPUTS.get(tool, "stdout")
    if mode not in ("stdout", "stderr", "file"):
        _fail(fname, f"output must be stdout, stderr or file, got {mode!r}")
    path = output_file or OUTPUT_FILES.get(tool, "")
    if mode == "file" and not path:
        _fail(fname, f"output file needs output_file (the file {tool} writes)")
    prefix = exec_prefix(exec_kind, container) + (["env", "--chdir=" + str(chdir)] if chdir else [])
    deadline = workload_deadline(timeout_s, estimate_s, deadline_factor, deadline_margin_s, deadline_default_s)
    guard = (workload_watch_argv(list(watch or []), watch_interval_s, watch_misses, watch_probe_timeout_s)
             + ["timeout", "-k", str(KILL_AFTER_S), str(deadline["deadline_s"])])
    tail = ((["sh", "-c", 'exec "$0" "$@" > /dev/null'] if mode == "stderr" else []) + wrapper + [str(tool)] + args)
    shown = prefix + guard + tail
    after = []
    if record:
        if not str(record_dir).startswith("/"):
            _fail(fname, f"record {record!r} needs record_dir, an absolute path where the tool runs (got {record_dir!r})")
        try:
            argv = prefix + guard + record_argv(f"{record_dir}/{record}.json") + tail
            after = prefix + stop_argv(record_dir, [record], FORGET_GRACE_S)
        except ProcsError as exc:
            _fail(fname, str(exc))
    else:
        argv = shown
    return {"argv": argv, "shown": workload_watch_shown(shown), "prefix": prefix, "output": mode,
            "output_path": path if mode == "file" else "",
            "reader": prefix + ["cat", "--", path] if mode == "file" else [],
            "before": prefix + ["rm", "-f", "--", path] if mode == "file" else [],
            "after": after, "deadline": deadline}


def parse_options(tool, options=None, wall_s=None):
    """The parser's options for a run: the caller's, plus the wall time where the parser takes it."""
    merged = dict(options or {})
    if tool in WALL_TIME_OPTIONS and wall_s is not None:
        merged[WALL_TIME_OPTIONS[tool]] = wall_s
    return merged


def workload_result(tool, host, command, answer, started_at, finished_at, parsed=None, parse_error=None):
    """The run as ``testbed_workload_result`` has it, from the module's ``answer``
    (``{rc, stdout, stderr, reader_stdout, reader_stderr, duration_s, msg}``) and the parse."""
    answer = answer or {}
    deadline = command["deadline"]
    rc = answer.get("rc")
    stderr = answer.get("stderr") or ""
    watchdog = next((line for line in stderr.splitlines() if line.startswith(WATCH_STOPPED)), "")
    hung = answer.get("hung") or None
    mode = command["output"]
    output_text = None if mode == "stdout" else (answer.get("reader_stdout") or "" if mode == "file" else stderr)
    error = None
    if parsed is None:
        error = " ".join(part for part in (answer.get("msg") or "", stderr, answer.get("reader_stderr") or "") if part)
        error = (error.strip() + " -> " + (parse_error or "parse failed")).strip()
    return {
        "tool": tool, "argv": command["shown"], "output": mode, "host": host, "rc": rc,
        "deadline_s": deadline["deadline_s"], "estimate_s": deadline["estimate_s"],
        # stopped at the deadline (timeout's 124, or 137 after its -k), not at the caller's own timeout_s,
        # nor by the watchdog; or its command killed at its own bound (hung: a client outside the timeout)
        "overran": bool(hung) or (deadline["from"] != "timeout" and rc in (124, 137) and not watchdog),
        "finished": True, "watchdog": watchdog or None, "hung": hung,
        "stdout": answer.get("stdout") or "", "stderr": stderr, "output_text": output_text,
        "started_at": started_at, "finished_at": finished_at, "duration_s": answer.get("duration_s"),
        "parsed": parsed, "error": error,
    }
