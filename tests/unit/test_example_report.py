"""docs/example-report is a real run's report, rendered by scripts/testbed_report.py, and up to date.

The run documents (run.json, index.json, one JSON per point) are those of a default
LVS lab run (`ansible-playbook playbooks/lvs-compare.yml -i inventories/lab`, 30
points); `make example-report` renders them again. This test renders the Markdown
from the committed documents and compares it with the committed report.md (all
but the line with the render time), and checks that every chart it shows is there.
"""
import os
import re
import shutil
import subprocess
import sys

from conftest import ROOT
from playbook_run import run_files

EXAMPLE = os.path.join(ROOT, "docs", "example-report")


def _text(path):
    with open(path, encoding="utf-8") as handle:
        return [line for line in handle.read().splitlines() if not line.startswith("- generated ")]


def test_the_committed_report_is_what_the_renderer_makes_of_the_committed_run(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for path in run_files(EXAMPLE):
        shutil.copy(path, run)
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "testbed_report.py"), str(run), "--format", "md,png"],
                   check=True, capture_output=True, text=True, timeout=300)
    assert _text(run / "report.md") == _text(os.path.join(EXAMPLE, "report.md")), (
        "docs/example-report/report.md is out of date: run `make example-report` and commit the result")


def test_every_chart_the_report_shows_is_committed():
    charts = re.findall(r"!\[[^\]]*\]\((charts/[^)]+)\)", "\n".join(_text(os.path.join(EXAMPLE, "report.md"))))
    assert charts, "the example report shows no chart"
    missing = [chart for chart in charts if not os.path.isfile(os.path.join(EXAMPLE, chart))]
    assert not missing, "charts missing from docs/example-report: %s (run `make example-report`)" % missing
