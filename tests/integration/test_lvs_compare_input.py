"""lvs-compare refuses a wrong topology on the controller, before any host is contacted.

A host playing two parts (director and real server), two real servers with one
address, a virtual IP that is not an address: each is one sentence, all in one
run, exit status 10, nothing written. The hosts point at 127.0.0.1 port 1, so a
run that went past the checks could not reach them anyway.
"""
import os

from playbook_run import exit_line, play, why

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HOSTS = """all:
  vars: {ansible_host: 127.0.0.1, ansible_port: 1, lvs_director_vip: not-an-ip}
  children:
    lvs_director:
      hosts:
        d1: {lvs_rip: 10.250.2.11}
    lvs_real_servers:
      hosts:
        d1: {}
        w2: {lvs_rip: 10.250.2.11}
    lvs_clients:
      hosts:
        c1: {}
"""


def test_wrong_topology_is_named_host_by_host(tmp_path):
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    (inventory / "group_vars").symlink_to(os.path.join(ROOT, "inventories", "lab", "group_vars"))
    (inventory / "hosts.yml").write_text(HOSTS)
    results = tmp_path / "results"
    proc = play("playbooks/lvs-compare.yml", inventory=str(inventory), results=results, timeout=300)
    assert proc.returncode == 10, why(proc)
    for sentence in (
        "host d1 is in lvs_director and lvs_real_servers: each host plays one part in this experiment",
        "lvs_rip is 10.250.2.11 on d1 and w2 (group lvs_real_servers): each host needs its own",
        "lvs_director_vip of host d1 (group lvs_director) is the string 'not-an-ip', not an IPv4 address",
    ):
        assert sentence in proc.stdout, why(proc)
    assert "3 problems with its input" in proc.stdout
    assert exit_line(proc).startswith("Exit status 10 (refused)")
    assert not results.exists()


def test_builder_role_settings_are_checked_too(tmp_path):
    proc = play("playbooks/lvs-compare.yml", "--tags", "plan", "-e", "lvs_director_shceduler=wlc",
                "-e", "lvs_real_server_forwarding=banana", results=tmp_path, timeout=300)
    assert proc.returncode == 10, why(proc)
    last = exit_line(proc)
    assert "unknown variable lvs_director_shceduler: did you mean lvs_director_scheduler?" in last
    assert "lvs_real_server_forwarding is 'banana', which is not one of nat, dr, tun" in last
    assert not os.listdir(tmp_path)
