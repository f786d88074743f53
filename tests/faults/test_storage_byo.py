"""Bring your own pool (issue #25 item 3): the storage experiment on an operator's ZFS pool (make faults).

First, on the controller: with ``storage_compare_zfs_existing_pool`` set and the default workloads, the run
is refused before any host is touched (exit 10), in one sentence naming the setting and the fix - the
rebuild takes a disk out, which only a pool the testbed built may have done to it - and no VM is booted.

Then the lab's storage VM is booted as the playbook boots it (tests/faults/storage_lab_vm.py: the run
keeps it) and a FOREIGN pool ``tank`` is made by hand over ssh - not through the testbed, so nothing
records it: a 1 GiB file vdev in the VM's root disk, a filesystem ``tank/data`` holding a 4 MiB file of
random bytes and a snapshot of it, a 64 MiB zvol ``tank/opvol`` written with random bytes. The run,
``playbooks/storage-compare.yml -i inventories/lab`` with ``storage_compare_zfs_existing_pool=tank``, ZFS
only, a short sweep without rebuild (fio read and randwrite, copy write and read, OLTP), must measure every
point validly on the testbed's zvol ``tank/vol`` (made and recorded by the run: its GUID in
``/var/lib/testbed/storage_zvol/tank/vol.json``, read while the first fio point starts), never export the
pool (the copy read's cache record says the ARC was not emptied), and leave the pool as it was: read while
the run is held at the cleanup's last step (its node tasks done, the VM not yet stopped), the pool's name,
GUID, health, size, vdevs, its properties (space accounting left out), every dataset, snapshot and zvol
with their GUIDs and creation times, their locally set properties, the file's and the snapshot's sha256
and the operator zvol's content sha256 must be what they were before the run; ``tank/vol`` and its marker
must be gone. At the end no qemu of the lab is left.

Needs root and the storage VM's image (cached by the first storage run); about 10 minutes.
"""

import glob
import json
import os
import subprocess
import threading

import fault_run
from playbook_run import ROOT
from storage_lab_vm import CLEANUP_LAST_STEP, PIDFILE, HoldAtCleanup, boot, node, qemu_pid, ran, vm

MAKE_TANK = (
    "set -e; modprobe zfs; truncate -s 1G /root/tank.vdev; "
    "zpool create -o cachefile=none -O compression=lz4 tank /root/tank.vdev; "
    "zfs create tank/data; head -c 4194304 /dev/urandom > /tank/data/keep; zfs snapshot tank/data@before; "
    "zfs create -V 64M tank/opvol; udevadm settle; n=0; "
    "while [ ! -b /dev/zvol/tank/opvol ] && [ $n -lt 100 ]; do sleep 0.2; n=$((n+1)); done; "
    "dd if=/dev/urandom of=/dev/zvol/tank/opvol bs=1M count=64 oflag=direct status=none; zpool sync tank")
# Read-only: what makes the operator's pool the same one, with the same content (space accounting,
# which the testbed's zvol changes while it lives, left out).
READ_TANK = (
    "zpool list -H -p -o name,guid,health,size tank; zpool status -P tank | sed -n '/config:/,$p'; "
    "zpool get -H -p -o property,value all tank "
    "| grep -Ev '^(free|allocated|capacity|fragmentation|freeing|leaked|expandsize|checkpoint|load_guid)[[:space:]]'; "
    "zfs list -H -p -t all -r -o name,guid,type,volsize,creation tank; "
    "zfs get -H -p -r -s local -o name,property,value all tank; "
    "sha256sum /tank/data/keep /tank/data/.zfs/snapshot/before/keep; "
    "dd if=/dev/zvol/tank/opvol bs=1M status=none | sha256sum")
READ_OURS = ("zfs list -H -p -o name,guid,type,volsize tank/vol 2>&1; "
             "echo \"marker files: $(find /var/lib/testbed/storage_zvol -type f 2>/dev/null | wc -l)\"; "
             "cat /var/lib/testbed/storage_zvol/tank/vol.json 2>/dev/null; true")
SHORT = ["-e", '{"storage_compare_variants": ["zfs"]}', "-e", '{"storage_compare_workloads": ["fio", "copy", "oltp"]}',
         "-e", '{"storage_compare_fio_patterns": ["read", "randwrite"]}', "-e", "storage_compare_fidelity=false",
         "-e", "storage_compare_volume_mb=256", "-e", "storage_compare_fio_size_mb=128",
         "-e", "storage_compare_zfs_existing_pool=tank", "-e", "testbed_run_id=new"]
FIO_POINT = "TASK [Start fio on the device]"


