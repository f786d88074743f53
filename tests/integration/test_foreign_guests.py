"""Someone else's container named like a testbed guest is refused by name and left intact (issue #40).

A foreign Docker container - no label org.testbed.role=runtime_docker, running ``sleep`` from a tiny
image this test imports from the host's own ``sleep`` and its libraries (no registry) - and, where
LXC's tools are installed, a foreign LXC container (``lxc-create`` with a template of the test's,
under an LXC path of the test's own), each named like a guest under a prefix of this test run
(``tbtest-<pid>-cc-docker``, ``...-cc-lxc``: nothing of another run or of the lab clashes). Then:

* ``playbooks/container-compare.yml`` on an inventory of the test's (the container host is this
  machine, the guests those names), building: the build play's read-only preflight stops before
  anything is installed or built, naming both in one failure; the guest play touches neither;
* the same with ``-e testbed_state=absent``: the remove hook's preflight refuses before anything is
  removed;
* ``runtime_docker`` and ``runtime_lxc`` themselves with state absent
  (tests/integration/guest_ownership.yml): each role refuses on its own.

After each run the Docker container has the same id, still runs since the same start, and the
LXC container's config and files are as they were. The test removes both at the end. The runs stop
at their preflight: about half a minute each. Needs root and Docker (started as the project's tests
start it: scripts/ensure-dockerd.sh).
"""
import glob
import hashlib
import os
import shutil
import subprocess
import tarfile

import pytest
import yaml
from playbook_run import ROOT, play, why

PREFIX = "tbtest-%d" % os.getpid()
DOCKER_NAME = PREFIX + "-cc-docker"
LXC_NAME = PREFIX + "-cc-lxc"
IMAGE = "%s/foreign-sleep:1" % PREFIX
HAS_LXC = shutil.which("lxc-create") is not None and shutil.which("lxc-destroy") is not None

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="runs Docker and LXC containers: needs root"),
    pytest.mark.skipif(shutil.which("docker") is None, reason="no docker client (apt-get install docker.io)"),
]


def run(*argv, check=True):
    return subprocess.run(list(argv), capture_output=True, text=True, check=check, timeout=300)


def docker_state(name):
    """(id, running, started at) of the container ``name``."""
    out = run("docker", "inspect", "--format", "{{.Id}} {{.State.Running}} {{.State.StartedAt}}", name).stdout.split()
    return out[0], out[1] == "true", out[2]


def tree_digest(path):
    """Every file under ``path`` with its size and sha256 (what makes the LXC container the same one)."""
    found = []
    for name in sorted(glob.glob(os.path.join(path, "**"), recursive=True)):
        if os.path.isfile(name):
            with open(name, "rb") as handle:
                found.append((os.path.relpath(name, path), os.path.getsize(name), hashlib.sha256(handle.read()).hexdigest()))
        else:
            found.append((os.path.relpath(name, path), "dir", os.lstat(name).st_ino))
    return found


def sleep_image(tmp):
    """A tarball of the host's /usr/bin/sleep and the libraries ldd names, imported as IMAGE."""
    files = ["/usr/bin/sleep"]
    for line in run("ldd", "/usr/bin/sleep").stdout.splitlines():
        parts = line.split()
        path = parts[2] if "=>" in parts and len(parts) > 2 else parts[0]
        if path.startswith("/"):
            files.append(path)
    tar = os.path.join(tmp, "foreign-sleep.tar")
    with tarfile.open(tar, "w") as archive:
        for path in files:
            archive.add(os.path.realpath(path), arcname=path.lstrip("/"))
    run("docker", "import", tar, IMAGE)


