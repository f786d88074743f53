"""Every wait in the roles has a deadline and, when it runs out, one sentence naming what it waited for.

Parses every ``roles/*/tasks/*.yml`` and ``roles/*/handlers/*.yml`` with PyYAML (into block, rescue
and always) and finds each task that waits: ``ansible.builtin.wait_for``,
``ansible.builtin.wait_for_connection`` and every retried task (``until:``). Each must have

* a deadline: ``timeout`` (wait_for, wait_for_connection) or ``retries`` and ``delay`` (until), the
  bound (``timeout``, ``retries``) a setting - a Jinja expression - rather than a number written into
  the task; a role-prefixed setting it names of its own role is in the role's ``defaults/main.yml`` and
  in its ``meta/argument_specs.yml``;
* a sentence for when it runs out (what was waited for, on which host, for how long, where to look):
  wait_for its ``msg``; the others sit in a block whose ``rescue`` fails with ``ansible.builtin.fail``
  (a ``msg``) or ``ansible.builtin.assert`` (a ``fail_msg``), and that block holds waits only (its
  sentence stands for them, not for another task's failure). In handlers Ansible runs no rescue (a
  handler's block or included file: tried with ansible-core 2.19), so a handler's until loop has
  ``failed_when: false`` and the next handler is an ``ansible.builtin.fail`` on its registered result.

The deliberate exceptions are listed in ALLOWED, each with its reason.
"""
import functools
import glob
import os
import re

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

WAIT_FOR = {"ansible.builtin.wait_for", "ansible.legacy.wait_for", "wait_for"}
WAIT_FOR_CONNECTION = {"ansible.builtin.wait_for_connection", "ansible.legacy.wait_for_connection",
                       "wait_for_connection"}
FAIL = {"ansible.builtin.fail"}
ASSERT = {"ansible.builtin.assert"}

# (task file under roles/, task name as written) -> why it is not a "wait for a thing" that needs
# a sentence. A sleep (wait_for with only a timeout) cannot run out: its timeout is the point.
# A poll of a running load whose outcome the workload layer reports itself (failed_when: false,
# the result read afterwards) must not fail: an unfinished or failed run is the point's result
# (invalid, with its reason) or a lab fault, decided by the sweep.
ALLOWED = {
    ("lvs_compare/tasks/fidelity_pair.yml", "Wait for the expected end of the run by hand"):
        "a sleep on the controller for the load's planned duration (nothing to time out)",
    ("lvs_compare/tasks/fidelity_pair.yml", "Wait for httperf by hand and read its reports, pair {{ __lvs_compare_fidelity_index }}"):
        "a poll of the running load by hand (failed_when: false): lvs_hand_result reports an unfinished or failed "
        "client in the fidelity pair's verdict",
    ("lvs_compare/tasks/health.yml", "Let the director read and switch before the probe (this segment's first load runs)"):
        "a timetable sleep on the controller until the next load has started (nothing to time out)",
    ("lvs_compare/tasks/point.yml", "Let this load, launched during the previous one, start (the director reads and switches first)"):
        "a timetable sleep on the controller (lvs_step's wait_s; nothing to time out)",
    ("lvs_compare/tasks/point.yml", "Wait until shortly before this load's end"):
        "a timetable sleep on the controller until the estimator tick to see (nothing to time out)",
    ("lvs_compare/tasks/watch.yml",
     "Wait one watchdog interval, not past the time to look at the tick (s) {{ lvs_compare_watch_interval_s }}"):
        "a sleep on the controller between two watchdog probes of the real servers while the load runs "
        "(nothing to time out)",
    ("storage_compare/tasks/node_cpu_collect.yml", "Read the storage node's CPU over the load's window"):
        "a poll of the node's CPU sampler (failed_when: false): a window it did not close is reported with the "
        "point's CPU figures",
    ("storage_compare/tasks/workload_copy.yml", "Wait for the copy"):
        "a poll of the running copy load (failed_when: false): its rc and duration make the point's result, an "
        "unfinished copy an invalid point",
    ("storage_compare/tasks/workload_rebuild.yml", "Read the rebuild timer's result"):
        "collects the rebuild timer once its done mark came (the wait before it has the deadline and the sentence); "
        "failed_when: false, the poll's result is the point's",
    ("testbed_workload/tasks/wait.yml", "Collect {{ testbed_workload_job.tool }}"):
        "a poll of a running load (failed_when: false, bounded by the job's wait_s): parse.yml turns an unfinished "
        "or failed tool into the point's invalid result with its reason",
    ("guest_services/handlers/main.yml", "Start Postfix (no systemd)"):
        "a start tried again while another postmulti runs (until: succeeded), in a handler: no rescue runs there and "
        "failed_when: false would end the retries; the service module's message names Postfix and the reason",
}


