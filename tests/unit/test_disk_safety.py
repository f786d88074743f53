"""The disk-safety rule (module_utils/testbed_disk_safety.py) and the disk_safety module.

The evidence is the real wipefs / lsblk captures of tests/fixtures/{wipefs,lsblk}; the
resolved paths match the loop devices they were captured on (loop devices: the rule
is applied with allow_loop, as the lab's loop scenario does). The devices this host
cannot make (partitions of a root disk, LVM, dm-crypt, md, zvols, active swap: no
device-mapper, MD or ZFS in its kernel) are synthetic lsblk documents further down,
in the exact JSON shape of util-linux 2.38.1 with the module's columns.
"""
import json

import disk_safety
import pytest
from ansible.module_utils import basic
from ansible.module_utils.testbed_disk_safety import check, confirm, human_size
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
    return check(list(devices), list(wipe), resolved, found, allow_loop=True)


def test_blank_disks_named_by_id_are_resolved_and_allowed():
    result = run([ID + "virtio-a"], links={ID + "virtio-a": BLANK})
    assert result["ok"] and result["msg"] is None
    assert result["plan"] == [ID + "virtio-a (/dev/loop0): model none, serial none, 64 MiB (67108864 bytes) - "
                              "blank, used as it is"]
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
    mp.setattr(disk_safety, "zvol_links", lambda target: [])


def test_module_refuses_in_check_mode_too_and_names_the_partition():
    with pytest.MonkeyPatch.context() as mp:
        _patch(mp, {ID + "virtio-b": GPT})
        failed, result = run_module(disk_safety, {"devices": [ID + "virtio-b"], "allow_loop": True,
                                                  "_ansible_check_mode": True})
    assert failed and result["ok"] is False
    assert 'an ext4 filesystem labelled "sdfx-part1" on partition /dev/loop2p1' in result["msg"]
    assert result["devices"][0]["partitions"] == ["/dev/loop2p1", "/dev/loop2p2"]


def test_module_returns_the_devices_when_safe():
    with pytest.MonkeyPatch.context() as mp:
        _patch(mp, {ID + "virtio-a": BLANK, ID + "virtio-c": CEPH})
        failed, result = run_module(disk_safety, {"devices": [ID + "virtio-a", ID + "virtio-c"],
                                                  "wipe_devices": [ID + "virtio-c"], "allow_loop": True})
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


# --- devices that are not whole disks, or whole disks in use: synthetic lsblk evidence ---------------
#
# SYNTHETIC: this host has no device-mapper, MD or ZFS in its kernel and its root disk is not ours to
# probe, so these lsblk documents are written by hand - in the exact shape util-linux 2.38.1 prints for
# `lsblk --json --bytes --output NAME,KNAME,PATH,TYPE,SIZE,ROTA,RO,MODEL,SERIAL,WWN,FSTYPE,PTTYPE,
# PARTTYPE,LABEL,UUID,MOUNTPOINTS,PKNAME <device>` (the captures above: every column, lower-case keys,
# size a number, rota/ro booleans, mountpoints a list holding null when nothing is mounted, children
# nested, PKNAME the parent's kernel name). Names follow the kernel's: a dm device's NAME is its
# mapper name, KNAME dm-N, PATH /dev/mapper/<name>; an md array is mdN of TYPE raid1; a zvol is zdN of
# TYPE disk; active swap shows as the mount point "[SWAP]". FSTYPE is null as without udevd (the
# signatures come from wipefs, blank here unless said).

GIB = 1024 ** 3


def blk(name, lsblk_type, size, pkname=None, kname=None, path=None, model=None, serial=None,
        mountpoints=(None,), children=None):
    entry = {"name": name, "kname": kname or name, "path": path or "/dev/" + name, "type": lsblk_type,
             "size": size, "rota": False, "ro": False, "model": model, "serial": serial, "wwn": None,
             "fstype": None, "pttype": None, "parttype": None, "label": None, "uuid": None,
             "mountpoints": list(mountpoints), "pkname": pkname}
    if children:
        entry["children"] = children
    return entry


