"""hpcc's HPL problem size N in the container comparison (filters cc_hpcc, cc_hpcc_timeout_s, cc_hpcc_note,
cc_memtotal_kib; roles/container_compare/module_utils/testbed_cc_hpcc.py).

N auto is the largest multiple of NB whose matrix (8·N² bytes) fits a fraction of the memory the
smallest measured guest or host can use; an explicit N must be a whole number from NB up that fits.
"""
import os

import container_compare as cc
import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible.module_utils import testbed_cc_hpcc as hpcc
from conftest import FIXTURES, ROOT

MIB = 1048576
ALL = ["native", "docker", "podman", "lxc", "lxd", "kvm"]
AUTO = {"n": "auto", "nb": 128, "p": 2, "q": 2, "fraction": 0.8, "memory_mb": 0}


def _yaml(*path):
    with open(os.path.join(ROOT, *path)) as handle:
        return yaml.safe_load(handle)


# ---------------------------------------------------------------------------
# the arithmetic
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("mib, fraction, nb, n", [
    (3072, 0.8, 128, 17920),    # 80 % of 3 GiB: sqrt(0.8 * 3 GiB / 8) = 17 943 -> 17 920
    (2048, 0.8, 128, 14592),    # the KVM guest's default: 14 654 -> 14 592
    (12288, 0.8, 128, 35840),   # study B's 12 GB host: its 45 000 does not fit
    (16384, 0.8, 128, 41344),
    (16384, 0.95, 128, 45056),  # the largest fraction
    (2048, 0.8, 64, 14592),
    (2048, 0.8, 100, 14600),    # NB need not be a power of two
    (2048, 0.8, 1, 14654),      # NB 1: the plain square root, rounded down
    (1, 0.8, 512, 0),           # 1 MiB: N 323, not even one block of 512
])
def test_auto_n_is_the_largest_multiple_of_nb_that_fits(mib, fraction, nb, n):
    memory = mib * MIB
    assert hpcc.auto_n(memory, fraction, nb) == n
    assert n % nb == 0
    assert 8 * n * n <= fraction * memory < 8 * (n + nb) ** 2


def test_auto_n_without_memory_is_zero():
    assert hpcc.auto_n(None, 0.8, 128) == 0
    assert hpcc.auto_n(0, 0.8, 128) == 0


def test_estimate_and_timeout_follow_n():
    # HPL's 2/3·N³ flops at 5 GFLOPS a process + 6 s; the bound: 3 x that + 5 min, at least 30 min
    assert hpcc.estimate_s(45000, 2, 2) == pytest.approx(2 / 3 * 45000 ** 3 / 2e10 + 6)
    assert hpcc.timeout_s(45000, 2, 2) == 9430
    assert hpcc.timeout_s(1000, 1, 2) == 1800
    assert hpcc.estimate_s(None) == hpcc.ORCHESTRATION_S  # not sized yet: HPL's time left out
    assert cc.cc_hpcc_timeout_s({"n": 45000, "nb": 128, "p": 2, "q": 2, "workload": "hpcc"}) == 9430
    with pytest.raises(AnsibleFilterError, match="cc_hpcc_timeout_s: parameters must be a hpcc point's"):
        cc.cc_hpcc_timeout_s({"n": "auto", "p": 2, "q": 2})


def test_memtotal_from_proc_meminfo():
    text = "MemTotal:       24683652 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\n"
    assert cc.cc_memtotal_kib(text) == 24683652
    with pytest.raises(AnsibleFilterError, match="cc_memtotal_kib: no 'MemTotal: <n> kB' line"):
        cc.cc_memtotal_kib("MemFree: 1 kB\n")


