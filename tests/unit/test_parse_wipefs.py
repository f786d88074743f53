"""wipefs --no-act --json parser (module_utils/testbed_parse_wipefs.py) and the wipefs_parse module.

Fixtures are real captures of util-linux 2.38.1 (tests/fixtures/wipefs/README.md), ZFS and Ceph
BlueStore labels included.
"""
import pytest
import wipefs_parse
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_wipefs import classify, parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name):
    return parse(read_fixture("wipefs", name), source=name)


def test_blank_device_is_an_empty_valid_table():
    result = _parse("blank.json")
    assert result["valid"] is True and result["metrics"] == {"signatures": 0, "signature_types": 0}
    assert result["details"]["signatures"] == [] and result["details"]["types"] == []


def test_ext4_offset_label_uuid():
    (sig,) = _parse("ext4.json")["details"]["signatures"]
    assert sig["device"] == "loop1" and sig["type"] == "ext4" and sig["offset_bytes"] == 0x438
    assert sig["label"] == "sdfx-ext4" and len(sig["uuid"]) == 36
    assert sig["kind"] == "filesystem" and sig["description"] == "an ext4 filesystem"


@pytest.mark.parametrize("name,types,kinds", [
    ("xfs.json", ["xfs"], ["filesystem"]),
    ("vfat.json", ["vfat"], ["filesystem"]),
    ("swap.json", ["swap"], ["swap"]),
    ("lvm.json", ["LVM2_member"], ["lvm"]),
    ("dos.json", ["dos"], ["partition_table"]),
    ("gpt.json", ["gpt", "PMBR"], ["partition_table"]),
    ("zfs_member.json", ["zfs_member"], ["zfs"]),
    ("ceph_bluestore.json", ["ceph_bluestore"], ["ceph"]),
])
def test_every_captured_signature_is_found_and_classified(name, types, kinds):
    result = _parse(name)
    assert result["details"]["types"] == types
    assert result["details"]["kinds"] == kinds
    assert result["metrics"]["signatures"] >= 1


def test_gpt_primary_and_backup_headers_and_pmbr():
    sigs = _parse("gpt.json")["details"]["signatures"]
    assert [(s["type"], s["offset_bytes"]) for s in sigs] == [
        ("gpt", 0x200), ("gpt", 64 * 1024 * 1024 - 512), ("PMBR", 0x1fe)]


def test_zfs_labels_carry_pool_name_and_guid():
    result = _parse("zfs_member.json")
    sigs = result["details"]["signatures"]
    assert result["metrics"]["signatures"] == 17
    assert set(s["label"] for s in sigs) == {"sdfxpool"}
    assert set(s["uuid"] for s in sigs) == {"15312933017728584031"}
    # labels L2/L3 sit in the last 512 KiB of the 128 MiB device
    assert max(s["offset_bytes"] for s in sigs) > 128 * 1024 * 1024 - 512 * 1024


def test_bluestore_label_at_offset_zero():
    (sig,) = _parse("ceph_bluestore.json")["details"]["signatures"]
    assert (sig["type"], sig["offset_bytes"], sig["description"]) == (
        "ceph_bluestore", 0, "a Ceph BlueStore OSD label")


def test_partitioned_disk_shows_only_the_table_and_the_partition_its_filesystem():
    assert _parse("gpt_ext4_partition.json")["details"]["types"] == ["gpt", "PMBR"]
    (sig,) = _parse("gpt_ext4_partition_p1.json")["details"]["signatures"]
    assert sig["device"] == "loop2p1" and sig["type"] == "ext4" and sig["label"] == "sdfx-part1"


def test_usage_column_and_unknown_types():
    text = ('{"signatures": [{"device": "sdb", "offset": "0x1000", "type": "linux_raid_member", '
            '"uuid": "a", "label": "h:0", "usage": "raid", "length": 4},'
            '{"device": "sdb", "offset": "0x0", "type": "newfs", "uuid": null, "label": null, "usage": "filesystem"},'
            '{"device": "sdb", "offset": "0x8", "type": "oddity", "uuid": null, "label": null}]}')
    sigs = parse(text)["details"]["signatures"]
    assert [(s["kind"], s["usage"]) for s in sigs] == [("raid", "raid"), ("filesystem", "filesystem"), ("other", None)]
    assert classify("PMBR")[0] == "partition_table"


@pytest.mark.parametrize("text,message", [
    ("", "empty"),
    (read_fixture("wipefs", "error_missing_device.stdout.txt"), "empty"),
    ('{\n   "signatures": [\n      {\n         "device": "loop1",\n', "truncated"),
    ('{"blockdevices": []}', "no \"signatures\" table"),
    ('{"signatures": [{"device": "loop1", "offset": "1080", "type": "ext4"}]}', "hexadecimal"),
    ('{"signatures": [{"device": "loop1", "offset": "0x438"}]}', "no type"),
    ('{"signatures": [1]}', "expected an object"),
    ("wipefs: error: /dev/x: probing initialization failed", "no JSON document"),
    ('{\n"signatures": []\n}\n{\n"signatures": []\n}\n', "2 JSON documents"),
])
def test_bad_input_raises_naming_the_problem(text, message):
    with pytest.raises(ParseError) as err:
        parse(text, source="x.json")
    assert message in str(err.value) and str(err.value).startswith("wipefs output x.json:")


def test_module_parses_src_and_fails_on_empty():
    failed, result = run_module(wipefs_parse, {"src": fixture_path("wipefs", "lvm.json"), "keep_raw": False})
    assert not failed and result["ansible_facts"]["wipefs"]["details"]["types"] == ["LVM2_member"]
    assert "raw" not in result
    failed, result = run_module(wipefs_parse, {"content": ""})
    assert failed and result["msg"].startswith("wipefs output <content>:")
