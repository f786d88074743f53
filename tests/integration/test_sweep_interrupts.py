"""An interrupted sweep and a full results filesystem, end to end, without a lab.

Through the worked example (playbooks/cpu-scaling.yml, sysbench on localhost):

* Ctrl-C while a point's load runs: the test sends SIGINT to the playbook's
  process group, as a terminal does for its foreground job (Ansible stops at
  the first one). Nothing half-measured is stored, no process of the run is
  left, and the same command resumes the run and measures only what is missing.
* The results directory on a small tmpfs that fills up (root only): a clear
  error naming the directory and the full filesystem, a non-zero exit, no
  half-written document and no empty run; after freeing space the same
  command completes the run with every point stored exactly once.
"""

import glob
import os
import signal
import subprocess
import sys
import threading
import uuid

import ansible.module_utils
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
if os.path.join(ROOT, "module_utils") not in ansible.module_utils.__path__:
    ansible.module_utils.__path__.append(os.path.join(ROOT, "module_utils"))
from ansible.module_utils.testbed_results import LOCK_FILE  # noqa: E402 (after the path above)
from ansible.module_utils.testbed_results.store import validate_document  # noqa: E402
from playbook_run import explain, follow, stored_documents, wait_until  # noqa: E402
from playbook_run import run_dirs as _run_dirs  # noqa: E402

BIN = os.path.dirname(sys.executable)
SMALL = ['-e', '{"cpu_scaling_threads": [1, 2]}', '-e', 'testbed_repetitions=1', '-e', 'cpu_scaling_max_prime=2000']
POINTS = {"native__duration_s-{}_threads-1__rep1", "native__duration_s-{}_threads-2__rep1"}
LOAD_TASK = "TASK [testbed_workload : Run in one call: sysbench]"
# The interrupted run's load: long enough that the Ctrl-C, sent once its sysbench is seen in /proc, falls
# inside it on a slow, loaded machine too (the point must be interrupted, not finished).
INTERRUPTED_S = 20


def start(results, duration_s, marker):
    """The playbook in a process group of its own (a terminal's foreground job); every process it starts
    inherits TESTBED_TEST_MARK, so what is left of the run can be found."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               TESTBED_TEST_MARK=marker)
    cmd = [os.path.join(BIN, "ansible-playbook"), "playbooks/cpu-scaling.yml", "-i", "inventories/lab",
           "-e", f"testbed_results_dir={results}", "-e", f"cpu_scaling_duration_s={duration_s}"] + SMALL
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def run(results, duration_s, marker, on_line=None, timeout_s=600):
    """Run the playbook; on_line(line, proc) sees every output line. Returns (rc, output)."""
    proc = start(results, duration_s, marker)
    return follow(proc, lambda line: on_line and on_line(line, proc), timeout_s,
                  kill=lambda p: os.killpg(p.pid, signal.SIGKILL))


def marked(marker):
    """{pid: command line} of every process whose environment carries the marker."""
    found = {}
    for environ in glob.glob("/proc/[0-9]*/environ"):
        try:
            with open(environ, "rb") as handle:
                if f"TESTBED_TEST_MARK={marker}".encode() not in handle.read().split(b"\0"):
                    continue
            with open(environ[:-len("environ")] + "cmdline", "rb") as handle:
                found[int(environ.split("/")[2])] = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
    return found


def run_dirs(results):
    """The run's directories, a directory without a run file too (an empty run left behind is one too many)."""
    return _run_dirs(results, "cpu_scaling", empty=True)


def stored(results):
    """{point id: document} of the run; every file must parse and validate (nothing half-written)."""
    docs = stored_documents(results, "cpu_scaling")
    for doc in docs.values():
        validate_document(doc)
    return docs


def leftovers(results, lock_left=False):
    """Temp files of atomic writes anywhere under the results. ``lock_left``: the run was stopped
    without its cleanup (Ctrl-C), so its results lock <results>/<experiment>/.run.lock is still there -
    naming a run whose process is gone, which the next run takes over."""
    # Every hidden file at any depth, whatever its name - not the store's leftover_temp_files, which looks
    # in run directories only, for its own temp-file prefix: a temp file of the results lock (in the
    # experiment's directory, before any run directory exists) or of any other writer must be found too.
    found = [path for path in glob.glob(os.path.join(str(results), "**", ".*"), recursive=True)
             if os.path.basename(path) != LOCK_FILE]
    if lock_left:
        lock = os.path.join(str(results), "cpu_scaling", ".run.lock")
        assert lock in found, f"no results lock left by the interrupted run: {found}"
        found.remove(lock)
    return found


