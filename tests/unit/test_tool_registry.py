"""One tool registry: library/tool_parse.py's PARSERS.

A tool the testbed parses is registered there once; everything else that
names tools is checked against it, so a new tool missing from one place fails
here with the place named: its thin module, its section in docs/parsers.md,
and - for the tools roles/testbed_workload runs - the role's choices, its
entry point and its task file.
"""
import glob
import os
import re

import pytest
import tool_parse
import yaml
from conftest import ROOT

# A parser's own module, when it is not <tool>_parse.
MODULES = {"ceph": "ceph_status_parse", "zpool": "zpool_status_parse"}
# Parsed but never run by roles/testbed_workload (the experiments read them another way).
NOT_WORKLOADS = {"docker_stats", "ipvsadm"}
WORKLOAD = os.path.join(ROOT, "roles", "testbed_workload")


def workload_spec():
    with open(os.path.join(WORKLOAD, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)["argument_specs"]


@pytest.mark.parametrize("tool", sorted(tool_parse.PARSERS))
def test_every_registered_tool_has_its_module_and_its_docs(tool):
    module = MODULES.get(tool, f"{tool}_parse")
    assert os.path.isfile(os.path.join(ROOT, "library", module + ".py")), f"library/{module}.py is missing"
    with open(os.path.join(ROOT, "docs", "parsers.md"), encoding="utf-8") as handle:
        headings = [line for line in handle if line.startswith("## ")]
    assert any(f"`{module}`" in heading for heading in headings), f"docs/parsers.md has no section naming `{module}`"


def test_the_workload_role_runs_exactly_the_registered_tools():
    spec = workload_spec()
    tools = sorted(set(tool_parse.PARSERS) - NOT_WORKLOADS)
    assert sorted(spec["main"]["options"]["testbed_workload_tool"]["choices"]) == tools
    assert sorted(set(spec) - {"main", "wait", "load"}) == tools, "one entry point per tool in meta/argument_specs.yml"
    assert spec["load"]["options"]["testbed_workload_tool"]["choices"] == spec["main"]["options"]["testbed_workload_tool"]["choices"]
    files = {os.path.basename(p)[:-4] for p in glob.glob(os.path.join(WORKLOAD, "tasks", "*.yml"))}
    assert sorted(files - {"main", "parse", "run", "wait", "load"}) == tools, "one tasks/<tool>.yml per tool"
    for tool in tools:
        with open(os.path.join(WORKLOAD, "tasks", tool + ".yml"), encoding="utf-8") as handle:
            assert re.search(rf"__testbed_workload_tool: {tool}\b", handle.read()), f"tasks/{tool}.yml runs {tool}"


def test_every_tool_entry_point_takes_the_same_options_as_main():
    spec = workload_spec()
    common = {k: v for k, v in spec["main"]["options"].items() if k != "testbed_workload_tool"}
    for tool in set(spec) - {"main", "wait", "load"}:
        assert spec[tool]["options"] == common, tool
    # the one-call entry point takes them too, its CPU window and its command's own bound
    load = {k: v for k, v in spec["load"]["options"].items() if k not in ("testbed_workload_tool", "testbed_workload_cpu_window",
                                                                    "testbed_workload_client_grace_s")}
    assert load == common
