"""Bring your own pool (issue #25 item 3): the storage experiment on an operator's ZFS pool (make faults).

First, on the controller: with ``storage_compare_zfs_existing_pool`` set and the default workloads, the run
is refused before any host is touched (exit 10), in one sentence naming the setting and the fix - the
rebuild takes a disk out, which only a pool the testbed built may have done to it - and no VM is booted.

Then the lab's storage VM is booted as the playbook boots it (tests/faults/storage_lab_vm.py: the run
keeps it) and a FOREIGN pool ``tank`` is made by hand over ssh - not through the testbed, so nothing
records it: a 1 GiB file vdev in the VM's root disk, a filesystem ``tank/data`` holding a 4 MiB file of
random bytes and a snapshot of it, a 64 MiB zvol ``tank/opvol`` written with random bytes. The run,
``playbooks/storage-compare.yml -i inventories/lab`` with ``storage_compare_zfs_existing_pool=tank``, ZFS
only, with network access (the study's topology: the testbed's zvol exported over iSCSI, LUN 0 of the
testbed's own target, to the client VM that the compute node - this machine - runs), a short sweep without rebuild (fio read and randwrite, copy write and read, OLTP), must measure every
point validly on the testbed's zvol ``tank/vol`` (made and recorded by the run: its GUID in
``/var/lib/testbed/storage_zvol/tank/vol.json``, read while the first fio point starts), never export the
pool (the copy read's cache record says the ARC was not emptied), and leave the pool as it was: read while
the run is held at the cleanup's last step (its node tasks done, the VM not yet stopped), the pool's name,
GUID, health, size, vdevs, its properties (space accounting left out), every dataset, snapshot and zvol
with their GUIDs and creation times, their locally set properties, the file's and the snapshot's sha256
and the operator zvol's content sha256 must be what they were before the run; ``tank/vol`` and its marker
must be gone. At the end no qemu of the lab is left.

The Ceph case does the same with a FOREIGN cluster: the VM booted as above, a cluster of one mon, one mgr
and two OSDs on the lab's two data disks is built through ``roles/storage_ceph`` (so it is a real one, pool
``ops`` with an image ``opimg``) and then made foreign - its marker ``/var/lib/testbed/storage_ceph/ceph.json``
deleted, so nothing records it as the testbed's - and given by hand an image ``ops/opdata`` of 8 MiB of random
bytes with a snapshot, and a client ``client.ops`` (mon 'profile rbd', osd 'profile rbd pool=ops'). The run
with ``storage_compare_ceph_existing_conf=/etc/ceph/ceph.conf``, that client's keyring and
``storage_compare_ceph_pool=ops``, Ceph only, network access (the client VM's qemu reaches the image through
librbd as ``client.ops``, with the monitors of the operator's ceph.conf: no cephx user is made), a shorter sweep (fio randwrite, copy write and read), must
measure every point validly on the testbed's image ``ops/vol`` (recorded: ``<fsid>/<image id>`` in
``/var/lib/testbed/storage_rbd/ops/vol.json``), never tell the OSDs anything, and leave the cluster as it was (held at the cleanup's last step): its fsid,
its pools (id, name, size, min_size, pg_num, rule, application), the images of ``ops`` with their ids,
``opdata``'s and its snapshot's content sha256, the auth entities, and the daemons' processes (the same pids:
none restarted); ``ops/vol`` and its marker gone.

Needs root and the storage VM's image (cached by the first storage run); about 30 minutes per case on the
2-core lab machine beside other jobs (docs/faults.md).
"""

import glob
import json
import os
import subprocess
import textwrap
import threading

import fault_run
from playbook_run import ROOT
from storage_lab_vm import CLEANUP_LAST_STEP, PIDFILE, HoldAtCleanup, boot, node, qemu_pid, ran, vm

