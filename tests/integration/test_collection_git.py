"""The collection installed from git, and an experiment run as a collection playbook from an empty directory.

``scripts/build-collection.py --git-ref`` commits the built tree as a ref of a bare repository (a
stand-in for the project's published one); ``ansible-galaxy collection install git+file://<repo>,<ref>``
installs it into an empty project directory outside the repository; there, in a clean environment
(no ANSIBLE_CONFIG, no repository path but the lab inventory's), ``ansible-playbook
testbed.infra.cpu_scaling -i <the lab inventory>`` plans, measures and stores every point and renders
the report. docs/collection.md.
"""
import json
import os
import subprocess
import sys

import pytest
from ansible.module_utils.testbed_results.store import run_documents
from playbook_run import BIN, ROOT, checked, project_env


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """(an empty project directory with the collection installed from git, its clean environment, the ref's commit)."""
    base = tmp_path_factory.mktemp("git-collection")
    repo = base / "published.git"
    checked(["git", "init", "-q", "--bare", str(repo)], dict(os.environ), str(base))
    built = checked([sys.executable, os.path.join(ROOT, "scripts", "build-collection.py"), "--out", str(base / "build"),
                  "--no-tarball", "--git-ref", "collection-main", "--git-repo", str(repo)], dict(os.environ), ROOT)
    assert "committed as collection-main" in built.stdout
    work = base / "project"
    work.mkdir()
    env = project_env(work)
    assert "ANSIBLE_CONFIG" not in env
    checked([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "-p", str(work / "collections"),
          f"git+file://{repo},collection-main"], env, str(work))
    commit = subprocess.run(["git", "--git-dir", str(repo), "rev-parse", "collection-main"], capture_output=True,
                            text=True, check=True).stdout.strip()
    return work, env, commit


def manifest_version(work):
    root = work / "collections" / "ansible_collections" / "testbed" / "infra"
    return json.loads((root / "MANIFEST.json").read_text())["collection_info"]["version"]


def test_the_git_ref_is_the_built_collection(project):
    work, _, commit = project
    root = work / "collections" / "ansible_collections" / "testbed" / "infra"
    manifest = json.loads((root / "MANIFEST.json").read_text())["collection_info"]
    galaxy = (open(os.path.join(ROOT, "collection", "galaxy.yml")).read())
    assert (manifest["namespace"], manifest["name"]) == ("testbed", "infra")
    assert manifest["version"].split("+")[0] in galaxy
    # the dependency ranges are the committed ones, not what a build machine happened to have
    for name, spec in manifest["dependencies"].items():
        assert f'{name}: "{spec}"' in galaxy
    for path in ("playbooks/cpu_scaling.yml", "playbooks/lvs_compare.yml", "playbooks/storage_compare.yml",
                 "playbooks/nfv_chain.yml", "playbooks/container_compare.yml", "playbooks/experiment_prologue.yml",
                 "CHANGELOG.md", "LICENSE", "roles/cpu_scaling/meta/testbed_experiment.yml"):
        assert (root / path).is_file(), path
    assert "import_playbook: experiment_prologue.yml" in (root / "playbooks" / "cpu_scaling.yml").read_text()
    assert len(commit) == 40


def test_an_experiment_runs_as_a_collection_playbook_from_an_empty_directory(project, tmp_path):
    work, env, _ = project
    results = tmp_path / "results"
    proc = subprocess.run(
        [os.path.join(BIN, "ansible-playbook"), "testbed.infra.cpu_scaling", "-i", os.path.join(ROOT, "inventories", "lab"),
         "-e", f"testbed_results_dir={results}", "-e", '{"cpu_scaling_threads": [1, 2]}',
         "-e", "cpu_scaling_duration_s=1", "-e", "testbed_repetitions=1"],
        cwd=str(work), env=env, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    # the collection's roles ran, not the repository's
    assert "TASK [testbed.infra.testbed_sweep : " in proc.stdout
    runs = sorted((results / "cpu_scaling").iterdir())
    assert len(runs) == 1
    docs = run_documents(str(runs[0]))
    assert sorted(d["parameters"]["threads"] for d in docs) == [1, 2]
    assert all(d["valid"] and d["metrics"]["events_per_s"] > 0 for d in docs)
    testbed = json.loads((runs[0] / "run.json").read_text())["invocations"][-1]["testbed"]
    assert testbed["source"] == "installed" and testbed["version"] == manifest_version(work)
    for name in ("report.md", "report.html", "report-tables.tex", "results_tidy.csv"):
        assert (runs[0] / name).is_file(), name
