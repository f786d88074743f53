"""Unit tests for filter_plugins/testbed_stats.py (the statistics filters)."""
import json
import math
import os
import shutil
import subprocess
import sys

import pytest
from ansible.errors import AnsibleFilterError
from ansible.module_utils.testbed_results.store import named_documents
from ansible.module_utils.testbed_stats import core as st
from conftest import FIXTURES, ROOT

SAMPLE_RUN = os.path.join(FIXTURES, "report", "sample_run")


# ---------------------------------------------------------------------------
# Student t distribution
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("df, expected", [
    (1, 12.7062), (2, 4.3027), (3, 3.1824), (4, 2.7764), (9, 2.2622), (10, 2.2281),
    (29, 2.0452), (30, 2.0423), (100, 1.9840), (1000, 1.9623),
])
def test_t_ppf_matches_the_table(df, expected):
    assert st.t_ppf(0.975, df) == pytest.approx(expected, abs=5e-5)


def test_t_ppf_other_levels_and_symmetry():
    assert st.t_ppf(0.995, 4) == pytest.approx(4.6041, abs=5e-5)
    assert st.t_ppf(0.995, 5) == pytest.approx(4.0321, abs=5e-5)
    assert st.t_ppf(0.95, 10) == pytest.approx(1.8125, abs=5e-5)
    assert st.t_ppf(0.025, 9) == pytest.approx(-2.2622, abs=5e-5)
    assert st.t_ppf(0.5, 7) == 0.0
    # large df tends to the normal quantile 1.959964
    assert st.t_ppf(0.975, 1e6) == pytest.approx(1.959966, abs=2e-6)


def test_t_ppf_rejects_bad_arguments():
    with pytest.raises(ValueError):
        st.t_ppf(1.0, 5)
    with pytest.raises(ValueError):
        st.t_ppf(0.975, 0)


def test_two_sided_p_known_value():
    assert st.t_sf2(2.0, 10) == pytest.approx(0.07339, abs=1e-5)
    assert st.t_sf2(-2.0, 10) == pytest.approx(0.07339, abs=1e-5)
    assert st.t_sf2(0.0, 3) == 1.0
    assert st.t_sf2(float("inf"), 3) == 0.0


@pytest.mark.parametrize("t", [-3.0, -1.3, 0.5, 1.0, 2.0, 3.6742346])
def test_t_cdf_matches_closed_forms(t):
    # Closed forms of the t CDF for 1, 2 and 4 degrees of freedom.
    assert st.t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-12)
    assert st.t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)), abs=1e-12)
    q = 1 + t * t / 4
    f4 = 0.5 + 3.0 / 8.0 * (t / math.sqrt(q)) * (1 - t * t / (12 * q))
    assert st.t_cdf(t, 4) == pytest.approx(f4, abs=1e-12)


def _t_pdf(x, df):
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    return c * (1 + x * x / df) ** (-(df + 1) / 2)


@pytest.mark.parametrize("t, df", [(2.2514363, 5.5207877), (1.7, 2.5), (0.8, 13.3)])
def test_t_sf2_matches_numeric_integration(t, df):
    # Simpson's rule on the density over [0, t]: p = 1 - 2 * integral.
    n = 2000
    h = t / n
    total = _t_pdf(0, df) + _t_pdf(t, df)
    for i in range(1, n):
        total += (4 if i % 2 else 2) * _t_pdf(i * h, df)
    p = 1 - 2 * total * h / 3
    assert st.t_sf2(t, df) == pytest.approx(p, abs=1e-9)


def test_regularized_incomplete_beta():
    # I_x(2, 3) = P(Binomial(4, x) >= 2); at x = 0.5 that is 11/16
    assert st.betainc_reg(2, 3, 0.5) == pytest.approx(0.6875, abs=1e-14)
    assert st.betainc_reg(1, 1, 0.3) == pytest.approx(0.3, abs=1e-14)
    assert st.betainc_reg(2, 3, 0.0) == 0.0
    assert st.betainc_reg(2, 3, 1.0) == 1.0


# ---------------------------------------------------------------------------
# summary
# ---------------------------------------------------------------------------

