"""Experiment 2 (Ceph RBD vs ZFS zvol): the plan and the input checks, on the controller only.

`--tags plan` prints the lab plan and its estimate and writes nothing; bad input
(an unknown system or workload, a baseline that is not measured, disks that may
not be wiped, a volume too small for the fills, rebuild not last) stops in
seconds with a sentence naming the setting, before the storage VM is booted or
any disk is touched. The full lab run is
`ansible-playbook playbooks/storage-compare.yml -i inventories/lab`.
"""

import os
import sys

import playbook_run
import pytest
from playbook_run import assert_ok

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)


def play(results, *extra, timeout=300):
    return playbook_run.play("playbooks/storage-compare.yml", *extra, results=results, timeout=timeout)


def test_plan_only_prints_the_plan_and_writes_nothing(tmp_path):
    proc = play(tmp_path, "--tags", "plan")
    assert_ok(proc)
    assert "Plan: 18 points (2 variants × 9 parameter sets × 1 repetition), 0 done, 18 to run" in proc.stdout
    assert "Variants: zfs, ceph" in proc.stdout
    assert "Parameter sets:" in proc.stdout and '"rebuild"' in proc.stdout
    assert "Plan only (testbed_plan_only): nothing was written and no host was touched." in proc.stdout
    assert "Start the storage VM" not in proc.stdout
    assert not os.listdir(tmp_path)


def test_plan_of_both_access_modes_in_one_run(tmp_path):
    proc = play(tmp_path, "--tags", "plan", "-e", "storage_compare_access=both")
    assert_ok(proc)
    flat = " ".join(proc.stdout.split())
    # per system its network points, then its local ones: each workload's grid twice
    assert "Plan: 36 points (2 variants × 18 parameter sets × 1 repetition), 0 done, 36 to run" in flat
    sets = flat[flat.index("Parameter sets:"):]
    assert sets.index('"access": "network"') < sets.index('"access": "local"')
    assert sets.count('"access": "network"') == sets.count('"access": "local"') == 9
    assert not os.listdir(tmp_path)


def test_plan_follows_the_settings(tmp_path):
    proc = play(tmp_path, "--tags", "plan", "-e", '{"storage_compare_variants": ["ceph"], "storage_compare_baseline": "ceph",'
                ' "storage_compare_workloads": ["fio"], "storage_compare_fio_iodepths": [1, 32]}',
                "-e", "storage_compare_repetitions=2")
    assert_ok(proc)
    assert "Plan: 16 points (1 variant × 8 parameter sets × 2 repetitions)" in proc.stdout
    assert "Variants: ceph" in proc.stdout


def test_plan_of_a_pool_and_a_cluster_brought_by_the_operator(tmp_path):
    proc = play(tmp_path, "--tags", "plan", "-e", '{"storage_compare_workloads": ["fio", "copy", "oltp"],'
                ' "storage_compare_zfs_existing_pool": "tank", "storage_compare_ceph_existing_conf": "/etc/ceph/prod.conf",'
                ' "storage_compare_ceph_existing_keyring": "/etc/ceph/prod.client.testbed.keyring",'
                ' "storage_compare_ceph_existing_client": "client.testbed", "storage_compare_ceph_pool": "ops",'
                ' "storage_compare_access": "local"}')
    assert_ok(proc)
    assert "Plan: 14 points (2 variants × 7 parameter sets × 1 repetition)" in proc.stdout, proc.stdout[-3000:]
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize("extra, sentence", [
    (['-e', '{"storage_compare_variants": ["btrfs"]}'], "storage_compare_variants"),
    (['-e', '{"storage_compare_workloads": ["iometer"]}'], "storage_compare_workloads"),
    (['-e', '{"storage_compare_variants": ["ceph"]}'], "the baseline variant 'zfs' is not measured"),
    (['-e', '{"storage_compare_workloads": ["rebuild", "fio"]}'], "rebuild must be the last workload"),
    (['-e', '{"storage_wipe_devices": ["/dev/disk/by-id/virtio-tb-disk0"]}'],
     "list every disk of storage_compare_devices in storage_wipe_devices (missing: /dev/disk/by-id/virtio-tb-disk1)"),
    (['-e', '{"storage_compare_devices": ["/dev/disk/by-id/virtio-tb-disk0"]}'], "must name the node's two data disks"),
    (['-e', 'storage_compare_volume_mb=256'], "storage_compare_volume_mb (256 MiB) is too small"),
    (['-e', '{"storage_compare_volume_mb": 128, "storage_compare_workloads": ["fio"]}'],
     "mkfs.xfs makes no filesystem under 300 MB"),
    (['-e', '{"storage_compare_fio_patterns": ["randrw"]}'], "storage_compare_fio_patterns"),
    (['-e', 'storage_compare_repetitions=0'], "storage_compare_repetitions"),
])
def test_bad_input_stops_before_anything_is_built(tmp_path, extra, sentence):
    proc = play(tmp_path, *extra)
    assert proc.returncode != 0
    assert sentence in proc.stdout, proc.stdout[-4000:]
    assert "lab_storage" not in proc.stdout and "Start the storage VM" not in proc.stdout
    assert not os.path.exists(os.path.join(str(tmp_path), "storage_compare"))


