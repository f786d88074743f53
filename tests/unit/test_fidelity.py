"""The fidelity check (module_utils/testbed_stats/fidelity.py): paired relative differences, 90 % CI, TOST verdict.

Every expected number is computed by hand: with three pairs df = 2 and the one-sided 95 % quantile of
Student's t with 2 degrees of freedom is t* = 2.919986 (tables); se = s / sqrt(3).
"""
import math
import re

import pytest
import testbed_fidelity as plugin
from ansible.errors import AnsibleFilterError
from ansible.module_utils.testbed_stats.fidelity import (
    DIFFERENT,
    EQUIVALENT,
    TOO_FEW,
    TOO_NOISY,
    VERDICT_SENTENCE,
    fidelity,
    fidelity_from_points,
    fidelity_more,
    fidelity_sentence,
)

T_2 = 2.919986  # t(0.95, df=2)
T_4 = 2.131847  # t(0.95, df=4)


def _pairs(hand, diffs_pct):
    return [[hand, hand * (1 + d / 100.0)] for d in diffs_pct]


def test_filters_are_exposed():
    filters = plugin.FilterModule().filters()
    assert filters["fidelity"] is fidelity and filters["fidelity_from_points"] is fidelity_from_points
    assert filters["fidelity_sentence"] is fidelity_sentence


def test_small_noise_around_zero_is_equivalent():
    # d = +1, -1, 0 %: mean 0, s = 1, se = 1/sqrt(3), half = 2.919986/sqrt(3) = 1.685854
    result = fidelity([[100, 101], [100, 99], [100, 100]])
    assert result["verdict"] == EQUIVALENT and result["n"] == 3
    assert result["diffs_pct"] == pytest.approx([1.0, -1.0, 0.0])
    assert result["mean_diff_pct"] == pytest.approx(0.0, abs=1e-12)
    assert result["sd_diff_pct"] == pytest.approx(1.0)
    assert result["t_crit"] == pytest.approx(T_2, abs=1e-6)
    assert result["ci_pct"] == pytest.approx([-1.685854, 1.685854], abs=1e-6)
    assert result["ci_level_pct"] == 90 and result["tolerance_pct"] == 5.0 and result["alpha"] == 0.05
    assert result["pairs"] == [[100.0, 101.0], [100.0, 99.0], [100.0, 100.0]]
    # TOST: t = (0 + 5) / se = 8.660254; P(T_2 > 8.660254) = 0.5 * (1 - 8.660254 / sqrt(2 + 8.660254**2)) = 0.00654
    t = 5 * math.sqrt(3)
    assert result["p_tost"] == pytest.approx(0.5 * (1 - t / math.sqrt(2 + t * t)), rel=1e-6)
    assert result["p_tost"] < 0.05


def test_identical_values_are_equivalent_with_a_point_interval():
    result = fidelity([[5, 5], [7.5, 7.5], [1e6, 1e6]])
    assert result["verdict"] == EQUIVALENT
    assert (result["mean_diff_pct"], result["sd_diff_pct"], result["ci_pct"], result["p_tost"]) == (0.0, 0.0, [0.0, 0.0], 0.0)


def test_identical_differences_outside_the_band_are_different():
    # the same +8 % every time: s = 0, interval [8, 8] wholly outside +-5
    result = fidelity(_pairs(200.0, [8, 8, 8]))
    assert result["verdict"] == DIFFERENT and result["ci_pct"] == pytest.approx([8.0, 8.0])


def test_a_clear_difference_is_different():
    # d = 10, 11, 9 %: mean 10, s = 1, CI 10 -/+ 1.685854 = [8.314146, 11.685854], wholly above +5
    result = fidelity([[100, 110], [100, 111], [100, 109]])
    assert result["verdict"] == DIFFERENT
    assert result["mean_diff_pct"] == pytest.approx(10.0)
    assert result["ci_pct"] == pytest.approx([8.314146, 11.685854], abs=1e-6)
    assert result["p_tost"] > 0.9