def test_summary_of_one_to_five():
    s = st.summary([1, 2, 3, 4, 5])
    assert s["n"] == 5
    assert s["mean"] == 3
    assert s["stdev"] == pytest.approx(1.5811388, abs=1e-7)
    assert s["ci_half"] == pytest.approx(1.9632432, abs=1e-6)
    assert s["ci_low"] == pytest.approx(3 - 1.9632432, abs=1e-6)
    assert s["ci_high"] == pytest.approx(3 + 1.9632432, abs=1e-6)
    assert (s["min"], s["median"], s["max"]) == (1, 3, 5)
    assert s["confidence"] == 0.95
    assert s["cv_pct"] == pytest.approx(52.70463, abs=1e-5)


def test_summary_other_confidence_and_even_median():
    s = st.summary([1, 2, 3, 4, 5], confidence=0.99)
    assert s["ci_half"] == pytest.approx(4.604095 * 1.5811388 / math.sqrt(5), abs=1e-5)
    s = st.summary([4.0, 1.0, 3.0, 2.0])
    assert s["median"] == 2.5
    assert s["mean"] == 2.5


def test_summary_single_value_and_zero_mean():
    s = st.summary([7.5])
    assert s["n"] == 1 and s["mean"] == 7.5
    assert s["stdev"] is None and s["ci_half"] is None and s["ci_low"] is None and s["ci_high"] is None
    assert s["cv_pct"] is None
    z = st.summary([-1, 1])
    assert z["mean"] == 0 and z["cv_pct"] is None
    assert z["ci_half"] == pytest.approx(12.7062 * math.sqrt(2) / math.sqrt(2), abs=1e-4)


def test_summary_skip_none():
    s = st.summary([None, 2, None, 4], skip_none=True)
    assert s["n"] == 2 and s["mean"] == 3


@pytest.mark.parametrize("values, fragment", [
    ([], "empty"),
    ([1, "2"], "values[1] is '2'"),
    ([1, True], "values[1] is a boolean"),
    ([1, None], "values[1] is None"),
    ([1.0, float("nan")], "values[1] is nan"),
    ([float("inf")], "values[0] is inf"),
    ("12345", "must be a list"),
    ({"a": 1}, "must be a list"),
    (None, "must be a list"),
    ([None, None], "empty"),
])
def test_summary_rejects_bad_input(values, fragment):
    with pytest.raises(AnsibleFilterError) as err:
        st.summary(values, skip_none=(values == [None, None]))
    assert "summary:" in str(err.value)
    assert fragment in str(err.value)


@pytest.mark.parametrize("confidence", [0, 1, 1.5, -0.1, "0.95", None, True])
def test_summary_rejects_bad_confidence(confidence):
    with pytest.raises(AnsibleFilterError, match="summary: confidence"):
        st.summary([1, 2, 3], confidence=confidence)


# ---------------------------------------------------------------------------
# relative changes and ratios
# ---------------------------------------------------------------------------

def test_pct_change_and_drop_with_the_nfv_study_numbers():
    # throughput drop D_th: 29.5 -> 19.7 Gbit/s is 33.2 %, -> 2.36 is 92 %
    assert st.pct_drop(19.7, 29.5) == pytest.approx(33.2203, abs=1e-4)
    assert st.pct_drop(2.36, 29.5) == pytest.approx(92.0, abs=1e-9)
    # latency rise K_lat: 0.089 -> 0.177 ms
    assert st.pct_change(0.177, 0.089) == pytest.approx(98.8764, abs=1e-4)
    assert st.pct_change(90, 100) == pytest.approx(-10.0)
    assert st.pct_change(-5, -10) == pytest.approx(-50.0)


@pytest.mark.parametrize("func", [st.pct_change, st.pct_drop])
def test_relative_change_errors(func):
    name = func.__name__
    with pytest.raises(AnsibleFilterError, match=f"{name}: baseline is 0"):
        func(5, 0)
    with pytest.raises(AnsibleFilterError, match=f"{name}: value is 'x'"):
        func("x", 1)
    with pytest.raises(AnsibleFilterError, match=f"{name}: baseline is None"):
        func(1, None)
    with pytest.raises(AnsibleFilterError, match=f"{name}: value is a boolean"):
        func(True, 1)


