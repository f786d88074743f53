"""roles/lvs_compare/scripts/lvs-timetable-bench.py refuses, before touching anything, what the network rule and its bounds forbid."""

import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "lvs_compare", "scripts", "lvs-timetable-bench.py")


@pytest.mark.parametrize("argv, message", [
    (["--vip", "202.103.106.10"], "only addresses inside the lab's 10.250.0.0/16"),
    (["--real-servers", "10.250.2.11,192.168.1.5"], "only addresses inside the lab's 10.250.0.0/16"),
    (["--loads", "31"], "bounded"),
    (["--rate", "401"], "bounded"),
    (["--seconds", "121"], "bounded"),
])
def test_refuses_before_any_command(argv, message, tmp_path):
    # ssh and docker are not on this PATH: a refusal that came after a command would fail differently.
    env = dict(os.environ, PATH=str(tmp_path))
    proc = subprocess.run([sys.executable, SCRIPT] + argv, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr


def test_lab_addresses_pass_the_checks(tmp_path):
    # Past the checks, the first command (ssh, absent here) fails: exit 1 with the script's own message.
    env = dict(os.environ, PATH=str(tmp_path))
    proc = subprocess.run([sys.executable, SCRIPT, "--loads", "2"], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 1 and "lvs-timetable-bench:" in proc.stderr, proc.stderr
