"""What the hardware-like tests share: the lab's key and known_hosts, a playbook run, ssh as the lab's user."""

import subprocess

from playbook_run import play

KNOWN_HOSTS = "/var/lib/testbed/lab/known_hosts"
KEY = "/var/lib/testbed/lab/id_ed25519"


def playbook(*args, timeout=2400):
    """Run a playbook from the repository (its own -i); (exit status, output)."""
    proc = play(*args, inventory=None, timeout=timeout, env={"ANSIBLE_FORCE_COLOR": "0"})
    return proc.returncode, proc.stdout + proc.stderr


def ssh(address, command, port=22):
    """command on address as the lab's user (testbed), its host key checked against the lab's known_hosts."""
    return subprocess.run(["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                           "-o", f"UserKnownHostsFile={KNOWN_HOSTS}", "-p", str(port), "-i", KEY, f"testbed@{address}", command],
                          capture_output=True, text=True, timeout=60)