# Free-form values, all in one run: the check reports every problem at once, one sentence each.
FREE_FORM = {
    '{"storage_compare_fio_block_sizes": ["banana"]}':
        "storage_compare_fio_block_sizes item 1 is 'banana', not a block size such as 4k",
    '{"storage_compare_fio_iodepths": [1000000]}': "storage_compare_fio_iodepths item 1 must be at most 1024, got 1000000",
    'storage_compare_ceph_mon_address=not-an-ip': "storage_compare_ceph_mon_address is 'not-an-ip', not an IPv4 address",
    'storage_compare_mountpoint=/': "storage_compare_mountpoint is '/', not an absolute path other than /",
    'storage_compare_oltp_port=22': "storage_compare_oltp_port is 22: port 22 is sshd's",
}


def test_free_form_values_are_checked_too(tmp_path):
    proc = play(tmp_path, *[arg for extra in FREE_FORM for arg in ("-e", extra)])
    assert proc.returncode == 10, playbook_run.why(proc)
    assert "cannot start: %d problems with its input" % len(FREE_FORM) in proc.stdout
    for sentence in FREE_FORM.values():
        assert sentence in proc.stdout
    assert not os.listdir(tmp_path)


def test_a_second_storage_node_is_refused_not_left_out(tmp_path):
    inventory = tmp_path / "inventory"
    (inventory / "group_vars").mkdir(parents=True)
    for name in ("all", "storage_nodes"):
        source = os.path.join(ROOT, "inventories", "lab", "group_vars", name)
        target = inventory / "group_vars" / name
        if os.path.isdir(source):
            target.symlink_to(source)
        elif os.path.exists(source + ".yml"):
            (inventory / "group_vars" / (name + ".yml")).symlink_to(source + ".yml")
    (inventory / "hosts.yml").write_text(
        "all:\n  children:\n    storage_nodes:\n      hosts:\n"
        "        node1: {ansible_host: 127.0.0.1, ansible_port: 1, storage_compare_devices: [/dev/disk/by-id/a, /dev/disk/by-id/b]}\n"
        "        node2: {ansible_host: 127.0.0.1, ansible_port: 1, storage_compare_devices: [/dev/disk/by-id/c, /dev/disk/by-id/d]}\n")
    proc = playbook_run.play("playbooks/storage-compare.yml", inventory=str(inventory), results=tmp_path / "results",
                             timeout=300)
    assert proc.returncode == 10, playbook_run.why(proc)
    assert "inventory group storage_nodes has 2 hosts (node1, node2), but the experiment uses 1" in proc.stdout
    assert not os.path.exists(tmp_path / "results")


