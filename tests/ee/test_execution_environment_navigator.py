"""ansible-navigator plans every experiment inside the execution environment (docs/collection.md).

``make ee-test``, not part of ``make test`` (docs/ci.md): the image ``testbed-ee:local`` is built by
``scripts/build-ee.py`` from the lab's Debian image - minutes, and again whenever the collection built
from the checkout changes - or reused when its label says its inputs are unchanged. Then, for each
experiment playbook, ``ansible-navigator run ... --tags plan`` in that image against the example
hardware inventory (documentation addresses: the plan contacts no host) exits 0 and prints the same
plan as ``ansible-playbook`` on this controller; a refused input exits 10, as outside the image
(the testbed_exit callback, which ansible-runner's own callback path would hide, is found next to
the playbooks). Skipped, with the reason, where docker does not answer, the lab's Debian image
(``make images``) is missing or ansible-navigator is not installed (requirements.txt).
"""
import os
import re
import shutil
import subprocess
import sys

import pytest
from playbook_run import ROOT, play, why

TAG = "testbed-ee:local"
BASE_FROM = "testbed/debian:bookworm"
EXPERIMENTS = ("lvs-compare", "storage-compare", "container-compare", "nfv-chain", "cpu-scaling")
INVENTORY = "inventories/example_hardware"
# ANSI colours, and the job events ansible-runner's display callback writes into stdout between
# erase-line sequences (ansible-navigator's stdout mode passes them through).
_CONTROL = re.compile(r"\x1b\[K[A-Za-z0-9+/=]*\x1b\[\d+D\x1b\[K|\x1b\[[0-9;]*[A-Za-z]")
_PLAN = re.compile(r"Plan: \d+ points \(.*?\), \d+ done, \d+\s+to\s+run", re.S)


def _navigator():
    beside = os.path.join(os.path.dirname(sys.executable), "ansible-navigator")
    return beside if os.path.exists(beside) else shutil.which("ansible-navigator")


def _skip_reason():
    if shutil.which("docker") is None or subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        return "docker does not answer (scripts/ensure-dockerd.sh starts it)"
    if subprocess.run(["docker", "image", "inspect", BASE_FROM], capture_output=True).returncode != 0:
        return f"no local base image {BASE_FROM} (make images builds it from a debootstrap rootfs)"
    if _navigator() is None:
        return "ansible-navigator is not installed (requirements.txt; ./scripts/setup.sh)"
    return None


_SKIP = _skip_reason()
pytestmark = pytest.mark.skipif(_SKIP is not None, reason=_SKIP or "")


@pytest.fixture(scope="module")
def image():
    """testbed-ee:local for this checkout: built, or reused when its inputs' label matches."""
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "build-ee.py"), "--tag", TAG],
                          cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "build-ee: built" in proc.stdout or "is up to date" in proc.stdout, proc.stdout
    return TAG


def navigate(tmp_path, playbook, *args):
    """ansible-navigator run in the image, stdout mode, nothing written into the checkout."""
    cmd = [_navigator(), "run", f"playbooks/{playbook}.yml", "-i", INVENTORY, *args,
           "--execution-environment-image", TAG, "--container-engine", "docker", "--pull-policy", "never",
           "--mode", "stdout", "--playbook-artifact-enable", "false", "--log-file", str(tmp_path / "navigator.log")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)
    proc.command = cmd
    proc.stdout = _CONTROL.sub("", proc.stdout)
    proc.stderr = _CONTROL.sub("", proc.stderr)
    return proc


def plan_line(output):
    found = _PLAN.findall(output)
    assert len(found) == 1, output[-4000:]
    return " ".join(found[0].split())


def test_the_image_has_the_pinned_ansible_and_the_collection(image):
    proc = subprocess.run(["docker", "run", "--rm", "--network", "none", image, "bash", "-c",
                           "ansible --version && ansible-galaxy collection list testbed.infra"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pins = dict(line.strip().split("==") for line in open(os.path.join(ROOT, "requirements.txt"), encoding="utf-8")
                if "==" in line)
    assert f"ansible [core {pins['ansible-core']}]" in proc.stdout
    assert re.search(r"^testbed\.infra\s+\d+\.\d+\.\d+", proc.stdout, re.M), proc.stdout


@pytest.mark.parametrize("playbook", EXPERIMENTS)
def test_navigator_plans_the_experiment_in_the_image(image, tmp_path, playbook):
    proc = navigate(tmp_path, playbook, "--tags", "plan")
    assert proc.returncode == 0, why(proc)
    assert "Skipping callback plugin" not in proc.stdout + proc.stderr, why(proc)
    here = play(f"playbooks/{playbook}.yml", "--tags", "plan", inventory=INVENTORY, check=True)
    assert plan_line(proc.stdout) == plan_line(here.stdout)


def test_a_refused_input_exits_10_in_the_image(image, tmp_path):
    proc = navigate(tmp_path, "cpu-scaling", "--tags", "plan", "-e", '{"cpu_scaling_threads": [0]}')
    assert proc.returncode == 10, why(proc)
    assert "Exit status 10 (refused)" in proc.stdout + proc.stderr, why(proc)
    assert "cpu_scaling_threads item 1 must be at least 1, got 0" in proc.stdout + proc.stderr
