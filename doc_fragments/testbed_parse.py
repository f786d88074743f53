# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options shared by every <tool>_parse module."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  src:
    description:
      - Path of a file on the target holding the tool's raw output.
      - Mutually exclusive with O(content).
    type: path
  content:
    description:
      - The tool's raw output as text.
      - Mutually exclusive with O(src).
    type: str
  dest:
    description:
      - When given, the parse result is also written there as JSON (atomically).
    type: path
  keep_raw:
    description:
      - Return the raw text as C(raw) in the result so it can be stored beside the metrics.
    type: bool
    default: true
notes:
  - Output that is not a complete report of the tool (empty, truncated, usage text, another
    tool's output, nan/inf numbers) makes the module fail with a message naming the tool,
    the source and what is wrong.
  - Supports check mode; with O(dest) nothing is written in check mode.
"""
