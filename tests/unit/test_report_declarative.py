"""Declarative report specs of scripts/testbed_report.py: relative, overall_index, reference, sections.

``relative`` must reproduce the NFV study tables that roles/nfv_measure/filter_plugins/nfv_measure.py
derives from the real NFV chain points (tests/fixtures/nfv_chain); ``overall_index``
the container study's Table 3.1 arithmetic from synthetic points whose means give
the study's ratios.
"""
import csv
import io
import json
import os
import shutil

import nfv_chain as nfv_chain_filters
import nfv_measure as nfv_measure_filters
import pytest
from ansible.module_utils.testbed_reports.derived import overall_rows, relative_rows
from ansible.module_utils.testbed_reports.load import load_run
from ansible.module_utils.testbed_reports.make import make_report
from ansible.module_utils.testbed_reports.spec import check_spec
from ansible.module_utils.testbed_results.store import named_documents
from ansible.module_utils.testbed_stats import core as stats
from conftest import FIXTURES
from testbed_report import main as report_main

STUDY = [{"name": "baseline", "hops": []},
         {"name": "1-vnf", "hops": ["firewall"]},
         {"name": "2-vnf", "hops": ["firewall", "loadbalancer"]}]
NFV_RELATIVE = {"baseline_variant": "baseline",
                "metrics": {"throughput_gbps": "drop", "icmp_rtt_avg_ms": "rise", "tcp_rtt_avg_ms": "rise"},
                "columns": {"chain": {"baseline": "none", "1-vnf": "firewall", "2-vnf": "firewall+loadbalancer"}},
                "notes": ["2-vnf: ICMP does not pass the L4 proxy; the TCP round trip is measured instead."]}


def _nfv_run(tmp_path, spec):
    stored = named_documents(os.path.join(FIXTURES, "nfv_chain"))
    for name in stored:
        shutil.copy(os.path.join(FIXTURES, "nfv_chain", name + ".json"), str(tmp_path))
    docs = list(stored.values())
    order = [s["name"] for s in STUDY]
    docs.sort(key=lambda d: (order.index(d["variant"]), d["repetition"]))
    run = {"experiment": "nfv_chain", "run_id": docs[0]["run_id"], "report": spec,
           "plan": [{"point_id": d["point_id"], "variant": d["variant"]} for d in docs]}
    (tmp_path / "run.json").write_text(json.dumps(run))
    return docs


def _md(run_dir, formats=("md", "html", "csv")):
    make_report(str(run_dir), formats=formats, out=io.StringIO())
    return (run_dir / "report.md").read_text()


def _section(md, heading):
    start = md.index(heading + "\n")
    rest = md[start + len(heading) + 1:]
    end = rest.find("\n## ")
    return rest if end < 0 else rest[:end]


# ---------------------------------------------------------------------------
# relative: the NFV study's D_th and K_lat
# ---------------------------------------------------------------------------

