"""schemas/run.schema.json describes the report spec that scripts/testbed_report.py accepts."""
import copy
import json
import os

import jsonschema
import pytest
from ansible.module_utils.testbed_reports.base import ReportError
from ansible.module_utils.testbed_reports.spec import check_spec
from conftest import ROOT
from test_report_declarative import NFV_RELATIVE, OVERALL, SECTIONS

with open(os.path.join(ROOT, "schemas", "run.schema.json"), encoding="utf-8") as _handle:
    _SCHEMA = json.load(_handle)
jsonschema.Draft202012Validator.check_schema(_SCHEMA)
REPORT = jsonschema.Draft202012Validator(dict(_SCHEMA["properties"]["report"], **{"$defs": _SCHEMA["$defs"]}))

SPEC = {"title": "t", "x": "rate", "metrics": ["iops"], "higher_is_better": {"lat_ms": False},
        "baseline_variant": "native", "notes": ["n"], "baseline": "free keys stay allowed",
        "tables": [{"title": "T", "header": ["a"], "rows": [["1"]], "notes": []}],
        "sections": SECTIONS, "relative": NFV_RELATIVE, "overall_index": OVERALL,
        "reference": {"label": "study", "values": {"native": {"iops": 1000}}}}


def test_full_spec_validates_and_is_accepted():
    REPORT.validate(SPEC)
    checked = check_spec(SPEC)
    assert [s["title"] for s in checked["sections"]] == ["IOzone", "STREAM", "sysbench CPU", "fio"]
    assert checked["overall_index"]["items"][3] == {"metric": "cpu_time_s", "label": "CPU", "where": {}}


@pytest.mark.parametrize("path, value", [
    (("relative", "metrics", "throughput_gbps"), "fall"),
    (("sections",), []),
    (("sections", 0, "title"), ""),
    (("overall_index", "metrics"), []),
    (("overall_index", "reference", "docker", "CPU"), 0),
    (("higher_is_better", "lat_ms"), "no"),
    (("reference", "values", "native", "iops"), "many"),
])
def test_broken_specs_fail_both(path, value):
    spec = copy.deepcopy(SPEC)
    target = spec
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert list(REPORT.iter_errors(spec))
    with pytest.raises(ReportError):
        check_spec(spec)