# libyaml's loader when PyYAML has it (the same safe loader, some 5 times faster)
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(path):
    with open(path) as handle:
        return yaml.load(handle, Loader=LOADER) or []


def _module(task):
    """The task's module name and its arguments."""
    for key, value in task.items():
        if key in WAIT_FOR | WAIT_FOR_CONNECTION | FAIL | ASSERT:
            return key, value if isinstance(value, dict) else {}
    return None, {}


def _walk(entries, blocks=()):
    """(task, enclosing blocks) for every task, into block, rescue and always.

    ``blocks`` lists (block, section) from the outermost to the innermost.
    """
    for entry in entries or ():
        if not isinstance(entry, dict):
            continue
        if "block" in entry:
            for section in ("block", "rescue", "always"):
                yield from _walk(entry.get(section), blocks + ((entry, section),))
        else:
            yield entry, blocks


def _kind(task):
    module, _ = _module(task)
    if module in WAIT_FOR:
        return "wait_for"
    if module in WAIT_FOR_CONNECTION:
        return "wait_for_connection"
    if "until" in task:
        return "until"
    return None


def _templated(value):
    return isinstance(value, str) and "{{" in value


def _sentence(task):
    """The sentence the task fails with (fail's msg, assert's fail_msg), or None."""
    module, args = _module(task)
    if module in FAIL:
        return args.get("msg") or None
    if module in ASSERT:
        return args.get("fail_msg") or None
    return None


def _says(task):
    """Whether the task fails with a sentence of its own."""
    return _sentence(task) is not None


def _one_line(sentence):
    """A sentence on one line: a more-indented line in a folded scalar (>-) would keep its line break."""
    return not isinstance(sentence, str) or "\n" not in sentence.strip()


def _rescued(blocks):
    """The problem with the rescue that speaks for a wait in these blocks, or None."""
    for block, section in reversed(blocks):
        if section != "block":
            # a wait in a rescue or always section: only a block further out can speak for it
            continue
        if not block.get("rescue"):
            continue
        sentences = [_sentence(task) for task, _ in _walk(block["rescue"]) if _says(task)]
        if not sentences:
            return "its block's rescue does not fail with a sentence (ansible.builtin.fail msg / assert fail_msg)"
        if not all(_one_line(sentence) for sentence in sentences):
            return "its rescue's sentence spans lines"
        others = [task.get("name", "?") for task, _ in _walk(block["block"]) if _kind(task) is None]
        if others:
            return "its block's rescue would speak for tasks that are no waits too: %s" % others
        return None
    return "it is in no block whose rescue fails with a sentence"


def _followed_by_fail(task, siblings):
    """In handlers: failed_when: false, and the next handler fails on its registered result."""
    register = task.get("register")
    if not register or task.get("failed_when") is not False:
        return False
    index = next(i for i, sibling in enumerate(siblings) if sibling is task)
    following = siblings[index + 1] if index + 1 < len(siblings) else {}
    when = following.get("when", "")
    when = " ".join(when) if isinstance(when, list) else str(when)
    return _says(following) and re.search(r"\b%s\b" % re.escape(register), when) is not None


@functools.lru_cache(maxsize=None)
def role_settings(role):
    """The role's settings: in defaults/main.yml, in meta/argument_specs.yml (any entry point)."""
    path = os.path.join(ROOT, "roles", role, "defaults", "main.yml")
    defaults = set(_load(path)) if os.path.exists(path) else set()
    path = os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")
    spec = _load(path).get("argument_specs", {}) if os.path.exists(path) else {}
    documented = {name for entry in spec.values() for name in (entry.get("options") or {})}
    return defaults, documented


