"""Every module in library/ and every role with meta/argument_specs.yml renders in ansible-doc.

ansible-doc is run the way a user runs it, from the repository root with its
ansible.cfg (library, roles_path, doc_fragment_plugins), both as text and as
--json; a failure names the module or role and shows ansible-doc's message.
Each relative link in README.md, docs/ and the roles' READMEs points at a file inside the
repository and at a heading of it; docs/architecture.md matches the roles and the Python files.
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


MARKDOWN = ([os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
            + sorted(glob.glob(os.path.join(ROOT, "docs", "results", "*.md")))
            + sorted(glob.glob(os.path.join(ROOT, "roles", "*", "README.md"))))
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^ {0,3}```.*?^ {0,3}```[^\n]*$", re.M | re.S)


def _slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def anchors(path):
    """Every anchor a Markdown file has: its headings' (numbered when repeated) and its <a id/name>."""
    with open(path, encoding="utf-8") as handle:
        text = _FENCE.sub("", handle.read())
    found, seen = set(), {}
    for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", text, re.M):
        slug = _slug(heading)
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    found.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    return found


def test_anchors_are_the_ones_github_makes():
    assert _slug("Access: local or over the network (`storage_compare_access`)") == \
        "access-local-or-over-the-network-storage_compare_access"
    assert _slug("The study's tables") == "the-studys-tables"
    assert _slug("`make faults`: the cases and what they measured") == "make-faults-the-cases-and-what-they-measured"
    assert "python-imports" in anchors(os.path.join(ROOT, "docs", "architecture.md"))
    assert "one-import-convention" not in anchors(os.path.join(ROOT, "docs", "architecture.md"))  # in a code block


@pytest.mark.parametrize("page", [os.path.relpath(p, ROOT) for p in MARKDOWN])
def test_markdown_links_resolve(page):
    """Every relative link of README.md, docs/*.md, docs/results/*.md and the roles' READMEs points at a
    file inside the repository, and its #anchor at a heading (or an <a id>) of that file."""
    path = os.path.join(ROOT, page)
    with open(path, encoding="utf-8") as handle:
        text = _FENCE.sub("", handle.read())
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # a web address
        file_part, _, anchor = target.partition("#")
        resolved = os.path.realpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        assert resolved == ROOT or resolved.startswith(ROOT + os.sep), f"{page} links outside the repository: {target}"
        if not os.path.exists(resolved):
            broken.append(f"{target}: no such file")
        elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading or <a id> {anchor!r} in {os.path.relpath(resolved, ROOT)}")
    assert not broken, f"{page}: " + "; ".join(broken)


def _table(text, header):
    """The rows of the Markdown table whose header line starts with ``header``, as lists of cells."""
    block = text[text.index(header):].split("\n\n", 1)[0]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            for line in block.splitlines()[2:]]


def _architecture():
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as handle:
        return handle.read()


ROLE_NAMES = {name for name in os.listdir(os.path.join(ROOT, "roles"))
              if os.path.isdir(os.path.join(ROOT, "roles", name)) and not name.startswith(".")}


def test_architecture_role_table_is_the_roles_directory():
    """docs/architecture.md's role table names every role under roles/, and no role that is not there."""
    listed = {name for row in _table(_architecture(), "| role | kind | what |")
              for name in re.findall(r"`([a-z_0-9]+)`", row[0])}
    assert not ROLE_NAMES - listed, f"roles missing from docs/architecture.md's role table: {sorted(ROLE_NAMES - listed)}"
    assert not listed - ROLE_NAMES, f"docs/architecture.md's role table names roles that do not exist: {sorted(listed - ROLE_NAMES)}"


def test_architecture_names_only_files_that_exist():
    text = _architecture()
    named = set(re.findall(r"`((?:library|module_utils|filter_plugins|callback_plugins|action_plugins|connection_plugins|scripts|roles|playbooks)/"
                           r"[A-Za-z0-9_./-]+\.(?:py|yml|md|sh))`", text))
    assert named, "docs/architecture.md names no file"
    missing = sorted(path for path in named if "<" not in path and not os.path.exists(os.path.join(ROOT, path)))
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"


SHARED_PYTHON = ("library", "module_utils", "filter_plugins", "action_plugins", "callback_plugins", "connection_plugins")


def test_architecture_names_every_shared_python_file():
    """Every Python file of library/, module_utils/ and the plugin folders at the top is in
    docs/architecture.md: by its path, or by a pattern the page gives (`library/<tool>_parse.py`,
    `module_utils/testbed_report_*.py`)."""
    text = _architecture()
    named = set(re.findall(r"`((?:%s)/[A-Za-z0-9_.<>*-]+\.py)`" % "|".join(SHARED_PYTHON), text))
    patterns = [re.compile("^" + re.sub(r"<[^>]+>", "[A-Za-z0-9_]+", re.escape(name).replace(r"\*", "[A-Za-z0-9_]*")
                                        .replace(r"\<", "<").replace(r"\>", ">")) + "$")
                for name in named if "<" in name or "*" in name]
    files = sorted(os.path.relpath(path, ROOT) for folder in SHARED_PYTHON
                   for path in glob.glob(os.path.join(ROOT, folder, "*.py")) if not path.endswith("__init__.py"))
    assert len(files) > 50
    unnamed = [path for path in files if path not in named and not any(p.match(path) for p in patterns)]
    assert not unnamed, f"Python files docs/architecture.md does not name: {unnamed}"


ROLE_PYTHON = ("library", "module_utils", "filter_plugins", "lookup_plugins", "action_plugins", "test_plugins", "scripts")


def test_architecture_role_python_table_matches_the_files():
    """The table of the roles' own Python lists, per role, exactly the files in those roles' Python folders."""
    rows = _table(_architecture(), "| role | `library/` | `module_utils/` |")
    table = {}
    for row in rows:
        roles = re.findall(r"`([a-z_0-9]+)`", row[0])
        assert roles and set(roles) <= ROLE_NAMES, f"docs/architecture.md: not a role: {row[0]}"
        table[tuple(roles)] = set(re.findall(r"`([A-Za-z0-9_.-]+\.py)`", " ".join(row[1:])))
    on_disk = {}
    for folder in ROLE_PYTHON:
        for path in glob.glob(os.path.join(ROOT, "roles", "*", folder, "*.py")):
            on_disk.setdefault(path.split(os.sep)[-3], set()).add(os.path.basename(path))
    listed_roles = {role for roles in table for role in roles}
    assert not set(on_disk) - listed_roles, \
        f"roles with Python of their own missing from docs/architecture.md: {sorted(set(on_disk) - listed_roles)}"
    for roles, names in table.items():
        files = set().union(*(on_disk.get(role, set()) for role in roles))
        assert names == files, (f"docs/architecture.md, {', '.join(roles)}: not in the table {sorted(files - names)}, "
                                f"not in the role {sorted(names - files)}")


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