def synthetic(top, wipefs=None, holders=(), busy=False, zvol_links=(), by_id=()):
    """An inspection from one lsblk tree; wipefs blank on the device and its partitions unless given."""
    parsed = parse_lsblk(json.dumps({"blockdevices": [top]}, indent=3))
    flat = parsed["details"]["flat"]
    blank = read_fixture("wipefs", "blank.json")
    found = dict((d["path"], parse_wipefs(blank)) for d in flat if d["depth"] == 0 or d["type"] == "part")
    for path, name in (wipefs or {}).items():
        found[path] = parse_wipefs(read_fixture("wipefs", name + ".json"))
    return {"block": True, "lsblk": parsed, "wipefs": found, "holders": list(holders), "busy": busy,
            "by_id": list(by_id), "zvol_links": list(zvol_links)}


def run_on(devices, found, wipe=(), links=None, **options):
    """found: device node -> inspection; links: path -> device node."""
    links = dict(links or {})
    resolved = dict((path, links.get(path, path)) for path in list(devices) + list(wipe))
    return check(list(devices), list(wipe), resolved, found, **options)


# The root disk: sda1 is /, sda2 active swap, sda3 a blank partition nobody uses.
ROOT_DISK = blk("sda", "disk", 500 * GIB, model="Samsung SSD 870", serial="S6PNNS0T123456", children=[
    blk("sda1", "part", 100 * GIB, pkname="sda", mountpoints=["/"]),
    blk("sda2", "part", 8 * GIB, pkname="sda", mountpoints=["[SWAP]"]),
    blk("sda3", "part", 392 * GIB, pkname="sda"),
])
SDA3_ID = ID + "ata-Samsung_SSD_870_S6PNNS0T123456-part3"


@pytest.mark.parametrize("wipe", [[], [SDA3_ID]], ids=["unlisted", "listed"])
def test_a_blank_partition_of_the_root_disk_is_refused_listed_or_not(wipe):
    sda3 = synthetic(blk("sda3", "part", 392 * GIB, pkname="sda"))
    result = run_on([SDA3_ID], {"/dev/sda3": sda3}, wipe=wipe, links={SDA3_ID: "/dev/sda3"})
    assert not result["ok"] and result["devices"][0]["needs_wipe"] is False
    assert result["problems"] == ["/dev/sda3 (%s) is a partition of /dev/sda; give the whole disk, not a partition"
                                  % SDA3_ID]
    assert "refused: not a whole disk" in result["plan"][0]


def test_the_root_disk_itself_is_refused_for_its_mounted_and_swap_partitions():
    result = run_on(["/dev/sda"], {"/dev/sda": synthetic(ROOT_DISK)}, wipe=["/dev/sda"])
    assert not result["ok"]
    assert result["problems"] == [
        "/dev/sda is mounted (/dev/sda1 on /) and active swap (/dev/sda2) (a device in use is never wiped, even "
        "when listed in storage_wipe_devices: free it or pick another disk)"]


@pytest.mark.parametrize("wipe", [[], ["/dev/mapper/vg0-data"]], ids=["unlisted", "listed"])
def test_an_unmounted_logical_volume_is_refused(wipe):
    lv = synthetic(blk("vg0-data", "lvm", 20 * GIB, kname="dm-0", path="/dev/mapper/vg0-data"))
    result = run_on(["/dev/mapper/vg0-data"], {"/dev/mapper/vg0-data": lv}, wipe=wipe)
    assert result["problems"] == ["/dev/mapper/vg0-data is an LVM logical volume, not a whole disk "
                                  "(give a whole disk)"]


