# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run parameters: what makes two runs comparable (used by ``testbed_results.open_run`` to decide resume).

Pure functions, no file access.
"""

import json
import re


def canonical_json(value):
    """One text per value: sorted keys, no spaces, NaN refused (plan hashes and parameter comparison)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


# A number written as text, in JSON's own syntax ("100", "-0.5", "1e3"; not "010", "0x10", " 1 2").
_NUMBER_TEXT = re.compile(r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$")


def comparable_parameters(value):
    """``run_parameters`` in the form two runs are compared in.

    Playbooks build run_parameters with Jinja, so the same setting can arrive as
    ``100`` (group_vars), ``"100"`` (``-e key=100``) or ``100.0`` (``| float``).
    To make the same inventory always compare equal:

    * a string holding a number in JSON syntax (surrounding blanks ignored) is
      that number: ``"100"`` == ``100``, ``"0.50"`` == ``0.5``, ``"1e3"`` == ``1000``;
      ``"010"``, ``"0x10"``, ``"1 000"`` and ``""`` stay strings;
    * a float with no fraction is the integer: ``100.0`` == ``100``;
    * booleans stay booleans (``true`` != ``"true"`` != ``1``), null stays null,
      other strings are compared exactly, lists keep their order, mapping keys are text.

    The stored run.json keeps the parameters as given; only the comparison uses this form.
    """
    if isinstance(value, dict):
        return {str(key): comparable_parameters(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [comparable_parameters(item) for item in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        text = value.strip()
        if not _NUMBER_TEXT.match(text):
            return value
        value = float(text) if any(c in text for c in ".eE") else int(text)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    return value


_ABSENT = object()


def parameter_changes(old, new, prefix=""):
    """Differences between two run_parameters mappings (compared with
    :func:`comparable_parameters`) as ``[(dotted key, old, new)]``; a missing key is
    shown as ``(absent)``."""
    old = comparable_parameters(old if old is not None else {})
    new = comparable_parameters(new if new is not None else {})
    changes = []

    def walk(a, b, path):
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                walk(a.get(key, _ABSENT), b.get(key, _ABSENT), f"{path}.{key}" if path else key)
        elif a is _ABSENT or b is _ABSENT or canonical_json(a) != canonical_json(b):
            changes.append((path or "run_parameters", a, b))

    walk(old, new, prefix)
    return changes


def show_value(value):
    return "(absent)" if value is _ABSENT else canonical_json(value)


def describe_changes(changes):
    """``key: old -> new; ...`` for :func:`parameter_changes`."""
    return "; ".join(f"{key}: {show_value(old)} -> {show_value(new)}" for key, old, new in changes)