# One bad input each, on an inventory no run could reach (127.0.0.1 port 1 over ssh): each stops in
# seconds on the controller with exit status 10 and exactly one sentence, nothing written (inputs that
# set different variables share a run: N inputs, N problems, each one's sentence).
# (a node measured on itself, as an operator may measure a pool or cluster of their own)
NODE = ("{ansible_port: %s, storage_compare_devices: [/dev/disk/by-id/a, /dev/disk/by-id/b],"
        " storage_wipe_devices: [/dev/disk/by-id/a, /dev/disk/by-id/b], storage_compare_access: local}")
ONE_NODE = "all:\n  children:\n    storage_nodes:\n      hosts:\n        node1: %s\n" % (NODE % 1)
TWO_NODES = ONE_NODE + "        node2: %s\n" % (NODE % 1)


CASES = [
    ('{"storage_compare_fio_block_sizes": ["4k", "banana"]}',
     "storage_compare_fio_block_sizes item 2 is 'banana', not a block size such as 4k"),
    ('{"storage_compare_fio_iodepths": [1000000]}',
     "storage_compare_fio_iodepths item 1 must be at most 1024, got 1000000"),
    ("storage_compare_ceph_mon_address=not-an-ip",
     "storage_compare_ceph_mon_address is 'not-an-ip', not an IPv4 address"),
    ("storage_compare_mountpoint=/", "storage_compare_mountpoint is '/', not an absolute path other than /"),
    ("storage_compare_work_dir=scratch",
     "storage_compare_work_dir is 'scratch', not an absolute path other than /"),
    ("storage_compare_oltp_port=22", "storage_compare_oltp_port is 22: port 22 is sshd's"),
    ("storage_compare_oltp_port=1",
     "storage_compare_oltp_port of host node1 (group storage_nodes) is '1', the same as its ansible_port"),
    ("storage_compare_repetitions=100000", "storage_compare_repetitions must be at most 1000, got 100000"),
    ("storage_compare_volume_mb=99999999", "storage_compare_volume_mb must be at most 4194304, got 99999999"),
    ("storage_compare_zfs_pool=tank/x", "storage_compare_zfs_pool is 'tank/x', not a plain name"),
    ("storage_compare_oltp_threads=0", "storage_compare_oltp_threads must be at least 1, got 0"),
    ("storage_zfs_volume_size=banana", "storage_zfs_volume_size is 'banana', not a size such as 512M"),
    ("storage_zfs_device_timeout=0", "storage_zfs_device_timeout must be at least 1, got 0"),
    ("storage_zfs_devce_timeout=60", "unknown variable storage_zfs_devce_timeout: did you mean storage_zfs_device_timeout?"),
    ("storage_ceph_mon_address=not-an-ip", "storage_ceph_mon_address is 'not-an-ip', not an IPv4 address"),
    ("storage_ceph_pool_size=100", "storage_ceph_pool_size must be at most 10, got 100"),
    ("storage_ceph_public_network=everything",
     "storage_ceph_public_network is 'everything', not an IPv4 network such as 10.0.2.0/24"),
    ("storage_disks_zero_mib=0", "storage_disks_zero_mib must be at least 1, got 0"),
    ("storage_compare_zfs_existing_pool=tank",
     "the rebuild workload takes a disk out of the pool, and storage_compare_zfs_existing_pool names tank, a pool the "
     "testbed did not build: leave rebuild out"),
    ('{"storage_compare_ceph_existing_conf": "/etc/ceph/prod.conf", "storage_compare_ceph_existing_keyring": "/k"}',
     "the rebuild workload takes an OSD's disk out of the cluster, and storage_compare_ceph_existing_conf names "
     "/etc/ceph/prod.conf, a cluster the testbed did not build"),
    ('{"storage_compare_ceph_existing_conf": "/etc/ceph/prod.conf", "storage_compare_workloads": ["fio"]}',
     "storage_compare_ceph_existing_conf is /etc/ceph/prod.conf, but storage_compare_ceph_existing_keyring is empty"),
    ("storage_compare_ceph_existing_keyring=/k",
     "storage_compare_ceph_existing_keyring is set, but storage_compare_ceph_existing_conf is empty"),
    ('{"storage_compare_ceph_existing_conf": "prod.conf", "storage_compare_ceph_existing_keyring": "/k", '
               '"storage_compare_workloads": ["fio"]}',
     "storage_compare_ceph_existing_conf is 'prod.conf', not an absolute path other than /"),
    ("storage_zfs_existing_pool=tank",
     "storage_zfs_existing_pool or storage_ceph_existing_conf is set, but the storage experiment passes its own"),
    ('{"storage_compare_ceph_existing_conf": "/etc/ceph/prod.conf", "storage_compare_ceph_existing_keyring": "/k", '
     '"storage_compare_ceph_existing_client": "ops", "storage_compare_workloads": ["fio"]}',
     "storage_compare_ceph_existing_client is 'ops', not a client name such as client.admin or client.testbed"),
]
# rules across settings, which the checks apply before (and instead of) the single settings
BATCHES = playbook_run.one_run_per_batch(CASES, alone=(
    "storage_compare_zfs_existing_pool=tank", "storage_compare_ceph_existing_keyring=/k",
    "storage_zfs_existing_pool=tank"))


