"""Tests for scripts/testbed_report.py on the real sample run (tests/fixtures/report/sample_run).

The sample is 2 variants x 2 rates x 3 repetitions of httperf against nginx on
127.0.0.1 (see tests/fixtures/report/README.md).  Expected cells are computed
by hand from the raw httperf outputs, e.g. plain @ 50/s response times
2.1, 0.8, 0.6 ms -> mean 1.1667, s 0.81445, t(0.975, 2) 4.30265 -> ± 2.0232.
"""
import base64
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from conftest import FIXTURES, ROOT
from testbed_report import main as report_main

SAMPLE_RUN = os.path.join(FIXTURES, "report", "sample_run")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
METRICS = ["response_time_ms", "net_io_kb_s", "connection_rate_per_s", "reply_rate_avg_per_s",
           "client_cpu_total_pct"]


@pytest.fixture
def run_dir(tmp_path):
    target = tmp_path / "run"
    shutil.copytree(SAMPLE_RUN, str(target))
    return str(target)


def _render(run_dir, *args):
    assert report_main([run_dir] + list(args)) == 0
    with open(os.path.join(run_dir, "report.md"), encoding="utf-8") as handle:
        return handle.read()


def _section(md, heading):
    """Text of a Markdown section from ``heading`` to the next heading of any level."""
    start = md.index(heading + "\n")
    rest = md[start + len(heading) + 1:]
    ends = [i for i in (rest.find("\n#"),) if i >= 0]
    return rest[:ends[0]] if ends else rest


def _rows(path):
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _load(run_dir, point_id):
    with open(os.path.join(run_dir, point_id + ".json")) as handle:
        return json.load(handle)


def _save(run_dir, point_id, doc):
    with open(os.path.join(run_dir, point_id + ".json"), "w") as handle:
        json.dump(doc, handle)


# ---------------------------------------------------------------------------
# the full report of the sample run
# ---------------------------------------------------------------------------

def test_tables_have_exact_cells(run_dir):
    md = _render(run_dir)
    assert md.startswith("# Sample: nginx on loopback, plain vs rate-limited location\n")
    resp = _section(md, "### `response_time_ms` (ms)")
    assert "| series \\ rate | 50 | 300 |" in resp
    # response times cannot be negative: the intervals reaching below 0 are shown clipped (‡)
    assert "| plain | 1.167 +2.023/\u22121.167\u2021 (3) | 0.9000 +1.2421/\u22120.9000\u2021 (3) |" in resp
    assert "its low end is shown clipped at 0" in resp
    # the three ratelimited @ 300/s repetitions are invalid (5xx): excluded and marked
    assert "| ratelimited | 1.133 \u00b1 0.287 (3) | \u26a0 |" in resp
    net = _section(md, "### `net_io_kb_s` (KB/s)")
    assert "| plain | 65.50 \u00b1 0.00 (3) | 392.2 \u00b1 0.1 (3) |" in net
    assert "| ratelimited | 65.90 \u00b1 0.00 (3) | \u26a0 |" in net
    # httperf gives no reply rate for runs under 5 s: a blank cell, never 0
    reply = _section(md, "### `reply_rate_avg_per_s` (1/s)")
    assert "| plain | 49.90 \u00b1 0.43 (3) |  |" in reply
    cpu = _section(md, "### `client_cpu_total_pct` (%)")
    assert "| plain | 73.20 \u00b1 55.37 (3) | 80.60 \u00b1 30.43 (3) |" in cpu
    assert "- `num_conns` follows the x value" in md
    assert "- points: 12 measured, 9 valid, 3 invalid" in md
    assert "- plan: 12 points, 0 pending" in md


def test_highest_valid_rate_and_verdicts(run_dir):
    md = _render(run_dir)
    table = _section(md, "## Highest valid `rate` per series")
    assert "| plain | 300 | none | 50, 300 |" in table
    assert "| ratelimited | 50 | 300 | 50, 300 |" in table
    verdicts = _section(md, "## Verdicts")
    assert "3 of 12 points are invalid:" in verdicts
    assert ("- \u26a0 `ratelimited__num_conns-900_rate-300__rep1` (ratelimited, num_conns=900, rate=300, "
            "repetition 1): 596 of 900 replies (66.2 %) were HTTP errors (4xx 0, 5xx 596), above 1.0 %") in verdicts
    assert verdicts.count("\u26a0 `") == 3
    warnings = _section(md, "### Warnings")
    assert "reply rate has 0 samples" in warnings and "(6 points: " in warnings