def test_relative_equals_nfv_study_tables(tmp_path):
    docs = _nfv_run(tmp_path, {"relative": NFV_RELATIVE})
    derived = nfv_measure_filters.nfv_study_tables(docs, nfv_chain_filters.nfv_topology(STUDY)["scenarios"])["derived"]
    run, loaded, _problems = load_run(str(tmp_path))
    rows = relative_rows(run, loaded, check_spec({"relative": NFV_RELATIVE})["relative"])
    assert rows["parameters"] == []  # duration_s, protocol and streams are the same everywhere
    by = {(r["metric"], r["variant"]): r for r in rows["rows"]}
    assert [r["variant"] for r in rows["rows"] if r["metric"] == "throughput_gbps"] == ["baseline", "1-vnf", "2-vnf"]
    names = {"throughput_gbps": "throughput_drop_pct", "icmp_rtt_avg_ms": "icmp_latency_rise_pct",
             "tcp_rtt_avg_ms": "tcp_latency_rise_pct"}
    for variant in ("baseline", "1-vnf", "2-vnf"):
        for metric, derived_pct in names.items():
            row = by[(metric, variant)]
            mean = row["summary"]["mean"] if row["summary"] else None
            assert mean == pytest.approx(derived[variant][metric]) if mean is not None \
                else derived[variant][metric] is None
            if derived[variant][derived_pct] is None:
                assert row["pct"] is None
            else:
                assert row["pct"] == pytest.approx(derived[variant][derived_pct], rel=1e-12)
    # the study's numbers: D_th 11.7 % and 69.2 %, K_lat ICMP +31.7 %, TCP +188.0 %
    assert by[("throughput_gbps", "1-vnf")]["pct"] == pytest.approx(11.697881698013356)
    assert by[("throughput_gbps", "2-vnf")]["pct"] == pytest.approx(69.2052945557801)
    assert by[("tcp_rtt_avg_ms", "2-vnf")]["pct"] == pytest.approx(187.97303623256246)
    # Welch p against the baseline's values, by the same filter
    base = [d["metrics"]["throughput_gbps"] for d in docs if d["variant"] == "baseline"]
    vnf1 = [d["metrics"]["throughput_gbps"] for d in docs if d["variant"] == "1-vnf"]
    assert by[("throughput_gbps", "1-vnf")]["p_value"] == pytest.approx(stats.welch_test(vnf1, base)["p_value"])
    assert by[("throughput_gbps", "baseline")]["p_value"] is None


def test_relative_tables_render_like_the_study(tmp_path):
    docs = _nfv_run(tmp_path, {"title": "NFV", "metrics": ["throughput_gbps"], "relative": NFV_RELATIVE})
    study = nfv_measure_filters.nfv_study_tables(docs, nfv_chain_filters.nfv_topology(STUDY)["scenarios"])["tables"]
    md = _md(tmp_path)
    section = _section(md, "## Relative to `baseline`")
    assert "| variant | chain | mean | drop vs `baseline` | p | significant |" in section
    assert "| baseline | none | 23.46 \u00b1 9.60 (2) | \u2014 | \u2014 | \u2014 |" in section
    assert "| 1-vnf | firewall | 20.72 \u00b1 6.32 (2) | 11.7 % | 0.1116 | no |" in section
    assert "| 2-vnf | firewall+loadbalancer | 7.226 \u00b1 5.862 (2) | 69.2 % | 0.0066 | \u2731 |" in section
    # the same drop cells as the NFV filter's table
    assert [r[3] for r in study[0]["rows"][1:]] == ["11.7 %", "69.2 %"]
    assert "| 1-vnf | firewall | 0.1060 \u00b1 0.0508 (2) | +31.7 % | 0.0739 | no |" in section
    assert "| 2-vnf | firewall+loadbalancer | no value | n/a | n/a | n/a |" in section
    # TCP RTT cannot be negative: the interval is clipped at 0 for display only
    assert "| 2-vnf | firewall+loadbalancer | 0.07690 +0.08499/\u22120.07690\u2021 (2) | +188.0 % | 0.0841 | no |" in section
    assert "shown clipped at 0" in section
    assert "2-vnf: ICMP does not pass the L4 proxy" in section
    assert md.index("## Notes") < md.index("## Relative to") < md.index("## Results")
    html = (tmp_path / "report.html").read_text()
    assert "<td>11.7 %</td>" in html
    summary = list(csv.DictReader(open(str(tmp_path / "summary.csv"))))
    assert "section" not in summary[0]


def test_old_tables_key_still_renders_beside_relative(tmp_path):
    docs = _nfv_run(tmp_path, {})
    tables = nfv_measure_filters.nfv_study_tables(docs, nfv_chain_filters.nfv_topology(STUDY)["scenarios"])["tables"]
    run = json.loads((tmp_path / "run.json").read_text())
    run["report"] = {"tables": tables, "relative": NFV_RELATIVE, "baseline_variant": "baseline"}
    (tmp_path / "run.json").write_text(json.dumps(run))
    md = _md(tmp_path, formats=("md",))
    assert "| 1-vnf | firewall | 20.7 \u00b1 6.3 (n=2) | 11.7 % |" in md
    assert md.index("## Throughput (iperf3") < md.index("## Relative to `baseline`") < md.index("## Results")


