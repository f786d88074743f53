"""Postfix started by guest_services on a host without systemd while another mount namespace runs a
``postmulti`` (tests/integration/guest_services_native.yml, local connection, Postfix on loopback).

Debian's init script starts Postfix with ``start-stop-daemon --start --exec /usr/sbin/postmulti``, which
takes any process whose ``/proc/<pid>/exe`` *path* names that file for a running Postfix, a container's
too: the host sees its guests' processes. On a fresh-machine CI the native host's start was refused
("already running") while the Docker guest ran its own init script's ``postmulti -x postfix start``.
Here the neighbour is a ``sleep`` bind-mounted over ``/usr/sbin/postmulti`` in a private mount namespace
(``unshare``): the host's own file is untouched, but the neighbour's exe path reads
``/usr/sbin/postmulti``. The neighbour lives until the role tries the start again (a test callback ends it
on the role's retry, inside the playbook: no line read from a pipe, no window sized in seconds); the
start must then succeed - through the handler (main.cf changed) and through "Start the servers" (Postfix
stopped, nothing changed). The role installs Postfix when the host has none and purges it at the end;
a host with its own Postfix is left alone (skipped).
"""
import os
import shutil
import socket
import subprocess
import sys

import pytest
from playbook_run import ROOT, assert_ok, explain, installed, native_init_script_marks, play

PLAYBOOK = "tests/integration/guest_services_native.yml"
POSTMULTI = "/usr/sbin/postmulti"
CALLBACKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "callback_plugins")


pytestmark = native_init_script_marks("installs and starts Postfix") + [
    pytest.mark.skipif(installed("postfix"), reason="this host has a Postfix of its own: left alone"),
    pytest.mark.skipif(shutil.which("unshare") is None, reason="unshare (util-linux) is missing"),
]


def neighbour():
    """A process in a mount namespace of its own whose exe path reads /usr/sbin/postmulti (a sleep)."""
    proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                             f"mount --bind /bin/sleep {POSTMULTI} && exec {POSTMULTI} 3600"],
                            start_new_session=True)
    for _ in range(1200):  # a state, waited for up to 2 min
        try:
            if os.readlink(f"/proc/{proc.pid}/exe") == POSTMULTI:
                break
        except OSError:
            pass
        if proc.poll() is not None:
            pytest.fail(f"the neighbour ended at once (exit {proc.returncode})")
        subprocess.run(["sleep", "0.1"])
    else:
        pytest.fail("the neighbour never ran as /usr/sbin/postmulti")
    return proc


def listening(port=25):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            return conn.recv(64).startswith(b"220")
    except OSError:
        return False


def play_while_neighbour_runs(tmp_path, state_dir, size_limit, retry_task):
    """The role (present) with a neighbour postmulti that lives until the role tries its start again.

    The neighbour is ended by the test's callback (callback_plugins/testbed_test_neighbour.py) on the
    role's first retry of ``retry_task``, inside the playbook, before that retry's delay has passed;
    the role's retries are many here (one a second) so that a slow machine's controller cannot run
    out of them. Without the role's retry the start is refused while the neighbour lives: the play
    fails, whatever the machine's speed."""
    other = neighbour()
    retry_log = tmp_path / f"retries-{retry_task.split()[0].lower()}.log"
    try:
        # the premise: with the neighbour running, Debian's start refuses (exit 1: "already running")
        refused = subprocess.run(["start-stop-daemon", "--start", "--test", "--exec", POSTMULTI],
                                 capture_output=True, text=True)
        assert refused.returncode == 1 and "already running" in refused.stdout, refused
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                   ANSIBLE_CALLBACK_PLUGINS=os.pathsep.join([os.path.join(ROOT, "callback_plugins"), CALLBACKS]),
                   ANSIBLE_CALLBACKS_ENABLED="testbed_exit,testbed_test_neighbour",
                   TESTBED_TEST_NEIGHBOUR_PID=str(other.pid), TESTBED_TEST_RETRY_TASK=retry_task,
                   TESTBED_TEST_RETRY_LOG=str(retry_log))
        proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), PLAYBOOK,
                               "-e", "gs_state=present", "-e", f"gs_state_dir={state_dir}",
                               "-e", f"gs_size_limit={size_limit}",
                               "-e", "guest_services_start_retries=300", "-e", "guest_services_start_delay=1"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=1800)
    finally:
        if other.poll() is None:
            other.kill()
        other.wait()
    assert proc.returncode == 0, explain(proc.returncode, proc.stdout)
    assert retry_log.exists() and retry_task in retry_log.read_text(), (
        "the start was never refused while the neighbour ran:\n" + proc.stdout[-3000:])
    assert listening(), "Postfix does not answer on 127.0.0.1:25"


def test_postfix_starts_after_another_namespace_postmulti_is_gone(tmp_path):
    state_dir = tmp_path / "guest_services"
    try:
        assert_ok(play(PLAYBOOK, "-e", "gs_state=present", "-e", f"gs_state_dir={state_dir}", inventory=None))
        assert listening()
        # a changed main.cf: the handlers stop Postfix and start it again
        play_while_neighbour_runs(tmp_path, state_dir, 20480000, "Start Postfix (no systemd)")
        # stopped, nothing changed: the role's own start
        assert_ok(play(PLAYBOOK, "-e", "gs_state=stopped", "-e", f"gs_state_dir={state_dir}", inventory=None))
        assert not listening()
        play_while_neighbour_runs(tmp_path, state_dir, 20480000, "Start the servers (and enable them where systemd runs)")
    finally:
        assert_ok(play(PLAYBOOK, "-e", "gs_state=absent", "-e", f"gs_state_dir={state_dir}", inventory=None))
    assert not installed("postfix")
