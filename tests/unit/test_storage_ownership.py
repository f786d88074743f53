"""Ownership of the storage systems: the pure rule and the module on a temporary tree."""

import json

import pytest
import storage_ownership
from ansible.module_utils.testbed_storage_ownership import (
    MarkerError,
    ceph_observed,
    fsid_from_conf,
    make_marker,
    marker_path,
    ownership_problem,
    parse_marker,
    rbd_observed,
    render_marker,
    zfs_observed,
    zvol_observed,
)
from helpers import run_module

FSID = "0b2c3d4e-5f60-4a1b-8c2d-3e4f5a6b7c8d"
OTHER = "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"
MARKER_ZFS = "/var/lib/testbed/storage_zfs/testbed.json"
MARKER_CEPH = "/var/lib/testbed/storage_ceph/ceph.json"


# -- the rule -------------------------------------------------------------------------------------

def test_nothing_there_is_no_problem_with_or_without_marker():
    for marker in (None, make_marker("zfs", "testbed", "123", "n1", "t")):
        assert ownership_problem("zfs", "testbed", "n1", marker, {"exists": False, "id": None}, MARKER_ZFS) == ""


def test_pool_with_matching_marker_is_ours():
    marker = make_marker("zfs", "testbed", "123", "n1", "t")
    assert ownership_problem("zfs", "testbed", "n1", marker, zfs_observed(["testbed\t123"], "testbed"),
                             MARKER_ZFS) == ""


def test_pool_without_marker_is_refused_in_one_sentence():
    problem = ownership_problem("zfs", "testbed", "storage1", None, zfs_observed(["testbed\t123"], "testbed"),
                                MARKER_ZFS)
    assert problem == ("pool testbed on node storage1 was not created by the testbed (GUID 123, found in zpool list, "
                       "no marker /var/lib/testbed/storage_zfs/testbed.json): rename storage_zfs_pool, or remove the "
                       "pool yourself.")
    assert problem.count(". ") == 0 and problem.endswith(".")


def test_pool_with_another_guid_is_refused_naming_both_and_the_callers_variable():
    marker = make_marker("zfs", "testbed", "999", "n1", "t")
    problem = ownership_problem("zfs", "testbed", "n1", marker, {"exists": True, "id": "123", "where": "zpool list"},
                                MARKER_ZFS, variable="storage_compare_zfs_pool")
    assert "its GUID 123 (zpool list) differs from 999 in the marker " + MARKER_ZFS in problem
    assert "rename storage_compare_zfs_pool, or remove the pool yourself." in problem


def test_a_caller_that_cannot_rename_says_so():
    problem = ownership_problem("ceph", "ceph", "n1", None, {"exists": True, "id": FSID, "where": "/etc/ceph/ceph.conf"},
                                MARKER_CEPH, variable="")
    assert problem.endswith("): remove the cluster yourself, or use another node.")


def test_unreadable_marker_is_no_marker():
    problem = ownership_problem("ceph", "ceph", "n1", None, {"exists": True, "id": FSID, "where": "/etc/ceph/ceph.conf"},
                                MARKER_CEPH, marker_error="it is not JSON (x)")
    assert "the marker %s is not the testbed's: it is not JSON (x)" % MARKER_CEPH in problem
    assert problem.startswith("cluster ceph on node n1 was not created by the testbed")
    assert problem.endswith("rename storage_ceph_cluster, or remove the cluster yourself.")


def test_cluster_with_other_fsid_is_refused():
    marker = make_marker("ceph", "ceph", OTHER, "n1", "t")
    problem = ownership_problem("ceph", "ceph", "n1", marker, {"exists": True, "id": FSID, "where": "/etc/ceph/ceph.conf"},
                                MARKER_CEPH)
    assert "its fsid %s (/etc/ceph/ceph.conf) differs from %s" % (FSID, OTHER) in problem


def test_cluster_without_readable_fsid_is_ours_only_with_a_marker():
    observed = ceph_observed("/etc/ceph/ceph.conf", None, ["/var/lib/ceph/mon/ceph-a"], {})
    assert observed == {"exists": True, "id": None, "where": "/var/lib/ceph/mon/ceph-a"}
    assert ownership_problem("ceph", "ceph", "n1", make_marker("ceph", "ceph", FSID, "n1", "t"), observed,
                             MARKER_CEPH) == ""
    assert "found in /var/lib/ceph/mon/ceph-a, no marker" in ownership_problem("ceph", "ceph", "n1", None, observed,
                                                                              MARKER_CEPH)


