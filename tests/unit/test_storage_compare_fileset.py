"""File sets, manifests and progress curves of experiment 2 (roles/storage_compare/module_utils/storage_compare_fileset.py)."""
import hashlib
import json
import os

import pytest
from ansible.module_utils import storage_compare_fileset as fs


def test_plan_is_deterministic_and_sums_exactly():
    a = fs.plan_files("copy", 44, 25350 * 1000000)
    assert a == fs.plan_files("copy", 44, 25350 * 1000000)
    assert len(a) == 44 and sum(f["size"] for f in a) == 25350 * 1000000
    assert a[0]["name"] == "file-01.bin" and a[-1]["name"] == "file-44.bin"
    sizes = [f["size"] for f in a]
    mean = 25350 * 1000000 / 44
    assert min(sizes) >= 0.45 * mean and max(sizes) <= 1.6 * mean and len(set(sizes)) > 40
    assert fs.plan_files("other", 44, 25350 * 1000000) != a


@pytest.mark.parametrize("count,total,message", [
    (0, 10, "count must be an integer >= 1"), (True, 10, "count"), (3, 2, "total_bytes must be an integer >= 3"),
    ("x", 10, "count"), (2.5, 10, "count"),
])
def test_plan_rejects_bad_input(count, total, message):
    with pytest.raises(fs.FilesetError, match=message):
        fs.plan_files("s", count, total)


def test_files_for_and_mb():
    assert fs.files_for(256 * 1000000, 16 * 1000000) == 16
    assert fs.files_for(250 * 1000000, 16 * 1000000) == 16
    assert fs.files_for(1, 16) == 1
    assert fs.mb_to_bytes(25350) == 25350000000


def test_contents_are_a_function_of_seed_and_name(tmp_path):
    files = fs.plan_files("s", 3, 3 * 70000)
    first = fs.write_fileset(str(tmp_path / "a"), "s", files)
    assert first == {"changed": True, "bytes": 3 * 70000, "files": 3}
    fs.write_fileset(str(tmp_path / "b"), "s", files)
    for f in files:
        a = (tmp_path / "a" / f["name"]).read_bytes()
        assert a == (tmp_path / "b" / f["name"]).read_bytes() and len(a) == f["size"]
    names = [f["name"] for f in files]
    assert (tmp_path / "a" / names[0]).read_bytes() != (tmp_path / "a" / names[1]).read_bytes()[:files[0]["size"]]
    # chunking does not change the bytes
    whole = b"".join(fs.file_chunks("s", names[0], files[0]["size"], chunk=1 << 20))
    small = b"".join(fs.file_chunks("s", names[0], files[0]["size"], chunk=4096))
    assert whole == small == (tmp_path / "a" / names[0]).read_bytes()


def test_write_is_idempotent_and_repairs(tmp_path):
    d = str(tmp_path / "set")
    files = fs.plan_files("s", 2, 10000)
    fs.write_fileset(d, "s", files)
    assert fs.write_fileset(d, "s", files)["changed"] is False
    (tmp_path / "set" / "stray.bin").write_bytes(b"x")
    with open(os.path.join(d, files[0]["name"]), "ab") as handle:
        handle.write(b"more")
    again = fs.write_fileset(d, "s", files)
    assert again["changed"] is True
    assert not (tmp_path / "set" / "stray.bin").exists()
    assert os.path.getsize(os.path.join(d, files[0]["name"])) == files[0]["size"]


def test_manifest_and_verify(tmp_path):
    d = tmp_path / "set"
    files = fs.plan_files("m", 4, 4 * 5000)
    fs.write_fileset(str(d), "m", files)
    (d / "sub").mkdir()
    (d / "sub" / "note.txt").write_bytes(b"hello")
    manifest = fs.build_manifest(str(d))
    assert fs.MARKER not in manifest and len(manifest) == 5
    assert manifest["sub/note.txt"] == {"sha256": hashlib.sha256(b"hello").hexdigest(), "size": 5}
    ok = fs.verify_manifest(manifest, fs.build_manifest(str(d)))
    assert ok["valid"] and ok["checked"] == 5 and ok["reasons"] == [] and ok["bytes"] == 4 * 5000 + 5
    # one byte flipped, one file gone, one file added
    target = d / files[1]["name"]
    data = bytearray(target.read_bytes())
    data[100] ^= 0xFF
    target.write_bytes(bytes(data))
    (d / files[2]["name"]).unlink()
    (d / "new.bin").write_bytes(b"n")
    bad = fs.verify_manifest(manifest, fs.build_manifest(str(d)))
    assert not bad["valid"]
    assert [m["path"] for m in bad["mismatches"]] == [files[1]["name"]]
    assert bad["mismatches"][0]["expected_sha256"] == manifest[files[1]["name"]]["sha256"]
    assert bad["mismatches"][0]["actual_sha256"] == hashlib.sha256(bytes(data)).hexdigest()
    assert bad["missing"] == [files[2]["name"]] and bad["extra"] == ["new.bin"]
    assert len(bad["reasons"]) == 3 and bad["checked"] == 4
    assert json.loads(json.dumps(bad)) == bad


