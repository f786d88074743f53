# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Statistics filters for benchmark results.

A pure library (module_utils/): filter_plugins/testbed_stats.py makes its
functions filters, and ``scripts/testbed_report.py``, the experiments' own
filters and the unit tests import the same code that Jinja uses::

    {{ results | metric_series('reply_rate_per_s', valid_only=true) | summary }}
    {{ docker_ratios | overall_index }}
    {{ tput_vnf | pct_drop(tput_base) }}
    {{ rtts_a | welch_test(rtts_b) }}

No numpy/scipy: the Student t distribution is computed here from the
regularized incomplete beta function (continued fraction, modified Lentz).

Bad input raises ``AnsibleFilterError`` whose message names the filter and the
offending value.  Undefined results (a confidence interval from one value, a
coefficient of variation around a zero mean) are ``None``, never a made-up 0.
"""

import math
import re

try:
    from collections.abc import Mapping
except ImportError:  # pragma: no cover - Python 2 only
    from collections.abc import Mapping

try:
    from ansible.errors import AnsibleFilterError
except ImportError:  # pragma: no cover - lets the report script run without Ansible

    class AnsibleFilterError(Exception):
        """Stand-in used when ansible is not installed."""

from ansible.module_utils.testbed_stats import fairness as testbed_fairness

# ---------------------------------------------------------------------------
# input checking
# ---------------------------------------------------------------------------


def _is_sequence(value):
    return isinstance(value, (list, tuple)) or (
        hasattr(value, "__iter__") and not isinstance(value, (str, bytes, Mapping)))


def _number(filter_name, value, what):
    """Return ``value`` as int/float or raise naming the filter and ``what``."""
    if isinstance(value, bool):
        raise AnsibleFilterError(f"{filter_name}: {what} is a boolean ({value!r}), expected a number")
    if value is None:
        raise AnsibleFilterError(f"{filter_name}: {what} is None (no value), expected a number")
    if not isinstance(value, (int, float)):
        raise AnsibleFilterError(
            f"{filter_name}: {what} is {value!r} ({type(value).__name__}), expected a number")
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        raise AnsibleFilterError(f"{filter_name}: {what} is {value!r}, expected a finite number")
    return value


def _numbers(filter_name, values, what="values", skip_none=False, min_n=1):
    """Validate a list of numbers; ``skip_none`` drops None entries."""
    if values is None or not _is_sequence(values):
        raise AnsibleFilterError(
            f"{filter_name}: {what} must be a list of numbers, got {values!r} ({type(values).__name__})")
    out = []
    for index, value in enumerate(values):
        if value is None and skip_none:
            continue
        out.append(_number(filter_name, value, f"{what}[{index}]"))
    if len(out) < min_n:
        if not out:
            raise AnsibleFilterError(f"{filter_name}: {what} is empty (no numbers to work on)")
        raise AnsibleFilterError(
            f"{filter_name}: {what} has {len(out)} value(s), at least {min_n} needed")
    return out


def _probability(filter_name, value, what):
    value = _number(filter_name, value, what)
    if not 0 < value < 1:
        raise AnsibleFilterError(f"{filter_name}: {what} is {value!r}, expected a value strictly between 0 and 1")
    return value


def _baseline(filter_name, baseline, what="baseline"):
    baseline = _number(filter_name, baseline, what)
    if baseline == 0:
        raise AnsibleFilterError(f"{filter_name}: {what} is 0, a relative change to zero is undefined")
    return baseline


# ---------------------------------------------------------------------------
# Student t distribution
# ---------------------------------------------------------------------------

def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    eps = 1e-15
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < tiny:
        d = tiny
    d = 1.0 / d
    h = d
    for m in range(1, 10001):
        m2 = 2 * m
        # even step
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1.0 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        h *= d * c
        # odd step
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1.0 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge (a={a!r} b={b!r} x={x!r})")


def betainc_reg(a, b, x):
    """Regularized incomplete beta function I_x(a, b) for a, b > 0, 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    front = math.exp(log_front)
    # The continued fraction converges fast for x < (a+1)/(a+b+2); use symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf2(t, df):
    """Two-sided tail probability P(|T| >= |t|) of Student's t with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df!r}")
    if math.isinf(t):
        return 0.0
    x = df / (df + t * t)
    return min(1.0, max(0.0, betainc_reg(df / 2.0, 0.5, x)))


def t_cdf(t, df):
    """Cumulative distribution function of Student's t."""
    tail = t_sf2(t, df) / 2.0
    return 1.0 - tail if t >= 0 else tail