def test_ceph_observed_prefers_the_configuration_then_agreeing_osd_dirs():
    conf = "[global]\nfsid = %s\nmon_host = x\n" % FSID.upper()
    assert ceph_observed("/etc/ceph/ceph.conf", conf, [], {})["id"] == FSID
    assert ceph_observed("/e/c.conf", None, [], {}) == {"exists": False, "id": None, "where": ""}
    dirs = ["/l/osd/ceph-0", "/l/osd/ceph-1"]
    assert ceph_observed("/e/c.conf", None, dirs, {dirs[0]: FSID + "\n", dirs[1]: FSID})["id"] == FSID
    assert ceph_observed("/e/c.conf", None, dirs, {dirs[0]: FSID, dirs[1]: OTHER})["id"] is None
    # a configuration without fsid: the data directories decide
    assert ceph_observed("/e/c.conf", "[global]\n", dirs[:1], {dirs[0]: OTHER})["id"] == OTHER


def test_fsid_from_conf():
    assert fsid_from_conf("[global]\n  fsid = %s  \n" % FSID) == FSID
    assert fsid_from_conf("[global]\n# fsid = x\n") is None
    assert fsid_from_conf(None) is None


def test_zfs_observed_reads_tab_separated_lines():
    lines = ["rpool\t111", "testbed\t222"]
    assert zfs_observed(lines, "testbed") == {"exists": True, "id": "222", "where": "zpool list"}
    assert zfs_observed(lines, "test")["exists"] is False
    assert zfs_observed(["no pools available"], "testbed")["exists"] is False


def test_marker_round_trip_and_refusals():
    marker = make_marker("ceph", "ceph", FSID, "n1", "2026-11-27T00:00:00Z")
    assert parse_marker(render_marker(marker), "ceph", "ceph") == marker
    with pytest.raises(MarkerError, match="not JSON"):
        parse_marker("{", "ceph", "ceph")
    with pytest.raises(MarkerError, match="for zfs testbed, not ceph ceph"):
        parse_marker(render_marker(make_marker("zfs", "testbed", "1", "n", "t")), "ceph", "ceph")
    with pytest.raises(MarkerError, match="holds no fsid"):
        parse_marker(json.dumps({"system": "ceph", "name": "ceph"}), "ceph", "ceph")
    with pytest.raises(ValueError, match="no guid"):
        make_marker("zfs", "testbed", "", "n", "t")


def test_marker_path_refuses_names_that_are_no_file_names():
    assert marker_path("/var/lib/testbed/", "zfs", "testbed") == MARKER_ZFS
    for bad in ("../x", "a/b", "", ".hidden"):
        with pytest.raises(ValueError):
            marker_path("/var/lib/testbed", "zfs", bad)
    with pytest.raises(ValueError):
        marker_path("/var/lib/testbed", "lvm", "x")


# -- the module (Ceph paths under tmp_path; zfs without a zpool command) --------------------------

def ceph_args(tmp_path, **extra):
    args = {"system": "ceph", "name": "ceph", "node": "n1", "marker_dir": str(tmp_path / "marker"),
            "ceph_conf_dir": str(tmp_path / "etc"), "ceph_data_dir": str(tmp_path / "lib")}
    args.update(extra)
    return args


def foreign_cluster(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "ceph.conf").write_text("[global]\nfsid = %s\n" % OTHER)
    mon = tmp_path / "lib" / "mon" / "ceph-x"
    mon.mkdir(parents=True)
    (mon / "keep").write_text("operator data\n")


def test_module_check_reports_a_foreign_cluster_and_writes_nothing(tmp_path):
    foreign_cluster(tmp_path)
    failed, out = run_module(storage_ownership, ceph_args(tmp_path))
    assert not failed and out["exists"] and not out["owned"] and out["id"] == OTHER and not out["changed"]
    assert out["problem"].startswith("cluster ceph on node n1 was not created by the testbed (fsid %s" % OTHER)
    assert not (tmp_path / "marker").exists()


