#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: testbed_host_lock
short_description: One run per host - take or release the lock a run holds on a host it uses
description:
  - Every experiment run takes this lock on each host it uses before it changes anything (the experiment prologue),
    and releases it at its end. The lock is a JSON file on the host (O(path)) naming its owner - the experiment,
    the run id, the controller, the ansible-playbook process id and start time.
  - O(state=present) creates the file when there is none (atomically - of two runs that try at once exactly one gets
    it) and returns RV(taken=true); when the file is this run's own it is kept (its record updated, for example with
    the run id once planned); when it is another run's, nothing changes and RV(held_by) names that run
    (RV(taken=false)). O(takeover) replaces a lock whose owner's token it names (the action plugin passes it after
    finding, on the controller, that the owner no longer runs).
  - O(state=absent) removes the lock only when it is this run's; another run's lock is never removed.
  - Use it through its action plugin (action_plugins/testbed_host_lock.py, same name), which fills in the owner
    from the controller, tells a lock whose run is gone from one whose run still runs, takes the first over with
    a note and refuses the second with one sentence that names the other run. The pure rules are in
    module_utils/testbed_host_lock.py.
  - Supports check mode (nothing is written).
version_added: "1.4.0"
author:
  - Infrastructure testbed contributors
options:
  path:
    description: The lock file on the host.
    type: path
    default: /var/lib/testbed/run.lock
  state:
    description: Take (present) or release (absent) the lock.
    type: str
    choices: [present, absent]
    default: present
  owner:
    description:
      - The run that takes the lock - keys experiment, run (optional), controller, boot_id, pid, pid_start, started.
        The action plugin sets it; given by hand it is used as it is.
    type: dict
    required: true
  takeover:
    description: Replace the lock when its owner's token (controller/boot_id/pid/pid_start) is this one.
    type: str
  directory_mode:
    description:
      - The mode of the lock file's missing parent directories, created when the lock is taken (an existing
        directory keeps its mode). C(0700) for a lock inside a results directory, which holds the runs' results.
    type: raw
    default: "0755"
  subject:
    description:
      - What the lock stands for, in the action plugin's refusal and takeover note (for example
        C(the results directory results/cpu_scaling)); the host's name when not given. The module ignores it.
    type: str
"""

EXAMPLES = r"""
- name: Take the host for this run (one run per host)
  testbed_host_lock:
    state: present
    experiment: lvs_compare

- name: Release it at the end
  testbed_host_lock:
    state: absent
    experiment: lvs_compare
"""

RETURN = r"""
taken:
  description: Whether this run holds the lock now (present), or held it before removing it (absent).
  returned: always
  type: bool
held_by:
  description: The owner record of another run's lock (the lock was not taken), else null.
  returned: always
  type: dict
replaced:
  description: The owner record of the lock that O(takeover) replaced, else null.
  returned: always
  type: dict
path:
  description: The lock file.
  returned: always
  type: str
"""

import errno  # noqa: E402 (Ansible modules import after their documentation)
import fcntl  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_host_lock import LockError, check_owner, token  # noqa: E402
from ansible.module_utils.testbed_parse import write_json_atomic  # noqa: E402


def _read(path):
    try:
        with open(path) as handle:
            record = json.load(handle)
        return record if isinstance(record, dict) else {"unreadable": repr(record)[:200]}
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return {"unreadable": str(exc)[:200]}


def _write_new(path, owner):
    """Create the lock file only when there is none (O_EXCL): True when this call created it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(owner, handle, sort_keys=True)
            handle.write("\n")
    except OSError:
        # a lock half written (a full disk) would name no run and refuse every later one
        os.remove(path)
        raise
    return True


def write_failure(exc, path, subject):
    """One sentence for a lock that could not be written (a full disk, a read-only filesystem...)."""
    what = subject or "this host"
    directory = os.path.dirname(path) or "."
    if exc.errno == errno.ENOSPC:
        return ("testbed_host_lock: no space left on the filesystem of %s: the lock %s of %s was not written; "
                "free space there and run the same command again" % (directory, path, what))
    return ("testbed_host_lock: the lock %s of %s could not be written (%s); give a path this user can write "
            "(testbed_lock_path, testbed_results_dir)" % (path, what, exc.strerror or exc))


def run(module):
    path = module.params["path"]
    state = module.params["state"]
    try:
        owner = check_owner(module.params["owner"])
    except LockError as exc:
        module.fail_json(msg="testbed_host_lock: %s" % exc, path=path)
    mine = token(owner)
    result = {"changed": False, "taken": False, "held_by": None, "replaced": None, "path": path}
    directory = os.path.dirname(path) or "."
    if state == "present" and not module.check_mode:
        mode = module.params["directory_mode"]
        try:
            mode = int(str(mode), 8) if not isinstance(mode, int) else mode
        except ValueError:
            module.fail_json(msg="testbed_host_lock: directory_mode %r is not an octal mode such as 0700" % (mode,))
        missing = []
        parent = os.path.abspath(directory)
        while not os.path.isdir(parent):
            missing.append(parent)
            parent = os.path.dirname(parent)
        for each in reversed(missing):
            try:
                os.mkdir(each, mode)
                os.chmod(each, mode)  # the umask does not narrow what was asked
            except FileExistsError:
                pass
            except OSError as exc:
                module.fail_json(msg=write_failure(exc, path, module.params["subject"]), path=path)
    # the compare-and-replace steps run under a lock of their own - flock(2) on the lock's directory,
    # which leaves no file behind - so that two runs that both find a stale lock cannot both take it over
    guard = None
    if os.path.isdir(directory) and not module.check_mode:
        guard = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(guard, fcntl.LOCK_EX)
    try:
        return _locked(module, path, state, owner, mine, result)
    except OSError as exc:
        module.fail_json(msg=write_failure(exc, path, module.params["subject"]), path=path)
    finally:
        if guard is not None:
            os.close(guard)


def _locked(module, path, state, owner, mine, result):
    """The compare-and-replace steps, under the guard."""
    current = _read(path)
    if state == "absent":
        if current is not None and token(current) == mine:
            result.update(changed=True, taken=True)
            if not module.check_mode:
                os.remove(path)
        elif current is not None:
            result["held_by"] = current
        return result
    if current is None:
        if module.check_mode or _write_new(path, owner):
            result.update(changed=True, taken=True)
            return result
        current = _read(path)  # another run created it between our read and our create
    if current is not None and token(current) == mine:
        result["taken"] = True
        if current != owner:
            result["changed"] = True
            if not module.check_mode:
                write_json_atomic(path, owner, mode=0o644)
        return result
    takeover = module.params["takeover"]
    if takeover and current is not None and token(current) == takeover:
        result.update(changed=True, taken=True, replaced=current)
        if not module.check_mode:
            write_json_atomic(path, owner, mode=0o644)
        return result
    result["held_by"] = current
    return result


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", default="/var/lib/testbed/run.lock"),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            owner=dict(type="dict", required=True),
            takeover=dict(type="str"),
            directory_mode=dict(type="raw", default="0755"),
            subject=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    module.exit_json(**run(module))


if __name__ == "__main__":
    main()