def test_verify_rejects_bad_manifests(tmp_path):
    with pytest.raises(fs.FilesetError, match="empty"):
        fs.verify_manifest({}, {})
    with pytest.raises(fs.FilesetError, match="expected must be a manifest"):
        fs.verify_manifest([], {})
    with pytest.raises(fs.FilesetError, match="not a directory"):
        fs.build_manifest(str(tmp_path / "nope"))


def test_progress_curve():
    samples = [{"t_s": 0.5, "whole": False, "fraction": 0.0}, {"t_s": 1.5, "whole": False, "fraction": 0.4},
               {"t_s": 2.5, "whole": False, "fraction": None}, {"t_s": 3.5, "whole": True, "fraction": 0.99}]
    out = fs.progress_curve(samples)
    assert out["curve"] == [[0.5, 0.0], [1.5, 0.4], [2.5, None], [3.5, 1.0]] == out["curve_raw"]
    assert out["rebuild_s"] == 3.5 and out["whole"] and out["observed_degraded"] and out["samples"] == 4
    never = fs.progress_curve(samples[:2])
    assert never["rebuild_s"] is None and not never["whole"]
    instant = fs.progress_curve([{"t_s": 0.2, "whole": True, "fraction": 1.0}])
    assert instant["rebuild_s"] == 0.2 and not instant["observed_degraded"]
    many = fs.progress_curve([{"t_s": float(i), "whole": i == 999, "fraction": i / 999.0} for i in range(1000)],
                             max_points=10)
    assert len(many["curve"]) == 10 and many["curve"][0] == [0.0, 0.0] and many["curve"][-1] == [999.0, 1.0]
    assert many["rebuild_s"] == 999.0


def test_progress_curve_rescaled_from_the_first_sample():
    samples = [{"t_s": 1, "whole": False, "fraction": 0.5}, {"t_s": 2, "whole": False, "fraction": 0.75},
               {"t_s": 3, "whole": True, "fraction": 1.0}]
    out = fs.progress_curve(samples, rescale=True)
    assert out["curve"] == [[1.0, 0.0], [2.0, 0.5], [3.0, 1.0]]
    assert out["curve_raw"] == [[1.0, 0.5], [2.0, 0.75], [3.0, 1.0]]
    assert fs.progress_curve([{"t_s": 1, "whole": True, "fraction": 1.0}], rescale=True)["curve"] == [[1.0, 1.0]]
    stale = fs.progress_curve([{"t_s": 0.5, "whole": True, "fraction": 1.0}] + samples, rescale=True)
    assert stale["curve"] == [[0.5, None], [1.0, 0.0], [2.0, 0.5], [3.0, 1.0]]
    assert stale["rebuild_s"] == 3.0 and stale["observed_degraded"]


@pytest.mark.parametrize("samples,message", [
    ("x", "samples must be a list"), ([{"whole": True}], r"samples\[0\]"),
    ([{"t_s": 2, "whole": False}, {"t_s": 1, "whole": True}], "goes back in time"),
])
def test_progress_curve_rejects(samples, message):
    with pytest.raises(fs.FilesetError, match=message):
        fs.progress_curve(samples)


def test_status_sample_reads_the_parsers_fields():
    zpool = {"metrics": {"progress_fraction": 0.25}, "details": {"whole": False}, "valid": True}
    assert fs.status_sample(zpool, 1.23456) == {"t_s": 1.235, "whole": False, "fraction": 0.25}
    top = {"whole": True, "metrics": {"progress_fraction": 1.0}}
    assert fs.status_sample(top, 2)["whole"] is True
    with pytest.raises(fs.FilesetError, match="no boolean 'whole'"):
        fs.status_sample({"metrics": {}}, 1)


def test_throughput():
    assert fs.throughput_mb_s(128000000, 4.0) == 32.0
    assert fs.throughput_mb_s(0, 1) is None and fs.throughput_mb_s(5, 0) is None and fs.throughput_mb_s(None, 1) is None
    with pytest.raises(fs.FilesetError):
        fs.throughput_mb_s(-1, 2)
