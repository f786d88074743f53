"""The execution environment (execution-environment.yml, ansible-builder 3; docs/collection.md).

``ansible-builder create`` makes the build context from a copy of the definition and ``ee/`` beside a
collection built the way ``make collection`` builds it - for the registry's base and for the local one
(ee/execution-environment-local.yml, the same dependencies) -; the context's galaxy requirements then
install that collection (its dependencies from the ansible package, as in the image) and its Python
requirements are the project's pins. The image itself is built and run by ``make ee-test`` (tests/ee).
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


DEFINITIONS = {"registry": "execution-environment.yml", "local": "ee/execution-environment-local.yml"}


def _definition(name):
    with open(os.path.join(ROOT, DEFINITIONS[name]), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@pytest.fixture(scope="module", params=sorted(DEFINITIONS))
def context(request, tmp_path_factory):
    base = tmp_path_factory.mktemp("ee")
    shutil.copy2(os.path.join(ROOT, "execution-environment.yml"), base / "execution-environment.yml")
    shutil.copytree(os.path.join(ROOT, "ee"), base / "ee")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "build-collection.py"), "--out",
                    str(base / "build" / "collection"), "--no-tarball"], check=True, capture_output=True, timeout=300)
    proc = subprocess.run([os.path.join(BIN, "ansible-builder"), "create", "--file", DEFINITIONS[request.param],
                           "--context", "context", "--output-filename", "Containerfile"],
                          cwd=str(base), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Complete! The build context can be found at" in proc.stdout
    return request.param, base / "context"


def test_the_context_has_every_part_of_the_definition(context):
    kind, context = context
    build = context / "_build"
    for name in ("requirements.txt", "requirements.yml", "bindep.txt", "collections/testbed.infra/galaxy.yml",
                 "collections/testbed.infra/playbooks/cpu_scaling.yml", "scripts/assemble"):
        assert (build / name).is_file(), name
    containerfile = (context / "Containerfile").read_text()
    assert 'ARG ANSIBLE_INSTALL_REFS="ansible-core==2.19.14 ansible-runner==2.4.3"' in containerfile
    assert 'ARG ANSIBLE_GALAXY_CLI_COLLECTION_OPTS="--no-deps"' in containerfile
    assert "ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml" in containerfile
    assert "openssh-client [platform:dpkg]" in (build / "bindep.txt").read_text()
    if kind == "local":
        assert 'ARG EE_BASE_IMAGE="testbed-ee-base:bookworm"' in containerfile
        assert 'ARG PKGMGR="/usr/local/sbin/ee-apt"' in containerfile
        assert "pip_install" not in containerfile.replace("COPY _build/scripts/", "")


def test_the_python_requirements_are_the_projects_pins():
    ee, project = _pins(os.path.join(ROOT, "ee", "requirements.txt")), _pins(os.path.join(ROOT, "requirements.txt"))
    assert {"ansible", "jsonschema", "matplotlib"} <= set(ee)
    assert {name: project.get(name) for name in ee} == ee
    definition = _definition("registry")
    assert definition["dependencies"]["ansible_core"]["package_pip"] == f"ansible-core=={project['ansible-core']}"
    assert definition["dependencies"]["ansible_runner"]["package_pip"] == f"ansible-runner=={project['ansible-runner']}"


def test_the_local_definition_has_the_same_dependencies():
    """Paths resolved from each definition's folder: the same files, pins and collection."""
    def resolved(name):
        definition, folder = _definition(name), os.path.dirname(os.path.join(ROOT, DEFINITIONS[name]))
        deps = dict(definition["dependencies"])
        for key in ("python", "system", "galaxy"):
            deps[key] = os.path.normpath(os.path.join(folder, deps[key]))
        files = [(os.path.normpath(os.path.join(folder, entry["src"])), entry["dest"])
                 for entry in definition["additional_build_files"]]
        return deps, files, definition["build_arg_defaults"]
    assert resolved("local") == resolved("registry")
    local = _definition("local")
    assert local["images"]["base_image"]["name"] == "testbed-ee-base:bookworm"
    # the package manager the base image installs (scripts/build-ee.py builds it from ee/base/)
    dockerfile = open(os.path.join(ROOT, "ee", "base", "Dockerfile"), encoding="utf-8").read()
    assert f"COPY ee-apt {local['options']['package_manager_path']}" in dockerfile
    assert os.access(os.path.join(ROOT, "ee", "base", "ee-apt"), os.X_OK)
    assert local["options"]["skip_pip_install"] is True and "python3-pip" in dockerfile


def test_the_exit_status_callback_is_found_next_to_the_playbooks():
    """ansible-runner (AWX, ansible-navigator) sets ANSIBLE_CALLBACK_PLUGINS to its own folder, which
    hides ansible.cfg's callback_plugins; Ansible also loads callbacks next to the playbook."""
    link = os.path.join(ROOT, "playbooks", "callback_plugins")
    assert os.path.islink(link) and os.readlink(link) == "../callback_plugins"
    assert os.path.isfile(os.path.join(link, "testbed_exit.py"))


def test_the_galaxy_stage_installs_the_collection(context, tmp_path):
    """What the image's galaxy stage runs, in the context's _build/ (the image's /build)."""
    context = context[1]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path))
    proc = subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--no-deps", "-r",
                           "requirements.yml", "--collections-path", str(tmp_path)],
                          cwd=str(context / "_build"), env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "ansible_collections" / "testbed" / "infra" / "MANIFEST.json").is_file()
