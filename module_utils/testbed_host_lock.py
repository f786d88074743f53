# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run per host: the lock a run takes on every host it uses before it changes anything.

The lock is a small JSON file on the host (``/var/lib/testbed/run.lock``) naming its owner: the
experiment, the run id once it is known, and the ansible-playbook process that runs it - the
controller's host name and boot id, the process id and its start time (which together tell a live
process from a later one that got the same number). library/testbed_host_lock.py takes and
releases it on the host; action_plugins/testbed_host_lock.py asks, on the controller, whether the
owner of a lock that is already there still runs. Pure functions, no I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DEFAULT_PATH = "/var/lib/testbed/run.lock"
OWNER_KEYS = ("experiment", "controller", "boot_id", "pid", "pid_start", "started")


class LockError(ValueError):
    """An owner record that cannot be used; the message says which field."""


def check_owner(owner):
    """The owner record with its fields checked (``run`` is optional: the run id is known after planning)."""
    if not isinstance(owner, dict):
        raise LockError("the lock's owner must be a dict of %s, got %r" % (", ".join(OWNER_KEYS), owner))
    missing = [key for key in OWNER_KEYS if owner.get(key) in (None, "")]
    if missing:
        raise LockError("the lock's owner has no %s" % ", ".join(missing))
    try:
        pid, pid_start = int(owner["pid"]), int(owner["pid_start"])
    except (TypeError, ValueError):
        raise LockError("the lock's owner has pid %r and pid_start %r, not numbers"
                        % (owner.get("pid"), owner.get("pid_start"))) from None
    return dict(owner, pid=pid, pid_start=pid_start)


def token(owner):
    """What identifies one ansible-playbook process: controller, boot, pid and its start time."""
    return "%s/%s/%s/%s" % (owner.get("controller"), owner.get("boot_id"), owner.get("pid"), owner.get("pid_start"))


def describe(owner):
    """The owner in words: 'run R of E (controller C, pid P, since T)'."""
    if not isinstance(owner, dict) or not owner.get("controller"):
        return "a run the lock does not name (unreadable lock: %r)" % (owner,)
    run = owner.get("run") or "(not yet planned)"
    return "run %s of %s (controller %s, ansible-playbook pid %s, since %s)" % (
        run, owner.get("experiment") or "?", owner.get("controller"), owner.get("pid"), owner.get("started") or "?")


def pid_start_of(stat_text):
    """The start time (clock ticks after boot, field 22) from the text of /proc/<pid>/stat; None when unreadable."""
    if not stat_text or ")" not in stat_text:
        return None
    fields = stat_text[stat_text.rindex(")") + 2:].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def holder_alive(holder, me, holder_stat_text):
    """Whether the ansible-playbook that holds a lock still runs, seen from ``me`` (this run's owner).

    True or False when the holder ran on this controller in this boot (its pid's /proc/<pid>/stat
    text is ``holder_stat_text``, None when the process is gone: alive only with the same start
    time); False when it ran on this controller before a reboot; None (cannot tell) when it ran on
    another controller.
    """
    if not isinstance(holder, dict) or holder.get("controller") != me.get("controller"):
        return None
    if holder.get("boot_id") != me.get("boot_id"):
        return False
    started = pid_start_of(holder_stat_text)
    try:
        return started is not None and started == int(holder.get("pid_start"))
    except (TypeError, ValueError):
        return False


def refusal(host, holder, path, subject=None):
    """The sentence that refuses a run on a host (or a ``subject`` such as a results directory) another run holds."""
    if subject:
        return ("%s is in use by %s: one run at a time there. Wait for that run to end, or give this run a results "
                "directory of its own (-e testbed_results_dir=...); if that run is gone (stopped on another "
                "controller, or that controller rebooted), remove %s on %s and run again."
                % (subject, describe(holder), path, host))
    return ("%s is in use by %s: one run per host. Wait for that run to end; if it is gone (stopped on another "
            "controller, or that controller rebooted), remove %s on %s and run again."
            % (host, describe(holder), path, host))


def takeover_note(host, holder):
    """The note printed when a lock whose run is gone is taken over."""
    return "%s: took over the lock of %s, which no longer runs" % (host, describe(holder))