def test_baseline_comparison(run_dir):
    md = _render(run_dir)
    comparison = md[md.index("## Comparison with baseline `plain`"):md.index("## Verdicts")]
    assert ("| ratelimited | 50 | 1.167 | 1.133 | -2.86 | 0.9502 | no | no significant difference |"
            in comparison)
    # both net I/O samples are constant and differ (65.5 vs 65.9): no spread, no t test - never "p < 0.0001"
    assert "| ratelimited | 50 | 65.50 | 65.90 | +0.61 | n/a | not testable | not testable |" in comparison
    assert "<0.0001" not in comparison
    # nothing valid on the ratelimited side at 300/s
    assert "| ratelimited | 300 |" not in comparison


def test_environment_section(run_dir):
    env = _section(_render(run_dir), "## Environment")
    assert "| hosts.localhost.tools.httperf | 0.9.0 | all |" in env
    assert "| hosts.localhost.tools.nginx | 1.22.1 | all |" in env
    assert "| hosts.localhost.distro.pretty_name | Debian GNU/Linux 12 (bookworm) | all |" in env
    assert "| controller.ansible_core_version |" in env


def test_results_csv(run_dir):
    _render(run_dir)
    rows = _rows(os.path.join(run_dir, "results.csv"))
    assert len(rows) == 12
    with open(os.path.join(run_dir, "results.csv")) as handle:
        header = handle.readline().strip().split(",")
    assert header[:7] == ["run_id", "point_id", "variant", "num_conns", "rate", "repetition", "valid"]
    assert header[-1] == "reasons"
    # the parser also reports a num_conns metric: it gets a prefixed column
    assert "metric_num_conns" in header
    first = rows[0]
    assert first["point_id"] == "plain__num_conns-300_rate-50__rep1"
    assert (first["run_id"], first["variant"], first["rate"], first["repetition"]) == (
        "20261121T154139Z", "plain", "50", "1")
    assert (first["valid"], first["response_time_ms"], first["net_io_kb_s"]) == ("true", "2.1", "65.5")
    assert first["reply_rate_avg_per_s"] == "49.7"
    assert first["reasons"] == ""
    late = [r for r in rows if r["variant"] == "ratelimited" and r["rate"] == "300"]
    assert [r["valid"] for r in late] == ["false"] * 3
    assert all("were HTTP errors" in r["reasons"] for r in late)
    assert [r["status_5xx"] for r in late] == ["596", "595", "594"]
    # null in the document -> empty cell
    assert {r["reply_rate_avg_per_s"] for r in rows if r["rate"] == "300"} == {""}


def test_summary_csv(run_dir):
    _render(run_dir)
    rows = _rows(os.path.join(run_dir, "summary.csv"))
    assert len(rows) == len(METRICS) * 4
    cell = [r for r in rows if (r["series"], r["x"], r["metric"]) == ("plain", "50", "response_time_ms")][0]
    assert (cell["x_param"], cell["unit"], cell["n"], cell["points"], cell["n_invalid"]) == ("rate", "ms", "3", "3", "0")
    assert float(cell["mean"]) == pytest.approx(3.5 / 3, abs=1e-12)
    assert float(cell["ci_half"]) == pytest.approx(2.023213, abs=1e-6)
    # the table shows this interval clipped at 0; the CSV keeps the raw low end
    assert float(cell["ci_low"]) == pytest.approx(3.5 / 3 - 2.023213, abs=1e-6) and float(cell["ci_low"]) < 0
    assert (cell["min"], cell["median"], cell["max"]) == ("0.6", "0.8", "2.1")
    bad = [r for r in rows if (r["series"], r["x"], r["metric"]) == ("ratelimited", "300", "response_time_ms")][0]
    assert (bad["n"], bad["n_invalid"], bad["mean"], bad["ci_half"]) == ("0", "3", "", "")
    missing = [r for r in rows if (r["series"], r["x"], r["metric"]) == ("plain", "300", "reply_rate_avg_per_s")][0]
    assert (missing["n"], missing["n_missing"], missing["mean"]) == ("0", "3", "")