def test_module_refuses_to_record_over_a_foreign_cluster(tmp_path):
    foreign_cluster(tmp_path)
    failed, out = run_module(storage_ownership, ceph_args(tmp_path, state="record", fsid=FSID))
    assert failed and "not recording" in out["msg"] and "was not created by the testbed" in out["msg"]
    assert not (tmp_path / "marker").exists()


def test_module_records_checks_and_forgets(tmp_path):
    failed, out = run_module(storage_ownership, ceph_args(tmp_path, state="record", fsid=FSID))
    assert not failed and out["changed"] and not out["exists"]
    path = tmp_path / "marker" / "storage_ceph" / "ceph.json"
    assert json.loads(path.read_text())["fsid"] == FSID
    # written atomically: readable by all, the marker the only file (no temp file left)
    assert path.stat().st_mode & 0o777 == 0o644 and [p.name for p in path.parent.iterdir()] == ["ceph.json"]
    # the role writes the configuration and starts a monitor next: ours
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "ceph.conf").write_text("[global]\nfsid = %s\n" % FSID)
    (tmp_path / "lib" / "mon" / "ceph-a").mkdir(parents=True)
    failed, out = run_module(storage_ownership, ceph_args(tmp_path))
    assert not failed and out["owned"] and out["problem"] == "" and out["marker"]["fsid"] == FSID
    # recording again changes nothing
    before = path.read_text()
    failed, out = run_module(storage_ownership, ceph_args(tmp_path, state="record", fsid=FSID))
    assert not failed and not out["changed"] and path.read_text() == before
    # another fsid in the configuration: refused
    (tmp_path / "etc" / "ceph.conf").write_text("[global]\nfsid = %s\n" % OTHER)
    failed, out = run_module(storage_ownership, ceph_args(tmp_path))
    assert not out["owned"] and "differs from %s in the marker" % FSID in out["problem"]
    failed, out = run_module(storage_ownership, ceph_args(tmp_path, state="forget"))
    assert not failed and out["changed"] and not path.exists()
    failed, out = run_module(storage_ownership, ceph_args(tmp_path, state="forget"))
    assert not failed and not out["changed"]


def test_module_check_mode_records_nothing(tmp_path):
    failed, out = run_module(storage_ownership, ceph_args(tmp_path, state="record", fsid=FSID, _ansible_check_mode=True))
    assert not failed and out["changed"] and not (tmp_path / "marker").exists()


def test_module_records_a_new_pool_over_no_or_a_stale_marker(tmp_path, monkeypatch):
    monkeypatch.setattr(storage_ownership, "read_zfs", lambda module, name: {"exists": True, "id": "222",
                                                                              "where": "zpool list"})
    args = {"system": "zfs", "name": "testbed", "marker_dir": str(tmp_path), "node": "n1"}
    failed, out = run_module(storage_ownership, args)
    assert not out["owned"] and "GUID 222, found in zpool list, no marker" in out["problem"]
    path = tmp_path / "storage_zfs" / "testbed.json"
    path.parent.mkdir()
    path.write_text(render_marker(make_marker("zfs", "testbed", "111", "n1", "t")))
    failed, out = run_module(storage_ownership, dict(args, state="record"))
    assert not failed and out["changed"] and json.loads(path.read_text())["guid"] == "222"
    failed, out = run_module(storage_ownership, dict(args, state="record"))
    assert not failed and not out["changed"]
    failed, out = run_module(storage_ownership, args)
    assert out["owned"] and out["problem"] == ""


def test_module_zfs_without_zfs_is_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(storage_ownership.os.path, "isdir", lambda path: False)
    failed, out = run_module(storage_ownership, {"system": "zfs", "name": "testbed", "marker_dir": str(tmp_path)})
    assert not failed and not out["exists"] and out["owned"] and out["problem"] == ""
    failed, out = run_module(storage_ownership, {"system": "zfs", "name": "testbed", "marker_dir": str(tmp_path),
                                                 "state": "record"})
    assert failed and "is not imported" in out["msg"]


