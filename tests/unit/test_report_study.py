"""report.pivots and report.ranking (module_utils/testbed_reports/study.py): the studies' tables in
their shape (a parameter's values as rows, the variants as columns) and a ranking with the step
between neighbouring places tested."""
import io
import json
import os

import pytest
import yaml
from ansible.module_utils.testbed_reports.base import ReportError
from ansible.module_utils.testbed_reports.make import make_report
from ansible.module_utils.testbed_reports.study import rank
from conftest import ROOT
from lvs_compare import lvs_study_reference

# rate x scheduler, three repetitions each: wrr clearly best at 100, rr and wrr not told apart at 50
VALUES = {("rr", 50): [49.0, 50.0, 51.0], ("wrr", 50): [49.5, 50.5, 50.0], ("lc", 50): [40.0, 41.0, 39.0],
          ("rr", 100): [80.0, 81.0, 79.0], ("wrr", 100): [95.0, 96.0, 94.0], ("lc", 100): [70.0, 71.0, 69.0]}


def _run(tmp_path, report):
    docs = []
    for (sched, rate), values in VALUES.items():
        for rep, value in enumerate(values, start=1):
            pid = f"{sched}__rate-{rate}__rep{rep}"
            doc = {"point_id": pid, "run_id": "r1", "experiment": "lvs", "variant": sched,
                   "parameters": {"rate": rate}, "repetition": rep, "valid": True, "reasons": [], "warnings": [],
                   "metrics": {"net_io_kb_s": value, "response_time_ms": 200.0 / value}}
            (tmp_path / (pid + ".json")).write_text(json.dumps(doc))
            docs.append(doc)
    (tmp_path / "run.json").write_text(json.dumps({
        "experiment": "lvs", "run_id": "r1", "report": report,
        "plan": [{"point_id": d["point_id"], "variant": d["variant"]} for d in docs]}))
    make_report(str(tmp_path), formats=("md",), out=io.StringIO())
    return (tmp_path / "report.md").read_text()


SPEC = {"title": "LVS", "x": "rate", "metrics": ["net_io_kb_s", "response_time_ms"],
        "higher_is_better": {"net_io_kb_s": True, "response_time_ms": False}}


def test_pivot_has_the_rate_as_rows_and_the_schedulers_as_columns(tmp_path):
    spec = dict(SPEC, pivots=[{"title": "Table 4.1: throughput", "metric": "net_io_kb_s", "rows": "rate",
                               "reference": {"label": "the study", "values": {"100": {"wrr": 12.5}}}}])
    text = _run(tmp_path, spec)
    table = text[text.index("## Table 4.1: throughput"):]
    assert "| rate | rr | wrr | lc |" in table
    assert "| 50 | 50.00 \u00b1 2.48 (3) | 50.00 \u00b1 1.24 (3) | 40.00 \u00b1 2.48 (3) |" in table
    assert "| 100 | 80.00 \u00b1 2.48 (3) | 95.00 \u00b1 2.48 (3) [12.50] | 70.00 \u00b1 2.48 (3) |" in table
    assert "in brackets: the study" in table


def test_reference_rows_not_measured_are_a_table_of_their_own(tmp_path):
    # the study's rates (2000, 14000) against a lab's (50, 100): its cells stay in its shape
    study = {"2000": {"rr": 310.2, "wrr": 402.0}, "14000": {"wrr": 155.5, "sh": 120.0}, "100": {"lc": 7.0}}
    spec = dict(SPEC, pivots=[{"title": "Table 4.1: throughput", "metric": "net_io_kb_s", "rows": "rate",
                               "reference": {"label": "the study (its hardware)", "values": study}}])
    text = _run(tmp_path, spec)
    table = text[text.index("## Table 4.1: throughput"):]
    assert "| 100 | 80.00 \u00b1 2.48 (3) | 95.00 \u00b1 2.48 (3) | 70.00 \u00b1 2.48 (3) [7.000] |" in table
    assert "The study (its hardware) at the values of `rate` not measured here, as given:" in table
    assert "| rate | rr | wrr | sh |" in table
    published = table[table.index("| rate | rr | wrr | sh |"):]
    assert published.index("| 2000 | 310.2 | 402.0 | \u2014 |") < published.index("| 14000 | \u2014 | 155.5 | 120.0 |")