def test_reference_values_are_labelled(tmp_path):
    _nfv_run(tmp_path, {"relative": NFV_RELATIVE, "reference": {
        "label": "study (their hardware)",
        "values": {"baseline": {"throughput_gbps": 9.41, "host_busy_pct": 30.0}, "1-vnf": {"throughput_gbps": 8.9}}}})
    md = _md(tmp_path, formats=("md",))
    relative = _section(md, "## Relative to `baseline`")
    assert "| variant | chain | mean | study (their hardware) | drop vs `baseline` | p | significant |" in relative
    assert "| 1-vnf | firewall | 20.72 \u00b1 6.32 (2) | 8.900 | 11.7 % | 0.1116 | no |" in relative
    assert "| 2-vnf | firewall+loadbalancer | 7.226 \u00b1 5.862 (2) |  | 69.2 % |" in relative
    # a metric the relative tables do not show gets its own table, labelled as the study's
    beside = _section(md, "## Measured means beside study (their hardware)")
    assert "not measured here" in beside
    assert "| baseline | `host_busy_pct` (%) |" in beside and "| 30.00 |" in beside
    assert "throughput_gbps" not in beside


# ---------------------------------------------------------------------------
# overall index: the container study's Table 3.1
# ---------------------------------------------------------------------------

# ratio of each runtime's mean to native's (CPU: a run time, lower is better -> native / runtime)
TABLE_3_1 = {"docker": {"read": 0.74, "write": 0.82, "ram": 0.98, "cpu": 0.73},
             "lxc": {"read": 0.81, "write": 0.77, "ram": 0.97, "cpu": 0.91},
             "lxd": {"read": 0.85, "write": 0.83, "ram": 0.99, "cpu": 0.95}}
NATIVE = {"read": 1000.0, "write": 800.0, "ram": 12000.0, "cpu": 10.0}
WORKLOADS = {"read": ("iozone", "read_kb_s"), "write": ("iozone", "write_kb_s"),
             "ram": ("stream", "copy_mb_s"), "cpu": ("sysbench", "cpu_time_s")}
OVERALL = {"baseline_variant": "native",
           "metrics": [{"metric": "read_kb_s", "label": "IOzone read"}, {"metric": "write_kb_s", "label": "IOzone write"},
                       {"metric": "copy_mb_s", "label": "RAM"}, {"metric": "cpu_time_s", "label": "CPU"}],
           "higher_is_better": {"cpu_time_s": False},
           "reference": {"docker": {"IOzone read": 0.74, "IOzone write": 0.82, "RAM": 0.98, "CPU": 0.73}}}


def _container_run(tmp_path, spec, extra_docs=()):
    docs = []
    for variant in ("native", "docker", "lxc", "lxd"):
        for workload in ("iozone", "stream", "sysbench"):
            for rep, delta in ((1, -0.01), (2, 0.01)):
                metrics = {}
                for key, (wl, metric) in WORKLOADS.items():
                    if wl != workload:
                        continue
                    ratio = 1.0 if variant == "native" else TABLE_3_1[variant][key]
                    mean = NATIVE[key] / ratio if key == "cpu" else NATIVE[key] * ratio
                    metrics[metric] = mean * (1 + delta)
                pid = f"{variant}__workload-{workload}__rep{rep}"
                docs.append({"point_id": pid, "run_id": "r1", "experiment": "containers", "variant": variant,
                             "parameters": {"workload": workload}, "repetition": rep, "metrics": metrics,
                             "valid": True, "reasons": [], "warnings": []})
    docs.extend(extra_docs)
    for doc in docs:
        (tmp_path / (doc["point_id"] + ".json")).write_text(json.dumps(doc))
    (tmp_path / "run.json").write_text(json.dumps({
        "experiment": "containers", "run_id": "r1", "report": spec,
        "plan": [{"point_id": d["point_id"], "variant": d["variant"]} for d in docs]}))
    return docs