def test_module_refuses_a_bad_name(tmp_path):
    failed, out = run_module(storage_ownership, ceph_args(tmp_path, name="../etc"))
    assert failed and "is not a pool or cluster name" in out["msg"]


# -- a zvol in an operator's pool (storage_zfs_existing_pool) ----------------------------------------

MARKER_ZVOL = "/var/lib/testbed/storage_zvol/tank/testbed-vol.json"


def test_zvol_marker_lives_under_the_pool_and_names_are_pool_slash_volume():
    assert marker_path("/var/lib/testbed", "zvol", "tank/testbed-vol") == MARKER_ZVOL
    for bad in ("tank", "tank/a/b", "../x/y", "tank/../x", "/tank/vol", "tank/"):
        with pytest.raises(ValueError):
            marker_path("/var/lib/testbed", "zvol", bad)
    with pytest.raises(ValueError):
        marker_path("/var/lib/testbed", "zfs", "tank/vol")      # a pool name has no slash


def test_zvol_observed_reads_name_guid_type():
    assert zvol_observed(["tank/vol\t555\tvolume"], "tank/vol") == {"exists": True, "id": "555",
                                                                       "where": "zfs list (a volume)"}
    assert zvol_observed(["tank/vol\t556\tfilesystem"], "tank/vol")["where"] == "zfs list (a filesystem)"
    assert zvol_observed([], "tank/vol") == {"exists": False, "id": None, "where": ""}


def test_operators_dataset_of_the_zvols_name_is_refused_naming_the_callers_variable():
    problem = ownership_problem("zvol", "tank/vol", "n1", None, zvol_observed(["tank/vol\t555\tfilesystem"], "tank/vol"),
                                MARKER_ZVOL, variable="storage_compare_zfs_volume")
    assert problem == ("zvol tank/vol on node n1 was not created by the testbed (GUID 555, found in zfs list (a "
                       "filesystem), no marker %s): rename storage_compare_zfs_volume, or remove the zvol "
                       "yourself." % MARKER_ZVOL)
    marker = make_marker("zvol", "tank/vol", "555", "n1", "t")
    assert ownership_problem("zvol", "tank/vol", "n1", marker, {"exists": True, "id": "555"}, MARKER_ZVOL) == ""
    assert "differs from 555" in ownership_problem("zvol", "tank/vol", "n1", marker, {"exists": True, "id": "9"},
                                                   MARKER_ZVOL)


def test_module_records_checks_and_forgets_a_zvol(tmp_path, monkeypatch):
    there = {"exists": False, "id": None, "where": ""}
    monkeypatch.setattr(storage_ownership, "read_zvol", lambda module, name: dict(there))
    args = {"system": "zvol", "name": "tank/vol", "marker_dir": str(tmp_path), "node": "n1"}
    failed, out = run_module(storage_ownership, dict(args, state="record"))
    assert failed and "zvol tank/vol is not there on n1" in out["msg"]
    there.update(exists=True, id="555", where="zfs list (a volume)")
    failed, out = run_module(storage_ownership, dict(args, state="record"))
    path = tmp_path / "storage_zvol" / "tank" / "vol.json"
    assert not failed and out["changed"] and json.loads(path.read_text())["guid"] == "555"
    failed, out = run_module(storage_ownership, args)
    assert out["owned"] and out["problem"] == ""
    failed, out = run_module(storage_ownership, dict(args, state="forget"))
    assert not failed and out["changed"] and not path.exists()
    assert (tmp_path / "storage_zvol" / "tank").is_dir()      # only the marker goes; the directory is harmless


# -- an RBD image in an operator's cluster and pool (storage_ceph_existing_conf) ---------------------

MARKER_RBD = "/var/lib/testbed/storage_rbd/ops/testbed-vol.json"


def test_rbd_identity_is_the_clusters_fsid_and_the_image_id():
    assert rbd_observed('{"name": "testbed-vol", "id": "10f2a3b4c5d6", "size": 1}', FSID.upper() + "\n",
                        "ops/testbed-vol") == {"exists": True, "id": FSID + "/10f2a3b4c5d6", "where": "rbd info"}
    assert rbd_observed(None, FSID, "ops/testbed-vol") == {"exists": False, "id": None, "where": ""}
    for bad in ('{"name": "x"}', "not json", "[]"):
        with pytest.raises(ValueError, match="gave no image id"):
            rbd_observed(bad, FSID, "ops/testbed-vol")
    assert marker_path("/var/lib/testbed", "rbd", "ops/testbed-vol") == MARKER_RBD
    with pytest.raises(ValueError):
        marker_path("/var/lib/testbed", "rbd", "testbed-vol")