def test_ratio_to_numbers_and_mappings():
    assert st.ratio_to(7.0, 7.94) == pytest.approx(0.881612, abs=1e-6)
    r = st.ratio_to({"cpu": 7.0, "gups": 0.0515}, {"cpu": 7.94, "gups": 0.0550})
    assert r == {"cpu": pytest.approx(0.881612, abs=1e-6), "gups": pytest.approx(0.936364, abs=1e-6)}


def test_ratio_to_errors():
    with pytest.raises(AnsibleFilterError, match=r"ratio_to: keys differ \(missing in value: ram"):
        st.ratio_to({"cpu": 1}, {"cpu": 2, "ram": 3})
    with pytest.raises(AnsibleFilterError, match="missing in baseline: io"):
        st.ratio_to({"cpu": 1, "io": 2}, {"cpu": 2})
    with pytest.raises(AnsibleFilterError, match=r"ratio_to: baseline\['cpu'\] is 0"):
        st.ratio_to({"cpu": 1}, {"cpu": 0})
    with pytest.raises(AnsibleFilterError, match="both be mappings or both numbers"):
        st.ratio_to({"cpu": 1}, 2)
    with pytest.raises(AnsibleFilterError, match="ratio_to: baseline is 0"):
        st.ratio_to(1, 0)


# ---------------------------------------------------------------------------
# overall index (container study, Table 3.1)
# ---------------------------------------------------------------------------

STUDY_RATIOS = {
    "docker": {"iozone_read": 0.74, "iozone_write": 0.82, "ram": 0.98, "cpu": 0.73},
    "lxc": {"iozone_read": 0.81, "iozone_write": 0.77, "ram": 0.97, "cpu": 0.91},
    "lxd": {"iozone_read": 0.85, "iozone_write": 0.83, "ram": 0.99, "cpu": 0.95},
}


@pytest.mark.parametrize("runtime, total, index", [
    ("docker", 3.27, 81.75), ("lxc", 3.46, 86.5), ("lxd", 3.62, 90.5),
])
def test_overall_index_reproduces_the_study(runtime, total, index):
    result = st.overall_index(STUDY_RATIOS[runtime])
    assert result["sum"] == pytest.approx(total, abs=1e-12)
    assert result["index_pct"] == pytest.approx(index, abs=1e-10)
    assert result["count"] == 4
    assert result["ratios"] == STUDY_RATIOS[runtime]


def test_overall_index_list_subset_and_inversion():
    assert st.overall_index([0.74, 0.82, 0.98, 0.73])["index_pct"] == pytest.approx(81.75)
    sub = st.overall_index(STUDY_RATIOS["docker"], metrics=["ram", "cpu"])
    assert sub["count"] == 2 and sub["index_pct"] == pytest.approx(85.5)
    # a latency twice the native one counts as half the native performance
    inv = st.overall_index({"throughput": 0.9, "latency": 2.0}, higher_is_better={"latency": False})
    assert inv["ratios"] == {"throughput": 0.9, "latency": 0.5}
    assert inv["index_pct"] == pytest.approx(70.0)


@pytest.mark.parametrize("kwargs, fragment", [
    ({"ratios": {}}, "ratios is empty"),
    ({"ratios": []}, "ratios is empty"),
    ({"ratios": "0.7"}, "must be a mapping"),
    ({"ratios": {"cpu": 0.7}, "metrics": ["ram"]}, "no ratio for metric(s) ram"),
    ({"ratios": {"cpu": 0.7}, "metrics": "cpu"}, "metrics must be a list"),
    ({"ratios": {"cpu": -0.7}}, "ratio 'cpu' is -0.7"),
    ({"ratios": {"cpu": 0}}, "ratio 'cpu' is 0"),
    ({"ratios": {"cpu": None}}, "ratio 'cpu' is None"),
    ({"ratios": {"cpu": 0.7}, "higher_is_better": {"cpu": "no"}}, "higher_is_better['cpu'] is 'no'"),
    ({"ratios": {"cpu": 0.7}, "higher_is_better": {"ram": False}}, "names metric(s) with no ratio: ram"),
    ({"ratios": [0.7], "higher_is_better": {"0": False}}, "need ratios as a mapping"),
])
def test_overall_index_errors(kwargs, fragment):
    with pytest.raises(AnsibleFilterError) as err:
        st.overall_index(**kwargs)
    assert str(err.value).startswith("overall_index: ")
    assert fragment in str(err.value)