def problems_of(relpath, entries, handlers=False, settings=None):
    """Every wait of one task file with what it lacks: [(task name, kind, [problems])]."""
    role = relpath.split("/")[0]
    found = []
    for task, blocks in _walk(entries):
        kind = _kind(task)
        if kind is None:
            continue
        name = task.get("name", "?")
        _, args = _module(task)
        problems = []
        if kind in ("wait_for", "wait_for_connection"):
            bound = args.get("timeout")
            if bound is None:
                problems.append("no timeout")
        else:
            bound = task.get("retries")
            if bound is None or task.get("delay") is None:
                problems.append("no retries and delay")
        if bound is not None and not _templated(bound):
            problems.append("its deadline %r is written into the task, not a setting" % (bound,))
        if _templated(bound) and settings is not None:
            defaults, documented = settings
            for setting in set(re.findall(r"\b(%s_[a-z0-9_]+)" % re.escape(role), bound)):
                if setting not in defaults:
                    problems.append("its deadline's setting %s is not in defaults/main.yml" % setting)
                if setting not in documented:
                    problems.append("its deadline's setting %s is not in meta/argument_specs.yml" % setting)
        if kind == "wait_for":
            if not args.get("msg"):
                problems.append("no msg")
            elif not _one_line(args["msg"]):
                problems.append("its msg spans lines")
        elif handlers and kind == "until" and not blocks:
            if not _followed_by_fail(task, entries):
                problems.append("no failed_when: false and a next handler that fails with a sentence on its result")
        else:
            problem = _rescued(blocks)
            if problem:
                problems.append(problem)
        found.append((name, kind, problems))
    return found


def _files():
    paths = sorted(glob.glob(os.path.join(ROOT, "roles", "*", "tasks", "*.yml"))
                   + glob.glob(os.path.join(ROOT, "roles", "*", "handlers", "*.yml")))
    return [os.path.relpath(path, os.path.join(ROOT, "roles")) for path in paths]


FILES = _files()


def _waits():
    every = []
    for relpath in FILES:
        role = relpath.split("/")[0]
        entries = _load(os.path.join(ROOT, "roles", relpath))
        for name, kind, problems in problems_of(relpath, entries, handlers="/handlers/" in relpath,
                                                settings=role_settings(role)):
            every.append((relpath, name, kind, problems))
    return every


WAITS = _waits()


def test_the_walk_finds_the_waits():
    """The walk sees the waits a grep sees (about 40 in the task files), blocks included."""
    assert len(WAITS) >= 40
    kinds = {kind for _, _, kind, _ in WAITS}
    assert kinds == {"wait_for", "wait_for_connection", "until"}
    assert ("storage_ceph/tasks/main.yml", "Wait for HEALTH_OK") in {(path, name) for path, name, _, _ in WAITS}


@pytest.mark.parametrize("relpath, name, kind, problems", WAITS,
                         ids=["%s: %s" % (relpath, name) for relpath, name, _, _ in WAITS])
def test_every_wait_has_a_deadline_and_a_sentence(relpath, name, kind, problems):
    if (relpath, name) in ALLOWED:
        return
    assert problems == [], "%s: %r (%s)" % (relpath, name, kind)


def test_the_exceptions_name_waits_that_exist():
    """An exception for a task that is gone, renamed or no longer a wait is stale: remove it."""
    waits = {(relpath, name) for relpath, name, _, _ in WAITS}
    assert [key for key in ALLOWED if key not in waits] == []


def test_the_exceptions_are_deadlined_all_the_same():
    """An exception is spared the sentence, never the deadline."""
    for relpath, name, _, problems in WAITS:
        if (relpath, name) in ALLOWED:
            assert [p for p in problems if p.startswith("no timeout") or p.startswith("no retries")] == [], name


# The checker itself, on task lists made for it: it must say no to each gap.
RESCUED = {"name": "Wait", "block": [{"name": "Poll", "ansible.builtin.command": {"argv": ["true"]},
                                      "register": "r", "until": "r.rc == 0", "retries": "{{ x_timeout }}", "delay": 1}],
           "rescue": [{"name": "Say", "ansible.builtin.fail": {"msg": "x did not come within {{ x_timeout }} s"}}]}


def _only(entries, handlers=False, settings=None):
    (_, _, problems), = problems_of("x/tasks/main.yml", entries, handlers=handlers, settings=settings)
    return problems


