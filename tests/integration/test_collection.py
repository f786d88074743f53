"""The collection testbed.infra, built from the repository, installed and used from outside it.

``scripts/build-collection.py`` builds the tarball (into a temporary directory,
not build/); ``ansible-galaxy collection install -p <tmp>/collections`` installs
it into an empty directory outside the repository; a playbook that names
everything by FQCN then runs there in a clean environment (no ANSIBLE_CONFIG,
no repository path; ANSIBLE_COLLECTIONS_PATH is the install directory and the
venv's site-packages, where the dependency collections of the ``ansible``
package are): a parser module on a fixture, a statistics filter, the workload
role (a 1 s sysbench run on localhost), result_run and result_store (the point
document is validated against the schema the module carries), and the
provenance lookup. ansible-doc renders a module, every filter and every role
of the installed collection. docs/collection.md.
"""
import json
import os
import shutil
import subprocess
import sys
import tarfile

import pytest
from playbook_run import BIN, ROOT, assert_ok, checked, play, project_env, run_file, stored_documents

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "fio", "randread_4k_qd32_libaio.json")

PLAYBOOK = """\
---
- name: Use testbed.infra by FQCN only
  hosts: localhost
  connection: local
  gather_facts: false
  vars: {ansible_python_interpreter: "{{ ansible_playbook_python }}"}
  tasks:
    - name: Parse a fio result
      testbed.infra.fio_parse: {src: "{{ fixture }}", keep_raw: false}
      register: fio
    - name: Run sysbench through the workload role
      ansible.builtin.include_role: {name: testbed.infra.testbed_workload, tasks_from: sysbench}
      vars: {testbed_workload_args: [cpu, --threads=1, --time=1, run]}
    - name: Run it again in one call (the collection's action plugin and module testbed_load; its result is stored)
      ansible.builtin.include_role: {name: testbed.infra.testbed_workload, tasks_from: load}
      vars: {testbed_workload_tool: sysbench, testbed_workload_args: [cpu, --threads=1, --time=1, run]}
    - name: Open a run
      testbed.infra.result_run:
        results_dir: "{{ results }}"
        experiment: collection_check
        plan: [{variant: native, parameters: {threads: 1}, repetition: 1}]
        provenance: "{{ lookup('testbed.infra.testbed_provenance') }}"
      register: run
    - name: Store the point
      testbed.infra.result_store:
        run_dir: "{{ run.run_dir }}"
        point: "{{ run.pending[0] }}"
        metrics:
          read_iops: "{{ fio.metrics.read_iops }}"
          events_per_s: "{{ testbed_workload_result.parsed.metrics.events_per_s }}"
          iops_mean: "{{ (([fio.metrics.read_iops] * 3) | testbed.infra.summary).mean }}"
        sources: {fio: "{{ fio }}", sysbench: "{{ testbed_workload_result.parsed }}"}
        environment: {hosts: {localhost: {}}}
        started_at: "{{ testbed_workload_result.started_at }}"
        finished_at: "{{ testbed_workload_result.finished_at }}"
      register: stored
    - name: Show the document
      ansible.builtin.debug: {var: stored.document}
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(work directory outside the repository, its clean environment, the collection's root)."""
    base = tmp_path_factory.mktemp("collection")
    build = base / "build"
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "build-collection.py"), "--out", str(build)],
                   check=True, capture_output=True, text=True, timeout=120)
    tarballs = sorted(build.glob("testbed-infra-*.tar.gz"))
    assert len(tarballs) == 1, tarballs
    work = base / "elsewhere"
    work.mkdir()
    env = project_env(work)
    checked([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "-p", str(work / "collections"),
          str(tarballs[0])], env, work)
    root = work / "collections" / "ansible_collections" / "testbed" / "infra"
    assert (root / "MANIFEST.json").is_file()
    with tarfile.open(tarballs[0]) as tar:
        names = tar.getnames()
    return work, env, root, names