def test_overall_index_reproduces_table_3_1(tmp_path):
    _container_run(tmp_path, {"overall_index": OVERALL})
    run, docs, _problems = load_run(str(tmp_path))
    data = overall_rows(run, docs, check_spec({"overall_index": OVERALL})["overall_index"])
    assert list(data["variants"]) == ["docker", "lxc", "lxd"]
    for variant, sums, index in (("docker", 3.27, 81.75), ("lxc", 3.46, 86.5), ("lxd", 3.62, 90.5)):
        got = data["variants"][variant]
        expected = TABLE_3_1[variant]
        assert got["ratios"] == pytest.approx({"IOzone read": expected["read"], "IOzone write": expected["write"],
                                               "RAM": expected["ram"], "CPU": expected["cpu"]}, rel=1e-12)
        assert got["index"]["sum"] == pytest.approx(sums, rel=1e-12)
        assert got["index"]["index_pct"] == pytest.approx(index, rel=1e-12)
    md = _md(tmp_path, formats=("md",))
    table = _section(md, "## Overall index relative to `native`")
    assert "| metric | docker | lxc | lxd | docker (reference) |" in table
    assert "| IOzone read | 0.74 | 0.81 | 0.85 | 0.74 |" in table
    assert "| CPU (lower is better: baseline / variant) | 0.73 | 0.91 | 0.95 | 0.73 |" in table
    assert "| sum (of 4) | 3.27 | 3.46 | 3.62 | 3.27 |" in table
    # 3.27 / 4 = 81.75 %: one decimal gives 81.8 (the study prints 81.7)
    assert "| overall index | 81.8 % | 86.5 % | 90.5 % | 81.8 % |" in table


def test_overall_index_with_a_missing_metric(tmp_path):
    spec = dict(OVERALL, metrics=OVERALL["metrics"] + [{"metric": "iops", "label": "fio"}])
    spec.pop("reference")
    _container_run(tmp_path, {"overall_index": spec}, extra_docs=[{
        "point_id": "native__workload-fio__rep1", "run_id": "r1", "variant": "native",
        "parameters": {"workload": "fio"}, "repetition": 1, "metrics": {"iops": 5000.0}, "valid": True}])
    md = _md(tmp_path, formats=("md",))
    assert "| overall index | n/a (no value: fio) | n/a (no value: fio) | n/a (no value: fio) |" in md
    assert "| fio | n/a | n/a | n/a |" in md


# ---------------------------------------------------------------------------
# sections: one per workload
# ---------------------------------------------------------------------------

SECTIONS = [{"title": "IOzone", "where": {"workload": "iozone"}, "x": None, "metrics": ["read_kb_s", "write_kb_s"]},
            {"title": "STREAM", "where": {"workload": "stream"}, "metrics": ["copy_mb_s"]},
            {"title": "sysbench CPU", "where": {"workload": "sysbench", "variant": ["native", "lxd"]},
             "metrics": ["cpu_time_s"], "higher_is_better": {"cpu_time_s": False}},
            {"title": "fio", "where": {"workload": "fio"}}]


