"""ceph status / ceph pg stat JSON parser (module_utils/testbed_parse_ceph.py) and ceph_status_parse.

Fixtures are real captures of Ceph 16.2.15 on one host (tests/fixtures/ceph/README.md): HEALTH_OK,
one OSD destroyed (degraded), the re-created OSD filled by log-based recovery (recovery/) and by
backfill (backfill/), sampled every ~2 s until HEALTH_OK.
"""
import glob
import json
import os
import re

import ceph_status_parse
import pytest
import tool_parse
from ansible.module_utils.testbed_parse import ParseError
from ansible.module_utils.testbed_parse_ceph import is_active_clean, parse, rebuild_fraction
from conftest import fixture_path, read_fixture
from helpers import run_module


def _text(name):
    return read_fixture("ceph", name)


def _parse(name, **options):
    return parse(_text(name), source=name, **options)


def _samples(run, kind):
    names = sorted(glob.glob(fixture_path("ceph", "%s/*_[0-9][0-9][0-9].%s.json" % (run, kind))))
    assert len(names) >= 5, "the %s run should hold a series of %s samples" % (run, kind)
    return [os.path.relpath(name, fixture_path("ceph", "")) for name in names]


@pytest.mark.parametrize("kind", ["status", "pg_stat"])
def test_healthy_cluster_is_whole(kind):
    result = _parse("recovery/healthy_after_rebuild.%s.json" % kind)
    assert result["valid"] is True and result["reasons"] == []
    assert result["details"]["kind"] == kind
    assert result["details"]["whole"] is True and result["details"]["not_whole_reasons"] == []
    metrics = result["metrics"]
    assert metrics["progress_fraction"] == 1.0
    assert metrics["pgs"] == 33 and metrics["pgs_active_clean"] == 33 and metrics["pgs_active_clean_fraction"] == 1.0
    assert metrics["degraded_objects"] == 0 and metrics["degraded_ratio"] == 0
    assert metrics["data_bytes"] == 536870936  # 512 objects of 1 MiB + rados bench's metadata object


def test_status_has_health_and_osd_counts_pg_stat_has_not():
    status = _parse("recovery/healthy.status.json")
    assert status["details"]["health"] == "HEALTH_OK" and status["details"]["health_checks"] == {}
    assert (status["metrics"]["osds"], status["metrics"]["osds_up"], status["metrics"]["osds_in"]) == (2, 2, 2)
    assert status["metrics"]["objects"] == 0
    pg_stat = _parse("recovery/healthy.pg_stat.json")
    assert pg_stat["details"]["health"] is None and pg_stat["metrics"]["osds_up"] is None
    assert pg_stat["details"]["pg_ready"] is True


def test_destroyed_osd_is_degraded_and_half_the_copies_are_missing():
    result = _parse("recovery/degraded_osd_destroyed.status.json")
    assert result["valid"] is True
    assert result["details"]["whole"] is False
    assert result["details"]["health"] == "HEALTH_WARN"
    assert set(result["details"]["health_checks"]) == {"OSD_DOWN", "PG_DEGRADED"}
    assert result["details"]["health_checks"]["PG_DEGRADED"]["severity"] == "HEALTH_WARN"
    metrics = result["metrics"]
    assert metrics["osds_up"] == 1 and metrics["osds_in"] == 2
    assert metrics["degraded_objects"] == 513 and metrics["degraded_total"] == 1026 and metrics["degraded_ratio"] == 0.5
    assert metrics["pgs_active_clean"] == 0 and metrics["pgs_undersized"] == 33 and metrics["pgs_degraded"] == 32
    assert metrics["progress_fraction"] == 0.5
    assert "33 of 33 PGs are not active+clean" in result["details"]["not_whole_reasons"]
    assert "513/1026 object copies degraded" in result["details"]["not_whole_reasons"]


@pytest.mark.parametrize("run", ["recovery", "backfill"])
def test_rebuild_series_progresses_to_whole(run):
    results = [_parse(name) for name in _samples(run, "pg_stat")]
    curve = [r["metrics"]["progress_fraction"] for r in results]
    assert all(r["valid"] for r in results)
    assert curve == sorted(curve), "degraded copies only go down while the OSD fills: %s" % curve
    assert curve[0] < 0.6 and curve[-1] == 1.0
    whole = [r["details"]["whole"] for r in results]
    assert whole[-1] is True and whole[0] is False
    first = whole.index(True)
    assert all(whole[first:]) and curve[first:] == [1.0] * (len(curve) - first)
    assert all(value < 1.0 for value in curve[:first])


