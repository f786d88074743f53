"""The disk-safety rule (module_utils/testbed_disk_safety.py) and the disk_safety module.

The evidence is the real wipefs / lsblk captures of tests/fixtures/{wipefs,lsblk}; the
resolved paths match the loop devices they were captured on.
"""
import disk_safety
import pytest
from ansible.module_utils import basic
from ansible.module_utils.testbed_disk_safety import check
from ansible.module_utils.testbed_parse_lsblk import parse as parse_lsblk
from ansible.module_utils.testbed_parse_wipefs import parse as parse_wipefs
from conftest import read_fixture
from helpers import run_module

BLANK, EXT4, GPT, ZFS, CEPH, LVM = "/dev/loop0", "/dev/loop1", "/dev/loop2", "/dev/loop3", "/dev/loop4", "/dev/loop5"
FIXTURE = {BLANK: "blank", EXT4: "ext4", GPT: "gpt_ext4_partition", ZFS: "zfs_member", CEPH: "ceph_bluestore",
           LVM: "lvm"}
ID = "/dev/disk/by-id/"


def inspection(device, lsblk=None, holders=(), busy=False, by_id=()):
    name = FIXTURE[device]
    wipefs = {device: parse_wipefs(read_fixture("wipefs", name + ".json"))}
    if device == GPT:
        wipefs[GPT + "p1"] = parse_wipefs(read_fixture("wipefs", "gpt_ext4_partition_p1.json"))
        wipefs[GPT + "p2"] = parse_wipefs(read_fixture("wipefs", "blank.json"))
    return {"block": True, "lsblk": parse_lsblk(read_fixture("lsblk", (lsblk or name) + ".json")),
            "wipefs": wipefs, "holders": list(holders), "busy": busy, "by_id": list(by_id)}


def run(devices, wipe=(), links=None, **inspections):
    """links: path -> device (None = missing); inspections: device -> inspection (default from FIXTURE)."""
    links = dict(links or {})
    resolved = {}
    for path in list(devices) + list(wipe):
        resolved[path] = links.get(path, path) if path in links else path
    found = {}
    for target in set(v for v in resolved.values() if v):
        found[target] = inspections.get(target.replace("/dev/", ""), None) or (
            inspection(target) if target in FIXTURE else {"block": False})
    return check(list(devices), list(wipe), resolved, found)


def test_blank_disks_named_by_id_are_resolved_and_allowed():
    result = run([ID + "virtio-a"], links={ID + "virtio-a": BLANK})
    assert result["ok"] and result["msg"] is None
    (entry,) = result["devices"]
    assert (entry["path"], entry["resolved"], entry["allowed"], entry["needs_wipe"]) == (ID + "virtio-a", BLANK, True, False)
    assert entry["size_bytes"] == 64 * 1024 * 1024 and entry["rotational"] is True and entry["type"] == "loop"
    assert entry["signatures"] == [] and entry["reason"].startswith("blank")


def test_a_disk_holding_ext4_is_refused_and_named_with_how_to_allow_it():
    result = run([ID + "virtio-a", ID + "virtio-data"], links={ID + "virtio-a": BLANK, ID + "virtio-data": EXT4})
    assert not result["ok"]
    assert result["msg"] == (
        "Disk safety check: nothing was written, because /dev/loop1 (/dev/disk/by-id/virtio-data) holds "
        'an ext4 filesystem labelled "sdfx-ext4" and is not in storage_wipe_devices (to allow wiping it, '
        "add /dev/disk/by-id/virtio-data to storage_wipe_devices).")
    ext4 = result["devices"][1]
    assert ext4["allowed"] is False and ext4["signature_types"] == ["ext4"]
    assert result["devices"][0]["allowed"] is True  # the blank one is fine, but the run stops


