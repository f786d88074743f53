"""report.findings (module_utils/testbed_reports/findings.py): a study's findings in words and ranges
beside the same quantity computed from the run's points."""
import io
import json

import pytest
from ansible.module_utils.testbed_reports.base import ReportError
from ansible.module_utils.testbed_reports.make import make_report

# rate x scheduler, three repetitions each: wrr clearly best at 100, rr and wrr tied at 50
VALUES = {("rr", 50): [49.0, 50.0, 51.0], ("wrr", 50): [49.5, 50.5, 50.0], ("lc", 50): [40.0, 41.0, 39.0],
          ("rr", 100): [80.0, 81.0, 79.0], ("wrr", 100): [95.0, 96.0, 94.0], ("lc", 100): [70.0, 71.0, 69.0]}
SPEC = {"title": "LVS", "x": "rate", "metrics": ["net_io_kb_s", "conc"],
        "higher_is_better": {"net_io_kb_s": True, "response_time_ms": False}}


def _run(tmp_path, findings, invalid=(), **spec):
    docs = []
    for (sched, rate), values in VALUES.items():
        for rep, value in enumerate(values, start=1):
            pid = f"{sched}__rate-{rate}__rep{rep}"
            valid = pid not in invalid
            doc = {"point_id": pid, "run_id": "r1", "experiment": "lvs", "variant": sched,
                   "parameters": {"rate": rate}, "repetition": rep, "valid": valid,
                   "reasons": [] if valid else ["client-bound"], "warnings": [],
                   "metrics": {"net_io_kb_s": value, "response_time_ms": 200.0 / value, "conc": rate * 2 + rep},
                   "units": {"net_io_kb_s": "KB/s", "conc": "connections"}}
            (tmp_path / (pid + ".json")).write_text(json.dumps(doc))
            docs.append(doc)
    (tmp_path / "run.json").write_text(json.dumps({
        "experiment": "lvs", "run_id": "r1", "report": dict(SPEC, findings=findings, **spec),
        "plan": [{"point_id": d["point_id"], "variant": d["variant"]} for d in docs]}))
    make_report(str(tmp_path), formats=("md",), out=io.StringIO())
    text = (tmp_path / "report.md").read_text()
    return text[text.index("## The study's findings beside this run's"):]


