"""lab_storage: the storage node VM has real OpenZFS and kernel RBD, Ceph, the tools, two data disks by id."""

import pytest
import testinfra

STATE = "/var/lib/testbed/lab"
NAME = "lab-storage-molecule"


@pytest.fixture(scope="module")
def guest():
    return testinfra.get_host(
        "ssh://root@127.0.0.1:2227", ssh_identity_file=STATE + "/id_ed25519",
        ssh_extra_args="-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR")


def test_qemu_has_the_data_disks_with_serials_and_no_host_cache(host):
    pid = host.file("%s/%s.pid" % (STATE, NAME)).content_string.strip()
    cmdline = host.file("/proc/%s/cmdline" % pid).content_string.split("\0")
    for disk in ("disk0", "disk1"):
        drive = [a for a in cmdline if a.startswith("file=%s/%s-%s.img," % (STATE, NAME, disk))]
        assert len(drive) == 1 and "cache=none" in drive[0] and "snapshot" not in drive[0]
        assert "virtio-blk-pci,drive=disk-%s,serial=tb-%s" % (disk, disk) in cmdline
    assert host.file("%s/%s-disk0.img" % (STATE, NAME)).size == 1024 * 1024 * 1024


def test_data_disks_by_id_and_empty(guest):
    for serial in ("tb-disk0", "tb-disk1"):
        link = guest.file("/dev/disk/by-id/virtio-" + serial)
        assert link.is_symlink
        dev = guest.check_output("readlink -f /dev/disk/by-id/virtio-%s", serial)
        assert dev in ("/dev/vdb", "/dev/vdc")
        assert guest.check_output("blockdev --getsize64 %s", dev) == str(1024 * 1024 * 1024)
        assert guest.run("wipefs --no-act --noheadings %s", dev).stdout.strip() == ""


def test_openzfs_modules_match_the_tools(guest):
    assert guest.run("modprobe zfs").rc == 0
    loaded = guest.file("/sys/module/zfs/version").content_string.strip()
    tools = guest.check_output("dpkg-query -W -f='${Version}' zfsutils-linux")
    assert loaded.split("-")[0] == tools.split("-")[0]
    assert guest.run("zpool list").rc == 0


def test_kernel_rbd_and_ceph(guest):
    assert guest.run("modprobe rbd && test -d /sys/bus/rbd").rc == 0
    assert guest.check_output("ceph --version").startswith("ceph version 16.2.")
    for tool in ("ceph-mon", "ceph-mgr", "ceph-osd", "rbd", "fio", "sysbench", "mariadbd", "mkfs.xfs"):
        assert guest.exists(tool), tool


def test_udevd_runs_and_no_systemd(guest):
    assert guest.run("pgrep -x systemd-udevd").rc == 0
    assert not guest.file("/run/systemd/system").exists