def t_ppf(p, df):
    """Quantile (inverse CDF) of Student's t: the t with P(T <= t) = p."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability must be strictly between 0 and 1, got {p!r}")
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df!r}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    # The target is the upper two-sided tail 2(1-p); bracket it, then bisect.
    target = 2.0 * (1.0 - p)
    lo, hi = 0.0, 1.0
    while t_sf2(hi, df) > target:
        lo, hi = hi, hi * 2.0
        if hi > 1e12:
            break
    for _step in range(200):
        mid = (lo + hi) / 2.0
        if t_sf2(mid, df) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


# ---------------------------------------------------------------------------
# filters
# ---------------------------------------------------------------------------

def _mean(values):
    return math.fsum(values) / len(values)


def _sample_variance(values, mean=None):
    if mean is None:
        mean = _mean(values)
    return math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)


def _median(values):
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    if n % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2.0


def summary(values, confidence=0.95, skip_none=False):
    """Descriptive statistics with a Student-t confidence interval of the mean.

    Returns ``{n, mean, stdev, min, median, max, ci_half, ci_low, ci_high,
    confidence, cv_pct}``.  ``stdev`` is the sample standard deviation (n-1);
    ``stdev``/``ci_*`` are None when n < 2, ``cv_pct`` is None when the mean
    is 0 or the stdev undefined.  ``skip_none`` drops None entries instead of
    failing on them.
    """
    name = "summary"
    confidence = _probability(name, confidence, "confidence")
    data = _numbers(name, values, skip_none=skip_none)
    n = len(data)
    mean = _mean(data)
    result = {
        "n": n,
        "mean": mean,
        "stdev": None,
        "min": min(data),
        "median": _median(data),
        "max": max(data),
        "ci_half": None,
        "ci_low": None,
        "ci_high": None,
        "confidence": confidence,
        "cv_pct": None,
    }
    if n >= 2:
        stdev = math.sqrt(_sample_variance(data, mean))
        half = t_ppf(1.0 - (1.0 - confidence) / 2.0, n - 1) * stdev / math.sqrt(n)
        result.update(stdev=stdev, ci_half=half, ci_low=mean - half, ci_high=mean + half)
        if mean != 0:
            result["cv_pct"] = stdev / abs(mean) * 100.0
    return result


def pct_change(value, baseline):
    """Relative change of ``value`` against ``baseline`` in percent: (v - b) / b * 100.

    A latency rise (the NFV study's K_lat) is ``pct_change(l_vnf, l_base)``.
    """
    value = _number("pct_change", value, "value")
    baseline = _baseline("pct_change", baseline)
    return (value - baseline) / baseline * 100.0


def pct_drop(value, baseline):
    """Relative drop of ``value`` below ``baseline`` in percent: (b - v) / b * 100.

    The NFV study's throughput drop D_th is ``pct_drop(t_vnf, t_base)``.
    """
    value = _number("pct_drop", value, "value")
    baseline = _baseline("pct_drop", baseline)
    return (baseline - value) / baseline * 100.0


def ratio_to(value, baseline):
    """``value / baseline``; with two mappings, the ratio per key (keys must match)."""
    name = "ratio_to"
    if isinstance(value, Mapping) or isinstance(baseline, Mapping):
        if not (isinstance(value, Mapping) and isinstance(baseline, Mapping)):
            raise AnsibleFilterError(
                f"{name}: value and baseline must both be mappings or both numbers, got {type(value).__name__} and {type(baseline).__name__}")
        only_value = sorted(set(value) - set(baseline), key=str)
        only_base = sorted(set(baseline) - set(value), key=str)
        if only_value or only_base:
            parts = []
            if only_base:
                parts.append("missing in value: {}".format(", ".join(map(str, only_base))))
            if only_value:
                parts.append("missing in baseline: {}".format(", ".join(map(str, only_value))))
            raise AnsibleFilterError("{}: keys differ ({})".format(name, "; ".join(parts)))
        out = {}
        for key in value:
            v = _number(name, value[key], f"value[{key!r}]")
            b = _baseline(name, baseline[key], f"baseline[{key!r}]")
            out[key] = v / b
        return out
    value = _number(name, value, "value")
    baseline = _baseline(name, baseline)
    return value / baseline


def overall_index(ratios, metrics=None, higher_is_better=None):
    """Mean of per-metric ratios to native, in percent.

    ``ratios`` is a mapping metric -> ratio (value / native) or a plain list of
    ratios.  ``metrics`` selects and orders the metrics used (all by default).
    ``higher_is_better`` maps metric -> bool; a metric mapped to false (a
    latency, a run time) is inverted to native / value before averaging, so
    every ratio reads "fraction of native performance".

    Returns ``{index_pct, sum, count, ratios}`` where ``ratios`` are the
    (possibly inverted) ratios that were averaged.
    """
    name = "overall_index"
    if isinstance(ratios, Mapping):
        mapping = ratios
    elif ratios is not None and _is_sequence(ratios):
        mapping = dict(enumerate(ratios))
        if metrics is not None or higher_is_better:
            raise AnsibleFilterError(
                f"{name}: metrics/higher_is_better need ratios as a mapping metric -> ratio, got a list")
    else:
        raise AnsibleFilterError(f"{name}: ratios must be a mapping metric -> ratio or a list, got {ratios!r} ({type(ratios).__name__})")
    if metrics is None:
        keys = list(mapping)
    else:
        if isinstance(metrics, (str, bytes)) or not _is_sequence(metrics):
            raise AnsibleFilterError(f"{name}: metrics must be a list of metric names, got {metrics!r}")
        keys = list(metrics)
        missing = [k for k in keys if k not in mapping]
        if missing:
            raise AnsibleFilterError("{}: no ratio for metric(s) {}".format(name, ", ".join(map(str, missing))))
    if not keys:
        raise AnsibleFilterError(f"{name}: ratios is empty (no metrics to average)")
    if higher_is_better is None:
        higher_is_better = {}
    if not isinstance(higher_is_better, Mapping):
        raise AnsibleFilterError(f"{name}: higher_is_better must be a mapping metric -> bool, got {higher_is_better!r}")
    unknown = [k for k in higher_is_better if k not in mapping]
    if unknown:
        raise AnsibleFilterError("{}: higher_is_better names metric(s) with no ratio: {}".format(name, ", ".join(map(str, unknown))))
    used = {}
    for key in keys:
        ratio = _number(name, mapping[key], f"ratio {key!r}")
        if ratio <= 0:
            raise AnsibleFilterError(f"{name}: ratio {key!r} is {ratio!r}, expected a positive ratio to native")
        better = higher_is_better.get(key, True)
        if not isinstance(better, bool):
            raise AnsibleFilterError(f"{name}: higher_is_better[{key!r}] is {better!r}, expected true or false")
        used[key] = ratio if better else 1.0 / ratio
    total = math.fsum(used.values())
    return {
        "index_pct": total / len(used) * 100.0,
        "sum": total,
        "count": len(used),
        "ratios": used,
    }


def welch_test(a, b, alpha=0.05):
    """Welch's unequal-variance t test of mean(a) against mean(b), two-sided.

    ``b`` is the reference: ``diff = mean_a - mean_b`` and
    ``diff_pct = diff / mean_b * 100`` (None when mean_b is 0).
    Returns ``{t, df, p_value, significant, alpha, n_a, n_b, mean_a, mean_b, diff,
    diff_pct, testable, reason}``.

    The test is *not testable* - ``testable`` false, ``p_value``/``t``/``df``
    None, ``significant`` false and ``reason`` saying why - when a side has a
    single value (no variance estimate) or when both samples are constant
    (zero variance: equal constants say nothing, different constants would
    give t = infinity, a "p = 0" that only reflects the lack of spread).  An
    empty side is an error.  One constant side is fine: df is then n - 1 of
    the other side.
    """
    name = "welch_test"
    alpha = _probability(name, alpha, "alpha")
    xa = _numbers(name, a, what="a")
    xb = _numbers(name, b, what="b")
    na, nb = len(xa), len(xb)
    ma, mb = _mean(xa), _mean(xb)
    diff = ma - mb
    result = {
        "t": None,
        "df": None,
        "p_value": None,
        "significant": False,
        "alpha": alpha,
        "n_a": na,
        "n_b": nb,
        "mean_a": ma,
        "mean_b": mb,
        "diff": diff,
        "diff_pct": diff / mb * 100.0 if mb != 0 else None,
        "testable": True,
        "reason": None,
    }
    if na < 2 or nb < 2:
        short = " and ".join(f"{side} has {n} value" for side, n in (("a", na), ("b", nb)) if n < 2)
        result.update(testable=False, reason=f"not testable: {short}; the test needs at least 2 values per side")
        return result
    va, vb = _sample_variance(xa, ma) / na, _sample_variance(xb, mb) / nb
    se2 = va + vb
    if se2 == 0:
        result.update(testable=False, reason=(
            "not testable: both samples are constant (zero variance){}".format(
                "" if diff == 0 else "; their means differ, but without spread there is no t test")))
        return result
    t = diff / math.sqrt(se2)
    denominator = 0.0
    if va:
        denominator += va * va / (na - 1)
    if vb:
        denominator += vb * vb / (nb - 1)
    df = se2 * se2 / denominator
    result.update(t=t, df=df, p_value=t_sf2(t, df))
    result["significant"] = result["p_value"] < alpha
    return result


# Name endings (after an optional statistic qualifier such as _avg or _p99) of
# metrics that cannot be negative: durations, rates, throughputs, sizes,
# percentages of use, and counts.
NON_NEGATIVE_SUFFIXES = (
    "_pct", "_percent", "_ms", "_us", "_ns", "_s", "_per_s", "_bps", "_kbps", "_mbps", "_gbps", "_iops",
    "_kb_s", "_kib_s", "_mib_s", "_bytes", "_bytes_s", "_bytes_per_s", "_kib", "_mib", "_gib",
    "_inpps", "_outpps", "_cps", "_inbytes", "_outbytes",
    "_count", "_total", "_errors", "_conns", "_packets", "_retransmits", "_replies", "_requests",
)
NON_NEGATIVE_PREFIXES = ("num_", "n_", "status_")
_QUALIFIER = re.compile(r"_(min|max|mean|avg|median|stdev|p[0-9]+)$")


def non_negative_metric(name):
    """True when the metric's name says it cannot be below 0 (``latency_ms``, ``iops``, ``num_conns``).

    A metric that can be negative (a clock offset in ms, say) must not end in
    one of these suffixes, or the report clips its confidence intervals at 0.
    """
    if isinstance(name, bool) or not isinstance(name, str) or not name:
        raise AnsibleFilterError(f"non_negative_metric: expected a metric name, got {name!r}")
    base = _QUALIFIER.sub("", name)
    for candidate in (name, base):
        if candidate in ("iops", "count") or candidate.endswith(NON_NEGATIVE_SUFFIXES) \
                or candidate.startswith(NON_NEGATIVE_PREFIXES):
            return True
    return False


def clip_interval(stats, low=0.0):
    """Confidence interval of a ``summary`` result for display, its low end clipped at ``low``.

    Returns ``{ci_low, ci_high, clipped}``; ``clipped`` is true when the raw
    ``ci_low`` was below ``low`` (it stays unchanged in ``stats``: only what is
    shown is clipped).  ``ci_low``/``ci_high`` are None when the summary has no interval.
    """
    if not isinstance(stats, Mapping) or "ci_low" not in stats or "ci_high" not in stats:
        raise AnsibleFilterError(f"clip_interval: expected a summary result with ci_low and ci_high, got {stats!r}")
    low = _number("clip_interval", low, "low")
    raw_low, raw_high = stats["ci_low"], stats["ci_high"]
    if raw_low is None or raw_high is None:
        return {"ci_low": None, "ci_high": None, "clipped": False}
    clipped = raw_low < low
    return {"ci_low": low if clipped else raw_low, "ci_high": raw_high, "clipped": clipped}


def jain_index(values):
    """Jain's fairness index (sum x)^2 / (n * sum x^2): 1 = perfectly even, 1/n = one takes all.

    The maths is ``module_utils/testbed_stats/fairness.py``'s ``jain`` (the modules use it too).
    """
    name = "jain_index"
    data = _numbers(name, values)
    try:
        index = testbed_fairness.jain(data)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"{name}: {exc}") from None
    if index is None:
        raise AnsibleFilterError(f"{name}: all {len(data)} values are 0, fairness of nothing is undefined")
    return index


def metric_series(docs, metric, valid_only=False, skip_missing=False):
    """Values of ``metric`` from result point documents (dicts with ``metrics``).

    ``valid_only`` skips documents whose ``valid`` is false.  A document without
    a value for the metric (absent or null) is an error naming its point id,
    unless ``skip_missing`` is true.
    """
    name = "metric_series"
    if isinstance(metric, bool) or not isinstance(metric, str) or not metric:
        raise AnsibleFilterError(f"{name}: metric must be a metric name, got {metric!r}")
    if isinstance(docs, Mapping):
        docs = [docs[k] for k in sorted(docs, key=str)]
    if docs is None or not _is_sequence(docs):
        raise AnsibleFilterError(f"{name}: expected a list of result documents, got {docs!r} ({type(docs).__name__})")
    out = []
    for index, doc in enumerate(docs):
        if not isinstance(doc, Mapping) or not isinstance(doc.get("metrics"), Mapping):
            raise AnsibleFilterError(
                f"{name}: item {index} is not a result document with a 'metrics' mapping: {doc!r}")
        label = doc.get("point_id", f"item {index}")
        if valid_only and doc.get("valid") is not True:
            continue
        value = doc["metrics"].get(metric)
        if value is None:
            if skip_missing:
                continue
            raise AnsibleFilterError(f"{name}: point {label} has no value for metric {metric!r} (pass skip_missing=true to skip it)")
        out.append(_number(name, value, f"metric {metric!r} of point {label}"))
    return out


def fmt_sig(value, digits=4):
    """``value`` with about ``digits`` significant digits (N/A for None)."""
    if value is None:
        return "N/A"
    if value == 0:
        return "0"
    decimals = max(0, min(6, digits - 1 - int(math.floor(math.log10(abs(value))))))
    return f"{value:.{decimals}f}"


def fidelity_check(direct, harness, tolerance_pct=5.0, direct_scale=1.0, direct_label="the tool run directly",
                   harness_label="the harness", unit="", filter_name="fidelity_check"):
    """Compare a tool run by hand (``direct`` values x ``direct_scale``) with the harness's figures.

    The experiments' fidelity checks use ``testbed_fidelity.fidelity`` (interleaved pairs, a paired
    equivalence test) instead: this mean-against-mean comparison has no interval and no pairing.

    Both are lists of one metric in the same unit once scaled.  Returns
    ``{direct_mean, harness_mean, difference_pct, tolerance_pct, passed, direct_n,
    harness_n, harness_spread_pct, direct_spread_pct, sentence}``, where the
    difference is ``pct_change(direct mean, harness mean)`` and the spreads
    ((max - min) / mean of each side's repetitions) show the machine's own
    run-to-run noise the difference has to be read against.
    """
    fname = filter_name
    if not _is_sequence(direct) or not list(direct):
        raise AnsibleFilterError(f"{fname}: direct must be a non-empty list of values, got {direct!r}")
    try:
        scale = float(direct_scale)
    except (TypeError, ValueError):
        raise AnsibleFilterError(f"{fname}: direct_scale must be a number, got {direct_scale!r}") from None
    direct = [_number(fname, v, "direct value") * scale for v in direct]
    if not _is_sequence(harness) or not list(harness):
        raise AnsibleFilterError(f"{fname}: harness must be a non-empty list of values, got {harness!r}")
    try:
        tolerance = float(tolerance_pct)
    except (TypeError, ValueError):
        raise AnsibleFilterError(f"{fname}: tolerance_pct must be a number, got {tolerance_pct!r}") from None
    if not tolerance > 0:  # pylint: disable=unnecessary-negation  # NaN is refused too
        raise AnsibleFilterError(f"{fname}: tolerance_pct must be > 0, got {tolerance_pct!r}")
    d = summary(list(direct))
    h = summary(_numbers(fname, harness, "harness values"))
    diff = pct_change(d["mean"], h["mean"])
    passed = abs(diff) <= tolerance
    spread_h = (h["max"] - h["min"]) / h["mean"] * 100.0 if h["n"] > 1 and h["mean"] else None
    spread_d = (d["max"] - d["min"]) / d["mean"] * 100.0 if d["n"] > 1 and d["mean"] else None
    unit = f" {unit}" if unit else ""
    sentence = ("Fidelity check {}: {} gave {}{unit} (n={}), {} {}{unit} (n={}); difference {:+.2f} % "
                "(tolerance \u00b1{:g} %).").format(
        "passed" if passed else "FAILED", direct_label, fmt_sig(d["mean"]), d["n"], harness_label,
        fmt_sig(h["mean"]), h["n"], diff, tolerance, unit=unit)
    if spread_h is not None and spread_d is not None:
        sentence += (" Run-to-run spread (max \u2212 min) / mean on this machine: harness {:.1f} %, direct {:.1f} %."
                     ).format(spread_h, spread_d)
    return {"direct_mean": d["mean"], "harness_mean": h["mean"], "difference_pct": diff,
            "tolerance_pct": tolerance, "passed": passed, "direct_n": d["n"], "harness_n": h["n"],
            "harness_spread_pct": spread_h, "direct_spread_pct": spread_d, "sentence": sentence}
