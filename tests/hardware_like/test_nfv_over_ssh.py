"""The hardware path exercised (make hardware-like): the NFV chain on a Docker host reached only over ssh.

playbooks/lab-ssh-host.yml makes this machine an ssh-only host: the lab's own sshd on loopback, a
non-root user with sudo, its host key pinned in the lab's known_hosts (dockerd does not run inside a
lab container here, so NFV's Docker host is this machine itself). A short NFV sweep then runs
through inventories/lab-ssh (testbed_inventory_kind: hardware): every point valid, the run recorded
as a hardware inventory, no chain container or network left, and a second invocation finds nothing
to do. Then absent removes the sshd, the sudo rule and the user it made.

Needs root and Docker; takes a few minutes. Not part of `make test`. Traffic stays on this host's
loopback and the chain's own Docker networks.
"""

import json
import os
import pwd
import subprocess

from lab_ssh import KNOWN_HOSTS, nothing_left, playbook, ssh, sweep
from playbook_run import explain

PORT = 2290
HOST = "lab-ssh-dockerhost"


def chain_objects():
    """The NFV chains' containers and networks on this host (their label), as docker lists them."""
    label = ["--filter", "label=org.testbed.nfv-chain"]
    containers = subprocess.run(["docker", "ps", "-a", *label, "--format", "{{.Names}}"],
                                capture_output=True, text=True, check=True).stdout.split()
    networks = subprocess.run(["docker", "network", "ls", *label, "--format", "{{.Name}}"],
                              capture_output=True, text=True, check=True).stdout.split()
    return containers + networks


def test_nfv_sweep_on_a_docker_host_reached_over_ssh(tmp_path):
    # the user was there before the lab's: it exists and no earlier run of lab-ssh-host.yml recorded making it
    record = "/var/lib/testbed/lab/ssh-host/record.json"
    made = False
    if os.path.exists(record):
        with open(record) as handle:
            made = not json.load(handle)["user_existed"]
    user_before = any(entry.pw_name == "testbed" for entry in pwd.getpwall()) and not made
    rc, out = playbook("playbooks/lab-ssh-host.yml", "-i", "inventories/lab")
    assert rc == 0, explain(rc, out)
    try:
        # Reached as an operator reaches a machine: a non-root user, sudo, a pinned host key.
        who = ssh("127.0.0.1", "id -un; sudo -n id -un", PORT)
        assert who.returncode == 0 and who.stdout.split() == ["testbed", "root"], who.stderr
        assert chain_objects() == [], "a chain is left from before the test"

        docs, _, _ = sweep(tmp_path, "nfv_chain", 3)
        for ident, doc in docs.items():
            assert HOST in doc["environment"]["hosts"], sorted(doc["environment"]["hosts"])
            assert doc["metrics"]["throughput_gbps"] > 0, (ident, doc["metrics"])
        # The chains are removed; the host keeps nothing of them.
        assert chain_objects() == []
        nothing_left(tmp_path / "results", "nfv_chain")
    finally:
        rc, out = playbook("playbooks/lab-ssh-host.yml", "-i", "inventories/lab", "-e", "lab_ssh_host_state=absent",
                           timeout=600)
    assert rc == 0, explain(rc, out)
    # The machine as it was: no lab sshd, no sudo rule, the user only if it was there before.
    assert subprocess.run(["pgrep", "-f", "sshd -f /var/lib/testbed/lab/ssh-host"], capture_output=True).returncode == 1
    assert not os.path.exists("/etc/sudoers.d/90-testbed-lab-ssh-host")
    assert any(entry.pw_name == "testbed" for entry in pwd.getpwall()) == user_before
    with open(KNOWN_HOSTS) as handle:
        assert not any(line.startswith(f"[127.0.0.1]:{PORT} ") for line in handle)
