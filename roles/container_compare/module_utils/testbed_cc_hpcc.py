# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""hpcc's HPL problem size N in the container comparison (roles/container_compare), from the memory.

HPL's matrix takes 8·N² bytes. As HPL users size it, N is the largest multiple of the block size NB
whose matrix fills a fraction (``container_compare_hpcc_memory_fraction``, 80 % by default) of the
memory hpcc can use - here the smallest of the measured variants, since every variant of a run
measures the same N (a comparison). What each variant can use (a *source* of memory):

* native: the container host's memory - ``container_compare_hpcc_memory_mb`` when the operator
  states it (so the plan knows it), else its MemTotal, read from /proc/meminfo when the run starts;
* docker, podman, lxc, lxd: the container host's memory, and the guest's memory limit
  (``runtime_<variant>_memory``) when one is set;
* kvm: the VM's memory (``runtime_kvm_memory_mb``).

The smallest memory of the run is the smallest source. On the controller, before any host is
touched, MemTotal is not known: N is then assumed from the sources that are known (an upper bound)
or, with none, left to the run (``auto``), and the plan says which. An explicit N must be a whole
number from NB up and its matrix must fit every known source; otherwise :func:`size` gives the
problem as one sentence (the bytes it needs, how to fix it).

Pure functions (tests/unit/test_filters_container_compare.py); the role's filter plugin
(filter_plugins/container_compare.py: ``cc_hpcc``, ``cc_hpcc_timeout_s``, ``cc_hpcc_note``,
``cc_memtotal_kib``) calls them.
"""

from __future__ import absolute_import, division, print_function

import math
import re

from ansible.module_utils.testbed_results.summary import format_duration

MIB = 1048576
GIB = 1073741824
# HPL's matrix: 8 bytes a double, N x N of them.
BYTES_PER_ELEMENT = 8
# The largest share of the memory the matrix may fill (auto): the guest needs the rest (its
# kernel, the servers, hpcc's other tests' arrays).
FRACTION_MAX = 0.95
N_MAX = 200000
# The estimate: HPL's 2/3·N³ flops at about 5 GFLOPS a process, plus the point's orchestration; the
# point's timeout is three times that plus 5 min, at least 30 min.
GFLOPS_PER_PROCESS = 5.0
ORCHESTRATION_S = 6.0
TIMEOUT_FACTOR = 3
TIMEOUT_MARGIN_S = 300
TIMEOUT_MIN_S = 1800
HOST_VARIANTS = ("native", "docker", "podman", "lxc", "lxd")
CONTAINERS = ("docker", "podman", "lxc", "lxd")
FIX = "in your inventory's group_vars or with -e"

_SIZE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z%]*)$")
# Suffixes of a runtime's memory limit: Docker, Podman and LXC take b/k/m/g (powers of 1024);
# LXD takes kB/MB/GB (powers of 1000), KiB/MiB/GiB and % of the host's memory.
_BINARY = {"": 1, "b": 1, "k": 1024, "kib": 1024, "m": MIB, "mib": MIB, "g": GIB, "gib": GIB,
           "t": GIB * 1024, "tib": GIB * 1024}
_DECIMAL = {"kb": 1000, "mb": 1000 ** 2, "gb": 1000 ** 3, "tb": 1000 ** 4}


class HpccError(ValueError):
    """Input the sizing cannot use (one sentence why)."""


def grouped(number):
    """A whole number with a space between thousands: 14 592."""
    return "{:,}".format(int(number)).replace(",", " ")


def _gib(nbytes):
    return "{:.2f} GiB".format(nbytes / float(GIB))


def whole_number(value):
    """``value`` as a whole number (an int, a whole float, digits), else None; never a boolean."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and re.match(r"^\s*[0-9]+\s*$", value):
        return int(value)
    return None


def _number(value):
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def memtotal_kib(meminfo):
    """MemTotal in KiB from the text of /proc/meminfo ("MemTotal:  16318412 kB")."""
    found = re.search(r"^MemTotal:\s+([0-9]+)\s*kB\s*$", meminfo or "", re.MULTILINE)
    if not found:
        raise HpccError("no 'MemTotal: <n> kB' line in /proc/meminfo's text")
    return int(found.group(1))


