#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation of the clock_offset action (action_plugins/clock_offset.py does the work)."""

DOCUMENTATION = r"""
---
module: clock_offset
short_description: Measure how far a host's clock is from the controller's
description:
  - Runs C(date +%s.%N) on the host over the play's connection I(rounds) times, each
    bracketed by two readings of the controller's clock, and keeps the round with the
    shortest round trip (as NTP does). C(offset_s = remote - midpoint); the error is at
    most C(uncertainty_s), half that round trip.
  - Used to put times taken on different machines (load start and end on the clients,
    CPU samples, the director's counter reset) on one time line. A qemu guest's clock
    starts from a 1 s resolution RTC, so the lab's director VM is typically off by a
    fraction of a second; hardware without NTP can be off by much more.
  - Runs on the controller (an action plugin); the host needs only GNU C(date).
    Read-only; supports check mode.
version_added: "1.0.0"
author: Testbed contributors
options:
  rounds:
    description: Readings to take; the one with the shortest round trip is used.
    type: int
    default: 5
attributes:
  check_mode:
    description: Measures in check mode too (it only reads clocks).
    support: full
  action:
    description: The action plugin of the same name runs it (the controller's clock is read beside each round).
    support: full
notes:
  - The host's C(date) must print nanoseconds (C(%N)); busybox's does not and the task fails saying so.
"""

EXAMPLES = r"""
- name: Measure clock offsets before a sweep
  clock_offset:
    rounds: 5
  register: sweep_clock

- name: A host's time for a controller epoch
  ansible.builtin.debug:
    msg: "{{ controller_epoch | float + sweep_clock.offset_s }}"
"""

RETURN = r"""
offset_s:
  description: Host clock minus controller clock, in seconds.
  returned: success
  type: float
  sample: 0.4821
uncertainty_s:
  description: Bound of the error of offset_s (half the chosen round trip), in seconds.
  returned: success
  type: float
  sample: 0.012
rtt_s:
  description: Round trip of the chosen reading, in seconds.
  returned: success
  type: float
  sample: 0.024
samples:
  description: Readings taken.
  returned: success
  type: int
  sample: 5
"""
