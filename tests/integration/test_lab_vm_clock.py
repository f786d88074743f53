"""roles/lab_vm/files/sync-clock.sh against a fake guest: an ``ssh`` on PATH that answers the script's
exchanges with its own clock plus an offset, holds chosen answers back, and applies the steps it is sent.

The verdicts hold on any machine: a held-back answer waits at least its delay (a busy machine only makes
it longer, which keeps a measurement undecided), and a quick one needs less than half the decision's margin."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "roles/lab_vm/files/sync-clock.sh"

FAKE_SSH = r'''#!PYTHON
"""A guest for sync-clock.sh: "ready", then "time" -> its clock, "step" + offset -> stepped, else exit."""
import json, os, sys, time
offset = float(os.environ["FAKE_OFFSET"])
slow, delay = int(os.environ.get("FAKE_SLOW", "0")), float(os.environ.get("FAKE_DELAY", "0"))
log = {"times": 0, "steps": []}
print("ready", flush=True)
for line in sys.stdin:
    cmd = line.strip()
    if cmd == "time":
        now = time.time() + offset
        log["times"] += 1
        if log["times"] <= slow:
            time.sleep(delay)   # the answer is held back after the clock was read
        print(f"{now:.6f}", flush=True)
    elif cmd == "step":
        step = float(sys.stdin.readline())
        offset -= step
        log["steps"].append(step)
        print("stepped", flush=True)
    else:
        break
with open(os.environ["FAKE_LOG"], "w") as out:
    json.dump(log, out)
'''


def sync(tmp_path, offset, tolerance, mode="check", slow=0, delay=0.0):
    import json
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "ssh"
    fake.write_text(FAKE_SSH.replace("PYTHON", sys.executable))
    fake.chmod(0o755)
    log = tmp_path / "guest.json"
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", FAKE_OFFSET=str(offset),
               FAKE_SLOW=str(slow), FAKE_DELAY=str(delay), FAKE_LOG=str(log))
    proc = subprocess.run([str(SCRIPT), "/nonexistent-key", "2222", "127.0.0.1", str(tolerance), mode],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split(), json.loads(log.read_text())


def test_a_clock_within_the_limit_is_kept_after_five_exchanges(tmp_path):
    out, guest = sync(tmp_path, 0.3, 1.0)
    assert out[0] == "offset" and float(out[1]) == pytest.approx(0.3, abs=0.2) and out[4] == "kept"
    assert guest == {"times": 5, "steps": []}


def test_a_clock_off_is_stepped_and_the_residual_measured(tmp_path):
    out, guest = sync(tmp_path, 3.0, 1.0)
    assert out[4] == "stepped" and out[5] == "residual"
    assert len(guest["steps"]) == 1 and guest["steps"][0] == pytest.approx(3.0, abs=0.2)
    assert abs(float(out[6])) < 0.2
    assert guest["times"] == 10  # five before the step, five after


def test_a_guest_just_booted_is_stepped_whatever_its_offset(tmp_path):
    out, guest = sync(tmp_path, 0.3, 1.0, mode="boot")
    assert out[4] == "stepped" and len(guest["steps"]) == 1
    assert guest["steps"][0] == pytest.approx(0.3, abs=0.2)


def test_a_measurement_that_cannot_tell_goes_on_until_one_can(tmp_path):
    # five answers held back 2 s: each tells 1.5 - 1 = 0.5 s +- 1 s, inside and outside 1 s at once. The
    # script of before kept that clock, and the next quick measurement stepped it (a second run changed).
    out, guest = sync(tmp_path, 1.5, 1.0, slow=5, delay=2.0)
    assert guest["times"] > 5 + 5, "it decided on the slow exchanges"
    assert out[4] == "stepped" and guest["steps"][0] == pytest.approx(1.5, abs=0.4)
    assert float(out[3]) < 0.5  # the quick exchange counted


def test_the_exchanges_are_bounded(tmp_path):
    # every answer held back 0.3 s: +- 0.15 s around 0.1 s never tells against 0.1 s
    out, guest = sync(tmp_path, 0.25, 0.1, slow=1000, delay=0.3)
    assert guest["times"] == 25 and out[4] == "kept"