def limit_bytes(text, host_bytes=None, decimal_si=False):
    """A runtime's memory limit in bytes: None for no limit ("") or for a share (%) of an unknown host.

    ``decimal_si``: kB/MB/GB are powers of 1000 (LXD's units); elsewhere every suffix is a power of 1024.
    """
    text = "" if text is None else str(text).strip()
    if text == "":
        return None
    found = _SIZE.match(text)
    unit = found.group(2).lower() if found else None
    if unit == "%":
        return None if host_bytes is None else int(float(found.group(1)) / 100.0 * host_bytes)
    factor = (_DECIMAL.get(unit) if decimal_si else None) or _BINARY.get(unit) \
        or (_BINARY.get(unit[:-1]) if unit and unit.endswith("b") else None)
    if not found or factor is None:
        raise HpccError("{!r} is not a memory size such as 512m or 4g".format(text))
    return int(float(found.group(1)) * factor)


def auto_n(memory_bytes, fraction, nb):
    """The largest multiple of ``nb`` with 8·N² <= ``fraction`` x ``memory_bytes`` (0: not even NB fits)."""
    if memory_bytes is None or memory_bytes <= 0 or nb <= 0:
        return 0
    largest = math.isqrt(int(fraction * memory_bytes / BYTES_PER_ELEMENT))
    return largest - largest % nb


def estimate_s(n, p=1, q=1):
    """Seconds one hpcc point is planned to take: HPL's 2/3·N³ flops at 5 GFLOPS a process + orchestration.

    ``n`` None (not sized yet): the orchestration only."""
    n = whole_number(n)
    processes = max(1, (whole_number(p) or 1) * (whole_number(q) or 1))
    hpl = 0.0 if n is None else 2.0 / 3.0 * float(n) ** 3 / (GFLOPS_PER_PROCESS * 1e9 * processes)
    return hpl + ORCHESTRATION_S


def timeout_s(n, p=1, q=1):
    """The point's bound: three times its estimate plus 5 min, at least 30 min (a fixed 30 min cut
    study B's N = 45 000, about 3040 s at the estimate's speed, short)."""
    return int(max(TIMEOUT_MIN_S, TIMEOUT_FACTOR * estimate_s(n, p, q) + TIMEOUT_MARGIN_S))


