# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vocabulary of the input checks (``module_utils/testbed_validate.py``): describing and converting values.

The constants of the argument-spec and constraint vocabulary, the two exceptions,
how a value is named in a sentence (:func:`describe`, "did you mean") and how an
operator's value converts to a spec type as Ansible converts it (:func:`convert`).
Pure functions; ``testbed_validate`` imports (and re-exports) every name.
"""

from __future__ import absolute_import, division, print_function

import difflib
import json
import math
import re

TYPES = ("str", "int", "float", "bool", "list", "dict", "path", "raw")
# Types of argument specs this validator does not check (Ansible's own validation does).
UNCHECKED_TYPES = ("jsonarg", "json", "bytes", "bits")
NUMERIC_CONSTRAINTS = ("minimum", "maximum", "exclusive_minimum", "exclusive_maximum", "integer")
LIST_CONSTRAINTS = ("min_items", "max_items", "unique")
TEXT_CONSTRAINTS = ("pattern", "pattern_meaning", "format", "allow_empty")
VALUE_CONSTRAINTS = ("not_in", "not_in_reason")
CONSTRAINTS = NUMERIC_CONSTRAINTS + LIST_CONSTRAINTS + TEXT_CONSTRAINTS + VALUE_CONSTRAINTS
FORMATS = {"ipv4": "an IPv4 address such as 10.0.0.1", "absolute_path": "an absolute path other than /"}
HOST_CHECKS = ("present", "ipv4", "ipv4_in_network", "equals", "differs")
# Keys of one entry point of argument_specs.yml (tells an entry point from an options mapping).
ENTRY_POINT_KEYS = {"options", "short_description", "description", "author", "version_added", "examples",
                    "seealso", "attributes"}

BOOLEANS_TRUE = ("y", "yes", "on", "1", "true", "t")
BOOLEANS_FALSE = ("n", "no", "off", "0", "false", "f")

TYPE_NAMES = {
    "str": "a string", "path": "a path (string)", "int": "an integer", "float": "a number",
    "bool": "a boolean", "list": "a list", "dict": "a mapping",
}
PLURAL_NAMES = {
    "str": "strings", "path": "paths", "int": "integers", "float": "numbers", "bool": "booleans",
    "list": "lists", "dict": "mappings",
}
EXAMPLE_VALUES = {"str": "text", "path": "/path", "int": 1, "float": 1.5, "bool": True, "dict": {}}
FIX = "in your inventory's group_vars or with -e"
DEFAULT_DOCS = "the experiment role's README.md"


class SpecError(Exception):
    """The experiment's argument spec or constraints are unusable (an author's mistake)."""


class _Bad(Exception):
    """A value that cannot be converted; ``got`` describes it, ``expected`` says what was wanted."""

    def __init__(self, got, expected):
        super(_Bad, self).__init__(got)
        self.got = got
        self.expected = expected


# --- describing values -----------------------------------------------------------------


def describe(value):
    """A short phrase for ``value`` as the operator wrote it: "the string '50,100'"."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "the boolean %s" % ("true" if value else "false")
    if isinstance(value, (int, float)):
        return "the number %s" % _num(value)
    if isinstance(value, str):
        if value == "":
            return "an empty string"
        return "the string %s" % _short(repr(value))
    if isinstance(value, (list, tuple)):
        if not value:
            return "an empty list"
        return "the list %s" % _short(json.dumps(list(value), default=str))
    if isinstance(value, dict):
        return "the mapping %s" % _short(json.dumps(value, default=str, sort_keys=True))
    return "a %s" % type(value).__name__


def _short(text, limit=80):
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _num(value):
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return "%.1f" % value
    return "%s" % value


def _did_you_mean(name, candidates, prefixes=()):
    """The text ' (did you mean X?)' from difflib, or '' when no candidate is close."""
    match = _close(name, candidates, prefixes)
    return " (did you mean %s?)" % " or ".join(match) if match else ""


def _close(name, candidates, prefixes=()):
    """The closest candidate (a list of at most one), comparing names without their common prefix."""
    name = str(name)
    strip = ""
    for prefix in sorted(prefixes, key=len, reverse=True):
        if name.startswith(prefix):
            strip = prefix
            break
    keyed = {}
    for cand in candidates:
        cand = str(cand)
        key = cand[len(strip):] if strip and cand.startswith(strip) else cand
        keyed.setdefault(key, cand)
    found = difflib.get_close_matches(name[len(strip):], list(keyed), n=1, cutoff=0.6)
    return [keyed[key] for key in found]


def _json_example(name, value):
    return "-e '%s'" % json.dumps({name: value})


# --- conversion ------------------------------------------------------------------------


def convert(value, kind):
    """``value`` converted to ``kind`` the way Ansible does, but strict for lists and mappings.

    Strings become numbers and booleans ("-e rate=50" gives the string "50");
    a string is never split into a list or parsed into a mapping. Raises
    :class:`_Bad` when the value cannot be one.
    """
    if kind in ("raw",) + UNCHECKED_TYPES:
        return value
    expected = TYPE_NAMES[kind]
    if kind in ("str", "path"):
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        raise _Bad(describe(value), expected)
    if kind == "int":
        if isinstance(value, bool):
            raise _Bad(describe(value), expected)
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            if math.isfinite(value) and value.is_integer():
                return int(value)
            raise _Bad(describe(value), "a whole number")
        if isinstance(value, str):
            text = value.strip()
            if re.match(r"^[+-]?\d+$", text):
                return int(text)
            if re.match(r"^[+-]?\d+\.0*$", text):
                return int(float(text))
            if _float_text(text) is not None:
                raise _Bad(describe(value), "a whole number")
        raise _Bad(describe(value), expected)
    if kind == "float":
        if isinstance(value, bool):
            raise _Bad(describe(value), expected)
        if isinstance(value, (int, float)):
            if isinstance(value, float) and not math.isfinite(value):
                raise _Bad(describe(value), "a finite number")
            return value
        if isinstance(value, str):
            number = _float_text(value.strip())
            if number is not None:
                return number
        raise _Bad(describe(value), expected)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, (str, int, float)):
            text = str(value).strip().lower()
            if text in BOOLEANS_TRUE or (not isinstance(value, str) and value == 1):
                return True
            if text in BOOLEANS_FALSE or (not isinstance(value, str) and value == 0):
                return False
        raise _Bad(describe(value), expected + " (true/false, yes/no)")
    if kind == "list":
        if isinstance(value, (list, tuple)):
            return list(value)
        raise _Bad(describe(value), expected)
    if kind == "dict":
        if isinstance(value, dict):
            return value
        raise _Bad(describe(value), expected)
    raise SpecError("unknown type %r" % kind)


def _float_text(text):
    try:
        number = float(text)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    if re.match(r"^[+-]?\d+$", text):
        return int(text)
    return number