def test_rebuild_fraction_rescales_from_the_first_sample():
    first = _parse("recovery/degraded_osd_destroyed.pg_stat.json")["metrics"]["progress_fraction"]
    middle = _parse("recovery/rebuild_007.pg_stat.json")["metrics"]["progress_fraction"]
    last = _parse("recovery/healthy_after_rebuild.pg_stat.json")["metrics"]["progress_fraction"]
    assert rebuild_fraction(first, first) == 0.0 and rebuild_fraction(first, last) == 1.0
    assert rebuild_fraction(first, middle) == pytest.approx((1 - 353 / 1026 - 0.5) / 0.5)
    assert rebuild_fraction(1.0, 1.0) == 1.0 and rebuild_fraction(None, 0.7) is None


def test_recovery_sample_has_rates_and_recovering_pgs():
    result = _parse("recovery/rebuild_007.pg_stat.json")
    metrics = result["metrics"]
    assert metrics["pgs_recovering"] == 23 and metrics["pgs_backfilling"] == 0
    assert metrics["recovering_bytes_per_s"] == 13802955 and metrics["objects_recovered"] > 0
    assert metrics["degraded_objects"] == 353
    assert metrics["progress_fraction"] == pytest.approx(1 - 353 / 1026)
    assert metrics["pgs_active_clean"] == 10 and result["details"]["whole"] is False


def test_backfill_samples_show_backfilling_pgs():
    results = [_parse(name) for name in _samples("backfill", "status")]
    assert any(r["metrics"]["pgs_backfilling"] > 0 for r in results)
    assert any(r["details"]["pg_state_flags"].get("backfilling") for r in results)
    result = _parse("backfill/backfill_020.pg_stat.json")
    assert result["metrics"]["pgs_backfilling"] == 33 - 11 and result["metrics"]["pgs_recovering"] == 0
    assert result["details"]["pg_state_flags"]["remapped"] == 22


def test_remapped_pg_without_degraded_copies_is_not_whole_yet():
    result = _parse("backfill/backfill_041.pg_stat.json")
    assert result["metrics"]["degraded_objects"] == 0 and result["metrics"]["misplaced_objects"] == 0
    assert result["details"]["pgs_by_state"] == {"active+clean": 32, "active+undersized+remapped": 1}
    assert result["details"]["whole"] is False
    assert result["metrics"]["progress_fraction"] == pytest.approx(32 / 33)


def test_nautilus_nested_osdmap_is_read():
    def nest(document):
        document["osdmap"] = {"osdmap": document["osdmap"]}
    result = parse(_edited("recovery/degraded_osd_destroyed.status.json", nest))
    assert (result["metrics"]["osds"], result["metrics"]["osds_up"], result["metrics"]["osds_in"]) == (2, 1, 2)


def test_kind_given_must_match_the_document():
    assert _parse("recovery/healthy.status.json", kind="status")["details"]["kind"] == "status"
    with pytest.raises(ParseError, match="expected ceph pg stat JSON, got ceph status JSON"):
        _parse("recovery/healthy.status.json", kind="pg_stat")
    with pytest.raises(ParseError, match="kind 'json'"):
        _parse("recovery/healthy.status.json", kind="json")


def test_json_pretty_gives_the_same_result():
    pretty = json.dumps(json.loads(_text("recovery/rebuild_007.status.json")), indent=4)
    assert parse(pretty)["metrics"] == _parse("recovery/rebuild_007.status.json")["metrics"]


def test_health_detail_is_not_a_status():
    with pytest.raises(ParseError, match="neither ceph status"):
        _parse("recovery/degraded_osd_destroyed.health_detail.json")


@pytest.mark.parametrize("text,message", [
    ("", "output is empty"),
    ("Error initializing cluster client: ObjectNotFound('RADOS object not found (error calling conf_read_file)')\n",
     "no JSON document"),
    ("HEALTH_OK\n", "no JSON document"),
])
def test_not_ceph_json(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text)


