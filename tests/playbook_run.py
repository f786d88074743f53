"""One way for a test to run ansible-playbook, and a failure text that says why.

Every test that runs a playbook goes through :func:`play`; every assertion on
its exit status goes through :func:`assert_ok` or :func:`why`, whose message
*leads* with the failed and unreachable tasks (task, host, message) found in
the output, then the output's tail.  ``pytest.ini`` puts ``tests/`` on the
path, so ``from playbook_run import play, assert_ok`` works in every folder.

Two ways to run:

* ``play(...)``: as ``make test`` does, with ``ANSIBLE_CONFIG`` exported and the
  venv's ``ansible-playbook``.
* ``play(..., as_user=True)``: as the README tells a newcomer, in a clean
  environment (only ``PATH`` with the venv's ``bin`` first, as
  ``source .venv/bin/activate`` leaves it, ``HOME``, ``LANG``), no
  ``ANSIBLE_*`` variable at all, from the working directory given.
"""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BIN = os.path.dirname(sys.executable)
ANSIBLE_PLAYBOOK = os.path.join(BIN, "ansible-playbook")

_TASK = re.compile(r"^(?:TASK|RUNNING HANDLER) \[(?P<name>.*?)\]\s*\**\s*$")
_FAIL = re.compile(r"^(?P<kind>fatal|failed): \[(?P<host>[^\]]+)\](?: \(item=.*?\))?(?: -> \S+)?: "
                   r"(?P<what>FAILED|UNREACHABLE)! => ?(?P<rest>.*)$")
_MSG = re.compile(r"""^\s*"?msg"?: ?(?P<msg>.*)$""")
_RECAP = re.compile(r"^(?P<host>\S+)\s+: ok=\d+.*?unreachable=(?P<unreachable>\d+)\s+failed=(?P<failed>\d+)"
                    r".*?ignored=(?P<ignored>\d+)")


def follow(proc, on_line, timeout_s, kill=None):
    """Read a running playbook's output line by line (on_line(line) sees each) until it ends or
    timeout_s passes; then kill(proc) (default proc.kill) if it still runs. Returns (rc, output)."""
    lines = []

    def reader():
        for line in proc.stdout:
            lines.append(line)
            on_line(line)
    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        proc.wait(timeout=timeout_s)
    finally:
        if proc.poll() is None:
            (kill or (lambda p: p.kill()))(proc)
    thread.join(10)
    return proc.returncode, "".join(lines)


def user_env(extra=None):
    """The environment of a newcomer's shell after ``source .venv/bin/activate``: no ANSIBLE_* at all."""
    env = {
        "PATH": BIN + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
        "VIRTUAL_ENV": os.path.dirname(BIN),
    }
    env.update(extra or {})
    return env