@pytest.mark.parametrize("text, host, decimal_si, expected", [
    ("", None, False, None),
    ("4g", None, False, 4096 * MIB),
    ("4G", None, False, 4096 * MIB),
    ("512m", None, False, 512 * MIB),
    ("2gb", None, False, 2048 * MIB),           # Docker's gb is a power of 1024 too
    ("1073741824", None, False, 1024 * MIB),    # bytes
    ("512MiB", None, True, 512 * MIB),
    ("512MB", None, True, 512 * 1000 ** 2),     # LXD's MB is a power of 1000
    ("50%", 8192 * MIB, True, 4096 * MIB),
    ("50%", None, True, None),                  # a share of a host whose memory is not known yet
])
def test_container_memory_limits(text, host, decimal_si, expected):
    assert hpcc.limit_bytes(text, host, decimal_si) == expected


def test_a_limit_that_is_no_size_is_refused():
    with pytest.raises(hpcc.HpccError, match="'lots' is not a memory size such as 512m or 4g"):
        hpcc.limit_bytes("lots")


# ---------------------------------------------------------------------------
# the run's N: one for every variant, from the smallest memory
# ---------------------------------------------------------------------------

def test_auto_sizes_from_the_smallest_memory_the_kvm_guest():
    sized = cc.cc_hpcc(AUTO, ALL, {"host_kib": 16 * 1024 * 1024, "kvm_mib": 3072, "limits": {}})
    assert sized["n"] == 17920 and sized["sized"] and sized["problem"] is None
    assert sized["memory_mib"] == 3072 and sized["memory_of"] == "the kvm guest's 3 072 MiB (runtime_kvm_memory_mb)"
    assert sized["matrix_bytes"] == 8 * 17920 ** 2
    assert sized["why"].startswith("auto: HPL's matrix, 8·N² bytes = 2.39 GiB, in 80 % of the kvm guest's 3 072 MiB")
    assert sized["plan"].startswith("hpcc: N 17 920 (auto: ")
    assert "about 3 min a point" in sized["plan"] and sized["plan"].endswith("timeout 30 min")


def test_auto_sizes_from_the_host_when_it_is_the_smallest():
    sized = cc.cc_hpcc(AUTO, ALL, {"host_kib": 4 * 1024 * 1024, "kvm_mib": 8192})
    assert sized["n"] == hpcc.auto_n(4096 * MIB, 0.8, 128) == 20608
    assert sized["memory_of"] == "the container host's 4 096 MiB (MemTotal)"
    # a container's limit below the host's memory is the smallest
    limited = cc.cc_hpcc(AUTO, ALL, {"host_kib": 4 * 1024 * 1024, "kvm_mib": 8192, "limits": {"podman": "1g"}})
    assert limited["n"] == 10240 and limited["memory_of"] == "the podman guest's 1 024 MiB (runtime_podman_memory 1g)"
    # a limit of a variant that is not measured does not count
    assert cc.cc_hpcc(AUTO, ["native", "kvm"], {"host_kib": 4 * 1024 * 1024, "kvm_mib": 8192,
                                                "limits": {"podman": "1g"}})["n"] == 20608
    # cc_variants's mappings work as well as names
    assert cc.cc_hpcc(AUTO, [{"host": "cc-kvm", "variant": "kvm"}], {"kvm_mib": 3072})["n"] == 17920


def test_every_fraction_changes_n_and_the_stated_host_memory_is_used():
    small = cc.cc_hpcc(dict(AUTO, fraction=0.5), ["native"], {"host_kib": 8 * 1024 * 1024})
    large = cc.cc_hpcc(dict(AUTO, fraction=0.95), ["native"], {"host_kib": 8 * 1024 * 1024})
    assert small["n"] < large["n"] and 8 * large["n"] ** 2 <= 0.95 * 8192 * MIB
    stated = cc.cc_hpcc(dict(AUTO, memory_mb=4096), ["native"], {"host_kib": 8 * 1024 * 1024})
    assert stated["n"] == 20608 and stated["memory_of"] == "the container host's 4 096 MiB (container_compare_hpcc_memory_mb)"


