"""hpcc parser and hpcc_parse module, on real hpccoutf.txt files of Debian's hpcc 1.5.0 (one process)."""
import hpcc_parse
import pytest
from ansible.module_utils.testbed_parse import ParseError, unit_of
from ansible.module_utils.testbed_parse_hpcc import parse
from conftest import fixture_path, read_fixture
from helpers import run_module


def _parse(name):
    return parse(read_fixture("hpcc", name), source=name)


def test_single_process_run_every_metric():
    result = _parse("hpccoutf-n2000-p1.txt")
    m = result["metrics"]
    assert m["hpl_gflops"] == pytest.approx(1.98986)
    assert (m["hpl_time_s"], m["hpl_n"], m["hpl_nb"], m["procs"], m["stream_threads"]) == (2.68326, 2000, 80, 1, 1)
    assert (m["star_stream_copy_gb_s"], m["star_stream_scale_gb_s"], m["star_stream_add_gb_s"],
            m["star_stream_triad_gb_s"]) == (39.5846, 39.1648, 33.3099, 34.1351)
    assert (m["single_stream_copy_gb_s"], m["single_stream_scale_gb_s"], m["single_stream_add_gb_s"],
            m["single_stream_triad_gb_s"]) == (40.2625, 41.4906, 34.2912, 36.2899)
    assert (m["single_random_access_gups"], m["star_random_access_gups"], m["mpi_random_access_gups"]) == (
        0.120729, 0.109842, 0.006543)
    assert (m["star_dgemm_gflops"], m["single_dgemm_gflops"], m["ptrans_gb_s"]) == (3.70052, 3.32915, 0.601138)
    assert (m["star_fft_gflops"], m["single_fft_gflops"], m["mpi_fft_gflops"]) == (3.89441, 1.46492, 2.9432)
    # HPL prints 0.0061929 for this run
    assert m["hpl_scaled_residual"] == pytest.approx(0.0061929, rel=1e-4)
    assert result["valid"] is True and result["reasons"] == [] and result["warnings"] == []
    assert result["details"]["version"] == "1.5.0f" and result["details"]["hpl_threshold"] == 16.0
    assert result["details"]["summary"]["HPL_Tflops"] == "0.00198986"


def test_default_input_run():
    result = _parse("hpccoutf-no-input-defaults.txt")
    assert result["metrics"]["hpl_n"] == 2560 and result["valid"] is True


def test_appended_file_reads_the_last_run():
    result = _parse("hpccoutf-appended-two-runs.txt")
    assert result["metrics"]["hpl_n"] == 1000 and result["metrics"]["hpl_gflops"] == pytest.approx(3.25577)
    assert result["details"]["runs_in_file"] == 2
    assert result["warnings"] == ["the file holds 1 earlier run(s) (hpcc appends to hpccoutf.txt); the last one is read"]


def test_failed_residual_is_invalid():
    text = read_fixture("hpcc", "hpccoutf-n2000-p1.txt").replace("HPL_RnormI=2.91318e-12", "HPL_RnormI=2.91318e-8")
    text = text.replace("0 tests completed and failed residual checks", "1 tests completed and failed residual checks")
    result = parse(text)
    assert result["valid"] is False
    assert result["reasons"][0].startswith("HPL scaled residual 61.9")
    assert "1 test(s) failed the residual check" in result["reasons"][1]


def test_failure_markers_are_invalid():
    text = read_fixture("hpcc", "hpccoutf-n2000-p1.txt")
    text = text.replace("Success=1", "Success=0", 1)
    text = text.replace("Found 0 errors in 2097152 locations (passed).", "Found 90000 errors in 2097152 locations (failed).", 1)
    text = text.replace("MPIRandomAccess_ErrorsFraction=0", "MPIRandomAccess_ErrorsFraction=0.0429", 1)
    text = text.replace("Node(s) with error 0", "Node(s) with error 1", 1)
    result = parse(text)
    reasons = " | ".join(result["reasons"])
    assert result["valid"] is False
    assert "Success=0" in reasons and "(failed)" in reasons and "ErrorsFraction=0.0429" in reasons
    assert "StarRandomAccess: 1 process(es) reported an error" in reasons


def test_not_run_value_is_null_with_warning():
    text = read_fixture("hpcc", "hpccoutf-n2000-p1.txt").replace("StarFFT_Gflops=3.89441", "StarFFT_Gflops=-1")
    result = parse(text)
    assert result["metrics"]["star_fft_gflops"] is None
    assert result["warnings"] == ["star_fft_gflops is null: StarFFT_Gflops=-1 (test not run)"]


def test_truncated_file_raises():
    text = read_fixture("hpcc", "hpccoutf-n2000-p1.txt")
    with pytest.raises(ParseError, match="no 'End of Summary section.'"):
        parse(text[:text.index("StarSTREAM_Copy=")])
    with pytest.raises(ParseError, match="stopped before the end of its run"):
        parse(text[:text.index("Begin of Summary section.")])


@pytest.mark.parametrize("text, match", [
    ("", "empty"),
    ("random words\n", "not an hpccoutf.txt"),
    ("Begin of Summary section.\nHPL_Tflops=1\nEnd of Summary section.\n", "lacks HPL_N"),
    ("Begin of Summary section.\nthis is not a pair\nEnd of Summary section.\n", "not key=value"),
])
def test_bad_outputs_raise(text, match):
    with pytest.raises(ParseError, match=match):
        parse(text)


def test_hpccinf_is_not_a_report():
    with pytest.raises(ParseError, match="not an hpccoutf.txt"):
        parse(read_fixture("hpcc", "hpccinf-n2000-p1.input"))


def test_nan_value_raises():
    text = read_fixture("hpcc", "hpccoutf-n2000-p1.txt").replace("SingleSTREAM_Copy=40.2625", "SingleSTREAM_Copy=nan")
    with pytest.raises(ParseError, match="SingleSTREAM_Copy is nan"):
        parse(text)


def test_metric_units():
    assert unit_of("hpl_gflops") == "GFLOP/s" and unit_of("single_stream_triad_gb_s") == "GB/s"
    assert unit_of("star_random_access_gups") == "GUP/s" and unit_of("hpl_time_s") == "s"


def test_module_and_tool_parse():
    failed, result = run_module(hpcc_parse, {"src": fixture_path("hpcc", "hpccoutf-n2000-p1.txt"), "keep_raw": False})
    assert not failed and result["ansible_facts"]["hpcc"]["metrics"]["hpl_n"] == 2000
    failed, result = run_module(hpcc_parse, {"content": "nothing\n"})
    assert failed and "not an hpccoutf.txt" in result["msg"]
    import tool_parse
    failed, result = run_module(tool_parse, {"tool": "hpcc", "content": read_fixture("hpcc", "hpccoutf-n2000-p1.txt")})
    assert not failed and result["valid"] is True
