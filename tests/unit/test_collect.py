"""The collect protocol and the controller's time line (module_utils/testbed_collect.py)."""
import os

import pytest
from ansible.module_utils.testbed_collect import (
    CollectError,
    normalize_offsets,
    sections,
    to_controller_time,
    to_host_time,
)
from conftest import read_fixture

# ---------------------------------------------------------------------------
# sections
# ---------------------------------------------------------------------------


def test_sections_split_a_real_director_read():
    found = sections(read_fixture(os.path.join("lvs", "wrr-weighted-60"), "director-counters.txt"))
    assert sorted(found) == ["ipvsadm-stats", "zeroed-at"]
    assert found["ipvsadm-stats"].startswith("IP Virtual Server version 1.2.1 (size=4096)\n")
    assert found["ipvsadm-stats"].endswith("  -> 10.250.2.13:80                    100      600      400    38400    48800\n")
    assert found["zeroed-at"] == "1795281223.506209854\n"


def test_sections_text_rules():
    # text before the first header is dropped; blank lines around a section are trimmed, inside kept
    assert sections("x\n=== a\n1\n2\n=== b\n\n3\n") == {"a": "1\n2\n", "b": "3\n"}
    assert sections("=== a\n\n1\n\n2\n\n") == {"a": "1\n\n2\n"}
    # CRLF output, a trailing blank after the name, an empty section
    assert sections("=== cpu \r\nline\r\n=== empty\r\n") == {"cpu": "line\n", "empty": "\n"}
    # a name that comes twice keeps its last section
    assert sections("=== a\nold\n=== a\nnew\n") == {"a": "new\n"}
    # prefixed names are plain names
    assert sections("=== prev-cpu\n1\n") == {"prev-cpu": "1\n"}


@pytest.mark.parametrize("line", ["==== a", "=== A", "=== a b", " === a", "===a", "=== "])
def test_sections_header_must_be_exact(line):
    # not a header: plain content of the open section
    assert sections("=== s\n%s\n" % line) == {"s": line + "\n"}


@pytest.mark.parametrize("text", [None, "", "no header at all\n"])
def test_sections_of_nothing(text):
    assert sections(text) == {}


# ---------------------------------------------------------------------------
# clock offsets
# ---------------------------------------------------------------------------


def test_normalize_offsets_both_shapes():
    offsets, uncertainty = normalize_offsets({
        "director": {"offset_s": -0.015, "uncertainty_s": 0.12},
        "client1": {"offset_s": "2.5", "uncertainty_s": None},
        "client2": 0.25,
    })
    assert offsets == {"director": -0.015, "client1": 2.5, "client2": 0.25}
    assert uncertainty == {"director": 0.12, "client1": 0.0, "client2": 0.0}
    assert normalize_offsets(None) == ({}, {}) and normalize_offsets("") == ({}, {}) and normalize_offsets({}) == ({}, {})


@pytest.mark.parametrize("value, message", [
    ([0.5], "clock_offsets must be a mapping {host: {offset_s, uncertainty_s}}, got list"),
    ({"d": {"offset_s": "soon"}}, "clock_offsets[d]: offset_s must be a number of seconds, got 'soon'"),
    ({"d": {"uncertainty_s": 0.1}}, "clock_offsets[d]: offset_s must be a number of seconds, got None"),
    ({"d": None}, "clock_offsets[d]: offset_s must be a number of seconds, got None"),
    ({"d": {"offset_s": 1, "uncertainty_s": "a bit"}},
     "clock_offsets[d]: uncertainty_s must be a number of seconds, got 'a bit'"),
])
def test_normalize_offsets_refuses(value, message):
    with pytest.raises(CollectError) as err:
        normalize_offsets(value)
    assert str(err.value) == message
    assert isinstance(err.value, ValueError)


def test_normalize_offsets_names_its_input():
    with pytest.raises(CollectError, match=r"^offsets\[d\]: offset_s"):
        normalize_offsets({"d": "x"}, name="offsets")


def test_time_line():
    # a host 100 s behind the controller (offset = host minus controller = -100)
    assert to_controller_time(1000.0, -100.0) == 1100.0
    assert to_host_time(1100.0, -100.0) == 1000.0
    # a host ahead; times given as text (raw outputs) are numbers too
    assert to_controller_time("1795281223.5", 2.5) == pytest.approx(1795281221.0)
    # no offset: in step
    assert to_controller_time(5, None) == 5.0 and to_host_time(5, None) == 5.0 and to_host_time(5, 0) == 5.0


@pytest.mark.parametrize("offset", [-0.015, 0.0, 3.25, -1e3])
def test_time_line_round_trip(offset):
    t = 1795281309.719
    assert to_host_time(to_controller_time(t, offset), offset) == pytest.approx(t, abs=1e-6)
    assert to_controller_time(t, offset) - to_controller_time(t - 10.0, offset) == pytest.approx(10.0)