@pytest.mark.parametrize("fraction", [0, -0.5, 0.96, 1, "half", None, True])
def test_fractions_out_of_bounds_are_refused(fraction):
    sized = cc.cc_hpcc(dict(AUTO, fraction=fraction), ["kvm"], {"kvm_mib": 2048})
    assert "container_compare_hpcc_memory_fraction must be a number greater than 0 and at most 0.95" in sized["problem"]
    # the role's constraints say it as well: the input check does not repeat it
    assert sized["n_problem"] is None


def test_on_the_controller_n_is_assumed_from_what_is_known():
    """The plan touches no host: the host's MemTotal is not known yet."""
    assumed = cc.cc_hpcc(AUTO, ALL, {"kvm_mib": 2048})
    assert assumed["n"] == 14592 and not assumed["sized"]
    assert assumed["plan"].startswith("hpcc: N 14 592 assumed (auto: ")
    assert "a smaller MemTotal of the container host, read when the run starts, gives a smaller N" in assumed["plan"]
    # nothing known: N waits for the run, the estimate leaves HPL out and says so
    unknown = cc.cc_hpcc(AUTO, ["native", "docker"], {})
    assert unknown["n"] == "auto" and not unknown["sized"] and unknown["problem"] is None
    assert unknown["estimate_s"] == hpcc.ORCHESTRATION_S and unknown["matrix_bytes"] is None
    assert unknown["plan"] == (
        "hpcc: N auto: sized from the container host's MemTotal, read when the run starts (or from "
        "container_compare_hpcc_memory_mb when given); the estimate leaves HPL's time out (6 s a point): give "
        "container_compare_hpcc_memory_mb (the container host's memory in MiB) to plan with it")
    # the operator states the host's memory: the plan sizes N with it
    stated = cc.cc_hpcc(dict(AUTO, memory_mb=12288), ["native", "docker"], {})
    assert stated["n"] == 35840 and stated["sized"] and "assumed" not in stated["plan"]
    # an LXD limit in % waits for the host's memory too
    share = cc.cc_hpcc(dict(AUTO, memory_mb=8192), ["native", "lxd"], {"limits": {"lxd": "25%"}})
    assert share["n"] == hpcc.auto_n(2048 * MIB, 0.8, 128) and share["memory_of"].startswith("the lxd guest's 2 048 MiB")


def test_an_explicit_n_is_used_as_set_in_every_variant():
    lab = cc.cc_hpcc(dict(AUTO, n=1000, nb=64, p=1, q=2), ALL, {"kvm_mib": 2048})
    assert lab["n"] == 1000 and lab["sized"] and lab["problem"] is None
    assert lab["why"] == ("set by container_compare_hpcc_n; HPL's matrix, 8·N² bytes = 7.6 MiB, in the kvm guest's "
                          "2 048 MiB (runtime_kvm_memory_mb), the smallest memory of the variants; checked against "
                          "the container host's MemTotal, read when the run starts")
    assert lab["plan"].startswith("hpcc: N 1 000 (set by container_compare_hpcc_n;")
    assert "about 6 s a point" in lab["plan"]
    # -e gives a string
    assert cc.cc_hpcc(dict(AUTO, n="20000"), ["native"], {"host_kib": 16 * 1024 * 1024})["n"] == 20000


def test_an_explicit_n_that_does_not_fit_is_refused_with_the_bytes_it_needs():
    study = cc.cc_hpcc(dict(AUTO, n=45000), ["native", "docker"], {"host_kib": 12 * 1024 * 1024})
    assert study["n_problem"] == study["problem"] == (
        "container_compare_hpcc_n 45 000 needs 16 200 000 000 bytes (15.09 GiB, 8·N²) for HPL's matrix, more than "
        "the container host's 12 288 MiB (MemTotal): give a smaller N, or container_compare_hpcc_n=auto (the largest "
        "N that fits 80 % of the smallest memory) in your inventory's group_vars or with -e.")
    # refused on the controller already where a memory is known there (the KVM guest's)
    kvm = cc.cc_hpcc(dict(AUTO, n=45000), ALL, {"kvm_mib": 2048})
    assert "more than the kvm guest's 2 048 MiB (runtime_kvm_memory_mb)" in kvm["n_problem"]
    # the whole memory counts for an explicit N (not the fraction): 8·N² = 2 GiB exactly fits 2 GiB
    assert cc.cc_hpcc(dict(AUTO, n=16384), ["kvm"], {"kvm_mib": 2048})["problem"] is None
    assert cc.cc_hpcc(dict(AUTO, n=16385), ["kvm"], {"kvm_mib": 2048})["problem"] is not None