def test_charts_are_real_pngs_and_linked(run_dir):
    md = _render(run_dir)
    for metric in METRICS:
        path = os.path.join(run_dir, "charts", metric + ".png")
        with open(path, "rb") as handle:
            data = handle.read()
        assert data[:8] == PNG_MAGIC
        assert len(data) > 10000
        assert "![%s](charts/%s.png)" % (metric, metric) in md
        assert "[SVG](charts/%s.svg) \u00b7 [PDF](charts/%s.pdf)" % (metric, metric) in md
        with open(path[:-4] + ".pdf", "rb") as handle:
            assert handle.read(5) == b"%PDF-"
        svg = ET.parse(path[:-4] + ".svg").getroot()
        assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    # axes and title in words and units, not metric names (the SVG's text is text, editable)
    with open(os.path.join(run_dir, "charts", "response_time_ms.svg"), encoding="utf-8") as handle:
        drawn = handle.read()
    assert "Response time (ms)" in drawn and "Response time: mean and 95 % CI by rate" in drawn
    # the page holds its charts: the SVG itself, no link to a file
    with open(os.path.join(run_dir, "report.html"), encoding="utf-8") as handle:
        page = handle.read()
    assert 'src="charts/' not in page
    inline = re.findall(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)" alt="response_time_ms">', page)
    assert len(inline) == 1
    with open(os.path.join(run_dir, "charts", "response_time_ms.svg"), "rb") as handle:
        assert base64.b64decode(inline[0]) == handle.read()
    assert "<style>" in page and "<script" not in page and "http://" not in page and "https://" not in page
    assert "<td>1.133 \u00b1 0.287 (3)</td>" in page
    assert "<td>1.167 +2.023/\u22121.167\u2021 (3)</td>" in page
    assert "<td>\u26a0</td>" in page


def test_include_invalid(run_dir):
    md = _render(run_dir, "--include-invalid", "--format", "md")
    resp = _section(md, "### `response_time_ms` (ms)")
    # 1.4, 2.6, 1.3 ms -> mean 1.7667, s 0.72342 -> ± 1.797
    assert "| ratelimited | 1.133 \u00b1 0.287 (3) | 1.767 +1.797/\u22121.767\u2021 (3) \u26a0 |" in resp
    assert "| ratelimited | 300 | 0.9000 | 1.767 | +96.30 | 0.1719 | no | no significant difference |" in md
    assert not os.path.exists(os.path.join(run_dir, "charts"))
    assert not os.path.exists(os.path.join(run_dir, "results.csv"))


# ---------------------------------------------------------------------------
# variations made from the sample
# ---------------------------------------------------------------------------

def test_cell_with_one_invalid_repetition(run_dir):
    doc = _load(run_dir, "plain__num_conns-300_rate-50__rep1")
    doc["valid"] = False
    doc["reasons"] = ["marked invalid by the test"]
    _save(run_dir, "plain__num_conns-300_rate-50__rep1", doc)
    md = _render(run_dir, "--format", "md,csv")
    # 0.8, 0.6 -> mean 0.7, s 0.141421, t(0.975, 1) 12.7062 -> ± 1.2706
    assert "| plain | 0.7000 +1.2706/\u22120.7000\u2021 (2) \u26a0 | 0.9000 +1.2421/\u22120.9000\u2021 (3) |" in md
    assert "| plain | 300 | 50 | 50, 300 |" in md
    assert "marked invalid by the test" in _section(md, "## Verdicts")


def test_missing_and_string_metrics(run_dir):
    doc = _load(run_dir, "plain__num_conns-900_rate-300__rep2")
    del doc["metrics"]["response_time_ms"]
    _save(run_dir, "plain__num_conns-900_rate-300__rep2", doc)
    for name in os.listdir(run_dir):
        if name.endswith("__rep1.json"):
            doc = _load(run_dir, name[:-5])
            doc["metrics"]["server_software"] = "nginx/1.22.1"
            _save(run_dir, name[:-5], doc)
    md = _render(run_dir, "--metrics", "response_time_ms,server_software")
    # 0.4 and 1.4 ms left at plain @ 300/s: mean 0.9, ± 12.7062 * 0.70711 / 1.41421 = 6.3531
    assert "| plain | 1.167 +2.023/\u22121.167\u2021 (3) | 0.9000 +6.3531/\u22120.9000\u2021 (2) |" in md
    text = _section(md, "### Non-numeric metrics")
    assert "| plain | nginx/1.22.1 | nginx/1.22.1 |" in text
    assert sorted(os.listdir(os.path.join(run_dir, "charts"))) == ["response_time_ms.pdf", "response_time_ms.png",
                                                                   "response_time_ms.svg"]


