"""The hardware path exercised (make hardware-like): the container experiment through an ssh-only container host.

The container host is this machine over the lab's own sshd (playbooks/lab-ssh-host.yml: 127.0.0.1:2290, a
non-root user with sudo, its host key pinned), as an operator's container host is reached. Its guests are
reached from there: the Docker, Podman, LXC and LXD containers through connection plugin testbed_guest (ssh to
the host, then the runtime's own exec through sudo), the KVM guest by ssh through the host, the native variant
as the host itself over ssh. A short sweep of every variant (web, cpu, net_bw) runs through inventories/lab-ssh
(testbed_inventory_kind: hardware): every point valid, measured in the guest the variant names, the run
recorded as a hardware inventory; afterwards no guest of the testbed's is left on the host, and a second
invocation finds nothing to do. Then absent removes the sshd, the sudo rule and the user it made.

Needs root, Docker, Podman, LXC, LXD and qemu (the container lab's packages) and the guests' images built
once; about 20 minutes on the 2-core lab machine. Not part of `make test`. Traffic stays on loopback and the
guests' own networks.
"""

import subprocess

from lab_ssh import nothing_left, playbook, ssh, sweep
from playbook_run import explain

PORT = 2290
HOST = "lab-ssh-containerhost"
GUESTS = {"docker": "cc-docker", "podman": "cc-podman", "lxc": "cc-lxc", "lxd": "cc-lxd", "kvm": "cc-kvm"}


def guests_left():
    """The testbed's guests that still exist on this host, by runtime."""
    checks = {
        "docker": ["docker", "container", "inspect", "cc-docker"],
        "podman": ["podman", "container", "exists", "cc-podman"],
        "lxc": ["lxc-info", "-P", "/var/lib/lxc", "-n", "cc-lxc"],
        "lxd": ["lxc", "info", "cc-lxd"],
        "kvm": ["pgrep", "-f", "qemu-system.* -name cc-kvm"],
    }
    left = []
    for runtime, argv in checks.items():
        try:
            if subprocess.run(argv, capture_output=True, timeout=60).returncode == 0:
                left.append(runtime)
        except FileNotFoundError:
            pass
    return left


def test_container_sweep_on_a_container_host_reached_over_ssh(tmp_path):
    rc, out = playbook("playbooks/lab-ssh-host.yml", "-i", "inventories/lab")
    assert rc == 0, explain(rc, out)
    try:
        who = ssh("127.0.0.1", "id -un; sudo -n id -un", PORT)
        assert who.returncode == 0 and who.stdout.split() == ["testbed", "root"], who.stderr
        assert guests_left() == [], "a guest is left from before the test"

        docs, out, results = sweep(tmp_path, "container_compare", 24, timeout=3600)
        assert {doc["variant"] for doc in docs.values()} == {"native", "docker", "podman", "lxc", "lxd", "kvm"}
        # The workloads ran in the guests through their connections (the tasks' hosts in the log).
        for guest in GUESTS.values():
            assert f"[{guest}]" in out, f"no task ran on {guest}"
        assert guests_left() == []
        nothing_left(results, "container_compare")
    finally:
        rc, out = playbook("playbooks/lab-ssh-host.yml", "-i", "inventories/lab", "-e", "lab_ssh_host_state=absent",
                           timeout=600)
    assert rc == 0, explain(rc, out)