@pytest.mark.parametrize("n, message", [
    (50, "container_compare_hpcc_n must be auto or a whole number from 128 (container_compare_hpcc_nb) to 200000, "
         "got 50"),
    (300000, "container_compare_hpcc_n must be auto or a whole number from 128"),
    ("banana", "container_compare_hpcc_n is 'banana', neither auto nor a whole number"),
    (1000.5, "container_compare_hpcc_n is 1000.5, neither auto nor a whole number"),
    (True, "container_compare_hpcc_n is True, neither auto nor a whole number"),
])
def test_n_that_is_neither_auto_nor_a_whole_number_from_nb_is_refused(n, message):
    sized = cc.cc_hpcc(dict(AUTO, n=n), ["kvm"], {"kvm_mib": 65536})
    assert message in sized["n_problem"]


def test_memory_that_holds_no_block_and_a_stated_memory_above_memtotal_are_refused():
    tiny = cc.cc_hpcc(dict(AUTO, nb=4096), ["kvm"], {"kvm_mib": 128})
    assert tiny["n_problem"].startswith("80 % of the kvm guest's 128 MiB (runtime_kvm_memory_mb) holds no HPL matrix "
                                        "of N >= NB (4096)")
    over = cc.cc_hpcc(dict(AUTO, memory_mb=16384), ["native"], {"host_kib": 8 * 1024 * 1024})
    assert over["n_problem"] == (
        "container_compare_hpcc_memory_mb is 16 384 MiB, more than the container host has (MemTotal 8 192 MiB): give "
        "at most 8192 in your inventory's group_vars or with -e, or 0 to size hpcc's N from MemTotal.")


def test_bad_filter_input_stops():
    with pytest.raises(AnsibleFilterError, match="cc_hpcc: settings must be a mapping"):
        cc.cc_hpcc("auto", ["kvm"])
    with pytest.raises(AnsibleFilterError, match="cc_hpcc: memory must be a mapping"):
        cc.cc_hpcc(AUTO, ["kvm"], "2048")


# ---------------------------------------------------------------------------
# the N in the plan's points, the point's check, the report's sentence
# ---------------------------------------------------------------------------

def test_the_points_carry_the_n_used():
    settings = {"hpcc_n": cc.cc_hpcc(AUTO, ALL, {"kvm_mib": 3072, "host_kib": 1 << 24})["n"], "hpcc_nb": 128,
                "hpcc_p": 2, "hpcc_q": 2}
    (workload,) = cc.cc_workloads(settings, ["hpcc"])
    assert workload == {"name": "hpcc", "grid": {}, "parameters": {"n": 17920, "nb": 128, "p": 2, "q": 2}}
    # the plan before the host's memory is known
    (waiting,) = cc.cc_workloads(dict(settings, hpcc_n="auto"), ["hpcc"])
    assert waiting["parameters"]["n"] == "auto"
    with pytest.raises(AnsibleFilterError, match="hpcc's N must be a whole number or auto"):
        cc.cc_workloads(dict(settings, hpcc_n="lots"), ["hpcc"])


