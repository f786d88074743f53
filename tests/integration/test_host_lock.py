"""One run per host, for real: the worked example (playbooks/cpu-scaling.yml) on this machine.

A run that finds the host locked by a run that still runs (a live process of this controller named
in the lock, as a second ansible-playbook would be) stops before it writes or measures anything,
with one sentence naming that run; once that process is gone, the same command takes the lock
over with a note, measures every point and leaves no lock behind. A lock of another controller,
which this one cannot see, is refused with how to go on. The lock file is the test's own
(testbed_lock_path), so a real run on this machine is never touched.
"""

import json
import socket
import subprocess

import playbook_run
import pytest
from ansible.module_utils.testbed_host_lock import pid_start_of
from playbook_run import assert_ok, why

SMALL = ['-e', '{"cpu_scaling_threads": [1]}', '-e', 'cpu_scaling_duration_s=1', '-e', 'testbed_repetitions=2',
         '-e', 'cpu_scaling_max_prime=2000']


def play(results, lock_path, *extra):
    return playbook_run.play("playbooks/cpu-scaling.yml", *SMALL, "-e", f"testbed_lock_path={lock_path}", *extra,
                             results=results)


def holder_record(pid, controller=None):
    with open(f"/proc/{pid}/stat") as handle:
        start = pid_start_of(handle.read())
    with open("/proc/sys/kernel/random/boot_id") as handle:
        boot = handle.read().strip()
    return {"experiment": "lvs_compare", "run": "20261202T080000Z", "controller": controller or socket.gethostname(),
            "boot_id": boot, "pid": pid, "pid_start": start, "started": "2026-12-02T08:00:00Z"}


@pytest.fixture
def holder():
    proc = subprocess.Popen(["sleep", "600"])
    yield proc
    proc.kill()
    proc.wait()


def test_a_busy_host_is_refused_then_taken_over_when_its_run_is_gone(tmp_path, holder):
    lock_path = tmp_path / "lock" / "run.lock"
    lock_path.parent.mkdir()
    lock_path.write_text(json.dumps(holder_record(holder.pid)))
    results = tmp_path / "results"
    refused = play(results, lock_path)
    assert refused.returncode == 14, why(refused)
    assert (f"localhost is in use by run 20261202T080000Z of lvs_compare (controller {socket.gethostname()}, "
            f"ansible-playbook pid {holder.pid}, since 2026-12-02T08:00:00Z): one run per host") in refused.stdout, \
        why(refused)
    assert not (results / "cpu_scaling").exists(), "the refused run wrote results"
    assert json.loads(lock_path.read_text())["pid"] == holder.pid, "the other run's lock was touched"
    # that run ends (its ansible-playbook is gone): the same command takes the host over, with a note
    holder.kill()
    holder.wait()
    proc = play(results, lock_path)
    assert_ok(proc)
    assert "localhost: took over the lock of run 20261202T080000Z of lvs_compare" in proc.stdout
    docs = playbook_run.point_documents(results, "cpu_scaling")
    assert len(docs) == 2 and all(d["valid"] for d in docs)
    assert not lock_path.exists(), "the run left its lock behind"


def test_a_lock_of_another_controller_is_refused_with_how_to_go_on(tmp_path, holder):
    lock_path = tmp_path / "lock" / "run.lock"
    lock_path.parent.mkdir()
    lock_path.write_text(json.dumps(holder_record(holder.pid, controller="lab-controller-2")))
    proc = play(tmp_path / "results", lock_path)
    assert proc.returncode == 14, why(proc)
    assert "localhost is in use by run 20261202T080000Z of lvs_compare (controller lab-controller-2" in proc.stdout
    assert f"remove {lock_path} on localhost and run again" in proc.stdout
    assert json.loads(lock_path.read_text())["controller"] == "lab-controller-2"


def test_a_results_directory_in_use_is_refused_then_taken_over(tmp_path, holder):
    """One run per results directory: another live run of the experiment into the same results
    directory (its lock beside the runs, results/<experiment>/.run.lock) stops this one before
    anything is written, naming it; once it is gone the lock is taken over, and released at the end."""
    results = tmp_path / "results"
    lock_path = results / "cpu_scaling" / ".run.lock"
    lock_path.parent.mkdir(parents=True)
    lock_path.write_text(json.dumps(dict(holder_record(holder.pid), experiment="cpu_scaling")))
    host_lock = tmp_path / "lock" / "run.lock"
    refused = play(results, host_lock)
    assert refused.returncode == 14, why(refused)
    said = " ".join(refused.stdout.split())
    assert (f"the results directory {results}/cpu_scaling is in use by run 20261202T080000Z of cpu_scaling "
            f"(controller {socket.gethostname()}, ansible-playbook pid {holder.pid}") in said, why(refused)
    assert "give this run a results directory of its own" in said
    assert sorted(p.name for p in lock_path.parent.iterdir() if not p.name.startswith(".")) == [], \
        "the refused run wrote results"
    assert not host_lock.exists(), "the refused run kept its host lock"
    holder.kill()
    holder.wait()
    proc = play(results, host_lock)
    assert_ok(proc)
    said = " ".join(proc.stdout.split())  # the output callback wraps long lines
    assert f"the results directory {results}/cpu_scaling: took over the lock of run 20261202T080000Z" in said, \
        why(proc)
    assert len(playbook_run.point_documents(results, "cpu_scaling")) == 2
    assert not lock_path.exists() and not host_lock.exists(), "the run left a lock behind"


def test_a_new_results_directory_is_private(tmp_path):
    results = tmp_path / "results"
    proc = play(results, tmp_path / "lock" / "run.lock")
    assert_ok(proc)
    for directory in (results, results / "cpu_scaling"):
        assert directory.stat().st_mode & 0o077 == 0, f"{directory} is readable by other users"
