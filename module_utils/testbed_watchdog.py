# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watchdog's sentences, in one place: the shared shell watchdog (WATCH_SCRIPT in testbed_sweep.py)
prints its finding, LVS's rounds (roles/lvs_compare/tasks/watch.yml) make theirs with
``watchdog_finding_text``, and a point's reason is ``watchdog_reason(finding)`` wherever it is made.

Module-safe (no import of Ansible's controller): the LVS point module (lvs_point) uses it on hosts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def watchdog_finding_text(seconds_in, down, misses, interval_s):
    """The watchdog's finding as WATCH_SCRIPT prints it after ``testbed-watchdog: ``: ``stopped the load N s in:
    NAME (SHOWN) ... did not answer M probes I s apart``. ``down``: ``[(name, shown)]`` of the silent targets
    (shown: ``ADDRESS``, ``ADDRESS port P`` or a device path). For a watchdog other than the shell's (LVS probes
    each real server through its own connection), so that both say the same sentence."""
    interval = float(interval_s)
    interval_text = "%d" % interval if interval == int(interval) else "%g" % interval
    return "stopped the load %d s in: %s did not answer %d probes %s s apart" % (
        max(0, int(seconds_in)), " ".join("%s (%s)" % (name, shown) for name, shown in down), int(misses), interval_text)


def watchdog_reason(finding):
    """A point's reason for a load its watchdog stopped: ``the watchdog <finding>``."""
    return "the watchdog %s" % finding
