# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sweep skeleton's filters: the functions of module_utils/testbed_sweep.py (and the load's command,
module_utils/testbed_load.py) as Jinja filters.

The code (and its documentation) is in those files; this file
only names the filters that roles/testbed_sweep and the experiments use.
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

from ansible.module_utils.testbed_load import parse_options, workload_command  # noqa: E402
from ansible.module_utils.testbed_sweep import (  # noqa: E402
    delta_seconds,
    sweep_outcome,
    sweep_overhead,
    sweep_plan,
    sweep_progress,
    sweep_result_lines,
    sweep_segments,
    sweep_unbuilt,
    sweep_unreachable_problems,
    workload_deadline,
    workload_result,
    workload_watch_argv,
    workload_watch_shown,
)


class FilterModule:
    """Sweep skeleton filters."""

    def filters(self):
        return {
            "sweep_plan": sweep_plan,
            "sweep_segments": sweep_segments,
            "sweep_progress": sweep_progress,
            "sweep_overhead": sweep_overhead,
            "sweep_result_lines": sweep_result_lines,
            "delta_seconds": delta_seconds,
            "workload_result": workload_result,
            "workload_deadline": workload_deadline,
            "workload_command": workload_command,
            "workload_parse_options": parse_options,
            "workload_watch_argv": workload_watch_argv,
            "workload_watch_shown": workload_watch_shown,
            "sweep_unbuilt": sweep_unbuilt,
            "sweep_unreachable_problems": sweep_unreachable_problems,
            "sweep_outcome": sweep_outcome,
        }