def test_the_checker_accepts_what_the_rule_asks():
    assert _only([RESCUED]) == []
    assert _only([{"name": "W", "ansible.builtin.wait_for": {"port": 22, "timeout": "{{ x_t }}", "msg": "no sshd"}}]) == []
    assert _only([{"name": "W", "ansible.builtin.wait_for_connection": {"timeout": "{{ x_t }}"}}]) == [
        "it is in no block whose rescue fails with a sentence"]
    asserted = dict(RESCUED, rescue=[{"name": "Say", "ansible.builtin.assert": {"that": False, "fail_msg": "x"}}])
    assert _only([asserted]) == []


@pytest.mark.parametrize("entries, expected", [
    ([{"name": "W", "ansible.builtin.wait_for": {"port": 22, "timeout": "{{ x_t }}"}}], ["no msg"]),
    ([{"name": "W", "ansible.builtin.wait_for": {"port": 22, "msg": "no sshd"}}], ["no timeout"]),
    ([{"name": "W", "ansible.builtin.wait_for": {"port": 22, "timeout": "{{ x_t }}", "msg": "no sshd\n  on {{ h }}\n"}}],
     ["its msg spans lines"]),
    ([dict(RESCUED, rescue=[{"name": "Say", "ansible.builtin.fail": {"msg": "x did\n    not come"}}])],
     ["its rescue's sentence spans lines"]),
    ([{"name": "W", "ansible.builtin.wait_for": {"port": 22, "timeout": 60, "msg": "no sshd"}}],
     ["its deadline 60 is written into the task, not a setting"]),
    ([{"name": "W", "ansible.builtin.wait_for_connection": {}}],
     ["no timeout", "it is in no block whose rescue fails with a sentence"]),
    ([dict(RESCUED["block"][0])], ["it is in no block whose rescue fails with a sentence"]),
    ([dict(RESCUED, rescue=[{"name": "Note", "ansible.builtin.debug": {"msg": "x"}}])],
     ["its block's rescue does not fail with a sentence (ansible.builtin.fail msg / assert fail_msg)"]),
    ([dict(RESCUED, block=RESCUED["block"] + [{"name": "Other", "ansible.builtin.command": "true"}])],
     ["its block's rescue would speak for tasks that are no waits too: ['Other']"]),
    ([{"name": "Outer", "block": [RESCUED], "rescue": []}], []),
    ([{"name": "Outer", "block": [dict(RESCUED, rescue=[])],
       "rescue": [{"name": "Say", "ansible.builtin.fail": {"msg": "x"}}]}], []),
    ([{"name": "Outer", "block": [{"name": "Other", "ansible.builtin.command": "true"}],
       "rescue": [dict(RESCUED["block"][0])]}], ["it is in no block whose rescue fails with a sentence"]),
])
def test_the_checker_says_what_a_wait_lacks(entries, expected):
    assert _only(entries) == expected


def test_the_checker_wants_a_deadline_setting_in_defaults_and_the_spec():
    task = [{"name": "W", "ansible.builtin.wait_for": {"port": 22, "timeout": "{{ x_boot_timeout }}", "msg": "m"}}]
    assert _only(task, settings=({"x_boot_timeout"}, {"x_boot_timeout"})) == []
    assert _only(task, settings=(set(), {"x_boot_timeout"})) == [
        "its deadline's setting x_boot_timeout is not in defaults/main.yml"]
    assert _only(task, settings=({"x_boot_timeout"}, set())) == [
        "its deadline's setting x_boot_timeout is not in meta/argument_specs.yml"]


def test_the_checker_on_handlers():
    poll = {"name": "Wait", "ansible.builtin.command": {"argv": ["true"]}, "register": "r", "until": "r.rc != 0",
            "retries": "{{ x_t }}", "delay": 1, "failed_when": False, "listen": "Restart x"}
    say = {"name": "Say", "ansible.builtin.fail": {"msg": "x still runs"}, "when": "r.rc == 0", "listen": "Restart x"}
    assert _only([poll, say], handlers=True) == []
    problem = ["no failed_when: false and a next handler that fails with a sentence on its result"]
    assert _only([poll], handlers=True) == problem
    assert _only([dict(poll, failed_when="r.rc == 0"), say], handlers=True) == problem
    assert _only([poll, dict(say, when="true")], handlers=True) == problem
