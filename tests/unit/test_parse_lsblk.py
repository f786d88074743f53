"""lsblk --json --bytes parser (module_utils/testbed_parse_lsblk.py) and the lsblk_parse module.

Fixtures are real captures of util-linux 2.38.1 without udevd (tests/fixtures/lsblk/README.md).
"""
import lsblk_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_lsblk import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name):
    return parse(read_fixture("lsblk", name), source=name)


def test_blank_loop_size_type_rotational():
    result = _parse("blank.json")
    (dev,) = result["details"]["flat"]
    assert (dev["path"], dev["type"], dev["size_bytes"], dev["rotational"], dev["read_only"]) == (
        "/dev/loop0", "loop", 64 * 1024 * 1024, True, False)
    assert dev["mountpoints"] == [] and dev["model"] is None and dev["parent"] is None
    assert result["metrics"] == {"devices": 1, "size_bytes": 67108864, "children": 0, "mounted": 0}


def test_without_udev_fstype_is_null_even_on_a_filesystem():
    # the reason the disk-safety check reads signatures from wipefs, not from lsblk
    for name in ("ext4.json", "lvm.json", "zfs_member.json", "ceph_bluestore.json", "gpt.json"):
        (dev,) = _parse(name)["details"]["flat"]
        assert dev["fstype"] is None and dev["pttype"] is None


def test_mounted_device_lists_its_mount_point():
    result = _parse("ext4_mounted.json")
    assert result["details"]["flat"][0]["mountpoints"] == ["/var/tmp/sdfx/mnt"]
    assert result["metrics"]["mounted"] == 1


def test_partitions_are_children_in_tree_and_flat_list():
    result = _parse("gpt_ext4_partition.json")
    flat = result["details"]["flat"]
    assert [(d["path"], d["type"], d["depth"], d["parent"]) for d in flat] == [
        ("/dev/loop2", "loop", 0, None), ("/dev/loop2p1", "part", 1, "/dev/loop2"),
        ("/dev/loop2p2", "part", 1, "/dev/loop2")]
    assert [c["name"] for c in result["details"]["blockdevices"][0]["children"]] == ["loop2p1", "loop2p2"]
    assert "children" not in flat[0]
    assert result["metrics"]["children"] == 2 and flat[1]["size_bytes"] == 20 * 1024 * 1024


def test_older_lsblk_spellings_are_accepted():
    text = ('{"blockdevices": [{"name": "sdb", "type": "disk", "size": "1000204886016", "rota": "1", '
            '"ro": "0", "model": "WDC WD10EZEX-00B", "mountpoint": "/srv"}]}')
    (dev,) = parse(text)["details"]["flat"]
    assert dev["size_bytes"] == 1000204886016 and dev["rotational"] is True and dev["read_only"] is False
    assert dev["mountpoints"] == ["/srv"] and dev["path"] == "/dev/sdb" and dev["model"] == "WDC WD10EZEX-00B"


@pytest.mark.parametrize("text,message", [
    ("", "empty"),
    ('{\n   "blockdevices": []\n}\n', "not a block device"),
    ('{"blockdevices": [{"name": "sdb", "type": "disk", "size": "931.5G"}]}', "--bytes"),
    ('{"blockdevices": [{"name": "sdb", "type": "disk"}]}', "no size column"),
    ('{"blockdevices": [{"name": "sdb", "type": "disk", "size": 1, "rota": "yes"}]}', "expected a boolean"),
    ('{"signatures": []}', "no \"blockdevices\" table"),
    ('{\n   "blockdevices": [\n      {"name": "loop0",\n', "truncated"),
])
def test_bad_input_raises_naming_the_problem(text, message):
    with pytest.raises(ParseError) as err:
        parse(text, source="x.json")
    assert message in str(err.value) and str(err.value).startswith("lsblk output x.json:")


def test_module_returns_facts():
    failed, result = run_module(lsblk_parse, {"src": fixture_path("lsblk", "zfs_member.json")})
    assert not failed
    assert result["ansible_facts"]["lsblk"]["details"]["flat"][0]["size_bytes"] == 128 * 1024 * 1024
    assert result["raw"].startswith("{")
