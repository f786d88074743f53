"""CPU sampling maths on real /proc/stat and cgroup snapshots captured on the lab host.

Fixtures (tests/fixtures/proc_stat/, see its README): a 2-CPU Debian 12 VM,
USER_HZ 100.  series_0..3 are four snapshots about 1 s apart; yes_2s_* bracket
2 s of `yes > /dev/null`; container_2s_* bracket 2 s of a busybox container
running `yes`, with the container's cgroup v1 cpuacct.usage and v2 cpu.stat read
at the same moments.
"""

import json
import os

import pytest
from ansible.module_utils import testbed_sampling
from ansible.module_utils.testbed_sampling import (
    SamplingError,
    cgroup_percent,
    cpu_percentages,
    cpu_window,
    cpu_window_s,
    parse_cgroup_usage,
    parse_proc_stat,
    resolve_cgroup,
    sample,
    summarize,
)
from conftest import fixture_path, read_fixture
from helpers import run_module


def snap(name):
    return read_fixture("proc_stat", name + ".txt")


def test_parse_proc_stat_reads_every_cpu_line():
    stat = parse_proc_stat(snap("series_0"))
    assert sorted(stat) == ["cpu", "cpu0", "cpu1"]
    assert stat["cpu"] == {"user": 35973, "nice": 0, "system": 17792, "idle": 61132, "iowait": 2405,
                           "irq": 0, "softirq": 1192, "steal": 2737, "guest": 0, "guest_nice": 0}
    assert stat["cpu1"]["iowait"] == 1823


@pytest.mark.parametrize("text,words", [
    ("", "empty"),
    ("intr 1 2 3\nctxt 606710\n", "no aggregate 'cpu' line"),
    ("cpu  1 2 3\n", "line cpu has 3 fields"),
])
def test_parse_proc_stat_rejects_bad_input(text, words):
    with pytest.raises(SamplingError, match=words):
        parse_proc_stat(text)


def test_percentages_of_yes_for_two_seconds():
    result = cpu_percentages(snap("yes_2s_before"), snap("yes_2s_after"))
    overall = result["all"]
    # deltas: user 226, system 174, softirq 5, everything else 0 -> 405 jiffies
    assert overall["total_jiffies"] == 405
    assert overall["user_pct"] == pytest.approx(100 * 226 / 405, rel=1e-12)
    assert overall["system_pct"] == pytest.approx(100 * 174 / 405, rel=1e-12)
    assert overall["softirq_pct"] == pytest.approx(100 * 5 / 405, rel=1e-12)
    assert overall["idle_pct"] == 0.0 and overall["iowait_pct"] == 0.0 and overall["steal_pct"] == 0.0
    assert overall["busy_pct"] == 100.0
    assert result["cpus"] == 2
    # cpu0: user 96, system 108 -> 204; cpu1: user 131, system 67, softirq 5 -> 203
    assert result["per_cpu"]["cpu0"]["system_pct"] == pytest.approx(100 * 108 / 204, rel=1e-12)
    assert result["per_cpu"]["cpu1"]["softirq_pct"] == pytest.approx(100 * 5 / 203, rel=1e-12)
    assert result["warnings"] == []
    assert cpu_window_s(snap("yes_2s_before"), snap("yes_2s_after")) == pytest.approx(2.025)


def test_percentages_with_idle_iowait_and_steal():
    result = cpu_percentages(snap("series_0"), snap("series_3"))
    overall = result["all"]
    # deltas: user 111, system 240, idle 223, softirq 4, steal 31 -> 609
    assert overall["total_jiffies"] == 609
    assert overall["busy_pct"] == pytest.approx(100 * 386 / 609, rel=1e-12)
    assert overall["idle_pct"] == pytest.approx(100 * 223 / 609, rel=1e-12)
    assert overall["steal_pct"] == pytest.approx(100 * 31 / 609, rel=1e-12)
    # cpu1: user 53, system 96, idle 136, iowait 1, softirq 2, steal 18 -> 306; busy excludes iowait
    cpu1 = result["per_cpu"]["cpu1"]
    assert cpu1["total_jiffies"] == 306
    assert cpu1["iowait_pct"] == pytest.approx(100 * 1 / 306, rel=1e-12)
    assert cpu1["busy_pct"] == pytest.approx(100 * 169 / 306, rel=1e-12)