def test_operators_image_of_the_same_name_is_refused_and_ours_is_recognised():
    observed = rbd_observed('{"id": "abc"}', FSID, "ops/vol")
    problem = ownership_problem("rbd", "ops/vol", "n1", None, observed, MARKER_RBD,
                                variable="storage_compare_ceph_image")
    assert problem == ("RBD image ops/vol on node n1 was not created by the testbed (id %s/abc, found in rbd info, no "
                       "marker %s): rename storage_compare_ceph_image, or remove the RBD image yourself."
                       % (FSID, MARKER_RBD))
    ours = make_marker("rbd", "ops/vol", FSID + "/abc", "n1", "t")
    assert ownership_problem("rbd", "ops/vol", "n1", ours, observed, MARKER_RBD) == ""
    # the same pool and image name in another cluster: not ours
    other = rbd_observed('{"id": "abc"}', OTHER, "ops/vol")
    assert "differs from %s/abc" % FSID in ownership_problem("rbd", "ops/vol", "n1", ours, other, MARKER_RBD)


def test_module_records_an_image_with_its_cluster(tmp_path, monkeypatch):
    monkeypatch.setattr(storage_ownership, "read_rbd", lambda module, name: {"exists": True, "id": FSID + "/abc",
                                                                              "where": "rbd info"})
    args = {"system": "rbd", "name": "ops/vol", "marker_dir": str(tmp_path), "node": "n1",
            "ceph_conf": "/etc/ceph/ops.conf", "ceph_keyring": "/etc/ceph/ops.client.testbed.keyring",
            "ceph_client": "client.testbed"}
    failed, out = run_module(storage_ownership, dict(args, state="record"))
    marker = json.loads((tmp_path / "storage_rbd" / "ops" / "vol.json").read_text())
    assert not failed and out["changed"] and marker["id"] == FSID + "/abc" and marker["system"] == "rbd"
    failed, out = run_module(storage_ownership, args)
    assert out["owned"] and not out["changed"]


# -- fail closed, and a client's configuration -----------------------------------------------------

def test_a_configuration_without_fsid_is_never_taken_for_ours_even_with_a_marker():
    observed = ceph_observed("/etc/ceph/ceph.conf", "[global]\nmon_host = 10.0.0.1\n", ["/var/lib/ceph/mon/ceph-a"], {})
    assert observed["id"] is None and observed["unreadable"]
    problem = ownership_problem("ceph", "ceph", "n1", make_marker("ceph", "ceph", FSID, "n1", "t"), observed,
                                MARKER_CEPH)
    assert problem.startswith("cluster ceph on node n1 was not created by the testbed (/etc/ceph/ceph.conf names no "
                              "fsid, and no OSD directory tells one, so it cannot be told from the cluster in the "
                              "marker %s)" % MARKER_CEPH)


def test_a_client_configuration_is_refused_as_a_client_not_as_a_cluster_to_remove():
    observed = ceph_observed("/etc/ceph/ceph.conf", "[global]\nfsid = %s\n" % OTHER, [], {})
    assert observed == {"exists": True, "id": OTHER, "where": "/etc/ceph/ceph.conf", "client_only": True}
    problem = ownership_problem("ceph", "ceph", "n1", None, observed, MARKER_CEPH, variable="")
    assert problem.startswith("node n1 has a Ceph client configuration /etc/ceph/ceph.conf of the cluster with fsid "
                              + OTHER + " and no daemon of that cluster")
    assert "storage_compare_ceph_existing_conf" in problem and "remove the cluster yourself" not in problem
    # the testbed's own configuration whose daemons are already gone (an interrupted removal): ours
    assert ownership_problem("ceph", "ceph", "n1", make_marker("ceph", "ceph", OTHER, "n1", "t"), observed,
                             MARKER_CEPH) == ""