def test_a_mean_outside_with_the_interval_excluding_zero_is_different():
    # d = 6, 8, 4 %: mean 6, s = 2, half = 2 * 2.919986 / sqrt(3) = 3.371709, CI [2.628291, 9.371709]:
    # not wholly outside the band, but the mean is beyond 5 % and the interval excludes 0
    result = fidelity(_pairs(1000.0, [6, 8, 4]))
    assert result["verdict"] == DIFFERENT
    assert result["ci_pct"] == pytest.approx([2.628291, 9.371709], abs=1e-6)


def test_a_noisy_case_cannot_tell():
    # d = +10, -10, 0 %: mean 0, s = 10, half = 16.858545: CI [-16.86, +16.86] straddles both band edges
    result = fidelity([[100, 110], [100, 90], [100, 100]])
    assert result["verdict"] == TOO_NOISY
    assert result["ci_pct"] == pytest.approx([-16.858545, 16.858545], abs=1e-6)
    # mean beyond the band but the interval holds 0: d = 20, 0, -2: mean 6, s = sqrt(148) = 12.165525
    noisy = fidelity(_pairs(50.0, [20, 0, -2]))
    assert noisy["verdict"] == TOO_NOISY
    half = T_2 * math.sqrt(148) / math.sqrt(3)
    assert noisy["ci_pct"] == pytest.approx([6 - half, 6 + half], abs=1e-5)


def test_more_pairs_narrow_the_interval():
    # d = +3, -3, +3, -3, 0 (n = 5): mean 0, s = sqrt(36/4) = 3, half = 2.131847 * 3 / sqrt(5) = 2.860168
    result = fidelity(_pairs(100.0, [3, -3, 3, -3, 0]))
    assert result["verdict"] == EQUIVALENT and result["n"] == 5
    assert result["ci_pct"] == pytest.approx([-2.860168, 2.860168], abs=1e-5)
    assert result["t_crit"] == pytest.approx(T_4, abs=1e-6)


def test_tolerance_and_alpha_move_the_verdict():
    pairs = [[100, 103], [100, 104], [100, 102]]  # mean 3, s = 1, CI [1.314, 4.686]
    assert fidelity(pairs, 5)["verdict"] == EQUIVALENT
    assert fidelity(pairs, 2)["verdict"] == DIFFERENT       # mean 3 > 2 and the interval excludes 0
    assert fidelity(pairs, 4)["verdict"] == TOO_NOISY       # hi 4.686 > 4, mean 3 < 4
    wide = fidelity(pairs, 5, alpha=0.005)                  # 99 % interval: t(0.995, 2) = 9.924843
    assert wide["ci_level_pct"] == 99 and wide["ci_pct"] == pytest.approx([3 - 5.730, 3 + 5.730], abs=1e-3)


def test_pairs_as_mappings():
    result = fidelity([{"hand": 10, "harness": 10.1}, {"hand": 10, "harness": 9.9}, {"hand": 10, "harness": 10}])
    assert result["verdict"] == EQUIVALENT and result["pairs"][0] == [10.0, 10.1]


@pytest.mark.parametrize("pairs, kwargs, pattern", [
    ([[100, 101], [100, 99]], {}, r"n=2 pair\(s\); a paired test needs at least 3"),
    ([], {}, r"n=0 pair"),
    (None, {}, "pairs must be a list"),
    ("100,101", {}, "pairs must be a list"),
    ([[100, 101], [100, 99], [100]], {}, r"pairs\[2\] is \[100\]"),
    ([[100, 101], [100, None], [100, 100]], {}, r"pairs\[1\] harness value is None"),
    ([[0, 101], [100, 99], [100, 100]], {}, r"pairs\[0\] hand value is 0.0: .*positive hand value"),
    ([[100, float("nan")], [100, 99], [100, 100]], {}, "finite"),
    ([[100, True], [100, 99], [100, 100]], {}, "bool"),
    ([{"hand": 1}, [100, 99], [100, 100]], {}, "keys hand and harness"),
    ([[100, 101], [100, 99], [100, 100]], {"tolerance_pct": 0}, "tolerance_pct must be a finite number > 0"),
    ([[100, 101], [100, 99], [100, 100]], {"tolerance_pct": "x"}, "tolerance_pct must be a number"),
    ([[100, 101], [100, 99], [100, 100]], {"alpha": 0.5}, "alpha must lie strictly between 0 and 0.5"),
])
def test_bad_input_names_the_problem(pairs, kwargs, pattern):
    with pytest.raises(AnsibleFilterError, match=pattern):
        fidelity(pairs, **kwargs)


