"""module_utils/testbed_load.py: the command one load runs with and the result it gives (action testbed_load)."""
import pytest
from ansible.errors import AnsibleFilterError
from ansible.module_utils.testbed_load import exec_prefix, parse_options, workload_command, workload_result
from ansible.module_utils.testbed_procs import record_argv, stop_argv
from ansible.module_utils.testbed_sweep import WATCH_SCRIPT


def test_a_plain_run_on_the_host_under_its_deadline():
    cmd = workload_command("sysbench", ["cpu", "run"], estimate_s=10)
    assert cmd["argv"] == ["env", "LC_ALL=C", "LANG=C", "timeout", "-k", "3", "90", "sysbench", "cpu", "run"]
    assert cmd["shown"] == cmd["argv"] and cmd["output"] == "stdout" and cmd["reader"] == [] and cmd["after"] == []
    assert cmd["deadline"] == {"deadline_s": 90, "from": "estimate", "estimate_s": 10.0}
    assert workload_command("sysbench")["deadline"]["deadline_s"] == 3600  # no estimate: the default, never unbounded


def test_in_a_container_recorded_watched_in_its_directory():
    cmd = workload_command("iperf3", ["--client", "10.0.0.2", "--time", 10], exec_kind="docker", container="nfv-client",
                           chdir="/work", estimate_s=10, watch=[{"name": "backend", "address": "10.0.0.2"}],
                           record="iperf3_load", record_dir="/run/procs")
    prefix = ["docker", "exec", "--env", "LC_ALL=C", "--env", "LANG=C", "nfv-client", "env", "--chdir=/work"]
    assert cmd["prefix"] == prefix
    watch = ["sh", "-c", WATCH_SCRIPT, "testbed-watchdog", "5", "2", "2", "backend", "10.0.0.2", "", "--"]
    guard = watch + ["timeout", "-k", "3", "90"]
    tool = ["iperf3", "--client", "10.0.0.2", "--time", "10"]
    # the record's prefix sits after the deadline (its pid is the tool's); the result keeps the argv without it
    assert cmd["argv"] == prefix + guard + record_argv("/run/procs/iperf3_load.json") + tool
    assert cmd["shown"] == prefix + watch[:2] + ["<testbed-watchdog>"] + watch[3:] + ["timeout", "-k", "3", "90"] + tool
    assert cmd["after"] == prefix + stop_argv("/run/procs", ["iperf3_load"], 5)


def test_the_output_each_tool_is_read_from():
    xz = workload_command("xz", ["-v", "-c", "f"])
    assert xz["output"] == "stderr" and xz["argv"][7:10] == ["sh", "-c", 'exec "$0" "$@" > /dev/null']
    hpcc = workload_command("hpcc", chdir="/tmp/h")
    assert hpcc["output"] == "file" and hpcc["output_path"] == "hpccoutf.txt"
    assert hpcc["reader"] == ["env", "LC_ALL=C", "LANG=C", "env", "--chdir=/tmp/h", "cat", "--", "hpccoutf.txt"]
    assert hpcc["before"] == ["env", "LC_ALL=C", "LANG=C", "env", "--chdir=/tmp/h", "rm", "-f", "--", "hpccoutf.txt"]
    assert parse_options("xz", {}, 1.5) == {"wall_s": 1.5} and parse_options("ping", {"a": 1}, 1.5) == {"a": 1}
    assert exec_prefix("lxc", "cc-lxc") == ["lxc-attach", "--name", "cc-lxc", "--", "env", "LC_ALL=C", "LANG=C"]


@pytest.mark.parametrize("kwargs, pattern", [
    ({"exec_kind": "kubectl"}, "exec must be one of none, docker, podman, lxc"),
    ({"exec_kind": "docker"}, "needs the container's name"),
    ({"args": "cpu run"}, "args must be a list"),
    ({"output": "syslog"}, "output must be stdout, stderr or file"),
    ({"output": "file"}, "needs output_file"),
    ({"record": "x", "record_dir": "procs"}, "needs record_dir, an absolute path"),
    ({"estimate_s": -1}, "estimate_s must be a number >= 0"),
])
def test_bad_settings_name_the_problem(kwargs, pattern):
    with pytest.raises(AnsibleFilterError, match=pattern):
        workload_command("sysbench", **kwargs)


def test_the_result_says_how_the_run_ended():
    cmd = workload_command("ping", ["-c", "30", "127.0.0.1"], estimate_s=1, deadline_factor=1, deadline_margin_s=1)
    over = workload_result("ping", "h1", cmd, {"rc": 124, "stdout": "PING", "stderr": "", "duration_s": 2.0}, "t0", "t1",
                           None, "no summary")
    assert over["overran"] is True and over["error"] == "-> no summary" and over["deadline_s"] == 2
    stopped = workload_result("ping", "h1", cmd, {"rc": 137, "stderr": "testbed-watchdog: stopped: backend silent"},
                              "t0", "t1", None, "truncated")
    assert stopped["overran"] is False and stopped["watchdog"] == "testbed-watchdog: stopped: backend silent"
    own = workload_command("postal", timeout_s=60)
    assert workload_result("postal", "h1", own, {"rc": 124}, "t0", "t1", {"valid": True})["overran"] is False
    hung = workload_result("ping", "h1", own, {"rc": 137, "hung": "the command had not returned"}, "t0", "t1")
    assert hung["overran"] is True and hung["hung"] == "the command had not returned"
    assert over["hung"] is None and stopped["hung"] is None
    failed = workload_result("ping", "h1", cmd, {"rc": None, "msg": "cannot start env"}, "t0", "t1", None, None)
    assert failed["error"] == "cannot start env -> parse failed" and failed["stdout"] == ""
