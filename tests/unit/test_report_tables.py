"""report.tables of scripts/testbed_report.py: tables an experiment derived itself.

Uses the real NFV chain points (tests/fixtures/nfv_chain) and the tables that
roles/nfv_measure/filter_plugins/nfv_measure.py derives from them.
"""
import io
import json
import os
import shutil

import nfv_chain as nfv_chain_filters
import nfv_measure as nfv_measure_filters
import pytest
from ansible.module_utils.testbed_reports.base import ReportError
from ansible.module_utils.testbed_reports.make import make_report
from ansible.module_utils.testbed_results.store import named_documents
from conftest import FIXTURES

STUDY = [{"name": "baseline", "hops": []},
         {"name": "1-vnf", "hops": ["firewall"]},
         {"name": "2-vnf", "hops": ["firewall", "loadbalancer"]}]


def _run_dir(tmp_path, spec):
    stored = named_documents(os.path.join(FIXTURES, "nfv_chain"))
    for name in stored:
        shutil.copy(os.path.join(FIXTURES, "nfv_chain", name + ".json"), tmp_path)
    docs = list(stored.values())
    run = {"experiment": "nfv_chain", "run_id": docs[0]["run_id"],
           "plan": [{"point_id": d["point_id"], "variant": d["variant"]} for d in docs], "report": spec}
    (tmp_path / "run.json").write_text(json.dumps(run))
    return docs


def test_tables_are_rendered_after_the_notes(tmp_path):
    docs = _run_dir(tmp_path, {})
    study = nfv_measure_filters.nfv_study_tables(docs, nfv_chain_filters.nfv_topology(STUDY)["scenarios"])
    spec = {"title": "NFV", "baseline_variant": "baseline", "metrics": ["throughput_gbps"],
            "notes": ["a note"], "tables": study["tables"]}
    run = json.loads((tmp_path / "run.json").read_text())
    run["report"] = spec
    (tmp_path / "run.json").write_text(json.dumps(run))
    make_report(str(tmp_path), formats=("md", "html"), out=io.StringIO())
    text = (tmp_path / "report.md").read_text()
    assert "## Throughput (iperf3, Gbit/s) and throughput drop D_th" in text
    assert "| 1-vnf | firewall | 20.7 \u00b1 6.3 (n=2) | 11.7 % |" in text
    assert "| 2-vnf | N/A (ICMP does not pass the L4 proxy) | N/A | 0.0769 \u00b1 0.085 (n=2) | +188.0 % |" in text
    assert "D_th = (T_base \u2212 T_vnf) / T_base \u00d7 100 of the means (pct_drop)." in text
    assert text.index("## Notes") < text.index("## Throughput (iperf3") < text.index("## Results")
    html = (tmp_path / "report.html").read_text()
    assert "<td>11.7 %</td>" in html


@pytest.mark.parametrize("tables, fragment", [
    ("x", "report.tables must be a list"),
    ([{"header": ["a"], "rows": []}], "report.tables[0] must be a mapping with a non-empty title"),
    ([{"title": "t", "header": [], "rows": []}], "report.tables[0].header must be a non-empty list"),
    ([{"title": "t", "header": ["a", "b"], "rows": [["1"]]}], "rows with 2 cells each"),
    ([{"title": "t", "header": ["a"], "rows": [["1"]], "notes": "n"}], "report.tables[0].notes must be a list"),
    ([{"title": "t", "header": ["a"], "rows": [], "chart": {"series": {}}}], "report.tables[0].chart must be"),
    ([{"title": "t", "header": ["a"], "rows": [], "chart": {"series": {"zfs": [[0, "x"]]}}}],
     "report.tables[0].chart.series['zfs'] must be a non-empty list of [x, y] numbers"),
])
def test_bad_tables_are_refused(tmp_path, tables, fragment):
    _run_dir(tmp_path, {"tables": tables})
    with pytest.raises(ReportError) as info:
        make_report(str(tmp_path), formats=("md",), out=io.StringIO())
    assert fragment in str(info.value)