def test_sentence():
    result = fidelity([[100, 98.8], [100, 97.9], [100, 99.7]])  # d = -1.2, -2.1, -0.3: mean -1.2, s = 0.9
    assert result["verdict"] == EQUIVALENT
    # half = 2.919986 * 0.9 / sqrt(3) = 1.517268: CI [-2.717268, +0.317268]
    assert fidelity_sentence(result) == ("Fidelity: equivalent within \u00b15 % (n=3, mean \u22121.2 %, "
                                         "90 % CI \u22122.7 \u2026 +0.3 %).")
    assert fidelity_sentence(fidelity([[100, 110], [100, 111], [100, 109]]), "IOPS of fio") == (
        "Fidelity: different (beyond \u00b15 %) (n=3, mean +10.0 %, 90 % CI +8.3 \u2026 +11.7 %): IOPS of fio.")
    assert fidelity_sentence(fidelity([[100, 110], [100, 90], [100, 100]])).startswith(
        "Fidelity: too noisy to tell (widen n) against \u00b15 % (n=3, mean 0.0 %, 90 % CI \u221216.9 \u2026 +16.9 %)")
    with pytest.raises(AnsibleFilterError, match="expected a fidelity result"):
        fidelity_sentence({})


@pytest.mark.parametrize("pairs", [[[100, 98.8], [100, 97.9], [100, 99.7]], [[100, 110], [100, 111], [100, 109]],
                                   [[100, 110], [100, 90], [100, 100]]])
def test_verdict_sentence_matches_each_verdict(pairs):
    """VERDICT_SENTENCE (what the integration tests look for) matches every verdict's sentence."""
    assert re.search(VERDICT_SENTENCE, fidelity_sentence(fidelity(pairs), "what"))
    assert re.search(VERDICT_SENTENCE, fidelity_sentence(fidelity(pairs, tolerance_pct=2.5)))


def test_verdict_sentence_does_not_match_not_checked():
    result = fidelity_from_points([_doc("p1", [[100, 101], [100, None], [100, 99]])], "baseline")
    assert result["sentence"].startswith("Fidelity: not checked")
    assert not re.search(VERDICT_SENTENCE, result["sentence"])


def _doc(point_id, pairs, variant="baseline", valid=True):
    return {"point_id": point_id, "variant": variant, "valid": valid, "extra": {"fidelity_pairs": pairs}}


def test_from_points_collects_the_pairs_of_valid_baseline_points():
    docs = [
        _doc("p1", [[100, 101], [100, 99], [100, 100]]),
        _doc("p2", [[100, 200]], variant="docker"),           # another variant: ignored
        _doc("p3", [[100, 300]], valid=False),                # invalid point: ignored
        {"point_id": "p4", "variant": "baseline", "valid": True, "extra": {}},   # no pairs
    ]
    result = fidelity_from_points(docs, "baseline", 5, what="events/s of sysbench cpu")
    assert result["verdict"] == EQUIVALENT and result["n"] == 3 and result["points"] == ["p1"]
    assert result["dropped"] == 0
    assert result["sentence"].endswith("90 % CI \u22121.7 \u2026 +1.7 %): events/s of sysbench cpu.")


def test_from_points_drops_failed_runs_and_says_so():
    docs = [_doc("p1", [[100, 101], [None, 99], [100, None], [100, 100], [100, 99]])]
    result = fidelity_from_points(docs, "baseline")
    assert result["n"] == 3 and result["dropped"] == 2
    assert result["sentence"].endswith("2 pair(s) with a failed run left out.")


def test_from_points_with_too_few_pairs_is_not_an_error():
    result = fidelity_from_points([_doc("p1", [[100, 101], [100, None]])], "baseline")
    assert result["verdict"] == TOO_FEW and result["n"] == 1
    assert result["sentence"] == ("Fidelity: not checked, n=1 usable pair(s) (at least 3 needed; 1 pair(s) had a "
                                  "failed run).")


