# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Topology filter: the experiments' pictures from an inventory's facts (playbooks/show-topology.yml).

    {{ groups | topology_facts(host_vars, defaults, nfv_topology) | topology_markdown(inventory name) }}

The code (and its documentation) is in module_utils/testbed_topology.py; this file only names the filter.
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

from ansible.module_utils.testbed_topology import topology_facts, topology_markdown, topology_vars  # noqa: E402


class FilterModule:
    """Topology filter."""

    def filters(self):
        return {"topology_facts": topology_facts, "topology_markdown": topology_markdown, "topology_vars": topology_vars}
