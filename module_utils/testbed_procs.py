# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Background processes the testbed starts on a host, recorded so that a later run stops exactly those.

A record is one JSON file ``<dir>/<name>.json`` (``dir`` is per experiment, by default
``/var/lib/testbed/<experiment>/procs``) holding the process's ``pid``, its start time in clock ticks
since boot (``/proc/<pid>/stat`` field 22), its ``cmdline`` and the host's ``boot_id``. A process is
the recorded one only while all of them still match: a PID reused by another process after the
recorded one ended has another start time (or cmdline), a PID after a reboot another boot id. Only a
match is stopped (SIGTERM, then SIGKILL after a grace period), with its descendants as they were when
the stop began (a ``sh -c`` and its ``cp``); an operator's process of the same name never is.

The pure functions (``parse_stat``, ``parse_cmdline``, ``judge``, ``descendants``, ``plan_stop``,
``started_before``) decide; the rest reads ``/proc``, writes records and sends signals.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import re
import signal
import subprocess
import time

DEFAULT_ROOT = "/var/lib/testbed"
NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")

# A process that records itself, with no Python started on the host (a load's
# timed window stays free of it): ``sh -c SH_RECORD <dir>/<name>.json ARGV...``
# writes the record of its own pid - start time from /proc/$$/stat field 22, the
# sha256 of the cmdline ARGV will have (the NUL-terminated arguments, as
# /proc/<pid>/cmdline holds them), the boot id - atomically, then execs ARGV:
# same pid, same start time, so the record is the program's. Under Ansible's
# async wrapper this is how a job's pid is known (its status file has none).
SH_RECORD = (
    'd=${0%/*}; mkdir -p -m 0700 "$d"'
    ' && st=$(awk \'{sub(/^.*\\) /, ""); print $20}\' /proc/$$/stat)'
    ' && sum=$(printf \'%s\\0\' "$@" | sha256sum)'
    ' && printf \'{"pid": %d, "starttime": %d, "cmdline_sha256": "%s", "boot_id": "%s", "how": "sh"}\\n\''
    ' "$$" "$st" "${sum%% *}" "$(cat /proc/sys/kernel/random/boot_id)" > "$0.tmp"'
    ' && mv -f "$0.tmp" "$0" && exec "$@"'
)


class ProcsError(Exception):
    """A bad input: a record name, a record file, a pid file."""


# --- pure functions ---------------------------------------------------------------------------------------


def parse_stat(text):
    """``/proc/<pid>/stat`` -> ``{pid, comm, state, ppid, pgid, starttime}``.

    The command name (field 2) is in parentheses and may itself hold spaces and parentheses: the
    fields after it are counted from its *last* ``)``. ``starttime`` is field 22, in clock ticks
    since boot.
    """
    text = (text or "").strip()
    open_at, close_at = text.find("("), text.rfind(")")
    if open_at < 1 or close_at < open_at:
        raise ProcsError("not a /proc/<pid>/stat line: %r" % text[:80])
    rest = text[close_at + 2:].split()
    if len(rest) < 20:
        raise ProcsError("/proc/<pid>/stat has %d fields after the command name, 20 expected: %r"
                         % (len(rest), text[:120]))
    try:
        return {"pid": int(text[:open_at].strip()), "comm": text[open_at + 1:close_at], "state": rest[0],
                "ppid": int(rest[1]), "pgid": int(rest[2]), "starttime": int(rest[19])}
    except ValueError:
        raise ProcsError("/proc/<pid>/stat holds a non-number where a pid or start time belongs: %r" % text[:120]) from None


