# Copyright: the testbed's authors; GNU General Public License v3.0+
"""A test's callback: when a named task is about to be tried again, end a neighbour process.

tests/integration/test_guest_services_native.py runs a playbook with this callback enabled and
``TESTBED_TEST_NEIGHBOUR_PID`` / ``TESTBED_TEST_RETRY_TASK`` / ``TESTBED_TEST_RETRY_LOG`` in the
environment. On the first retry of that task it kills the neighbour, waits until the neighbour no
longer runs its program (``/proc/<pid>/exe`` unreadable: gone or a zombie) and appends the task's
name to the log. The retries themselves then decide: the neighbour is gone because the role
tried again, not because a line reached a pipe in time.
"""
from __future__ import annotations

import os
import signal
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: testbed_test_neighbour
type: aggregate
short_description: a test's hook, ends a neighbour process when a task is retried
description: Used by the integration tests only.
"""


def _running(pid):
    try:
        os.readlink(f"/proc/{pid}/exe")
        return True
    except OSError:
        return False


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "testbed_test_neighbour"
    CALLBACK_NEEDS_ENABLED = True

    def v2_runner_retry(self, result):
        task = getattr(result, "task_name", None) or result._task.get_name()
        pid = int(os.environ.get("TESTBED_TEST_NEIGHBOUR_PID", "0") or 0)
        if not pid or task != os.environ.get("TESTBED_TEST_RETRY_TASK"):
            return
        with open(os.environ["TESTBED_TEST_RETRY_LOG"], "a", encoding="utf-8") as log:
            log.write(f"{task}\n")
        if not _running(pid):
            return
        os.kill(pid, signal.SIGKILL)
        # a state, not a time: bounded only so that a stuck kernel cannot hang the playbook
        for _ in range(6000):
            if not _running(pid):
                return
            time.sleep(0.01)
