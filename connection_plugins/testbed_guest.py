# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Connection plugin testbed_guest: a container on a container host that Ansible reaches only by ssh."""

from __future__ import annotations

DOCUMENTATION = r"""
name: testbed_guest
short_description: Run tasks in a container on a remote container host, through ssh and the runtime's exec
description:
  - Reaches a guest container (Docker, Podman, LXC or LXD) that runs on another machine, the container host, the
    way an operator reaches that machine - OpenSSH through Ansible's own P(ansible.builtin.ssh#connection) plugin
    (its keys, known_hosts, ProxyCommand) - and then the runtime's own exec command on that host
    (C(docker exec -i), C(podman exec -i), C(lxc-attach), C(lxc exec)), through C(sudo -n) when the ssh user is not
    root.
  - The community connection plugins for these runtimes (C(community.docker.docker), C(containers.podman.podman),
    C(community.general.lxc), C(community.general.lxd)) run the runtime's client on the controller; this one runs it
    on the container host, so the controller needs neither the runtimes nor their sockets.
  - Files are copied into and out of the guest through the same channel (C(cat) in the guest); with pipelining
    (O(pipelining), for example C(ansible_pipelining=true)) modules are piped and nothing is copied.
  - Tasks run as the guest's root; become inside the guest is not supported.
author: contributors to the infrastructure testbed
extends_documentation_fragment:
  - connection_pipelining
options:
  remote_addr:
    description: The guest's name in its runtime (the container's name).
    type: str
    default: inventory_hostname
    vars:
      - name: inventory_hostname
      - name: ansible_host
  runtime:
    description: The runtime that runs the guest on the container host.
    type: str
    required: true
    choices: [docker, podman, lxc, lxd]
    vars:
      - name: testbed_guest_runtime
  ssh_host:
    description: Address of the container host.
    type: str
    required: true
    vars:
      - name: testbed_guest_ssh_host
  ssh_port:
    description: ssh port of the container host.
    type: int
    default: 22
    vars:
      - name: testbed_guest_ssh_port
  ssh_user:
    description: The user ssh logs in as on the container host; when it is not C(root), the runtime's command runs
      through C(sudo -n) (a rule without a password, as Ansible's become needs too).
    type: str
    required: true
    vars:
      - name: testbed_guest_ssh_user
  ssh_private_key_file:
    description: The key ssh uses for the container host.
    type: str
    vars:
      - name: testbed_guest_ssh_private_key_file
      - name: ansible_ssh_private_key_file
  ssh_common_args:
    description: Extra ssh arguments for the container host (C(-o UserKnownHostsFile=...), C(-o ProxyCommand=...)).
    type: str
    default: ""
    vars:
      - name: testbed_guest_ssh_common_args
      - name: ansible_ssh_common_args
  lxc_path:
    description: With C(runtime=lxc) - the container directory of LXC on the container host (C(lxc-attach -P)).
    type: str
    default: /var/lib/lxc
    vars:
      - name: testbed_guest_lxc_path
  timeout:
    description: Seconds ssh waits for the container host to answer.
    type: int
    default: 30
    vars:
      - name: testbed_guest_ssh_timeout
"""

EXAMPLES = r"""
# inventory: cc-docker, a container on the container host 192.0.2.60, reached as testbed (sudo) over ssh
# cc-docker:
#   ansible_connection: testbed_guest
#   ansible_host: cc-docker
#   testbed_guest_runtime: docker
#   testbed_guest_ssh_host: 192.0.2.60
#   testbed_guest_ssh_user: testbed
#   testbed_guest_ssh_common_args: -o StrictHostKeyChecking=yes
"""

import shlex  # noqa: E402 (after DOCUMENTATION)

from ansible.errors import AnsibleConnectionFailure  # noqa: E402
from ansible.module_utils.common.text.converters import to_bytes  # noqa: E402
from ansible.plugins.connection import ConnectionBase  # noqa: E402
from ansible.plugins.loader import connection_loader  # noqa: E402
from ansible.utils.display import Display  # noqa: E402

