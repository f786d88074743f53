"""scripts/testbed_report.py --compare RUN_A RUN_B: two runs of the sample, one changed by hand."""
import csv
import json
import os
import shutil

import pytest
from ansible.module_utils.testbed_reports.compare import COMPARE_FIELDS, compare_runs
from ansible.module_utils.testbed_stats import core as stats
from conftest import FIXTURES
from testbed_report import main as report_main

SAMPLE_RUN = os.path.join(FIXTURES, "report", "sample_run")
CELL = "plain__num_conns-300_rate-50__rep{}"


def two_runs(tmp_path, names, change):
    """Two copies of the sample run; ``change(doc)`` edits B's plain @ 50/s documents (every repetition)."""
    a, b = str(tmp_path / names[0]), str(tmp_path / names[1])
    shutil.copytree(SAMPLE_RUN, a)
    shutil.copytree(SAMPLE_RUN, b)
    for rep in (1, 2, 3):
        path = os.path.join(b, CELL.format(rep) + ".json")
        doc = json.load(open(path))
        change(doc)
        json.dump(doc, open(path, "w"))
    return a, b


@pytest.fixture
def runs(tmp_path):
    # B: plain @ 50/s responds twice as slowly; one more rate only in B
    def slower(doc):
        doc["metrics"]["response_time_ms"] *= 2
        doc["run_id"] = "B"
    a, b = two_runs(tmp_path, ("a", "b"), slower)
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


def test_holm_correction():
    from ansible.module_utils.testbed_reports.compare import holm
    # m = 4 testable: thresholds 0.0125, 0.0167, 0.025, 0.05 in rank order; the first failure stops it
    assert holm([0.01, None, 0.04, 0.015, 0.03]) == [True, None, False, True, False]
    assert holm([0.001, 0.002]) == [True, True]
    assert holm([]) == [] and holm([None]) == [None]


def test_two_experiments_are_refused_and_differences_are_listed(runs, tmp_path):
    a, b = runs
    run_b = json.load(open(os.path.join(b, "run.json")))
    run_b["run_parameters"] = dict(run_b.get("run_parameters") or {}, duration_s=99)
    json.dump(run_b, open(os.path.join(b, "run.json"), "w"))
    path = os.path.join(b, CELL.format(1) + ".json")
    doc = json.load(open(path))
    doc["environment"]["hosts"][sorted(doc["environment"]["hosts"])[0]]["kernel"] = "6.1.0-99-amd64"
    json.dump(doc, open(path, "w"))
    rows, info = compare_runs(a, b)
    assert info["differences"]["run_parameters"] == [("duration_s", "(absent)", "99")]
    assert any(key.endswith(".kernel") and "6.1.0-99-amd64" in vb for key, _va, vb in info["differences"]["environment"])
    assert info["tests"] == sum(1 for r in rows if r["p_value"] is not None)
    # --metrics: only those, and a name neither run has is refused
    only = compare_runs(a, b, metrics=["response_time_ms"])[0]
    assert {r["metric"] for r in only} == {"response_time_ms"}
    with pytest.raises(Exception, match="--metrics names no_such_metric"):
        compare_runs(a, b, metrics=["no_such_metric"])
    other = str(tmp_path / "other")
    shutil.copytree(SAMPLE_RUN, other)
    run_o = json.load(open(os.path.join(other, "run.json")))
    run_o["experiment"] = "nfv_chain"
    json.dump(run_o, open(os.path.join(other, "run.json"), "w"))
    assert report_main(["--compare", a, other]) == 2
    with pytest.raises(Exception, match="only two runs of the same experiment can be compared"):
        compare_runs(a, other)


@pytest.fixture
def slower(tmp_path):
    """A and B: B's plain @ 50/s answers 10 ms later in every repetition (an injected slowdown)."""
    def later(doc):
        doc["metrics"]["response_time_ms"] += 10
    return two_runs(tmp_path, ("ga", "gb"), later)


def test_the_gate_passes_two_runs_of_the_same_code(slower, tmp_path, capsys):
    a, _b = slower
    assert report_main(["--compare", a, a, "--tolerance", "response_time=+5%"]) == 0
    assert "## Regression gate: passed" in capsys.readouterr().out
    # A second run of the same code is not the same numbers: each repetition a little off, both ways
    noise = iter([1.02, 0.985, 1.01])

    def jitter(doc):
        doc["metrics"]["response_time_ms"] *= next(noise)
    again, other = two_runs(tmp_path, ("same-a", "same-b"), jitter)
    assert report_main(["--compare", again, other, "--tolerance", "response_time=+5%"]) == 0
    assert "## Regression gate: passed" in capsys.readouterr().out


def test_the_gate_fails_an_injected_slowdown_and_says_why(slower, capsys):
    assert report_main(["--compare", *slower, "--tolerance", "response_time=+5%"]) == 1
    text = capsys.readouterr().out
    assert "## Regression gate: FAILED (1 of " in text
    line = [row for row in text.splitlines() if row.startswith("| plain | num_conns=300, rate=50 | `response_time_ms`")
            and row.endswith("| response_time=+5% |")]
    assert len(line) == 1, text
    assert "+857.14" in line[0]


def test_the_gate_has_a_direction_and_a_size(slower, capsys):
    # a rise is not a drop; a rise within its tolerance passes
    assert report_main(["--compare", *slower, "--tolerance", "response_time_ms=-5%"]) == 0
    assert report_main(["--compare", *slower, "--tolerance", "response_*=+900%"]) == 0
    capsys.readouterr()


def test_bad_tolerances_are_one_sentence(slower, capsys):
    assert report_main(["--compare", *slower, "--tolerance", "response_time=5"]) == 2
    assert "is not METRIC=-N% or METRIC=+N%" in capsys.readouterr().err
    assert report_main(["--compare", *slower, "--tolerance", "throughput=-5%"]) == 2
    assert "--tolerance throughput=-5% matches no metric measured in both runs" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        report_main([slower[0], "--tolerance", "response_time=+5%"])