def _hpcc_run():
    import importlib
    parse = importlib.import_module("ansible.module_utils.testbed_parse_hpcc").parse
    with open(os.path.join(FIXTURES, "hpcc", "hpccoutf-n2000-p1.txt")) as handle:
        text = handle.read()
    return {"tool": "hpcc", "argv": ["hpcc"], "host": "cc-docker", "rc": 0, "finished": True, "stdout": "",
            "stderr": "", "output_text": text, "duration_s": 5.0, "parsed": parse(text, "hpccoutf.txt"), "error": None}


def test_a_point_whose_hpcc_ran_another_n_is_invalid():
    point = {"id": "docker__hpcc__rep1", "variant": "docker", "repetition": 1,
             "parameters": {"workload": "hpcc", "n": 2000, "nb": 64, "p": 1, "q": 1}}
    assert cc.cc_point([_hpcc_run()], point, {}, {})["valid"]
    point["parameters"]["n"] = 3000
    other = cc.cc_point([_hpcc_run()], point, {}, {})
    assert not other["valid"] and "hpcc ran HPL with N 2000, the point is planned with N 3000" in other["reasons"]


def _doc(n, why, workload="hpcc"):
    return {"variant": "kvm", "parameters": {"workload": workload, "n": n, "nb": 128, "p": 2, "q": 2},
            "extra": {"workload": workload, "hpcc": {"n": n, "why": why}}}


def test_the_report_says_which_n_and_why():
    why = "auto: HPL's matrix, 8·N² bytes = 2.39 GiB, in 80 % of the kvm guest's 3 072 MiB (runtime_kvm_memory_mb)"
    note = cc.cc_hpcc_note([_doc(17920, why), _doc(17920, why), _doc(None, None, workload="cpu")])
    assert note == ("hpcc's HPL problem size, the same in every variant: N 17 920 (" + why
                    + "), NB 128, P x Q = 2 x 2.")
    two = cc.cc_hpcc_note([_doc(17920, why), _doc(1000, "set by container_compare_hpcc_n")])
    assert two.startswith("hpcc's HPL problem size differs between the stored points")
    assert "N 1 000 (set by container_compare_hpcc_n), NB 128, P x Q = 2 x 2, 1 point" in two
    assert cc.cc_hpcc_note([_doc(None, None, workload="cpu")]) is None
    assert cc.cc_hpcc_note([]) is None


# ---------------------------------------------------------------------------
# the settings: defaults, study profile, lab
# ---------------------------------------------------------------------------

def test_defaults_spec_and_profiles():
    defaults = _yaml("roles", "container_compare", "defaults", "main.yml")
    assert defaults["container_compare_hpcc_n"] == "auto"
    assert defaults["container_compare_hpcc_memory_fraction"] == 0.8
    assert defaults["container_compare_hpcc_memory_mb"] == 0
    spec = _yaml("roles", "container_compare", "meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
    for name in ("container_compare_hpcc_n", "container_compare_hpcc_memory_fraction",
                 "container_compare_hpcc_memory_mb"):
        assert spec[name]["default"] == defaults[name]
    constraints = _yaml("roles", "container_compare", "meta", "testbed_constraints.yml")["testbed_constraints"]
    assert constraints["container_compare_hpcc_memory_fraction"] == {"exclusive_minimum": 0, "maximum": 0.95}
    # the study profile takes the default, auto (the study's 45 000 needs about 16 GB); the lab keeps its small N
    study = _yaml("roles", "container_compare", "meta", "testbed_experiment.yml")["testbed_experiment"]["study_profile"]
    assert "container_compare_hpcc_n" in study["from_defaults"]
    assert _yaml("inventories", "lab", "group_vars", "container_lab.yml")["container_compare_hpcc_n"] == 1000


def test_the_kvm_memory_fallback_is_runtime_kvms_default():
    with open(os.path.join(ROOT, "roles", "container_compare", "vars", "main.yml")) as handle:
        text = handle.read()
    default = _yaml("roles", "runtime_kvm", "defaults", "main.yml")["runtime_kvm_memory_mb"]
    assert "runtime_kvm_memory_mb | default({})".format(default) in text
