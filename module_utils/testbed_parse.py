# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared machinery for the benchmark-output parsers.

Every parser in ``module_utils/testbed_parse_<tool>.py`` is a pure function
``parse(text, source="<content>", **options) -> dict`` built on the helpers here.
It never touches the host, so pytest imports it directly.

A parse result is a plain dict::

    {
        "tool": "httperf",
        "source": "/path/or/<content>",
        "metrics": {"response_time_ms": 1.2, ...},   # flat, unit in each name, None = not given
        "valid": True,                                # verdict on the measurement itself
        "reasons": [],                                # sentences explaining valid=False
        "warnings": [],                               # odd but not disqualifying
        "details": {...},                             # optional structured extras (per stream, per job…)
    }

Input that is not a usable report of the tool (empty, truncated, another tool's
output, usage text, nan/inf numbers) raises :class:`ParseError`, whose message
names the tool, the source and what is wrong.  The thin modules turn that into
``fail_json``; they never let a traceback or a made-up number through.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import os
import re
import tempfile

# A number as C's printf writes it, including the non-finite spellings some tools
# print when they divide by a zero elapsed time.  Patterns accept them so that
# the parser can reject them with a precise message instead of "no match".
NUM = r"(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf(?:inity)?|nan)(?:\(\w*\))?)"
INT = r"(?:\d+)"


class ParseError(Exception):
    """Raised when a tool's output cannot be parsed into trustworthy metrics."""

    def __init__(self, tool, source, message):
        self.tool = tool
        self.source = source
        self.detail = message
        super(ParseError, self).__init__("%s output %s: %s" % (tool, source, message))


def to_number(value, tool, source, field, integer=False):
    """Convert a matched token to int/float, rejecting nan/inf and junk.

    ``field`` names the metric in the error message.
    """
    if value is None:
        raise ParseError(tool, source, "no value for %s" % field)
    if isinstance(value, bool):
        raise ParseError(tool, source, "%s is a boolean, not a number" % field)
    if isinstance(value, (int, float)):
        number = value
    else:
        text = str(value).strip()
        try:
            number = int(text) if integer and re.match(r"^[-+]?\d+$", text) else float(text)
        except ValueError:
            raise ParseError(tool, source, "%s is %r, not a number" % (field, text)) from None
    if isinstance(number, float) and (math.isnan(number) or math.isinf(number)):
        raise ParseError(
            tool, source,
            "%s is %s (the tool divided by a zero or undefined quantity); the run has no usable value"
            % (field, value))
    if integer:
        if isinstance(number, float) and not number.is_integer():
            raise ParseError(tool, source, "%s is %r, expected a whole number" % (field, value))
        number = int(number)
    return number


def require_text(text, tool, source):
    """Reject missing or blank input up front."""
    if text is None:
        raise ParseError(tool, source, "no output given")
    if not isinstance(text, str):
        try:
            text = text.decode("utf-8", "replace")
        except AttributeError:
            raise ParseError(tool, source, "output is a %s, expected text" % type(text).__name__) from None
    if not text.strip():
        raise ParseError(tool, source, "output is empty (the tool printed nothing: bad option, crash, or wrong file?)")
    return text


def search(pattern, text, tool, source, what, flags=re.MULTILINE):
    """re.search that raises ParseError naming the missing anchor ``what``."""
    match = re.search(pattern, text, flags)
    if match is None:
        raise ParseError(tool, source, "missing %s (truncated output, or not %s output?)" % (what, tool))
    return match


# ---------------------------------------------------------------------------
# JSON outputs (iperf3 -J, fio --output-format=json): tools may print text
# lines before the document, concatenate several documents, stop mid-document
# or print nan; one decoder handles all of that for every JSON parser.
# ---------------------------------------------------------------------------

_JSON_OPEN_LINE = re.compile(r"^\{[ \t]*\r?$", re.MULTILINE)
_JSON_NONFINITE = re.compile(r"-?(?:nan|inf)", re.IGNORECASE)


class _NonFinite(ValueError):
    pass


def _reject_constant(name):
    raise _NonFinite(name)


def _json_ends_early(text, start):
    """True when the document opened at ``start`` never closes (the text stops inside it)."""
    depth = 0
    in_string = escaped = False
    for char in text[start:]:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return False
    return True