def _row(table, finding):
    line = next(line for line in table.splitlines() if line.startswith(f"| {finding} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_each_kind_computes_this_runs_figure_beside_the_studys(tmp_path):
    items = [
        {"finding": "best by throughput", "study": "wrr", "value": "best", "metric": "net_io_kb_s", "by": "rate"},
        {"finding": "best by response time", "study": "wrr", "value": "best", "metric": "response_time_ms",
         "by": "rate"},
        {"finding": "throughput everywhere", "study": "~11.2-11.8", "value": "range", "metric": "net_io_kb_s",
         "where": {"rate": 100}},
        {"finding": "throughput per rate", "study": "150-400", "value": "range", "metric": "net_io_kb_s",
         "by": "rate"},
        {"finding": "concurrent connections", "study": "<= 1022", "value": "max", "metric": "conc"},
        {"finding": "wrr against lc", "study": "+100 %", "value": "change", "metric": "net_io_kb_s",
         "variant": "wrr", "baseline": "lc", "where": {"rate": 100}},
        {"finding": "valid runs", "study": "0 of 30", "value": "valid"},
        {"finding": "unmeasured", "study": "12", "value": "sum", "metric": "nothing"},
    ]
    table = _run(tmp_path, {"items": items, "notes": ["The study's runs were client-bound."]})
    assert "| finding | the study | this run | computed from |" in table
    best = _row(table, "best by throughput")
    # wrr: place 1= at 50 (tied mean 50.0 with rr) and 1 at 100; rr: 1= and 2
    assert best[1] == "wrr"
    assert best[2].startswith("wrr (mean place 1.2 over 2 values of rate)")
    assert "significant in 1 of 2" in best[2]
    assert best[3] == "best mean place by `net_io_kb_s` over the values of `rate`"
    # response time: 200/value per point, so wrr is strictly first at 50 too (4.0004 against rr 4.0016 ms)
    assert _row(table, "best by response time")[2].startswith("wrr (mean place 1.0 over 2 values of rate)")
    rng = _row(table, "throughput everywhere")
    assert rng[2] == "70.00\u201395.00 KB/s (3 means)"
    assert rng[3] == "lowest and highest mean of a variant of `net_io_kb_s` (rate = 100)"
    assert _row(table, "throughput per rate")[2] == "40.00\u201395.00 KB/s (6 means)"
    assert _row(table, "throughput per rate")[3] == ("lowest and highest mean of a variant at a value of `rate` "
                                                     "of `net_io_kb_s`")
    assert _row(table, "concurrent connections")[2] == "203 connections (18 points)"
    change = _row(table, "wrr against lc")
    assert change[2].startswith("+35.7 % (wrr 95.00 KB/s against lc 70.00 KB/s; n = 3/3; p = ")
    assert change[2].endswith("significant: \u2731)")
    assert _row(table, "valid runs")[2] == "18 of 18 points valid"
    assert _row(table, "unmeasured")[2] == "\u2014 (not measured in this run)"
    assert "The study's runs were client-bound." in table


def test_invalid_points_are_left_out_of_the_figures_but_counted_as_runs(tmp_path):
    items = [{"finding": "valid runs", "study": "0 of 30", "value": "valid"},
             {"finding": "peak", "study": "x", "value": "max", "metric": "net_io_kb_s"}]
    table = _run(tmp_path, {"items": items}, invalid=("wrr__rate-100__rep2",))
    assert _row(table, "valid runs")[2] == "17 of 18 points valid"
    assert _row(table, "peak")[2] == "95.00 KB/s (17 points)"


@pytest.mark.parametrize("findings, message", [
    ({"items": []}, r"report.findings must be \{title, label, items"),
    ({"items": [{"finding": "x", "study": "y", "value": "median", "metric": "m"}]},
     r"report.findings.items\[0\].value must be one of range, max"),
    ({"items": [{"finding": "x", "study": "y", "value": "max"}]}, r"items\[0\].metric must be a metric name"),
    ({"items": [{"finding": "x", "study": "y", "value": "max", "metric": ["a", "b"]}]},
     r"only value: range takes a list"),
    ({"items": [{"finding": "x", "study": "y", "value": "change", "metric": "m", "variant": "a"}]},
     r"value: change needs variant and baseline"),
    ({"items": [{"finding": "x", "study": "y", "value": "max", "metric": "m", "by": "rate"}]},
     r"items\[0\].by must be a parameter name \(value: best or range only\)"),
    ({"items": [{"finding": "x", "value": "max", "metric": "m"}]}, r"items\[0\] must be a mapping with a finding"),
])
def test_a_bad_item_is_refused_naming_it(tmp_path, findings, message):
    with pytest.raises(ReportError, match=message):
        _run(tmp_path, findings)


def test_best_needs_a_direction(tmp_path):
    items = [{"finding": "x", "study": "y", "value": "best", "metric": "conc", "by": "rate"}]
    with pytest.raises(ReportError, match=r"'conc' has no direction in report.higher_is_better"):
        _run(tmp_path, {"items": items})


def test_measured_with_names_each_version_and_where_it_ran():
    from ansible.module_utils.testbed_reports.derived import measured_with, tool_sentence
    docs = [{"environment": {"hosts": {"c1": {"tools": {"httperf": "0.9.0"}}, "c2": {"tools": {"httperf": "0.9.0"}},
                                       "d": {"tools": {"ipvsadm": "1.31"}, "nfv_image_tools": {"iperf3": "3.12"}}}}},
            {"extra": {"tool": {"name": "nuttcp", "version": "6.1.2"}}}]
    assert measured_with(docs, "httperf") == "httperf 0.9.0 (c1, c2)"
    assert measured_with(docs, "iperf3") == "iperf3 3.12 (d)"
    assert measured_with(docs, "nuttcp") == "nuttcp 6.1.2"
    assert measured_with(docs, "sockperf") == "sockperf (version not recorded)"
    tools = {"a": "httperf", "b": "httperf", "c": "nuttcp"}
    assert tool_sentence(docs, tools, ["a", "b", "c", "x"]) == "Measured with httperf 0.9.0 (c1, c2); nuttcp 6.1.2."
    assert tool_sentence(docs, tools, ["x"]) == ""


def test_a_findings_row_and_a_pivot_name_their_tool(tmp_path):
    items = [{"finding": "peak", "study": "x", "value": "max", "metric": "net_io_kb_s"}]
    text = _run(tmp_path, {"items": items}, tools={"net_io_kb_s": "httperf"},
                pivots=[{"title": "Table 4.1", "metric": "net_io_kb_s", "rows": "rate"}])
    full = (tmp_path / "report.md").read_text()
    assert _row(text, "peak")[3] == "max of `net_io_kb_s` over the points; measured with httperf (version not recorded)"
    table = full[full.index("## Table 4.1"):]
    assert "Measured with httperf (version not recorded)." in table.splitlines()[2]
