"""roles/storage_client: the qemu drive of the storage volume and the compute node's Ceph client files."""
import pytest
from ansible.module_utils import storage_client_qemu as qemu
from storage_client import AnsibleFilterError, FilterModule

RBD = {"kind": "rbd", "pool": "rbd", "image": "vol", "user": "testbed-compute", "key": "AQBxyz==",
       "monitors": ["10.233.0.1"]}
ISCSI = {"kind": "iscsi", "portal": "10.233.0.1:3260", "iqn": "iqn.2026-11.org.testbed:storage-compare", "lun": 0}


def test_rbd_drive_is_librbd_in_qemu_with_the_conf_and_user():
    args = qemu.drive_args(RBD, "tb-data", "none", "/var/lib/testbed/storage_client/ceph.conf")
    assert args == [
        "-drive", "file=rbd:rbd/vol:id=testbed-compute:conf=/var/lib/testbed/storage_client/ceph.conf,"
                  "if=none,id=data,format=raw,cache=none",
        "-device", "virtio-blk-pci,drive=data,serial=tb-data"]


def test_iscsi_drive_is_libiscsi_with_the_initiator_name():
    args = qemu.drive_args(ISCSI, "tb-data", "none", "", "iqn.2026-11.org.testbed:compute")
    assert args[:2] == ["-iscsi", "initiator-name=iqn.2026-11.org.testbed:compute"]
    assert args[3] == ("file=iscsi://10.233.0.1:3260/iqn.2026-11.org.testbed:storage-compare/0,"
                       "if=none,id=data,format=raw,cache=none")
    assert qemu.drive_args(ISCSI, "tb-data")[0] == "-drive"


def test_ceph_files():
    assert qemu.ceph_conf(RBD, "/k") == "[global]\nmon_host = 10.233.0.1\nkeyring = /k\n"
    assert qemu.ceph_keyring(RBD) == "[client.testbed-compute]\n\tkey = AQBxyz==\n"
    with pytest.raises(ValueError, match="not an RBD image"):
        qemu.ceph_conf(ISCSI, "/k")


@pytest.mark.parametrize("volume, message", [
    ({}, "kind must be one of rbd, iscsi"),
    ("rbd", "must be a dict"),
    (dict(RBD, key=""), "key is missing"),
    (dict(RBD, pool="a/b"), "pool 'a/b' is not valid"),
    (dict(RBD, monitors=[]), "monitors must be a non-empty list"),
    (dict(ISCSI, portal="10.233.0.1"), "portal '10.233.0.1' is not valid"),
    (dict(ISCSI, iqn="storage"), "iqn 'storage' is not valid"),
    (dict(ISCSI, lun=300), "lun must be an integer 0-255"),
])
def test_bad_volumes_are_named(volume, message):
    with pytest.raises(ValueError, match=message):
        qemu.drive_args(volume, "tb-data", "none", "/c")


def test_bad_drive_settings():
    with pytest.raises(ValueError, match="serial"):
        qemu.drive_args(ISCSI, "tb data")
    with pytest.raises(ValueError, match="cache mode"):
        qemu.drive_args(ISCSI, "tb-data", "fast")
    with pytest.raises(ValueError, match="conf_path"):
        qemu.drive_args(RBD, "tb-data", "none", "/a,b")


def test_filters_raise_ansible_errors():
    filters = FilterModule().filters()
    assert filters["storage_client_drive_args"](ISCSI, "tb-data")[0] == "-drive"
    with pytest.raises(AnsibleFilterError, match="storage_client_drive_args: storage volume kind"):
        filters["storage_client_drive_args"]({"kind": "nfs"}, "tb-data")