def play(playbook, *args, inventory="inventories/lab", results=None, cwd=ROOT, timeout=600,
         env=None, as_user=False, check=False):
    """Run ``ansible-playbook <playbook> -i <inventory> [-e testbed_results_dir=<results>] <args>``.

    ``playbook`` and ``inventory`` are as a user types them (relative to ``cwd``).
    ``env`` adds variables; ``as_user`` starts from a clean environment.
    ``check`` asserts exit 0 with :func:`why` as the message.
    """
    if as_user:
        environ = user_env(env)
    else:
        environ = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
        environ.update(env or {})
    cmd = [ANSIBLE_PLAYBOOK, playbook]
    if inventory:
        cmd += ["-i", inventory]
    if results is not None:
        cmd += ["-e", f"testbed_results_dir={results}"]
    cmd += [str(a) for a in args]
    proc = subprocess.run(cmd, cwd=cwd, env=environ, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    proc.command = cmd
    if check:
        assert_ok(proc)
    return proc


def failures(output):
    """The failed and unreachable tasks of an ansible-playbook output: ``[(task, host, kind, message)]``.

    A failure that the play ignored (``...ignoring`` on the next line) is left out;
    the message is the ``msg`` of the result when it has one, else its first lines.
    """
    found = _json_failures(output)
    if found is not None:
        return found
    found = []
    task = "?"
    lines = output.splitlines()
    for index, line in enumerate(lines):
        match = _TASK.match(line)
        if match:
            task = match.group("name")
            continue
        match = _FAIL.match(line)
        if not match:
            continue
        body = [match.group("rest")]
        for follow in lines[index + 1:index + 40]:
            if not follow.strip() or _TASK.match(follow) or _FAIL.match(follow) or follow.startswith(("PLAY", "ok:", "changed:", "skipping:")):
                break
            body.append(follow)
        if any(b.strip() == "...ignoring" for b in lines[index + 1:index + 3 + len(body)]):
            continue
        message = None
        for part in body:
            msg = _MSG.match(part)
            if msg:
                message = msg.group("msg").strip().strip(",")
                break
            inline = re.search(r'"msg": ("(?:[^"\\]|\\.)*")', part)
            if inline:
                message = inline.group(1)
                break
        if message is None:
            message = " ".join(b.strip() for b in body[:6])
        found.append((task, match.group("host"), match.group("what").lower(), message[:1500]))
    return found


def _json_failures(output):
    """The same from the ``ansible.builtin.json`` callback's document; None when the output is not one.

    A failure after which the host still ran tasks of the play (ignored or rescued) is left out.
    """
    start = output.find("{")
    if start < 0:
        return None
    try:
        document = json.JSONDecoder().raw_decode(output[start:])[0]
    except ValueError:
        return None
    if not isinstance(document, dict) or "plays" not in document:
        return None
    found = []
    for played in document["plays"]:
        tasks = played.get("tasks", [])
        for index, task in enumerate(tasks):
            for host, result in task.get("hosts", {}).items():
                if not (result.get("failed") or result.get("unreachable")):
                    continue
                # The json callback does not mark an ignored (or rescued) failure: the host went on.
                if any(host in later.get("hosts", {}) for later in tasks[index + 1:]):
                    continue
                kind = "unreachable" if result.get("unreachable") else "failed"
                found.append((task["task"]["name"], host, kind, str(result.get("msg", ""))[:1500]))
    return found


def recap(output):
    """PLAY RECAP as ``{host: {"failed": n, "unreachable": n}}``."""
    hosts = {}
    for line in output.splitlines():
        match = _RECAP.match(line)
        if match:
            hosts[match.group("host")] = {"failed": int(match.group("failed")),
                                          "unreachable": int(match.group("unreachable"))}
    return hosts


def why(proc, tail=4000):
    """An assertion message: the command, its exit code, the failed tasks first, then the output's tail."""
    return explain(proc.returncode, proc.stdout, proc.stderr, getattr(proc, "command", proc.args), tail)


def explain(returncode, stdout, stderr="", command=None, tail=4000):
    """:func:`why` for a run that is not a CompletedProcess (a streamed Popen): its exit code and output."""
    lines = [f"{' '.join(map(str, command)) if command else 'ansible-playbook'} exited {returncode}"]
    failed = failures(stdout + "\n" + stderr)
    if failed:
        lines.append("failed or unreachable tasks:")
        lines += [f"  - [{host}] {task} ({kind}): {msg}" for task, host, kind, msg in failed]
    else:
        lines.append("no failed task in the output")
    bad = {h: r for h, r in recap(stdout).items() if r["failed"] or r["unreachable"]}
    if bad:
        lines.append("recap: " + ", ".join(f"{h} failed={r['failed']} unreachable={r['unreachable']}"
                                           for h, r in sorted(bad.items())))
    lines.append("--- stdout (tail) ---")
    lines.append(stdout[-tail:])
    if stderr.strip():
        lines.append("--- stderr (tail) ---")
        lines.append(stderr[-2000:])
    return "\n".join(lines)


def assert_ok(proc, returncode=0):
    """Assert the exit code, with :func:`why` as the message."""
    assert proc.returncode == returncode, why(proc)
    return proc


def exit_line(proc):
    """The testbed_exit callback's last word (stderr): ``Exit status N (name): why``, or None."""
    lines = [line for line in proc.stderr.splitlines() if line.startswith("Exit status ")]
    return lines[-1] if lines else None


def settings_of(extra):
    """The variable names one ``-e`` argument sets (``k=v`` or a JSON object)."""
    extra = extra.strip()
    if extra.startswith("{"):
        return sorted(json.loads(extra))
    return [extra.split("=", 1)[0]]


def one_run_per_batch(cases, alone=()):
    """Pack ``(extra, sentence)`` cases - one bad ``-e`` setting each - into runs that set disjoint variables.

    The checks report every problem of a run at once, one sentence each, so a run with N such
    settings must end with "N problems" and print each case's sentence: that is each case's own
    verdict (a setting that raised two sentences, or none, changes the count), at one
    ansible-playbook start instead of N.  A case that sets several variables (a cross-field rule)
    or a variable another case sets too gets a run of its own, and so does each ``extra`` in ``alone``:
    a rule of the inventory's shape or across settings, which the checks test before (and instead of)
    the single settings.  Returns a list of case lists, in order.
    """
    seen = {}
    for extra, _ in cases:
        for name in settings_of(extra):
            seen[name] = seen.get(name, 0) + 1
    batch, single = [], []
    for case in cases:
        names = settings_of(case[0])
        (batch if len(names) == 1 and seen[names[0]] == 1 and case[0] not in alone else single).append(case)
    return ([batch] if batch else []) + [[case] for case in single]


def assert_refused_with(proc, cases, results):
    """The run stopped on the controller (exit 10, nothing written) naming exactly the cases' problems."""
    assert proc.returncode == 10, why(proc)
    last = exit_line(proc) or ""
    assert last.startswith("Exit status 10 (refused): input refused before any host was touched"), why(proc)
    count = "%d problem%s with its input" % (len(cases), "" if len(cases) == 1 else "s")
    missing = [extra for extra, sentence in cases if sentence not in proc.stdout]
    assert count in last and not missing, "expected %s; no sentence for %s\n%s" % (count, missing, why(proc))
    assert not os.path.exists(results)


def batch_ids(batches):
    """pytest ids for :func:`one_run_per_batch`: the settings of each run."""
    return ["+".join(name for extra, _ in batch for name in settings_of(extra))[:80] for batch in batches]


UNREACHABLE = {"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": 1}


def unreachable_inventory(directory, hosts_yml):
    """An inventory in ``directory`` whose hosts no run can reach: ssh to 127.0.0.1 port 1.

    ``hosts_yml`` is the text of ``hosts.yml`` (``all:`` with its groups and hosts); every host
    gets :data:`UNREACHABLE` under ``all: vars`` (a host or ``all: vars`` of the text may set
    more), and the shared defaults are linked as an operator's inventory links them
    (group_vars/all/000_shared). A test that expects a refusal on the controller then cannot
    touch any host even if a check were missing. Returns the inventory's path.
    """
    directory = os.fspath(directory)
    os.makedirs(os.path.join(directory, "group_vars", "all"), exist_ok=True)
    link = os.path.join(directory, "group_vars", "all", "000_shared")
    if not os.path.lexists(link):
        os.symlink(os.path.join(ROOT, "group_vars", "all"), link)
    inventory = yaml.safe_load(hosts_yml)
    inventory["all"]["vars"] = dict(UNREACHABLE, **(inventory["all"].get("vars") or {}))
    with open(os.path.join(directory, "hosts.yml"), "w") as handle:
        yaml.safe_dump(inventory, handle, default_flow_style=False)
    return directory


def wait_until(check, timeout_s=120):
    """Poll check() until it returns something true, and return that; the deadline only guards against a hang."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    return check()


def start_server(argv, port, what, deadline_s=60):
    """Start a server a test needs on loopback and wait until 127.0.0.1:``port`` accepts (up to ``deadline_s``).

    Returns the process (the fixture stops it); a server that exits or never listens is killed and the
    test fails with its stderr, naming ``what`` it was. The deadline only guards against a hang.
    """
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            if proc.poll() is not None and proc.returncode != 0:
                break
            time.sleep(0.1)
    proc.kill()
    proc.wait(timeout=60)
    raise AssertionError("%s did not start: %s" % (what, proc.stderr.read().decode()))


# The report's Markdown file in a run directory (module_utils/testbed_reports/make.py writes it there);
# the one place the tests name it.
REPORT_FILE = "report.md"


def run_dirs(results, experiment, empty=False):
    """The run directories of ``experiment`` under ``results``, sorted: each directory there that holds a
    run file, as the result store tells a run (``testbed_results.RUN_FILE``, the test of ``open_run``'s
    ``_existing_runs``), never by a pattern on file names.

    ``empty=True`` lists a directory without a run file too (to the store it is not a run: one whose
    run file was never written, which the store must not leave behind). Hidden names (the
    experiment's results lock) are never a run.
    """
    from ansible.module_utils.testbed_results import RUN_FILE

    base = os.path.join(str(results), experiment)
    found = []
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        path = os.path.join(base, name)
        if not name.startswith(".") and os.path.isdir(path) \
                and (empty or os.path.isfile(os.path.join(path, RUN_FILE))):
            found.append(path)
    return found


def only_run_dir(results, experiment):
    """The run directory of ``experiment``'s single run under ``results`` (:func:`run_dirs`); asserts there is
    exactly one, the message listing the runs found (or, when there is none, what the experiment's
    directory holds)."""
    found = run_dirs(results, experiment)
    if len(found) != 1:
        base = os.path.join(str(results), experiment)
        held = sorted(os.listdir(base)) if os.path.isdir(base) else "no such directory"
        raise AssertionError(f"expected exactly one run of {experiment} under {results}, found {len(found)}: "
                             f"{found or held}")
    return found[0]


def run_file(results, experiment):
    """The run file (run.json) of ``experiment``'s single run under ``results`` (:func:`only_run_dir`), read by
    the result store (``testbed_results.load_run_file``: a file that is not a run file fails)."""
    from ansible.module_utils.testbed_results import load_run_file

    return load_run_file(only_run_dir(results, experiment))


def report_text(results, experiment):
    """The text of the Markdown report (:data:`REPORT_FILE`) of ``experiment``'s single run under ``results``
    (:func:`only_run_dir`)."""
    with open(os.path.join(only_run_dir(results, experiment), REPORT_FILE), encoding="utf-8") as handle:
        return handle.read()


def run_files(run_dir):
    """The JSON files of one run directory, sorted: its run file, its index and every ``<name>.json`` beside
    them, as the report reads them (``testbed_results.read_run_dir``; hidden temp files left out), never by a
    pattern on file names."""
    from ansible.module_utils.testbed_results import INDEX_FILE, RUN_FILE, read_run_dir

    names = [entry["name"] for entry in read_run_dir(run_dir)["files"]]
    names += [name for name in (RUN_FILE, INDEX_FILE) if os.path.isfile(os.path.join(run_dir, name))]
    return sorted(os.path.join(run_dir, name) for name in names)


def superseded_path(run_dir, point_id, number=1):
    """Where the store keeps the ``number``-th superseded document of the point ``point_id`` of the run in
    ``run_dir`` (``testbed_results.store.supersede``: ``superseded/<point_id>.<number>/<point_id>.json``)."""
    from ansible.module_utils.testbed_results.store import SUPERSEDED_DIR

    return os.path.join(run_dir, SUPERSEDED_DIR, f"{point_id}.{number}", point_id + ".json")


def point_documents(results, experiment):
    """Every point document of every run of ``experiment`` under ``results``, read through the result store.

    Each run directory (:func:`run_dirs`) is read as the report reads it (``testbed_results.load_run``:
    run.json's plan, then each planned point's document), never by a pattern on file names.
    """
    from ansible.module_utils.testbed_results import load_run

    docs = []
    for run_dir in run_dirs(results, experiment):
        docs.extend(load_run(run_dir)["docs"])
    return docs


def stored_documents(results, experiment):
    """{name: document} of every point and fault document of every run of ``experiment`` under ``results``,
    through the result store (``testbed_results.store.named_documents``: a half-written file fails),
    never by a pattern on file names."""
    return {name: doc for name, (_path, doc) in _stored(results, experiment).items()}


def stored_paths(results, experiment):
    """The files of :func:`stored_documents`, sorted (to see them rewritten or left alone)."""
    return sorted(path for path, _doc in _stored(results, experiment).values())


def _stored(results, experiment):
    from ansible.module_utils.testbed_results.store import named_documents

    base = os.path.join(str(results), experiment)
    found = {}
    for run_id in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        run_dir = os.path.join(base, run_id)
        if os.path.isdir(run_dir):
            found.update({name: (os.path.join(run_dir, name + ".json"), doc)
                          for name, doc in named_documents(run_dir).items()})
    return found


def checked(cmd, env, cwd, timeout=300):
    """Run ``cmd``; assert exit 0 with the tail of its output as the message; return the process."""
    proc = subprocess.run(cmd, cwd=str(cwd), env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} exited {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-3000:]}"
    return proc


def project_env(work):
    """A newcomer's environment (user_env) in a project directory ``work`` outside the repository that
    installs collections into ``work``/collections; their dependencies (community.general, ...) are the
    ansible package's, in the venv's site-packages."""
    import site

    assert not str(work).startswith(ROOT + os.sep)
    paths = [os.path.join(str(work), "collections")] + [
        p for p in site.getsitepackages() if os.path.isdir(os.path.join(p, "ansible_collections"))]
    return user_env({"ANSIBLE_COLLECTIONS_PATH": ":".join(paths), "ANSIBLE_NOCOLOR": "1"})


def installed(package):
    """Whether dpkg has ``package`` installed on this host."""
    proc = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Status}", package], capture_output=True, text=True)
    return proc.returncode == 0 and proc.stdout.strip() == "installed"


def native_init_script_marks(what):
    """The skip marks of a test that runs a Debian server on this host through its init script."""
    import pytest

    return [
        pytest.mark.skipif(os.geteuid() != 0, reason=f"{what}: needs root"),
        pytest.mark.skipif(os.path.isdir("/run/systemd/system"),
                           reason="this host runs systemd (the init script path is the other one)"),
    ]