def test_counter_going_backwards_is_clamped_with_a_warning():
    before = parse_proc_stat(snap("series_1"))
    after = parse_proc_stat(snap("series_2"))
    after["cpu"] = dict(after["cpu"], iowait=before["cpu"]["iowait"] - 3)
    result = cpu_percentages(before, after)
    assert result["warnings"] == ["cpu iowait went backwards by 3 jiffies; counted as 0"]
    assert result["all"]["iowait_pct"] == 0.0
    assert result["all"]["total_jiffies"] == 48 + 79 + 68 + 1 + 7


def test_zero_window_gives_null_not_zero():
    result = cpu_percentages(snap("series_0"), snap("series_0"))
    assert result["all"]["busy_pct"] is None and result["all"]["user_pct"] is None
    summary = summarize([parse_proc_stat(snap("series_0"))] * 2)
    assert summary["valid"] is False
    assert summary["metrics"]["cpu_busy_mean_pct"] is None
    assert "window was too short" in summary["reasons"][0]


def test_summary_of_the_series():
    snaps = [parse_proc_stat(snap(f"series_{i}")) for i in range(4)]
    result = summarize(snaps, interval_s=1.0)
    m = result["metrics"]
    assert m["cpu_busy_mean_pct"] == round(100 * 386 / 609, 3)
    # intervals: 117/202, 135/203, 134/204 busy; softirq 1/202, 1/203, 2/204
    assert m["cpu_busy_max_pct"] == round(100 * 135 / 203, 3)
    assert result["details"]["busy_series_pct"] == [round(100 * 117 / 202, 3), round(100 * 135 / 203, 3),
                                                    round(100 * 134 / 204, 3)]
    assert m["cpu_softirq_max_pct"] == round(100 * 2 / 204, 3)
    assert m["cpu_softirq_mean_pct"] == round(100 * 4 / 609, 3)
    assert m["cpu_user_mean_pct"] == round(100 * 111 / 609, 3)
    assert m["cpu_system_mean_pct"] == round(100 * 240 / 609, 3)
    assert m["cpu_iowait_mean_pct"] == 0.0
    assert m["cpu_steal_mean_pct"] == round(100 * 31 / 609, 3)
    # the busiest CPU over the window is cpu0: 217 busy of 304
    assert m["cpu_hottest_busy_mean_pct"] == round(100 * 217 / 304, 3)
    assert m["cpu_hottest_softirq_mean_pct"] == round(100 * 2 / 304, 3)
    assert m["samples"] == 3
    assert m["window_s"] == 3.045
    assert result["valid"] is True and result["tool"] == "cpu_sample"


def test_cgroup_usage_of_a_container_v1_and_v2():
    v1 = [parse_cgroup_usage(read_fixture("proc_stat", f"cgroup_docker_v1_cpuacct.usage.{w}"), "cpuacct.usage")
          for w in ("before", "after")]
    v2 = [parse_cgroup_usage(read_fixture("proc_stat", f"cgroup_docker_v2_cpu.stat.{w}"), "cpu.stat")
          for w in ("before", "after")]
    assert v1 == [804441826, 2532467865]
    assert v2 == [804441000, 2540426000]
    window = cpu_window_s(snap("container_2s_before"), snap("container_2s_after"))
    assert window == pytest.approx(401 / 2 / 100)
    assert cgroup_percent(*v1, window) == pytest.approx(100 * 1.728026039 / 2.005, rel=1e-9)
    assert cgroup_percent(*v2, window) == pytest.approx(100 * 1.735985 / 2.005, rel=1e-9)
    assert cgroup_percent(v1[1], v1[0], window) is None
    assert cgroup_percent(*v1, 0) is None
    with pytest.raises(SamplingError, match="cpu.stat has no usage_usec line"):
        parse_cgroup_usage("user_usec 5\n", "cpu.stat")
    with pytest.raises(SamplingError, match="cpuacct.usage is 'max'"):
        parse_cgroup_usage("max\n", "cpuacct.usage")


