"""The hardware path exercised (make hardware-like): the storage experiment through ssh-only hosts.

The study's topology, nothing reached by a local connection: the storage node is the lab's storage VM
(playbooks/lab-ssh-storage.yml boots it with the storage network, gives it a non-root user with sudo and
pins its host key), the compute node is this machine over the lab's own sshd as a non-root user with
sudo (playbooks/lab-ssh-host.yml, its key pinned), and the client VM that the compute node runs is reached
through the compute node. A short sweep of both systems (fio read and randwrite through librbd and
iSCSI) runs through inventories/lab-ssh (testbed_inventory_kind: hardware): every point valid, measured in
the client VM on the volume exported over the storage network, the run recorded as a hardware inventory;
afterwards the node holds no pool, cluster, export or marker of the testbed's, the compute node no client
VM or Ceph client file, and a second invocation finds nothing to do. Then the VM is stopped and the lab's
sshd removed.

Needs root and the storage VM's image (cached by the first storage run); about 15 minutes on the 2-core
lab machine. Not part of `make test`. Traffic stays on loopback and the lab's storage network.
"""

import os
import shlex
import subprocess

from lab_ssh import KNOWN_HOSTS, nothing_left, playbook, ssh, sweep
from playbook_run import explain

PORT = 2290
NODE_PORT = 2228
NODE = "lab-ssh-storage"
CLIENT_PIDFILE = "/var/lib/testbed/lab/testbed-storage-client.pid"
# What the testbed may leave on the node after cleanup: none of these (its pool, its daemons, its iSCSI
# target, its ownership markers).
NODE_LEFT = ("zpool list -H -o name 2>/dev/null; pgrep -l '^ceph-(mon|mgr|osd)$'; "
             "ls /sys/kernel/config/target/iscsi 2>/dev/null | grep '^iqn' ; "
             "find /var/lib/testbed/storage_zvol /var/lib/testbed/storage_rbd /var/lib/testbed/storage_ceph "
             "/var/lib/testbed/storage_zfs -type f 2>/dev/null; true")


def node(command):
    """command on the storage node through sudo, as the lab's non-root user, its host key checked."""
    proc = ssh("127.0.0.1", "sudo -n sh -c " + shlex.quote(command), NODE_PORT)
    assert proc.returncode == 0, (command, proc.stdout, proc.stderr)
    return proc.stdout


def client_vm_running():
    try:
        with open(CLIENT_PIDFILE) as handle:
            return os.path.exists(f"/proc/{int(handle.read().strip())}")
    except (OSError, ValueError):
        return False


def test_storage_sweep_through_ssh_only_hosts(tmp_path):
    rc, out = playbook("playbooks/lab-ssh-host.yml", "-i", "inventories/lab")
    assert rc == 0, explain(rc, out)
    try:
        rc, out = playbook("playbooks/lab-ssh-storage.yml", "-i", "inventories/lab")
        assert rc == 0, explain(rc, out)
        # Reached as an operator reaches machines: a non-root user with sudo, a pinned host key.
        for port in (PORT, NODE_PORT):
            who = ssh("127.0.0.1", "id -un; sudo -n id -un", port)
            assert who.returncode == 0 and who.stdout.split() == ["testbed", "root"], (port, who.stderr)
        assert node(NODE_LEFT).split() == [], "the storage node holds something of an earlier run"

        docs, _, _ = sweep(tmp_path, "storage_compare", 4)
        for ident, doc in docs.items():
            assert doc["parameters"]["access"] == "network", (ident, doc["parameters"])
            assert NODE in doc["environment"]["hosts"], sorted(doc["environment"]["hosts"])
            assert doc["metrics"]["iops"] > 0, (ident, doc["metrics"])
        assert {doc["variant"] for doc in docs.values()} == {"zfs", "ceph"}

        # Cleanup put both hosts back: nothing of the testbed's on the node, no client VM on the compute node.
        assert node(NODE_LEFT).split() == []
        assert not client_vm_running()
        assert not os.path.exists("/var/lib/testbed/storage_client")

        # The same run again: nothing to measure, nothing built, exit 0.
        nothing_left(tmp_path / "results", "storage_compare")
    finally:
        rc_vm, out_vm = playbook("playbooks/lab-ssh-storage.yml", "-i", "inventories/lab",
                                 "-e", "lab_ssh_storage_state=absent", timeout=600)
        rc, out = playbook("playbooks/lab-ssh-host.yml", "-i", "inventories/lab", "-e", "lab_ssh_host_state=absent",
                           timeout=600)
    assert rc_vm == 0, explain(rc_vm, out_vm)
    assert rc == 0, explain(rc, out)
    assert subprocess.run(["pgrep", "-f", "qemu-system.*storage-lab"], capture_output=True).returncode == 1
    assert not os.path.exists("/sys/class/net/tb-sc-br")
    with open(KNOWN_HOSTS) as handle:
        pinned = handle.read()
    assert f"[127.0.0.1]:{NODE_PORT} " not in pinned and f"[127.0.0.1]:{PORT} " not in pinned
