# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Formatting numbers, intervals, p-values and cells of the report.

Part of the report (scripts/testbed_report.py is its command line; docs/architecture.md).
"""

import math
import re

from ansible.module_utils.testbed_reports.base import CLIPPED_MARK, INVALID_MARK, REASON_CHARS, SIGNIFICANT_MARK
from ansible.module_utils.testbed_stats import core as stats


def _decimals(reference):
    """Decimals that show about four significant digits of ``reference``."""
    reference = abs(reference)
    if reference == 0:
        return 2
    return max(0, min(6, 3 - math.floor(math.log10(reference))))


def fmt_num(value, reference=None):
    if value is None:
        return ""
    if isinstance(value, int) and reference is None:
        return str(value)
    decimals = _decimals(value if reference is None else reference)
    return f"{value:.{decimals}f}"


def fmt_mean_ci(s, clip=False):
    """``mean ± ci (n)``; ``mean +hi/−lo‡ (n)`` when the interval is clipped at 0; ``mean (1)``."""
    if s is None:
        return ""
    mean = s["mean"]
    if s["ci_half"] is None:
        return "{} ({})".format(fmt_num(mean, mean), s["n"])
    if clip and stats.clip_interval(s)["clipped"]:
        return "{} +{}/\u2212{}{} ({})".format(fmt_num(mean, mean), fmt_num(s["ci_half"], mean),
                                               fmt_num(mean, mean), CLIPPED_MARK, s["n"])
    return "{} \u00b1 {} ({})".format(fmt_num(mean, mean), fmt_num(s["ci_half"], mean), s["n"])


def is_clipped(s, clip):
    return bool(clip and s is not None and stats.clip_interval(s)["clipped"])


def fmt_cell(cell, clip=False):
    """``mean ± ci (n)``; ``mean (1)`` for a single value; blank without values; ⚠ when invalid."""
    if cell is None:
        return ""
    text = fmt_mean_ci(cell["summary"], clip)
    if cell["n_invalid"]:
        text = (text + " " + INVALID_MARK).strip()
    return text


def fmt_p(p):
    if p is None:
        return ""
    if p < 0.0001:
        return "<0.0001"
    return f"{p:.4f}"


def metric_title(model, metric):
    unit = model.unit(metric)
    return f"`{metric}` ({unit})" if unit else f"`{metric}`"


# Words for the parts of metric and parameter names (axis labels and chart titles).
_WORD = {"cpu": "CPU", "ipvs": "IPVS", "io": "I/O", "rr": "RR", "tcp": "TCP", "udp": "UDP", "iops": "IOPS",
         "vm": "VM", "nfv": "NFV", "lat": "latency", "bw": "bandwidth", "avg": "mean", "num": "number of",
         "conns": "connections", "rbd": "RBD", "zfs": "ZFS", "p99": "99th percentile", "p50": "median",
         "jain": "Jain", "rtt": "round-trip time", "fio": "fio", "ms": "ms", "kb": "KB", "mb": "MB", "gb": "GB"}
# Name endings that only repeat the unit, dropped from the words when the unit is printed after them.
_UNIT_SUFFIXES = ("_per_s", "_pct", "_ms", "_us", "_ns", "_s", "_gbps", "_mbps", "_kbps", "_bps", "_kb_s",
                  "_mb_s", "_mib_s", "_bytes", "_b", "_mb", "_mib", "_gb", "_kb", "_seconds")


def words(name, unit=None):
    """A metric's or parameter's name in words: ``response_time_ms`` -> ``Response time``.

    A unit suffix is dropped only when ``unit`` is given (it is printed beside the words)."""
    text, tail = str(name), ""
    if unit:
        for suffix in sorted(_UNIT_SUFFIXES, key=len, reverse=True):
            if text.endswith(suffix) and len(text) > len(suffix):
                text = text[:-len(suffix)]
                # "requests per second", but "connection rate" (a rate is per second already)
                tail = " per second" if suffix == "_per_s" and "rate" not in text.split("_") else ""
                break
    parts = [_WORD.get(part, part) for part in re.split(r"[_\s]+", text) if part]
    if not parts:
        return str(name)
    out = " ".join(parts) + tail
    return out[0].upper() + out[1:]


def axis_label(name, unit=None):
    """An axis label in words and unit: ``Response time (ms)``; a count has no unit printed."""
    if unit and unit != "count":
        return f"{words(name, unit)} ({unit})"
    return words(name, unit if unit == "count" else None)


def safe_file_name(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "metric"


def shorten(text, limit=REASON_CHARS):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "\u2026"


def welch(a_values, b_values):
    """Welch test of a against b as (p or None, significance cell, test result or None)."""
    if not a_values or not b_values:
        return None, "n/a", None
    test = stats.welch_test(a_values, b_values, alpha=0.05)
    if not test["testable"]:
        return None, "not testable", test
    return test["p_value"], SIGNIFICANT_MARK if test["significant"] else "no", test
