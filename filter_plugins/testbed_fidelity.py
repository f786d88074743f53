# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fidelity filters: the functions of module_utils/testbed_stats/fidelity.py as Jinja filters.

    {{ [[hand1, harness1], [hand2, harness2], [hand3, harness3]] | fidelity(5) }}
    {{ testbed_sweep_documents | fidelity_from_points('baseline', 5, what='IOPS of fio') }}

The code (and its documentation) is in module_utils/testbed_stats/fidelity.py; this
file only names the filters.
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

from ansible.module_utils.testbed_stats.fidelity import (  # noqa: E402
    fidelity,
    fidelity_from_points,
    fidelity_more,
    fidelity_sentence,
    fidelity_value,
)


class FilterModule:
    """Fidelity filters for testbed results."""

    def filters(self):
        return {
            "fidelity": fidelity,
            "fidelity_from_points": fidelity_from_points,
            "fidelity_more": fidelity_more,
            "fidelity_sentence": fidelity_sentence,
            "fidelity_value": fidelity_value,
        }