MAKE_TANK = (
    "set -e; modprobe zfs; truncate -s 1G /root/tank.vdev; "
    "zpool create -o cachefile=none -O compression=lz4 tank /root/tank.vdev; "
    "zfs create tank/data; head -c 4194304 /dev/urandom > /tank/data/keep; zfs snapshot tank/data@before; "
    "zfs create -V 64M tank/opvol; udevadm settle; n=0; "
    "while [ ! -b /dev/zvol/tank/opvol ] && [ $n -lt 600 ]; do sleep 0.2; n=$((n+1)); done; "
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
         "-e", "storage_compare_volume_mb=512", "-e", "storage_compare_fio_size_mb=128",
         "-e", "storage_compare_zfs_existing_pool=tank", "-e", "testbed_run_id=new",
         # the study's topology (the default): the zvol exported over iSCSI to the client VM on the compute node
         "-e", "storage_compare_access=network"]
FIO_POINT = "TASK [Start fio on the device]"
# Tasks that build, wipe, export or tell the system anything: none may run on a system the operator brought.
ZFS_NEVER = ("TASK [storage_compare : Empty the ARC (export and import the pool)]", "TASK [storage_zfs : Create the pool]",
             "TASK [storage_zfs : Destroy the pool]", "TASK [storage_disks :",
             "TASK [storage_zfs : Install the prebuilt module package with dpkg]")
CEPH_NEVER = ("TASK [storage_compare : Drop the OSDs' BlueStore caches]", "TASK [storage_ceph : Bootstrap the monitor]",
              "TASK [storage_ceph : Make and start the OSDs]", "TASK [storage_ceph : Make the pool]",
              "TASK [storage_ceph : Stop the daemons of the cluster]",
              "TASK [storage_ceph : Remove the cluster's data directories, configuration and keyrings]",
              "TASK [storage_disks :")

# A real cluster on the lab VM's two data disks, built by the testbed's own role; the test then deletes
# its marker: from then on it is nobody's the testbed knows, as an operator's would be.
FOREIGN_CEPH = textwrap.dedent("""\
    ---
    - name: A Ceph cluster the test then makes foreign (its ownership marker deleted)
      hosts: storage_nodes
      gather_facts: false
      tasks:
        - name: Build it with the testbed's role
          ansible.builtin.include_role:
            name: storage_ceph
          vars:
            storage_ceph_osd_devices: "{{ storage_compare_devices }}"
            storage_ceph_pool: ops
            storage_ceph_pg_num: 8
            storage_ceph_image: opimg
            storage_ceph_image_size_mb: 64
            storage_ceph_map: false
            storage_ceph_packages_install: false
            # an operator's cluster answers on the network its clients use (the storage network; the
            # role's default, 127.0.0.1, would leave the client VM's qemu with "Connection timed out")
            storage_ceph_mon_address: "{{ storage_compare_export_address }}"
            storage_ceph_public_network: "{{ storage_compare_export_address }}/32"
    """)
MAKE_OPS = (
    "set -e; rm /var/lib/testbed/storage_ceph/ceph.json; head -c 8388608 /dev/urandom > /root/opdata.bin; "
    "rbd import --no-progress /root/opdata.bin ops/opdata; rbd snap create --no-progress ops/opdata@keep; "
    "ceph auth get-or-create client.ops mon 'profile rbd' osd 'profile rbd pool=ops' > /root/ops.keyring; "
    "chmod 600 /root/ops.keyring")
POOLS = ("import json, sys; print(json.dumps([{k: p.get(k) for k in ('pool_id', 'pool_name', 'size', 'min_size', "
         "'pg_num', 'crush_rule', 'application_metadata')} for p in json.load(sys.stdin)], sort_keys=True))")
IMAGE = "import json, sys; i = json.load(sys.stdin); print(i['name'], i['id'], i['size'], i.get('snapshot_count'))"
READ_CEPH = (
    f"ceph fsid; ceph osd pool ls detail -f json | python3 -c \"{POOLS}\"; rbd ls ops; "
    f"for i in opimg opdata; do rbd info --format json ops/$i | python3 -c \"{IMAGE}\"; done; rbd snap ls ops/opdata; "
    "rbd export --no-progress ops/opdata - | sha256sum; rbd export --no-progress ops/opdata@keep - | sha256sum; "
    "ceph auth ls 2>/dev/null | grep -E '^(client|osd|mgr|mon)'; pgrep -x ceph-mon; pgrep -x ceph-mgr; pgrep -x ceph-osd")
