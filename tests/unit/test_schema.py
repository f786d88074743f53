"""The JSON Schemas describe what the result store really writes, and reject what it must not."""

import copy
import glob
import json
import os
import subprocess
import sys

import jsonschema
import pytest
from ansible.module_utils.testbed_parse import unit_of
from ansible.module_utils.testbed_results import ResultError, open_run
from ansible.module_utils.testbed_results import store as testbed_results_store
from ansible.module_utils.testbed_results.store import store_point, validate_document
from ansible.module_utils.testbed_sampling import parse_proc_stat, summarize
from conftest import ROOT, read_fixture

SCHEMAS = os.path.join(ROOT, "schemas")


def validator(name):
    with open(os.path.join(SCHEMAS, name), encoding="utf-8") as handle:
        schema = json.load(handle)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


POINT = validator("result-point.schema.json")
RUN = validator("run.schema.json")

PLAN = [
    {"variant": "native", "parameters": {"bs": "4k", "iodepth": 32}, "repetition": 1},
    {"variant": "docker", "parameters": {"bs": "4k", "iodepth": 32}, "repetition": 1},
]
ENV = {
    "hosts": {
        "node1": {
            "hostname": "node1", "kernel": "6.1.0-26-amd64", "kernel_version": "#1 SMP PREEMPT_DYNAMIC Debian",
            "arch": "x86_64",
            "distro": {"id": "debian", "version_id": "12", "pretty_name": "Debian GNU/Linux 12 (bookworm)",
                       "version_codename": "bookworm"},
            "cpus": 2, "cpus_usable": 2, "cpu_model": "Intel(R) Xeon(R) Processor @ 2.50GHz", "memory_mb": 24105,
            "virtualization": "docker", "virtualization_type": "container", "python_version": "3.11.2",
            "tools": {"fio": "3.33", "ceph": None},
        }
    },
    "controller": {"ansible_core_version": "2.19.4", "python_version": "3.11.7", "hostname": "ctl"},
}


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    run = open_run(str(root), "fio_compare", PLAN, run_parameters={"size": "64M"},
                   report={"title": "fio", "baseline": "native"})
    cpu = summarize([parse_proc_stat(read_fixture("proc_stat", f"series_{i}.txt")) for i in range(4)], 1.0)
    doc = store_point(
        run["run_dir"], PLAN[0],
        {"read_iops": 2911.3, "read_lat_mean_us": 10.9, "cpu_busy_mean_pct": cpu["metrics"]["cpu_busy_mean_pct"],
         "engine": "libaio", "truncated": False, "write_iops": None, "errors": 0},
        True, [], ["fio: disk util not reported"], ENV, "2026-11-21T15:30:00Z", "2026-11-21T15:30:31.5Z",
        raw={"fio.json": "{}"}, sources={"cpu": cpu}, extra={"jobs": [{"name": "r", "bs": 4096}]})
    bad = store_point(run["run_dir"], PLAN[1], {"read_iops": None}, False, ["fio: error 5 (Input/output error)"],
                      [], ENV, 1795275000, 1795275001)
    # second plan version: extended run.json with history
    open_run(str(root), "fio_compare", PLAN + [{"variant": "lxc", "parameters": {"bs": "4k", "iodepth": 32}}],
             run_id=run["run_id"])
    with open(os.path.join(run["run_dir"], "run.json"), encoding="utf-8") as handle:
        run_doc = json.load(handle)
    with open(os.path.join(run["run_dir"], doc["point_id"] + ".json"), encoding="utf-8") as handle:
        on_disk = json.load(handle)
    return {"doc": doc, "bad": bad, "run": run_doc, "on_disk": on_disk}


def errors(v, document):
    return sorted(e.message for e in v.iter_errors(document))


def test_stored_documents_validate(stored):
    assert errors(POINT, stored["on_disk"]) == []
    assert errors(POINT, stored["doc"]) == []
    assert errors(POINT, stored["bad"]) == []
    assert set(stored["doc"]["units"]) == set(stored["doc"]["metrics"])
    metrics = stored["doc"]["metrics"]
    expected = {name: (None if isinstance(value, (str, bool)) else unit_of(name)) for name, value in metrics.items()}
    assert stored["doc"]["units"] == expected
    assert stored["doc"]["units"]["engine"] is None and stored["doc"]["units"]["truncated"] is None
    assert stored["doc"]["units"]["read_lat_mean_us"] == "us" and stored["doc"]["units"]["errors"] == "count"


def test_forced_run_file_validates(tmp_path):
    run = open_run(str(tmp_path), "fio_compare", PLAN, run_id="c1", run_parameters={"size": "64M"})
    open_run(str(tmp_path), "fio_compare", PLAN, run_id="c1", run_parameters={"size": "1G"}, force=True)
    with open(os.path.join(run["run_dir"], "run.json"), encoding="utf-8") as handle:
        run_doc = json.load(handle)
    assert [h["event"] for h in run_doc["plan_history"]] == ["created", "forced"]
    assert errors(RUN, run_doc) == []
    assert errors(RUN, broken(run_doc, ["plan_history", 1, "previous_plan_hash"], "abc")) != []


def test_run_file_validates(stored):
    assert errors(RUN, stored["run"]) == []
    assert [h["event"] for h in stored["run"]["plan_history"]] == ["created", "extended"]


def broken(document, path, value=None, delete=False):
    document = copy.deepcopy(document)
    target = document
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return document


