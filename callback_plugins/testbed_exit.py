# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Give an experiment playbook an exit status a script can trust (README "Exit status")."""

DOCUMENTATION = r"""
---
name: testbed_exit
type: aggregate
short_description: Sets ansible-playbook's exit status from the testbed run's outcome
description:
  - ansible-playbook alone exits 2 for any failed task. An experiment playbook has more to say, so this
    callback (enabled in the repository's C(ansible.cfg)) sets the exit status after the recap, from
    the outcome the sweep notes at its end (fact C(testbed_sweep_outcome), filter C(sweep_outcome)) and from
    where a failure happened.
  - C(0) every planned point is a valid measurement (or invalid for a reason the experiment accepts);
    C(10) an input was refused before any host was touched (a failed task of C(testbed_validate) or a
    role's argument spec); C(11) a lab fault was not recovered; C(12) every point is stored but some are
    invalid; C(13) points are missing for another reason (a host not built, a full disk); C(14) a host is
    locked by another run (one run per host, C(testbed_host_lock)) and nothing was changed.
  - ansible-playbook's own codes stay where the testbed has nothing to add - C(2) a task failed, C(4) a
    host was unreachable, C(99) interrupted (Ctrl-C) - and a complete run whose cleanup failed keeps C(2).
  - The last line on stderr says which status and why (stdout stays the stdout callback's alone, so a
    C(json) callback's output is still one JSON document).
requirements:
  - enabled in C(ansible.cfg) (C(callbacks_enabled = testbed_exit))
"""

import os  # noqa: E402 (after DOCUMENTATION)

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

from ansible.module_utils.testbed_sweep import EXIT_CODES, exit_status  # noqa: E402
from ansible.plugins.callback import CallbackBase  # noqa: E402

# Bare in the repository, FQCN in the collection testbed.infra (docs/collection.md).
REFUSING_ROLES = ("testbed_validate", "testbed.infra.testbed_validate")
REFUSING_ACTIONS = ("ansible.builtin.validate_argument_spec", "validate_argument_spec", "experiment_validate",
                    "testbed.infra.experiment_validate")
LOCK_ACTIONS = ("testbed_host_lock",)  # its last name: bare, ansible.legacy. or testbed.infra.


class CallbackModule(CallbackBase):
    """Remember the run's outcome and the first refusal; exit with their status after the recap."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "testbed_exit"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._outcome = None
        self._refused = None
        self._busy = None

    def v2_runner_on_ok(self, result, **kwargs):
        facts = result._result.get("ansible_facts") or {}
        outcome = facts.get("testbed_sweep_outcome")
        if isinstance(outcome, dict) and "exit_code" in outcome:
            self._outcome = dict(outcome)

    def v2_runner_on_failed(self, result, ignore_errors=False, **kwargs):
        if ignore_errors or self._refused is not None:
            return
        task = result._task
        role = task._role.get_name() if getattr(task, "_role", None) else ""
        if role in REFUSING_ROLES or task.action in REFUSING_ACTIONS:
            self._refused = str(result._result.get("msg") or "an input was refused")
        elif task.action.split(".")[-1] in LOCK_ACTIONS and self._busy is None:
            # a loop over the hosts: the item that names another run's lock
            items = [result._result] + list(result._result.get("results") or [])
            held = [item for item in items if isinstance(item, dict) and item.get("holder")]
            if held:
                self._busy = str(held[0].get("msg"))

    def v2_playbook_on_stats(self, stats):
        failed = any(stats.failures.values()) or any(stats.dark.values())
        code, message = exit_status(self._outcome, self._refused, failed, busy=self._busy)
        if code is None:
            return
        # On stderr: stdout stays the stdout callback's (a json callback's document stays one document).
        self._display.display(f"Exit status {code} ({_name(code)}): {message}", stderr=True)
        if code != 0 or failed:
            # After the recap: ansible-playbook's own finally blocks still clean up.
            raise SystemExit(code)


def _name(code):
    return {value: key for key, value in EXIT_CODES.items()}.get(code, "ansible")
