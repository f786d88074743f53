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


def test_plan_follows_the_settings(tmp_path):
    proc = play(tmp_path, "--tags", "plan", "-e", '{"storage_compare_variants": ["ceph"], "storage_compare_baseline": "ceph",'
                ' "storage_compare_workloads": ["fio"], "storage_compare_fio_iodepths": [1, 32]}',
                "-e", "storage_compare_repetitions=2")
    assert_ok(proc)
    assert "Plan: 16 points (1 variant × 8 parameter sets × 2 repetitions)" in proc.stdout
    assert "Variants: ceph" in proc.stdout


@pytest.mark.parametrize("extra, sentence", [
    (['-e', '{"storage_compare_variants": ["btrfs"]}'], "storage_compare_variants"),
    (['-e', '{"storage_compare_workloads": ["iometer"]}'], "storage_compare_workloads"),
    (['-e', '{"storage_compare_variants": ["ceph"]}'], "the baseline variant 'zfs' is not measured"),
    (['-e', '{"storage_compare_workloads": ["rebuild", "fio"]}'], "rebuild must be the last workload"),
    (['-e', '{"storage_wipe_devices": ["/dev/disk/by-id/virtio-tb-disk0"]}'],
     "list every disk of storage_compare_devices in storage_wipe_devices (missing: /dev/disk/by-id/virtio-tb-disk1)"),
    (['-e', '{"storage_compare_devices": ["/dev/disk/by-id/virtio-tb-disk0"]}'], "must name the node's two data disks"),
    (['-e', 'storage_compare_volume_mb=256'], "storage_compare_volume_mb (256 MiB) is too small"),
    (['-e', '{"storage_compare_fio_patterns": ["randrw"]}'], "storage_compare_fio_patterns"),
    (['-e', 'storage_compare_repetitions=0'], "storage_compare_repetitions"),
])
def test_bad_input_stops_before_anything_is_built(tmp_path, extra, sentence):
    proc = play(tmp_path, *extra)
    assert proc.returncode != 0
    assert sentence in proc.stdout, proc.stdout[-4000:]
    assert "lab_storage" not in proc.stdout and "Start the storage VM" not in proc.stdout
    assert not os.path.exists(os.path.join(str(tmp_path), "storage_compare"))