def test_the_tarball_is_a_collection(installed):
    _, _, root, names = installed
    manifest = json.loads((root / "MANIFEST.json").read_text())["collection_info"]
    assert (manifest["namespace"], manifest["name"]) == ("testbed", "infra")
    assert set(manifest["dependencies"]) <= {"ansible.posix", "community.crypto", "community.docker",
                                             "community.general", "containers.podman"}
    assert "GNU GENERAL PUBLIC LICENSE" in (root / "LICENSE").read_text().splitlines()[0]
    for path in ("LICENSE", "meta/runtime.yml", "plugins/modules/fio_parse.py", "plugins/module_utils/testbed_results/schemas.py",
                 "plugins/filter/testbed_stats.py", "plugins/filter/summary.yml", "plugins/lookup/testbed_provenance.py",
                 "plugins/action/clock_offset.py", "plugins/callback/testbed_exit.py", "plugins/connection/testbed_guest.py",
                 "plugins/doc_fragments/testbed_parse.py", "roles/runtime_docker/files/ensure-dockerd.sh",
                 "roles/testbed_sweep/files/testbed_report.py"):
        assert path in names, path
    # No schemas/ folder: result_store carries its schema in module_utils.
    assert not any(n.startswith("schemas/") for n in names)
    for dirpath, _, files in os.walk(root / "plugins"):
        for name in files:
            if name.endswith(".py"):
                text = open(os.path.join(dirpath, name), encoding="utf-8").read()
                assert "ansible.module_utils.__path__" not in text and "ansible.module_utils.testbed_" not in text, name


def test_a_playbook_by_fqcn_runs_outside_the_repository(installed):
    work, env, root, _ = installed
    (work / "use.yml").write_text(PLAYBOOK)
    results = work / "results"
    proc = play("use.yml", "-e", f"fixture={FIXTURE}", "-e", f"results={results}", inventory="localhost,",
                cwd=str(work), as_user=True, env=env, timeout=180)
    assert_ok(proc)
    # no path into the repository's sources: only the install directory and the venv's site-packages
    # (the venv may live inside the clone, as ./scripts/setup.sh makes it)
    venv = os.path.realpath(sys.prefix)
    repo_paths = [path for path in env["ANSIBLE_COLLECTIONS_PATH"].split(":")
                  if os.path.realpath(path).startswith(ROOT + os.sep) and not os.path.realpath(path).startswith(venv)]
    assert "ANSIBLE_CONFIG" not in env and not repo_paths, repo_paths
    [document] = stored_documents(results, "collection_check").values()
    assert document["metrics"]["read_iops"] > 0 and document["metrics"]["events_per_s"] > 0
    assert document["metrics"]["iops_mean"] == pytest.approx(document["metrics"]["read_iops"])
    run = run_file(results, "collection_check")
    [invocation] = run["invocations"]
    assert invocation["testbed"]["source"] == "installed"
    assert invocation["testbed"]["version"] == json.loads(
        (root / "MANIFEST.json").read_text())["collection_info"]["version"]


def test_ansible_doc_renders_modules_filters_and_roles(installed):
    work, env, root, _ = installed
    doc = os.path.join(BIN, "ansible-doc")
    out = checked([doc, "-t", "module", "testbed.infra.fio_parse"], env, work).stdout
    assert "testbed.infra.fio_parse" in out and "src" in out and "keep_raw" in out  # with the doc fragment
    filters = sorted(p.name[:-4] for p in (root / "plugins" / "filter").glob("*.yml"))
    listed = json.loads(checked([doc, "-t", "filter", "--list", "--json", "testbed.infra"], env, work).stdout)
    assert sorted(n.split(".", 2)[2] for n in listed) == filters
    rendered = json.loads(checked([doc, "-t", "filter", "--json", *[f"testbed.infra.{f}" for f in filters]],
                               env, work).stdout)
    assert sorted(rendered) == [f"testbed.infra.{f}" for f in filters]
    for name, body in rendered.items():
        assert body["doc"]["short_description"] and body["doc"]["description"], name
    roles = sorted(p.name for p in (root / "roles").iterdir())
    shown = json.loads(checked([doc, "-t", "role", "--json", *[f"testbed.infra.{r}" for r in roles]], env, work).stdout)
    assert sorted(shown) == [f"testbed.infra.{r}" for r in roles]
    assert shutil.which("ansible-doc", path=env["PATH"])


def test_the_roles_report_script_runs_from_the_installed_collection(installed, tmp_path):
    work, env, root, _ = installed
    run = tmp_path / "run"
    shutil.copytree(os.path.join(ROOT, "tests", "fixtures", "report", "sample_run"), run)
    script = root / "roles" / "testbed_sweep" / "files" / "testbed_report.py"
    assert not script.is_symlink()
    out = checked([sys.executable, str(script), str(run), "--format", "md"], env, work).stdout
    assert "report.md" in out and (run / "report.md").is_file()