def json_documents(text, tool, source, nan_hint=""):
    """Decode the JSON documents in a tool's stdout.

    Documents start at a line that is only ``{`` (or at the first character when
    the text starts with ``{``); text lines around them are kept as diagnostics.
    Returns a dict: ``documents`` (list of ``(document, start, end)`` offsets),
    ``skipped`` (non-JSON lines before/between documents), ``trailing`` (text after
    the last document), ``truncated`` (the text stops inside a document) and
    ``invalid`` (why a ``{`` line did not start a document, or None).
    nan/inf numbers raise ParseError (``nan_hint`` says which versions print them).
    """
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    found = {"documents": [], "skipped": [], "trailing": "", "truncated": False, "invalid": None}
    starts = [m.start() for m in _JSON_OPEN_LINE.finditer(text)]
    stripped = text.lstrip()
    if stripped.startswith("{") and (len(text) - len(stripped)) not in starts:
        starts.insert(0, len(text) - len(stripped))
    pos = 0
    for start in starts:
        if start < pos:
            continue
        found["skipped"].extend(line.strip() for line in text[pos:start].splitlines() if line.strip())
        try:
            document, end = decoder.raw_decode(text, start)
        except _NonFinite as exc:
            raise ParseError(tool, source, "a number in the JSON is %s%s; the run has no usable value"
                             % (exc, nan_hint)) from None
        except ValueError as exc:
            err_pos = getattr(exc, "pos", None)
            if err_pos is not None and _JSON_NONFINITE.match(text, err_pos):
                raise ParseError(
                    tool, source, "a number is %r at line %d%s; the run has no usable value"
                    % (_JSON_NONFINITE.match(text, err_pos).group(0), text.count("\n", 0, err_pos) + 1,
                       nan_hint)) from None
            if _json_ends_early(text, start):
                found["truncated"] = True
                pos = len(text)
                break
            # a "{" line that does not start a valid document: keep looking
            found["invalid"] = found["invalid"] or "%s at line %d" % (
                getattr(exc, "msg", exc), text.count("\n", 0, err_pos or 0) + 1)
            line_end = text.find("\n", start)
            found["skipped"].append(text[start:line_end if line_end >= 0 else len(text)].strip())
            pos = line_end + 1 if line_end >= 0 else len(text)
            continue
        found["documents"].append((document, start, end))
        pos = end
    found["trailing"] = text[pos:]
    return found


def new_result(tool, source):
    return {
        "tool": tool,
        "source": source,
        "metrics": {},
        "valid": True,
        "reasons": [],
        "warnings": [],
        "details": {},
    }


def invalidate(result, reason):
    """Mark a result invalid, keeping every reason (no duplicates)."""
    result["valid"] = False
    if reason not in result["reasons"]:
        result["reasons"].append(reason)


def warn(result, message):
    if message not in result["warnings"]:
        result["warnings"].append(message)


# Unit suffixes understood in metric names, longest first.  Used by the result
# store to publish an explicit unit beside every metric.
UNIT_SUFFIXES = (
    ("_bytes_per_s", "B/s"),
    ("_bytes_s", "B/s"),
    ("_per_s", "1/s"),
    ("_kib_s", "KiB/s"),
    ("_kb_s", "KB/s"),
    ("_mb_s", "MB/s"),
    ("_mib_s", "MiB/s"),
    ("_gb_s", "GB/s"),
    ("_per_min", "1/min"),
    ("_gflops", "GFLOP/s"),
    ("_gups", "GUP/s"),
    ("_bps", "bit/s"),
    ("_gbps", "Gbit/s"),
    ("_bytes", "B"),
    ("_pct", "%"),
    ("_percent", "%"),
    ("_ms", "ms"),
    ("_us", "us"),
    ("_ns", "ns"),
    ("_s", "s"),
    ("_mib", "MiB"),
    ("_kib", "KiB"),
    ("_iops", "1/s"),
    ("_inpps", "1/s"),
    ("_outpps", "1/s"),
    ("_cps", "1/s"),
    ("_inbytes", "B"),
    ("_outbytes", "B"),
)

