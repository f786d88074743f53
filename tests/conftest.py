"""Make the repository's module_utils, library, action and filter plugins importable.

Ansible serves ``module_utils/`` as ``ansible.module_utils.<name>`` at run
time; the tests do the same by extending that package's search path.
"""
import glob
import os
import sys

import ansible.module_utils

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")

_MU = os.path.join(ROOT, "module_utils")
if _MU not in ansible.module_utils.__path__:
    ansible.module_utils.__path__.append(_MU)
for sub in ("library", "filter_plugins", "action_plugins", "connection_plugins", "scripts"):
    path = os.path.join(ROOT, sub)
    if path not in sys.path:
        sys.path.insert(0, path)
# Experiment-specific Python lives in its role (roles/<role>/library,
# module_utils, filter_plugins); Ansible loads those with the role.
for role_mu in sorted(glob.glob(os.path.join(ROOT, "roles", "*", "module_utils"))):
    if role_mu not in ansible.module_utils.__path__:
        ansible.module_utils.__path__.append(role_mu)
for role_dir in sorted(glob.glob(os.path.join(ROOT, "roles", "*", "library"))
                       + glob.glob(os.path.join(ROOT, "roles", "*", "filter_plugins"))):
    if role_dir not in sys.path:
        sys.path.append(role_dir)


def fixture_path(tool, name):
    return os.path.join(FIXTURES, tool, name)


def read_fixture(tool, name):
    with open(fixture_path(tool, name), "r", encoding="utf-8") as handle:
        return handle.read()