def test_resolve_cgroup_layouts(tmp_path):
    v1 = tmp_path / "cpuacct" / "docker" / "abc"
    v1.mkdir(parents=True)
    (v1 / "cpuacct.usage").write_text("5\n")
    v2 = tmp_path / "system.slice" / "x.scope"
    v2.mkdir(parents=True)
    (v2 / "cpu.stat").write_text("usage_usec 5\n")
    assert resolve_cgroup("docker/abc", root=str(tmp_path)) == (str(v1 / "cpuacct.usage"), "cpuacct.usage")
    assert resolve_cgroup("system.slice/x.scope", root=str(tmp_path)) == (str(v2 / "cpu.stat"), "cpu.stat")
    assert resolve_cgroup(str(v2), root="/nonexistent") == (str(v2 / "cpu.stat"), "cpu.stat")
    with pytest.raises(SamplingError, match="cgroup docker/nope not found"):
        resolve_cgroup("docker/nope", root=str(tmp_path))


class FakeHost:
    """A clock that only moves when the sampler sleeps, and /proc/stat from the fixtures."""

    def __init__(self, stat_names, files=None, stop_at=None, stop_mtime=1000.0):
        self.now = 0.0
        self.stats = [snap(n) for n in stat_names]
        self.files = {k: list(v) for k, v in (files or {}).items()}
        self.stop_at = stop_at
        self.stop_mtime = stop_mtime
        self.sleeps = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.now += seconds

    def read_text(self, path):
        if path == "/proc/stat":
            assert self.stats, "sampler read /proc/stat more often than expected"
            return self.stats.pop(0)
        return self.files[path].pop(0)

    def getmtime(self, path):
        if self.stop_at is None or self.now < self.stop_at:
            raise OSError(2, "No such file or directory")
        return self.stop_mtime


def test_sampler_runs_the_full_duration():
    host = FakeHost([f"series_{i}" for i in range(4)])
    result = sample(3.0, interval=1.0, read_text=host.read_text, clock=host.clock, sleep=host.sleep,
                    wall=lambda: 1000.0, hz=100)
    assert host.stats == []
    assert host.sleeps == [1.0, 1.0, 1.0]
    assert result["metrics"]["samples"] == 3
    assert result["metrics"]["cpu_busy_mean_pct"] == round(100 * 386 / 609, 3)
    assert result["metrics"]["window_s"] == 3.0
    assert result["details"]["stopped_by"] == "duration"


def test_sampler_stops_on_the_stop_file_and_drops_a_short_last_interval(tmp_path):
    host = FakeHost(["series_0", "series_1", "series_2"], stop_at=1.1)
    result = sample(30.0, interval=1.0, stop_file=str(tmp_path / "done"), read_text=host.read_text,
                    clock=host.clock, sleep=host.sleep, wall=lambda: 1000.0, getmtime=host.getmtime, hz=100)
    assert result["details"]["stopped_by"] == "stop_file"
    assert host.now == pytest.approx(1.2)
    # the 0.2 s last interval counts in the mean but not in the series
    assert result["metrics"]["samples"] == 1
    assert result["details"]["busy_series_pct"] == [round(100 * 117 / 202, 3)]
    assert result["metrics"]["cpu_busy_mean_pct"] == round(100 * (117 + 135) / (202 + 203), 3)
    assert result["warnings"] == []


def test_sampler_ignores_a_stale_stop_file_and_stays_bounded(tmp_path):
    host = FakeHost(["series_0", "series_1", "series_2"], stop_at=0.0, stop_mtime=900.0)
    result = sample(2.0, interval=1.0, stop_file=str(tmp_path / "done"), read_text=host.read_text,
                    clock=host.clock, sleep=host.sleep, wall=lambda: 1000.0, getmtime=host.getmtime, hz=100)
    assert result["details"]["stopped_by"] == "duration"
    assert host.now == pytest.approx(2.0)
    assert result["warnings"] == [f"stop file {tmp_path / 'done'} did not appear; sampling ran the full 2.0 s"]