def test_ranking_orders_best_first_and_tests_each_step(tmp_path):
    spec = dict(SPEC, ranking={"metrics": ["net_io_kb_s", "response_time_ms"], "by": "rate"})
    text = _run(tmp_path, spec)
    part = text[text.index("## Ranking of the variants"):]
    throughput = part[part.index("### `net_io_kb_s`"):part.index("### `response_time_ms`")]
    rows = [line for line in throughput.splitlines() if line.startswith("| 100 |")]
    assert [r.split(" | ")[2] for r in rows] == ["wrr", "rr", "lc"]
    assert rows[0].endswith("| \u2014 | \u2014 |") and rows[1].endswith("\u2731 |")
    at50 = [line for line in throughput.splitlines() if line.startswith("| 50 |")]
    assert [r.split(" | ")[2] for r in at50][2] == "lc" and at50[1].endswith("| no |")  # rr and wrr: a tie
    latency = part[part.index("### `response_time_ms`"):part.index("### Mean place")]
    assert "lower is better" in latency
    assert [r.split(" | ")[2] for r in latency.splitlines() if r.startswith("| 100 |")] == ["wrr", "rr", "lc"]
    mean = part[part.index("### Mean place"):]
    assert "| lc | 3.0 (2 of 2) | 3.0 (2 of 2) |" in mean
    assert mean.index("| wrr |") < mean.index("| lc |")


def test_rank_without_values_and_ties():
    docs = [{"variant": "a", "metrics": {"m": 1.0}}, {"variant": "b", "metrics": {"m": 1.0}},
            {"variant": "c", "metrics": {}}]
    ranked = rank(docs, "m", True)
    assert [r["variant"] for r in ranked] == ["a", "b"]  # c has no value; a tie is ordered by name
    assert [r["place"] for r in ranked] == ["1=", "1="] and ranked[1]["place_value"] == 1.5
    assert ranked[1]["significance"] == "not testable"


@pytest.mark.parametrize("spec, fragment", [
    ({"pivots": "x"}, "report.pivots must be a list"),
    ({"pivots": [{"metric": "m"}]}, "report.pivots[0] must be a mapping with a metric name and rows"),
    ({"pivots": [{"metric": "m", "rows": "rate", "reference": {"values": 3}}]}, "report.pivots[0].reference"),
    ({"ranking": {"metrics": []}}, "report.ranking must be a mapping with a non-empty list"),
    ({"ranking": {"metrics": ["net_io_kb_s"], "by": 3}}, "report.ranking.by must be"),
    ({"ranking": {"metrics": ["errors"]}}, "'errors' has no direction in report.higher_is_better"),
])
def test_bad_spec_is_named(tmp_path, spec, fragment):
    with pytest.raises(ReportError) as error:
        _run(tmp_path, dict(SPEC, **spec))
    assert fragment in str(error.value)


def test_pivot_by_repetition_shows_each_run(tmp_path):
    spec = dict(SPEC, pivots=[{"title": "each run", "metric": "net_io_kb_s", "rows": "repetition",
                               "where": {"rate": 100}}])
    text = _run(tmp_path, spec)
    table = text[text.index("## each run"):]
    assert "| repetition | rr | wrr | lc |" in table
    assert "| 1 | 80.00 (1) | 95.00 (1) | 70.00 (1) |" in table
    assert "| 3 | 79.00 (1) | 94.00 (1) | 69.00 (1) |" in table


def test_the_shipped_study_cells_and_notes_print_in_the_studys_shape(tmp_path):
    """lvs_compare's defaults (the study's 60 cells, its contradictions) through the report: a lab's rates
    get no brackets, the study's 2000/8000/14000 x ten schedulers print as a table of their own, the notes under it."""
    with open(os.path.join(ROOT, "roles", "lvs_compare", "defaults", "main.yml")) as handle:
        defaults = yaml.safe_load(handle)
    reference = lvs_study_reference(defaults["lvs_compare_study_cells"], "net_io_kb_s", "the study")
    spec = dict(SPEC, pivots=[{"title": "Table 4.1: throughput", "metric": "net_io_kb_s", "rows": "rate",
                               "reference": reference, "notes": defaults["lvs_compare_study_notes"]}])
    text = _run(tmp_path, spec)
    table = text[text.index("## Table 4.1: throughput"):]
    assert "| 100 | 80.00 \u00b1 2.48 (3) | 95.00 \u00b1 2.48 (3) | 70.00 \u00b1 2.48 (3) |" in table
    published = table[table.index("| rate | rr | wrr | lc | wlc | lblc | lblcr | dh | sh | sed | nq |"):]
    assert "| 2000 | 203.2 | 217.5 | 222.2 | 184.1 | 156.8 | 183.7 | 152.4 | 247.5 | 155.7 | 219.4 |" in published
    assert "| 14000 | 102.1 | 104.6 | 130.0 | 107.8 | 72.90 | 196.9 | 220.7 | 110.8 | 114.6 | 110.1 |" in published
    assert "dh at 14000 throughput 220.7 KB/s against 65.1" in table and '"wrr is best"' in table
