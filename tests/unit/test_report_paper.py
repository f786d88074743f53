"""Results ready for a paper: the study's published figures on our charts, the tidy CSV, the LaTeX tables."""

import csv
import json
import os
import shutil

import pytest
from ansible.module_utils.testbed_reports.charts import published_marks
from ansible.module_utils.testbed_reports.format import axis_label, words
from ansible.module_utils.testbed_reports.tex import render_tex, tex
from conftest import FIXTURES
from testbed_report import main as report_main

SAMPLE_RUN = os.path.join(FIXTURES, "report", "sample_run")


@pytest.fixture
def run_dir(tmp_path):
    target = tmp_path / "run"
    shutil.copytree(SAMPLE_RUN, str(target))
    return str(target)


def _with_report(run_dir, **report):
    path = os.path.join(run_dir, "run.json")
    with open(path) as handle:
        run = json.load(handle)
    run["report"].update(report)
    with open(path, "w") as handle:
        json.dump(run, handle)


def _docs(run_dir):
    out = []
    for name in sorted(os.listdir(run_dir)):
        if "__rep" in name and name.endswith(".json"):
            with open(os.path.join(run_dir, name)) as handle:
                out.append(json.load(handle))
    return out


@pytest.mark.parametrize("name, unit, label", [
    ("response_time_ms", "ms", "Response time (ms)"),
    ("net_io_kb_s", "KB/s", "Net I/O (KB/s)"),
    ("throughput_gbps", "Gbit/s", "Throughput (Gbit/s)"),
    ("requests_per_s", "1/s", "Requests per second (1/s)"),
    ("connection_rate_per_s", "1/s", "Connection rate (1/s)"),
    ("client_cpu_total_pct", "%", "Client CPU total (%)"),
    ("errors_total", "count", "Errors total"),
    ("rate", None, "Rate"),
    ("num_conns", None, "Number of connections"),
])
def test_axis_labels_are_words_with_units(name, unit, label):
    assert axis_label(name, unit) == label


def test_a_unit_suffix_is_kept_when_no_unit_is_printed():
    assert words("latency_ms") == "Latency ms" and words("latency_ms", "ms") == "Latency"


def test_published_marks_from_a_study_shaped_pivot_and_from_the_reference():
    spec = {"pivots": [{"metric": "net_io_kb_s", "rows": "rate",
                        "reference": {"label": "Study 2003", "values": {"50": {"rr": 12.5, "wlc": 13}}}}],
            "reference": {"label": "published", "values": {"docker": {"throughput_gbps": 9.4}}, "where": {}}}
    assert published_marks(spec, "net_io_kb_s", "rate") == ({("50", "rr"): 12.5, ("50", "wlc"): 13.0}, "Study 2003")
    # a pivot whose rows are not the chart's x is not the chart's figure
    assert published_marks(spec, "net_io_kb_s", "num_conns") == ({}, None)
    assert published_marks(spec, "throughput_gbps", "size") == ({(None, "docker"): 9.4}, "published")
    assert published_marks(spec, "response_time_ms", "rate") == ({}, None)
    assert published_marks(None, "x", "y") == ({}, None)


def test_the_chart_marks_the_studys_figure_beside_ours(run_dir):
    _with_report(run_dir, pivots=[{"metric": "response_time_ms", "rows": "rate", "title": "shape",
                                   "reference": {"label": "Study 2003", "values": {"50": {"plain": 2.5}}}}])
    assert report_main([run_dir, "--format", "png"]) == 0
    with open(os.path.join(run_dir, "charts", "response_time_ms.svg"), encoding="utf-8") as handle:
        drawn = handle.read()
    assert "published: Study 2003" in drawn
    with open(os.path.join(run_dir, "charts", "net_io_kb_s.svg"), encoding="utf-8") as handle:
        assert "published:" not in handle.read()


def test_charts_are_the_same_files_for_the_same_documents(run_dir, tmp_path):
    again = str(tmp_path / "again")
    shutil.copytree(run_dir, again)
    assert report_main([run_dir, "--format", "png"]) == 0
    assert report_main([again, "--format", "png"]) == 0
    for name in sorted(os.listdir(os.path.join(run_dir, "charts"))):
        with open(os.path.join(run_dir, "charts", name), "rb") as a, open(os.path.join(again, "charts", name), "rb") as b:
            assert a.read() == b.read(), name


