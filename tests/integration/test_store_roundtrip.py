"""Run tests/integration/store_roundtrip.yml for real and check what it wrote against the schemas.

The playbook runs tool_versions, result_run, cpu_sample (async) beside a 1 s
sysbench cpu load, result_store and result_run again (resume, then 0 pending),
all on localhost, under a temporary directory.
"""

import json
import os
import shutil
import sys

import jsonschema
import pytest
from playbook_run import assert_ok, only_run_dir, play, run_file

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)


def load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


@pytest.mark.skipif(shutil.which("sysbench") is None, reason="sysbench is not installed")
def test_store_roundtrip_playbook(tmp_path):
    proc = assert_ok(play("tests/integration/store_roundtrip.yml", "-e", f"store_roundtrip_dir={tmp_path}",
                          timeout=300))
    assert "failed=0" in proc.stdout

    run_dir = only_run_dir(tmp_path, "store_roundtrip")
    point_schema = jsonschema.Draft202012Validator(load(os.path.join(ROOT, "schemas", "result-point.schema.json")))
    run_schema = jsonschema.Draft202012Validator(load(os.path.join(ROOT, "schemas", "run.schema.json")))

    run = run_file(tmp_path, "store_roundtrip")
    assert list(run_schema.iter_errors(run)) == []
    assert run["report"]["title"] == "Store round trip"
    docs = [load(os.path.join(run_dir, p["point_id"] + ".json")) for p in run["plan"]]
    for doc in docs:
        assert list(point_schema.iter_errors(doc)) == [], doc["point_id"]
        assert doc["valid"] is True
        assert doc["metrics"]["events_per_s"] > 0
        assert doc["sources"]["cpu"]["details"]["stopped_by"] == "stop_file"
        with open(os.path.join(run_dir, doc["raw_files"][0]), encoding="utf-8") as handle:
            assert "events per second:" in handle.read()
    # the two threads point keeps both CPUs busier than the one thread point, on average
    # (loose: other jobs may share the machine)
    assert docs[1]["metrics"]["cpu_busy_mean_pct"] >= 30
    index = load(os.path.join(run_dir, "index.json"))
    assert (index["done"], index["valid"], index["pending"]) == (2, 2, 0)
    assert not os.path.exists(os.path.join(ROOT, "results", "store_roundtrip"))
