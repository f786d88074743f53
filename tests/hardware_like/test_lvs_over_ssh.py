"""The hardware path exercised (make hardware-like): LVS through ssh-only hosts.

playbooks/lab-ssh-up.yml makes real servers and clients that Ansible reaches
only over ssh, as a non-root user with sudo, their host keys pinned in a
known_hosts file, and nothing installed beyond sshd and sudo; the director is
the lab's VM over ssh, provisioned the same way (sudo, the user, the key). Then a short LVS sweep runs through
inventories/lab-ssh (testbed_inventory_kind: hardware) and must be a real,
complete run: the roles installed Apache and httperf from Debian's mirror,
every point valid, the run recorded as a hardware inventory, and a second
invocation finds nothing to do.

Needs root, the lab (the first playbook brings it up) and Debian's mirror;
takes several minutes. Not part of `make test`. Traffic goes only to the lab's
own addresses.
"""

import json
import os
import re

from lab_ssh import KNOWN_HOSTS, playbook, ssh
from playbook_run import explain, only_run_dir, run_file, stored_documents

SHORT = ["-e", '{"lvs_compare_schedulers": ["rr", "wlc"]}', "-e", '{"lvs_compare_rates": [50]}',
         "-e", "lvs_compare_run_seconds=20"]
CLIENT = "10.250.9.31"
DIRECTOR_PORT = 2222


def test_lvs_sweep_through_ssh_only_hosts(tmp_path):
    rc, out = playbook("playbooks/lab-ssh-up.yml", "-i", "inventories/lab")
    assert rc == 0, explain(rc, out)

    # Reached as an operator reaches a machine: a non-root user, sudo, a pinned host key (the director too).
    for address, port in ((CLIENT, 22), ("127.0.0.1", DIRECTOR_PORT)):
        who = ssh(address, "id -un; sudo -n id -un", port)
        assert who.returncode == 0 and who.stdout.split() == ["testbed", "root"], (address, who.stderr)
    with open(KNOWN_HOSTS) as handle:
        assert any(line.startswith(CLIENT + " ") for line in handle)

    results = tmp_path / "results"
    rc, out = playbook("playbooks/lvs-compare.yml", "-i", "inventories/lab-ssh",
                       "-e", f"testbed_results_dir={results}", "-e", "testbed_run_id=new", *SHORT)
    with open(tmp_path / "sweep.log", "w") as handle:
        handle.write(out)
    assert rc == 0, explain(rc, out)
    # Nothing of the lab's own machinery ran (its plays are skipped on a hardware inventory): the
    # controller itself changed nothing (results are written by tasks delegated from the hosts).
    assert re.search(r"^localhost\s+: ok=\d+\s+changed=0\s", out, re.M), out[-2000:]
    # The roles installed what they need from the distribution.
    assert ssh(CLIENT, "command -v httperf").returncode == 0
    assert ssh("10.250.9.21", "dpkg-query -W -f='${db:Status-Status}' apache2").stdout == "installed"

    docs = stored_documents(results, "lvs_compare")
    assert set(docs) == {"rr__num_conns-1000_rate-50__rep1", "wlc__num_conns-1000_rate-50__rep1"}, out[-3000:]
    for ident, doc in docs.items():
        assert doc["valid"] is True, (ident, doc["reasons"])
        assert doc["extra"]["director_kind"] == "hardware"
        assert set(doc["environment"]["hosts"]) >= {"lvs-ssh-director", "lvs-ssh-web1", "lvs-ssh-client1"}
        # Every real server took part (the director's counters, per real server).
        assert all(doc["metrics"][f"ipvs_conns_lvs-ssh-web{i}"] > 0 for i in (1, 2, 3)), doc["metrics"]
    run_dir = only_run_dir(results, "lvs_compare")
    assert "hardware" in json.dumps(run_file(results, "lvs_compare"))

    # The same run again: nothing to measure, exit 0.
    rc, again = playbook("playbooks/lvs-compare.yml", "-i", "inventories/lab-ssh",
                         "-e", f"testbed_results_dir={results}", "-e", f"testbed_run_id={os.path.basename(run_dir)}",
                         *SHORT, timeout=600)
    assert rc == 0, explain(rc, again)
    assert "Nothing to do" in again or "nothing to do" in again, again[-3000:]
