"""storage_rebuild_poll (roles/storage_compare/library): the real status outputs of a ZFS resilver and a
Ceph backfill (tests/fixtures/zpool/openzfs-2.1.11, tests/fixtures/ceph) replayed by stand-in `zpool` and
`ceph` commands, one output per poll, through the project's parsers."""
import glob
import os

import pytest
import storage_rebuild_poll
from conftest import FIXTURES
from helpers import run_module

ZPOOL = os.path.join(FIXTURES, "zpool", "openzfs-2.1.11")
CEPH = os.path.join(FIXTURES, "ceph")


def _replay(tmp_path, monkeypatch, name, outputs):
    """A stand-in `name` command printing outputs[0], outputs[1], ... on each call (the last one again after)."""
    state = tmp_path / "calls"
    state.write_text("0")
    script = tmp_path / "bin" / name
    script.parent.mkdir(exist_ok=True)
    lines = ["#!/bin/sh", f'n=$(cat {state}); echo $((n+1)) > {state}', "case $n in"]
    for number, path in enumerate(outputs):
        lines.append(f"  {number}) cat {path} ;;")
    lines += [f"  *) cat {outputs[-1]} ;;", "esac", ""]
    script.write_text("\n".join(lines))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{script.parent}:{os.environ['PATH']}")
    return state


def test_zfs_resilver_until_whole(tmp_path, monkeypatch):
    outputs = [os.path.join(ZPOOL, n) for n in ("degraded-offline-P.txt", "resilver-in-progress-replacing-P.txt",
                                                "resilvered-replace-P.txt")]
    calls = _replay(tmp_path, monkeypatch, "zpool", outputs)
    failed, out = run_module(storage_rebuild_poll, {"system": "zfs", "pool": "tank", "interval_s": 0.05})
    assert not failed, out
    assert out["samples"] == 3 and calls.read_text().strip() == "3"
    assert out["whole"] and out["observed_degraded"] and out["rebuild_s"] is not None
    assert [p[1] for p in out["curve"]] == [0.0, 0.2337, 1.0]
    assert out["command"] == ["zpool", "status", "-p", "tank"] and "resilvered" in out["last_status"]
    assert out["last_parsed"]["details"]["whole"] is True


def test_ceph_backfill_rescaled_and_settle(tmp_path, monkeypatch):
    healthy = os.path.join(CEPH, "recovery", "healthy.status.json")
    steps = sorted(glob.glob(os.path.join(CEPH, "backfill", "backfill_*.status.json")))
    after = os.path.join(CEPH, "recovery", "healthy_after_rebuild.status.json")
    # the old clean map first (the mon has not noticed the recreated OSD yet), then the backfill
    _replay(tmp_path, monkeypatch, "ceph", [healthy, os.path.join(CEPH, "recovery", "degraded_osd_destroyed.status.json")]
            + steps + [after])
    failed, out = run_module(storage_rebuild_poll, {"system": "ceph", "interval_s": 0.01, "settle_s": 30})
    assert not failed, out
    assert out["whole"] and out["observed_degraded"]
    assert out["samples"] >= 3 and out["curve"][-1][1] == 1.0
    # the clean first poll counts 1 raw, then the degraded map restarts the curve from where the loss left it
    assert out["curve_raw"][1][1] == pytest.approx(0.5, abs=0.01)
    assert out["curve"][0][1] is None and out["curve"][1][1] == 0.0
    assert out["rebuild_s"] == out["curve"][-1][0] > out["curve"][0][0]
    assert all(0.0 <= p[1] <= 1.0 for p in out["curve"] if p[1] is not None)


def test_timeout_and_unparsable_status(tmp_path, monkeypatch):
    _replay(tmp_path, monkeypatch, "zpool", [os.path.join(ZPOOL, "degraded-offline-P.txt")])
    failed, out = run_module(storage_rebuild_poll, {"system": "zfs", "interval_s": 0.05, "timeout_s": 0.2})
    assert not failed and not out["whole"] and out["rebuild_s"] is None and out["samples"] >= 2
    bad = tmp_path / "bad.txt"
    bad.write_text("cannot open 'tank': no such pool\n")
    _replay(tmp_path, monkeypatch, "zpool", [str(bad)])
    failed, out = run_module(storage_rebuild_poll, {"system": "zfs", "interval_s": 0.05})
    assert failed and "zpool status -p tank" in out["msg"]


def test_since_file_mtime_is_time_zero_and_zfs_own_figure(tmp_path, monkeypatch):
    """Started before the loss (async), the timer waits for the builder role's mark file: its mtime is t = 0."""
    outputs = [os.path.join(ZPOOL, n) for n in ("resilver-in-progress-replacing-P.txt", "resilvered-replace-P.txt")]
    calls = _replay(tmp_path, monkeypatch, "zpool", outputs)
    mark = tmp_path / "rebuild.back"
    mark.write_text("")
    back = mark.stat().st_mtime - 5.0
    os.utime(mark, (back, back))
    done = tmp_path / "rebuild.back.done"
    failed, out = run_module(storage_rebuild_poll, {"system": "zfs", "interval_s": 0.05, "since_file": str(mark),
                                                    "done_file": str(done)})
    assert not failed, out
    assert done.exists()  # the playbook's wait_for ends on it
    assert out["since"] == pytest.approx(back) and calls.read_text().strip() == "2"
    # the disk was put back 5 s before the first poll: the curve starts there, not at the module's start
    assert out["curve"][0][0] >= 5.0 and out["rebuild_s"] >= 5.0 and out["whole"]
    assert out["reported_s"] == 10  # "resilvered 519M in 00:00:10"


def test_since_file_never_written_fails_without_polling(tmp_path, monkeypatch):
    calls = _replay(tmp_path, monkeypatch, "zpool", [os.path.join(ZPOOL, "degraded-offline-P.txt")])
    done = tmp_path / "done"
    failed, out = run_module(storage_rebuild_poll, {"system": "zfs", "since_file": str(tmp_path / "never"),
                                                    "since_wait_s": 0.2, "done_file": str(done)})
    assert failed and "since_file" in out["msg"] and "never" in out["msg"]
    assert done.exists()  # written on failure too: the playbook does not wait for its own timeout
    assert calls.read_text().strip() == "0"


def test_zfs_on_linux_0_7_without_status_p(tmp_path, monkeypatch):
    """ZoL 0.7 (the study's 0.7.8) refuses `zpool status -p` (usage on stderr, rc 2): polled without -p."""
    old = os.path.join(FIXTURES, "zpool", "zol-0.7.8")
    script = tmp_path / "bin" / "zpool"
    script.parent.mkdir()
    calls = tmp_path / "calls"
    script.write_text("#!/bin/sh\n"
                      f'echo "$*" >> {calls}\n'
                      f'case "$*" in *-p*) cat {old}/status-p.stderr.txt >&2; exit 2 ;; esac\n'
                      f"cat {old}/resilvered.txt\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{script.parent}:{os.environ['PATH']}")
    failed, out = run_module(storage_rebuild_poll, {"system": "zfs", "pool": "tank", "interval_s": 0.05, "settle_s": 0})
    assert not failed, out
    assert calls.read_text().splitlines() == ["status -p tank", "status tank"]
    assert out["command"] == ["zpool", "status", "tank"] and out["whole"] is True
