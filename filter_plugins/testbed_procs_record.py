# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The process records' filters: the argv prefix with which a command records itself, and the shell stop
(module_utils/testbed_procs.py).

``{{ (dir ~ '/fio.json') | procs_record_argv }} + ['fio', ...]`` runs fio with its record written by
the shell that then execs it (no Python on the host); module ``testbed_procs`` stops it later only
while pid, start time, cmdline and boot still match - or, where there is no Python (a tool container),
``{{ dir | procs_stop_argv(['fio']) }}`` run through the same exec prefix.
"""
import os

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

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible.module_utils.testbed_procs import ProcsError, record_argv, stop_argv  # noqa: E402


def procs_record_argv(path):
    """``['sh', '-c', <record then exec>, path]``: put it before a command's argv."""
    try:
        return record_argv(path)
    except ProcsError as exc:
        raise AnsibleFilterError("procs_record_argv: %s" % exc) from None


def procs_stop_argv(directory, names=None, grace_s=10):
    """``['sh', '-c', <stop>, directory, grace_s, names...]``: the stop where Python is not (a container)."""
    try:
        return stop_argv(directory, names, grace_s)
    except ProcsError as exc:
        raise AnsibleFilterError("procs_stop_argv: %s" % exc) from None


class FilterModule:
    """Process record filters."""

    def filters(self):
        return {"procs_record_argv": procs_record_argv, "procs_stop_argv": procs_stop_argv}