# ---------------------------------------------------------------------------
# Welch t test
# ---------------------------------------------------------------------------

def test_welch_equal_variances_by_hand():
    # means 2 and 5, both variances 1: se^2 = 1/3 + 1/3, t = -3/sqrt(2/3), df = 4
    r = st.welch_test([1, 2, 3], [4, 5, 6])
    assert r["t"] == pytest.approx(-3 / math.sqrt(2 / 3), abs=1e-12)
    assert r["df"] == pytest.approx(4.0, abs=1e-12)
    assert r["p_value"] == pytest.approx(0.0213116, abs=1e-6)
    assert r["significant"] is True
    assert (r["mean_a"], r["mean_b"], r["diff"]) == (2, 5, -3)
    assert r["diff_pct"] == pytest.approx(-60.0)
    assert (r["n_a"], r["n_b"], r["alpha"]) == (3, 3, 0.05)


def test_welch_unequal_variances_by_hand():
    # a: mean 2.5, var 5/3, n 4 -> 5/12; b: mean 6, var 10, n 5 -> 2
    r = st.welch_test([1, 2, 3, 4], [2, 4, 6, 8, 10])
    se2 = 5 / 12 + 2
    assert r["t"] == pytest.approx(-3.5 / math.sqrt(se2), abs=1e-12)
    assert r["df"] == pytest.approx(se2 ** 2 / ((5 / 12) ** 2 / 3 + 2 ** 2 / 4), abs=1e-12)
    assert r["df"] == pytest.approx(5.520788, abs=1e-6)
    assert r["p_value"] == pytest.approx(0.069134, abs=1e-6)
    assert r["significant"] is False
    assert st.welch_test([1, 2, 3, 4], [2, 4, 6, 8, 10], alpha=0.1)["significant"] is True


def test_welch_degenerate_variances():
    # two constant samples: no spread, no t test - never "p = 0, significant"
    same = st.welch_test([5, 5], [5, 5, 5])
    assert same["testable"] is False and same["p_value"] is None and same["significant"] is False
    assert same["t"] is None and same["df"] is None
    assert same["reason"] == "not testable: both samples are constant (zero variance)"
    differ = st.welch_test([5, 5], [6, 6])
    assert differ["testable"] is False and differ["p_value"] is None and differ["significant"] is False
    assert "their means differ, but without spread there is no t test" in differ["reason"]
    assert differ["diff_pct"] == pytest.approx(-100 / 6) and differ["diff"] == -1
    # one side constant: df = n - 1 of the other side
    one = st.welch_test([5, 5, 5], [4, 6, 5, 5])
    assert one["testable"] is True and one["reason"] is None
    assert one["df"] == pytest.approx(3.0) and one["t"] == pytest.approx(0.0) and one["p_value"] == pytest.approx(1.0)
    zero_ref = st.welch_test([1, 2], [-1, 1])
    assert zero_ref["diff_pct"] is None


@pytest.mark.parametrize("a, b, fragment", [
    ([1], [1, 2], "not testable: a has 1 value; the test needs at least 2 values per side"),
    ([1, 2], [3], "not testable: b has 1 value; the test needs at least 2 values per side"),
    ([1], [3], "not testable: a has 1 value and b has 1 value;"),
])
def test_welch_single_values_are_not_testable(a, b, fragment):
    r = st.welch_test(a, b)
    assert r["testable"] is False and r["p_value"] is None and r["significant"] is False
    assert r["reason"].startswith(fragment)
    assert (r["n_a"], r["n_b"]) == (len(a), len(b))


@pytest.mark.parametrize("a, b, fragment", [
    ([], [1, 2], "a is empty"),
    ([1, 2], [], "b is empty"),
    ([1, "x"], [1, 2], "a[1] is 'x'"),
    ([1, 2], [1, None], "b[1] is None"),
])
def test_welch_errors(a, b, fragment):
    with pytest.raises(AnsibleFilterError) as err:
        st.welch_test(a, b)
    assert "welch_test:" in str(err.value) and fragment in str(err.value)
    with pytest.raises(AnsibleFilterError, match="welch_test: alpha"):
        st.welch_test([1, 2], [3, 4], alpha=5)