display = Display()

# The guest's PATH under lxc-attach --clear-env (the environment of the host's sudo is not the guest's).
GUEST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def guest_command(runtime, name, command, sudo, lxc_path="/var/lib/lxc"):
    """The shell command, run on the container host, that runs ``command`` (a /bin/sh command line) in the guest
    ``name`` of ``runtime`` with its standard input passed through."""
    if runtime in ("docker", "podman"):
        argv = [runtime, "exec", "-i", name]
    elif runtime == "lxc":
        argv = ["lxc-attach", "-P", lxc_path, "-n", name, "--clear-env", "-v", f"PATH={GUEST_PATH}", "--"]
    elif runtime == "lxd":
        argv = ["lxc", "exec", name, "--"]
    else:
        raise ValueError(f"runtime {runtime!r}: give docker, podman, lxc or lxd")
    argv += ["/bin/sh", "-c", command]
    return " ".join(shlex.quote(part) for part in (["sudo", "-n"] if sudo else []) + argv)


class Connection(ConnectionBase):
    """ssh to the container host, then the runtime's exec into the guest."""

    transport = "testbed_guest"
    has_pipelining = True
    has_tty = False

    def __init__(self, play_context, *args, **kwargs):
        super().__init__(play_context, *args, **kwargs)
        self._ssh = None

    def _host_connection(self):
        if self._ssh is None:
            self._ssh = connection_loader.get("ssh", self._play_context, shell=self._shell)
            self._ssh.set_options(direct={
                "host": self.get_option("ssh_host"),
                "port": self.get_option("ssh_port"),
                "remote_user": self.get_option("ssh_user"),
                "private_key_file": self.get_option("ssh_private_key_file"),
                "ssh_common_args": self.get_option("ssh_common_args"),
                "timeout": self.get_option("timeout"),
            })
        return self._ssh

    def _connect(self):
        if not self._connected:
            display.vvv(f"testbed_guest: {self.get_option('runtime')} guest {self.get_option('remote_addr')} through "
                        f"{self.get_option('ssh_user')}@{self.get_option('ssh_host')}:{self.get_option('ssh_port')}",
                        host=self.get_option("remote_addr"))
            self._host_connection()
            self._connected = True
        return self

    def _in_guest(self, command, in_data=None):
        self._connect()
        wrapped = guest_command(self.get_option("runtime"), self.get_option("remote_addr"), command,
                                self.get_option("ssh_user") != "root", self.get_option("lxc_path"))
        return self._ssh.exec_command(wrapped, in_data=in_data, sudoable=False)

    def exec_command(self, cmd, in_data=None, sudoable=True):
        super().exec_command(cmd, in_data=in_data, sudoable=sudoable)
        return self._in_guest(cmd, in_data)

    def put_file(self, in_path, out_path):
        super().put_file(in_path, out_path)
        with open(in_path, "rb") as handle:
            data = handle.read()
        rc, _stdout, stderr = self._in_guest(f"cat > {shlex.quote(out_path)}", in_data=data)
        if rc != 0:
            raise AnsibleConnectionFailure(f"testbed_guest: could not write {out_path} in guest "
                                           f"{self.get_option('remote_addr')}: {stderr.decode(errors='replace')}")

    def fetch_file(self, in_path, out_path):
        super().fetch_file(in_path, out_path)
        rc, stdout, stderr = self._in_guest(f"cat {shlex.quote(in_path)}")
        if rc != 0:
            raise AnsibleConnectionFailure(f"testbed_guest: could not read {in_path} in guest "
                                           f"{self.get_option('remote_addr')}: {stderr.decode(errors='replace')}")
        with open(to_bytes(out_path), "wb") as handle:
            handle.write(stdout)

    def reset(self):
        if self._ssh is not None:
            self._ssh.reset()

    def close(self):
        if self._ssh is not None:
            self._ssh.close()
        self._connected = False