def test_sampler_measures_cgroups(tmp_path):
    group = tmp_path / "cpuacct" / "docker" / "0123"
    group.mkdir(parents=True)
    usage = str(group / "cpuacct.usage")
    files = {usage: [read_fixture("proc_stat", "cgroup_docker_v1_cpuacct.usage.before"),
                     read_fixture("proc_stat", "cgroup_docker_v1_cpuacct.usage.after")]}
    (group / "cpuacct.usage").write_text("0\n")
    host = FakeHost(["container_2s_before", "container_2s_after"], files=files)
    result = sample(2.0, interval=2.0, cgroups={"lb": "docker/0123"}, cgroup_root=str(tmp_path),
                    read_text=host.read_text, clock=host.clock, sleep=host.sleep, wall=lambda: 0.0, hz=100)
    assert result["metrics"]["lb_cpu_pct"] == round(100 * 1.728026039 / 2.005, 3)
    assert result["details"]["cgroups"]["lb"]["kind"] == "cpuacct.usage"


def test_vanished_cgroup_gives_null_and_a_warning(tmp_path):
    group = tmp_path / "g"
    group.mkdir()
    (group / "cpu.stat").write_text("usage_usec 1\n")
    path = str(group / "cpu.stat")

    host = FakeHost(["series_0", "series_1"], files={path: ["usage_usec 100\n"]})
    original = host.read_text

    def read_text(p):
        if p == path and not host.files[path]:
            raise OSError(2, "No such file or directory")
        return original(p)

    result = sample(1.0, interval=1.0, cgroups={"web": str(group)}, read_text=read_text, clock=host.clock,
                    sleep=host.sleep, wall=lambda: 0.0, hz=100)
    assert result["metrics"]["web_cpu_pct"] is None
    assert any(w.startswith("cgroup web: the group vanished") for w in result["warnings"])


@pytest.mark.parametrize("kwargs,words", [
    ({"duration": 0}, "duration must be > 0"),
    ({"duration": 100000}, "duration must be > 0 and <= 86400"),
    ({"duration": float("nan")}, "duration must be a number"),
    ({"duration": 1, "interval": 0}, "interval must be > 0"),
])
def test_sampler_rejects_bad_windows(kwargs, words):
    with pytest.raises(SamplingError, match=words):
        sample(**kwargs)


def test_real_short_sample_on_this_host():
    result = sample(0.3, interval=0.1)
    m = result["metrics"]
    assert result["valid"] is True
    assert 2 <= m["samples"] <= 3
    assert 0.29 <= m["window_s"] < 1.0
    assert 0.0 <= m["cpu_busy_mean_pct"] <= 100.0
    assert result["details"]["cpus"] == len(parse_proc_stat(open("/proc/stat").read())) - 1


def test_cpu_sample_module(tmp_path):
    import cpu_sample

    group = tmp_path / "idle_group"
    group.mkdir()
    (group / "cpuacct.usage").write_text("123456\n")
    dest = tmp_path / "out" / "cpu.json"
    failed, out = run_module(cpu_sample, {"duration": 0.25, "interval": 0.1, "cgroups": {"idle": str(group)},
                                          "dest": str(dest)})
    assert not failed, out
    assert out["changed"] is True
    assert out["metrics"]["idle_cpu_pct"] == 0.0
    assert out["ansible_facts"]["cpu_sample"]["metrics"] == out["metrics"]
    with open(dest) as handle:
        assert json.load(handle)["metrics"] == out["metrics"]

    failed, out = run_module(cpu_sample, {"duration": 5, "_ansible_check_mode": True})
    assert not failed and out["skipped"] is True and out["metrics"] == {}

    failed, out = run_module(cpu_sample, {"duration": 1, "cgroups": {"lb-1": "docker/x"}})
    assert failed and "cgroups key 'lb-1' must be letters, digits and '_'" in out["msg"]
    failed, out = run_module(cpu_sample, {"duration": 1, "cgroups": {"lb": "docker/nope"},
                                          "cgroup_root": str(tmp_path)})
    assert failed and out["msg"].startswith("cpu_sample: cgroup docker/nope not found")
    failed, out = run_module(cpu_sample, {"duration": -1})
    assert failed and out["msg"] == "cpu_sample: duration must be > 0 and <= 86400 s, got -1.0"