@pytest.mark.parametrize("name, expected", [
    ("tcp_rtt_avg_ms", True), ("throughput_gbps", True), ("client_cpu_total_pct", True),
    ("reply_rate_avg_per_s", True), ("iops", True), ("read_iops", True), ("duration_s", True),
    ("num_conns", True), ("status_5xx", True), ("interval_bps_min", True), ("tcp_rtt_p99_ms", True),
    ("net_io_kb_s", True), ("clock_offset", False), ("t", False), ("score", False),
])
def test_non_negative_metric(name, expected):
    assert st.non_negative_metric(name) is expected


def test_clip_interval():
    s = st.summary([0.0690, 0.0849])  # mean 0.07695, ± 0.101 -> low below 0
    assert s["ci_low"] < 0
    shown = st.clip_interval(s)
    assert shown == {"ci_low": 0.0, "ci_high": s["ci_high"], "clipped": True}
    assert s["ci_low"] < 0  # the raw value is untouched
    wide = st.summary([10.0, 11.0, 12.0])
    assert st.clip_interval(wide) == {"ci_low": wide["ci_low"], "ci_high": wide["ci_high"], "clipped": False}
    assert st.clip_interval(st.summary([3.0])) == {"ci_low": None, "ci_high": None, "clipped": False}
    with pytest.raises(AnsibleFilterError, match="clip_interval: expected a summary"):
        st.clip_interval([1, 2])
    with pytest.raises(AnsibleFilterError, match="non_negative_metric: expected a metric name"):
        st.non_negative_metric(None)


# ---------------------------------------------------------------------------
# Jain's fairness index
# ---------------------------------------------------------------------------

def test_jain_index():
    assert st.jain_index([10, 10, 10]) == pytest.approx(1.0)
    assert st.jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    assert st.jain_index([1, 2, 3]) == pytest.approx(36 / 42)


def test_jain_index_is_the_shared_implementation():
    # one implementation: module_utils/testbed_stats/fairness.py, loaded as a plain module
    assert os.path.samefile(st.testbed_fairness.__file__, os.path.join(ROOT, "module_utils", "testbed_stats", "fairness.py"))


@pytest.mark.parametrize("values, fragment", [
    ([0, 0, 0], "all 3 values are 0"),
    ([1, -1], "values[1] is -1"),
    ([], "empty"),
    ([1, "2"], "values[1] is '2'"),
])
def test_jain_index_errors(values, fragment):
    with pytest.raises(AnsibleFilterError) as err:
        st.jain_index(values)
    assert "jain_index:" in str(err.value) and fragment in str(err.value)


# ---------------------------------------------------------------------------
# metric_series on the real sample run
# ---------------------------------------------------------------------------

def _sample_docs():
    return list(named_documents(SAMPLE_RUN).values())


def test_metric_series_from_result_documents():
    docs = _sample_docs()
    assert len(docs) == 12
    everything = st.metric_series(docs, "response_time_ms")
    assert everything == [2.1, 0.8, 0.6, 0.4, 0.9, 1.4, 1.2, 1.2, 1.0, 1.4, 2.6, 1.3]
    valid = st.metric_series(docs, "response_time_ms", valid_only=True)
    assert valid == [2.1, 0.8, 0.6, 0.4, 0.9, 1.4, 1.2, 1.2, 1.0]
    plain50 = [d for d in docs if d["variant"] == "plain" and d["parameters"]["rate"] == 50]
    assert st.summary(st.metric_series(plain50, "response_time_ms"))["mean"] == pytest.approx(3.5 / 3)


def test_metric_series_missing_values():
    docs = _sample_docs()
    with pytest.raises(AnsibleFilterError) as err:
        st.metric_series(docs, "reply_rate_avg_per_s")
    assert "point plain__num_conns-900_rate-300__rep1 has no value for metric 'reply_rate_avg_per_s'" in str(err.value)
    rates = st.metric_series(docs, "reply_rate_avg_per_s", skip_missing=True)
    assert rates == [49.7, 50.0, 50.0, 50.0, 50.0, 50.0]
    with pytest.raises(AnsibleFilterError, match="metric_series: point p1 has no value for metric 'x'"):
        st.metric_series([{"point_id": "p1", "metrics": {}}], "x")


