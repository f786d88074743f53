# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""httperf's load split: ``{{ rate | httperf_processes(hosts, processes, max_rate_per_process) }}``.

The httperf processes one client host runs for a total rate over ``hosts`` client hosts
(module_utils/testbed_parse_httperf.py, ``processes_per_host``): ``processes`` as given, or with
``auto`` enough that none exceeds ``max_rate_per_process`` conn/s. roles/lvs_client, the LVS
fidelity check and playbooks/lab-nic-stress.yml all use this one rule.
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
from ansible.module_utils.testbed_parse_httperf import processes_per_host  # noqa: E402


def httperf_processes(rate, hosts, processes="auto", max_rate_per_process=1000):
    """httperf processes per client host for a total ``rate`` over ``hosts`` (``auto``: none above the cap)."""
    try:
        return processes_per_host(rate, hosts, processes, max_rate_per_process)
    except ValueError as exc:
        raise AnsibleFilterError("httperf_processes: %s" % exc) from None


class FilterModule:
    """httperf load split filter."""

    def filters(self):
        return {"httperf_processes": httperf_processes}