def test_fixture_files_are_real_snapshots():
    # every fixture pair comes from the same 2-CPU host and moves forward in time
    for before, after in (("series_0", "series_3"), ("yes_2s_before", "yes_2s_after"),
                          ("container_2s_before", "container_2s_after"), ("shared_1s_before", "shared_1s_after")):
        b, a = parse_proc_stat(snap(before)), parse_proc_stat(snap(after))
        assert sorted(b) == sorted(a) == ["cpu", "cpu0", "cpu1"]
        assert testbed_sampling._total(a["cpu"]) > testbed_sampling._total(b["cpu"])
    assert os.path.exists(fixture_path("proc_stat", "README.md"))


# ---------------------------------------------------------------------------
# cpu_window: the continuous sampler's log (roles/cpu_sampler), captured in the LVS lab
# ---------------------------------------------------------------------------

def _sampler(host):
    return read_fixture(os.path.join("lvs", "wrr-weighted-60"), "cpu.%s.txt" % host)


def _window():
    return tuple(float(v) for v in read_fixture(os.path.join("lvs", "wrr-weighted-60"), "window.txt").split())


def test_cpu_window_inside_and_around():
    text = _sampler("lvs-director")
    start, end = _window()
    cpu = cpu_window(text, start, end)
    assert cpu["container"] is False and cpu["cgroup_pct"] is None and cpu["cpus"] == 1
    assert cpu["busy_pct"] == 4.802 and cpu["samples"] == 20 and cpu["coverage"] == 0.951
    # A window between two samples uses the samples around it.
    around = cpu_window(text, start + 0.1, start + 0.2)
    assert around["samples"] == 0 and around["window_s"] > 0.1


def test_cpu_window_container_share_is_the_cgroups():
    text = _sampler("lvs-client1")
    start, end = _window()
    cpu = cpu_window(text, start, end, source="lvs-client1")
    assert cpu["container"] is True and cpu["cpus"] == 2 and cpu["samples"] == 20
    # the reference: first and last sample inside the window, cgroup ns over their time
    inside = [line.split() for line in text.splitlines()
              if not line.startswith("#") and start <= float(line.split()[0]) <= end]
    seconds = float(inside[-1][0]) - float(inside[0][0])
    assert cpu["window_s"] == round(seconds, 3)
    assert cpu["cgroup_pct"] == pytest.approx(100.0 * (int(inside[-1][1]) - int(inside[0][1])) / 1e9 / seconds,
                                              abs=0.001)
    assert cpu["cgroup_pct"] == 80.384
    # /proc/stat in a container is the whole (busy) lab machine's
    assert cpu["busy_pct"] == 100.0


def test_cpu_window_refuses_junk():
    with pytest.raises(SamplingError, match="not a sampler line"):
        cpu_window("hello world\n1 2 3\n", 0, 1)
    with pytest.raises(SamplingError, match="1 sample"):
        cpu_window("# cpus=1\n1795281209.5 - cpu 1 0 1 1 0 0 0 0 0 0\n", 0, 1)
    with pytest.raises(SamplingError, match="host x: bad timestamp or cgroup value"):
        cpu_window("soon - cpu 1 0 1 1 0 0 0\n1.5 - cpu 1 0 1 1 0 0 0\n", 0, 1, source="host x")
    with pytest.raises(SamplingError, match="no time between them"):
        cpu_window("1.5 - cpu 1 0 1 1 0 0 0\n1.5 - cpu 2 0 1 1 0 0 0\n", 0, 1)