def test_truncated_document_is_an_error():
    text = _text("recovery/rebuild_007.status.json")
    with pytest.raises(ParseError, match="truncated"):
        parse(text[:len(text) // 2])


def test_two_documents_are_an_error():
    text = _text("recovery/healthy.pg_stat.json")
    with pytest.raises(ParseError, match="text after the JSON document"):
        parse(text + text)


def _edited(name, edit):
    document = json.loads(_text(name))
    edit(document)
    return json.dumps(document)


def test_pg_counts_must_add_up():
    text = _edited("recovery/healthy.status.json", lambda d: d["pgmap"].update(num_pgs=40))
    with pytest.raises(ParseError, match="add up to 33, num_pgs is 40"):
        parse(text)


def test_nan_ratio_is_an_error():
    text = _text("recovery/degraded_osd_destroyed.pg_stat.json").replace('"degraded_ratio":0.5', '"degraded_ratio":NaN')
    with pytest.raises(ParseError, match="NaN"):
        parse(text)


def test_every_pg_unknown_is_not_a_valid_snapshot():
    def unknown(document):
        document["pgmap"]["pgs_by_state"] = [{"state_name": "unknown", "count": 33}]
    result = parse(_edited("recovery/healthy.status.json", unknown))
    assert result["valid"] is False and result["metrics"]["progress_fraction"] is None
    assert result["details"]["whole"] is False
    assert "every PG is unknown" in result["reasons"][0]


def test_no_pg_at_all_is_not_a_valid_snapshot():
    def empty(document):
        document["pgmap"].update(pgs_by_state=[], num_pgs=0)
    result = parse(_edited("recovery/healthy.status.json", empty))
    assert result["valid"] is False and result["details"]["whole"] is False


def test_peering_without_degraded_copies_uses_the_clean_pg_fraction():
    def peering(document):
        document["pgmap"]["pgs_by_state"] = [{"state_name": "active+clean", "count": 30},
                                             {"state_name": "peering", "count": 3}]
    result = parse(_edited("recovery/healthy.status.json", peering))
    assert result["metrics"]["progress_fraction"] == pytest.approx(30 / 33)
    assert result["metrics"]["pgs_inactive"] == 3 and result["details"]["whole"] is False


@pytest.mark.parametrize("state,clean", [
    ("active+clean", True),
    ("active+clean+scrubbing+deep", True),
    ("active+clean+remapped", False),
    ("active+recovering+degraded", False),
    ("clean", False),
])
def test_active_clean_states(state, clean):
    assert is_active_clean(state) is clean


def test_module_and_tool_parse():
    failed, result = run_module(ceph_status_parse, {"src": fixture_path("ceph", "recovery/rebuild_007.status.json"),
                                                    "kind": "status", "keep_raw": False})
    assert not failed and result["ansible_facts"]["ceph"]["details"]["whole"] is False
    assert result["metrics"]["degraded_objects"] == 353 and "raw" not in result
    failed, result = run_module(tool_parse, {"tool": "ceph", "content": _text("recovery/healthy.pg_stat.json"),
                                             "options": {"kind": "pg_stat"}})
    assert not failed and result["details"]["whole"] is True
    failed, result = run_module(ceph_status_parse, {"content": "HEALTH_OK"})
    assert failed and result["msg"].startswith("ceph output <content>: no JSON document")


def test_luminous_layout_reads_status_and_named_checks():
    result = parse(read_fixture("ceph", "older-layouts/luminous-degraded.status.json"), "luminous")
    assert result["details"]["health_layout"] == "luminous"
    assert result["metrics"]["osds"] == 2 and result["metrics"]["osds_up"] == 1
    assert sorted(result["details"]["health_checks"]) == ["OSD_DOWN", "PG_DEGRADED"]


def test_jewel_layout_reads_overall_status_and_its_unnamed_summary():
    result = parse(read_fixture("ceph", "older-layouts/jewel-degraded.status.json"), "jewel")
    assert result["details"]["health_layout"] == "jewel"
    checks = result["details"]["health_checks"]
    assert checks == {"summary_1": {"severity": "HEALTH_WARN", "message": "33 pgs degraded"},
                      "summary_2": {"severity": "HEALTH_WARN", "message": "1/2 in osds are down"}}
    assert result["metrics"]["pgs"] == 33 and result["metrics"]["osds_in"] == 2 and result["metrics"]["objects"] is None


def test_a_health_section_of_neither_layout_is_refused():
    with pytest.raises(ParseError, match="without health.status \\(Luminous and later\\) or health.overall_status"):
        parse(json.dumps({"health": {}, "pgmap": {"pgs_by_state": [], "num_pgs": 0}, "osdmap": {}}), "bare")


@pytest.mark.parametrize("document, what", [
    ([{"pool_name": "rbd", "pool_id": 1, "recovery": {}, "recovery_rate": {}, "client_io_rate": {}}],
     "ceph osd pool stats JSON (per-pool client I/O and recovery rates)"),
    ({"status": "HEALTH_OK", "checks": {}, "mutes": []}, "ceph health JSON (ceph health [detail] -f json)"),
    ({"nodes": [], "stray": []}, "ceph osd tree JSON"),
    ({"stats": {}, "pools": []}, "ceph df JSON"),
])
def test_another_ceph_command_is_named(document, what):
    with pytest.raises(ParseError, match="neither ceph status .* JSON: this is " + re.escape(what)):
        parse(json.dumps(document), "other")


# -- Jewel / Luminous documents (tests/fixtures/ceph/older-layouts/README.md) -----------------------------

def _older(name):
    return parse(read_fixture("ceph", "older-layouts/" + name), name)


def test_published_jewel_status_reads_the_old_health_and_nested_osdmap():
    result = _older("published-jewel-10.2-rook.status.json")
    details, metrics = result["details"], result["metrics"]
    assert (details["kind"], details["health"], details["health_layout"]) == ("status", "HEALTH_WARN", "jewel")
    assert details["health_checks"] == {"summary_1": {"severity": "HEALTH_WARN",
                                                      "message": "too many PGs per OSD (2048 > max 300)"}}
    assert (metrics["osds"], metrics["osds_up"], metrics["osds_in"], metrics["pgs_remapped"]) == (10, 9, 9, 0)
    assert metrics["pgs"] == 2048 and metrics["pgs_active_clean"] == 2048 and details["whole"] is True
    assert metrics["progress_fraction"] == 1.0 and metrics["total_bytes"] == 66449108992
    assert metrics["objects"] is None
    assert result["warnings"] == ["objects is null: ceph status of Jewel (10.2) and older prints no pgmap.num_objects "
                                  "(Luminous has it)"]


def test_published_luminous_status_status_wins_over_the_deprecated_overall_status():
    result = _older("published-luminous-12.2-opensds.status.json")
    details, metrics = result["details"], result["metrics"]
    assert (details["health"], details["health_layout"]) == ("HEALTH_WARN", "luminous")
    assert sorted(details["health_checks"]) == ["PG_AVAILABILITY", "PG_DEGRADED", "POOL_APP_NOT_ENABLED"]
    assert details["health_checks"]["PG_AVAILABILITY"]["message"] == "Reduced data availability: 2 pgs inactive"
    assert metrics["pgs"] == 102 and metrics["pgs_inactive"] == 2 and metrics["pgs_undersized"] == 2
    assert metrics["objects"] == 8 and metrics["osds_up"] == 1 and result["warnings"] == []
    assert details["whole"] is False and details["not_whole_reasons"] == ["2 of 102 PGs are not active+clean"]
    assert metrics["progress_fraction"] == pytest.approx(100 / 102)


def test_luminous_overall_status_alone_does_not_decide_health():
    document = json.loads(read_fixture("ceph", "older-layouts/published-luminous-12.2-opensds.status.json"))
    document["health"].update(status="HEALTH_OK", checks={})
    result = parse(json.dumps(document), "ok")
    assert result["details"]["health"] == "HEALTH_OK" and result["details"]["health_checks"] == {}


def test_published_luminous_release_candidate_checks_carry_their_message_directly():
    result = _older("published-luminous-12.1-rook.status.json")
    checks = result["details"]["health_checks"]
    assert checks["OSD_DOWN"] == {"severity": "HEALTH_WARN", "message": "1 osds down"}
    assert checks["PG_AVAILABILITY"]["message"] == "Reduced data availability: 100 pgs stale"
    assert result["metrics"]["osds_up"] == 0 and result["details"]["whole"] is False
    assert result["details"]["pgs_by_state"] == {"stale+active+clean": 100}


@pytest.mark.parametrize("name", ["jewel-degraded.pg_stat.json", "flat-degraded.pg_stat.json"])
def test_older_pg_stat_reads_raw_bytes_and_has_no_pg_ready(name):
    result = _older(name)
    details, metrics = result["details"], result["metrics"]
    assert details["kind"] == "pg_stat" and details["pg_ready"] is None and details["health"] is None
    assert metrics["used_bytes"] == 1682427904 and metrics["total_bytes"] == 6442450944
    assert metrics["data_bytes"] == 536870936 and metrics["pgs"] == 33
    assert metrics["degraded_objects"] == 513 and metrics["progress_fraction"] == 0.5
    assert result["valid"] is True and details["whole"] is False


def test_older_pg_stat_gives_the_same_metrics_as_the_pacific_capture():
    pacific = _parse("recovery/degraded_osd_destroyed.pg_stat.json")["metrics"]
    for name in ("jewel-degraded.pg_stat.json", "flat-degraded.pg_stat.json"):
        older = _older(name)["metrics"]
        differing = sorted(key for key in pacific if pacific[key] != older[key])
        # the capture also had client I/O rates; the older documents were written without them
        assert differing == ["client_write_bytes_per_s"] or differing == [], (name, differing)