def test_a_disk_whose_partition_holds_an_active_logical_volume_is_refused_even_when_listed():
    sdb = synthetic(blk("sdb", "disk", 1000 * GIB, serial="WD-1", children=[
        blk("sdb1", "part", 1000 * GIB, pkname="sdb", children=[
            blk("vg0-data", "lvm", 20 * GIB, kname="dm-0", path="/dev/mapper/vg0-data", pkname="sdb1")])]),
        wipefs={"/dev/sdb1": "lvm"}, holders=["/dev/dm-0"])
    result = run_on(["/dev/sdb"], {"/dev/sdb": sdb}, wipe=["/dev/sdb"])
    assert not result["ok"]
    (problem,) = result["problems"]
    assert problem.startswith("/dev/sdb is held by /dev/mapper/vg0-data (an LVM logical volume) "
                              "and holds an LVM2 physical volume on partition /dev/sdb1")


@pytest.mark.parametrize("links", [[], ["/dev/zvol/backup/vm-disk"]], ids=["by-name", "by-zvol-link"])
def test_a_foreign_zvol_used_raw_is_refused(links):
    # a zvol is TYPE disk for lsblk: told by its kernel name zdN, or by udev's /dev/zvol link
    name = "zd0" if not links else "zd16"
    zvol = synthetic(blk(name, "disk", 8 * GIB), zvol_links=links)
    result = run_on(["/dev/" + name], {"/dev/" + name: zvol}, wipe=["/dev/" + name])
    assert not result["ok"] and result["devices"][0]["needs_wipe"] is False
    assert result["problems"][0].startswith("/dev/%s is a ZFS zvol" % name)
    assert "a zvol is never used raw" in result["problems"][0]
    if links:
        assert "(/dev/zvol/backup/vm-disk)" in result["problems"][0]


def test_a_zvol_link_alone_marks_a_device_with_another_name_as_a_zvol():
    zvol = synthetic(blk("vdz", "disk", 8 * GIB), zvol_links=["/dev/zvol/tank/vol"])
    assert "is a ZFS zvol (/dev/zvol/tank/vol)" in run_on(["/dev/vdz"], {"/dev/vdz": zvol})["msg"]


def test_a_mapped_rbd_image_is_refused():
    rbd = synthetic(blk("rbd0", "disk", 8 * GIB))
    assert run_on(["/dev/rbd0"], {"/dev/rbd0": rbd})["problems"] == [
        "/dev/rbd0 is a mapped Ceph RBD image, not a disk (give a whole disk)"]


def test_a_dm_crypt_mapping_and_the_disk_under_it_are_refused():
    crypt = synthetic(blk("luks-data", "crypt", 100 * GIB, kname="dm-1", path="/dev/mapper/luks-data"))
    sdc = synthetic(blk("sdc", "disk", 100 * GIB, children=[
        blk("luks-data", "crypt", 100 * GIB, kname="dm-1", path="/dev/mapper/luks-data", pkname="sdc")]),
        holders=["/dev/dm-1"])
    result = run_on(["/dev/mapper/luks-data"], {"/dev/mapper/luks-data": crypt})
    assert result["problems"] == ["/dev/mapper/luks-data is a dm-crypt mapping, not a whole disk (give a whole disk)"]
    result = run_on(["/dev/sdc"], {"/dev/sdc": sdc}, wipe=["/dev/sdc"])
    assert result["problems"][0].startswith(
        "/dev/sdc is held by /dev/mapper/luks-data (a dm-crypt mapping) (a device in use")


def test_a_disk_with_active_swap_is_refused_even_when_listed():
    sdd = synthetic(blk("sdd", "disk", 16 * GIB, mountpoints=["[SWAP]"]), wipefs={"/dev/sdd": "swap"})
    result = run_on(["/dev/sdd"], {"/dev/sdd": sdd}, wipe=["/dev/sdd"])
    assert result["problems"] == [
        '/dev/sdd is active swap (/dev/sdd) and holds a swap area labelled "sdfx-swap" (a device in use is never '
        "wiped, even when listed in storage_wipe_devices: free it or pick another disk)"]
    assert result["devices"][0]["mounted"] == [] and result["devices"][0]["swap"] == ["/dev/sdd"]