def test_no_matplotlib(run_dir, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    md = _render(run_dir)
    assert "charts were skipped: matplotlib is not installed" in md
    assert "![" not in md
    assert not os.path.exists(os.path.join(run_dir, "charts"))
    assert os.path.exists(os.path.join(run_dir, "results.csv"))
    assert "charts were skipped" in capsys.readouterr().err


def test_bar_chart_without_numeric_x(tmp_path):
    run = tmp_path / "bars"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"experiment": "bars", "run_id": "r1"}))
    values = {("native", "rr"): [10.0, 11.0], ("docker", "rr"): [8.0, 9.0], ("docker", "wrr"): [7.5, 8.5]}
    for (variant, sched), series in values.items():
        for rep, value in enumerate(series, 1):
            pid = f"{variant}__sched-{sched}__rep{rep}"
            (run / (pid + ".json")).write_text(json.dumps({
                "point_id": pid, "run_id": "r1", "variant": variant, "parameters": {"sched": sched},
                "repetition": rep, "metrics": {"rate_per_s": value}, "valid": True, "reasons": [],
                "warnings": []}))
    (run / "broken__rep1.json").write_text("{not json")
    md = _render(str(run), "--baseline", "native")
    assert "- x axis: `sched`" in md
    assert "| docker | 8.500 \u00b1 6.353 (2) | 8.000 \u00b1 6.353 (2) |" in md
    assert "| native | 10.50 \u00b1 6.35 (2) |  |" in md
    assert "broken__rep1.json is not readable JSON" in md
    assert "Highest valid" not in md
    assert "| docker | rr | 10.50 | 8.500 | -19.05 | 0.1056 | no |" in md
    with open(str(run / "charts" / "rate_per_s.png"), "rb") as handle:
        assert handle.read(8) == PNG_MAGIC


def test_ambiguous_x_is_reported(run_dir):
    with open(os.path.join(run_dir, "run.json")) as handle:
        run = json.load(handle)
    del run["report"]["x"]
    with open(os.path.join(run_dir, "run.json"), "w") as handle:
        json.dump(run, handle)
    md = _render(run_dir, "--format", "md")
    assert "no x axis: `num_conns`, `rate` vary together" in md
    assert "| plain (num_conns=300, rate=50) | 1.167 +2.023/\u22121.167\u2021 (3) |" in md
    md = _render(run_dir, "--format", "md", "--x", "num_conns")
    assert "| series \\ num_conns | 300 | 900 |" in md


def test_environment_differences_are_counted(run_dir):
    doc = _load(run_dir, "plain__num_conns-300_rate-50__rep1")
    doc["environment"]["hosts"]["localhost"]["kernel"] = "6.1.0-99-amd64"
    _save(run_dir, "plain__num_conns-300_rate-50__rep1", doc)
    env = _section(_render(run_dir, "--format", "md"), "## Environment")
    assert "| hosts.localhost.kernel | 6.1.0-99-amd64 | 1 |" in env
    assert "| hosts.localhost.kernel | 6.18.44-fc-v595 | 11 |" in env


# ---------------------------------------------------------------------------
# errors: exit status 2 with a message
# ---------------------------------------------------------------------------

def test_run_without_points_exits_2(tmp_path, capsys):
    (tmp_path / "run.json").write_text(json.dumps({"experiment": "x", "run_id": "r", "plan": []}))
    (tmp_path / "index.json").write_text("{}")
    assert report_main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "testbed-report: error: no point documents in" in err
    assert not os.path.exists(str(tmp_path / "report.md"))


@pytest.mark.parametrize("args, fragment", [
    (["--x", "threads"], "x parameter 'threads' is not a parameter of any point (parameters: num_conns, rate)"),
    (["--metrics", "response_time_ms,latency_ms"], "metric(s) latency_ms not found in any point"),
    (["--baseline", "native"], "baseline variant 'native' is not a variant of this run (variants: plain, ratelimited)"),
    (["--format", "md,pdf"], "unknown format(s) pdf"),
])
def test_bad_options_exit_2(run_dir, capsys, args, fragment):
    assert report_main([run_dir] + args) == 2
    assert fragment in capsys.readouterr().err


def test_missing_directory_exits_2(tmp_path, capsys):
    assert report_main([str(tmp_path / "nope")]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_wrapper_script(run_dir, tmp_path):
    wrapper = os.path.join(ROOT, "scripts", "testbed-report")
    assert os.access(wrapper, os.X_OK)
    res = subprocess.run([sys.executable, wrapper, run_dir, "--format", "md,csv"], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert "wrote %s" % os.path.join(run_dir, "report.md") in res.stdout
    res = subprocess.run([sys.executable, wrapper, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    assert "no point documents" in res.stderr