def test_one_sentence_names_every_refused_device_and_what_is_on_it():
    devices = [EXT4, GPT, ZFS, CEPH, LVM]
    result = run(devices)
    msg = result["msg"]
    assert len(result["problems"]) == 5 and msg.count("; ") == 4 and msg.endswith(").")
    assert "\n" not in msg
    for phrase in ('/dev/loop1 holds an ext4 filesystem labelled "sdfx-ext4"',
                   "/dev/loop2 holds a gpt partition table, a GPT protective MBR and "
                   'an ext4 filesystem labelled "sdfx-part1" on partition /dev/loop2p1',
                   '/dev/loop3 holds a ZFS vdev label of pool "sdfxpool" and is not in storage_wipe_devices',
                   "/dev/loop4 holds a Ceph BlueStore OSD label",
                   "/dev/loop5 holds an LVM2 physical volume"):
        assert phrase in msg
    assert result["devices"][2]["summary"] == ['a ZFS vdev label of pool "sdfxpool"']  # 17 labels, one phrase


def test_a_listed_device_with_signatures_is_allowed_and_marked_for_wiping():
    result = run([ID + "virtio-data"], wipe=[ID + "virtio-data"], links={ID + "virtio-data": EXT4})
    assert result["ok"]
    (entry,) = result["devices"]
    assert entry["needs_wipe"] and entry["allowed"] and entry["listed_as"] == ID + "virtio-data"
    assert entry["reason"] == ("listed in storage_wipe_devices as /dev/disk/by-id/virtio-data: will be wiped "
                               '(holds an ext4 filesystem labelled "sdfx-ext4")')


def test_the_wipe_list_may_name_the_device_by_another_path():
    result = run([ID + "virtio-data"], wipe=[EXT4], links={ID + "virtio-data": EXT4})
    assert result["ok"] and result["devices"][0]["listed_as"] == EXT4


def test_a_mounted_device_is_refused_even_when_listed():
    mounted = inspection(EXT4, lsblk="ext4_mounted", busy=True)
    result = run([EXT4], wipe=[EXT4], loop1=mounted)
    assert not result["ok"] and result["devices"][0]["needs_wipe"] is False
    assert result["msg"] == (
        "Disk safety check: nothing was written, because /dev/loop1 is mounted (/dev/loop1 on /var/tmp/sdfx/mnt) "
        'and holds an ext4 filesystem labelled "sdfx-ext4" (a device in use is never wiped, even when listed in '
        "storage_wipe_devices: free it or pick another disk).")


def test_a_held_or_busy_device_is_refused_even_when_listed_and_blank():
    result = run([BLANK], wipe=[BLANK], loop0=inspection(BLANK, holders=["/dev/md0"]))
    assert not result["ok"] and "/dev/loop0 is held by /dev/md0" in result["msg"]
    result = run([BLANK], wipe=[BLANK], loop0=inspection(BLANK, busy=True))
    assert not result["ok"] and "open exclusively by another program" in result["msg"]


def test_a_listed_device_that_does_not_exist_stops_the_run():
    result = run([BLANK], wipe=[ID + "virtio-gone"], links={ID + "virtio-gone": None})
    assert not result["ok"]
    assert "storage_wipe_devices names /dev/disk/by-id/virtio-gone, which does not exist" in result["msg"]


def test_a_listed_device_that_resolves_to_another_disk_stops_the_run():
    result = run([BLANK], wipe=[ID + "virtio-other"], links={ID + "virtio-other": EXT4})
    assert not result["ok"]
    assert ("storage_wipe_devices names /dev/disk/by-id/virtio-other, which resolves to /dev/loop1, "
            "not one of the devices in storage_disks_devices") in result["msg"]


def test_duplicate_devices_stop_the_run():
    result = run([ID + "virtio-a", BLANK], links={ID + "virtio-a": BLANK})
    assert not result["ok"] and len(result["devices"]) == 1
    assert ("/dev/disk/by-id/virtio-a and /dev/loop0 (in storage_disks_devices) are the same device /dev/loop0"
            in result["msg"])


def test_missing_and_non_block_devices_stop_the_run():
    result = run([ID + "virtio-gone", "/var/tmp/disk.img"], links={ID + "virtio-gone": None})
    assert result["problems"] == ["/dev/disk/by-id/virtio-gone (in storage_disks_devices) does not exist",
                                  "/var/tmp/disk.img is not a block device"]


def test_a_signature_only_udev_reports_still_refuses():
    insp = inspection(BLANK)
    insp["lsblk"]["details"]["flat"][0]["fstype"] = "xfs"
    result = run([BLANK], loop0=insp)
    assert not result["ok"] and "an xfs filesystem (reported by udev)" in result["msg"]