def test_an_md_member_and_the_md_array_are_refused():
    sde = synthetic(blk("sde", "disk", 500 * GIB, children=[
        blk("md0", "raid1", 500 * GIB - 2 ** 20, pkname="sde")]), holders=["/dev/md0"])
    result = run_on(["/dev/sde"], {"/dev/sde": sde}, wipe=["/dev/sde"])
    assert result["problems"][0].startswith("/dev/sde is held by /dev/md0 (an md raid1 array) (a device")
    md0 = synthetic(blk("md0", "raid1", 500 * GIB - 2 ** 20))
    assert run_on(["/dev/md0"], {"/dev/md0": md0})["problems"] == [
        "/dev/md0 is an md raid1 array, not a whole disk (give a whole disk)"]


def test_a_disk_together_with_its_own_partition_is_refused():
    disk = blk("sdf", "disk", 100 * GIB, children=[blk("sdf1", "part", 50 * GIB, pkname="sdf")])
    found = {"/dev/sdf": synthetic(disk), "/dev/sdf1": synthetic(blk("sdf1", "part", 50 * GIB, pkname="sdf"))}
    result = run_on(["/dev/sdf", "/dev/sdf1"], found, wipe=["/dev/sdf", "/dev/sdf1"])
    assert not result["ok"]
    assert ("/dev/sdf1 (in storage_disks_devices) is inside /dev/sdf, also in storage_disks_devices (name the "
            "whole disk once, never a disk together with its partition)") in result["problems"]
    assert "/dev/sdf1 is a partition of /dev/sdf; give the whole disk, not a partition" in result["problems"]
    assert [d["needs_wipe"] for d in result["devices"]] == [False, False]


def test_a_loop_device_is_taken_only_when_loops_are_allowed():
    result = check([BLANK], [], {BLANK: BLANK}, {BLANK: inspection(BLANK)})
    assert result["problems"] == [
        "/dev/loop0 is a loop device, not a disk (loop devices are taken only when storage_disks_allow_loop is "
        "true, for a lab made of loop devices: give a whole disk)"]
    assert check([BLANK], [], {BLANK: BLANK}, {BLANK: inspection(BLANK)}, allow_loop=True)["ok"]


def test_a_whole_disk_is_taken_and_the_plan_names_its_model_serial_and_size():
    sdg = synthetic(blk("sdg", "disk", 1000204886016, model="WDC WD10EZEX-00BN5A0", serial="WD-WCC3F1234567"),
                    wipefs={"/dev/sdg": "ext4"})
    path = ID + "ata-WDC_WD10EZEX-00BN5A0_WD-WCC3F1234567"
    result = run_on([path], {"/dev/sdg": sdg}, wipe=[path], links={path: "/dev/sdg"})
    assert result["ok"] and result["devices"][0]["needs_wipe"]
    assert result["plan"] == [
        path + ' (/dev/sdg): model WDC WD10EZEX-00BN5A0, serial WD-WCC3F1234567, 932 GiB (1000204886016 bytes) - '
        'will be wiped (holds an ext4 filesystem labelled "sdfx-ext4")']


def test_human_sizes():
    assert [human_size(n) for n in (512, 64 * 2 ** 20, 4 * GIB, 1.5 * GIB, 1000204886016, 2 * 2 ** 40, None)] == [
        "512 B", "64 MiB", "4 GiB", "1.5 GiB", "932 GiB", "2 TiB", "size unknown"]


# --- the preflight: a disk busy in the caller's own ZFS pool ----------------------------------------------

def test_a_disk_busy_in_an_owned_zfs_pool_passes_the_preflight_but_no_other_check():
    busy_zfs = inspection(ZFS, busy=True)
    found = {ZFS: busy_zfs}
    result = check([ZFS], [ZFS], {ZFS: ZFS}, found, allow_loop=True, owned_zfs_pools=["sdfxpool"])
    assert result["ok"] and result["devices"][0]["owned_by"] == "ZFS pool sdfxpool"
    assert "in use by ZFS pool sdfxpool, this run's own" in result["devices"][0]["reason"]
    # another pool's member, or the same disk in the write path (no owned pools), is refused as busy
    for owned in (["tank"], []):
        result = check([ZFS], [ZFS], {ZFS: ZFS}, found, allow_loop=True, owned_zfs_pools=owned)
        assert not result["ok"] and "open exclusively by another program" in result["msg"]
    # an owned pool's disk must still be listed to be wiped
    result = check([ZFS], [], {ZFS: ZFS}, found, allow_loop=True, owned_zfs_pools=["sdfxpool"])
    assert not result["ok"] and "is not in storage_wipe_devices" in result["msg"]