@pytest.mark.parametrize("cases", BATCHES, ids=playbook_run.batch_ids(BATCHES))
def test_each_bad_input_is_one_sentence_before_any_host(tmp_path, cases):
    inventory = playbook_run.unreachable_inventory(tmp_path / "inventory", ONE_NODE)
    results = tmp_path / "results"
    proc = playbook_run.play("playbooks/storage-compare.yml", *[a for extra, _ in cases for a in ("-e", extra)],
                             inventory=inventory, results=results, timeout=300)
    playbook_run.assert_refused_with(proc, cases, results)


def test_a_second_node_on_the_unreachable_inventory_is_refused(tmp_path):
    inventory = playbook_run.unreachable_inventory(tmp_path / "inventory", TWO_NODES)
    results = tmp_path / "results"
    proc = playbook_run.play("playbooks/storage-compare.yml", "-e", "storage_compare_repetitions=1",
                             inventory=inventory, results=results, timeout=300)
    playbook_run.assert_refused_with(
        proc, [("", "inventory group storage_nodes has 2 hosts (node1, node2), but the experiment uses 1")], results)


def test_network_access_needs_the_compute_node_and_the_client_vm(tmp_path):
    # the default access is network: a node alone is refused in the plan, before any host, with the fix
    inventory = playbook_run.unreachable_inventory(
        tmp_path / "inventory", ONE_NODE.replace("ansible_port: 1", "ansible_port: 2").replace(", storage_compare_access: local", ""))
    proc = playbook_run.play("playbooks/storage-compare.yml", "--tags", "plan", inventory=inventory,
                             results=tmp_path / "results", timeout=300)
    flat = " ".join(proc.stdout.split())
    assert proc.returncode != 0
    assert ("storage_compare_access is network, so the workloads run in a client VM on a compute node that reaches the "
            "storage node over the storage network: the inventory needs a compute node in group storage_compute_nodes "
            "(has 0)") in flat, playbook_run.why(proc)
    assert "or set storage_compare_access to local" in flat
    assert not (tmp_path / "results").exists()


def test_a_pool_brought_by_the_operator_plans_the_network_path(tmp_path):
    # the study's topology on an operator's pool: exported over the testbed's own iSCSI target
    proc = play(tmp_path, "--tags", "plan", "-e", '{"storage_compare_workloads": ["fio"], "storage_compare_zfs_existing_pool": "tank"}')
    assert_ok(proc)
    assert "Plan:" in proc.stdout
    assert "storage_compare_access is network" not in " ".join(proc.stdout.split()), playbook_run.why(proc)


def test_the_unreachable_inventory_passes_the_checks(tmp_path):
    inventory = playbook_run.unreachable_inventory(tmp_path / "inventory", ONE_NODE.replace("ansible_port: 1", "ansible_port: 2"))
    proc = playbook_run.play("playbooks/storage-compare.yml", "--tags", "plan", inventory=inventory,
                             results=tmp_path / "results", timeout=300)
    assert_ok(proc)
    assert "Plan:" in proc.stdout
