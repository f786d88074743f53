"""cpu_sampler: a continuous log, container cgroup CPU, the awk window cutter."""

import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

# side_effect.yml: the sampler's interval and the idle / busy windows (s).
INTERVAL, IDLE_S, BUSY_S = 0.2, 5.0, 8.0


def _lines(host):
    return host.file("/var/lib/testbed/cpu-sampler/samples.log").content_string.splitlines()


def test_installed(host):
    assert host.file("/usr/local/bin/testbed-cpu-sampler").mode == 0o755
    assert host.file("/usr/local/bin/testbed-cpu-window").mode == 0o755


def test_private_work_directory(host):
    parent, workdir = host.file("/var/lib/testbed"), host.file("/var/lib/testbed/cpu-sampler")
    assert parent.is_directory and parent.mode == 0o755 and parent.user == "root"
    assert workdir.is_directory and not workdir.is_symlink
    assert workdir.mode == 0o700 and workdir.user == "root" and workdir.group == "root"
    assert host.file("/var/lib/testbed/cpu-sampler/samples.log").mode == 0o600


def test_log_header_and_samples(host):
    lines = _lines(host)
    assert lines[0].startswith("# cpus=")
    assert "cgroup=/sys/fs/cgroup/" in lines[0]
    samples = [line.split() for line in lines[1:]]
    assert len(samples) >= 8
    stamps = [float(s[0]) for s in samples]
    assert stamps == sorted(stamps)
    assert all(s[2] == "cpu" and len(s) >= 7 for s in samples)
    assert not host.file("/var/lib/testbed/cpu-sampler/sampler.pid").exists


def _window(host, name):
    """(start, end, cgroup CPU % of one CPU from the cgroup's own cpu.stat) of a marked window."""
    (start, used0), (end, used1) = (
        (float(t), int(u)) for t, u in (line.split() for line in host.file(name).content_string.splitlines()))
    return start, end, 100.0 * (used1 - used0) / 1e9 / (end - start)


def _sampled(host, start, end):
    out = host.check_output("testbed-cpu-window -v start=%.3f -v end=%.3f /var/lib/testbed/cpu-sampler/samples.log"
                            % (start, end))
    import ansible.module_utils  # the one import convention (docs/architecture.md, "Python imports")

    if os.path.join(ROOT, "module_utils") not in ansible.module_utils.__path__:
        ansible.module_utils.__path__.append(os.path.join(ROOT, "module_utils"))
    from ansible.module_utils.testbed_sampling import cpu_window

    return cpu_window(out, start, end, source="molecule")


def test_sampler_agrees_with_the_cgroup_idle_and_busy(host):
    """The sampler's container CPU matches the cgroup's own accounting, idle and busy.

    The reference is read in the container around each window, so the check holds
    on a loaded machine too; the busy window lasts until the container has used 2
    CPU-seconds (side_effect.yml), so it is clearly busier than idle on any machine
    however loaded, or the test proves nothing.
    """
    idle_start, idle_end, idle_ref = _window(host, "/var/tmp/idle.window")
    busy_start, busy_end, busy_ref = _window(host, "/var/tmp/burn.window")
    idle_cpu_s, busy_cpu_s = idle_ref / 100 * (idle_end - idle_start), busy_ref / 100 * (busy_end - busy_start)
    idle, busy = _sampled(host, idle_start, idle_end), _sampled(host, busy_start, busy_end)
    assert idle["container"] is True and busy["container"] is True
    # at least half the nominal samples: the sampler ran through each window
    # (a loaded machine may delay ticks, not halve them)
    assert idle["samples"] >= 0.5 * IDLE_S / INTERVAL, (idle, busy)
    assert busy["samples"] >= 0.5 * BUSY_S / INTERVAL, (idle, busy)
    assert busy_cpu_s >= 2.0 and busy_cpu_s > 4 * idle_cpu_s, (idle_cpu_s, busy_cpu_s)
    for got, ref in ((idle["cgroup_pct"], idle_ref), (busy["cgroup_pct"], busy_ref)):
        assert abs(got - ref) <= max(8.0, 0.15 * ref), (got, ref)