def parse_cmdline(raw):
    """``/proc/<pid>/cmdline`` (bytes, NUL-separated) -> list of str (undecodable bytes kept as escapes)."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    if raw.endswith(b"\0"):
        raw = raw[:-1]
    if not raw:
        return []
    return [part.decode("utf-8", "surrogateescape") for part in raw.split(b"\0")]


# The stop for a host or container without Python (the NFV tool image):
# ``sh -c SH_STOP <dir> <grace_s> [name...]`` stops the processes of the records
# SH_RECORD wrote (every record of <dir> when no name is given) - only while
# the pid's start time, cmdline sha256 and the boot id still match: SIGTERM,
# SIGKILL after grace_s - and removes each record of a stopped, ended or reused
# process. It prints one line per record: ``stopped NAME PID TERM|KILL``,
# ``gone NAME PID``, ``reused NAME PID`` or ``skipped NAME (reason)``. It signals
# the recorded process only, not its descendants (module testbed_procs does
# both): for single-process tools.
SH_STOP = r"""d=$0; g=${1:-10}; shift
[ $# -gt 0 ] || set -- $(cd "$d" 2>/dev/null && for f in *.json; do [ -f "$f" ] && echo "${f%.json}"; done)
b=$(cat /proc/sys/kernel/random/boot_id)
m() { s=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1; s=${s##*') '}; set -- $s
  [ "$1" != Z ] && [ "$1" != X ] && [ "${20}" = "$st" ] \
  && [ "$(sha256sum < "/proc/$pid/cmdline" | cut -c1-64)" = "$sum" ]; }
for n in "$@"; do
  f="$d/$n.json"; [ -f "$f" ] || continue
  pid=$(sed -n 's/.*"pid": *\([0-9][0-9]*\).*/\1/p' "$f"); st=$(sed -n 's/.*"starttime": *\([0-9][0-9]*\).*/\1/p' "$f")
  sum=$(sed -n 's/.*"cmdline_sha256": *"\([0-9a-f]*\)".*/\1/p' "$f"); rb=$(sed -n 's/.*"boot_id": *"\([^"]*\)".*/\1/p' "$f")
  if [ -z "$pid" ] || [ "$pid" -le 1 ] || [ -z "$st" ] || [ -z "$sum" ]; then echo "skipped $n (no pid, start time or cmdline sha256)"; continue; fi
  if [ -n "$rb" ] && [ "$rb" != "$b" ]; then echo "gone $n $pid"
  elif m; then kill -TERM "$pid" 2>/dev/null; i=0
    while m && [ "$i" -lt "$((g * 10))" ]; do sleep 0.1; i=$((i + 1)); done
    k=TERM; if m; then kill -KILL "$pid" 2>/dev/null; k=KILL; fi; echo "stopped $n $pid $k"
  elif [ -r "/proc/$pid/stat" ] && ! grep -q '[)] [ZX] ' "/proc/$pid/stat"; then echo "reused $n $pid"
  else echo "gone $n $pid"; fi
  rm -f "$f"
done; true"""


def stop_argv(directory, names=None, grace_s=10):
    """The argv of the shell stop (:data:`SH_STOP`) for ``names`` (all records when empty) in ``directory``."""
    if not str(directory).startswith("/"):
        raise ProcsError("the record directory must be an absolute path, got %r" % (directory,))
    return ["sh", "-c", SH_STOP, str(directory), str(int(grace_s))] + [check_name(n) for n in names or []]


def parse_stop_output(text):
    """The shell stop's lines -> ``{stopped: [{name, pid, signal}], gone, reused: [{name, pid}], skipped: [line]}``."""
    result = {"stopped": [], "gone": [], "reused": [], "skipped": []}
    for line in (text or "").splitlines():
        words = line.split()
        if len(words) == 4 and words[0] == "stopped" and words[2].isdigit():
            result["stopped"].append({"name": words[1], "pid": int(words[2]), "signal": words[3]})
        elif len(words) == 3 and words[0] in ("gone", "reused") and words[2].isdigit():
            result[words[0]].append({"name": words[1], "pid": int(words[2])})
        elif words and words[0] == "skipped":
            result["skipped"].append(line)
    return result


def record_argv(path):
    """The argv prefix that makes the command after it record itself as ``path`` (``<dir>/<name>.json``)."""
    directory, base = os.path.split(str(path))
    if not directory.startswith("/") or not base.endswith(".json"):
        raise ProcsError("a process record is an absolute <dir>/<name>.json path, got %r" % (path,))
    check_name(base[:-5])
    return ["sh", "-c", SH_RECORD, str(path)]


def cmdline_sha256(cmdline):
    """The sha256 of a cmdline as /proc/<pid>/cmdline holds it (each argument NUL-terminated)."""
    raw = b"".join(part.encode("utf-8", "surrogateescape") + b"\0" for part in cmdline or [])
    return hashlib.sha256(raw).hexdigest()


def check_name(name):
    """A record name: letters, digits, ``_ . -``, not starting with a dot (it names a file)."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ProcsError("record name %r: use letters, digits, '_', '.', '-' (at most 100), not starting with '.'"
                         % (name,))
    return name


def make_record(name, proc, boot_id=None, experiment=None, recorded_at=None, how=None):
    """The record of the live process ``proc`` (as :func:`read_proc` returns it)."""
    check_name(name)
    return {"name": name, "pid": proc["pid"], "starttime": proc["starttime"], "cmdline": list(proc["cmdline"]),
            "boot_id": boot_id, "experiment": experiment,
            "recorded_at": recorded_at if recorded_at is not None else round(time.time(), 3), "how": how}


def judge(record, proc, boot_id=None):
    """``(verdict, reason)`` for a record against the process now holding its PID (None: no such process).

    ``alive`` - the recorded process, still running: stop it. ``gone`` - it ended (no process, a zombie,
    or the host rebooted since). ``reused`` - another process has the PID now (another start time or
    cmdline): never touched.
    """
    pid = record.get("pid")
    if record.get("boot_id") and boot_id and record["boot_id"] != boot_id:
        return "gone", "pid %s was recorded before the host rebooted" % pid
    if proc is None:
        return "gone", "no process %s" % pid
    if proc.get("state") in ("Z", "X"):
        return "gone", "process %s has ended (state %s)" % (pid, proc["state"])
    if proc.get("starttime") != record.get("starttime"):
        return "reused", ("pid %s belongs to another process now (started at tick %s, the recorded one at %s)"
                          % (pid, proc.get("starttime"), record.get("starttime")))
    if record.get("cmdline") is None and record.get("cmdline_sha256"):
        if cmdline_sha256(proc.get("cmdline")) != record["cmdline_sha256"]:
            return "reused", ("pid %s runs another command now (%s)" % (pid, " ".join(proc.get("cmdline") or [])[:120]))
    elif list(proc.get("cmdline") or []) != list(record.get("cmdline") or []):
        return "reused", ("pid %s runs another command now (%s, recorded %s)"
                          % (pid, " ".join(proc.get("cmdline") or [])[:120], " ".join(record.get("cmdline") or [])[:120]))
    return "alive", "pid %s is the recorded process" % pid


def descendants(pid, procs):
    """The pids below ``pid`` in ``procs`` (``{pid: {ppid, ...}}``), parents before children."""
    children = {}
    for child, proc in procs.items():
        children.setdefault(proc.get("ppid"), []).append(child)
    found, queue = [], list(sorted(children.get(pid, [])))
    while queue:
        current = queue.pop(0)
        if current in found or current == pid:
            continue
        found.append(current)
        queue.extend(sorted(children.get(current, [])))
    return found


def plan_stop(records, procs, boot_id=None, own_pid=None):
    """What a stop does: one entry per record ``{name, pid, verdict, reason, targets}``.

    ``procs`` is a snapshot ``{pid: proc}`` of the host's processes; ``targets`` are the pids to signal
    with their start times (``[[pid, starttime], ...]``: the recorded process, then its descendants),
    empty unless the verdict is ``alive``. The caller's own process and its ancestors' records are
    never targets.
    """
    plan = []
    for record in sorted(records, key=lambda r: r.get("name", "")):
        pid = record.get("pid")
        verdict, reason = judge(record, procs.get(pid), boot_id)
        if verdict == "alive" and own_pid is not None and (pid == own_pid or own_pid in descendants(pid, procs)):
            verdict, reason = "skipped", "pid %s is the process running this stop (or its ancestor)" % pid
        targets = []
        if verdict == "alive":
            targets = [[pid, record["starttime"]]] + [[child, procs[child].get("starttime")]
                                                      for child in descendants(pid, procs)]
        plan.append({"name": record.get("name"), "pid": pid, "cmdline": record.get("cmdline"), "verdict": verdict,
                     "reason": reason, "targets": targets})
    return plan


def started_before(proc_starttime, clk_tck, boot_time, mtime, tolerance_s=1.0):
    """Whether a process (start time in ticks since boot) started before a file was written (its mtime).

    A PID read from a pid file belongs to the process that wrote it only if that process started
    before the file was written; a process that took the PID over later started after. ``boot_time``
    (``/proc/stat`` btime) is whole seconds: ``tolerance_s`` allows for that rounding.
    """
    return boot_time + float(proc_starttime) / clk_tck <= mtime + tolerance_s


def default_dir(experiment, root=DEFAULT_ROOT):
    if not experiment:
        raise ProcsError("name the experiment (experiment) or the record directory (dir)")
    check_name(experiment)
    return os.path.join(root, experiment, "procs")


# --- the host: /proc, record files, signals -------------------------------------------------------------


def read_proc(pid, proc_root="/proc"):
    """``{pid, comm, state, ppid, pgid, starttime, cmdline}`` of a live process, None when there is none."""
    try:
        with open(os.path.join(proc_root, str(int(pid)), "stat"), "r") as handle:
            proc = parse_stat(handle.read())
        with open(os.path.join(proc_root, str(int(pid)), "cmdline"), "rb") as handle:
            proc["cmdline"] = parse_cmdline(handle.read())
    except (OSError, IOError):
        return None
    return proc


def snapshot(proc_root="/proc"):
    """Every process of the host, ``{pid: proc}`` (processes that end meanwhile are left out)."""
    procs = {}
    for entry in os.listdir(proc_root):
        if entry.isdigit():
            proc = read_proc(int(entry), proc_root)
            if proc is not None:
                procs[proc["pid"]] = proc
    return procs


def boot_id(proc_root="/proc"):
    try:
        with open(os.path.join(proc_root, "sys", "kernel", "random", "boot_id"), "r") as handle:
            return handle.read().strip() or None
    except (OSError, IOError):
        return None


def boot_time(proc_root="/proc"):
    with open(os.path.join(proc_root, "stat"), "r") as handle:
        for line in handle:
            if line.startswith("btime "):
                return int(line.split()[1])
    raise ProcsError("%s/stat has no btime line" % proc_root)


def record_path(directory, name):
    return os.path.join(directory, check_name(name) + ".json")


def write_record(directory, record):
    """Write ``record`` atomically (temp file + rename) as ``<directory>/<name>.json``, mode 0600."""
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o700)
    path = record_path(directory, record["name"])
    tmp = "%s.tmp.%d" % (path, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(record, handle, sort_keys=True)
    os.rename(tmp, path)
    return path


def read_records(directory, names=None):
    """``(records, problems)``: the records of ``names`` (all when None) found in ``directory``.

    A record file that is not a JSON object with an integer pid and start time is a problem (named,
    left in place), never a guess.
    """
    records, problems = [], []
    if names is None:
        try:
            names = sorted(entry[:-5] for entry in os.listdir(directory)
                           if entry.endswith(".json") and NAME_RE.match(entry[:-5]))
        except (OSError, IOError):
            return [], []
    for name in names:
        path = record_path(directory, name)
        try:
            with open(path, "r") as handle:
                record = json.load(handle)
        except (OSError, IOError):
            continue
        except ValueError as exc:
            problems.append("%s: not JSON (%s)" % (path, exc))
            continue
        if not isinstance(record, dict) or not isinstance(record.get("pid"), int) \
                or not isinstance(record.get("starttime"), int) or record.get("pid") <= 1:
            problems.append("%s: no integer pid (> 1) and starttime" % path)
            continue
        record["name"] = name
        records.append(record)
    return records, problems


def remove_record(directory, name, pid=None):
    """Remove a record (only while it still names ``pid``, when given)."""
    path = record_path(directory, name)
    if pid is not None:
        try:
            with open(path, "r") as handle:
                if json.load(handle).get("pid") != pid:
                    return False
        except (OSError, IOError, ValueError):
            return False
    try:
        os.unlink(path)
        return True
    except (OSError, IOError):
        return False


def wait_exec(pid, timeout_s=60.0, proc_root="/proc", clock=time.monotonic, sleep=time.sleep):
    """``pid``'s process once its command line is there (None when it ended), at most ``timeout_s``.

    A parent can run on before the kernel has set up the new program's arguments: with vfork it
    resumes when the child lets go of the old memory, and close-on-exec pipes close before the
    argument area is set, so ``subprocess.Popen`` may return while ``/proc/<pid>/cmdline`` still
    reads empty (seen on a loaded machine). A record with that empty command line would later
    judge the real process "reused" and never stop it.
    """
    deadline = clock() + float(timeout_s)
    while True:
        proc = read_proc(pid, proc_root)
        if proc is None or proc["state"] in ("Z", "X") or proc["cmdline"]:
            return proc
        if clock() >= deadline:
            raise ProcsError("process %s has no command line %.0f s after it started: not recorded" % (pid, timeout_s))
        sleep(0.01)


def record_pid(directory, name, pid, experiment=None, how=None, proc_root="/proc"):
    """Record the live process ``pid``; returns the record, or None when there is no such process.

    Waits until the process has its command line (``wait_exec``): a record must name the program.
    """
    proc = wait_exec(pid, proc_root=proc_root)
    if proc is None or proc["state"] in ("Z", "X"):
        return None
    record = make_record(name, proc, boot_id(proc_root), experiment, how=how)
    write_record(directory, record)
    return record


def record_self(path, experiment=None):
    """A module records its own process as ``path`` (``<dir>/<name>.json``); returns the record."""
    directory, base = os.path.split(path)
    if not base.endswith(".json"):
        raise ProcsError("a process record is a <name>.json file, got %s" % path)
    return record_pid(directory, base[:-5], os.getpid(), experiment, how="self")


def forget_self(path):
    """Remove the record :func:`record_self` wrote, if it still names this process."""
    directory, base = os.path.split(path)
    return remove_record(directory, base[:-5], os.getpid())


def read_pidfile(path):
    """``(pid, mtime)`` from a pid file (one integer)."""
    with open(path, "r") as handle:
        text = handle.read().strip()
    if not text.isdigit() or int(text) <= 1:
        raise ProcsError("pid file %s holds %r, not a process id" % (path, text[:40]))
    return int(text), os.stat(path).st_mtime


def spawn(argv, log, chdir=None):
    """Start ``argv`` detached (its own session, stdin /dev/null, stdout and stderr to ``log``); its pid.

    ``subprocess.Popen`` returns only once the program was executed, so ``/proc/<pid>/cmdline`` is
    the program's, not this Python's.
    """
    with open(os.devnull, "rb") as devnull, open(log, "ab") as out:
        child = subprocess.Popen(argv, stdin=devnull, stdout=out, stderr=subprocess.STDOUT, cwd=chdir or None,
                                 close_fds=True, start_new_session=True)
    return child.pid


def _alive_as(pid, starttime, proc_root):
    proc = read_proc(pid, proc_root)
    return proc is not None and proc["starttime"] == starttime and proc["state"] not in ("Z", "X")


def _signal(pid, starttime, sig, proc_root, kill):
    """Signal ``pid`` only while it is still the process that started at ``starttime``."""
    if not _alive_as(pid, starttime, proc_root):
        return False
    try:
        kill(pid, sig)
        return True
    except OSError:
        return False


def stop(directory, names=None, grace_s=10.0, check_mode=False, proc_root="/proc", kill=os.kill):
    """Stop the recorded processes still alive (and their descendants), then remove their records.

    Returns ``{stopped, gone, reused, skipped, problems, removed, plan}``: ``stopped`` lists
    ``{name, pid, cmdline, pids, signal}`` (``signal`` the last one needed: TERM or KILL). In check mode
    nothing is signalled or removed; ``stopped`` says what would be.
    """
    records, problems = read_records(directory, names)
    plan = plan_stop(records, snapshot(proc_root), boot_id(proc_root), os.getpid())
    result = {"stopped": [], "gone": [], "reused": [], "skipped": [], "problems": problems, "removed": [], "plan": plan}
    for entry in plan:
        summary = {"name": entry["name"], "pid": entry["pid"], "reason": entry["reason"]}
        if entry["verdict"] != "alive":
            result[entry["verdict"]].append(summary)
            continue
        result["stopped"].append({"name": entry["name"], "pid": entry["pid"], "cmdline": entry["cmdline"],
                                  "pids": [target[0] for target in entry["targets"]], "signal": "TERM"})
    if check_mode:
        return result
    targets = [(pid, start) for entry in plan for pid, start in entry["targets"]]
    for pid, start in targets:
        _signal(pid, start, signal.SIGTERM, proc_root, kill)
    deadline = time.time() + max(0.0, float(grace_s))
    while time.time() < deadline and any(_alive_as(pid, start, proc_root) for pid, start in targets):
        time.sleep(0.05)
    killed = set()
    for pid, start in targets:
        if _signal(pid, start, signal.SIGKILL, proc_root, kill):
            killed.add(pid)
    for done in result["stopped"]:
        if killed.intersection(done["pids"]):
            done["signal"] = "KILL"
    for entry in plan:
        if entry["verdict"] in ("alive", "gone", "reused") and remove_record(directory, entry["name"], entry["pid"]):
            result["removed"].append(entry["name"])
    return result
