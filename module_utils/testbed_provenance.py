# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a run came from: the testbed's own version, the command, the controller's software.

Pure apart from the git queries (each bounded to 10 s). Used on the controller
by the ``testbed_provenance`` lookup (roles/testbed_sweep), which hands it the
running ansible-playbook's argv and extra vars; the result store keeps it in
run.json and in every point document, and the report prints it.
"""

import os
import platform
import subprocess

PROVENANCE_KEYS = ("testbed", "command", "extra_vars", "cwd", "ansible_core_version", "collections",
                   "python_version", "controller")


def _git(root, *args):
    try:
        proc = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, timeout=10,
                              env=dict(os.environ, LC_ALL="C", GIT_OPTIONAL_LOCKS="0"), check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def testbed_version(root, galaxy_version=None):
    """``{version, commit, dirty, source}`` of the testbed code under ``root``.

    In a git checkout: the commit, whether tracked files differ from it
    (``dirty``; untracked files do not count) and ``git describe``. Elsewhere (an
    installed collection): the collection's version, commit and dirty unknown.
    """
    commit = _git(root, "rev-parse", "HEAD")
    if commit is None:
        return {"version": galaxy_version, "commit": None, "dirty": None, "source": "installed"}
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    return {"version": _git(root, "describe", "--tags", "--always", "--dirty") or commit[:12], "commit": commit,
            "dirty": None if status is None else bool(status), "source": "git"}


def provenance(root, argv, extra_vars, ansible_core_version, collections=None, galaxy_version=None):
    """The provenance mapping stored with a run (keys: PROVENANCE_KEYS); JSON-safe."""
    return {
        "testbed": testbed_version(root, galaxy_version),
        "command": [str(arg) for arg in argv],
        "extra_vars": [str(item) for item in extra_vars or ()],
        "cwd": os.getcwd(),
        "ansible_core_version": ansible_core_version,
        "collections": dict(sorted((collections or {}).items())),
        "python_version": platform.python_version(),
        "controller": platform.node(),
    }


def describe(prov):
    """One line for a report header, or None when there is no provenance."""
    if not isinstance(prov, dict) or not prov:
        return None
    testbed = prov.get("testbed") or {}
    if testbed.get("commit"):
        state = {True: "with uncommitted changes", False: "clean", None: "state unknown"}[testbed.get("dirty")]
        code = f"testbed {testbed.get('version')} (commit {testbed['commit'][:12]}, {state})"
    else:
        code = f"testbed {testbed.get('version') or 'version unknown'} (installed, no git)"
    command = " ".join(prov.get("command") or []) or "unknown"
    return (f"{code}; ansible-core {prov.get('ansible_core_version') or '?'}, Python {prov.get('python_version') or '?'}"
            f" on {prov.get('controller') or '?'}; command: {command}")