# --- confirm: the stable path read again right before the write -------------------------------------------

def _checked(path, node, serial="S1", size=4 * GIB):
    return {"path": path, "resolved": node, "size_bytes": size, "serial": serial, "wwn": None, "model": None}


def test_confirm_a_re_resolved_path_that_changed():
    path = ID + "virtio-tb-disk0"
    before = [_checked(path, "/dev/vdb")]
    assert confirm(before, [_checked(path, "/dev/vdb")]) == []
    assert confirm(before, [_checked(path, "/dev/vdc", serial="S2")]) == [
        path + " no longer names the disk that was checked: it resolves to /dev/vdc (was /dev/vdb) and its serial "
        "is S2 (was S1) (run again: the disks are checked anew)"]
    (changed,) = confirm(before, [_checked(path, "/dev/vdb", size=8 * GIB)])
    assert "was checked: its size is 8589934592 bytes (was 4294967296)" in changed
    assert confirm(before, []) == [path + " was checked as /dev/vdb but is gone now"]
    # an unknown serial is not compared
    assert confirm([_checked(path, "/dev/vdb", serial=None)], [_checked(path, "/dev/vdb", serial="S9")]) == []


def test_module_confirm_stops_when_the_path_now_names_another_disk():
    with pytest.MonkeyPatch.context() as mp:
        _patch(mp, {ID + "virtio-c": EXT4})
        expected = [{"path": ID + "virtio-c", "resolved": CEPH, "size_bytes": 1073741824, "serial": None,
                     "wwn": None}]
        failed, result = run_module(disk_safety, {"devices": [ID + "virtio-c"], "wipe_devices": [ID + "virtio-c"],
                                                  "allow_loop": True, "expected": expected})
    assert failed and result["msg"].startswith(
        "Disk safety check: nothing was written, because /dev/disk/by-id/virtio-c no longer names the disk that "
        "was checked: it resolves to /dev/loop1 (was /dev/loop4) and its size is 67108864 bytes (was 1073741824)")
    with pytest.MonkeyPatch.context() as mp:
        _patch(mp, {ID + "virtio-c": CEPH})
        failed, result = run_module(disk_safety, {"devices": [ID + "virtio-c"], "wipe_devices": [ID + "virtio-c"],
                                                  "allow_loop": True, "expected": expected})
    assert not failed, result["msg"]
    assert result["devices"][0]["needs_wipe"]


def test_module_refuses_an_expected_entry_it_does_not_read_again():
    failed, result = run_module(disk_safety, {"devices": ["/dev/vdb"], "expected": [{"path": "/dev/vdc", "resolved": "/dev/vdc"}]})
    assert failed and result["msg"] == ("disk safety: expected[0] is /dev/vdc, which is not in devices (confirm "
                                        "only the devices read again)")


def test_the_module_finds_zvol_links(tmp_path, monkeypatch):
    target = tmp_path / "zd0"
    target.write_bytes(b"")
    (tmp_path / "zvol" / "tank").mkdir(parents=True)
    (tmp_path / "zvol" / "tank" / "vol").symlink_to(target)
    monkeypatch.setattr(disk_safety, "ZVOL", str(tmp_path / "zvol"))
    assert disk_safety.zvol_links(str(target)) == [str(tmp_path / "zvol" / "tank" / "vol")]
    monkeypatch.setattr(disk_safety, "ZVOL", str(tmp_path / "none"))
    assert disk_safety.zvol_links(str(target)) == []