@pytest.mark.parametrize("path,value,delete", [
    (["environment"], None, True),
    (["environment", "hosts"], None, True),
    (["environment", "hosts"], {}, False),
    (["metrics", "read_iops"], float("nan"), False),
    (["metrics", "read_iops"], float("inf"), False),
    (["metrics", "read_iops"], float("-inf"), False),
    (["metrics", "read_iops"], [1, 2], False),
    (["metrics", "read_iops"], {"mean": 1}, False),
    (["metrics", "bad name"], 1, False),
    (["repetition"], "1", False),
    (["repetition"], -1, False),
    (["valid"], "yes", False),
    (["started_at"], "2026-11-21T15:30:00", False),
    (["started_at"], 1795275000, False),
    (["duration_s"], -1.0, False),
    (["schema_version"], 2, False),
    (["point_id"], "../../etc/passwd", False),
    (["units", "read_iops"], 5, False),
    (["units", "read_iops"], "", False),
    (["raw_files"], ["/etc/passwd"], False),
    (["sources", "cpu", "raw"], "raw text must not be stored in sources", False),
    (["extra", "x"], float("nan"), False),
    (["environment", "hosts", "node1", "cpus"], "2", False),
    (["environment", "hosts", "node1", "tools", "fio"], 3.33, False),
    (["parameters", "bs"], float("nan"), False),
    (["surprise"], 1, False),
    (["reasons"], None, True),
])
def test_broken_documents_fail(stored, path, value, delete):
    document = broken(stored["doc"], path, value, delete)
    assert errors(POINT, document) != []
    # the store refuses the same document with the same schema, naming the field
    with pytest.raises(ResultError) as err:
        validate_document(document)
    assert "(point document checked against schemas/result-point.schema.json)" in str(err.value)
    named = path[-1] if path[-1] != "raw" and not delete else path[0]
    assert str(named) in str(err.value)


def test_the_store_validates_with_the_shipped_schema(stored):
    validator = testbed_results_store.schema_validator()
    assert validator.schema == POINT.schema
    assert validate_document(stored["doc"]) is stored["doc"]


def test_schema_invalid_point_is_not_stored(tmp_path):
    run = open_run(str(tmp_path), "fio_compare", PLAN)
    env = copy.deepcopy(ENV)
    env["hosts"]["node1"]["virtualization_type"] = "jail"
    env["hosts"]["node1"]["memory_mb"] = 0
    with pytest.raises(ResultError) as err:
        store_point(run["run_dir"], PLAN[0], {"read_iops": 1.0}, True, [], [], env,
                    "2026-11-21T15:30:00Z", "2026-11-21T15:30:01Z")
    assert str(err.value) == (
        "environment.hosts.node1.memory_mb: 0 is less than the minimum of 1; "
        "environment.hosts.node1.virtualization_type: 'jail' is not one of ['container', 'vm', 'none', None] "
        "(point document checked against schemas/result-point.schema.json)")
    assert sorted(os.listdir(run["run_dir"])) == [".lock", "index.json", "run.json"]


def test_missing_jsonschema_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(testbed_results_store, "_VALIDATORS", {})
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    with pytest.raises(ResultError, match="the Python package jsonschema is missing on the controller"):
        validate_document({})


def test_schema_travels_with_the_module_whatever_the_directory(tmp_path, monkeypatch):
    """A module runs from an AnsiballZ payload: no schemas/ beside it, any working directory, no ANSIBLE_CONFIG."""
    monkeypatch.setattr(testbed_results_store, "_VALIDATORS", {})
    monkeypatch.setattr(testbed_results_store, "__file__", str(tmp_path / "zip" / "module_utils" / "testbed_results" / "store.py"))
    monkeypatch.delenv("ANSIBLE_CONFIG", raising=False)
    monkeypatch.delenv("TESTBED_SCHEMA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert testbed_results_store.schema_validator().schema == POINT.schema
    assert testbed_results_store.schema_validator("run.schema.json").schema == RUN.schema


def test_schema_dir_from_the_environment_overrides_and_names_a_missing_file(tmp_path, monkeypatch):
    monkeypatch.setattr(testbed_results_store, "_VALIDATORS", {})
    schema = dict(POINT.schema, title="changed copy")
    (tmp_path / "result-point.schema.json").write_text(json.dumps(schema))
    monkeypatch.setenv("TESTBED_SCHEMA_DIR", str(tmp_path))
    assert testbed_results_store.schema_validator().schema["title"] == "changed copy"
    with pytest.raises(ResultError, match=r"cannot read the schema .*run.schema.json \(TESTBED_SCHEMA_DIR is set"):
        testbed_results_store.schema_validator("run.schema.json")


def test_the_carried_schemas_are_the_files_under_schemas():
    """module_utils/testbed_results/schemas.py is generated from schemas/: regenerate with scripts/sync-schemas.py."""
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "sync-schemas.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    from ansible.module_utils.testbed_results.schemas import SCHEMA_TEXT
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "schemas", "*.schema.json")))
    assert sorted(SCHEMA_TEXT) == names
    for name in names:
        with open(os.path.join(ROOT, "schemas", name), encoding="utf-8") as handle:
            assert SCHEMA_TEXT[name] == handle.read()



def test_invalid_point_needs_a_reason(stored):
    assert errors(POINT, broken(stored["bad"], ["reasons"], [])) != []
    assert errors(POINT, broken(stored["doc"], ["reasons"], [])) == []


@pytest.mark.parametrize("path,value,delete", [
    (["plan"], None, True),
    (["plan"], [], False),
    (["plan", 0, "repetition"], "1", False),
    (["plan", 0, "point_id"], "no-rep-suffix", False),
    (["plan_hash"], "abc", False),
    (["created"], "yesterday", False),
    (["plan_history", 0, "event"], "deleted", False),
    (["run_parameters"], [], False),
    (["experiment"], "a/b", False),
])
def test_broken_run_files_fail(stored, path, value, delete):
    assert errors(RUN, broken(stored["run"], path, value, delete)) != []
