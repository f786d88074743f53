#!/usr/bin/env python3
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The editors' map of the one import convention: ``ansible.module_utils.<name>`` -> the repository's file.

The testbed's Python imports its shared libraries as ``ansible.module_utils.<name>``, the name
Ansible gives a module_utils file in a module (docs/architecture.md, "Python imports"). The files
live in ``module_utils/`` and ``roles/*/module_utils/``; an editor or a type checker looks for them
inside the installed ansible-core and does not find them. ``.config/import-map`` holds a partial stub
package (PEP 561: ``ansible-stubs`` with ``py.typed`` saying ``partial``): one relative symlink
``module_utils/<name>.pyi`` per shared file (``module_utils/<group>/<file>.pyi`` for the files of a
group folder), and nothing else, so every other ``ansible.*`` import
still goes to ansible-core. ``pyrightconfig.json`` puts it on pyright's / Pylance's extraPaths;
``make lint`` (scripts/check-imports.sh) runs pyright over the repository with missing imports as
errors.

    python scripts/import-map.py           write the links again (after adding a module_utils file)
    python scripts/import-map.py --check   exit 1 naming each missing, stale or foreign entry
"""
import argparse
import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def package(root=ROOT):
    """The partial stub package: .config/import-map/ansible-stubs (its py.typed, its module_utils/)."""
    return os.path.join(root, ".config", "import-map", "ansible-stubs")


def sources(root=ROOT):
    """{dotted name: path relative to root} of every shared library: module_utils/*.py, the files of
    its groups (module_utils/<group>/*.py, a package: ``<group>`` for its __init__.py, ``<group>.<file>``
    for the others) and roles/*/module_utils/*.py."""
    out = {}
    for path in sorted(glob.glob(os.path.join(root, "module_utils", "*.py"))
                       + glob.glob(os.path.join(root, "module_utils", "*", "*.py"))
                       + glob.glob(os.path.join(root, "roles", "*", "module_utils", "*.py"))):
        rel = os.path.relpath(path, root)
        parts = rel[:-3].split(os.sep)
        if parts[0] == "module_utils" and len(parts) == 3:  # a group's file
            if not os.path.isfile(os.path.join(root, "module_utils", parts[1], "__init__.py")):
                raise SystemExit(f"import-map: module_utils/{parts[1]}/ has no __init__.py: Ansible would not import it")
            name = parts[1] if parts[2] == "__init__" else f"{parts[1]}.{parts[2]}"
        else:
            name = parts[-1]
            if name == "__init__":
                continue
        if name in out:
            raise SystemExit(f"import-map: {name}.py is in both {out[name]} and {rel}: "
                             "Ansible keeps one of them; rename one")
        out[name] = rel
    return out


def wanted(root=ROOT):
    """{link path inside the stub package's module_utils/: its relative target} the map must hold
    (``<name>.pyi``, a group's ``<group>/__init__.pyi`` and ``<group>/<file>.pyi``)."""
    stubs = os.path.join(package(root), "module_utils")
    out = {}
    for name, rel in sources(root).items():
        if rel.startswith("module_utils" + os.sep) and rel.count(os.sep) == 2:
            entry = os.path.join(*rel.split(os.sep)[1:]) + "i"
        else:
            entry = f"{name}.pyi"
        out[entry] = os.path.relpath(os.path.join(root, rel), os.path.dirname(os.path.join(stubs, entry)))
    return out


def _entries(stubs):
    """The map's entries (files, and the files inside its group folders), relative to stubs."""
    out = []
    for entry in sorted(os.listdir(stubs)) if os.path.isdir(stubs) else []:
        path = os.path.join(stubs, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            out.extend(os.path.join(entry, inner) for inner in sorted(os.listdir(path)))
        else:
            out.append(entry)
    return out


def problems(root=ROOT):
    """One sentence per entry of the map that is missing, stale or not ours."""
    stubs = os.path.join(package(root), "module_utils")
    marker = os.path.join(package(root), "py.typed")
    out = []
    if not os.path.isfile(marker) or open(marker, encoding="utf-8").read() != "partial\n":
        out.append(f"{os.path.relpath(marker, root)} must exist and say 'partial' (else ansible.errors and the "
                   "rest of ansible-core stop resolving)")
    want = wanted(root)
    have = _entries(stubs)
    for entry in have:
        path = os.path.join(stubs, entry)
        if entry not in want:
            out.append(f"{entry} is in the map but no module_utils/{entry[:-1]} exists: remove it")
        elif not os.path.islink(path) or os.readlink(path) != want[entry]:
            out.append(f"{entry} must be a symlink to {want[entry]}")
    for entry in sorted(set(want) - set(have)):
        dotted = entry[:-4].replace(os.sep, ".").replace(".__init__", "")
        out.append(f"{entry} is missing (ansible.module_utils.{dotted} would not resolve in an editor)")
    return out


def write(root=ROOT):
    """Write the map again: the marker and one link per shared library, stale entries removed."""
    stubs = os.path.join(package(root), "module_utils")
    os.makedirs(stubs, exist_ok=True)
    with open(os.path.join(package(root), "py.typed"), "w", encoding="utf-8") as handle:
        handle.write("partial\n")
    want = wanted(root)
    for entry in _entries(stubs):
        if entry not in want or not os.path.islink(os.path.join(stubs, entry)):
            os.remove(os.path.join(stubs, entry))
    for folder in sorted(os.listdir(stubs)):
        path = os.path.join(stubs, folder)
        if os.path.isdir(path) and not os.path.islink(path) and not os.listdir(path):
            os.rmdir(path)
    for entry, target in want.items():
        path = os.path.join(stubs, entry)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.islink(path) and os.readlink(path) == target:
            continue
        if os.path.lexists(path):
            os.remove(path)
        os.symlink(target, path)
    return len(want)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report what is missing or stale; change nothing")
    args = parser.parse_args(argv)
    if args.check:
        found = problems()
        for sentence in found:
            print(f"import-map: {sentence}; run: python scripts/import-map.py", file=sys.stderr)
        if not found:
            print(f"import-map: {len(wanted())} shared libraries mapped in .config/import-map")
        return 1 if found else 0
    print(f"import-map: {write()} links in .config/import-map/ansible-stubs/module_utils")
    return 0


if __name__ == "__main__":
    sys.exit(main())