@pytest.fixture(scope="module")
def foreign(tmp_path_factory):
    """The foreign Docker container (running) and, with LXC's tools, the foreign LXC container."""
    tmp = str(tmp_path_factory.mktemp("guest-ownership"))
    if run("docker", "info", check=False).returncode != 0:
        run(os.path.join(ROOT, "scripts", "ensure-dockerd.sh"))
    lxc_path = os.path.join(tmp, "lxc")
    try:
        sleep_image(tmp)
        run("docker", "run", "-d", "--name", DOCKER_NAME, "--label", "maintainer=someone-else", IMAGE,
            "/usr/bin/sleep", "3600")
        if HAS_LXC:
            os.makedirs(lxc_path)
            template = os.path.join(tmp, "template.sh")
            with open(template, "w") as handle:
                handle.write('#!/bin/sh\nfor a; do case "$a" in --rootfs=*) r="${a#--rootfs=}";; esac; done\n'
                             'mkdir -p "$r/srv" && echo "someone else\'s data" > "$r/srv/keep"\n')
            os.chmod(template, 0o755)
            run("lxc-create", "-P", lxc_path, "-n", LXC_NAME, "-t", template)
        yield {"dir": tmp, "lxc_path": lxc_path, "docker": docker_state(DOCKER_NAME),
               "lxc": tree_digest(os.path.join(lxc_path, LXC_NAME)) if HAS_LXC else None}
    finally:
        run("docker", "rm", "-f", DOCKER_NAME, check=False)
        run("docker", "image", "rm", IMAGE, check=False)
        if HAS_LXC and os.path.isdir(os.path.join(lxc_path, LXC_NAME)):
            run("lxc-destroy", "-P", lxc_path, "-n", LXC_NAME, check=False)


def inventory(foreign):
    """container_host = this machine; the guests = the foreign containers' names."""
    directory = os.path.join(foreign["dir"], "inventory")
    os.makedirs(os.path.join(directory, "group_vars", "all"), exist_ok=True)
    path = os.path.join(directory, "hosts.yml")
    guests = {DOCKER_NAME: {"container_compare_variant": "docker", "ansible_connection": "community.docker.docker",
                            "ansible_host": DOCKER_NAME}}
    if HAS_LXC:
        guests[LXC_NAME] = {"container_compare_variant": "lxc", "ansible_connection": "community.general.lxc",
                            "ansible_host": LXC_NAME, "ansible_pipelining": False}
    with open(path, "w") as handle:
        yaml.safe_dump({"all": {"children": {
            "container_host": {"hosts": {"localhost": {"ansible_connection": "local",
                                                       "ansible_python_interpreter": "{{ ansible_playbook_python }}"}}},
            "container_guests": {"hosts": guests}}}}, handle)
    shared = os.path.join(directory, "group_vars", "all", "000_shared")
    if not os.path.lexists(shared):
        os.symlink(os.path.join(ROOT, "group_vars", "all"), shared)
    return directory


def experiment(foreign, tmp_path, *extra):
    variants = '["docker", "lxc"]' if HAS_LXC else '["docker"]'
    return play("playbooks/container-compare.yml", "-e", '{"container_compare_variants": %s}' % variants,
                "-e", "container_compare_baseline=docker", "-e", '{"container_compare_workloads": ["cpu"]}',
                "-e", "runtime_docker_guest_name=" + DOCKER_NAME, "-e", "runtime_lxc_guest_name=" + LXC_NAME,
                "-e", "runtime_lxc_lxc_path=" + foreign["lxc_path"],
                "-e", "testbed_lock_path=%s" % (tmp_path / "run.lock"), *extra,
                inventory=inventory(foreign), results=tmp_path / "results", timeout=900)


def flat(proc):
    return " ".join(proc.stdout.split())


def docker_refusal(host="localhost"):
    return ("Docker container %s on host %s was not created by the testbed (id %s, no label "
            "org.testbed.role=runtime_docker): rename it (docker rename %s <new name>) or set runtime_docker_guest_name "
            "(and the guest's ansible_host) to another name." % (DOCKER_NAME, host, "%s", DOCKER_NAME))


def lxc_refusal(foreign, host="localhost"):
    return ("LXC container %s on host %s was not created by the testbed (%s/%s holds no marker testbed-guest.json): "
            "rename it (lxc-copy -R -P %s -n %s -N <new name>) or set runtime_lxc_guest_name (and the guest's "
            "ansible_host) to another name." % (LXC_NAME, host, foreign["lxc_path"], LXC_NAME, foreign["lxc_path"],
                                                LXC_NAME))


