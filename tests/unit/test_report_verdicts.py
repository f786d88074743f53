"""Verdicts in scripts/testbed_report.py: one short line per invalid point, full reasons folded,
lab faults in their own section; and the run-directory reader it shares with the result store."""
import csv
import io
import json
import os

import pytest
from ansible.module_utils import testbed_results as results
from ansible.module_utils.testbed_reports.base import REASON_CHARS
from ansible.module_utils.testbed_reports.load import load_run
from ansible.module_utils.testbed_reports.make import make_report
from testbed_report import main as report_main

LONG = ("iperf3 reported 3 retransmits per second and the client's CPU was saturated at 99.8 % during the whole "
        "window, so the throughput is bounded by the load generator and not by the chain: " + "x" * 300)


def _doc(pid, variant, value, rep, **extra):
    doc = {"point_id": pid, "run_id": "r1", "experiment": "e", "variant": variant, "parameters": {"size": 4},
           "repetition": rep, "metrics": {"throughput_gbps": value}, "valid": True, "reasons": [], "warnings": []}
    doc.update(extra)
    return doc


def _run(tmp_path, docs, report=None):
    for doc in docs:
        (tmp_path / (doc["point_id"] + ".json")).write_text(json.dumps(doc))
    (tmp_path / "run.json").write_text(json.dumps({
        "experiment": "e", "run_id": "r1", "report": report or {},
        "plan": [{"point_id": d["point_id"], "variant": d["variant"]} for d in docs]}))


@pytest.fixture
def run_dir(tmp_path):
    docs = [_doc("a__rep1", "a", 10.0, 1), _doc("a__rep2", "a", 12.0, 2), _doc("a__rep3", "a", 11.0, 3),
            _doc("a__rep4", "a", 3.0, 4, valid=False, reasons=[LONG, "second reason", "third reason"]),
            _doc("a__rep5", "a", 999.0, 5, verdict="fault", valid=False,
                 reasons=["the client container was OOM-killed (exit 137)"],
                 evidence={"exit_code": 137, "dmesg": "Out of memory: Killed process 4242 (iperf3)"}),
            _doc("b__rep1", "b", 9.0, 1, valid=False, reasons=["one short reason"])]
    _run(tmp_path, docs)
    return tmp_path


def test_one_short_line_per_invalid_point(run_dir):
    make_report(str(run_dir), formats=("md", "html", "csv"), out=io.StringIO())
    md = (run_dir / "report.md").read_text()
    verdicts = md[md.index("## Verdicts"):md.index("## Faults")]
    lines = [line for line in verdicts.splitlines() if line.startswith("- \u26a0")]
    assert len(lines) == 2
    first = lines[0].split("repetition 4): ", 1)[1]
    assert first.startswith("iperf3 reported 3 retransmits per second")
    assert first.endswith("\u2026 (+2 more reasons)")
    assert len(first) - len(" (+2 more reasons)") == REASON_CHARS
    assert "second reason" not in verdicts
    assert lines[1].endswith("(b, size=4, repetition 1): one short reason")
    # the full text: an appendix in Markdown ...
    appendix = md[md.index("## Appendix: Full reasons of the invalid points"):]
    assert LONG in appendix and "- third reason" in appendix
    assert "one short reason" not in appendix  # nothing more to say about b
    assert "Full text: see \u201cAppendix: Full reasons of the invalid points\u201d below." in verdicts
    # ... a folded <details> in HTML
    page = (run_dir / "report.html").read_text()
    assert "<details><summary>Full reasons of the invalid points</summary>" in page
    assert "Appendix" not in page