def test_the_suggested_name_is_a_by_id_link_when_the_host_has_one():
    result = run([EXT4], loop1=inspection(EXT4, by_id=[ID + "ata-DISK_1"]))
    assert "(to allow wiping it, add /dev/disk/by-id/ata-DISK_1 to storage_wipe_devices)" in result["msg"]


# --- the module, its host access replaced by the fixtures -------------------------------------------

def _patch(mp, links):
    def run_command(self, argv, **kwargs):
        device = argv[-1]
        if argv[0].endswith("lsblk"):
            return 0, read_fixture("lsblk", FIXTURE[device] + ".json"), ""
        name = "gpt_ext4_partition_p1" if device == GPT + "p1" else (
            "blank" if device == GPT + "p2" else FIXTURE[device])
        return 0, read_fixture("wipefs", name + ".json"), ""

    mp.setattr(basic.AnsibleModule, "run_command", run_command)
    mp.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: "/usr/bin/" + name)
    mp.setattr(disk_safety, "resolve", lambda path: links.get(path, path) if path in links else path)
    mp.setattr(disk_safety, "is_block", lambda path: True)
    mp.setattr(disk_safety, "busy", lambda path: False)
    mp.setattr(disk_safety, "holders", lambda kname: [])
    mp.setattr(disk_safety, "by_id_links", lambda target: [])


def test_module_refuses_in_check_mode_too_and_names_the_partition():
    with pytest.MonkeyPatch.context() as mp:
        _patch(mp, {ID + "virtio-b": GPT})
        failed, result = run_module(disk_safety, {"devices": [ID + "virtio-b"], "_ansible_check_mode": True})
    assert failed and result["ok"] is False
    assert 'an ext4 filesystem labelled "sdfx-part1" on partition /dev/loop2p1' in result["msg"]
    assert result["devices"][0]["partitions"] == ["/dev/loop2p1", "/dev/loop2p2"]


def test_module_returns_the_devices_when_safe():
    with pytest.MonkeyPatch.context() as mp:
        _patch(mp, {ID + "virtio-a": BLANK, ID + "virtio-c": CEPH})
        failed, result = run_module(disk_safety, {"devices": [ID + "virtio-a", ID + "virtio-c"],
                                                  "wipe_devices": [ID + "virtio-c"]})
    assert not failed and result["changed"] is False and result["check_mode"] is False
    assert [(d["resolved"], d["needs_wipe"]) for d in result["devices"]] == [(BLANK, False), (CEPH, True)]
    assert result["devices"][1]["signature_types"] == ["ceph_bluestore"]


def test_module_refuses_an_empty_device_list():
    failed, result = run_module(disk_safety, {"devices": []})
    assert failed and "storage_disks_devices is empty" in result["msg"]


def test_a_listed_blank_disk_is_left_alone():
    result = run([BLANK], wipe=[BLANK])
    assert result["ok"] and result["devices"][0]["needs_wipe"] is False and result["devices"][0]["listed"]


def test_the_module_host_helpers_resolve_links_and_find_by_id_names(tmp_path, monkeypatch):
    target = tmp_path / "disk"
    target.write_bytes(b"\0" * 512)
    (tmp_path / "by-id").mkdir()
    (tmp_path / "by-id" / "virtio-x").symlink_to(target)
    (tmp_path / "by-id" / "virtio-gone").symlink_to(tmp_path / "missing")
    assert disk_safety.resolve(str(tmp_path / "by-id" / "virtio-x")) == str(target)
    assert disk_safety.resolve(str(tmp_path / "by-id" / "virtio-gone")) is None  # a dangling link
    assert disk_safety.is_block(str(target)) is False and disk_safety.is_block(str(tmp_path / "missing")) is False
    monkeypatch.setattr(disk_safety, "BY_ID", str(tmp_path / "by-id"))
    assert disk_safety.by_id_links(str(target)) == [str(tmp_path / "by-id" / "virtio-x")]
    monkeypatch.setattr(disk_safety, "SYS_BLOCK", str(tmp_path / "sys"))
    (tmp_path / "sys" / "sdb" / "holders" / "md0").mkdir(parents=True)
    assert disk_safety.holders("sdb") == ["/dev/md0"] and disk_safety.holders("sdc") == []
