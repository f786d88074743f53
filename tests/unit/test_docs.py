"""Every module in library/ and every role with meta/argument_specs.yml renders in ansible-doc.

ansible-doc is run the way a user runs it, from the repository root with its
ansible.cfg (library, roles_path, doc_fragment_plugins), both as text and as
--json; a failure names the module or role and shows ansible-doc's message.
Each repository link in README.md and docs/*.md points at a file inside the
repository.
"""

import glob
import json
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

BIN = os.path.dirname(sys.executable)
ANSIBLE_DOC = os.path.join(BIN, "ansible-doc")
# Generic modules in library/, experiment-specific ones in their role's library/.
MODULE_DIRS = {os.path.basename(path)[:-3]: os.path.relpath(os.path.dirname(path), ROOT)
               for path in glob.glob(os.path.join(ROOT, "library", "*.py"))
               + glob.glob(os.path.join(ROOT, "roles", "*", "library", "*.py"))}
MODULES = sorted(MODULE_DIRS)
ROLES = sorted(os.path.basename(os.path.dirname(os.path.dirname(path)))
               for path in glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml")))


def ansible_doc(*args):
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               LC_ALL="C.UTF-8", LANG="C.UTF-8")
    return subprocess.run([ANSIBLE_DOC, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def rendered(kind, name, proc):
    assert proc.returncode == 0, f"ansible-doc cannot render {kind} {name}: {proc.stderr.strip()[-2000:]}"
    assert "[WARNING]" not in proc.stderr and "[ERROR]" not in proc.stderr, \
        f"ansible-doc complains about {kind} {name}: {proc.stderr.strip()[-2000:]}"
    return proc.stdout


def test_there_is_something_to_check():
    assert "result_store" in MODULES and "lvs_point" in MODULES
    assert "nfv_measure" in ROLES and len(ROLES) >= 10


@pytest.fixture(scope="module")
def module_docs():
    """Every module rendered by one ansible-doc call as text and one as --json (as a user lists several)."""
    path = ":".join(sorted(set(MODULE_DIRS.values())))
    text = rendered("modules", " ".join(MODULES), ansible_doc("-M", path, "-t", "module", *MODULES))
    data = rendered("modules", " ".join(MODULES), ansible_doc("-M", path, "-t", "module", "--json", *MODULES))
    return re.sub(r"\x1b\[[0-9;]*m", "", text), json.loads(data)


@pytest.fixture(scope="module")
def role_docs():
    """Every role's argument specs rendered by one ansible-doc call as text and one as --json."""
    text = rendered("roles", " ".join(ROLES), ansible_doc("-t", "role", "-r", "roles", *ROLES))
    data = rendered("roles", " ".join(ROLES), ansible_doc("-t", "role", "-r", "roles", "--json", *ROLES))
    return re.sub(r"\x1b\[[0-9;]*m", "", text), json.loads(data)


@pytest.mark.parametrize("module", MODULES)
def test_module_documentation_renders(module, module_docs):
    text, docs = module_docs
    assert f"MODULE {module}" in text, f"module {module}: not in ansible-doc's text output"
    assert module in docs, f"module {module}: not in ansible-doc's --json output"
    doc = docs[module]["doc"]
    assert doc["module"] == module, f"module {module}: DOCUMENTATION names {doc['module']!r}"
    assert doc.get("short_description"), f"module {module}: no short_description"
    for option, spec in (doc.get("options") or {}).items():
        assert spec.get("description"), f"module {module}: option {option} has no description"
        assert spec.get("type"), f"module {module}: option {option} has no type"
    assert docs[module].get("examples"), f"module {module}: no EXAMPLES"
    assert docs[module].get("return") is not None, f"module {module}: no RETURN"


@pytest.mark.parametrize("role", ROLES)
def test_role_argument_specs_render(role, role_docs):
    text, docs = role_docs
    assert re.search(rf"> ROLE: \*?{re.escape(role)}\*? \(", text), f"role {role}: not in ansible-doc's text output"
    assert role in docs, f"role {role}: not in ansible-doc's --json output"
    entry_points = docs[role]["entry_points"]
    assert "main" in entry_points, f"role {role}: no main entry point in meta/argument_specs.yml"
    for name, spec in (entry_points["main"].get("options") or {}).items():
        assert spec.get("description"), f"role {role}: option {name} has no description"
        assert spec.get("type"), f"role {role}: option {name} has no type"


MARKDOWN = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", [os.path.relpath(p, ROOT) for p in MARKDOWN])
def test_markdown_links_stay_inside_the_repository(page):
    path = os.path.join(ROOT, page)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a web address or an anchor on the same page
        file_part = target.split("#", 1)[0]
        resolved = os.path.realpath(os.path.join(os.path.dirname(path), file_part))
        assert resolved == ROOT or resolved.startswith(ROOT + os.sep), f"{page} links outside the repository: {target}"
        assert os.path.exists(resolved), f"{page} links to a missing file: {target}"


def test_architecture_names_every_role_and_only_files_that_exist():
    """docs/architecture.md matches the code: its role table lists every role, each file it names is there."""
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as handle:
        text = handle.read()
    table = text[text.index("| role | kind | what |"):]
    table = table[:table.index("\n\n")]
    listed = set(re.findall(r"`([a-z_0-9]+)`", table))
    roles = {name for name in os.listdir(os.path.join(ROOT, "roles"))
             if os.path.isdir(os.path.join(ROOT, "roles", name, "tasks"))}
    assert not roles - listed, f"roles missing from docs/architecture.md's role table: {sorted(roles - listed)}"
    named = set(re.findall(r"`((?:library|module_utils|filter_plugins|callback_plugins|action_plugins|scripts|roles)/"
                           r"[A-Za-z0-9_./-]+\.(?:py|yml|md|sh))`", text))
    assert named, "docs/architecture.md names no file"
    missing = sorted(path for path in named if "<" not in path and not os.path.exists(os.path.join(ROOT, path)))
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"


def test_the_faults_page_is_read_at_a_glance():
    """docs/faults.md is reference: no table cell runs over 300 characters (the measured runs are in
    docs/results/faults-log.md, which every case links)."""
    with open(os.path.join(ROOT, "docs", "faults.md"), encoding="utf-8") as handle:
        rows = [line for line in handle if line.startswith("|") and not line.startswith("| ---")]
    cells = [cell.strip() for row in rows for cell in row.strip().strip("|").split(" | ")]
    assert len(rows) > 10
    assert max(len(cell) for cell in cells) <= 300, [cell[:80] for cell in cells if len(cell) > 300]
    with open(os.path.join(ROOT, "docs", "results", "faults-log.md"), encoding="utf-8") as handle:
        log = handle.read()
    for anchor in re.findall(r"results/faults-log\.md#([a-z0-9-]+)", "".join(rows)):
        assert f'<a id="{anchor}"></a>' in log, anchor
