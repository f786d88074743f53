"""The watchdog around a load (filter workload_watch_argv, module_utils/testbed_sweep.py), run for real:
a POSIX sh that probes the load's targets while it runs and stops it when one goes silent.

The targets are TCP listeners of this test on loopback. No verdict depends on timing: the load tells
the test it started (a file), the test then closes the listener, and the load - 300 s of sleep - must
end because the watchdog stopped it (the subprocess timeouts only guard against a hang)."""

import os
import socket
import subprocess
import time

import pytest
from ansible.module_utils.testbed_sweep import (
    AnsibleFilterError,
    watchdog_finding,
    workload_result,
    workload_watch_argv,
    workload_watch_shown,
)
from ansible.module_utils.testbed_watchdog import watchdog_finding_text

HANG_GUARD_S = 240


def listener():
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock, sock.getsockname()[1]


def wait_for(path, proc):
    """Until the load wrote its start file (or ended); bounded by the hang guard only."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not os.path.exists(path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.path.exists(path), "the load never started"


def test_no_targets_no_watchdog():
    assert workload_watch_argv([]) == [] and workload_watch_argv(None) == []


def test_the_targets_become_arguments_after_the_script():
    argv = workload_watch_argv([{"name": "cc-lxd", "address": "10.250.40.12"},
                                {"name": "web", "address": "10.0.0.5", "port": "80"}], 3, 2, 1)
    assert argv[:2] == ["sh", "-c"] and argv[3:] == ["testbed-watchdog", "3", "2", "1", "cc-lxd", "10.250.40.12", "",
                                                     "web", "10.0.0.5", "80", "--"]


def test_a_result_shows_the_watchdog_without_its_script():
    argv = ["env", "LC_ALL=C"] + workload_watch_argv([{"name": "cc-lxd", "address": "10.250.40.12"}]) + ["timeout", "9", "ab"]
    assert workload_watch_shown(argv) == ["env", "LC_ALL=C", "sh", "-c", "<testbed-watchdog>", "testbed-watchdog", "5", "2",
                                          "2", "cc-lxd", "10.250.40.12", "", "--", "timeout", "9", "ab"]
    assert workload_watch_shown(["timeout", "9", "sh", "-c", "exec ab"]) == ["timeout", "9", "sh", "-c", "exec ab"]


@pytest.mark.parametrize("targets,message", [
    ("10.0.0.5", "must be a list"),
    ([{"name": "x"}], "needs an address"),
    ([{"address": "-c1"}], "is not a host name or IP address"),
    ([{"address": "a b"}], "is not a host name or IP address"),
    ([{"address": "10.0.0.5", "port": 70000}], "1-65535"),
    ([{"address": "10.0.0.5", "port": "http"}], "whole number"),
])
def test_a_target_that_cannot_be_probed_is_refused(targets, message):
    with pytest.raises(AnsibleFilterError, match=message):
        workload_watch_argv(targets)


@pytest.mark.parametrize("name,value", [("interval_s", 0), ("misses", 1.5), ("probe_timeout_s", "x")])
def test_the_watchdogs_numbers_are_whole_and_positive(name, value):
    args = {"interval_s": 5, "misses": 2, "probe_timeout_s": 2, name: value}
    with pytest.raises(AnsibleFilterError, match=name):
        workload_watch_argv([{"address": "127.0.0.1"}], **args)


def test_a_load_whose_target_answers_runs_to_its_end_with_its_status(tmp_path):
    sock, port = listener()
    try:
        # a probe may take 30 s (a busy machine starting bash): an answering target is never missed
        argv = workload_watch_argv([{"name": "srv", "address": "127.0.0.1", "port": port}], 1, 2, 30)
        proc = subprocess.run(argv + ["sh", "-c", "sleep 2; echo done; exit 7"], capture_output=True, text=True,
                              timeout=HANG_GUARD_S, check=False)
    finally:
        sock.close()
    assert (proc.returncode, proc.stdout, proc.stderr) == (7, "done\n", "")
    assert watchdog_finding(proc.stderr) is None


def test_a_target_that_goes_silent_stops_the_load(tmp_path):
    sock, port = listener()
    started = tmp_path / "started"
    argv = workload_watch_argv([{"name": "cc-docker", "address": "127.0.0.1", "port": port}], 1, 2, 1)
    proc = subprocess.Popen(argv + ["timeout", "-k", "3", "300", "sh", "-c", f"touch {started}; exec sleep 300"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(started, proc)
        sock.close()                     # the guest's server is gone
        out, err = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    finding = watchdog_finding(err)
    assert finding and finding.startswith("stopped the load ") and finding.endswith(
        f"s in: cc-docker (127.0.0.1 port {port}) did not answer 2 probes 1 s apart"), err
    # the formatter other watchdogs use (LVS's rounds) says the same sentence as this shell
    seconds_in = int(finding.split()[3])
    assert finding == watchdog_finding_text(seconds_in, [("cc-docker", f"127.0.0.1 port {port}")], 2, 1)
    # the result is invalid with the watchdog's sentence (the sweep's health hook names the fault)
    run = {"tool": "ab", "rc": proc.returncode, "stdout": out, "stderr": err, "parsed": None, "error": "no output"}
    assert "the watchdog " + finding in workload_result(run, {}, {})["reasons"]


def test_a_target_silent_before_the_load_is_not_watched(tmp_path):
    sock, port = listener()
    sock.close()                         # nothing listens there
    argv = workload_watch_argv([{"name": "filtered", "address": "127.0.0.1", "port": port}], 1, 1, 1)
    proc = subprocess.run(argv + ["sh", "-c", "sleep 3; echo measured"], capture_output=True, text=True,
                          timeout=HANG_GUARD_S, check=False)
    assert proc.returncode == 0 and proc.stdout == "measured\n"
    assert proc.stderr == (f"testbed-watchdog: not watching filtered (127.0.0.1 port {port}): it did not answer "
                           "before the load\n")


def test_a_signal_to_the_watchdog_goes_on_to_the_load(tmp_path):
    sock, port = listener()
    started = tmp_path / "started"
    argv = workload_watch_argv([{"name": "srv", "address": "127.0.0.1", "port": port}], 60, 2, 30)
    proc = subprocess.Popen(argv + ["sh", "-c", f"trap 'echo got-term; exit 3' TERM; touch {started}; "
                                    "while :; do sleep 1; done"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        wait_for(started, proc)
        proc.terminate()
        out, _ = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        sock.close()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3 and "got-term" in out


def test_the_script_is_posix_sh():
    # dash is Debian's sh: the script must parse there (no bashisms outside the bash -c probe)
    if not os.path.exists("/bin/dash"):
        pytest.skip("no dash here")
    argv = workload_watch_argv([{"address": "127.0.0.1"}])
    proc = subprocess.run(["/bin/dash", "-n", "-c", argv[2]], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


# -- a block device the load uses (storage over the network): one direct read, not waited for beyond the timeout --

def test_a_device_target_is_read_not_connected_to():
    argv = workload_watch_argv([{"name": "storage-vm", "address": "/dev/disk/by-id/virtio-tb-data"}], 5, 2, 10)
    assert argv[3:] == ["testbed-watchdog", "5", "2", "10", "storage-vm", "/dev/disk/by-id/virtio-tb-data", "", "--"]
    with pytest.raises(AnsibleFilterError, match="is a device .* give it no port"):
        workload_watch_argv([{"name": "storage-vm", "address": "/dev/vdb", "port": 3260}])


def release(fifo):
    """End a read that waits on the FIFO (a probe left behind): open it for writing, then close it."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass                             # no reader left


