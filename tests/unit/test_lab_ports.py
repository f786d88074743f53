"""Every VM the labs forward an ssh port for has a port of its own.

CI runs the molecule scenarios side by side, beside lab runs' integration tests, and the scenarios
connect with StrictHostKeyChecking=no: two VMs given one loopback port would let one scenario's
commands reach the other's VM (the second qemu cannot bind the port, and ssh answers from the first).
"""

import glob
import os

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _ports(tree):
    """The ssh ports a YAML tree forwards: ansible_port of a host at 127.0.0.1, and every *_ssh_port setting."""
    if isinstance(tree, dict):
        if tree.get("ansible_host") == "127.0.0.1" and isinstance(tree.get("ansible_port"), int):
            yield tree["ansible_port"]
        for key, value in tree.items():
            if str(key).endswith("ssh_port") and isinstance(value, int):
                yield value
            else:
                yield from _ports(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _ports(value)


def _load(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def owners():
    """port -> [owner, ...]: the ssh ports of each molecule scenario and of the lab inventory (hosts and group_vars)."""
    sources = {"molecule " + os.path.basename(os.path.dirname(path)): [path]
               for path in sorted(glob.glob(os.path.join(ROOT, "molecule", "*", "molecule.yml")))}
    lab = os.path.join(ROOT, "inventories", "lab")
    sources["inventories/lab"] = [os.path.join(lab, "hosts.yml")] + sorted(glob.glob(os.path.join(lab, "group_vars", "*.yml")))
    found = {}
    for owner, paths in sources.items():
        for port in sorted({port for path in paths for port in _ports(_load(path))}):
            found.setdefault(port, []).append(owner)
    return found


def test_no_two_lab_vms_share_a_loopback_ssh_port():
    found = owners()
    # the storage nodes' and the KVM guest's scenarios, the lab's director, storage node, client VM and KVM guest
    assert {"molecule storage_zfs", "molecule storage_ceph", "inventories/lab"} <= {o for names in found.values() for o in names}
    assert len(found) >= 6, found
    shared = {port: names for port, names in found.items() if len(names) > 1}
    assert shared == {}, shared
