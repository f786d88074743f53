"""The execution environment (execution-environment.yml, ansible-builder 3; docs/collection.md).

``ansible-builder create`` makes the build context from a copy of the definition and ``ee/`` beside a
collection built the way ``make collection`` builds it; the context's galaxy requirements then install
that collection (its dependencies from the ansible package, as in the image) and its Python
requirements are the project's pins.
"""
import os
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT

BIN = os.path.dirname(sys.executable)


def _pins(path):
    with open(path, encoding="utf-8") as handle:
        return dict(line.split("#")[0].strip().split("==") for line in handle
                    if "==" in line.split("#")[0])


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    base = tmp_path_factory.mktemp("ee")
    shutil.copy2(os.path.join(ROOT, "execution-environment.yml"), base / "execution-environment.yml")
    shutil.copytree(os.path.join(ROOT, "ee"), base / "ee")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "build-collection.py"), "--out",
                    str(base / "build" / "collection"), "--no-tarball"], check=True, capture_output=True, timeout=300)
    proc = subprocess.run([os.path.join(BIN, "ansible-builder"), "create", "--file", "execution-environment.yml",
                           "--context", "context", "--output-filename", "Containerfile"],
                          cwd=str(base), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Complete! The build context can be found at" in proc.stdout
    return base / "context"


def test_the_context_has_every_part_of_the_definition(context):
    build = context / "_build"
    for name in ("requirements.txt", "requirements.yml", "bindep.txt", "collections/testbed.infra/galaxy.yml",
                 "collections/testbed.infra/playbooks/cpu_scaling.yml", "scripts/assemble"):
        assert (build / name).is_file(), name
    containerfile = (context / "Containerfile").read_text()
    assert 'ARG ANSIBLE_INSTALL_REFS="ansible-core==2.19.14 ansible-runner"' in containerfile
    assert 'ARG ANSIBLE_GALAXY_CLI_COLLECTION_OPTS="--no-deps"' in containerfile
    assert "ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml" in containerfile
    assert "openssh-client [platform:dpkg]" in (build / "bindep.txt").read_text()


def test_the_python_requirements_are_the_projects_pins():
    ee, project = _pins(os.path.join(ROOT, "ee", "requirements.txt")), _pins(os.path.join(ROOT, "requirements.txt"))
    assert {"ansible", "jsonschema", "matplotlib"} <= set(ee)
    assert {name: project.get(name) for name in ee} == ee
    definition = yaml.safe_load(open(os.path.join(ROOT, "execution-environment.yml"), encoding="utf-8"))
    assert definition["dependencies"]["ansible_core"]["package_pip"] == f"ansible-core=={project['ansible-core']}"


def test_the_galaxy_stage_installs_the_collection(context, tmp_path):
    """What the image's galaxy stage runs, in the context's _build/ (the image's /build)."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path))
    proc = subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--no-deps", "-r",
                           "requirements.yml", "--collections-path", str(tmp_path)],
                          cwd=str(context / "_build"), env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "ansible_collections" / "testbed" / "infra" / "MANIFEST.json").is_file()


def test_the_exit_status_callback_is_found_next_to_the_playbooks():
    """ansible-runner (AWX, ansible-navigator) sets ANSIBLE_CALLBACK_PLUGINS to its own folder, which
    hides ansible.cfg's callback_plugins; Ansible also loads callbacks next to the playbook."""
    link = os.path.join(ROOT, "playbooks", "callback_plugins")
    assert os.path.islink(link) and os.readlink(link) == "../callback_plugins"
    assert os.path.isfile(os.path.join(link, "testbed_exit.py"))
