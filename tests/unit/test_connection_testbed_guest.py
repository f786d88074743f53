"""Connection plugin testbed_guest (connection_plugins/testbed_guest.py): the command it runs on the container host,
and its exec, put and fetch through a recorded stand-in for the ssh connection to that host."""

import os
import shlex

import pytest
import testbed_guest
from ansible.errors import AnsibleConnectionFailure
from ansible.playbook.play_context import PlayContext
from ansible.plugins.loader import connection_loader

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
connection_loader.add_directory(os.path.join(ROOT, "connection_plugins"))


def test_each_runtime_exec_with_stdin_and_sudo_for_a_non_root_user():
    cmd = "/bin/sh -c 'echo ~ && sleep 0'"
    assert shlex.split(testbed_guest.guest_command("docker", "cc-docker", cmd, True)) == [
        "sudo", "-n", "docker", "exec", "-i", "cc-docker", "/bin/sh", "-c", cmd]
    assert shlex.split(testbed_guest.guest_command("podman", "cc-podman", cmd, False)) == [
        "podman", "exec", "-i", "cc-podman", "/bin/sh", "-c", cmd]
    assert shlex.split(testbed_guest.guest_command("lxc", "cc-lxc", cmd, True, "/srv/lxc")) == [
        "sudo", "-n", "lxc-attach", "-P", "/srv/lxc", "-n", "cc-lxc", "--clear-env", "-v",
        "PATH=" + testbed_guest.GUEST_PATH, "--", "/bin/sh", "-c", cmd]
    assert shlex.split(testbed_guest.guest_command("lxd", "cc-lxd", cmd, True)) == [
        "sudo", "-n", "lxc", "exec", "cc-lxd", "--", "/bin/sh", "-c", cmd]
    with pytest.raises(ValueError, match="give docker, podman, lxc or lxd"):
        testbed_guest.guest_command("kvm", "cc-kvm", cmd, True)


class HostShell:
    """The ssh connection to the container host: records each command and its stdin, answers as told."""

    def __init__(self, answer=(0, b"", b"")):
        self.calls = []
        self.answer = answer

    def exec_command(self, cmd, in_data=None, sudoable=True):
        self.calls.append((shlex.split(cmd), in_data, sudoable))
        return self.answer


def connection(user="testbed", answer=(0, b"", b"")):
    conn = connection_loader.get("testbed_guest", PlayContext())     # as Ansible loads it: its options known
    conn.set_options(direct={"remote_addr": "cc-docker", "runtime": "docker", "ssh_host": "192.0.2.60",
                             "ssh_user": user})
    conn._ssh = HostShell(answer)
    return conn


def test_a_command_runs_in_the_guest_through_the_hosts_runtime_never_through_ssh_become():
    conn = connection(answer=(0, b"ok\n", b""))
    assert conn.exec_command("python3 -c 'print(1)'", in_data=b"module") == (0, b"ok\n", b"")
    (argv, stdin, sudoable), = conn._ssh.calls
    assert argv == ["sudo", "-n", "docker", "exec", "-i", "cc-docker", "/bin/sh", "-c", "python3 -c 'print(1)'"]
    assert stdin == b"module" and sudoable is False
    root = connection(user="root")
    root.exec_command("true")
    assert root._ssh.calls[0][0][:3] == ["docker", "exec", "-i"]


def test_files_go_in_and_out_through_cat_in_the_guest(tmp_path):
    local = tmp_path / "in.bin"
    local.write_bytes(b"\x00\x01 bytes\n")
    conn = connection()
    conn.put_file(str(local), "/root/.ansible/tmp/x y/AnsiballZ.py")
    argv, stdin, _ = conn._ssh.calls[0]
    assert argv[-1] == "cat > '/root/.ansible/tmp/x y/AnsiballZ.py'" and stdin == b"\x00\x01 bytes\n"

    fetched = tmp_path / "out.bin"
    conn = connection(answer=(0, b"\xff content", b""))
    conn.fetch_file("/etc/hostname", str(fetched))
    assert conn._ssh.calls[0][0][-1] == "cat /etc/hostname" and fetched.read_bytes() == b"\xff content"


def test_a_failed_copy_names_the_guest_and_the_path(tmp_path):
    local = tmp_path / "in"
    local.write_bytes(b"x")
    conn = connection(answer=(1, b"", b"sh: 1: cannot create /nope/x: Directory nonexistent"))
    with pytest.raises(AnsibleConnectionFailure, match="could not write /nope/x in guest cc-docker: sh: 1: cannot create"):
        conn.put_file(str(local), "/nope/x")
    with pytest.raises(AnsibleConnectionFailure, match="could not read /nope/y in guest cc-docker"):
        conn.fetch_file("/nope/y", str(tmp_path / "y"))
    assert not (tmp_path / "y").exists()
