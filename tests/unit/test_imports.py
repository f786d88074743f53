"""One import convention for the project's Python (docs/architecture.md, "Python imports").

Pure shared libraries live in a module_utils/ folder (the repository's or a
role's own) and are imported as ``ansible.module_utils.<name>`` everywhere:
modules get them that way from Ansible; filters and scripts put every
module_utils/ folder one to three levels above them on that package's path
with one stanza, the same text in every file; no code changes ``sys.path`` and
no file imports a filter plugin file as a library.
"""
import ast
import glob
import os

import pytest
from conftest import ROOT

STANZA = open(os.path.join(ROOT, "filter_plugins", "testbed_sweep.py"), encoding="utf-8").read().split(
    "import os\n\n", 1)[1].split("\nfrom ansible.module_utils", 1)[0]

# The code that is not a test: modules, module_utils, plugins, scripts, roles' Python. The collection
# build (scripts/build-collection.py) is left out: it names the stanza and sys.path to rewrite them.
BUILD = os.path.join(ROOT, "scripts", "build-collection.py")
CODE = sorted(
    p for pattern in ("library/*.py", "module_utils/*.py", "module_utils/*/*.py", "filter_plugins/*.py", "action_plugins/*.py",
                      "callback_plugins/*.py", "connection_plugins/*.py",
                      "doc_fragments/*.py", "scripts/*.py", "roles/*/library/*.py", "roles/*/module_utils/*.py",
                      "roles/*/filter_plugins/*.py", "roles/*/files/*.py")
    for p in glob.glob(os.path.join(ROOT, pattern)) if p != BUILD)
CONTROLLER = [p for p in CODE if any(os.sep + where + os.sep in p
                                     for where in ("filter_plugins", "callback_plugins", "connection_plugins", "scripts"))]
FILTER_FILES = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "filter_plugins", "*.py"))
                + glob.glob(os.path.join(ROOT, "roles", "*", "filter_plugins", "*.py"))}
SHARED = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "module_utils", "*.py"))
          + glob.glob(os.path.join(ROOT, "roles", "*", "module_utils", "*.py"))} | {
    os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(ROOT, "module_utils", "*", "__init__.py"))}


def rel(path):
    return os.path.relpath(path, ROOT)


def imported(path):
    """Top-level module names a file imports (``import x``, ``from x import``), and ansible.module_utils names."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    plain, served = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                plain.add(alias.name.split(".")[0])
                if alias.name.startswith("ansible.module_utils."):
                    served.add(alias.name.split(".")[2])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            plain.add(node.module.split(".")[0])
            if node.module == "ansible.module_utils":
                served.update(alias.name for alias in node.names)
            elif node.module.startswith("ansible.module_utils."):
                served.add(node.module.split(".")[2])
    return plain, served


def test_the_stanza_is_the_documented_one():
    assert "ansible.module_utils.__path__.append" in STANZA and "sys.path" not in STANZA
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as handle:
        assert STANZA.strip() in handle.read(), "docs/architecture.md must show the stanza as it is in the code"


@pytest.mark.parametrize("path", CODE, ids=rel)
def test_no_code_changes_sys_path(path):
    with open(path, encoding="utf-8") as handle:
        assert "sys.path" not in handle.read(), f"{rel(path)}: use the import stanza, not sys.path"


@pytest.mark.parametrize("path", CODE, ids=rel)
def test_shared_libraries_only_through_ansible_module_utils(path):
    plain, _ = imported(path)
    assert not plain & SHARED, f"{rel(path)} imports {sorted(plain & SHARED)} as a plain module"
    assert not plain & FILTER_FILES, f"{rel(path)} imports the filter plugin file {sorted(plain & FILTER_FILES)}"


@pytest.mark.parametrize("path", CONTROLLER, ids=rel)
def test_controller_code_that_uses_module_utils_carries_the_stanza(path):
    _, served = imported(path)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    project = served & SHARED
    if project:
        assert STANZA in text, f"{rel(path)} imports {sorted(project)} without the import stanza"
    else:
        assert "ansible.module_utils.__path__" not in text, f"{rel(path)}: the stanza without a use"
