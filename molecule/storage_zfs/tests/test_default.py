"""storage_zfs in the lab storage VM: a mirror of the two disks by id, a zvol block device, replace_disk resilvers."""

import json
import os
import re
import subprocess
import time

import pytest

EPHEMERAL = os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "")
SCENARIO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INVENTORY = os.path.join(EPHEMERAL, "inventory")
HOST = "storage-zfs-molecule"
DISKS = ["/dev/disk/by-id/virtio-tb-disk0", "/dev/disk/by-id/virtio-tb-disk1"]
RESILVER_TIMEOUT = 900


def playbook(name, *args):
    """Run a playbook of the scenario against the VM with molecule's inventory; return its output."""
    env = dict(os.environ, ANSIBLE_HOST_KEY_CHECKING="False", ANSIBLE_FORCE_COLOR="0")
    done = subprocess.run(["ansible-playbook", "-i", INVENTORY, os.path.join(SCENARIO, name), *args],
                          capture_output=True, text=True, timeout=1800, env=env, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    return done.stdout


def recap(output):
    match = re.search(r"^%s\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)" % re.escape(HOST),
                      output, re.M)
    assert match, output[-3000:]
    return dict(zip(["ok", "changed", "unreachable", "failed"], map(int, match.groups())))


def config_lines(status):
    """The vdev lines of `zpool status` (after config:, before errors:), split into fields."""
    body = status.split("\nconfig:", 1)[1].split("\nerrors:", 1)[0]
    return [line.split() for line in body.splitlines() if line.strip() and not line.strip().startswith("NAME")]


@pytest.fixture(scope="module")
def fact():
    with open(os.path.join(EPHEMERAL, "storage_zfs.json")) as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def resolved(host):
    return [host.check_output("readlink -f %s", disk) for disk in DISKS]


def test_pool_is_online(host):
    assert host.check_output("zpool list -H -o name,health testbed").split() == ["testbed", "ONLINE"]
    assert "errors: No known data errors" in host.check_output("zpool status testbed")


def test_pool_is_marked_as_the_testbeds(host):
    # the marker holds the pool's GUID; the root dataset carries the tag for people
    guid = host.check_output("zpool get -H -p -o value guid testbed")
    marker = json.loads(host.file("/var/lib/testbed/storage_zfs/testbed.json").content_string)
    assert (marker["system"], marker["name"], marker["guid"], marker["node"]) == ("zfs", "testbed", guid, HOST)
    assert host.check_output("zfs get -H -o value,source org.testbed:owner testbed").split() == ["storage_zfs", "local"]


def test_pool_is_a_mirror_of_the_two_disks_by_id(host, resolved):
    lines = config_lines(host.check_output("zpool status -P testbed"))
    assert [fields[:2] for fields in lines] == [
        ["testbed", "ONLINE"], ["mirror-0", "ONLINE"],
        [DISKS[0] + "-part1", "ONLINE"], [DISKS[1] + "-part1", "ONLINE"]]
    real = config_lines(host.check_output("zpool status -P -L testbed"))
    assert [fields[0] for fields in real[2:]] == [dev + "1" for dev in resolved]
    assert host.check_output("zpool get -H -p -o value ashift testbed") == "12"


def test_listed_ext4_disk_was_wiped_before_the_pool(host, resolved):
    # prepare.yml put ext4 on disk1; now it carries ZFS's GPT (part1 data, part9 reserved), no ext4
    signatures = host.check_output("wipefs --no-act --noheadings --output TYPE %s %s1", resolved[1], resolved[1]).split()
    assert "ext4" not in signatures
    assert "zfs_member" in signatures and "gpt" in signatures


def test_zvol_is_a_block_device_and_the_fact(host, fact):
    link = "/dev/zvol/testbed/vol"
    assert host.file(link).is_symlink
    device = host.check_output("readlink -f %s", link)
    assert re.fullmatch(r"/dev/zd\d+", device)
    assert fact["storage_zfs_device"] == device
    assert host.run("test -b %s", device).rc == 0
    assert host.check_output("blockdev --getsize64 %s", device) == str(512 * 1024 * 1024)
    props = dict(line.split("\t") for line in
                 host.check_output("zfs get -H -p -o property,value volsize,volblocksize,compression testbed/vol")
                 .splitlines())
    assert props == {"volsize": str(512 * 1024 * 1024), "volblocksize": "16384", "compression": "off"}


def test_module_version_fact(host, fact):
    assert fact["storage_zfs_version"] == host.file("/sys/module/zfs/version").content_string.strip()
    assert fact["storage_zfs_version"].startswith("2.1.")


def test_check_mode_changes_nothing(host):
    # the storage_zfs play only (converge.yml's first play, lab_storage on this host, is not what is checked)
    assert recap(playbook("converge.yml", "--check", "--limit", HOST))["changed"] == 0
    assert host.check_output("zpool list -H -o name,health testbed").split() == ["testbed", "ONLINE"]


def test_replace_disk_resilvers_and_keeps_the_data(host, fact):
    device = fact["storage_zfs_device"]
    # data to resilver: 64 MiB of random data written through the zvol, its checksum kept (an emulated
    # CPU hashes about 10 MiB/s: more data makes the test slower, not stronger)
    host.check_output("dd if=/dev/urandom of=%s bs=1M count=64 oflag=direct status=none", device)
    before = host.check_output("dd if=%s bs=1M count=64 iflag=direct status=none | sha256sum", device)
    guid0 = {fields[0] for fields in config_lines(host.check_output("zpool status -g testbed"))}

    out = playbook("replace.yml")
    assert recap(out)["failed"] == 0
    started = time.monotonic()
    status = host.check_output("zpool status -p testbed")
    # right after the role: the old member is being replaced by the wiped disk
    assert "replacing-0" in status or "resilvered" in status, status

    while True:
        status = host.check_output("zpool status -p testbed")
        if "resilver in progress" not in status and "replacing-" not in status:
            break
        assert time.monotonic() - started < RESILVER_TIMEOUT, "resilver not done in %d s:\n%s" % (RESILVER_TIMEOUT,
                                                                                              status)
        time.sleep(2)

    assert re.search(r"scan: resilvered [0-9.]+[BKMGTPE]? in [0-9:]+ with 0 errors", status), status
    lines = config_lines(host.check_output("zpool status -P testbed"))
    assert [fields[:2] for fields in lines] == [
        ["testbed", "ONLINE"], ["mirror-0", "ONLINE"],
        [DISKS[0] + "-part1", "ONLINE"], [DISKS[1] + "-part1", "ONLINE"]]
    # disk0's member is a new vdev (new GUID), disk1's the same
    guid1 = {fields[0] for fields in config_lines(host.check_output("zpool status -g testbed"))}
    assert len(guid1 - guid0) == 1
    host.check_output("zpool scrub -w testbed")
    assert "errors: No known data errors" in host.check_output("zpool status testbed")
    after = host.check_output("dd if=%s bs=1M count=64 iflag=direct status=none | sha256sum", device)
    assert after == before


# The node itself (role lab_storage; create.yml checked its fresh disks: by id, 1 GiB, empty).
STATE = "/var/lib/testbed/lab"


def test_qemu_has_the_data_disks_with_serials_and_no_host_cache():
    with open("%s/%s.pid" % (STATE, HOST)) as handle:
        pid = handle.read().strip()
    with open("/proc/%s/cmdline" % pid) as handle:
        cmdline = handle.read().split("\0")
    for disk in ("disk0", "disk1"):
        drive = [a for a in cmdline if a.startswith("file=%s/%s-%s.img," % (STATE, HOST, disk))]
        assert len(drive) == 1 and "cache=none" in drive[0] and "snapshot" not in drive[0]
        assert "virtio-blk-pci,drive=disk-%s,serial=tb-%s" % (disk, disk) in cmdline
    assert os.path.getsize("%s/%s-disk0.img" % (STATE, HOST)) == 1024 * 1024 * 1024


def test_openzfs_modules_match_the_tools(host):
    loaded = host.file("/sys/module/zfs/version").content_string.strip()
    tools = host.check_output("dpkg-query -W -f='${Version}' zfsutils-linux")
    assert loaded.split("-")[0] == tools.split("-")[0]


def test_kernel_rbd_and_ceph(host):
    assert host.run("modprobe rbd && test -d /sys/bus/rbd").rc == 0
    assert host.check_output("ceph --version").startswith("ceph version 16.2.")
    for tool in ("ceph-mon", "ceph-mgr", "ceph-osd", "rbd", "fio", "sysbench", "mariadbd", "mkfs.xfs"):
        assert host.exists(tool), tool


def test_udevd_runs_and_no_systemd(host):
    assert host.run("pgrep -x systemd-udevd").rc == 0
    assert not host.file("/run/systemd/system").exists