def test_sections_render_one_part_per_workload(tmp_path):
    _container_run(tmp_path, {"baseline_variant": "native", "sections": SECTIONS})
    md = _md(tmp_path, formats=("md", "csv", "png"))
    assert "- sections: IOzone, STREAM, sysbench CPU, fio" in md
    assert "## Results" not in md
    iozone = _section(md, "## IOzone")
    assert "- points: workload = iozone (8 points)" in iozone
    assert "### `read_kb_s`\n" in iozone and "### `write_kb_s`\n" in iozone
    assert "copy_mb_s" not in iozone and "cpu_time_s" not in iozone
    # read 1000 x 0.74 x (1 -+ 0.01): mean 740, s 10.4652 -> ± 94.03 (t 12.706, n 2)
    assert "| docker | 740.0 \u00b1 94.0 (2) |" in iozone
    assert "### Comparison with baseline `native`" in iozone
    assert "#### `read_kb_s`\n" in iozone
    assert "| docker |  | 1000 | 740.0 | -26.00 |" in iozone
    cpu = _section(md, "## sysbench CPU")
    assert "| lxd |" in cpu and "| docker |" not in cpu
    assert "verdict (lower is better)" in cpu
    assert "No point matches this section yet." in _section(md, "## fio")
    charts = sorted(os.listdir(str(tmp_path / "charts")))
    assert charts == [f"{base}.{fmt}" for base in ("01_IOzone__read_kb_s", "01_IOzone__write_kb_s",
                                                    "02_STREAM__copy_mb_s", "03_sysbench_CPU__cpu_time_s")
                      for fmt in ("pdf", "png", "svg")]
    assert "![read_kb_s](charts/01_IOzone__read_kb_s.png)" in iozone
    rows = list(csv.DictReader(open(str(tmp_path / "summary.csv"))))
    assert {r["section"] for r in rows} == {"IOzone", "STREAM", "sysbench CPU"}
    assert len([r for r in rows if r["section"] == "IOzone"]) == 8
    assert len(list(csv.DictReader(open(str(tmp_path / "results.csv"))))) == 24


def test_where_reads_extra_fields(tmp_path):
    docs = _container_run(tmp_path, {})
    for doc in docs:
        doc["extra"] = {"storage": "zfs" if doc["repetition"] == 1 else "ceph"}
        (tmp_path / (doc["point_id"] + ".json")).write_text(json.dumps(doc))
    run = json.loads((tmp_path / "run.json").read_text())
    run["report"] = {"sections": [{"title": "ZFS", "where": {"extra.storage": "zfs", "workload": "iozone"}},
                                  {"title": "Ceph", "where": {"storage": "ceph", "parameters.workload": "iozone"}}]}
    (tmp_path / "run.json").write_text(json.dumps(run))
    md = _md(tmp_path, formats=("md",))
    assert "- points: extra.storage = zfs, workload = iozone (4 points)" in md
    assert "| docker | 732.6 (1) |" in _section(md, "## ZFS")
    assert "| docker | 747.4 (1) |" in _section(md, "## Ceph")


@pytest.mark.parametrize("spec, fragment", [
    ({"sections": []}, "report.sections must be a non-empty list"),
    ({"sections": [{"where": {}}]}, "report.sections[0] must be a mapping with a non-empty title"),
    ({"sections": [{"title": "a"}, {"title": "a"}]}, "report.sections[1].title 'a' is used twice"),
    ({"sections": [{"title": "a", "where": "x"}]}, "report.sections[0].where must be a mapping"),
    ({"sections": [{"title": "a", "x": 3}]}, "report.sections[0].x must be a parameter name or null"),
    ({"relative": {"metrics": {"a": "drop"}}}, "report.relative must be {baseline_variant"),
    ({"relative": {"baseline_variant": "native", "metrics": {"iops": "fall"}}},
     "report.relative.metrics must map each metric to drop, rise or change"),
    ({"relative": {"baseline_variant": "bare", "metrics": {"iops": "change"}}},
     "report.relative.baseline_variant 'bare' is not a variant of this run"),
    ({"overall_index": {"baseline_variant": "native", "metrics": []}}, "report.overall_index.metrics must be"),
    ({"overall_index": {"baseline_variant": "native", "metrics": ["a", {"metric": "a"}]}}, "labels must be unique"),
    ({"overall_index": {"baseline_variant": "bare", "metrics": ["read_kb_s"]}},
     "report.overall_index.baseline_variant 'bare' has no value"),
    ({"reference": {"values": {"native": {"iops": "many"}}}}, "report.reference must be {label"),
    ({"reference": {"values": {"native": {"iops": 1}}, "relative": {"docker": {"iops": "half"}}}},
     "report.reference.relative must be {variant"),
    ({"higher_is_better": {"iops": "yes"}}, "report.higher_is_better must be an object metric -> true/false"),
])
def test_bad_specs_are_refused(tmp_path, capsys, spec, fragment):
    _container_run(tmp_path, spec)
    assert report_main([str(tmp_path), "--format", "md"]) == 2
    assert fragment in capsys.readouterr().err


