"""A controller is a controller: ./scripts/setup.sh installs no lab host, no server.

The setup command's Debian packages, with everything they depend on (apt's own
resolution, recommends left out as setup leaves them out), contain no container
engine, no hypervisor and no network server; the lab host's packages are
roles/lab_host's, installed by `./scripts/setup.sh --lab` or by the lab's own
playbooks.
"""

import os
import re
import shutil
import subprocess

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SETUP = os.path.join(ROOT, "scripts", "setup.sh")
# a package of these names (or starting with these prefixes) is a lab host's or a server
FORBIDDEN = ("docker.io", "docker-ce", "containerd", "runc", "podman", "lxc", "lxd", "incus", "qemu-system",
             "debootstrap", "vsftpd", "nginx", "apache2", "postfix", "exim4", "openssh-server", "dovecot",
             "httperf", "hpcc", "bridge-utils")


def controller_packages():
    text = open(SETUP).read()
    block = re.search(r"^APT_PACKAGES=\((.*?)^\)", text, re.S | re.M)
    assert block, "scripts/setup.sh has no APT_PACKAGES=( ... ) list"
    return [word for line in block.group(1).splitlines()
            for word in line.split("#", 1)[0].split()]


def forbidden(name):
    return name == "lxc" or any(name == f or name.startswith(f + "-") or name.startswith(f)
                                for f in FORBIDDEN if f != "lxc")


def test_the_list_names_no_lab_package_or_server():
    packages = controller_packages()
    assert "python3-venv" in packages and "openssh-client" in packages
    assert [p for p in packages if forbidden(p)] == []


def test_the_forbidden_check_can_fail():
    assert forbidden("docker.io") and forbidden("nginx-light") and forbidden("qemu-system-x86")
    assert forbidden("lxc") and not forbidden("lxc-dev") and not forbidden("liblxc1")


@pytest.mark.skipif(shutil.which("apt-cache") is None, reason="apt-cache: a Debian or Ubuntu machine")
def test_nothing_they_depend_on_is_a_lab_package_or_server():
    proc = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
         "--no-breaks", "--no-replaces", "--no-enhances", "--no-pre-depends", *controller_packages()],
        capture_output=True, text=True, env=dict(os.environ, LANG="C", LC_ALL="C"), timeout=600)
    assert proc.returncode == 0, proc.stderr
    closure = {line.strip() for line in proc.stdout.splitlines() if line and not line.startswith(" ")}
    closure |= {m.group(1) for m in re.finditer(r"^\s+Depends: <?([^\s>]+)", proc.stdout, re.M)}
    assert len(closure) > 50, "apt-cache gave no dependency closure"
    assert sorted(p for p in closure if forbidden(p)) == []


def test_the_lab_host_role_has_what_the_controller_lacks():
    with open(os.path.join(ROOT, "roles", "lab_host", "defaults", "main.yml")) as handle:
        lab = yaml.safe_load(handle)["lab_host_packages"]
    assert "qemu-system-x86" in lab and "debootstrap" in lab
    assert set(lab).isdisjoint(controller_packages())
    with open(os.path.join(ROOT, "playbooks", "lab-host.yml")) as handle:
        plays = yaml.safe_load(handle)
    play_vars = plays[0]["roles"][0]["vars"]
    assert {"httperf", "vsftpd", "nginx-light"} <= set(play_vars["__lab_host_tools"])
    # and what builds the venv's LXC bindings: the container experiment's own list, read from its defaults
    assert "container_compare_lxc_build_packages" in play_vars["lab_host_extra_packages"]
    with open(os.path.join(ROOT, "roles", "container_compare", "defaults", "main.yml")) as handle:
        assert "lxc-dev" in yaml.safe_load(handle)["container_compare_lxc_build_packages"]


def test_an_unknown_argument_is_refused():
    proc = subprocess.run(["bash", SETUP, "--controller-only"], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "TESTBED_SKIP_APT": "1"})
    assert proc.returncode == 2 and "unknown argument --controller-only" in proc.stderr
