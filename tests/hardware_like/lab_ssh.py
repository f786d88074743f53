"""What the hardware-like tests share: the lab's key and known_hosts, a playbook run, ssh as the lab's user."""

import json
import os
import subprocess

from playbook_run import explain, only_run_dir, play, run_file, stored_documents

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


def sweep(tmp_path, experiment, points, *extra, inventory="inventories/lab-ssh", timeout=2400):
    """A new run of the experiment's playbook through ``inventory``: exit 0, ``points`` documents, every one
    valid, the run recorded as a hardware inventory. Its output is kept in tmp_path/sweep.log.
    Returns (the documents by id, the output, the results directory)."""
    results = tmp_path / "results"
    rc, out = playbook(f"playbooks/{experiment.replace('_', '-')}.yml", "-i", inventory,
                       "-e", f"testbed_results_dir={results}", "-e", "testbed_run_id=new", *extra, timeout=timeout)
    (tmp_path / "sweep.log").write_text(out)
    assert rc == 0, explain(rc, out)
    docs = stored_documents(results, experiment)
    assert len(docs) == points, sorted(docs)
    for ident, doc in docs.items():
        assert doc["valid"] is True, (ident, doc["reasons"])
    assert "hardware" in json.dumps(run_file(results, experiment))
    return docs, out, results


def nothing_left(results, experiment, *extra, inventory="inventories/lab-ssh"):
    """The same run again (its id): nothing to measure, exit 0."""
    run_id = os.path.basename(only_run_dir(results, experiment))
    rc, again = playbook(f"playbooks/{experiment.replace('_', '-')}.yml", "-i", inventory,
                         "-e", f"testbed_results_dir={results}", "-e", f"testbed_run_id={run_id}", *extra, timeout=900)
    assert rc == 0, explain(rc, again)
    assert "nothing to do" in again.lower(), again[-3000:]