def assert_intact(foreign):
    assert docker_state(DOCKER_NAME) == foreign["docker"], "the foreign Docker container changed"
    if HAS_LXC:
        assert tree_digest(os.path.join(foreign["lxc_path"], LXC_NAME)) == foreign["lxc"], "the foreign LXC container changed"
        assert LXC_NAME in run("lxc-ls", "-P", foreign["lxc_path"]).stdout.split()


def assert_refused(proc, foreign):
    text = flat(proc)
    assert proc.returncode != 0, why(proc)
    assert "Preflight of localhost, nothing installed, written or removed: " in text, why(proc)
    assert docker_refusal() % foreign["docker"][0][:12] in text, why(proc)
    if HAS_LXC:
        assert lxc_refusal(foreign) in text, why(proc)
    return text


def later_tasks(tasks_file):
    """The names of the tasks of roles/container_compare/tasks/<tasks_file> after its preflight."""
    with open(os.path.join(ROOT, "roles", "container_compare", "tasks", tasks_file)) as handle:
        names = [task["name"] for task in yaml.safe_load(handle)]
    assert names[0] == "Check that the guests' names are free or the testbed's own", names
    return names[1:]


def test_the_build_refuses_a_foreign_container_before_anything_changes(foreign, tmp_path):
    proc = experiment(foreign, tmp_path)
    text = assert_refused(proc, foreign)
    assert "TASK [container_compare : Stop on someone else's container of a guest's name, all in one failure]" in text
    for name in later_tasks("build.yml"):
        assert f"TASK [container_compare : {name}" not in text, f"{name} ran after the refusal\n{why(proc)}"
    for later in ("TASK [testbed_packages", "TASK [guest_rootfs", "TASK [guest_services"):
        assert later not in text, f"{later} ran after the refusal\n{why(proc)}"
    # the guest play left both alone: no task ran on either guest host, nor was delegated there
    for guest in (DOCKER_NAME, LXC_NAME):
        for mark in (f"ok: [{guest}]", f"changed: [{guest}]", f"fatal: [{guest}]", f"-> {guest}]"):
            assert mark not in proc.stdout, why(proc)
    assert_intact(foreign)


def test_the_removal_refuses_a_foreign_container_before_anything_is_removed(foreign, tmp_path):
    proc = experiment(foreign, tmp_path, "-e", "testbed_state=absent")
    text = assert_refused(proc, foreign)
    for name in later_tasks("remove.yml"):
        assert f"TASK [container_compare : {name}" not in text, f"{name} ran after the refusal\n{why(proc)}"
    for later in ("TASK [runtime_docker : Remove the guest container - ", "TASK [runtime_lxc : Stop and destroy the guest]",
                  "TASK [guest_services"):
        assert later not in text, f"{later} ran after the refusal\n{why(proc)}"
    assert_intact(foreign)


def test_the_runtime_roles_refuse_to_remove_a_foreign_container_themselves(foreign, tmp_path):
    proc = play("tests/integration/guest_ownership.yml", "-e", "go_prefix=" + PREFIX, "-e", "go_dir=" + foreign["dir"],
                "-e", "go_lxc=%s" % str(HAS_LXC).lower(), inventory=inventory(foreign), timeout=600)
    text = flat(proc)
    assert proc.returncode != 0, why(proc)
    assert "Refused: " + docker_refusal() % foreign["docker"][0][:12] in text, why(proc)
    if HAS_LXC:
        assert lxc_refusal(foreign) in text, why(proc)
    for later in ("TASK [runtime_docker : Remove the guest container - ", "TASK [runtime_docker : Remove the imported images]",
                  "TASK [runtime_lxc : Stop and destroy the guest]", "TASK [runtime_lxc : Remove a leftover guest directory (a half-unpacked rootfs)]"):
        assert later not in text, f"{later} ran after the refusal\n{why(proc)}"
    assert_intact(foreign)
