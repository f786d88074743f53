"""roles/lvs_director/files/lvs-director-stats: the counters are read after the first IPVS estimator tick
that follows the end of a load (seen as a change of /proc/net/ip_vs_stats), or one full period (2.1 s)
after it when no tick shows; never before the end of the load.

The script runs under dash (the director's /bin/sh) with a fake ipvsadm on PATH and a file standing in
for /proc/net/ip_vs_stats (LVS_DIRECTOR_STATS_FILE), which a timer rewrites as a tick would.
"""

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "roles/lvs_director/files/lvs-director-stats"
SHELL = shutil.which("dash") or "/bin/sh"

TOTALS = """   Total Incoming Outgoing         Incoming         Outgoing
   Conns  Packets  Packets            Bytes            Bytes
    {conns:>4}     9000     8000           540000          1200000

 Conns/s   Pkts/s   Pkts/s          Bytes/s          Bytes/s
      {cps:>2}      225      200            13500            30000
"""


@pytest.fixture()
def lab(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    release = tmp_path / "release"
    release.write_text("6.1.0-56-amd64\n")
    uname = bin_dir / "uname"
    uname.write_text(f"#!/bin/sh\ncat {release}\n")
    uname.chmod(0o755)
    log = tmp_path / "ipvsadm.log"
    fake = bin_dir / "ipvsadm"
    fake.write_text(f"#!/bin/sh\necho \"$*\" >> {log}\necho 'TCP  10.250.1.10:80 rr'\n")
    fake.chmod(0o755)
    stats = tmp_path / "ip_vs_stats"
    stats.write_text(TOTALS.format(conns=2000, cps=50))
    return {"bin": bin_dir, "log": log, "stats": stats, "release": release}


def run(lab, *args):
    env = dict(os.environ, PATH=f"{lab['bin']}:{os.environ['PATH']}", LVS_DIRECTOR_STATS_FILE=str(lab["stats"]),
               LVS_DIRECTOR_SERVICE="-t 10.250.1.10:80", LVS_DIRECTOR_CONF=str(lab["bin"] / "no-such-conf"))
    began = time.monotonic()
    out = subprocess.run([SHELL, str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=30, check=True)
    return out.stdout, time.monotonic() - began


def tick_at(lab, delay, conns=2000, cps=37):
    def write():
        lab["stats"].write_text(TOTALS.format(conns=conns, cps=cps))
    timer = threading.Timer(delay, write)
    timer.start()
    return timer


def read_with_tick(lab, tick_delay, after_delay):
    """Run the script with --after now + after_delay --zero while a tick comes at now + tick_delay."""
    called = time.time()
    timer = tick_at(lab, tick_delay)
    stdout, took = run(lab, "--after", f"{called + after_delay:.3f}", "--zero")
    timer.join()
    return called, stdout, took


def section(stdout, name):
    lines = stdout.splitlines()
    return lines[lines.index(f"=== {name}") + 1]


def test_reads_after_the_first_tick_after_the_end(lab):
    called, stdout, took = read_with_tick(lab, 0.6, 0.2)
    assert section(stdout, "settled").startswith("tick ")
    # when the tick was seen, for a timetable of the next loads: within one poll of the change
    assert called + 0.6 <= float(section(stdout, "tick-at")) < called + 0.6 + 0.5
    assert stdout.index("=== tick-at") < stdout.index("=== ipvsadm-stats")
    assert 0.3 <= float(section(stdout, "settled").split()[1]) < 1.5
    assert 0.6 <= took < 2.0
    assert stdout.index("=== settled") < stdout.index("=== ipvsadm-stats") < stdout.index("=== zeroed-at")
    assert lab["log"].read_text().splitlines() == ["-Ln --stats --exact", "-Z -t 10.250.1.10:80"]


@pytest.mark.parametrize("release", ["6.2.0-1-amd64", "6.12.48+deb13-amd64", "7.0.1"])
def test_kernels_with_estimator_kthreads_wait_one_full_period(lab, release):
    # From 6.2 the totals are updated in another 40 ms slot than a real server's counters.
    lab["release"].write_text(release + "\n")
    timer = tick_at(lab, 0.4)
    stdout, took = run(lab, "--after", f"{time.time():.3f}")
    timer.join()
    assert section(stdout, "settled") == "period 2.1"
    assert took >= 2.0


@pytest.mark.parametrize("release", ["5.10.0-30-amd64", "6.1.0-56-amd64", "6.1"])
def test_kernels_with_one_estimator_pass_read_at_the_tick(lab, release):
    lab["release"].write_text(release + "\n")
    timer = tick_at(lab, 0.4)
    stdout, took = run(lab, "--after", f"{time.time():.3f}")
    timer.join()
    assert section(stdout, "settled").startswith("tick ")
    assert took < 2.0


def test_a_tick_before_the_end_does_not_count(lab):
    # The file changes 0.2 s after the call but the load ends at +0.8 s: no tick after the end shows,
    # so the read waits one full period after the end.
    timer = tick_at(lab, 0.2)
    stdout, took = run(lab, "--after", f"{time.time() + 0.8:.3f}")
    timer.join()
    assert section(stdout, "settled") == "period 2.1"
    assert took >= 2.8
    assert "=== zeroed-at" not in stdout and "=== tick-at" not in stdout


def test_an_idle_table_waits_one_full_period(lab):
    stdout, took = run(lab, "--after", f"{time.time():.3f}")
    assert section(stdout, "settled") == "period 2.1"
    assert 2.0 <= took < 4.0


def test_no_stats_file_waits_one_full_period(lab):
    lab["stats"].unlink()
    stdout, took = run(lab, "--after", f"{time.time():.3f}")
    assert section(stdout, "settled") == "period 2.1"
    assert took >= 2.0


def test_an_end_long_past_reads_at_once(lab):
    stdout, took = run(lab, "--after", f"{time.time() - 5:.3f}", "--zero")
    assert section(stdout, "settled") == "period 2.1"
    assert took < 1.9  # well under the 2.1 s period it would otherwise wait
    assert "=== ipvsadm-stats" in stdout


def test_without_after_reads_at_once(lab):
    stdout, took = run(lab)
    assert "=== settled" not in stdout
    assert stdout.startswith("=== ipvsadm-stats\n")
    assert took < 1.9  # well under the 2.1 s period it would otherwise wait


def test_a_tick_right_after_the_end_is_seen_when_started_during_the_load(lab):
    # A timetable starts the read during the load. The snapshot it compares with is taken before the
    # end: a tick just after the end is a change, not part of the snapshot (and the next tick, one
    # period on, would come after the next load had started). Polls are slow here, as on an emulated
    # director (each 0.05 s sleep takes 0.3 s): a snapshot taken after the end would hold the tick.
    slow = lab["bin"] / "sleep"
    slow.write_text('#!/bin/sh\nif [ "$1" = 0.05 ]; then exec /bin/sleep 0.3; fi\nexec /bin/sleep "$@"\n')
    slow.chmod(0o755)
    called, stdout, took = read_with_tick(lab, 1.05, 1.0)
    assert section(stdout, "settled").startswith("tick ")
    assert called + 1.05 <= float(section(stdout, "tick-at")) < called + 1.05 + 0.8
    assert took < 2.5


def test_zero_takes_the_service_from_the_role_s_file(lab):
    # Only the testbed's own service is zeroed, the one /etc/default/lvs-director names (another
    # IPVS user's counters on a shared director are left alone).
    conf = lab["bin"] / "lvs-director"
    conf.write_text('LVS_DIRECTOR_SERVICE="-u 192.0.2.10:53"\n')
    env = dict(os.environ, PATH=f"{lab['bin']}:{os.environ['PATH']}", LVS_DIRECTOR_STATS_FILE=str(lab["stats"]),
               LVS_DIRECTOR_CONF=str(conf))
    env.pop("LVS_DIRECTOR_SERVICE", None)
    out = subprocess.run([SHELL, str(SCRIPT), "--zero"], env=env, capture_output=True, text=True, timeout=30,
                         check=True)
    assert "=== zeroed-at" in out.stdout
    assert lab["log"].read_text().splitlines() == ["-Ln --stats --exact", "-Z -u 192.0.2.10:53"]


def test_zero_without_a_service_refuses_before_reading(lab):
    env = dict(os.environ, PATH=f"{lab['bin']}:{os.environ['PATH']}", LVS_DIRECTOR_STATS_FILE=str(lab["stats"]),
               LVS_DIRECTOR_CONF=str(lab["bin"] / "no-such-conf"))
    env.pop("LVS_DIRECTOR_SERVICE", None)
    out = subprocess.run([SHELL, str(SCRIPT), "--zero"], env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert "--zero needs the virtual service" in out.stderr
    assert not lab["log"].exists()
