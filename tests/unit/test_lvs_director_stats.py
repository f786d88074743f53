"""roles/lvs_director/files/lvs-director-stats: the counters are read after the first IPVS estimator tick
that follows the end of a load (seen as a change of /proc/net/ip_vs_stats), or one full period (2.1 s)
after it when no tick shows; never before the end of the load.

The script runs under dash (the director's /bin/sh) with a fake ipvsadm on PATH and a file standing in
for /proc/net/ip_vs_stats (LVS_DIRECTOR_STATS_FILE). The fake estimator tick is driven by the script's
own progress, never by a timer: a fake ``sleep`` first on PATH (the script polls with ``sleep 0.05``)
rewrites the file at a chosen poll and logs every poll, the script's reads of the file (an inotify
watch whose descriptor the script and so the fake sleep inherit) and the ipvsadm calls, in order, to
one event log. The tests assert the order of those events and lower bounds on times only: the
verdicts do not depend on the machine's speed.
"""

import ctypes
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "roles/lvs_director/files/lvs-director-stats"
SHELL = shutil.which("dash") or "/bin/sh"
IN_CLOSE_NOWRITE = 0x10
POLL = "0.05"       # the script's poll: `sleep 0.05`
# The end of the load is this far after the start of the script when a tick is to come after it: the
# script must poll before the end at least once (its snapshot kept fresh up to the end). A margin on
# the script's start (a shell, uname, date and awk), not a budget on anything asserted.
LEAD_S = 1.5

TOTALS = """   Total Incoming Outgoing         Incoming         Outgoing
   Conns  Packets  Packets            Bytes            Bytes
    {conns:>4}     9000     8000           540000          1200000

 Conns/s   Pkts/s   Pkts/s          Bytes/s          Bytes/s
      {cps:>2}      225      200            13500            30000
"""

# The fake sleep. FAKE_TICK says at which poll the totals change (a tick):
#   first      the script's first poll (before the end: the script still keeps its snapshot fresh);
#   after-end  the first poll at which the script no longer refreshes its snapshot (no read of the file
#              since its previous poll: it has reached the end of the load), i.e. right after the end;
#   every      every poll;  none: never.
# FAKE_POLL_S makes each poll take that long (a slow emulated director). Other sleeps are real.
FAKE_SLEEP = r"""#!{python} -S
import os, struct, sys, time
events = os.environ["FAKE_EVENTS"]
# the script's reads of the totals since the previous sleep (closes after a read-only open, queued
# by the kernel before the script went on: the reads are logged in their place, before this sleep)
reads = 0
try:
    while True:
        buf = os.read(int(os.environ["FAKE_INOTIFY_FD"]), 65536)
        off = 0
        while off < len(buf):
            off += 16 + struct.unpack_from("iIII", buf, off)[3]
            reads += 1
except BlockingIOError:
    pass
with open(events) as handle:
    before = [line.split()[1] for line in handle]
arg = sys.argv[1] if len(sys.argv) > 1 else "0"
log = ["read"] * reads + ["sleep"]
if arg == "{poll}":
    policy = os.environ.get("FAKE_TICK", "none")
    polls = [i for i, kind in enumerate(before) if kind == "poll"]
    if policy == "every":
        tick = True
    elif policy == "first":
        tick = not polls
    elif policy == "after-end":
        tick = (bool(polls) and reads == 0 and "read" not in before[polls[-1]:]
                and "tick" not in before)
    else:
        tick = False
    log += ["poll"] + (["tick"] if tick else [])
with open(events, "a") as handle:
    for kind in log:                    # a tick is logged before the file changes
        handle.write("%f %s\n" % (time.time(), kind))
if "tick" in log:
    with open(os.environ["LVS_DIRECTOR_STATS_FILE"], "w") as handle:
        handle.write(os.environ["FAKE_TICK_TOTALS"].replace("CONNS", str(2001 + before.count("tick"))))
time.sleep(float(os.environ.get("FAKE_POLL_S", arg)) if arg == "{poll}" else float(arg))
"""