def test_ctrl_c_mid_point_then_the_same_command_resumes(tmp_path):
    results, marker = tmp_path / "results", uuid.uuid4().hex
    loads, seen = [], {}

    def interrupt(line, proc):
        if LOAD_TASK in line:
            loads.append(line)
            if len(loads) == 2:            # the second point's load: Ctrl-C once sysbench runs
                def fire():
                    seen.update(wait_until(lambda: {p: c for p, c in marked(marker).items() if "sysbench" in c}))
                    os.killpg(proc.pid, signal.SIGINT)
                threading.Thread(target=fire, daemon=True).start()
    rc, out = run(results, INTERRUPTED_S, marker, interrupt)
    assert seen, "sysbench of the second point never ran: " + out[-3000:]
    assert rc == 99 and "User interrupted execution" in out, out[-3000:]
    assert wait_until(lambda: not marked(marker), 60), f"left running after Ctrl-C: {marked(marker)}"
    points = {p.format(INTERRUPTED_S) for p in POINTS}
    # the interrupted point is not stored
    assert set(stored(results)) == {f"native__duration_s-{INTERRUPTED_S}_threads-1__rep1"}
    assert not leftovers(results, lock_left=True)
    assert len(run_dirs(results)) == 1

    rc, again = run(results, INTERRUPTED_S, marker)
    assert rc == 0, explain(rc, again)
    assert "(resumed, planned" in again and "1 done, 1 to run" in again
    assert "[2/2] native threads=2 rep 1: events_per_s" in again and "threads=1 rep 1: events_per_s" not in again
    docs = stored(results)
    assert set(docs) == points and all(doc["valid"] for doc in docs.values())
    assert len(run_dirs(results)) == 1 and not leftovers(results)
    assert not marked(marker)


def fill(path):
    """Write zeros to path until the filesystem is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as exc:
        assert exc.errno == 28, exc
    finally:
        os.close(fd)


@pytest.fixture
def small_fs(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    # room for what the sweep checks before the first point (32 MiB and 1 MiB per point here), so that the
    # run gets as far as storing - then the filler takes the rest
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=40m,mode=0755", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_results_on_a_full_filesystem(small_fs):
    results, filler, marker = small_fs / "results", small_fs / "filler", uuid.uuid4().hex
    points = {p.format(1) for p in POINTS}
    # full before the run starts: no run is made
    fill(filler)
    rc, out = run(results, 1, marker)
    assert rc != 0
    # the first write of the run is its results lock (<results>/cpu_scaling/.run.lock)
    assert (f"testbed_host_lock: no space left on the filesystem of {results}/cpu_scaling: the lock "
            f"{results}/cpu_scaling/.run.lock of the results directory") in out, out[-3000:]
    assert run_dirs(results) == [] and not leftovers(small_fs)

    # fills up after the first point: the second is not stored, nothing half-written
    os.unlink(filler)

    def fill_after_first(line, _proc):
        if "[1/2] native threads=1 rep 1: events_per_s" in line:
            fill(filler)
    rc, out = run(results, 1, marker, fill_after_first)
    assert rc != 0
    [run_dir] = run_dirs(results)
    assert (f"result_store: point native__duration_s-1_threads-2__rep1 was not stored: no space left on the "
            f"filesystem of {run_dir}") in out, out[-3000:]
    assert "run the same command again" in out
    assert set(stored(results)) == {"native__duration_s-1_threads-1__rep1"}
    assert os.listdir(os.path.join(run_dir, "raw")) == ["native__duration_s-1_threads-1__rep1.sysbench.txt"]
    assert not leftovers(small_fs)

    # space again: the same command completes the run, every point once
    os.unlink(filler)
    rc, out = run(results, 1, marker)
    assert rc == 0, explain(rc, out)
    assert "(resumed, planned" in out and "1 done, 1 to run" in out
    docs = stored(results)
    assert set(docs) == points and all(doc["valid"] for doc in docs.values())
    assert run_dirs(results) == [run_dir] and not leftovers(small_fs)
