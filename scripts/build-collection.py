#!/usr/bin/env python3
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the Ansible collection testbed.infra from the repository (docs/collection.md).

    python scripts/build-collection.py [--out build/collection] [--no-tarball] [--git-ref REF [--git-repo DIR]]

The repository keeps its roles-style layout; this script copies it into
``<out>/ansible_collections/testbed/infra`` and rewrites it mechanically:

* ``library/``, ``roles/*/library/`` -> ``plugins/modules/``; ``module_utils/`` (with its
  groups, the folders ``module_utils/<group>/``), ``roles/*/module_utils/`` -> ``plugins/module_utils/``; ``filter_plugins/``,
  ``roles/*/filter_plugins/`` -> ``plugins/filter/``; ``roles/*/lookup_plugins/`` ->
  ``plugins/lookup/``; ``action_plugins/``, ``callback_plugins/``, ``connection_plugins/``, ``doc_fragments/``
  -> ``plugins/action/``, ``plugins/callback/``, ``plugins/connection/``, ``plugins/doc_fragments/``; ``roles/``.
* Python: ``ansible.module_utils.<shared>`` -> ``ansible_collections.testbed.infra.plugins.module_utils.<shared>``;
  the import stanza (docs/architecture.md, "Python imports") is removed from plugins;
  ``extends_documentation_fragment: testbed_parse`` -> ``testbed.infra.testbed_parse``;
  module names in EXAMPLES -> FQCN.
* Roles: task keys that are the project's modules or actions, literal
  ``include_role``/``import_role`` names, ``roles:`` entries and meta dependencies -> FQCN;
  the project's filters after ``|`` and its lookups in ``lookup()``/``query()`` -> FQCN;
  every role's ``meta/main.yml`` gets ``collections: [testbed.infra]`` and, in ``galaxy_info``, a
  ``testbed_includes_roles`` list of the roles it includes (not ``dependencies``,
  which would run them first and change what the role does).
