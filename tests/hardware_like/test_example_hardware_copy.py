"""An operator's first run (make hardware-like): copy inventories/example_hardware, put in the addresses,
run. The copy's hosts for the worked example (cpu_scaling_hosts) and NFV (nfv_docker_host) are this
machine, reached as the template reaches every host - ssh as the non-root `testbed` with sudo
(playbooks/lab-ssh-host.yml: the lab's own sshd on 127.0.0.1:2290, its host key pinned). Nothing else
of the template changes: the operator edits addresses, the port, and says which key and known_hosts
file ssh uses. A short sweep of each: every point valid, the run recorded as a hardware inventory, the
host named in the environment, nothing left on the host. The copy lives beside the template (its
group_vars/all link is relative) under a name of its own and is removed afterwards.

Needs root and Docker; a few minutes. Traffic stays on loopback and the chain's own Docker networks.
"""

import json
import os
import shutil
import subprocess
import uuid

import yaml
from lab_ssh import KEY, KNOWN_HOSTS, playbook
from playbook_run import ROOT, explain, run_file, stored_documents

PORT = 2290


def operator_copy():
    """inventories/.operator-<id>: the template copied, its hosts for cpu-scaling and NFV given this machine."""
    name = os.path.join("inventories", f".operator-{uuid.uuid4().hex[:8]}")
    shutil.copytree(os.path.join(ROOT, "inventories", "example_hardware"), os.path.join(ROOT, name), symlinks=True)
    hosts_file = os.path.join(ROOT, name, "hosts.yml")
    with open(hosts_file) as handle:
        hosts = yaml.safe_load(handle)
    groups = hosts["all"]["children"]["testbed"]["children"]
    # the operator's edits: addresses (and the port), the key and known_hosts ssh uses - nothing else
    for group, host in (("cpu_scaling_hosts", "bench1-cpu"), ("nfv_docker_host", "docker1")):
        assert host in groups[group]["hosts"], f"the template's {group} has no {host}"
        groups[group]["hosts"][host].update(ansible_host="127.0.0.1", ansible_port=PORT)
    hosts["all"]["vars"].update(
        ansible_ssh_private_key_file=KEY,
        ansible_ssh_common_args=f"-o StrictHostKeyChecking=yes -o UserKnownHostsFile={KNOWN_HOSTS}")
    with open(hosts_file, "w") as handle:
        yaml.safe_dump(hosts, handle, sort_keys=False)
    return name


def short_sweep(tmp_path, inventory, results, experiment, host, metric, points, *extra):
    """The experiment's playbook through the copy: exit 0, ``points`` valid documents naming ``host``, a
    hardware run. Its output is kept beside the results."""
    rc, out = playbook(f"playbooks/{experiment.replace('_', '-')}.yml", "-i", inventory,
                       "-e", f"testbed_results_dir={results}", *extra)
    (tmp_path / f"{experiment}.log").write_text(out)
    assert rc == 0, explain(rc, out)
    docs = stored_documents(results, experiment)
    assert len(docs) == points, sorted(docs)
    for ident, doc in docs.items():
        assert doc["valid"] is True, (ident, doc["reasons"])
        assert host in doc["environment"]["hosts"], sorted(doc["environment"]["hosts"])
        assert doc["metrics"][metric] > 0, (ident, doc["metrics"])
    assert "hardware" in json.dumps(run_file(results, experiment))


def test_a_copy_of_the_template_with_addresses_filled_in_runs_cpu_scaling_and_nfv(tmp_path):
    rc, out = playbook("playbooks/lab-ssh-host.yml", "-i", "inventories/lab")
    assert rc == 0, explain(rc, out)
    inventory = operator_copy()
    try:
        results = tmp_path / "results"
        short_sweep(tmp_path, inventory, results, "cpu_scaling", "bench1-cpu", "events_per_s", 2,
                    "-e", '{"cpu_scaling_threads": [1, 2]}', "-e", "testbed_repetitions=1", "-e", "cpu_scaling_duration_s=2")
        short_sweep(tmp_path, inventory, results, "nfv_chain", "docker1", "throughput_gbps", 2,
                    "-e", '{"nfv_chain_scenarios": [{"name": "baseline", "hops": []}, {"name": "1-vnf", "hops": ["firewall"]}]}',
                    "-e", "nfv_measure_repetitions=1", "-e", "nfv_measure_fidelity=false")
        label = ["--filter", "label=org.testbed.nfv-chain"]
        left = subprocess.run(["docker", "ps", "-a", *label, "--format", "{{.Names}}"],
                              capture_output=True, text=True, check=True).stdout.split()
        assert left == [], f"the chain's containers were left: {left}"
    finally:
        shutil.rmtree(os.path.join(ROOT, inventory), ignore_errors=True)
        rc, out = playbook("playbooks/lab-ssh-host.yml", "-i", "inventories/lab", "-e", "lab_ssh_host_state=absent",
                           timeout=600)
    assert rc == 0, explain(rc, out)
