"""The collection build (scripts/build-collection.py, docs/collection.md) without ansible-galaxy.

The repository's roles reach nothing outside their folder that the build cannot
ship (scripts/ensure-dockerd.sh and the role's copy are one file); the built tree
has every module, filter, lookup and role, its Python imports the collection's
module_utils, its roles call the project's modules, roles, filters and lookups by
FQCN, and every role declares the roles it includes.
"""
import glob
import importlib.util
import os
import re

import pytest
import yaml
from conftest import ROOT

FQ = "testbed.infra."


def _load_build():
    spec = importlib.util.spec_from_file_location("build_collection", os.path.join(ROOT, "scripts",
                                                                                   "build-collection.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    build = _load_build()
    coll = build.build(str(tmp_path_factory.mktemp("collection")), tarball=False)
    return build, build.Inventory(), coll


def test_scripts_keep_working_through_links_to_the_roles_files():
    link = os.path.join(ROOT, "scripts", "ensure-dockerd.sh")
    assert os.path.islink(link) and os.access(link, os.X_OK)
    assert os.path.realpath(link) == os.path.join(ROOT, "roles", "runtime_docker", "files", "ensure-dockerd.sh")
    report = os.path.join(ROOT, "roles", "testbed_sweep", "files", "testbed_report.py")
    assert os.path.realpath(report) == os.path.join(ROOT, "scripts", "testbed_report.py")


def test_repository_roles_do_not_climb_out_of_their_folder():
    build = _load_build()
    allowed = {path for path in build.SPECIFIC_REWRITES}
    for path in glob.glob(os.path.join(ROOT, "roles", "*", "**", "*.yml"), recursive=True):
        text = open(path, encoding="utf-8").read()
        rel = os.path.relpath(path, ROOT)
        assert not re.search(r"role_path\s*}}/\.\.", text), rel
        if re.search(r"role_path\s*\|\s*dirname\s*\|\s*dirname", text):
            assert rel in allowed, f"{rel} reads outside its role; the collection build must ship and point it"


def test_built_tree_has_every_plugin_and_role(built):
    _, inv, coll = built
    for kind, names in (("modules", inv.modules), ("module_utils", inv.module_utils), ("filter", inv.filter_files),
                        ("lookup", inv.lookups), ("action", inv.actions), ("callback", inv.callbacks),
                        ("doc_fragments", inv.doc_fragments)):
        for name in names:
            assert os.path.isfile(os.path.join(coll, "plugins", kind, name + ".py")), (kind, name)
    assert set(inv.module_util_packages) == {"testbed_reports", "testbed_results", "testbed_stats"}
    for package, paths in inv.module_util_packages.items():
        assert paths and any(p.endswith("__init__.py") for p in paths), package
        for path in paths:
            assert os.path.isfile(os.path.join(coll, "plugins", "module_utils", package, os.path.basename(path))), path
    for name in inv.filters:
        doc = yaml.safe_load(open(os.path.join(coll, "plugins", "filter", name + ".yml"), encoding="utf-8"))
        assert doc["DOCUMENTATION"]["name"] == name and doc["DOCUMENTATION"]["short_description"]
        assert "_input" in doc["DOCUMENTATION"]["options"]
    assert sorted(os.listdir(os.path.join(coll, "roles"))) == inv.roles
    for role in inv.roles:
        for moved in ("library", "module_utils", "filter_plugins", "lookup_plugins"):
            assert not os.path.exists(os.path.join(coll, "roles", role, moved)), (role, moved)
    galaxy = yaml.safe_load(open(os.path.join(coll, "galaxy.yml"), encoding="utf-8"))
    assert (galaxy["namespace"], galaxy["name"]) == ("testbed", "infra")
    assert {"community.docker", "community.general", "ansible.posix"} <= set(galaxy["dependencies"])
    # each range is the installed (pinned) major release, closed above
    for name, spec in galaxy["dependencies"].items():
        low, high = re.fullmatch(r">=(\d+)\.0\.0,<(\d+)\.0\.0", spec).groups()
        assert int(high) == int(low) + 1, (name, spec)
    runtime = yaml.safe_load(open(os.path.join(coll, "meta", "runtime.yml"), encoding="utf-8"))
    assert runtime["requires_ansible"].startswith(">=2.19")
    assert os.path.isfile(os.path.join(coll, "roles", "testbed_validate", "files", "shared_defaults", "testbed.yml"))


def test_built_python_imports_the_collections_module_utils(built):
    _, inv, coll = built
    for path in glob.glob(os.path.join(coll, "plugins", "*", "*.py")):
        text = open(path, encoding="utf-8").read()
        assert "ansible.module_utils.__path__" not in text and "sys.path" not in text, path
        for name in inv.module_utils:
            assert not re.search(rf"\bansible\.module_utils(\.| import ){name}\b", text), (path, name)
    fio = open(os.path.join(coll, "plugins", "modules", "fio_parse.py"), encoding="utf-8").read()
    assert "from ansible_collections.testbed.infra.plugins.module_utils.testbed_parse_fio import" in fio
    assert "  - testbed.infra.testbed_parse\n" in fio and "  testbed.infra.fio_parse:\n" in fio


def _task_keys(node, found):
    if isinstance(node, list):
        for item in node:
            if isinstance(item, dict):
                found.update(item)
                for key in ("block", "rescue", "always"):
                    _task_keys(item.get(key), found)


def test_built_roles_call_the_project_by_fqcn_and_declare_their_includes(built):
    _, inv, coll = built
    bare_filters = re.compile(r"\|\s*(" + "|".join(inv.filters) + r")\b")
    for role in inv.roles:
        includes = set()
        for path in glob.glob(os.path.join(coll, "roles", role, "**", "*.yml"), recursive=True):
            text = open(path, encoding="utf-8").read()
            assert not bare_filters.search(text), path
            assert "lookup('testbed_provenance')" not in text, path
            if os.sep + "tasks" + os.sep in path or os.sep + "handlers" + os.sep in path:
                keys = set()
                _task_keys(yaml.safe_load(text), keys)
                assert not keys & inv.task_names, (path, keys & inv.task_names)
                includes.update(re.findall(r"name: testbed\.infra\.([a-z_0-9]+)", text))
        meta = yaml.safe_load(open(os.path.join(coll, "roles", role, "meta", "main.yml"), encoding="utf-8"))
        assert meta["collections"] == ["testbed.infra"]
        assert meta["dependencies"] == []
        declared = {name[len(FQ):] for name in meta["galaxy_info"]["testbed_includes_roles"]}
        assert declared == includes - {role}, role
    assert "testbed.infra.testbed_packages" in yaml.safe_load(open(os.path.join(
        coll, "roles", "runtime_docker", "meta", "main.yml"), encoding="utf-8"))["galaxy_info"]["testbed_includes_roles"]


def test_a_dependency_whose_version_cannot_be_read_stops_the_build(tmp_path, monkeypatch):
    build = _load_build()
    tasks = tmp_path / "roles" / "r" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "main.yml").write_text("- name: A task\n  community.general.lxd_container: {name: x}\n")
    assert build.used_dependencies(str(tmp_path))["community.general"].startswith(">=")
    monkeypatch.setattr(build.sys, "path", [str(tmp_path / "nowhere")])
    with pytest.raises(SystemExit, match="cannot read the version of community.general, which roles/r/tasks/main.yml uses"):
        build.used_dependencies(str(tmp_path))


def test_the_built_galaxy_yml_is_the_committed_one_with_the_built_version(built):
    _, _, coll = built
    committed = yaml.safe_load(open(os.path.join(ROOT, "collection", "galaxy.yml"), encoding="utf-8"))
    galaxy = yaml.safe_load(open(os.path.join(coll, "galaxy.yml"), encoding="utf-8"))
    assert galaxy["version"].split("+")[0] == committed["version"]
    assert {k: v for k, v in galaxy.items() if k != "version"} == {k: v for k, v in committed.items() if k != "version"}


def test_committed_dependencies_that_are_not_the_installed_ones_stop_the_build(tmp_path, monkeypatch):
    build = _load_build()
    galaxy = yaml.safe_load(open(build.GALAXY, encoding="utf-8"))
    galaxy["dependencies"]["community.general"] = ">=1.0.0"
    path = tmp_path / "galaxy.yml"
    path.write_text(yaml.safe_dump(galaxy))
    monkeypatch.setattr(build, "GALAXY", str(path))
    with pytest.raises(SystemExit, match=r"declares the dependencies .*community.general.*: write those into galaxy.yml"):
        build.build(str(tmp_path / "out"), tarball=False)


@pytest.mark.parametrize("change, message", [
    ({"version": "1.0"}, "version '1.0' is not MAJOR.MINOR.PATCH"),
    ({"version": None}, "lacks version"),
    ({"dependencies": {}}, "lacks dependencies"),
    ({"name": "other"}, "names testbed.other, not testbed.infra"),
])
def test_a_bad_galaxy_yml_stops_the_build_naming_what_is_wrong(tmp_path, monkeypatch, change, message):
    build = _load_build()
    galaxy = yaml.safe_load(open(build.GALAXY, encoding="utf-8"))
    galaxy.update(change)
    path = tmp_path / "galaxy.yml"
    path.write_text(yaml.safe_dump(galaxy))
    monkeypatch.setattr(build, "GALAXY", str(path))
    with pytest.raises(SystemExit, match=re.escape(message)):
        build.read_galaxy()


def test_the_version_comes_from_galaxy_yml_and_the_tags(monkeypatch):
    build = _load_build()
    answers = {("tag", "--list", "v[0-9]*"): "v0.8.0\nv0.9.0", ("rev-parse", "--short=12", "HEAD"): "abcdef123456",
               ("status", "--porcelain", "--untracked-files=no"): "", ("tag", "--points-at", "HEAD"): "v0.9.0"}
    monkeypatch.setattr(build, "git", lambda *args: answers.get(args))
    assert build.version("0.9.0") == "0.9.0"                     # HEAD is the release's tag
    answers[("tag", "--points-at", "HEAD")] = ""
    assert build.version("0.9.0") == "0.9.0+gabcdef123456"       # a commit after it
    answers[("status", "--porcelain", "--untracked-files=no")] = " M x"
    assert build.version("0.10.0") == "0.10.0+gabcdef123456.dirty"
    answers[("tag", "--list", "v[0-9]*")] = "v1.0.0"
    with pytest.raises(SystemExit, match="the tag v1.0.0 is newer than collection/galaxy.yml's version 0.9.0"):
        build.version("0.9.0")


def test_playbooks_are_shipped_with_their_imports_renamed(built):
    _, _, coll = built
    shipped = sorted(os.listdir(os.path.join(coll, "playbooks")))
    assert {"cpu_scaling.yml", "lvs_compare.yml", "storage_compare.yml", "nfv_chain.yml", "container_compare.yml",
            "experiment_prologue.yml", "experiment_sweep.yml", "lvs_lab_up.yml"} <= set(shipped)
    assert "lab_nic_stress.yml" not in shipped and all("-" not in name for name in shipped)
    for name in shipped:
        text = open(os.path.join(coll, "playbooks", name), encoding="utf-8").read()
        for imported in re.findall(r"import_playbook:\s*(\S+)", text):
            assert imported in shipped, (name, imported)
        assert not re.search(r"^\s+(- )?(role|name): (testbed_sweep|testbed_validate)\s*$", text, re.M), name
