"""The LVS load runner (roles/lvs_client/files/lvs-httperf-run) stopped with SIGTERM, as the sweep's
watchdog stops a load whose real server went silent: it ends its httperf processes with SIGINT (httperf
then reports what it did), writes its document atomically with ``stopped_after_s``, and exits 0.
A stand-in for httperf reports on SIGINT and otherwise runs until it is told; the test waits for
states (files the stand-ins write), with bounds only against a hang."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUNNER = os.path.join(ROOT, "roles", "lvs_client", "files", "lvs-httperf-run")

FAKE = textwrap.dedent("""\
    #!{python}
    import os, signal, sys, time
    client = [a for a in sys.argv if a.startswith("--client=")][0].split("=")[1].replace("/", "-")
    def report(*_):
        print("Total: connections 7 requests 7 replies 7 test-duration 1.0 s")
        sys.exit(0)
    signal.signal(signal.SIGINT, report)
    open(os.path.join({ready!r}, client), "w").close()
    end = time.monotonic() + 120
    while time.monotonic() < end:
        time.sleep(0.05)
    sys.exit(3)
    """)


def _until(condition, what, bound_s=60):
    end = time.monotonic() + bound_s
    while not condition():
        assert time.monotonic() < end, f"{what} within {bound_s} s"
        time.sleep(0.05)


def _runner(tmp_path, *extra):
    ready = tmp_path / "ready"
    ready.mkdir()
    fake = tmp_path / "httperf"
    fake.write_text(FAKE.format(python=sys.executable, ready=str(ready)))
    fake.chmod(0o755)
    result = tmp_path / "point.json"
    argv = [sys.executable, RUNNER, "--server", "10.250.1.10", "--rate", "10", "--num-conns", "1000", "--processes", "2",
            "--httperf", str(fake), "--outdir", str(tmp_path / "point"), "--result", str(result)] + list(extra)
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), ready, result


def test_a_terminated_runner_ends_httperf_with_sigint_and_writes_its_document(tmp_path):
    proc, ready, result = _runner(tmp_path)
    _until(lambda: len(os.listdir(ready)) == 2, "both httperf processes started")
    assert not result.exists()                      # nothing before the end: the document is written once
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out == ""                                # with --result nothing goes to stdout
    assert not (tmp_path / "point.json.part").exists()
    doc = json.loads(result.read_text())
    assert doc["stopped_after_s"] >= 0
    assert [p["rc"] for p in doc["processes"]] == [0, 0]
    assert all(p["stdout"].startswith("Total: connections 7") for p in doc["processes"])


def test_a_runner_terminated_before_its_start_time_runs_nothing(tmp_path):
    proc, ready, result = _runner(tmp_path, "--start-at", str(time.time() + 300))
    # the runner sleeps until its start time; its output directory is made after its TERM handler is in place
    _until(lambda: (tmp_path / "point").is_dir(), "the runner made its output directory")
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    doc = json.loads(result.read_text())
    assert doc["processes"] == [] and doc["stopped_after_s"] >= 0
    assert os.listdir(ready) == []