def test_tidy_csv_has_one_row_per_point_and_numeric_metric(run_dir):
    assert report_main([run_dir, "--format", "csv"]) == 0
    with open(os.path.join(run_dir, "results_tidy.csv"), encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    docs = _docs(run_dir)
    expected = sum(1 for d in docs for v in d["metrics"].values()
                   if isinstance(v, (int, float)) and not isinstance(v, bool))
    assert len(rows) == expected and expected > len(docs)
    assert list(rows[0])[:4] == ["experiment", "run_id", "point_id", "variant"]
    assert list(rows[0])[-6:] == ["repetition", "valid", "verdict", "metric", "value", "unit"]
    params = sorted({p for d in docs for p in d["parameters"]})
    assert set(params) <= set(rows[0])
    one = [r for r in rows if r["point_id"] == "plain__num_conns-300_rate-50__rep1" and r["metric"] == "response_time_ms"]
    doc = [d for d in docs if d["point_id"] == "plain__num_conns-300_rate-50__rep1"][0]
    assert len(one) == 1 and float(one[0]["value"]) == doc["metrics"]["response_time_ms"]
    assert one[0]["unit"] == "ms" and one[0]["rate"] == str(doc["parameters"]["rate"])
    assert {r["verdict"] for r in rows} <= {"valid", "invalid", "fault"} and {"invalid"} <= {r["verdict"] for r in rows}


def test_latex_escapes_the_reports_characters():
    assert tex("1.167 +2.023/\u22121.167\u2021 (3)") == r"1.167 +2.023/$-$1.167$\ddagger$ (3)"
    assert tex("65.50 \u00b1 0.00 (3)") == r"65.50 $\pm$ 0.00 (3)"
    assert tex("`net_io_kb_s` 50 % & #1") == r"\texttt{net\_io\_kb\_s} 50 \% \& \#1"
    assert tex("\u26a0 x_{y}") == r"(!) x\_\{y\}"


def test_latex_document_holds_every_table_under_its_heading(run_dir):
    assert report_main([run_dir, "--format", "md,tex"]) == 0
    with open(os.path.join(run_dir, "report-tables.tex"), encoding="utf-8") as handle:
        text = handle.read()
    with open(os.path.join(run_dir, "report.md"), encoding="utf-8") as handle:
        md = handle.read()
    tables_in_md = sum(1 for line in md.splitlines() if line.startswith("|---") or line.startswith("| --- "))
    assert text.count(r"\begin{tabular}") == tables_in_md > 3
    assert text.count(r"\begin{table}") == text.count(r"\end{table}") == tables_in_md
    assert r"\caption{\texttt{response\_time\_ms} (ms)}" in text
    assert r"plain & 1.167 +2.023/$-$1.167$\ddagger$ (3) & 0.9000 +1.2421/$-$0.9000$\ddagger$ (3) \\" in text
    labels = [line for line in text.splitlines() if line.startswith(r"\label{")]
    assert len(labels) == len(set(labels)) == tables_in_md
    assert text.index(r"\begin{document}") < text.index(r"\begin{table}") and text.rstrip().endswith(r"\end{document}")
    # nothing outside LaTeX's reach: every non-ASCII character of the report was mapped
    assert all(ord(ch) < 128 for ch in text.split(r"\begin{document}")[1]), [
        ch for ch in text if ord(ch) >= 128][:5]


def test_no_tables_no_latex_file():
    assert render_tex([("h", 1, "x"), ("p", "no table")], "t") is None


def test_the_specs_labels_name_the_axes(run_dir):
    _with_report(run_dir, labels={"rate": "Requested rate (connections/s)"})
    assert report_main([run_dir, "--format", "png"]) == 0
    with open(os.path.join(run_dir, "charts", "response_time_ms.svg"), encoding="utf-8") as handle:
        drawn = handle.read()
    assert "Requested rate (connections/s)" in drawn and "Response time (ms)" in drawn


def test_bad_labels_are_refused_naming_the_key(run_dir, capsys):
    _with_report(run_dir, labels={"rate": ""})
    assert report_main([run_dir]) == 2
    assert "report.labels must map a metric or parameter name" in capsys.readouterr().err


def test_text_columns_wrap_and_figures_align_right():
    from ansible.module_utils.testbed_reports.tex import column_spec
    assert column_spec(["rate", "rr", "wrr"], [["50", "16.40 (1)", "16.40 (1)"]]) == "lrr"
    spec = column_spec(["finding", "the study", "this run"],
                       [["runs not bound by the client (valid)", "0 of 30 (every run had fd-unavail errors)", "30"]])
    assert spec == r">{\raggedright\arraybackslash}p{11.0cm}>{\raggedright\arraybackslash}p{11.0cm}r"