def test_a_table_with_a_chart_gets_its_line_chart(tmp_path):
    chart = {"x_label": "t [s]", "y_label": "progress [%]",
             "series": {"zfs 128 MB": [[0.4, 0.0], [1.5, 40.0], [2.5, None], [3.1, 100.0]],
                        "ceph 128 MB": [[1.0, 10.0], [40.0, 100.0]]}}
    tables = [{"title": "Rebuild time per used size", "header": ["system", "rebuild s"],
               "rows": [["zfs", "3.1"], ["ceph", "40"]], "chart": chart, "notes": ["curves below"]}]
    _run_dir(tmp_path, {"title": "NFV", "baseline_variant": "baseline", "metrics": ["throughput_gbps"], "tables": tables})
    make_report(str(tmp_path), formats=("md", "png"), out=io.StringIO())
    png = tmp_path / "charts" / "table01_Rebuild_time_per_used_size.png"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (tmp_path / "report.md").read_text()
    assert "![Rebuild time per used size](charts/table01_Rebuild_time_per_used_size.png)" in text
    assert text.index("| ceph | 40 |") < text.index("charts/table01_") < text.index("curves below")
    # without png nothing is drawn and the table stays
    (tmp_path / "charts" / "table01_Rebuild_time_per_used_size.png").unlink()
    make_report(str(tmp_path), formats=("md",), out=io.StringIO())
    assert "charts/table01_" not in (tmp_path / "report.md").read_text()


def test_study_figures_beside_the_measured_means(tmp_path):
    """The NFV report carries the study's published figures: a column of the relative tables for
    throughput and ICMP RTT, and the VNF CPU beside the measured means (Tabels 3, 4, 5)."""
    _run_dir(tmp_path, {})
    scenarios = nfv_chain_filters.nfv_topology(STUDY)["scenarios"]
    reference = nfv_measure_filters.nfv_study_reference(scenarios)
    spec = {"title": "NFV", "baseline_variant": "baseline",
            "metrics": ["throughput_gbps", "icmp_rtt_avg_ms", "vnf1_firewall_cpu_pct", "vnf2_loadbalancer_cpu_pct"],
            "relative": {"baseline_variant": "baseline", "metrics": {"throughput_gbps": "drop", "icmp_rtt_avg_ms": "rise"}},
            "reference": reference}
    run = json.loads((tmp_path / "run.json").read_text())
    run["report"] = spec
    (tmp_path / "run.json").write_text(json.dumps(run))
    make_report(str(tmp_path), formats=("md",), out=io.StringIO())
    text = (tmp_path / "report.md").read_text()
    label = nfv_measure_filters.STUDY_LABEL
    throughput = text[text.index("### `throughput_gbps`"):text.index("### `icmp_rtt_avg_ms`")]
    assert f"| mean | {label} | drop vs `baseline` | drop, {label} | p |" in throughput
    assert "| 29.50 |" in throughput and "| 19.70 |" in throughput and "| 2.360 |" in throughput
    # the study's own D_th beside ours, as it printed them
    assert "| 33.2 % |" in throughput and "| 92.0 % |" in throughput
    latency = text[text.index("### `icmp_rtt_avg_ms`"):]
    assert f"| rise vs `baseline` | rise, {label} | p |" in latency and "| +98.8 % |" in latency
    assert "| 0.08900 |" in text and "| 0.1770 |" in text
    beside = text[text.index(f"## Measured means beside {label}"):]
    assert "| 2-vnf | `vnf2_loadbalancer_cpu_pct` (%) |" in beside and "| 118.4 | -17.6 % |" in beside
    assert "| 1-vnf | `vnf1_firewall_cpu_pct` (%) |" in beside


def test_study_reference_only_for_the_studys_chains():
    scenarios = nfv_chain_filters.nfv_topology(
        [{"name": "base", "hops": []}, {"name": "lb-only", "hops": ["loadbalancer"]}])["scenarios"]
    reference = nfv_measure_filters.nfv_study_reference(scenarios)
    assert reference["values"] == {"base": {"throughput_gbps": 29.5, "icmp_rtt_avg_ms": 0.089}}
    assert reference["relative"] == {}
    assert nfv_measure_filters.nfv_study_reference(scenarios[1:]) is None
    # the study's drops are against its baseline: none without the baseline chain in the run
    no_base = nfv_chain_filters.nfv_topology(
        [{"name": "fw", "hops": ["firewall"]}, {"name": "fw-lb", "hops": ["firewall", "loadbalancer"]}])["scenarios"]
    assert nfv_measure_filters.nfv_study_reference(no_base)["relative"] == {}
    full = nfv_measure_filters.nfv_study_reference(nfv_chain_filters.nfv_topology(STUDY)["scenarios"])
    assert full["relative"] == {"1-vnf": {"throughput_gbps": 33.2, "icmp_rtt_avg_ms": 98.8},
                                "2-vnf": {"throughput_gbps": 92.0}}
    with pytest.raises(Exception, match="nfv_study_reference"):
        nfv_measure_filters.nfv_study_reference([{"name": "x"}])
