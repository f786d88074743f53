# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jain's fairness index: the one implementation in the testbed.

Pure Python with no Ansible import, imported everywhere as
``ansible.module_utils.testbed_stats.fairness`` (modules, and on the controller
through the one import convention, docs/architecture.md "Python imports");
``testbed_stats.jain_index`` adds the filter's input checks and error messages.
"""

import math


def jain(values):
    """Jain's fairness index (sum x)^2 / (n * sum x^2) of non-negative shares.

    1 = perfectly even, 1/n = one takes all. Returns None when the index is
    undefined: no values, or all of them 0. Raises ValueError for a negative or
    non-finite value and TypeError for a value that is not a number, naming its
    position (``values[1] is -1; ...``).
    """
    data = []
    for index, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError("values[%d] is %r (%s), expected a number" % (index, value, type(value).__name__))
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            raise ValueError("values[%d] is %r, expected a finite number" % (index, value))
        if value < 0:
            raise ValueError("values[%d] is %r; the index is defined for non-negative shares" % (index, value))
        data.append(float(value))
    squares = math.fsum(v * v for v in data)
    if not data or squares == 0:
        return None
    return math.fsum(data) ** 2 / (len(data) * squares)
