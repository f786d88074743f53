"""scripts/testbed_report.py --compare RUN_A RUN_B: two runs of the sample, one changed by hand."""
import csv
import json
import os
import shutil

import pytest
from ansible.module_utils import testbed_stats as stats
from ansible.module_utils.testbed_report_compare import COMPARE_FIELDS, compare_runs
from conftest import FIXTURES
from testbed_report import main as report_main

SAMPLE_RUN = os.path.join(FIXTURES, "report", "sample_run")
CELL = "plain__num_conns-300_rate-50__rep{}"


@pytest.fixture
def runs(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    shutil.copytree(SAMPLE_RUN, a)
    shutil.copytree(SAMPLE_RUN, b)
    # B: plain @ 50/s responds twice as slowly; one more rate only in B
    for rep in (1, 2, 3):
        path = os.path.join(b, CELL.format(rep) + ".json")
        doc = json.load(open(path))
        doc["metrics"]["response_time_ms"] *= 2
        doc["run_id"] = "B"
        json.dump(doc, open(path, "w"))
    extra = json.load(open(os.path.join(b, CELL.format(1) + ".json")))
    extra.update(point_id="plain__num_conns-600_rate-100__rep1", parameters={"num_conns": 600, "rate": 100})
    json.dump(extra, open(os.path.join(b, extra["point_id"] + ".json"), "w"))
    return a, b


def _row(rows, variant, rate, metric):
    return [r for r in rows if (r["variant"], r["parameters"]["rate"], r["metric"]) == (variant, rate, metric)][0]


def test_compare_rows(runs):
    rows, info = compare_runs(*runs)
    slow = _row(rows, "plain", 50, "response_time_ms")
    a = [2.1, 0.8, 0.6]
    b = [4.2, 1.6, 1.2]
    assert (slow["n_a"], slow["n_b"]) == (3, 3)
    assert slow["mean_a"] == pytest.approx(sum(a) / 3) and slow["mean_b"] == pytest.approx(sum(b) / 3)
    assert slow["change_pct"] == pytest.approx(100.0)
    assert slow["p_value"] == pytest.approx(stats.welch_test(b, a)["p_value"])
    assert slow["significant"] == "no" and slow["unit"] == "ms"
    same = _row(rows, "plain", 300, "response_time_ms")
    assert same["change_pct"] == pytest.approx(0.0) and same["p_value"] == pytest.approx(1.0)
    # constant on both sides (65.5 KB/s in every repetition): not testable, never "p = 0"
    constant = _row(rows, "plain", 50, "net_io_kb_s")
    assert constant["significant"] == "not testable" and constant["p_value"] is None
    assert "both samples are constant" in constant["note"]
    # invalid points are left out: ratelimited @ 300/s is invalid in both runs
    assert not [r for r in rows if r["variant"] == "ratelimited" and r["parameters"]["rate"] == 300]
    # the extra rate of B has no counterpart
    assert not [r for r in rows if r["parameters"]["rate"] == 100]
    assert info["only_a"] == 0 and info["only_b"] > 0
    assert info["a"]["points"] == 9 and info["b"]["points"] == 10


def test_compare_command(runs, tmp_path, capsys):
    out = str(tmp_path / "cmp")
    assert report_main(["--compare", runs[0], runs[1], "--out", out]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# Compare run `20261121T154139Z` (A) with run `20261121T154139Z` (B)\n")
    assert ("| plain | num_conns=300, rate=50 | `response_time_ms` (ms) | 1.167 | 3 | 2.333 | 3 | +100.00 | 0.3496 | no |"
            in text)
    assert "| plain | num_conns=300, rate=50 | `net_io_kb_s` (KB/s) | 65.50 | 3 | 65.50 | 3 | +0.00 | n/a | not testable |" in text
    assert open(os.path.join(out, "compare.md")).read() == text
    rows = list(csv.DictReader(open(os.path.join(out, "compare.csv"))))
    assert list(rows[0]) == list(COMPARE_FIELDS)
    slow = [r for r in rows if r["metric"] == "response_time_ms" and json.loads(r["parameters"])["rate"] == 50
            and r["variant"] == "plain"][0]
    assert (slow["n_a"], slow["n_b"], slow["significant"]) == ("3", "3", "no")
    assert float(slow["change_pct"]) == pytest.approx(100.0)


def test_compare_errors(runs, tmp_path, capsys):
    with pytest.raises(SystemExit):
        report_main(["--compare", runs[0]])
    with pytest.raises(SystemExit):
        report_main([runs[0], "--compare", runs[0], runs[1]])
    with pytest.raises(SystemExit):
        report_main([runs[0], "--out", str(tmp_path)])
    capsys.readouterr()
    assert report_main(["--compare", runs[0], str(tmp_path / "nope")]) == 2
    assert "is not a directory" in capsys.readouterr().err
