"""cpu_sampler: a continuous log, container cgroup CPU, the awk window cutter."""

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _lines(host):
    return host.file("/var/tmp/testbed-cpu-sampler/samples.log").content_string.splitlines()


def test_installed(host):
    assert host.file("/usr/local/bin/testbed-cpu-sampler").mode == 0o755
    assert host.file("/usr/local/bin/testbed-cpu-window").mode == 0o755


def test_log_header_and_samples(host):
    lines = _lines(host)
    assert lines[0].startswith("# cpus=")
    assert "cgroup=/sys/fs/cgroup/" in lines[0]
    samples = [line.split() for line in lines[1:]]
    assert len(samples) >= 8
    stamps = [float(s[0]) for s in samples]
    assert stamps == sorted(stamps)
    assert all(s[2] == "cpu" and len(s) >= 7 for s in samples)
    assert not host.file("/var/tmp/testbed-cpu-sampler/sampler.pid").exists


def test_window_shows_the_busy_container(host):
    start, end = (float(v) for v in host.file("/var/tmp/burn.window").content_string.split())
    out = host.check_output("testbed-cpu-window -v start=%.3f -v end=%.3f /var/tmp/testbed-cpu-sampler/samples.log"
                            % (start, end))
    sys.path.insert(0, os.path.join(ROOT, "tests", "unit"))
    import conftest  # noqa: F401  (makes ansible.module_utils.testbed_* importable)
    from ansible.module_utils.testbed_lvs import cpu_window

    cpu = cpu_window(out, start, end, source="molecule")
    assert cpu["container"] is True
    # The container burned one CPU for the whole window: its cgroup used ~100 % of one CPU.
    assert 70.0 <= cpu["cgroup_pct"] <= 110.0, cpu
    assert cpu["samples"] >= 5