def _sources(variants, memory, problems, checked):
    """The memories bounding the measured variants: [{who, what, bytes (None: not known yet)}]. The native
    variant and every container use the container host's memory; a container with a limit is bounded by
    that too, the KVM guest by its own memory."""
    memory = memory or {}
    names = [v.get("variant") if isinstance(v, dict) else v for v in variants or []]
    sources = []
    if any(v in HOST_VARIANTS for v in names):
        stated = whole_number(memory.get("host_mb"))
        measured = whole_number(memory.get("host_kib"))
        host = {"who": "the container host", "bytes": None, "what": "MemTotal"}
        if stated:
            host.update(bytes=stated * MIB, what="container_compare_hpcc_memory_mb")
            if measured is not None and stated * MIB > measured * 1024:
                problems.append(
                    "container_compare_hpcc_memory_mb is {} MiB, more than the container host has (MemTotal {} MiB): "
                    "give at most {} {}, or 0 to size hpcc's N from MemTotal.".format(
                        grouped(stated), grouped(measured // 1024), measured // 1024, FIX))
        elif measured is not None:
            host["bytes"] = measured * 1024
        sources.append(host)
        for variant in (v for v in names if v in CONTAINERS):
            setting = "runtime_{}_memory".format(variant)
            text = (memory.get("limits") or {}).get(variant)
            try:
                nbytes = limit_bytes(text, host["bytes"], decimal_si=variant == "lxd")
            except HpccError as exc:
                checked.append("{} is {}: {}.".format(setting, exc, "fix it " + FIX))
                continue
            if nbytes is not None or str(text or "").strip().endswith("%"):
                sources.append({"who": "the {} guest".format(variant), "bytes": nbytes,
                                "what": "{} {}".format(setting, str(text).strip())})
    if "kvm" in names:
        kvm = whole_number(memory.get("kvm_mib"))
        if kvm is None or kvm <= 0:
            checked.append("runtime_kvm_memory_mb is {!r}, not a whole number of MiB: fix it {}.".format(
                memory.get("kvm_mib"), FIX))
        else:
            sources.append({"who": "the kvm guest", "bytes": kvm * MIB, "what": "runtime_kvm_memory_mb"})
    return sources


def _label(source):
    return "{}'s {} MiB ({})".format(source["who"], grouped(source["bytes"] // MIB), source["what"])


def _settings(settings, problems, checked):
    """The hpcc settings, checked: (setting, nb, p, q, fraction, host_mb); a bad one is a problem and None
    (``checked``: the problems the role's argument spec and constraints report too)."""
    settings = settings or {}
    raw = settings.get("n")
    setting = "auto" if isinstance(raw, str) and raw.strip() == "auto" else whole_number(raw)
    nb, p, q = (whole_number(settings.get(key)) for key in ("nb", "p", "q"))
    for name, value in (("nb", nb), ("p", p), ("q", q)):
        if value is None or value < 1:
            checked.append("container_compare_hpcc_{} is {!r}, not a whole number of at least 1: fix it {}.".format(
                name, settings.get(name), FIX))
    if setting is None:
        problems.append("container_compare_hpcc_n is {!r}, neither auto nor a whole number: set "
                        "container_compare_hpcc_n=auto (N sized from the memory) or a problem size such as 20000 "
                        "{}.".format(raw, FIX))
    elif setting != "auto" and nb and not nb <= setting <= N_MAX:
        problems.append("container_compare_hpcc_n must be auto or a whole number from {} (container_compare_hpcc_nb) "
                        "to {}, got {}: set container_compare_hpcc_n=auto (N sized from the memory) or a problem size "
                        "in that range {}.".format(nb, N_MAX, setting, FIX))
    fraction = _number(settings.get("fraction"))
    if fraction is None or not 0 < fraction <= FRACTION_MAX:
        checked.append("container_compare_hpcc_memory_fraction must be a number greater than 0 and at most {}, got "
                       "{!r}: e.g. 0.8 (HPL's matrix in 80 % of the memory) {}.".format(
                           FRACTION_MAX, settings.get("fraction"), FIX))
        fraction = None
    host_mb = whole_number(settings.get("memory_mb"))
    if host_mb is None or host_mb < 0:
        checked.append("container_compare_hpcc_memory_mb is {!r}, not a whole number of MiB (0: the container host's "
                       "MemTotal, read when the run starts): fix it {}.".format(settings.get("memory_mb"), FIX))
    return setting, nb, p, q, fraction, host_mb or 0


def size(settings, variants, memory=None):
    """hpcc's problem for a run: one N for every measured variant.

    ``settings``: ``{n: 'auto' or a whole number, nb, p, q, fraction, memory_mb (0: not stated)}``;
    ``variants``: the measured variants (names, or cc_variants's ``{variant}`` mappings);
    ``memory``: what is known of their memory - ``{host_kib: MemTotal read from the container
    host (None before the run reads it), kvm_mib: runtime_kvm_memory_mb, limits: {variant:
    runtime_<variant>_memory}}`` (the stated ``memory_mb`` comes from ``settings``).

    Returns ``{n, nb, p, q, setting, fraction, sized, memory_mib, memory_of, matrix_bytes, estimate_s,
    timeout_s, why, plan, problem, n_problem}``: ``n`` is the N every point measures - a whole number,
    or ``'auto'`` while no memory is known; ``sized`` says whether N is final (every memory known, or an
    explicit N); ``problem`` is None or the sentences that refuse the input, ``n_problem`` those of them
    the role's argument spec and constraints cannot check (N itself, N against the memory, the stated
    memory against MemTotal).
    """
    problems, checked = [], []
    setting, nb, p, q, fraction, host_mb = _settings(settings, problems, checked)
    sources = _sources(variants, dict(memory or {}, host_mb=host_mb), problems, checked)
    known = [s for s in sources if s["bytes"] is not None]
    pending = [s for s in sources if s["bytes"] is None]
    smallest = min(known, key=lambda s: s["bytes"]) if known else None
    n = None
    if setting == "auto" and fraction and nb and smallest:
        n = auto_n(smallest["bytes"], fraction, nb)
        if n < nb:
            problems.append("{:g} % of {} holds no HPL matrix of N >= NB ({}): give the guest more memory, or set "
                            "container_compare_hpcc_n to a problem size {}.".format(
                                fraction * 100, _label(smallest), nb, FIX))
            n = None
    elif isinstance(setting, int):
        n = setting
        need = BYTES_PER_ELEMENT * n * n
        short = [s for s in known if need > s["bytes"]]
        if short:
            tight = min(short, key=lambda s: s["bytes"])
            problems.append("container_compare_hpcc_n {} needs {} bytes ({}, 8·N²) for HPL's matrix, more than {}: "
                            "give a smaller N, or container_compare_hpcc_n=auto (the largest N that fits {:g} % of "
                            "the smallest memory) {}.".format(grouped(n), grouped(need), _gib(need), _label(tight),
                                                              (fraction or 0.8) * 100, FIX))
    result = {
        "n": n if n is not None else "auto", "nb": nb, "p": p, "q": q, "setting": setting, "fraction": fraction,
        "sized": setting != "auto" or (n is not None and not pending),
        "memory_mib": smallest["bytes"] // MIB if smallest else None,
        "memory_of": _label(smallest) if smallest else None,
        "matrix_bytes": BYTES_PER_ELEMENT * n * n if n is not None else None,
        "estimate_s": estimate_s(n, p, q), "timeout_s": timeout_s(n, p, q),
        "problem": " ".join(checked + problems) or None,
        "n_problem": " ".join(problems) or None,
    }
    result["why"] = _why(result, smallest, pending)
    result["plan"] = _plan(result)
    return result


def _size_text(nbytes):
    return "{:.1f} MiB".format(nbytes / float(MIB)) if nbytes < GIB else _gib(nbytes)


def _why(result, smallest, pending):
    """Why the run measures this N, in words (the plan's line and the report's note)."""
    later = "the container host's MemTotal, read when the run starts"
    if result["setting"] != "auto":
        why = "set by container_compare_hpcc_n"
        if result["matrix_bytes"] and smallest:
            why += "; HPL's matrix, 8·N² bytes = {}, in {}, the smallest memory of the variants".format(
                _size_text(result["matrix_bytes"]), _label(smallest))
        if pending:
            why += "; checked against {}".format(later)
        return why
    if result["n"] == "auto":
        return "auto: sized from {} (or from container_compare_hpcc_memory_mb when given)".format(later)
    why = ("auto: HPL's matrix, 8·N² bytes = {}, in {:g} % of {}, the smallest memory of the variants; "
           "N a multiple of NB {}").format(_size_text(result["matrix_bytes"]), result["fraction"] * 100,
                                           _label(smallest), result["nb"])
    if pending:
        why += "; a smaller MemTotal of the container host, read when the run starts, gives a smaller N"
    return why


def _plan(result):
    """The plan's line for hpcc: the N, why, and the time it is planned to take."""
    grid = "{} x {}".format(result["p"], result["q"])
    if result["n"] == "auto":
        return ("hpcc: N {}; the estimate leaves HPL's time out ({} a point): give container_compare_hpcc_memory_mb "
                "(the container host's memory in MiB) to plan with it".format(result["why"], format_duration(ORCHESTRATION_S)))
    return ("hpcc: N {}{} ({}); about {} a point (HPL's 2/3·N³ flops at {:g} GFLOPS a process, P x Q = {}), "
            "timeout {}".format(grouped(result["n"]), "" if result["sized"] else " assumed", result["why"],
                                format_duration(result["estimate_s"]), GFLOPS_PER_PROCESS, grid, format_duration(result["timeout_s"])))


def report_note(documents):
    """The report's sentence on hpcc's N, from the point documents (``parameters.n``, ``extra.hpcc.why``):
    the N the stored points measured and why; None when no hpcc point is stored."""
    used = {}
    for doc in documents or []:
        doc = doc or {}
        extra = doc.get("extra") or {}
        if extra.get("workload") != "hpcc":
            continue
        parameters = doc.get("parameters") or {}
        sizing = extra.get("hpcc") or {}
        n = whole_number(parameters.get("n"))
        key = (n, sizing.get("why") or "no sizing recorded with the point",
               parameters.get("nb"), parameters.get("p"), parameters.get("q"))
        used[key] = used.get(key, 0) + 1
    if not used:
        return None
    parts = ["N {} ({}), NB {}, P x Q = {} x {}{}".format(
        grouped(n) if n is not None else "?", why, nb, p, q,
        "" if len(used) == 1 else ", {} point{}".format(count, "" if count == 1 else "s"))
        for (n, why, nb, p, q), count in sorted(used.items(), key=lambda item: (item[0][0] or 0, item[0][1]))]
    if len(parts) == 1:
        return "hpcc's HPL problem size, the same in every variant: " + parts[0] + "."
    return "hpcc's HPL problem size differs between the stored points (the run was extended with another N): " \
        + "; ".join(parts) + "."