def test_a_device_whose_reads_hang_stops_the_load(tmp_path):
    """The volume answers (a file read with O_DIRECT) until the load runs, then its reads hang (the link
    now names a FIFO nobody writes: open blocks as a read of a volume whose target died does)."""
    volume = tmp_path / "volume"
    volume.write_bytes(os.urandom(1 << 20))
    fifo = tmp_path / "dead"
    os.mkfifo(fifo)
    device = tmp_path / "tb-data"
    device.symlink_to(volume)
    started = tmp_path / "started"
    argv = workload_watch_argv([{"name": "storage-vm", "address": str(device)}], 1, 2, 1)
    proc = subprocess.Popen(argv + ["timeout", "-k", "3", "300", "sh", "-c", f"touch {started}; exec sleep 300"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(started, proc)
        tmp = tmp_path / "tb-data.new"
        tmp.symlink_to(fifo)
        os.replace(tmp, device)          # the storage is gone: every later read waits
        _, err = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
        for _ in range(3):
            release(fifo)
    assert proc.returncode != 0
    finding = watchdog_finding(err)
    assert finding and finding.endswith(f"s in: storage-vm ({device}) did not answer 2 probes 1 s apart"), err


def test_a_device_that_answers_is_never_missed(tmp_path):
    volume = tmp_path / "volume"
    volume.write_bytes(os.urandom(1 << 20))
    # a probe may take 30 s on a busy machine: a volume that answers is never missed
    argv = workload_watch_argv([{"name": "storage-vm", "address": str(volume)}], 1, 2, 30)
    proc = subprocess.run(argv + ["sh", "-c", "sleep 3; echo measured"], capture_output=True, text=True,
                          timeout=HANG_GUARD_S, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "measured\n", "")


def test_a_device_that_hangs_before_the_load_is_watched_all_the_same(tmp_path):
    """A host silent before the load is left out (ICMP may be filtered there); a device the load needs is not:
    its storage went away before the load, and the load is stopped as soon as two probes found it silent."""
    fifo = tmp_path / "dead"
    os.mkfifo(fifo)
    argv = workload_watch_argv([{"name": "storage-vm", "address": str(fifo)}], 1, 2, 1)
    try:
        proc = subprocess.run(argv + ["timeout", "-k", "3", "300", "sleep", "300"], capture_output=True, text=True,
                              timeout=HANG_GUARD_S, check=False)
    finally:
        for _ in range(4):
            release(fifo)
    assert proc.returncode != 0 and "not watching" not in proc.stderr
    assert watchdog_finding(proc.stderr).endswith(f"s in: storage-vm ({fifo}) did not answer 2 probes 1 s apart")