def inotify_watch(path):
    """A non-blocking inotify descriptor that sees every close of ``path`` after a read-only open."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    assert fd >= 0, os.strerror(ctypes.get_errno())
    if path.exists():
        assert libc.inotify_add_watch(fd, str(path).encode(), IN_CLOSE_NOWRITE) >= 0, os.strerror(ctypes.get_errno())
    return fd


@pytest.fixture()
def lab(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    events = tmp_path / "events"
    events.write_text("")
    release = tmp_path / "release"
    release.write_text("6.1.0-56-amd64\n")
    uname = bin_dir / "uname"
    uname.write_text(f"#!/bin/sh\ncat {release}\n")
    uname.chmod(0o755)
    log = tmp_path / "ipvsadm.log"
    fake = bin_dir / "ipvsadm"
    fake.write_text(f"#!/bin/sh\necho \"$*\" >> {log}\necho \"$(date +%s.%N) ipvsadm\" >> {events}\n"
                    "echo 'TCP  10.250.1.10:80 rr'\n")
    fake.chmod(0o755)
    sleep = bin_dir / "sleep"
    sleep.write_text(FAKE_SLEEP.replace("{python}", sys.executable).replace("{poll}", POLL))
    sleep.chmod(0o755)
    stats = tmp_path / "ip_vs_stats"
    stats.write_text(TOTALS.format(conns=2000, cps=50))
    yield {"bin": bin_dir, "log": log, "stats": stats, "release": release, "events": events}


def run(lab, *args, tick="none", poll_s=None):
    """Run the script; returns (stdout, seconds it took, [(time, event), ...] in order)."""
    fd = inotify_watch(lab["stats"])
    try:
        env = dict(os.environ, PATH=f"{lab['bin']}:{os.environ['PATH']}", LVS_DIRECTOR_STATS_FILE=str(lab["stats"]),
                   LVS_DIRECTOR_SERVICE="-t 10.250.1.10:80", LVS_DIRECTOR_CONF=str(lab["bin"] / "no-such-conf"),
                   FAKE_EVENTS=str(lab["events"]), FAKE_INOTIFY_FD=str(fd), FAKE_TICK=tick,
                   FAKE_TICK_TOTALS=TOTALS.format(conns="CONNS", cps=37))
        if poll_s is not None:
            env["FAKE_POLL_S"] = str(poll_s)
        began = time.monotonic()
        # The timeout only guards against a hang.
        out = subprocess.run([SHELL, str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=120,
                             check=True, pass_fds=(fd,))
        took = time.monotonic() - began
    finally:
        os.close(fd)
    events = [(float(t), kind) for t, kind, *_ in (line.split() for line in lab["events"].read_text().splitlines())]
    return out.stdout, took, events


def kinds(events):
    return [kind for _, kind in events]


def times(events, kind):
    return [t for t, k in events if k == kind]


def section(stdout, name):
    lines = stdout.splitlines()
    return lines[lines.index(f"=== {name}") + 1]


def assert_read_after_a_tick_after_the_end(stdout, events, end):
    """The script saw the tick that came after the end of the load, waited one more poll and read."""
    assert section(stdout, "settled").startswith("tick "), stdout
    ks = kinds(events)
    assert ks.count("tick") == 1, ks
    [tick] = times(events, "tick")
    # the tick came after the end (it follows the script's progress: its snapshot no longer refreshed);
    # the script counts its wait in /proc/uptime hundredths, whose rounding may take 0.01 s off
    assert tick >= end - 0.02
    # before the tick the script polled and refreshed its snapshot: it was waiting for the end
    assert "read" in ks[:ks.index("tick")] and "poll" in ks[:ks.index("tick")], ks
    # when the tick was seen, for a timetable of the next loads: after the tick, never before
    assert float(section(stdout, "tick-at")) >= tick
    # after the tick: the read that saw the change, one more poll, then the counters
    after = ks[ks.index("tick") + 1:]
    assert after.index("read") < len(after) - 1 - after[::-1].index("poll") < after.index("ipvsadm"), ks
    assert times(events, "ipvsadm")[0] >= float(section(stdout, "tick-at"))
    assert float(section(stdout, "settled").split()[1]) >= 0.05     # at least the extra poll after the end
    assert stdout.index("=== settled") < stdout.index("=== tick-at") < stdout.index("=== ipvsadm-stats")


def test_reads_after_the_first_tick_after_the_end(lab):
    called = time.time()
    stdout, took, events = run(lab, "--after", f"{called + LEAD_S:.3f}", "--zero", tick="after-end")
    assert_read_after_a_tick_after_the_end(stdout, events, called + LEAD_S)
    assert took >= LEAD_S
    assert stdout.index("=== settled") < stdout.index("=== ipvsadm-stats") < stdout.index("=== zeroed-at")
    assert float(section(stdout, "zeroed-at")) >= float(section(stdout, "tick-at"))
    assert lab["log"].read_text().splitlines() == ["-Ln --stats --exact", "-Z -t 10.250.1.10:80"]


@pytest.mark.parametrize("release", ["6.2.0-1-amd64", "6.12.48+deb13-amd64", "7.0.1"])
def test_kernels_with_estimator_kthreads_wait_one_full_period(lab, release):
    # From 6.2 the totals are updated in another 40 ms slot than a real server's counters: their changes
    # (here at every poll, also after the end) say nothing, the read waits one full period after the end.
    lab["release"].write_text(release + "\n")
    called = time.time()
    stdout, took, events = run(lab, "--after", f"{called + LEAD_S:.3f}", tick="every")
    assert section(stdout, "settled") == "period 2.1"
    assert "=== tick-at" not in stdout
    assert [t for t in times(events, "tick") if t >= called + LEAD_S], kinds(events)   # ticks after the end came
    assert took >= LEAD_S + 2.0


@pytest.mark.parametrize("release", ["5.10.0-30-amd64", "6.1.0-56-amd64", "6.1"])
def test_kernels_with_one_estimator_pass_read_at_the_tick(lab, release):
    lab["release"].write_text(release + "\n")
    called = time.time()
    stdout, _, events = run(lab, "--after", f"{called + LEAD_S:.3f}", tick="after-end")
    assert_read_after_a_tick_after_the_end(stdout, events, called + LEAD_S)


def test_a_tick_before_the_end_does_not_count(lab):
    # The file changes at the script's first poll, before the end of the load: no tick after the end
    # shows, so the read waits one full period after the end.
    called = time.time()
    end = called + LEAD_S
    stdout, took, events = run(lab, "--after", f"{end:.3f}", tick="first")
    assert section(stdout, "settled") == "period 2.1"
    assert took >= LEAD_S + 2.0
    assert "=== zeroed-at" not in stdout and "=== tick-at" not in stdout
    ks = kinds(events)
    [tick] = times(events, "tick")
    assert tick < end                                                    # the premise: before the end
    assert "read" in ks[ks.index("tick"):], ks                           # a snapshot was taken after it


def test_an_idle_table_waits_one_full_period(lab):
    stdout, took, events = run(lab, "--after", f"{time.time():.3f}")
    assert section(stdout, "settled") == "period 2.1"
    assert took >= 2.0
    assert "poll" in kinds(events) and "tick" not in kinds(events)


def test_no_stats_file_waits_one_full_period(lab):
    lab["stats"].unlink()
    stdout, took, _ = run(lab, "--after", f"{time.time():.3f}")
    assert section(stdout, "settled") == "period 2.1"
    assert took >= 2.0


def test_an_end_long_past_reads_at_once(lab):
    stdout, _, events = run(lab, "--after", f"{time.time() - 5:.3f}", "--zero")
    assert section(stdout, "settled") == "period 2.1"
    # it did not wait (not one sleep): the period after that end is long over
    assert "sleep" not in kinds(events), kinds(events)
    assert "=== ipvsadm-stats" in stdout


def test_without_after_reads_at_once(lab):
    stdout, _, events = run(lab)
    assert "=== settled" not in stdout
    assert stdout.startswith("=== ipvsadm-stats\n")
    assert kinds(events) == ["ipvsadm"]        # no wait, not even a look at the totals


def test_a_tick_right_after_the_end_is_seen_when_started_during_the_load(lab):
    # A timetable starts the read during the load. The snapshot it compares with is taken before the
    # end: a tick just after the end is a change, not part of the snapshot (and the next tick, one
    # period on, would come after the next load had started). Polls are slow here, as on an emulated
    # director (each 0.05 s sleep takes 0.3 s): a snapshot taken after the end would hold the tick.
    called = time.time()
    stdout, took, events = run(lab, "--after", f"{called + LEAD_S:.3f}", tick="after-end", poll_s=0.3)
    assert_read_after_a_tick_after_the_end(stdout, events, called + LEAD_S)
    assert float(section(stdout, "settled").split()[1]) >= 0.3      # the extra poll after the tick, a slow one
    assert took >= LEAD_S


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
