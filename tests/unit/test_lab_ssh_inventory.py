"""inventories/lab-ssh addresses the hosts playbooks/lab-ssh-up.yml makes (lvs_lab.yml).

The operator-style inventory lists its hosts by address, as for real machines;
the lab lists the containers it makes. Both must name the same hosts at the
same addresses: ssh on the management network, lvs_rip on the director's
private side, clients on the public side.
"""

import ipaddress
import os

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _load(*path):
    with open(os.path.join(ROOT, *path)) as handle:
        return yaml.safe_load(handle)


def _groups():
    inventory = _load("inventories", "lab-ssh", "hosts.yml")
    return inventory["all"]["children"]["testbed"]["children"], inventory["all"]["vars"]


def test_inventory_and_lab_agree_on_every_host_and_address():
    lab = _load("inventories", "lab", "group_vars", "lvs_lab.yml")
    groups, _ = _groups()
    management = ipaddress.ip_network(lab["lab_ssh_network"]["subnet"])
    private = ipaddress.ip_network(lab["lvs_director_private_network"])
    public = ipaddress.ip_network(lab["lab_network_networks"][0]["subnet"])
    for group, containers, side in (("lvs_real_servers", lab["lab_ssh_real_servers"], private),
                                    ("lvs_clients", lab["lab_ssh_clients"], public)):
        hosts = groups[group]["hosts"]
        assert sorted(hosts) == sorted(c["name"] for c in containers)
        for container in containers:
            mgmt, lab_side = (n["ipv4_address"] for n in container["networks"])
            assert container["networks"][0]["name"] == lab["lab_ssh_network"]["name"]   # default route, ssh
            assert ipaddress.ip_address(mgmt) in management and ipaddress.ip_address(lab_side) in side
            assert hosts[container["name"]]["ansible_host"] == mgmt
            if group == "lvs_real_servers":
                assert hosts[container["name"]]["lvs_rip"] == lab_side


def test_hosts_are_reached_as_an_operator_reaches_machines():
    groups, common = _groups()
    assert common["ansible_connection"] == "ssh" and common["ansible_user"] != "root" and common["ansible_become"]
    assert "StrictHostKeyChecking=yes" in common["ansible_ssh_common_args"]
    assert "UserKnownHostsFile=/dev/null" not in common["ansible_ssh_common_args"]
    for group in ("lvs_director", "lvs_real_servers", "lvs_clients", "nfv_docker_host", "storage_nodes",
                  "storage_compute_nodes", "storage_clients"):
        for host in groups[group]["hosts"].values():
            assert "ansible_connection" not in host          # no Docker connection anywhere
            if group != "storage_clients":                   # (the testbed's own VM, entered as root)
                assert "ansible_user" not in host and "ansible_become" not in host
    settings = _load("inventories", "lab-ssh", "group_vars", "testbed.yml")
    assert settings["testbed_inventory_kind"] == "hardware"


def test_nfv_docker_host_is_this_machine_through_the_labs_own_sshd():
    groups, _ = _groups()
    (host,) = groups["nfv_docker_host"]["hosts"].values()
    play = _load("playbooks", "lab-ssh-host.yml")[0]
    assert host == {"ansible_host": "127.0.0.1", "ansible_port": play["vars"]["lab_ssh_host_port"]}
    assert "ansible_user" not in host and "ansible_become" not in host      # the non-root user with sudo of all hosts


def test_storage_through_ssh_only_the_templates_groups():
    """The node is the lab's storage VM as lab-ssh-storage.yml boots it (its disks, its port, its storage
    address), the compute node this machine through the lab's sshd, the client VM through the compute node."""
    groups, _ = _groups()
    template = _load("inventories", "example_hardware", "hosts.yml")["all"]["children"]["testbed"]["children"]
    storage = [g for g in template if g.startswith("storage_")]
    assert sorted(storage) == sorted(g for g in groups if g.startswith("storage_"))
    assert groups["storage_vm_host"]["hosts"] == {}          # nothing booted for the run on hardware
    lab = _load("inventories", "lab", "group_vars", "storage_lab.yml")
    (node,) = groups["storage_nodes"]["hosts"].values()
    assert node["ansible_port"] == lab["storage_compare_lab_ssh_port"] and node["ansible_host"] == "127.0.0.1"
    assert "ansible_user" not in node and "ansible_become" not in node      # the non-root user with sudo of all hosts
    assert node["storage_compare_devices"] == lab["storage_compare_devices"] == node["storage_wipe_devices"]
    settings = _load("inventories", "lab-ssh", "group_vars", "testbed.yml")
    assert settings["storage_compare_export_address"] == lab["storage_compare_lab_network"]["address"].split("/")[0]
    (compute,) = groups["storage_compute_nodes"]["hosts"].values()
    port = _load("playbooks", "lab-ssh-host.yml")[0]["vars"]["lab_ssh_host_port"]
    assert compute == {"ansible_host": "127.0.0.1", "ansible_port": port}
    (client,) = groups["storage_clients"]["hosts"].values()
    jump = client["ansible_ssh_common_args"].split('"')[1]
    assert f"-p {port}" in jump and "StrictHostKeyChecking=yes" in jump and "@127.0.0.1" in jump