def test_faults_are_never_results(run_dir):
    make_report(str(run_dir), formats=("md", "html", "csv"), out=io.StringIO())
    md = (run_dir / "report.md").read_text()
    assert "- points: 6 measured, 3 valid, 2 invalid, 1 lab fault (not results; see Faults)" in md
    # the fault's 999 Gbit/s is in no table: a = mean of 10, 12, 11 (rep 4 invalid, excluded)
    assert "| a | 11.00 \u00b1 2.48 (3) \u26a0 |" in md
    assert "999" not in md[:md.index("## Faults")]
    faults = md[md.index("## Faults (re-measured)"):md.index("## Environment")]
    assert ("1 point failed because of the lab, not the system under test (a lab fault): never in the tables, "
            "charts or statistics; the plan measures it again.") in faults
    assert "- `a__rep5` (a, size=4, repetition 5): the client container was OOM-killed (exit 137)" in faults
    appendix = md[md.index("## Appendix: Reasons and evidence of the faults"):]
    assert "- evidence exit_code: 137" in appendix
    assert "- evidence dmesg: Out of memory: Killed process 4242 (iperf3)" in appendix
    rows = list(csv.DictReader(open(str(run_dir / "results.csv"))))
    assert {r["point_id"]: r["verdict"] for r in rows}["a__rep5"] == "fault"
    assert {r["point_id"]: r["verdict"] for r in rows}["a__rep4"] == "invalid"
    summary = list(csv.DictReader(open(str(run_dir / "summary.csv"))))
    assert [(r["series"], r["points"], r["n"]) for r in summary] == [("a", "4", "3"), ("b", "1", "0")]


def test_verdict_field_decides(tmp_path):
    docs = [_doc("a__rep1", "a", 10.0, 1, verdict="invalid", reasons=["out of range"]),
            _doc("a__rep2", "a", 12.0, 2, verdict="valid", valid=False),
            _doc("a__rep3", "a", 11.0, 3, verdict="maybe")]
    _run(tmp_path, docs)
    run, loaded, problems = load_run(str(tmp_path))
    assert [(d["verdict"], d["valid"]) for d in loaded] == [("invalid", False), ("valid", True), ("valid", True)]
    assert "a__rep2.json: verdict 'valid' contradicts valid=false; the verdict decides." in problems
    assert "a__rep3.json: verdict 'maybe' is not one of valid, invalid, fault; its valid flag decides." in problems


def test_only_faults_exit_2(tmp_path, capsys):
    _run(tmp_path, [_doc("a__rep1", "a", 1.0, 1, verdict="fault")])
    assert report_main([str(tmp_path), "--format", "md"]) == 2
    assert "every point document in" in capsys.readouterr().err


def test_read_run_dir(tmp_path):
    assert results.read_run_dir(str(tmp_path)) == {"run": None, "run_error": None, "files": []}
    (tmp_path / "run.json").write_text('{"run_id": "r1"}')
    (tmp_path / "index.json").write_text("{}")
    (tmp_path / "b__rep1.json").write_text('{"point_id": "b__rep1"}')
    (tmp_path / "a__rep1.json").write_text("{broken")
    (tmp_path / ".tmp-x.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    os.mkdir(str(tmp_path / "raw.json"))
    found = results.read_run_dir(str(tmp_path))
    assert found["run"] == {"run_id": "r1"} and found["run_error"] is None
    assert [f["name"] for f in found["files"]] == ["a__rep1.json", "b__rep1.json"]
    assert found["files"][0]["doc"] is None and "Expecting property name" in found["files"][0]["error"]
    assert found["files"][1] == {"name": "b__rep1.json", "doc": {"point_id": "b__rep1"}, "error": None}
    (tmp_path / "run.json").write_text("[1,")
    assert "run.json is not readable JSON" in results.read_run_dir(str(tmp_path))["run_error"]


def test_report_reads_through_the_result_store(tmp_path, monkeypatch):
    _run(tmp_path, [_doc("a__rep1", "a", 1.0, 1)])
    calls = []
    real = results.read_run_dir

    def spy(run_dir):
        calls.append(run_dir)
        return real(run_dir)

    monkeypatch.setattr(results, "read_run_dir", spy)
    load_run(str(tmp_path))
    assert calls == [str(tmp_path)]