READ_RBD = ("rbd info --format json ops/vol 2>&1 | head -c 4000; echo; "
            "echo \"marker files: $(find /var/lib/testbed/storage_rbd -type f 2>/dev/null | wc -l)\"; "
            "cat /var/lib/testbed/storage_rbd/ops/vol.json 2>/dev/null; true")
# (shorter than the ZFS case: fio randwrite and the copy; OLTP on a mapped image is the same as on a zvol here)
SHORT_CEPH = ["-e", '{"storage_compare_variants": ["ceph"]}', "-e", "storage_compare_baseline=ceph",
              "-e", '{"storage_compare_workloads": ["fio", "copy"]}',
              "-e", '{"storage_compare_fio_patterns": ["randwrite"]}', "-e", "storage_compare_fidelity=false",
              "-e", "storage_compare_volume_mb=512", "-e", "storage_compare_fio_size_mb=128",
              "-e", "storage_compare_ceph_existing_conf=/etc/ceph/ceph.conf",
              "-e", "storage_compare_ceph_existing_keyring=/root/ops.keyring",
              "-e", "storage_compare_ceph_existing_client=client.ops", "-e", "storage_compare_ceph_pool=ops",
              "-e", "testbed_run_id=new", "-e", "storage_compare_access=network"]


def test_rebuild_on_an_existing_pool_is_refused_before_any_host(tmp_path):
    running = qemu_pid()            # (another run's VM, if any: it must be left as it is)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([os.path.join(fault_run.BIN, "ansible-playbook"), "playbooks/storage-compare.yml",
                           "-i", "inventories/lab", "-e", f"testbed_results_dir={tmp_path / 'results'}",
                           "-e", "storage_compare_zfs_existing_pool=tank", "-e", "storage_compare_access=local"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    flat = " ".join(proc.stdout.split())
    assert proc.returncode == 10, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert ("storage_compare cannot start: 1 problem with its input: - the rebuild workload takes a disk out of the "
            "pool, and storage_compare_zfs_existing_pool names tank, a pool the testbed did not build: leave rebuild "
            "out") in flat, flat[-3000:]
    assert "Exit status 10 (refused)" in proc.stderr
    assert not ran(proc.stdout, "TASK [lab_storage") and qemu_pid() == running
    assert not (tmp_path / "results").exists()


def test_an_existing_pool_is_used_and_left_intact(tmp_path):
    stop, booted = boot(tmp_path, access="network")
    try:
        node(MAKE_TANK)
        before = node(READ_TANK)
        assert before.startswith("tank\t") and "\tONLINE\t" in before.splitlines()[0], before
        assert "tank/opvol" in before and "tank/data@before" in before, before
        assert "does not exist" in node(READ_OURS), "a dataset tank/vol before the run"

        ours, held = measure_in_place(tmp_path, SHORT, READ_TANK, READ_OURS, before, booted,
                                      "NOT emptied: the pool is tank", ZFS_NEVER)

        # during the run: the testbed's zvol in tank, recorded by its GUID
        line = [x for x in ours.splitlines() if x.startswith("tank/vol\t")]
        assert line and line[0].split("\t")[2] == "volume" and "marker files: 1" in ours, ours
        marker = json.loads(ours[ours.index("{"):ours.rindex("}") + 1])
        assert marker["system"] == "zvol" and marker["name"] == "tank/vol" and marker["guid"] == line[0].split("\t")[1]

        # held at the cleanup's last step: the same VM, the operator's pool as it was, the testbed's zvol gone
        ours_after = assert_left_as_it_was(held, booted, before)
        assert "dataset does not exist" in ours_after and "marker files: 0" in ours_after, ours_after

        # the run's cleanup stopped the lab VM and deleted its disks
        assert qemu_pid() is None and not os.path.exists(PIDFILE), "the storage VM is still running"
        assert not glob.glob("/var/lib/testbed/lab/storage-lab-disk*.img")
    finally:
        if qemu_pid():
            vm(stop, "absent")


