"""storage_ceph in the lab storage VM: HEALTH_OK, two raw BlueStore OSDs up and in, the pool, the mapped image."""

import json
import os

# only the storage node (the inventory also holds localhost, which runs lab_storage)
testinfra_hosts = ["ansible://storage-ceph-molecule"]

EPHEMERAL = os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "")
DISKS = {"/dev/disk/by-id/virtio-tb-disk0": "/dev/vdb", "/dev/disk/by-id/virtio-tb-disk1": "/dev/vdc"}


def ceph(host, *args):
    return json.loads(host.check_output("ceph " + " ".join(args) + " --format json"))


def test_health_ok(host):
    assert ceph(host, "health")["status"] == "HEALTH_OK"


def test_two_osds_up_and_in_on_the_raw_disks(host):
    dump = ceph(host, "osd", "dump")
    assert [(o["osd"], o["up"], o["in"]) for o in dump["osds"]] == [(0, 1, 1), (1, 1, 1)]
    nodes = []
    for osd in (0, 1):
        meta = ceph(host, "osd", "metadata", str(osd))
        assert meta["osd_objectstore"] == "bluestore"
        assert meta["bluestore_bdev_type"] in ("ssd", "hdd")
        link = host.file("/var/lib/ceph/osd/ceph-%d/block" % osd)
        assert link.is_symlink and link.linked_to in DISKS.values()
        assert host.check_output("readlink /var/lib/ceph/osd/ceph-%d/block" % osd) in DISKS
        nodes.append(link.linked_to)
    assert sorted(nodes) == sorted(DISKS.values())


def test_daemons_run_directly_as_ceph(host):
    assert not host.file("/run/systemd/system").exists
    for name, count in (("ceph-mon", 1), ("ceph-mgr", 1), ("ceph-osd", 2)):
        procs = host.process.filter(comm=name)
        assert len(procs) == count, name
        assert all(p.user == "ceph" for p in procs), name


def test_monitor_on_loopback_default_ports(host):
    for port in (3300, 6789):
        assert host.socket("tcp://127.0.0.1:%d" % port).is_listening
    status = ceph(host, "mon", "dump")
    addrs = status["mons"][0]["public_addrs"]["addrvec"]
    assert sorted((a["type"], a["addr"]) for a in addrs) == [("v1", "127.0.0.1:6789"), ("v2", "127.0.0.1:3300")]


def test_fsid_kept_in_the_configuration(host):
    fsid = host.check_output("ceph fsid")
    conf = host.file("/etc/ceph/ceph.conf").content_string
    assert "fsid = %s\n" % fsid in conf


def test_cluster_is_marked_as_the_testbeds(host):
    marker = json.loads(host.file("/var/lib/testbed/storage_ceph/ceph.json").content_string)
    assert (marker["system"], marker["name"], marker["fsid"]) == ("ceph", "ceph", host.check_output("ceph fsid"))


def test_pool_size_two_failure_domain_osd(host):
    pools = {p["pool_name"]: p for p in ceph(host, "osd", "pool", "ls", "detail")}
    pool = pools["rbd"]
    assert (pool["size"], pool["min_size"], pool["pg_num"], pool["pg_autoscale_mode"]) == (2, 1, 32, "off")
    assert "rbd" in pool["application_metadata"]
    rule = ceph(host, "osd", "crush", "rule", "dump", "replicated_osd")
    assert rule["rule_id"] == pool["crush_rule"]
    choose = [s for s in rule["steps"] if s["op"].startswith("choose")]
    assert [(s["op"], s["type"]) for s in choose] == [("choose_firstn", "osd")]
    # 16.2: {"pg_ready": ..., "pg_summary": {"num_pg_by_state": [...], "num_pgs": 33, ...}}
    summary = ceph(host, "pg", "stat")["pg_summary"]
    assert summary["num_pg_by_state"] == [{"name": "active+clean", "num": 33}]


def test_image_mapped_as_rbd_device(host):
    with open(os.path.join(EPHEMERAL, "storage_ceph_device.json")) as handle:
        fact = json.load(handle)["storage_ceph_device"]
    info = json.loads(host.check_output("rbd info --format json rbd/vol"))
    assert info["size"] == 1024 * 1024 * 1024
    mapped = json.loads(host.check_output("rbd device list --format json"))
    assert [(m["pool"], m["name"], m["device"]) for m in mapped] == [("rbd", "vol", fact)]
    assert fact.startswith("/dev/rbd")
    assert host.run("test -b %s" % fact).rc == 0
    assert host.check_output("blockdev --getsize64 %s" % fact) == str(1024 * 1024 * 1024)


def test_replace_disk_backfilled(host):
    path = os.path.join(EPHEMERAL, "replace_disk.json")
    # verify runs after side_effect (molecule.yml's test_sequence): no record is a failure, not a skip
    assert os.path.exists(path), "no %s: side_effect (replace_disk) has not run; run `molecule side_effect` first" % path
    with open(path) as handle:
        times = json.load(handle)
    assert times["replaced"] == "/dev/disk/by-id/virtio-tb-disk0"
    assert 0 < times["backfill_s"] < 900
    # both ids still there, up and in, each on its own disk
    osd = [o for o in ceph(host, "osd", "dump")["osds"] if o["osd"] in (0, 1)]
    assert all(o["up"] == 1 and o["in"] == 1 for o in osd)
    ids = {host.check_output("readlink /var/lib/ceph/osd/ceph-%d/block" % o["osd"]): o["osd"] for o in osd}
    assert set(ids) == set(DISKS)
