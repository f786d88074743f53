"""Free space checked before anything is built (module_utils/testbed_free_space.py, library/free_space.py)."""

import free_space
from ansible.module_utils.testbed_free_space import check_needs, nearest_existing
from helpers import run_module

EXISTING = {"/", "/var", "/var/tmp", "/srv", "/srv/data"}
MOUNTS = {"/": "/", "/var": "/", "/var/tmp": "/", "/srv": "/", "/srv/data": "/srv/data"}
FREE = {"/": 980.4, "/srv/data": 50000.0}


def check(needs):
    return check_needs(needs, EXISTING.__contains__, MOUNTS.__getitem__, lambda path: FREE[MOUNTS[path]])


def test_nearest_existing_parent():
    assert nearest_existing("/var/tmp/testbed-storage/source", EXISTING.__contains__) == "/var/tmp"
    assert nearest_existing("/nowhere/at/all", EXISTING.__contains__) == "/"


def test_a_shortfall_names_the_numbers_what_fills_it_and_the_fix():
    filesystems, problems = check([{"path": "/var/tmp/testbed-storage/source", "need_mb": 26618.5,
                                    "what": "the copy test's source file set", "fix": "lower storage_compare_copy_total_mb"}])
    assert problems == ["the filesystem at / has 980 MB free but this run writes 26618 MB there: the copy test's "
                        "source file set (26618 MB in /var/tmp/testbed-storage/source). Free 25638 MB there, or lower "
                        "storage_compare_copy_total_mb."]
    assert filesystems["/"]["free_mb"] == 980


def test_needs_on_one_filesystem_add_up_and_others_are_apart():
    needs = [{"path": "/var/tmp/a", "need_mb": 600, "what": "a"}, {"path": "/srv/b", "need_mb": 600, "what": "b"},
             {"path": "/srv/data/c", "need_mb": 40000, "what": "c"}]
    filesystems, problems = check(needs)
    assert filesystems["/"]["need_mb"] == 1200 and filesystems["/srv/data"]["need_mb"] == 40000
    assert len(problems) == 1 and problems[0].startswith("the filesystem at / has 980 MB free but this run writes 1200 MB")
    assert problems[0].endswith("Free 220 MB there.")  # no fix given: none offered


def test_what_fits_and_empty_needs_pass():
    assert check([{"path": "/srv/data/x", "need_mb": 49999}])[1] == []
    assert check([{"path": "/var/x", "need_mb": 0}, {"path": "/var/y", "need_mb": None}]) == ({}, [])


def test_the_module_on_this_host(tmp_path):
    failed, out = run_module(free_space, {"host": "ctl", "needs": [
        {"path": str(tmp_path / "not" / "yet"), "need_mb": 1, "what": "a small file"},
        {"path": str(tmp_path), "need_mb": 1e9, "what": "a petabyte", "fix": "buy disks"}]})
    assert not failed and not out["changed"]
    assert len(out["problems"]) == 1 and out["problems"][0].startswith("ctl: the filesystem at ")
    assert "this run writes 1000000001 MB there" in out["problems"][0] and out["problems"][0].endswith("or buy disks.")


def test_the_module_refuses_a_relative_path_and_a_bad_number():
    failed, out = run_module(free_space, {"needs": [{"path": "results", "need_mb": 1}]})
    assert failed and "absolute path" in out["msg"]
    failed, out = run_module(free_space, {"needs": [{"path": "/tmp", "need_mb": "lots"}]})
    assert failed and "not a number" in out["msg"]