# Statistic qualifiers that may follow the unit (``interval_bps_min``).
STAT_QUALIFIERS = ("_min", "_max", "_mean", "_avg", "_median", "_stdev")


def unit_of(metric_name):
    """Unit implied by a metric name's suffix; 'count' for plain counters."""
    for suffix, unit in UNIT_SUFFIXES:
        if metric_name.endswith(suffix):
            return unit
    for qualifier in STAT_QUALIFIERS:
        if metric_name.endswith(qualifier):
            return unit_of(metric_name[:-len(qualifier)])
    return "count"


# Temp files of the atomic writes start with this (then rename to the real name).
TEMP_PREFIX = ".tmp-"


def write_atomic(path, write, suffix="", mode=None):
    """``write(handle)`` into a temp file beside ``path``, fsync, rename, fsync of the directory. The
    file gets ``mode``, or the one a plain open() would give it (0666 less the umask)."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        os.makedirs(directory)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=suffix, dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None:  # mkstemp creates 0600
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.rename(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    fsync_dir(directory)


def write_text_atomic(path, text, mode=None):
    """Write ``text`` to ``path`` via a temp file + rename (``mode``: as write_atomic)."""
    write_atomic(path, lambda handle: handle.write(text), "", mode)


def write_json_atomic(path, document, mode=None):
    """Write ``document`` as JSON to ``path`` via a temp file + rename (``mode``: as write_atomic)."""
    def write(handle):
        json.dump(document, handle, indent=2, sort_keys=True)
        handle.write("\n")
    write_atomic(path, write, ".json", mode)


def fsync_dir(directory):
    """fsync a directory, so that a rename into it survives a crash (no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------
# The thin-module runner shared by library/<tool>_parse.py
# ---------------------------------------------------------------------------

PARSE_ARGUMENT_SPEC = dict(
    src=dict(type="path"),
    content=dict(type="str"),
    dest=dict(type="path"),
    keep_raw=dict(type="bool", default=True),
)


def run_parse_module(tool, parse_func, extra_spec=None, option_names=()):
    """Entry point of every ``<tool>_parse`` module.

    Reads ``src`` (a file on the target) or ``content``, calls ``parse_func``,
    optionally writes the result JSON to ``dest`` and returns it as
    ``ansible_facts.<tool>``.  Parser errors become ``fail_json`` naming the
    tool, the source and the problem.
    """
    from ansible.module_utils.basic import AnsibleModule

    spec = dict(PARSE_ARGUMENT_SPEC)
    spec.update(extra_spec or {})
    module = AnsibleModule(
        argument_spec=spec,
        mutually_exclusive=[("src", "content")],
        required_one_of=[("src", "content")],
        supports_check_mode=True,
    )
    params = module.params
    options = dict((name, params[name]) for name in option_names)
    parse_and_exit(module, tool, parse_func, options)


def parse_and_exit(module, tool, parse_func, options):
    """Read ``src``/``content`` of a parse module, parse, write ``dest``, exit.

    Shared by every ``<tool>_parse`` module and ``tool_parse``.
    """
    params = module.params
    if params["src"] is not None:
        source = params["src"]
        try:
            with open(source, "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
        except (IOError, OSError) as exc:
            module.fail_json(msg="%s output %s: cannot read src: %s" % (tool, source, exc), tool=tool, source=source)
    else:
        source = "<content>"
        text = params["content"]

    try:
        result = parse_func(text, source=source, **options)
    except ParseError as exc:
        module.fail_json(msg=str(exc), tool=tool, source=source)

    if params["keep_raw"]:
        result["raw"] = text
    changed = False
    if params["dest"] and not module.check_mode:
        write_json_atomic(params["dest"], result)
        changed = True
    # ``warnings`` is reserved by Ansible (passing it to exit_json is deprecated in
    # ansible-core 2.19): show each parser warning through module.warn; the list
    # itself stays in ansible_facts.<tool>.warnings.
    for message in result["warnings"]:
        module.warn("%s output %s: %s" % (tool, source, message))
    top_level = dict((key, value) for key, value in result.items() if key != "warnings")
    module.exit_json(changed=changed, ansible_facts={tool: result}, **top_level)
