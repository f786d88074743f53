# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Statistics filters: the functions of module_utils/testbed_stats/core.py as Jinja filters.

    {{ results | metric_series('reply_rate_per_s', valid_only=true) | summary }}
    {{ docker_ratios | overall_index }}

The code (and its documentation) is in module_utils/testbed_stats/core.py; this file
only names the filters.
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

from ansible.module_utils.testbed_stats.core import (  # noqa: E402
    clip_interval,
    fidelity_check,
    jain_index,
    metric_series,
    non_negative_metric,
    overall_index,
    pct_change,
    pct_drop,
    ratio_to,
    summary,
    welch_test,
)


class FilterModule:
    """Statistics filters for testbed results."""

    def filters(self):
        return {
            "summary": summary,
            "pct_change": pct_change,
            "pct_drop": pct_drop,
            "ratio_to": ratio_to,
            "overall_index": overall_index,
            "welch_test": welch_test,
            "jain_index": jain_index,
            "metric_series": metric_series,
            "non_negative_metric": non_negative_metric,
            "clip_interval": clip_interval,
            "fidelity_check": fidelity_check,
        }
