"""Every module_utils file a module imports (directly or through another) is module-safe: it imports
nothing of Ansible's controller (``ansible.errors``, ``ansible.plugins``, ``ansible.template`` ...),
not even inside ``try``.

A module that runs on the controller (``delegate_to: localhost``) runs under the controller's Python,
where such an import succeeds and pulls Ansible's controller code in beside the module's own
``ansible.module_utils`` payload, and the module dies decoding its parameters ("No module named
'ansible.module_utils.common.sentinel'"). That broke ``lvs_point`` once (testbed_lvs importing
testbed_sweep, which imports ``ansible.errors`` for the filters); only a real LVS run showed it."""

import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UTILS = {os.path.splitext(os.path.basename(p))[0]: p
         for p in glob.glob(os.path.join(ROOT, "module_utils", "*.py")) + glob.glob(os.path.join(ROOT, "roles", "*", "module_utils", "*.py"))}
# the groups (module_utils/<group>/: a package): <group> is its __init__.py, <group>.<file> the others
UTILS.update({os.path.basename(os.path.dirname(p)) + ("" if p.endswith("__init__.py") else "." + os.path.basename(p)[:-3]): p
              for p in glob.glob(os.path.join(ROOT, "module_utils", "*", "*.py"))})
MODULES = glob.glob(os.path.join(ROOT, "library", "*.py")) + glob.glob(os.path.join(ROOT, "roles", "*", "library", "*.py"))


def imports(path):
    """(module_utils names, controller imports) of one file: every import statement, also in try/if blocks."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    utils, controller = set(), []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if name.startswith("ansible.module_utils."):
                parts = name.split(".")[2:]
                utils.add(parts[0])  # a file, or a group's __init__.py (imported with any of its files)
                if len(parts) > 1:
                    utils.add(".".join(parts[:2]))
            elif name == "ansible" or (name.startswith("ansible.") and not name.startswith("ansible.module_utils")):
                controller.append(f"line {node.lineno}: {name}")
    return {u for u in utils if u in UTILS}, controller


def test_the_module_utils_of_every_module_import_nothing_of_the_controller():
    assert MODULES and UTILS
    problems = []
    for module in sorted(MODULES):
        seen, todo = set(), sorted(imports(module)[0])
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            more, controller = imports(UTILS[name])
            todo.extend(sorted(more - seen))
            problems.extend(f"{os.path.relpath(module, ROOT)} -> {name}.py {c}" for c in controller)
    assert not problems, "module_utils that modules import reach Ansible's controller:\n" + "\n".join(sorted(set(problems)))


def test_the_check_finds_a_controller_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("try:\n    from ansible.errors import AnsibleFilterError\nexcept ImportError:\n    pass\n"
                   "from ansible.module_utils.testbed_watchdog import watchdog_reason\n")
    utils, controller = imports(str(bad))
    assert utils == {"testbed_watchdog"} and controller == ["line 2: ansible.errors", "line 2: ansible.errors.AnsibleFilterError"]