def test_from_points_without_pairs_is_empty():
    assert fidelity_from_points([], "baseline") == {}
    assert fidelity_from_points([_doc("p1", [[1, 1]] * 3, variant="lxc")], "baseline") == {}
    with pytest.raises(AnsibleFilterError, match="documents must be a list"):
        fidelity_from_points(None, "baseline")


def test_fidelity_value_reads_one_side_of_a_pair():
    from ansible.module_utils.testbed_stats.fidelity import fidelity_value
    workload_run = {"tool": "fio", "parsed": {"valid": True, "metrics": {"read_iops": 1200, "read_bw": None}}}
    assert fidelity_value(workload_run, "read_iops") == 1200.0
    assert fidelity_value({"valid": True, "metrics": {"received_bps": 2.5e10}}, "received_bps", 1e-9) == pytest.approx(25.0)
    # no usable value: not run, failed parse, invalid run, missing or null metric
    assert fidelity_value(None, "read_iops") is None
    assert fidelity_value({"tool": "fio", "parsed": None}, "read_iops") is None
    assert fidelity_value({"parsed": {"valid": False, "metrics": {"read_iops": 1}}}, "read_iops") is None
    assert fidelity_value(workload_run, "write_iops") is None and fidelity_value(workload_run, "read_bw") is None
    with pytest.raises(AnsibleFilterError, match="fidelity_value: metric 'x' is 'fast'"):
        fidelity_value({"metrics": {"x": "fast"}}, "x")
    assert plugin.FilterModule().filters()["fidelity_value"] is fidelity_value


# -- pairs added until the test decides (fidelity_more) --

QUIET = [[100, 100.5], [100, 99.8], [100, 100.2]]          # equivalent at 3
NOISY = [[100, 110], [100, 90], [100, 100]]                 # too noisy at 3


def test_more_pairs_until_the_minimum_then_while_too_noisy():
    assert fidelity_more([], 3, 10) is True
    assert fidelity_more(QUIET[:2], 3, 10) is True
    assert fidelity_more(QUIET, 3, 10) is False            # decided: equivalent
    assert fidelity_more(NOISY, 3, 10) is True             # undecided: one more
    assert fidelity_more([[100, 120], [100, 121], [100, 119]], 3, 10) is False   # decided: different


def test_the_cap_ends_it_and_failed_runs_count_as_measured():
    assert fidelity_more(NOISY, 3, 3) is False
    assert fidelity_more(NOISY * 3 + [[100, 101]], 3, 10) is False               # 10 measured: the cap
    assert fidelity_more([[100, None], [None, 99], [100, 100]], 3, 4) is True    # 1 usable of 3, cap 4
    assert fidelity_more([[100, None], [None, 99], [100, 100], [100, None]], 3, 4) is False
    assert fidelity_more(NOISY, 3, 1) is False              # a cap below the minimum is the minimum
    assert fidelity_more(NOISY, 3) is False                 # no cap: the minimum


@pytest.mark.parametrize("args, pattern", [(("x",), "pairs must be a list"), (([], 2), "minimum must be a whole number >= 3"),
                                           (([], 3, "many"), "cap must be a whole number >= 1")])
def test_more_refuses_bad_input(args, pattern):
    with pytest.raises(AnsibleFilterError, match=pattern):
        fidelity_more(*args)


def test_the_sentence_says_whether_the_test_or_the_cap_ended_it():
    capped = fidelity_from_points([_doc("p1", NOISY)], "baseline", minimum=3, cap=3)
    assert capped["cap"] == 3 and "The cap of 3 pairs was reached before the test could decide" in capped["sentence"]
    decided = fidelity_from_points([_doc("p1", NOISY + [[100, 100.1]] * 9)], "baseline", minimum=3, cap=20)
    assert decided["verdict"] == EQUIVALENT and "Decided after 12 pairs" in decided["sentence"]
    at_once = fidelity_from_points([_doc("p1", QUIET)], "baseline", minimum=3, cap=10)
    assert at_once["verdict"] == EQUIVALENT and "Decided after" not in at_once["sentence"] and "cap" not in at_once["sentence"]
    plain = fidelity_from_points([_doc("p1", NOISY)], "baseline")
    assert "cap" not in plain and "cap" not in plain["sentence"]