class LoadHost(FakeHost):
    """A host whose storage interface carries a load from ``load_from`` to ``load_to`` (clock seconds)."""

    def __init__(self, stats, load_from, load_to, rate=1e6, stat_read_s=0.0):
        super().__init__(stats)
        self.load_from, self.load_to, self.rate, self.touched = load_from, load_to, rate, []
        self.counter = "/sys/class/net/eth1/statistics/rx_bytes"
        self.stat_read_s = stat_read_s

    def read_text(self, path):
        if path == self.counter:
            moved = max(0.0, min(self.now, self.load_to) - self.load_from) * self.rate
            return "%d\n" % (1000 + int(moved))
        if path == "/proc/stat":
            self.now += self.stat_read_s     # a slow guest: reading takes time
            return self.stats[min(len(self.stats) - 1, int(self.now))]
        return super().read_text(path)


def test_sampler_window_is_the_loads_as_the_node_sees_it():
    host = LoadHost(["series_0", "series_1", "series_2", "series_3"], load_from=0.9, load_to=2.3)
    result = sample(30.0, interval=1.0, active_files=[host.counter], idle_s=1.0, ready_file="/x/ready",
                    touch=host.touched.append, read_text=host.read_text, clock=host.clock, sleep=host.sleep,
                    wall=lambda: 1000.0, hz=100)
    assert host.touched == ["/x/ready"]
    assert result["details"]["stopped_by"] == "idle"
    # opened at the first poll after the load began (1.0 s), closed at the last poll that saw bytes move (2.4 s:
    # those of 2.2-2.3 s), not after the idle second
    assert result["metrics"]["window_s"] == pytest.approx(1.4, abs=0.01)
    assert host.now < 3.5
    assert "the load's, from /sys/class/net/eth1/statistics/rx_bytes" in result["details"]["window"]
    assert result["valid"] is True


def test_sampler_on_a_slow_guest_never_sleeps_a_negative_time():
    # a read of /proc/stat that takes 0.3 s passes the interval's end between the check and the sleep
    host = LoadHost(["series_0", "series_1", "series_2", "series_3"], load_from=0.5, load_to=3.3, stat_read_s=0.3)
    result = sample(30.0, interval=1.0, active_files=[host.counter], idle_s=1.0, read_text=host.read_text,
                    clock=host.clock, sleep=host.sleep, wall=lambda: 1000.0, hz=100)
    assert min(host.sleeps) >= 0
    assert result["details"]["stopped_by"] == "idle" and result["valid"] is True


def test_sampler_without_a_load_is_invalid_and_says_where_it_looked():
    host = LoadHost(["series_0", "series_1"], load_from=99.0, load_to=100.0)
    result = sample(2.0, interval=1.0, active_files=[host.counter], read_text=host.read_text, clock=host.clock,
                    sleep=host.sleep, wall=lambda: 1000.0, hz=100)
    assert result["valid"] is False and result["metrics"] == {}
    assert result["reasons"] == ["the load never showed on /sys/class/net/eth1/statistics/rx_bytes (no growth of "
                                 "32768/s) before the 2.0 s bound"]
    assert host.now == pytest.approx(2.0, abs=0.01)


@pytest.mark.parametrize("kwargs,words", [
    ({"active_files": "/sys/class/net/eth1/statistics/rx_bytes"}, "active_files must be a non-empty list"),
    ({"active_files": ["/c"], "idle_s": 0}, "idle_s must be a number > 0"),
    ({"active_files": ["/c"], "active_min_rate": -1}, "active_min_rate must be a number > 0"),
])
def test_sampler_rejects_bad_activity_settings(kwargs, words):
    with pytest.raises(SamplingError, match=words):
        sample(1.0, read_text=lambda path: "5\n", **kwargs)


def test_sampler_refuses_a_counter_that_is_not_one(tmp_path):
    with pytest.raises(SamplingError, match="holds 'eth1 up', not a counter"):
        sample(1.0, active_files=["/c"], read_text=lambda path: "eth1 up\n")