def assert_left_as_it_was(held, booted, before):
    """Held at the cleanup's last step: the same VM (its snapshot root disk), the operator's system read exactly as
    before the run; returns what was read of the testbed's own volume then."""
    assert held.get("done"), "the run never reached the cleanup's VM step"
    assert held["pid"] == booted, "the run restarted the storage VM (its snapshot root disk is new)"
    after, _, ours_after = held["after"].partition("---\n")
    assert after == before, (before, after)
    return ours_after


def measure_in_place(tmp_path, args, read_system, read_ours, before, booted, cache_note, never, points=5):
    """Run the sweep into tmp_path/results, reading the node once as the first fio point starts (read_ours) and once
    held at the cleanup's last step (read_system, then read_ours); keep the readings in tmp_path/byo.txt (beside
    sweep.log). Then: exit 0, the ``points`` points valid, the copy read's cache record saying what was not dropped (cache_note),
    none of the tasks ``never`` run. Returns (the reading during the run, the held reading)."""
    results = tmp_path / "results"
    during = {}

    def trigger(line):
        if FIO_POINT in line and "reading" not in during:
            during["reading"] = True
            threading.Thread(target=lambda: during.update(ours=node(read_ours, check=False))).start()
        return CLEANUP_LAST_STEP in line

    hold = HoldAtCleanup(read_system + "; echo ---; " + read_ours)
    done = threading.Event()
    proc = fault_run.start("playbooks/storage-compare.yml", results, args)
    rc, output = fault_run.run_with_fault(proc, results, trigger, lambda p: (hold(p), done.set()), 0, 3600)
    done.wait(30)
    ours, held = during.get("ours", ""), hold.held
    with open(tmp_path / "byo.txt", "w") as handle:
        handle.write(f"before the run:\n{before}\nduring the first fio point:\n{ours}\n"
                     f"held at the cleanup's VM step (qemu {held.get('pid')}, booted {booted}):\n{held.get('after')}\n")

    assert rc == 0 and "Exit status 0" in output, output[-5000:]
    docs = fault_run.run_docs(results, "storage_compare")
    assert len(docs) == points and all(d.get("valid") is True for d in docs.values()), \
        {k: (d.get("verdict"), d.get("reasons")) for k, d in docs.items()}
    copy_read = [d for d in docs.values() if d["parameters"].get("direction") == "read"]
    assert copy_read and cache_note in json.dumps(copy_read[0]), copy_read
    for banner in never:
        assert not ran(output, banner), f"{banner} ran on a system the operator brought"
    return ours, held


def test_an_existing_ceph_cluster_is_used_and_left_intact(tmp_path):
    stop, booted = boot(tmp_path, access="network")
    try:
        build = tmp_path / "foreign-ceph.yml"
        build.write_text(FOREIGN_CEPH)
        vm(build, "present")
        node(MAKE_OPS)
        before = node(READ_CEPH)
        assert "opdata" in before and "client.ops" in before and "keep" in before, before
        node("test ! -e /var/lib/testbed/storage_ceph/ceph.json")     # nothing records it as the testbed's
        assert "No such file" in node(READ_RBD), "an image ops/vol before the run"

        ours, held = measure_in_place(tmp_path, SHORT_CEPH, READ_CEPH, READ_RBD, before, booted,
                                      "NOT dropped: the cluster is the operator's", CEPH_NEVER, points=3)

        # during the run: the testbed's image in ops, recorded by the cluster's fsid and its id
        info = json.loads(ours[:ours.index("}") + 1])
        marker = json.loads(ours[ours.rindex("{"):ours.rindex("}") + 1])
        fsid = before.split()[0]
        assert "marker files: 1" in ours and marker["system"] == "rbd" and marker["name"] == "ops/vol", ours
        assert marker["id"] == f"{fsid}/{info['id']}", (marker, info)

        ours_after = assert_left_as_it_was(held, booted, before)
        assert "No such file" in ours_after or "not found" in ours_after or "error opening image" in ours_after, ours_after
        assert "marker files: 0" in ours_after, ours_after
        assert qemu_pid() is None and not os.path.exists(PIDFILE), "the storage VM is still running"
    finally:
        if qemu_pid():
            vm(stop, "absent")
