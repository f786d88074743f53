# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lookup: the provenance of the running ansible-playbook (roles/testbed_sweep stores it with every run)."""

DOCUMENTATION = r"""
---
name: testbed_provenance
short_description: The testbed's version, the command line and the controller's software of this run
description:
  - Returns one mapping - C(testbed) (C(version), C(commit), C(dirty) - tracked files changed since the commit -
    and C(source), C(git) or C(installed)), C(command) (the ansible-playbook command line), C(extra_vars) (every
    C(-e) as given), C(cwd), C(ansible_core_version), C(collections) (name -> version of those the testbed uses),
    C(python_version) and C(controller) (host name).
  - No secret is returned - in C(command) and C(extra_vars) the value of every variable with a secret's name
    (Ansible's password variables, names with password, secret, token, key, ...) and every vault-encrypted value
    is C(<redacted>); of C(-e @file) only the file's name is kept (module_utils/testbed_results/provenance.py has the rule).
  - Runs on the controller, inside ansible-playbook (a lookup sees its command line; a module does not).
  - roles/testbed_sweep passes it to the result store, which keeps it in C(run.json) and in every point document;
    the report prints it in its header.
options:
  _terms:
    description: Nothing; the lookup takes no terms.
    required: false
"""

EXAMPLES = r"""
- name: Show where this run comes from
  ansible.builtin.debug:
    msg: "{{ lookup('testbed_provenance') }}"
"""

RETURN = r"""
_raw:
  description: One provenance mapping.
  type: list
  elements: dict
"""

import importlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

# One import convention (docs/architecture.md, "Python imports"): pure shared
# libraries live in a module_utils/ folder - the repository's, or a role's own -
# and are imported as ansible.module_utils.<name>, the name Ansible gives them in a
# module. On the controller every module_utils/ folder one to three levels above
# this file is put on that package's path; a collection build rewrites the imports.
import ansible.module_utils  # noqa: E402

for _up in (1, 2, 3):
    _dir = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * _up, "module_utils"))
    if os.path.isdir(_dir) and _dir not in ansible.module_utils.__path__:
        ansible.module_utils.__path__.append(_dir)

from ansible import context  # noqa: E402
from ansible.module_utils.ansible_release import __version__ as ANSIBLE_CORE_VERSION  # noqa: E402
from ansible.module_utils.testbed_results.provenance import provenance  # noqa: E402
from ansible.plugins.lookup import LookupBase  # noqa: E402

# The collections the testbed's roles and playbooks call (versions from the installed ansible package).
USED_COLLECTIONS = ("community.general", "community.docker", "ansible.posix", "containers.podman")
# The code's root: the repository (roles/testbed_sweep/lookup_plugins/ is three levels below it).
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
# Built into the collection testbed.infra (scripts/build-collection.py) this file is plugins/lookup/,
# two levels below the collection's root and its MANIFEST.json: no git there, the collection's version.
MANIFEST = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "MANIFEST.json"))


def _collection_version():
    """The version of the installed collection this lookup belongs to, or None in the repository."""
    try:
        with open(MANIFEST, encoding="utf-8") as handle:
            return json.load(handle)["collection_info"]["version"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _collection_versions():
    """name -> version (MANIFEST.json) of the collections the testbed uses; null when one cannot be read."""
    versions = {}
    for name in USED_COLLECTIONS:
        namespace, collection = name.split(".")
        try:
            package = importlib.import_module(f"ansible_collections.{namespace}.{collection}")
            with open(os.path.join(list(package.__path__)[0], "MANIFEST.json"), encoding="utf-8") as handle:
                versions[name] = json.load(handle)["collection_info"]["version"]
        except (ImportError, OSError, ValueError, KeyError, IndexError):
            versions[name] = None
    return versions


class LookupModule(LookupBase):
    """Provenance of this ansible-playbook run (computed once per process)."""

    _cached = None

    def run(self, terms, variables=None, **kwargs):
        if LookupModule._cached is None:
            # The -e arguments as typed (strings, before Ansible parses them): provenance() redacts them and argv.
            # A vaulted value reaches them only inline (vault text, a !vault value in a YAML/JSON -e: redacted)
            # or in an @file (only its name is kept); a vault-encrypted object (one that arrived through the
            # vars) is redacted before it is ever turned into text - str() would decrypt it.
            extra = list(context.CLIARGS.get("extra_vars", ()) if context.CLIARGS else ())
            installed = _collection_version()
            # An installed collection is never asked to git (it may sit inside someone else's repository):
            # git -C /dev/null fails, and the provenance says "installed" with the collection's version.
            root = ROOT if installed is None else os.devnull
            LookupModule._cached = provenance(root, sys.argv, extra, ANSIBLE_CORE_VERSION, _collection_versions(),
                                              installed)
        return [dict(LookupModule._cached)]