def test_metric_series_errors():
    with pytest.raises(AnsibleFilterError, match="metric_series: metric 'x' of point p is 'fast'"):
        st.metric_series([{"point_id": "p", "metrics": {"x": "fast"}}], "x")
    with pytest.raises(AnsibleFilterError, match="metric_series: item 0 is not a result document"):
        st.metric_series([{"x": 1}], "x")
    with pytest.raises(AnsibleFilterError, match="expected a list of result documents"):
        st.metric_series("docs", "x")
    with pytest.raises(AnsibleFilterError, match="metric must be a metric name"):
        st.metric_series([], None)


def test_filter_module_exports_every_filter():
    from testbed_stats import FilterModule  # the filter plugin (filter_plugins/ is on the tests' path)
    filters = FilterModule().filters()
    assert sorted(filters) == sorted(["summary", "pct_change", "pct_drop", "ratio_to", "overall_index",
                                      "welch_test", "jain_index", "metric_series", "non_negative_metric",
                                      "clip_interval", "fidelity_check"])
    assert filters["overall_index"] is st.overall_index


# ---------------------------------------------------------------------------
# through real Ansible (ansible.cfg's filter_plugins path)
# ---------------------------------------------------------------------------

ANSIBLE = os.path.join(os.path.dirname(sys.executable), "ansible")
if not os.path.exists(ANSIBLE):
    ANSIBLE = shutil.which("ansible") or ANSIBLE


@pytest.mark.skipif(not os.path.exists(ANSIBLE), reason="ansible command not found")
def test_filters_work_in_ansible():
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
    msg = "{{ {'io': 0.74, 'ram': 0.98} | overall_index }} {{ [1,2,3,4,5] | summary }}"
    cmd = [ANSIBLE, "localhost", "-c", "local", "-i", "localhost,", "-m", "debug", "-a", json.dumps({"msg": msg})]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "'index_pct': 86.0" in res.stdout
    assert "'ci_half': 1.963243161477487" in res.stdout
    bad = [ANSIBLE, "localhost", "-c", "local", "-i", "localhost,", "-m", "debug", "-a", "msg={{ [] | summary }}"]
    res = subprocess.run(bad, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode != 0
    assert "summary: values is empty" in res.stdout + res.stderr


# ---------------------------------------------------------------------------
# fidelity_check (the harness against the tool run by hand)
# ---------------------------------------------------------------------------

def test_fidelity_check_passes_within_tolerance():
    from ansible.module_utils.testbed_stats.core import fidelity_check
    out = fidelity_check([1000.0, 1010.0], [990.0, 1000.0], 5, direct_label="sysbench by hand",
                         harness_label="the harness's figure", unit="events/s")
    assert out["passed"] and out["direct_n"] == 2 and out["harness_n"] == 2
    assert out["difference_pct"] == pytest.approx((1005.0 - 995.0) / 995.0 * 100)
    assert out["sentence"].startswith("Fidelity check passed: sysbench by hand gave 1005 events/s (n=2), "
                                      "the harness's figure 995.0 events/s (n=2); difference +1.01 %")


def test_fidelity_check_fails_outside_tolerance_and_scales():
    from ansible.module_utils.testbed_stats.core import fidelity_check
    out = fidelity_check([2e9], [1.5], 5, direct_scale=1e-9, unit="Gbit/s")
    assert not out["passed"] and out["difference_pct"] == pytest.approx(33.333333)
    assert "FAILED" in out["sentence"] and "spread" not in out["sentence"]


@pytest.mark.parametrize("args,message", [
    (([], [1.0]), "direct must be a non-empty list"),
    (([1.0], []), "harness must be a non-empty list"),
    (([1.0], [1.0], 0), "tolerance_pct must be > 0"),
    (([None], [1.0]), "direct value is None"),
    (([1.0], [1.0], 5, "x"), "direct_scale must be a number"),
])
def test_fidelity_check_refuses(args, message):
    from ansible.module_utils.testbed_stats.core import fidelity_check
    with pytest.raises(AnsibleFilterError, match="fidelity_check") as err:
        fidelity_check(*args)
    assert message in str(err.value)