def test_section_x_null_means_no_x_axis(tmp_path):
    target = tmp_path / "run"
    shutil.copytree(os.path.join(FIXTURES, "report", "sample_run"), str(target))
    run = json.loads((target / "run.json").read_text())
    run["report"]["sections"] = [
        {"title": "by rate", "where": {"variant": "plain"}, "x": "rate", "metrics": ["net_io_kb_s"]},
        {"title": "one column", "where": {"variant": "plain", "rate": 50}, "x": None, "metrics": ["net_io_kb_s"]},
        {"title": "two columns", "where": {"num_conns": [300, 900]}, "metrics": ["net_io_kb_s"]}]
    (target / "run.json").write_text(json.dumps(run))
    md = _md(target, formats=("md",))
    by_rate = _section(md, "## by rate")
    assert "| series \\ rate | 50 | 300 |" in by_rate
    assert "| plain | 65.50 \u00b1 0.00 (3) | 392.2 \u00b1 0.1 (3) |" in by_rate
    assert "### Highest valid `rate` per series" in by_rate
    one = _section(md, "## one column")
    assert "- x axis: none (one column per series)" in one and "| plain | 65.50 \u00b1 0.00 (3) |" in one
    # x absent: chosen as today - rate and num_conns vary together, so none is picked and the section says so
    two = _section(md, "## two columns")
    assert "no x axis: `num_conns`, `rate` vary together" in two
    assert "| ratelimited (num_conns=300, rate=50) | 65.90 \u00b1 0.00 (3) |" in two
    # the top-level baseline is compared inside each section that has it
    assert "### Comparison with baseline `plain`" in two and "### Comparison" not in by_rate
    assert "- points: num_conns = 300 or 900 (12 points)" in two


def test_relative_across_workloads(tmp_path):
    rel = {"baseline_variant": "native", "metrics": {"read_kb_s": "change", "cpu_time_s": "rise"}}
    _container_run(tmp_path, {"relative": rel})
    md = _md(tmp_path, formats=("md",))
    section = _section(md, "## Relative to `native`")
    read = section[section.index("### `read_kb_s`"):section.index("### `cpu_time_s`")]
    # only the iozone points have read_kb_s: no empty rows for the other workloads
    assert "| variant | workload | mean | change vs `native` | p | significant |" in read
    assert "| lxd | iozone | 850.0 \u00b1 108.0 (2) | -15.0 % |" in read
    assert "stream" not in read and "sysbench" not in read
    cpu = section[section.index("### `cpu_time_s`"):]
    # 10 s / 0.73 = 13.70 s: a rise of 37.0 %
    assert "| docker | sysbench | 13.70 \u00b1 1.74 (2) | +37.0 % |" in cpu


def test_overall_index_where_leaves_a_variant_out_without_a_column(tmp_path):
    # container_compare leaves an emulated variant out of the index with where: {variant: [...]}
    spec = dict(OVERALL, where={"variant": ["native", "docker", "lxd"]})
    _container_run(tmp_path, {"overall_index": spec})
    run, docs, _problems = load_run(str(tmp_path))
    data = overall_rows(run, docs, check_spec({"overall_index": spec})["overall_index"])
    assert list(data["variants"]) == ["docker", "lxd"]
    table = _section(_md(tmp_path, formats=("md",)), "## Overall index relative to `native`")
    assert "| metric | docker | lxd | docker (reference) |" in table