def test_rebuild_on_an_existing_pool_is_refused_before_any_host(tmp_path):
    assert qemu_pid() is None, "the storage VM runs already: this test needs the lab free"
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(fault_run.BIN, "ansible-playbook"), "playbooks/storage-compare.yml",
                           "-i", "inventories/lab", "-e", f"testbed_results_dir={tmp_path / 'results'}",
                           "-e", "storage_compare_zfs_existing_pool=tank"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    flat = " ".join(proc.stdout.split())
    assert proc.returncode == 10, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert ("storage_compare cannot start: 1 problem with its input: - the rebuild workload takes a disk out of the "
            "pool, and storage_compare_zfs_existing_pool names tank, a pool the testbed did not build: leave rebuild "
            "out") in flat, flat[-3000:]
    assert "Exit status 10 (refused)" in proc.stderr
    assert not ran(proc.stdout, "TASK [lab_storage") and qemu_pid() is None
    assert not (tmp_path / "results").exists()


def test_an_existing_pool_is_used_and_left_intact(tmp_path):
    results = tmp_path / "results"
    stop = boot(tmp_path)
    try:
        booted = qemu_pid()
        assert booted, "the storage VM did not start"
        node(MAKE_TANK)
        before = node(READ_TANK)
        assert before.startswith("tank\t") and "\tONLINE\t" in before.splitlines()[0], before
        assert "tank/opvol" in before and "tank/data@before" in before, before
        assert "does not exist" in node(READ_OURS), "a dataset tank/vol before the run"

        during = {}

        def read_during():
            during["ours"] = node(READ_OURS, check=False)

        def trigger(line):
            if FIO_POINT in line and "ours" not in during and "reading" not in during:
                during["reading"] = True
                threading.Thread(target=read_during).start()
            return CLEANUP_LAST_STEP in line

        hold = HoldAtCleanup(READ_TANK + "; echo ---; " + READ_OURS)
        done = threading.Event()
        proc = fault_run.start("playbooks/storage-compare.yml", results, SHORT)
        rc, output = fault_run.run_with_fault(proc, results, trigger, lambda p: (hold(p), done.set()), 0, 3600)
        done.wait(30)
        held = hold.held
        with open(tmp_path / "byo.txt", "w") as handle:       # kept beside sweep.log
            handle.write(f"before the run:\n{before}\nduring the first fio point:\n{during.get('ours')}\n"
                         f"held at the cleanup's VM step (qemu {held.get('pid')}, booted {booted}):\n"
                         f"{held.get('after')}\n")

        assert rc == 0, output[-5000:]
        assert "Exit status 0" in output
        docs = fault_run.run_docs(results, "storage_compare")
        assert len(docs) == 5 and all(d.get("valid") is True for d in docs.values()), \
            {k: (d.get("verdict"), d.get("reasons")) for k, d in docs.items()}
        copy_read = [d for d in docs.values() if d["parameters"].get("direction") == "read"]
        assert copy_read and "NOT emptied: the pool is tank" in json.dumps(copy_read[0]), copy_read
        assert not ran(output, "TASK [storage_compare : Empty the ARC (export and import the pool)]")
        for never in ("TASK [storage_zfs : Create the pool]", "TASK [storage_zfs : Destroy the pool]",
                      "TASK [storage_disks :", "TASK [storage_zfs : Install the prebuilt module package with dpkg]"):
            assert not ran(output, never), f"{never} ran on an existing pool"

        # during the run: the testbed's zvol in tank, recorded by its GUID
        ours = during.get("ours", "")
        line = [x for x in ours.splitlines() if x.startswith("tank/vol\t")]
        assert line and line[0].split("\t")[2] == "volume" and "marker files: 1" in ours, ours
        marker = json.loads(ours[ours.index("{"):ours.rindex("}") + 1])
        assert marker["system"] == "zvol" and marker["name"] == "tank/vol" and marker["guid"] == line[0].split("\t")[1]

        # held at the cleanup's last step: the same VM, the operator's pool as it was, the testbed's zvol gone
        assert held.get("done"), "the run never reached the cleanup's VM step"
        assert held["pid"] == booted, "the run restarted the storage VM (its snapshot root disk is new)"
        after, _, ours_after = held["after"].partition("---\n")
        assert after == before, (before, after)
        assert "dataset does not exist" in ours_after and "marker files: 0" in ours_after, ours_after

        # the run's cleanup stopped the lab VM and deleted its disks
        assert qemu_pid() is None and not os.path.exists(PIDFILE), "the storage VM is still running"
        assert not glob.glob("/var/lib/testbed/lab/storage-lab-disk*.img")
    finally:
        if qemu_pid():
            vm(stop, "absent")