* A ``<filter>.yml`` documentation file for every filter, from its function's docstring.
* ``playbooks/*.yml`` -> ``playbooks/<name with _>.yml`` (``ansible-playbook testbed.infra.cpu_scaling``).
* ``collection/galaxy.yml`` (committed) with the built version; its dependency ranges must be what
  the built collection uses at the installed versions.

Then ``ansible-galaxy collection build`` writes ``<out>/testbed-infra-<version>.tar.gz``.
The build fails when a built role reaches outside its own folder (``role_path`` + ``..``).
"""
import argparse
import ast
import glob
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
NAMESPACE, NAME = "testbed", "infra"
FQ = f"{NAMESPACE}.{NAME}"
# The collection's metadata, committed: its version, the dependency ranges the testbed is tested with
# (from the pinned ansible package), its repository. The build checks the ranges against what is installed.
GALAXY = os.path.join(ROOT, "collection", "galaxy.yml")
# The modules' author line in the collection: ansible-test wants a GitHub handle, "(@handle)", or
# "(!UNKNOWN)"; the source says only "Testbed contributors". A maintainer's handle goes here.
AUTHOR = "Infrastructure testbed contributors (!UNKNOWN)"
# Collections the roles and modules may call; a dependency only when its FQCN prefix occurs in them.
KNOWN_DEPENDENCIES = ("ansible.posix", "community.crypto", "community.docker", "community.general",
                      "containers.podman")
PACKAGE = f"ansible_collections.{NAMESPACE}.{NAME}.plugins.module_utils"
# The committed list the built tests/sanity/ignore-<core>.txt is made from.
SANITY_IGNORE = os.path.join(ROOT, "collection", "sanity-ignore.txt")
COLLECTION_README = os.path.join(ROOT, "collection", "README.md")
# The import stanza: the same text in every controller file (tests/unit/test_imports.py).
STANZA = open(os.path.join(ROOT, "filter_plugins", "testbed_sweep.py"), encoding="utf-8").read().split(
    "import os\n\n", 1)[1].split("\nfrom ansible.module_utils", 1)[0]
# A role's Python file run as a plain script on the controller (roles/*/files/*.py): the
# directory holding ansible_collections/ (six levels up) goes on sys.path instead.
SCRIPT_STANZA = '''# Built into the collection testbed.infra (scripts/build-collection.py): this file runs as a plain
# script, so the directory that holds ansible_collections/ (six levels up) goes on the import path.
import sys  # noqa: E402

_collections_root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * 6))
if _collections_root not in sys.path:
    sys.path.insert(0, _collections_root)
'''
ROLE_DIRS_MOVED = ("library", "module_utils", "filter_plugins", "lookup_plugins")
# The one role that reads a file outside its folder in the repository: testbed_validate points at the
# testbed's shared defaults (group_vars/all at the repository root) when an inventory does not link
# them. The collection ships them in the role (files/shared_defaults) and the role points there.
# Each old text must occur exactly once.
ROLE_FILES_COPIED = {("group_vars/all", "roles/testbed_validate/files/shared_defaults")}
SPECIFIC_REWRITES = {
    "roles/testbed_validate/tasks/shared_defaults.yml": [
        ('__testbed_validate_shared: "{{ role_path | dirname | dirname }}/group_vars/all"',
         '__testbed_validate_shared: "{{ role_path }}/files/shared_defaults"'),
        (".startswith(role_path | dirname | dirname ~ '/')", ".startswith(role_path ~ '/')"),
        ("(group_vars/all at the repository root)",
         "(the repository's group_vars/all; in the collection testbed.infra, roles/testbed_validate/files/shared_defaults)"),
    ],
}


def stems(*patterns):
    found = {}
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            name = os.path.basename(path)[:-3]
            if name == "__init__":
                continue
            if name in found:
                raise SystemExit(f"two files named {name}.py: {found[name]} and {path}")
            found[name] = path
    return found


def filter_names(path):
    """The names a filter plugin file's FilterModule.filters() returns (read from the source)."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "filters":
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Dict):
                    return [k.value for k in ret.value.keys if isinstance(k, ast.Constant)]
    raise SystemExit(f"{path}: no FilterModule.filters() returning a dict literal")


class Inventory:
    """Everything the rewrite needs to know, from the file names of the repository."""

    def __init__(self):
        self.modules = stems("library/*.py", "roles/*/library/*.py")
        self.actions = stems("action_plugins/*.py")
        self.module_utils = stems("module_utils/*.py", "roles/*/module_utils/*.py")
        # The groups of module_utils/ (a folder with an __init__.py): package -> its files.
        self.module_util_packages = {
            os.path.basename(os.path.dirname(init)): sorted(glob.glob(os.path.join(os.path.dirname(init), "*.py")))
            for init in sorted(glob.glob(os.path.join(ROOT, "module_utils", "*", "__init__.py")))}
        clash = set(self.module_utils) & set(self.module_util_packages)
        if clash:
            raise SystemExit(f"module_utils: {sorted(clash)} both a file and a folder")
        self.filter_files = stems("filter_plugins/*.py", "roles/*/filter_plugins/*.py")
        self.lookups = stems("roles/*/lookup_plugins/*.py")
        self.callbacks = stems("callback_plugins/*.py")
        self.connections = stems("connection_plugins/*.py")
        self.doc_fragments = stems("doc_fragments/*.py")
        self.roles = sorted(d for d in os.listdir(os.path.join(ROOT, "roles"))
                            if os.path.isdir(os.path.join(ROOT, "roles", d, "tasks")))
        self.filters = {}
        for stem, path in self.filter_files.items():
            for name in filter_names(path):
                if name in self.filters:
                    raise SystemExit(f"filter {name} in two files")
                self.filters[name] = stem
        self.task_names = set(self.modules) | set(self.actions)


# ---------------------------------------------------------------- Python

def rewrite_python(text, inv, path, script=False):
    if STANZA in text:
        text = text.replace(STANZA, SCRIPT_STANZA if script else "")
        # The stanza was the only user of os in most plugins.
        if not script and not re.search(r"\bos\.", text):
            text = re.sub(r"^import os\b.*\n", "", text, count=1, flags=re.M)
        text = re.sub(r"\n{4,}", "\n\n\n", text)  # at most two blank lines where the stanza was
    if "ansible.module_utils.__path__" in text:
        raise SystemExit(f"{path}: an import stanza that is not the documented text")
    names = "|".join(sorted(map(re.escape, set(inv.module_utils) | set(inv.module_util_packages)), key=len, reverse=True))
    text = re.sub(rf"\bansible\.module_utils\.({names})\b", rf"{PACKAGE}.\1", text)
    text = re.sub(rf"^(\s*)from ansible\.module_utils import ({names})\b(?!\s*,)", rf"\1from {PACKAGE} import \2",
                  text, flags=re.M)
    left = re.search(rf"^\s*from ansible\.module_utils import .*\b({names})\b", text, re.M)
    if left:
        raise SystemExit(f"{path}: cannot rewrite {left.group(0).strip()!r} (one shared name per import line)")
    # extends_documentation_fragment, as a list or a single value.
    frags = "|".join(map(re.escape, inv.doc_fragments))
    text = re.sub(rf"(extends_documentation_fragment:\s*\n(?:\s*-\s*\S+\s*\n)*?\s*-\s*)({frags})\s*$",
                  rf"\g<1>{FQ}.\2", text, flags=re.M)
    text = re.sub(rf"^(extends_documentation_fragment:\s*)({frags})\s*$", rf"\g<1>{FQ}.\2", text, flags=re.M)
    # Module names as task keys in EXAMPLES.
    match = re.search(r'^EXAMPLES = r?"""\n(.*?)^"""', text, re.S | re.M)
    if match:
        mods = "|".join(sorted(map(re.escape, inv.task_names), key=len, reverse=True))
        body = re.sub(rf"^(\s*(?:-\s+)?)({mods}):(\s|$)", rf"\g<1>{FQ}.\2:\3", match.group(1), flags=re.M)
        text = text[:match.start(1)] + body + text[match.end(1):]
    # In DOCUMENTATION: the author line; seealso entries naming the project's modules.
    match = re.search(r'^DOCUMENTATION = r?"""\n(.*?)^"""', text, re.S | re.M)
    if match:
        body = re.sub(r"^author:(?:[ \t]+\S.*\n|\n(?:[ \t]+-[ \t]+.*\n)+)", f"author:\n  - {AUTHOR}\n",
                      match.group(1), count=1, flags=re.M)
        mods = "|".join(sorted(map(re.escape, inv.task_names), key=len, reverse=True))
        body = re.sub(rf"^(\s+-\s+module:\s*)({mods})\s*$", rf"\g<1>{FQ}.\2", body, flags=re.M)
        text = text[:match.start(1)] + body + text[match.end(1):]
    # Module references in documentation markup: M(result_run) -> M(testbed.infra.result_run).
    mods = "|".join(sorted(map(re.escape, inv.task_names), key=len, reverse=True))
    text = re.sub(rf"\bM\(({mods})\)", rf"M({FQ}.\1)", text)
    text = rewrite_jinja(text, inv)
    if "sys.path" in text and not script:
        raise SystemExit(f"{path}: sys.path in a plugin")
    return text


# ---------------------------------------------------------------- YAML and Jinja

def rewrite_jinja(text, inv):
    names = "|".join(sorted(map(re.escape, inv.filters), key=len, reverse=True))
    text = re.sub(rf"(\|\s*)({names})\b(?!\.)", rf"\g<1>{FQ}.\2", text)
    lookups = "|".join(map(re.escape, inv.lookups))
    if lookups:
        text = re.sub(rf"""\b(lookup|query|q)\(\s*(['"])({lookups})\2""", rf"\1(\2{FQ}.\3\2", text)
    return text


class Edits:
    """Replacements at positions of the original text (from yaml.compose marks)."""

    def __init__(self):
        self.items = []

    def add(self, node, new):
        self.items.append((node.start_mark.index, node.end_mark.index, new))

    def apply(self, text):
        for start, end, new in sorted(self.items, reverse=True):
            text = text[:start] + new + text[end:]
        return text


INCLUDE_KEYS = {"include_role", "import_role", "ansible.builtin.include_role", "ansible.builtin.import_role"}


def _scalar(node):
    return node.value if isinstance(node, yaml.ScalarNode) else None


def _retext(node, value):
    """A scalar's new text, in the quoting style it had."""
    return f"{node.style}{value}{node.style}" if node.style in ("'", '"') else value


def task_edits(node, inv, edits, included, in_list=False):
    """Walk a task file's node tree: module keys, role names of includes."""
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            task_edits(item, inv, edits, included, in_list=True)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = _scalar(key)
            if in_list and name in inv.task_names:
                edits.add(key, f"{FQ}.{name}")
            if in_list and name in INCLUDE_KEYS and isinstance(value, yaml.MappingNode):
                for k, v in value.value:
                    role = _scalar(v)
                    if _scalar(k) == "name" and role in inv.roles:
                        edits.add(v, _retext(v, f"{FQ}.{role}"))
                        included.add(role)
            if name == "roles" and isinstance(value, yaml.SequenceNode):
                role_list_edits(value, inv, edits, included)
            task_edits(value, inv, edits, included)


def role_list_edits(seq, inv, edits, included):
    for item in seq.value:
        target = item
        if isinstance(item, yaml.MappingNode):
            target = next((v for k, v in item.value if _scalar(k) in ("role", "name")), None)
        role = _scalar(target) if target is not None else None
        if role in inv.roles:
            edits.add(target, _retext(target, f"{FQ}.{role}"))
            included.add(role)


def rewrite_role_yaml(text, inv, path, included):
    parts = path.split(os.sep)
    if os.path.basename(os.path.dirname(path)) in ("tasks", "handlers") or path.endswith(("meta" + os.sep + "main.yml",)):
        edits = Edits()
        for doc in yaml.compose_all(text, Loader=yaml.SafeLoader):
            if doc is None:
                continue
            if parts[-2] == "meta" and isinstance(doc, yaml.MappingNode):
                for key, value in doc.value:
                    if _scalar(key) == "dependencies" and isinstance(value, yaml.SequenceNode):
                        role_list_edits(value, inv, edits, included)
            else:
                task_edits(doc, inv, edits, included)
        text = edits.apply(text)
    return rewrite_jinja(text, inv)


# ---------------------------------------------------------------- playbooks

# Playbooks that reach outside the collection (a script of the repository) stay out of it.
PLAYBOOKS_LEFT_OUT = ("lab-nic-stress.yml",)


def playbook_name(file_name):
    """A collection playbook's name: ``cpu-scaling.yml`` -> ``cpu_scaling.yml`` (``testbed.infra.cpu_scaling``)."""
    return file_name.replace("-", "_")


def build_playbooks(coll, inv):
    """playbooks/*.yml -> <coll>/playbooks/<name with _>.yml: imports renamed, modules, roles, filters as FQCN.

    The experiment playbooks read ``../roles/<role>/meta/...`` next to them, which the collection holds
    as the repository does. Returns the names shipped."""
    shipped = []
    names = {os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "playbooks", "*.yml"))}
    for name in sorted(names - set(PLAYBOOKS_LEFT_OUT)):
        text = open(os.path.join(ROOT, "playbooks", name), encoding="utf-8").read()
        for imported in re.findall(r"import_playbook:\s*(\S+\.yml)", text):
            if imported not in names or imported in PLAYBOOKS_LEFT_OUT:
                raise SystemExit(f"playbooks/{name} imports {imported}, which the collection does not ship")
        if re.search(r"playbook_dir\s*}}/\.\./(?!roles\b)", text):
            raise SystemExit(f"playbooks/{name} reaches outside playbooks/ and roles/ (add it to PLAYBOOKS_LEFT_OUT)")
        edits = Edits()
        for doc in yaml.compose_all(text, Loader=yaml.SafeLoader):
            if doc is not None:
                task_edits(doc, inv, edits, set())
        text = rewrite_jinja(edits.apply(text), inv)
        text = re.sub(r"(import_playbook:\s*)(\S+\.yml)", lambda m: m.group(1) + playbook_name(m.group(2)), text)
        os.makedirs(os.path.join(coll, "playbooks"), exist_ok=True)
        with open(os.path.join(coll, "playbooks", playbook_name(name)), "w", encoding="utf-8") as handle:
            handle.write(text)
        shipped.append(playbook_name(name)[:-4])
    return shipped


# ---------------------------------------------------------------- filter documentation

def load_filter_plugin(path):
    spec = importlib.util.spec_from_file_location(f"_testbed_build_{os.path.basename(path)[:-3]}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FilterModule().filters()


def _paragraphs(doc):
    paras = [" ".join(line.strip() for line in block.splitlines()).strip()
             for block in re.split(r"\n\s*\n", inspect.cleandoc(doc))]
    return [re.sub(r"``(.*?)``", r"C(\1)", p) for p in paras if p]


def filter_doc(name, function, stem):
    doc = inspect.getdoc(function) or f"The {name} filter."
    paras = _paragraphs(doc)
    first = paras[0]
    short = first.split(". ")[0].rstrip(".:")
    if len(short) > 160:
        short = short[:157] + "..."
    params = list(inspect.signature(function).parameters.values())
    options = {}
    positional = []
    for index, param in enumerate(params):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        key = "_input" if index == 0 else param.name
        required = param.default is param.empty
        text = (f"The value the filter is applied to (the function's first argument C({param.name}))."
                if index == 0 else f"The function's argument C({param.name}).")
        if not required and index:
            text += f" Default C({param.default!r})."
        option = {"description": [text], "type": "raw", "required": required}
        options[key] = option
        if index and required:
            positional.append(param.name)
    example_args = ", ".join(f"{p}" for p in positional)
    document = {
        "name": name,
        "author": [AUTHOR],
        "version_added": "0.1.0",
        "short_description": short,
        # The first paragraph, when it is only the short description, is not repeated.
        "description": paras[1 if paras[0].rstrip(".:") == short and len(paras) > 1 else 0:] + [f"Python function C({function.__module__.rsplit('.', 1)[-1]}.{function.__name__})"
                                f" through the filter plugin file C({stem}) of the testbed."],
        "options": options,
    }
    if positional:
        document["positional"] = ", ".join(positional)
    examples = (f"# Apply {name} to a value (see the description for its arguments)\n"
                f"result: \"{{{{ value | {FQ}.{name}{'(' + example_args + ')' if example_args else ''} }}}}\"\n")
    returned = {"_value": {"description": "What the function returns (see the description).", "type": "raw"}}
    dump = {"width": 110, "default_flow_style": False, "sort_keys": False, "allow_unicode": True}
    return ("---\nDOCUMENTATION:\n" + _indent(yaml.safe_dump(document, **dump))
            + "\nEXAMPLES: |\n" + _indent(examples)
            + "\nRETURN:\n" + _indent(yaml.safe_dump(returned, **dump)))


def _indent(text):
    return "".join("  " + line if line.strip() else line for line in text.splitlines(True))


# ---------------------------------------------------------------- the build

def git(*args):
    proc = subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")


def read_galaxy():
    """collection/galaxy.yml, the collection's committed metadata; exits naming what is wrong."""
    try:
        with open(GALAXY, encoding="utf-8") as handle:
            galaxy = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"cannot read {os.path.relpath(GALAXY, ROOT)}: {exc}") from exc
    missing = [k for k in ("namespace", "name", "version", "dependencies", "repository") if not galaxy.get(k)]
    if missing:
        raise SystemExit(f"{os.path.relpath(GALAXY, ROOT)} lacks {', '.join(missing)}")
    if (galaxy["namespace"], galaxy["name"]) != (NAMESPACE, NAME):
        raise SystemExit(f"{os.path.relpath(GALAXY, ROOT)} names {galaxy['namespace']}.{galaxy['name']}, not {FQ}")
    if not SEMVER.match(str(galaxy["version"])):
        raise SystemExit(f"{os.path.relpath(GALAXY, ROOT)}: version {galaxy['version']!r} is not MAJOR.MINOR.PATCH")
    return galaxy


def version(base):
    """``base`` (galaxy.yml's version) when HEAD is its tag v<base>; else ``base`` plus the commit as build
    metadata (``.dirty`` with uncommitted changes). A v<semver> tag newer than ``base`` is an error: the
    release after it must be what galaxy.yml says."""
    tags = [t[1:] for t in (git("tag", "--list", "v[0-9]*") or "").split() if SEMVER.match(t[1:])]
    key = lambda v: tuple(int(n) for n in v.split("."))  # noqa: E731
    newer = [t for t in tags if key(t) > key(base)]
    if newer:
        raise SystemExit(f"the tag v{max(newer, key=key)} is newer than collection/galaxy.yml's version {base}: "
                         "raise the version in galaxy.yml (and add a changelog fragment)")
    commit = git("rev-parse", "--short=12", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    if not commit:
        return base
    if f"v{base}" in (git("tag", "--points-at", "HEAD") or "").split() and not dirty:
        return base
    return f"{base}+g{commit}{'.dirty' if dirty else ''}"


def used_dependencies(coll):
    used = {}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, KNOWN_DEPENDENCIES)) + r")\.[a-z_0-9]+")
    for where in ("roles", "plugins"):
        for dirpath, _, files in os.walk(os.path.join(coll, where)):
            for name in files:
                if name.endswith((".yml", ".yaml", ".py", ".j2")) and not name.endswith(".md"):
                    text = open(os.path.join(dirpath, name), encoding="utf-8", errors="replace").read()
                    # Only calls: comments and prose name collections too.
                    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
                    for match in pattern.finditer(text):
                        used.setdefault(match.group(1), os.path.relpath(os.path.join(dirpath, name), coll))
    deps = {}
    for name in sorted(used):
        namespace, collection = name.split(".")
        manifest = None
        for base in sys.path:
            candidate = os.path.join(base, "ansible_collections", namespace, collection, "MANIFEST.json")
            if os.path.isfile(candidate):
                manifest = candidate
                break
        if manifest is None:
            raise SystemExit(f"cannot read the version of {name}, which {used[name]} uses: it is not installed "
                             "beside this Python (run ./scripts/setup.sh: the pinned ansible package brings it)")
        version_text = json.load(open(manifest))["collection_info"]["version"]
        major = version_text.split(".")[0]
        if not major.isdigit():
            raise SystemExit(f"cannot read the major version of {name} from {manifest}: {version_text!r}")
        # the major release the testbed is tested with (the pinned ansible package), none newer
        deps[name] = f">={major}.0.0,<{int(major) + 1}.0.0"
    return deps


def copy_python(src, dst, inv, script=False):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(src, encoding="utf-8") as handle:
        text = rewrite_python(handle.read(), inv, src, script=script)
    with open(dst, "w", encoding="utf-8") as handle:
        handle.write(text)
    shutil.copymode(src, dst)


def build_roles(coll, inv):
    includes = {}
    for role in inv.roles:
        src = os.path.join(ROOT, "roles", role)
        dst = os.path.join(coll, "roles", role)
        included = set()
        for dirpath, dirnames, files in os.walk(src, followlinks=True):
            rel = os.path.relpath(dirpath, src)
            if rel == ".":
                dirnames[:] = [d for d in dirnames if d not in ROLE_DIRS_MOVED]
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for name in files:
                path = os.path.join(dirpath, name)
                out = os.path.join(dst, rel, name)
                os.makedirs(os.path.dirname(out), exist_ok=True)
                if name.endswith((".yml", ".yaml", ".j2")):
                    relpath = os.path.normpath(os.path.join("roles", role, rel, name))
                    text = open(path, encoding="utf-8").read()
                    for old, new in SPECIFIC_REWRITES.get(relpath, ()):
                        if text.count(old) != 1:
                            raise SystemExit(f"{relpath}: expected {old!r} once")
                        text = text.replace(old, new)
                    text = rewrite_role_yaml(text, inv, relpath, included)
                    with open(out, "w", encoding="utf-8") as handle:
                        handle.write(text)
                    shutil.copymode(path, out)
                elif name.endswith(".py") and STANZA in open(path, encoding="utf-8").read():
                    copy_python(path, out, inv, script=True)
                else:
                    shutil.copy2(path, out)  # follows symlinks: a role's files are its own
        included.discard(role)
        includes[role] = sorted(included)
        meta = os.path.join(dst, "meta", "main.yml")
        with open(meta, encoding="utf-8") as handle:
            text = handle.read()
        declared = json.dumps([f"{FQ}.{r}" for r in includes[role]])
        text = text.replace("\ngalaxy_info:\n", "\ngalaxy_info:\n"
                            "  # Added by scripts/build-collection.py: the roles this role includes (include_role,\n"
                            "  # import_role) - not dependencies, which would run them before the role.\n"
                            f"  testbed_includes_roles: {declared}\n", 1)
        text = text.rstrip("\n") + "\n" + (
            f"# Added by scripts/build-collection.py: bare names in this role resolve in {FQ}.\n"
            f"collections:\n  - {FQ}\n")
        if yaml.safe_load(text)["galaxy_info"].get("testbed_includes_roles") != json.loads(declared):
            raise SystemExit(f"{meta}: could not declare the included roles")
        with open(meta, "w", encoding="utf-8") as handle:
            handle.write(text)
    return includes


def check_self_contained(coll):
    """No built role reaches outside its own folder through role_path."""
    bad = []
    pattern = re.compile(r"role_path\s*(?:}}\s*/\.\.|\|\s*dirname\s*\|\s*dirname|~\s*['\"]/\.\.)")
    for dirpath, _, files in os.walk(os.path.join(coll, "roles")):
        for name in files:
            path = os.path.join(dirpath, name)
            if name.endswith((".yml", ".j2")):
                for number, line in enumerate(open(path, encoding="utf-8"), 1):
                    if pattern.search(line) and "testbed-build: outside-role-ok" not in line:
                        bad.append(f"{os.path.relpath(path, coll)}:{number}: {line.strip()}")
    return bad


def build(out, tarball=True):
    inv = Inventory()
    coll = os.path.join(out, "ansible_collections", NAMESPACE, NAME)
    if os.path.isdir(coll):
        shutil.rmtree(coll)
    os.makedirs(coll)
    plugins = os.path.join(coll, "plugins")
    for kind, found in (("modules", inv.modules), ("module_utils", inv.module_utils), ("filter", inv.filter_files),
                        ("lookup", inv.lookups), ("action", inv.actions), ("callback", inv.callbacks),
                        ("connection", inv.connections), ("doc_fragments", inv.doc_fragments)):
        for stem, path in found.items():
            copy_python(path, os.path.join(plugins, kind, f"{stem}.py"), inv)
    for package, paths in inv.module_util_packages.items():
        for path in paths:
            copy_python(path, os.path.join(plugins, "module_utils", package, os.path.basename(path)), inv)
    # One documentation file per filter (a filter plugin file names several).
    for stem, path in inv.filter_files.items():
        for name, function in load_filter_plugin(path).items():
            with open(os.path.join(plugins, "filter", f"{name}.yml"), "w", encoding="utf-8") as handle:
                handle.write(filter_doc(name, function, stem))
    includes = build_roles(coll, inv)
    playbooks = build_playbooks(coll, inv)
    for src, dst in sorted(ROLE_FILES_COPIED):
        shutil.copytree(os.path.join(ROOT, src), os.path.join(coll, dst))
    bad = check_self_contained(coll)
    if bad:
        raise SystemExit("built roles reach outside their folder:\n  " + "\n  ".join(bad))
    os.makedirs(os.path.join(coll, "meta"))
    shutil.copy2(os.path.join(ROOT, "collection", "meta", "runtime.yml"), os.path.join(coll, "meta", "runtime.yml"))
    shutil.copy2(COLLECTION_README, os.path.join(coll, "README.md"))
    shutil.copy2(os.path.join(ROOT, "LICENSE"), os.path.join(coll, "LICENSE"))  # the GPL-3.0 text every header names
    shutil.copy2(os.path.join(ROOT, "collection", "CHANGELOG.md"), os.path.join(coll, "CHANGELOG.md"))
    shutil.copytree(os.path.join(ROOT, "collection", "changelogs"), os.path.join(coll, "changelogs"),
                    ignore=shutil.ignore_patterns(".plugin-cache.yaml"))
    galaxy = read_galaxy()
    used = used_dependencies(coll)
    if galaxy["dependencies"] != used:
        raise SystemExit("collection/galaxy.yml declares the dependencies {} but the built collection uses {} (with "
                         "the versions the pinned ansible package installs): write those into galaxy.yml".format(
                             json.dumps(galaxy["dependencies"], sort_keys=True), json.dumps(used, sort_keys=True)))
    galaxy["version"] = version(str(galaxy["version"]))
    with open(os.path.join(coll, "galaxy.yml"), "w", encoding="utf-8") as handle:
        handle.write("---\n# collection/galaxy.yml with the built version (scripts/build-collection.py).\n")
        handle.write(yaml.safe_dump(galaxy, sort_keys=False, width=110))
    if os.path.exists(SANITY_IGNORE):
        lines = []
        for line in open(SANITY_IGNORE, encoding="utf-8"):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            path, rest = line.split(" ", 1)
            # A path with * stands for every built file it matches (roles/*/files/*).
            matched = sorted(os.path.relpath(p, coll) for p in glob.glob(os.path.join(coll, path)) if os.path.isfile(p))
            if not matched:
                raise SystemExit(f"{SANITY_IGNORE}: {path} matches no file of the collection")
            lines += [f"{p} {rest}" for p in matched]
        core = ".".join(__import__("ansible.release").release.__version__.split(".")[:2])
        os.makedirs(os.path.join(coll, "tests", "sanity"), exist_ok=True)
        with open(os.path.join(coll, "tests", "sanity", f"ignore-{core}.txt"), "w", encoding="utf-8") as handle:
            handle.writelines(lines)
    print(f"built {FQ} {galaxy['version']} in {os.path.relpath(coll, ROOT)}")
    print("  dependencies: " + (", ".join(f"{k} {v}" for k, v in galaxy["dependencies"].items()) or "none"))
    print(f"  {len(inv.modules)} modules, {len(inv.module_utils) + sum(map(len, inv.module_util_packages.values()))} module_utils, {len(inv.filters)} filters, "
          f"{len(inv.lookups)} lookups, {len(inv.actions)} actions, {len(inv.roles)} roles "
          f"({sum(1 for r in includes.values() if r)} include others), {len(playbooks)} playbooks")
    if tarball:
        for old in os.listdir(out):
            if old.startswith(f"{NAMESPACE}-{NAME}-") and old.endswith(".tar.gz"):
                os.remove(os.path.join(out, old))
        galaxy_bin = os.path.join(os.path.dirname(sys.executable), "ansible-galaxy")
        subprocess.run([galaxy_bin if os.path.exists(galaxy_bin) else "ansible-galaxy", "collection", "build",
                        "--force", "--output-path", out, coll], check=True)
    return coll


def commit_tree(coll, repo, ref):
    """The built tree as one commit on ``ref`` (a branch or tag name) of the git repository ``repo``,
    with no parent and no work tree touched: what ``ansible-galaxy collection install
    git+<repo>,<ref>`` installs (galaxy.yml at the commit's root). Returns the commit."""
    env = dict(os.environ, GIT_INDEX_FILE=os.path.join(os.path.dirname(coll), ".collection-index"),
               GIT_AUTHOR_NAME="testbed build", GIT_AUTHOR_EMAIL="build@testbed.invalid",
               GIT_COMMITTER_NAME="testbed build", GIT_COMMITTER_EMAIL="build@testbed.invalid")

    def run(*args):
        return subprocess.run(["git", "--git-dir", repo, "--work-tree", coll, *args], env=env, check=True,
                              capture_output=True, text=True).stdout.strip()

    if os.path.exists(env["GIT_INDEX_FILE"]):
        os.remove(env["GIT_INDEX_FILE"])
    run("add", "--all", "--force", ".")
    tree = run("write-tree")
    source = git("rev-parse", "HEAD") or "a tree without git"
    with open(os.path.join(coll, "galaxy.yml"), encoding="utf-8") as handle:
        built = yaml.safe_load(handle)["version"]
    commit = run("commit-tree", tree, "-m", f"{FQ} {built}, built from {source} by scripts/build-collection.py")
    kind = "tags" if re.match(r"^collection-v\d+\.\d+\.\d+$", ref) else "heads"
    run("update-ref", f"refs/{kind}/{ref}", commit)
    os.remove(env["GIT_INDEX_FILE"])
    return commit


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "collection"),
                        help="build directory (default build/collection)")
    parser.add_argument("--no-tarball", action="store_true", help="only the collection tree, no ansible-galaxy build")
    parser.add_argument("--git-ref", metavar="REF",
                        help="also commit the built tree as REF (a branch; a tag when REF is collection-v<semver>) "
                             "for `ansible-galaxy collection install git+<repository>,REF` (docs/collection.md)")
    parser.add_argument("--git-repo", metavar="GIT_DIR", default=os.path.join(ROOT, ".git"),
                        help="the repository that gets --git-ref (default: this one's)")
    args = parser.parse_args(argv)
    coll = build(os.path.abspath(args.out), tarball=not args.no_tarball)
    if args.git_ref:
        commit = commit_tree(coll, os.path.abspath(args.git_repo), args.git_ref)
        print(f"  committed as {args.git_ref} ({commit[:12]}) in {args.git_repo}")


if __name__ == "__main__":
    main()
