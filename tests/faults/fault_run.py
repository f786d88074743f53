"""One way for a fault test to run an experiment playbook and inject a fault while it runs.

``start(playbook, results, args)`` starts ``ansible-playbook <playbook> -i inventories/lab`` with
the results in ``results``; ``run_with_fault(proc, results, trigger, inject, delay_s)`` reads its
output line by line, calls ``inject(proc)`` ``delay_s`` after the first line for which
``trigger(line)`` is true (in a timer thread), waits for the end and keeps the whole output as
``sweep.log`` beside the results. Returns ``(returncode, output)``.
"""
import os
import subprocess
import sys
import threading
import time

from playbook_run import ROOT, follow, stored_documents

BIN = os.path.dirname(sys.executable)
LAB_KEY = "/var/lib/testbed/lab/id_ed25519"


def lab_vm_ssh(port):
    """The ssh argv (before the command) to the lab VM whose sshd qemu forwards from loopback ``port``: root,
    the lab's key; its host key is new on every build, so it is not checked (lab only)."""
    return ["ssh", "-i", LAB_KEY, "-p", str(port), "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=20", "-o", "BatchMode=yes", "root@127.0.0.1"]


def once_running_in_lab_vm(port, process, then, deadline_s=600):
    """An injection that waits until ``process`` runs in the lab VM on ``port`` (``pgrep -x`` over ssh: a state,
    not a delay after a line of output), then calls ``then()``; the deadline only guards against a hang."""
    def inject():
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            if subprocess.run(lab_vm_ssh(port) + ["pgrep -x " + process], capture_output=True, text=True,
                              timeout=120).returncode == 0:
                return then()
            time.sleep(0.5)
        raise AssertionError(f"{process} never ran in the lab VM on port {port} within {deadline_s} s")
    return inject


def start(playbook, results, args):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0")
    cmd = [os.path.join(BIN, "ansible-playbook"), playbook, "-i", "inventories/lab",
           "-e", f"testbed_results_dir={results}"] + list(args)
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def run_with_fault(proc, results, trigger, inject, delay_s, timeout_s):
    fired = threading.Event()

    def on_line(line):
        if not fired.is_set() and trigger(line):
            fired.set()
            threading.Timer(delay_s, inject, args=(proc,)).start()
    returncode, output = follow(proc, on_line, timeout_s)
    with open(os.path.join(os.path.dirname(str(results)), "sweep.log"), "w") as handle:
        handle.write(output)   # kept beside the results for a look at what happened
    return returncode, output


def run_docs(results, experiment):
    """Every point and fault document of the experiment's runs under ``results``, by file name without .json
    (through the result store: a half-written file fails here)."""
    return stored_documents(results, experiment)
