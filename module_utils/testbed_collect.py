# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Collecting raw material from the hosts: sectioned output and clock offsets.

Pure functions, shared by every experiment that gathers several outputs from a
host in one command and compares times measured on different hosts.

The sectioned-output protocol
-----------------------------

A host prints everything one step needs in one command (one ``raw`` task, one
SSH round trip), each part under a header line::

    === ipvsadm-stats
    <the output of ipvsadm -Ln --stats --exact>
    === cpu
    <the CPU sampler's lines for the window>

A header is a whole line ``=== <name>``, the name made of ``a-z 0-9 _ . -``
(trailing blanks allowed). :func:`sections` on the controller splits the text
into ``{name: text}``: each section's text runs to the next header, without its
leading and trailing blank lines, with one final newline. Text before the first
header is dropped; a name that comes twice keeps its last section. A step that
may find its material left over from an earlier read can prefix the name
(``prev-cpu``): the protocol does not interpret names.

The controller's time line
--------------------------

Every host reports times on its own clock. The ``clock_offset`` action
measures each host's clock minus the controller's (``offset_s``) and how far
that estimate can be off (``uncertainty_s``). :func:`normalize_offsets` turns
those results into two plain mappings; :func:`to_controller_time` puts a host's
time on the controller's line (``t - offset``) and :func:`to_host_time` puts a
controller time on a host's clock (``t + offset``), e.g. to cut that host's
samples for a window measured elsewhere. A host without an offset counts as in
step with the controller (offset 0).
"""

import re

SECTION = re.compile(r"^=== (?P<name>[a-z0-9_.-]+)\s*$")


class CollectError(ValueError):
    """Unusable collect input (not a measurement problem); one sentence why."""


# ---------------------------------------------------------------------------
# Sectioned output
# ---------------------------------------------------------------------------

def sections(text):
    """Split ``=== name`` sectioned output into ``{name: text}`` (see the module's docstring)."""
    found = {}
    current = None
    lines = []
    for line in (text or "").replace("\r\n", "\n").split("\n"):
        match = SECTION.match(line)
        if match:
            if current is not None:
                found[current] = "\n".join(lines).strip("\n") + "\n"
            current, lines = match.group("name"), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        found[current] = "\n".join(lines).strip("\n") + "\n"
    return found


# ---------------------------------------------------------------------------
# Clock offsets
# ---------------------------------------------------------------------------

def normalize_offsets(clock_offsets, name="clock_offsets"):
    """``({host: offset_s}, {host: uncertainty_s})`` from clock offset results.

    ``clock_offsets`` is ``{host: {offset_s, uncertainty_s}}`` (the
    ``clock_offset`` action's results; a missing or null uncertainty is 0) or
    ``{host: offset_s}``; None or ``""`` means no offsets were measured. Raises
    CollectError naming ``name`` (and the host) when it is not a mapping or an
    offset is not a number of seconds.
    """
    if clock_offsets in (None, ""):
        return {}, {}
    if not isinstance(clock_offsets, dict):
        raise CollectError("%s must be a mapping {host: {offset_s, uncertainty_s}}, got %s"
                           % (name, type(clock_offsets).__name__))
    offsets, uncertainty = {}, {}
    for host, value in clock_offsets.items():
        entry = value if isinstance(value, dict) else {"offset_s": value}
        try:
            offsets[host] = float(entry.get("offset_s"))
        except (TypeError, ValueError):
            raise CollectError("%s[%s]: offset_s must be a number of seconds, got %r"
                               % (name, host, entry.get("offset_s"))) from None
        try:
            uncertainty[host] = float(entry.get("uncertainty_s") or 0.0)
        except (TypeError, ValueError):
            raise CollectError("%s[%s]: uncertainty_s must be a number of seconds, got %r"
                               % (name, host, entry.get("uncertainty_s"))) from None
    return offsets, uncertainty


def to_controller_time(t, offset):
    """A time read on a host's clock, on the controller's time line (``offset``: host minus controller; None = 0)."""
    return float(t) - float(offset or 0.0)


def to_host_time(t, offset):
    """A time on the controller's line, on the clock of the host whose ``offset`` is given (None = 0)."""
    return float(t) + float(offset or 0.0)
