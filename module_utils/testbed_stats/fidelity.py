# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fidelity check: does the harness measure what the tool measures when run by hand?

A pure library (module_utils/); filter_plugins/testbed_fidelity.py makes its
functions filters and the experiments' report tasks call them::

    {{ [[hand1, harness1], [hand2, harness2], [hand3, harness3]] | fidelity(5) }}
    {{ testbed_sweep_documents | fidelity_from_points('baseline', 5, what='IOPS of fio') }}

The runs are **interleaved pairs** measured under the same conditions (the same
cache state before each run): hand, harness, hand, harness, ...  Pairing takes
the machine's drift out of the comparison; the verdict comes from two one-sided
t tests (TOST) on the paired relative differences, not from one pair against a
fixed band.

No scipy: the t quantile and distribution come from ``testbed_stats``
(regularized incomplete beta function).
"""

import math

try:
    from ansible.errors import AnsibleFilterError
except ImportError:  # pragma: no cover - lets the report script run without Ansible

    class AnsibleFilterError(Exception):
        """Stand-in used when ansible is not installed."""

from ansible.module_utils.testbed_stats.core import t_cdf, t_ppf

EQUIVALENT = "equivalent"
DIFFERENT = "different"
TOO_NOISY = "too noisy to tell (widen n)"
TOO_FEW = "not enough pairs"

MIN_PAIRS = 3
MINUS = "\u2212"
# A report's fidelity line with a verdict (any of the three; not "not checked"), as fidelity_sentence writes it:
# what a test of a whole run looks for, whichever verdict the machine's noise gave.
VERDICT_SENTENCE = (r"Fidelity: (?:equivalent within \u00b1[\d.]+ %|different \(beyond \u00b1[\d.]+ %\)"
                    r"|too noisy to tell \(widen n\) against \u00b1[\d.]+ %) \(n=\d+, mean ")


def _fail(fname, message):
    raise AnsibleFilterError(f"{fname}: {message}")


def _finite(fname, value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(fname, f"{what} is {value!r} ({type(value).__name__}), expected a number")
    if math.isnan(value) or math.isinf(value):
        _fail(fname, f"{what} is {value!r}, expected a finite number")
    return float(value)


def _pair(fname, index, pair):
    """``(hand, harness)`` of one pair given as a 2-item list/tuple or a ``{hand, harness}`` mapping."""
    hand = harness = None
    if isinstance(pair, dict):
        if "hand" not in pair or "harness" not in pair:
            _fail(fname, f"pairs[{index}] is {pair!r}: a mapping needs the keys hand and harness")
        hand, harness = pair["hand"], pair["harness"]
    elif isinstance(pair, (list, tuple)) and len(pair) == 2:
        hand, harness = pair
    else:
        _fail(fname, f"pairs[{index}] is {pair!r}, expected [hand, harness] (two numbers) or {{hand, harness}}")
    hand = _finite(fname, hand, f"pairs[{index}] hand value")
    harness = _finite(fname, harness, f"pairs[{index}] harness value")
    if hand <= 0:
        _fail(fname, f"pairs[{index}] hand value is {hand!r}: the relative difference harness/hand - 1 needs a "
                     "positive hand value (a rate, a count per second...)")
    return hand, harness


def fidelity(pairs, tolerance_pct=5.0, alpha=0.05):
    """Equivalence of the harness's figure and the tool's own, from interleaved (hand, harness) pairs.

    ``pairs``: a list of ``[hand, harness]`` (or ``{hand, harness}``), measured
    interleaved (hand, harness, hand, harness, ...), n >= 3.  For each pair
    d_i = 100 * (harness_i / hand_i - 1) %.  With the mean m, the sample
    standard deviation s (n - 1), se = s / sqrt(n), df = n - 1 and
    t* = t_ppf(1 - alpha, df), the (1 - 2 alpha) confidence interval of the
    mean difference is [lo, hi] = m -/+ t* se (90 % for alpha = 0.05).

    Two one-sided tests at level ``alpha`` against the tolerance T
    (``tolerance_pct``): H0- "mean <= -T" rejected when (m + T) / se > t*, H0+
    "mean >= +T" rejected when (m - T) / se < -t*; both rejected exactly when
    -T < lo and hi < T.  ``p_tost`` is the larger of the two one-sided p values.

    The verdict, in this order:

    * ``equivalent``: the interval lies strictly inside (-T, +T) (both one-sided
      tests reject; p_tost < alpha);
    * ``different``: the interval lies wholly outside the band (lo > T or
      hi < -T), or the mean is outside it (|m| > T) and the interval excludes 0
      (lo > 0 or hi < 0: the difference is real and its best estimate exceeds
      the tolerance);
    * ``too noisy to tell (widen n)``: anything else - the interval straddles a
      band edge and the data cannot tell; more pairs narrow it.

    With identical differences (s = 0) the interval is the point m: equivalent
    when |m| < T, different when |m| > T (and m != 0), too noisy only at |m| = T.

    Returns ``{verdict, n, mean_diff_pct, ci_pct: [lo, hi], ci_level_pct,
    tolerance_pct, alpha, sd_diff_pct, t_crit, p_tost, diffs_pct, pairs}``
    (``pairs`` as ``[hand, harness]`` floats).  Fewer than 3 pairs, a
    non-positive hand value, a tolerance <= 0 or alpha outside (0, 0.5) is an
    error naming the value.
    """
    fname = "fidelity"
    if pairs is None or isinstance(pairs, (str, bytes, dict)) or not hasattr(pairs, "__iter__"):
        _fail(fname, f"pairs must be a list of [hand, harness] pairs, got {pairs!r}")
    checked = [_pair(fname, i, p) for i, p in enumerate(pairs)]
    n = len(checked)
    if n < MIN_PAIRS:
        _fail(fname, f"n={n} pair(s); a paired test needs at least {MIN_PAIRS} (hand, harness) pairs "
                     "(raise the experiment's <role>_fidelity_pairs)")
    try:
        tol = float(tolerance_pct)
    except (TypeError, ValueError):
        _fail(fname, f"tolerance_pct must be a number, got {tolerance_pct!r}")
    if math.isnan(tol) or tol <= 0 or math.isinf(tol):
        _fail(fname, f"tolerance_pct must be a finite number > 0, got {tolerance_pct!r}")
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        _fail(fname, f"alpha must be a number, got {alpha!r}")
    if not 0 < alpha < 0.5:
        _fail(fname, f"alpha must lie strictly between 0 and 0.5, got {alpha!r}")

    diffs = [100.0 * (harness / hand - 1.0) for hand, harness in checked]
    mean = math.fsum(diffs) / n
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in diffs) / (n - 1))
    # differences equal up to rounding count as identical
    if sd <= 1e-12 * max(1.0, abs(mean)):
        sd = 0.0
    se = sd / math.sqrt(n)
    df = n - 1
    t_crit = t_ppf(1.0 - alpha, df)
    lo, hi = mean - t_crit * se, mean + t_crit * se
    if se > 0:
        p_low = 1.0 - t_cdf((mean + tol) / se, df)   # H0: mean <= -T
        p_high = t_cdf((mean - tol) / se, df)        # H0: mean >= +T
    else:
        p_low = 0.0 if mean > -tol else 1.0
        p_high = 0.0 if mean < tol else 1.0
    if -tol < lo and hi < tol:
        verdict = EQUIVALENT
    elif lo > tol or hi < -tol or (abs(mean) > tol and (lo > 0 or hi < 0)):
        verdict = DIFFERENT
    else:
        verdict = TOO_NOISY
    return {
        "verdict": verdict,
        "n": n,
        "mean_diff_pct": mean,
        "ci_pct": [lo, hi],
        "ci_level_pct": round(100.0 * (1.0 - 2.0 * alpha), 6),
        "tolerance_pct": tol,
        "alpha": alpha,
        "sd_diff_pct": sd,
        "t_crit": t_crit,
        "p_tost": max(p_low, p_high),
        "diffs_pct": diffs,
        "pairs": [[hand, harness] for hand, harness in checked],
    }


def _pct(value, digits=1):
    """A signed percentage with a true minus sign (+0.7, \u22123.1)."""
    text = f"{value:+.{digits}f}"
    if text.lstrip("+-").strip("0.") == "":
        text = f"{0:.{digits}f}"
    return text.replace("-", MINUS)


def fidelity_sentence(result, what=""):
    """The report's line for a ``fidelity`` result (or a ``fidelity_from_points`` one)::

        Fidelity: equivalent within ±5 % (n=3, mean −1.2 %, 90 % CI −3.1 … +0.7 %)

    ``what`` (what was compared) is added after a colon.
    """
    if not isinstance(result, dict) or "verdict" not in result:
        _fail("fidelity_sentence", f"expected a fidelity result, got {result!r}")
    tol = f"\u00b1{result['tolerance_pct']:g} %"
    if result["verdict"] == TOO_FEW:
        text = f"Fidelity: not checked, {result.get('reason') or 'fewer than 3 pairs'}"
    else:
        lo, hi = result["ci_pct"]
        numbers = (f"n={result['n']}, mean {_pct(result['mean_diff_pct'])} %, {result['ci_level_pct']:g} % CI "
                   f"{_pct(lo)} \u2026 {_pct(hi)} %")
        head = {EQUIVALENT: f"equivalent within {tol}",
                DIFFERENT: f"different (beyond {tol})",
                TOO_NOISY: f"too noisy to tell (widen n) against {tol}"}[result["verdict"]]
        text = f"Fidelity: {head} ({numbers})"
    if what:
        text += f": {what}"
    return text + "."


def fidelity_more(pairs, minimum=MIN_PAIRS, cap=None, tolerance_pct=5.0, alpha=0.05):
    """Whether a fidelity check measures another pair: the pairs are added until the test decides.

    ``pairs`` are the ``[hand, harness]`` pairs measured so far (a pair with a failed run, ``None``,
    counts as measured, not as usable). Another pair is measured while fewer than ``minimum`` are
    usable, or while the equivalence test says "too noisy to tell" - as long as fewer than ``cap``
    pairs were measured (``cap`` below ``minimum`` counts as ``minimum``; no cap: ``minimum``).
    """
    fname = "fidelity_more"
    if pairs is None or isinstance(pairs, (str, bytes, dict)):
        _fail(fname, f"pairs must be a list of [hand, harness], got {pairs!r}")
    least, most = _pair_bounds(fname, minimum, cap)
    measured = list(pairs)
    if len(measured) >= most:
        return False
    usable = [pair for pair in measured if isinstance(pair, (list, tuple)) and len(pair) == 2 and None not in pair]
    if len(usable) < least:
        return True
    return fidelity(usable, tolerance_pct, alpha)["verdict"] == TOO_NOISY


def _pair_bounds(fname, minimum, cap):
    """(minimum, most pairs): a cap below the minimum, or none, is the minimum."""
    least = _whole(fname, minimum, "minimum", MIN_PAIRS)
    return least, max(least, _whole(fname, cap, "cap", 1) if cap not in (None, "") else least)


def _whole(fname, value, what, least):
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = None
    if number is None or isinstance(value, bool) or number != float(value) or number < least:
        _fail(fname, f"{what} must be a whole number >= {least}, got {value!r}")
    return number


def fidelity_value(run, metric, scale=1.0):
    """One side of a pair: ``metric`` x ``scale`` of a run, or None when the run gave no usable value.

    ``run`` is a testbed_workload result (``{parsed: {metrics, valid}, ...}``) or a parse
    result (``{metrics, valid}``, e.g. ``<tool>_parse``'s ``ansible_facts.<tool>``).  None
    (the run did not happen, failed, could not be parsed, was judged invalid, or has no such
    metric) makes the pair one that ``fidelity_from_points`` leaves out and counts.
    """
    if not isinstance(run, dict):
        return None
    parsed = run.get("parsed") if "parsed" in run else run
    if not isinstance(parsed, dict) or parsed.get("valid") is False:
        return None
    value = (parsed.get("metrics") or {}).get(metric)
    if value is None or isinstance(value, bool):
        return None
    try:
        value = float(value) * float(scale)
    except (TypeError, ValueError):
        _fail("fidelity_value", f"metric {metric!r} is {value!r} (or scale {scale!r}), expected a number")
    return value if math.isfinite(value) else None


def _get(mapping, dotted):
    value = mapping
    for key in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def fidelity_from_points(documents, variant, tolerance_pct=5.0, alpha=0.05, what="", key="extra.fidelity_pairs",
                         minimum=None, cap=None):
    """The fidelity result of a sweep's point documents.

    Collects the ``[hand, harness]`` pairs stored under ``key`` (default
    ``extra.fidelity_pairs``) of every valid point of ``variant``, in point
    order; a pair with a missing value (a failed run) is left out and counted
    in ``dropped``.  Returns ``{}`` when no point carries pairs (the check was
    off), a result with verdict ``not enough pairs`` (and ``reason``) when
    fewer than 3 usable pairs remain, else ``fidelity``'s result; each has a
    ``sentence`` (``fidelity_sentence``) and ``points`` (the ids of the points
    the pairs come from). With ``minimum`` and ``cap`` (pairs added until the
    test decides, ``fidelity_more``) the sentence says which ended it: the
    test deciding after n pairs, or the cap of pairs reached undecided.
    """
    fname = "fidelity_from_points"
    if documents is None or isinstance(documents, (str, bytes, dict)):
        _fail(fname, f"documents must be a list of point documents, got {documents!r}")
    pairs, dropped, points = [], 0, []
    carrying = [d for d in documents if isinstance(d, dict) and d.get("variant") == variant and d.get("valid")
                and isinstance(_get(d, key), list)]
    if not carrying:
        return {}
    for doc in carrying:
        points.append(doc.get("point_id"))
        for pair in _get(doc, key):
            if isinstance(pair, dict):
                values = (pair.get("hand"), pair.get("harness"))
            elif isinstance(pair, (list, tuple)) and len(pair) == 2:
                values = tuple(pair)
            else:
                _fail(fname, f"a pair of point {doc.get('point_id')!r} is {pair!r}, expected [hand, harness]")
            if any(v is None for v in values):
                dropped += 1
                continue
            pairs.append(list(values))
    if len(pairs) < MIN_PAIRS:
        result = {"verdict": TOO_FEW, "n": len(pairs), "tolerance_pct": float(tolerance_pct),
                  "reason": f"n={len(pairs)} usable pair(s) (at least {MIN_PAIRS} needed; {dropped} pair(s) had a "
                            "failed run)", "pairs": pairs}
    else:
        result = fidelity(pairs, tolerance_pct, alpha)
    result["dropped"] = dropped
    result["points"] = points
    result["sentence"] = fidelity_sentence(result, what)
    if dropped and result["verdict"] != TOO_FEW:
        result["sentence"] += f" {dropped} pair(s) with a failed run left out."
    if minimum not in (None, "") and cap not in (None, ""):
        least, most = _pair_bounds(fname, minimum, cap)
        measured = len(pairs) + dropped
        if result["verdict"] == TOO_NOISY and measured >= most:
            result["sentence"] += (f" The cap of {most} pairs was reached before the test could decide: "
                                   "a larger cap (or a quieter machine) may decide it.")
        elif result["verdict"] in (EQUIVALENT, DIFFERENT) and measured > least:
            result["sentence"] += f" Decided after {measured} pairs (pairs were added until the test decided)."
        result["cap"] = most
    return result
