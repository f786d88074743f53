#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Versions of the benchmark tools and the host environment, for the result store."""

DOCUMENTATION = r"""
---
module: tool_versions
short_description: Record tool versions and the host environment (kernel, distro, CPUs, memory, virtualization)
description:
  - Runs each tool's version command (from a table of known tools, C(--version) for others)
    with C(LC_ALL=C) and extracts the version with an anchored pattern.
  - A missing tool gives C(null), not a failure, unless it is listed in I(required).
    A tool that is installed but whose version command fails (for example C(ipvsadm)
    without the C(ip_vs) kernel module) falls back to the package manager's version
    (dpkg-query or rpm), upstream part only.
  - Sets C(ansible_facts.testbed_tool_versions) (tool name to version or null) and
    C(ansible_facts.testbed_environment) (hostname, kernel, distro, arch, CPUs, memory,
    virtualization, Python and the tools), the per-host part of every result document.
  - Also records the host's identity (machine-id, DMI product UUID, the MACs of the NICs on a
    device, each as a keyed hash, never as read), which the result store compares when a run is
    resumed, and its tuning state - CPU governor, boost, SMT, transparent huge pages; per NIC the
    driver, ids, speed, MTU, firmware and offloads (C(ethtool -i) and C(-k); the kernel's ethtool
    ioctls where ethtool is not installed); per disk the model, firmware, rotational flag and I/O scheduler.
  - Read-only; supports check mode.
version_added: "1.0.0"
author: Testbed contributors
options:
  tools:
    description:
      - Tool names. Known ones have their own command and pattern - httperf, iperf3, iperf,
        fio, ab, sysbench, ipvsadm, haproxy, apache2, nginx, docker, lxc, lxd, podman,
        qemu-system-x86_64, ceph, zfs, mariadb, mysql, ping, sockperf, qperf, nuttcp, netperf, iozone,
        stress-ng, hping3, python3, iptables, nft, tc, ip, mpstat, keepalived, lftp, postal, xz, hpcc, ssh,
        vsftpd, postfix, cp (GNU coreutils).
      - Any other name is run as C(<name> --version) and the first version-looking token is taken.
    type: list
    elements: str
    default: []
  required:
    description: Tools that must be installed; the task fails naming the missing ones.
    type: list
    elements: str
    default: []
  timeout:
    description: Seconds each version command may take (through C(timeout) when it is installed).
    type: int
    default: 10
notes:
  - C(httperf) has no print-and-exit version option; C(httperf -V) prints its version and then
    runs one connection to 127.0.0.1 port 9 (discard) with a one second timeout.
  - C(postal) has no version option; it is run without arguments (it prints its usage, with its version, and exits).
  - C(hpcc) is never run (it starts the benchmark whatever its arguments); its version comes from the
    package manager only (C(source=package)).
  - C(vsftpd) is not run either (C(vsftpd -v) writes to its standard input descriptor); its version comes from
    the package manager only. C(postfix) is read with C(postconf -d mail_version).
  - C(docker) reports the client version (C(docker --version)); the daemon may differ.
seealso:
  - module: result_store
"""

EXAMPLES = r"""
- name: Record the environment of every testbed host
  tool_versions:
    tools: [httperf, ipvsadm, iperf3, python3]
    required: [httperf]

- name: Use it in a result document
  result_store:
    run_dir: "{{ run.run_dir }}"
    point: "{{ point }}"
    metrics: "{{ result.metrics }}"
    environment:
      hosts: "{{ {inventory_hostname: testbed_environment} }}"
    started_at: "{{ started }}"
    finished_at: "{{ now(utc=true, fmt='%Y-%m-%dT%H:%M:%S.%fZ') }}"
  delegate_to: localhost
"""

RETURN = r"""
ansible_facts:
  description: Facts set on the host.
  returned: always
  type: complex
  contains:
    testbed_tool_versions:
      description: Tool name -> version string, or null when missing or unreadable.
      type: dict
      sample: {httperf: 0.9.0, iperf3: "3.12", haproxy: null}
    testbed_environment:
      description: The host's environment for the result documents.
      type: dict
      sample:
        hostname: director
        kernel: 6.1.0-26-amd64
        kernel_version: "#1 SMP PREEMPT_DYNAMIC Debian 6.1.112-1 (2024-09-30)"
        arch: x86_64
        distro: {id: debian, version_id: "12", pretty_name: Debian GNU/Linux 12 (bookworm), version_codename: bookworm}
        cpus: 2
        cpus_usable: 2
        cpu_model: Intel(R) Xeon(R) CPU
        memory_mb: 24032
        virtualization: docker
        virtualization_type: container
        python_version: 3.11.2
        tools: {httperf: 0.9.0}
        identity: {hostname: director, machine_id: 800bb90fcc2d3e5a0454b4d746826586, product_uuid: null,
                   macs: [97c4322c6e978cd75454096e5931c93b]}
        tuning:
          cpu: {governor: null, frequency_driver: null, boost: null, smt_control: notsupported, smt_active: false,
                thp_enabled: madvise, thp_defrag: madvise}
          nics:
            eth0: {driver: virtio_net, vendor_id: "0x1af4", device_id: "0x0001", speed_mbps: null, duplex: null,
                   mtu: 1500, firmware: null, driver_version: 1.0.0,
                   offloads: {rx-checksumming: true, tcp-segmentation-offload: true, generic-receive-offload: true}}
          disks:
            vda: {model: null, vendor: "0x1af4", firmware: null, rotational: true, scheduler: mq-deadline,
                  size_bytes: 268435456000}
tools:
  description: How each version was found.
  returned: always
  type: dict
  sample:
    ipvsadm: {version: "1.31", path: /usr/sbin/ipvsadm, source: package, command: [dpkg-query, -W, "-f=${Version}", ipvsadm],
              output: "1:1.31-1+b1", problem: "ipvsadm --version exited 2: Can't initialize ipvs: Protocol not available"}
warnings:
  description: Tools whose version could not be read.
  returned: when there are any
  type: list
  elements: str
"""

import os  # noqa: E402 (Ansible modules import after their documentation)
import platform  # noqa: E402
import re  # noqa: E402
import socket  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.testbed_host_state import ethtool_ioctl, identity, tuning  # noqa: E402

# tool -> binaries to look for, arguments, patterns (first group = version), packages.
KNOWN_TOOLS = {
    "httperf": {"args": ["-V", "--server=127.0.0.1", "--port=9", "--num-conns=1", "--timeout=1"],
                "patterns": [r"httperf-(\d[\w.]*) compiled"]},
    "iperf3": {"args": ["--version"], "patterns": [r"^iperf (\d[\w.+~-]*)"]},
    "iperf": {"args": ["--version"], "patterns": [r"^iperf version (\d[\w.+~-]*)"]},
    "fio": {"args": ["--version"], "patterns": [r"^fio-(\d[\w.+~-]*)"]},
    "cp": {"args": ["--version"], "patterns": [r"^cp \(GNU coreutils\) (\d[\w.+~-]*)"], "packages": ["coreutils"]},
    "ab": {"args": ["-V"], "patterns": [r"^This is ApacheBench, Version (\d[\w.]*)"], "packages": ["apache2-utils"]},
    "sysbench": {"args": ["--version"], "patterns": [r"^sysbench (\d[\w.+~-]*)"]},
    "ipvsadm": {"args": ["--version"], "patterns": [r"^ipvsadm v(\d[\w.]*)"]},
    "haproxy": {"args": ["-v"], "patterns": [r"^HA-?Proxy version (\d[\w.+~-]*)"]},
    "apache2": {"bins": ["apache2", "httpd"], "args": ["-v"], "patterns": [r"^Server version: Apache/(\d[\w.]*)"],
                "packages": ["apache2-bin", "httpd"]},
    "nginx": {"args": ["-v"], "patterns": [r"nginx version: [\w-]+/(\d[\w.]*)"], "packages": ["nginx", "nginx-core"]},
    "docker": {"args": ["--version"], "patterns": [r"^Docker version (\d[\w.+~-]*)"],
               "packages": ["docker.io", "docker-ce-cli"]},
    "lxc": {"bins": ["lxc-start", "lxc-info"], "args": ["--version"], "patterns": [r"^(\d[\w.+~-]*)\s*$"]},
    "lxd": {"args": ["--version"], "patterns": [r"^(\d[\w.+~-]*)\s*$"]},
    "podman": {"args": ["--version"], "patterns": [r"^podman version (\d[\w.+~-]*)"]},
    "qemu-system-x86_64": {"args": ["--version"], "patterns": [r"^QEMU emulator version (\d[\w.+~-]*)"],
                           "packages": ["qemu-system-x86"]},
    "ceph": {"args": ["--version"], "patterns": [r"^ceph version (\d[\w.+~-]*)"], "packages": ["ceph-common"]},
    "zfs": {"args": ["version"], "patterns": [r"^zfs-(\d[\w.]*)"], "packages": ["zfsutils-linux", "zfs-fuse"]},
    "mariadb": {"bins": ["mariadb", "mysql"], "args": ["--version"],
                "patterns": [r"Distrib (\d[\w.]*?)-MariaDB", r"from (\d[\w.]*?)-MariaDB", r"\bVer (\d[\w.]*)"],
                "packages": ["mariadb-client-core", "mariadb-client"]},
    "mariadbd": {"bins": ["mariadbd", "mysqld"], "args": ["--version"],
                 "patterns": [r"\bVer (\d[\w.]*?)-MariaDB", r"\bVer (\d[\w.]*)"], "packages": ["mariadb-server-core"]},
    "mysql": {"args": ["--version"], "patterns": [r"Distrib (\d[\w.]*?)-MariaDB", r"\bVer (\d[\w.]*)"]},
    "ping": {"args": ["-V"], "patterns": [r"iputils[- ]?s?(\d[\w.]*)"], "packages": ["iputils-ping"]},
    "sockperf": {"args": ["--version"], "patterns": [r"^sockperf, version (\d[\w.+~-]*)"]},
    "qperf": {"args": ["--version"], "patterns": [r"^qperf (\d[\w.+~-]*)"]},
    "nuttcp": {"args": ["-V"], "patterns": [r"^nuttcp-v?(\d[\w.]*)"]},
    "netperf": {"args": ["-V"], "patterns": [r"^Netperf version (\d[\w.]*)"]},
    "iozone": {"args": ["-v"], "patterns": [r"Version \$Revision: (\d[\w.]*) \$"], "packages": ["iozone3"]},
    "stress-ng": {"args": ["--version"], "patterns": [r"^stress-ng, version (\d[\w.+~-]*)"]},
    "hping3": {"args": ["--version"], "patterns": [r"^hping3 version (\d[\w.+~-]*)"]},
    "python3": {"args": ["--version"], "patterns": [r"^Python (\d[\w.+~-]*)"]},
    "iptables": {"args": ["--version"], "patterns": [r"^iptables v(\d[\w.]*)"]},
    "nft": {"args": ["--version"], "patterns": [r"^nftables v(\d[\w.]*)"], "packages": ["nftables"]},
    "tc": {"args": ["-V"], "patterns": [r"iproute2-(?:ss)?(\d[\w.]*)"], "packages": ["iproute2"]},
    "ip": {"args": ["-V"], "patterns": [r"iproute2-(?:ss)?(\d[\w.]*)"], "packages": ["iproute2"]},
    "mpstat": {"args": ["-V"], "patterns": [r"^sysstat version (\d[\w.]*)"], "packages": ["sysstat"]},
    "keepalived": {"args": ["--version"], "patterns": [r"^Keepalived v(\d[\w.]*)"]},
    "lftp": {"args": ["--version"], "patterns": [r"^LFTP \| Version (\d[\w.]*)"]},
    # postal has no version option: without arguments it prints its usage and "Postal Version:".
    "postal": {"args": [], "patterns": [r"^Postal Version: (\d[\w.]*)"]},
    "xz": {"args": ["--version"], "patterns": [r"^xz \(XZ Utils\) (\d[\w.]*)"], "packages": ["xz-utils"]},
    # hpcc has no version option and starts the benchmark (writing hpccoutf.txt) whatever its
    # arguments: its version is read from the package manager only.
    "hpcc": {"package_only": True, "packages": ["hpcc"]},
    "ssh": {"args": ["-V"], "patterns": [r"^OpenSSH_(\d[\w.]*)"], "packages": ["openssh-client"]},
    # vsftpd -v writes its version to file descriptor 0 (stdin), not stdout: package manager only.
    "vsftpd": {"package_only": True, "packages": ["vsftpd"]},
    # Postfix has no version option; postconf prints the built-in mail_version.
    "postfix": {"bins": ["postconf"], "args": ["-d", "mail_version"], "patterns": [r"^mail_version = (\d[\w.]*)"]},
}
GENERIC_PATTERN = r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)*(?:[-+~][\w.+~]+)?)"

CONTAINER_KINDS = ("docker", "lxc", "lxc-libvirt", "podman", "openvz", "systemd-nspawn", "rkt", "wsl",
                   "proot", "pouch", "container-other")


def _first_lines(text, count=3):
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return "\n".join(lines[:count])


def parse_version(tool, output, patterns=None):
    """The version in a version command's output (stdout + stderr), or None."""
    spec = KNOWN_TOOLS.get(tool, {})
    for pattern in patterns or spec.get("patterns") or [GENERIC_PATTERN]:
        match = re.search(pattern, output or "", re.MULTILINE)
        if match:
            return match.group(1)
    return None


def upstream_version(package_version):
    """Upstream part of a Debian/RPM package version: '1:1.31-1+b1' -> '1.31'."""
    if not package_version:
        return None
    version = package_version.strip()
    version = re.sub(r"^\d+:", "", version)
    if "-" in version:
        version = version.rsplit("-", 1)[0]
    return version or None


def package_version(packages, run_command, find_binary):
    """(version, command, output) from dpkg-query or rpm for the first installed package."""
    dpkg = find_binary("dpkg-query")
    rpm = find_binary("rpm")
    for package in packages:
        if dpkg:
            command = [dpkg, "-W", "-f=${Version}", package]
        elif rpm:
            command = [rpm, "-q", "--qf", "%{VERSION}-%{RELEASE}", package]
        else:
            return None, None, None
        rc, out, err = run_command(command)
        if rc == 0 and out.strip() and "not installed" not in out:
            return upstream_version(out.strip()), command, out.strip()
    return None, None, None


def get_tool_version(tool, run_command, find_binary, timeout=10):
    """How to find one tool's version, as a dict:
    ``{version, path, source (command|package|None), command, output, problem}``.

    ``run_command(args) -> (rc, stdout, stderr)`` and ``find_binary(name) -> path or None``
    are passed in (AnsibleModule's in the module, fakes in the tests).
    """
    spec = KNOWN_TOOLS.get(tool, {})
    path = None
    for name in spec.get("bins") or [tool]:
        path = find_binary(name)
        if path:
            break
    info = {"version": None, "path": path, "source": None, "command": None, "output": None, "problem": None}
    if not path:
        info["problem"] = f"{tool} is not installed (not found in PATH or sbin)"
        return info
    packages = spec.get("packages") or [tool]
    if spec.get("package_only"):
        version, pkg_command, pkg_output = package_version(packages, run_command, find_binary)
        if version:
            info.update(version=version, source="package", command=pkg_command, output=pkg_output)
        else:
            info["problem"] = (f"{tool} has no version option and is not run; no installed package "
                               f"({', '.join(packages)}) found by dpkg-query or rpm")
        return info
    command = [path] + list(spec["args"] if "args" in spec else ["--version"])
    wrapper = find_binary("timeout")
    full = ([wrapper, str(timeout)] + command) if wrapper else command
    rc, out, err = run_command(full)
    output = "\n".join(part for part in (out, err) if part)
    info["command"] = command
    info["output"] = _first_lines(output)
    version = parse_version(tool, output)
    if version:
        info["version"] = version
        info["source"] = "command"
        return info
    what = f"exited {rc}" if rc else "printed no version"
    info["problem"] = f"{os.path.basename(path)} {' '.join(command[1:])} {what}: {_first_lines(output, 2) or '(no output)'}"
    version, pkg_command, pkg_output = package_version(packages, run_command, find_binary)
    if version:
        info.update(version=version, source="package", command=pkg_command, output=pkg_output)
    return info


# ---------------------------------------------------------------------------
# Host environment
# ---------------------------------------------------------------------------

def parse_os_release(text):
    values = {}
    for line in (text or "").splitlines():
        match = re.match(r"^([A-Z_]+)=(.*)$", line.strip())
        if match:
            value = match.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            values[match.group(1)] = value
    return {"id": values.get("ID"), "version_id": values.get("VERSION_ID"),
            "pretty_name": values.get("PRETTY_NAME"), "version_codename": values.get("VERSION_CODENAME")}


def parse_meminfo_mb(text):
    match = re.search(r"^MemTotal:\s+(\d+)\s+kB", text or "", re.MULTILINE)
    return int(match.group(1)) // 1024 if match else None


def parse_cpu_model(text):
    match = re.search(r"^model name\s*:\s*(.+?)\s*$", text or "", re.MULTILINE)
    return match.group(1) if match else None


def root_on_disk(mountinfo):
    """Whether / is a disk's filesystem (a VM's or a machine's root), not a container's overlay."""
    source = None
    for line in (mountinfo or "").splitlines():
        fields = line.split(" - ")
        if len(fields) == 2 and len(fields[0].split()) > 4 and fields[0].split()[4] == "/":
            source = (fields[1].split() + ["", ""])[1]
    return bool(source and re.match(r"^/dev/(root$|[sv]d|hd|xvd|nvme|mmcblk)", source))


def detect_virtualization(run_command, find_binary, read_file, exists):
    """(kind, type): systemd-detect-virt when present, else file heuristics. A /.dockerenv on a
    root filesystem that sits on a disk is not taken for Docker: an image exported from Docker and
    booted as a VM carries it (systemd 252 reads it too)."""
    on_disk = root_on_disk(read_file("/proc/self/mountinfo"))
    tool = find_binary("systemd-detect-virt")
    if tool:
        rc, out, err = run_command([tool])
        kind = (out or "").strip().splitlines()[0].strip() if (out or "").strip() else ""
        if kind and re.match(r"^[\w-]+$", kind) and not (kind == "docker" and on_disk):
            return kind, _virt_type(kind)
    if exists("/.dockerenv") and not on_disk:
        return "docker", "container"
    if exists("/run/.containerenv"):
        return "podman", "container"
    environ = read_file("/proc/1/environ") or ""
    match = re.search(r"(?:^|\x00)container=([\w-]+)", environ)
    if match:
        return match.group(1), "container"
    cgroup = read_file("/proc/1/cgroup") or ""
    for kind in ("docker", "lxc", "libpod"):
        if f"/{kind}" in cgroup:
            return ("podman" if kind == "libpod" else kind), "container"
    vendor = (read_file("/sys/class/dmi/id/sys_vendor") or "").strip().lower()
    product = (read_file("/sys/class/dmi/id/product_name") or "").strip().lower()
    for needle, kind in (("qemu", "qemu"), ("kvm", "kvm"), ("vmware", "vmware"), ("virtualbox", "oracle"),
                         ("microsoft", "microsoft"), ("xen", "xen")):
        if needle in vendor or needle in product:
            return kind, "vm"
    if re.search(r"^flags\s*:.*\bhypervisor\b", read_file("/proc/cpuinfo") or "", re.MULTILINE):
        return "vm-other", "vm"
    return "none", "none"


def _virt_type(kind):
    if kind == "none":
        return "none"
    return "container" if kind in CONTAINER_KINDS else "vm"


def _read_file(path):
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def _readlink(path):
    try:
        return os.readlink(path)
    except OSError:
        return None


def gather_environment(run_command, find_binary, read_file=_read_file, exists=os.path.exists,
                       listdir=_listdir, readlink=_readlink):
    uname = os.uname()
    hostname = socket.gethostname()
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = None
    virtualization, virt_type = detect_virtualization(run_command, find_binary, read_file, exists)
    return {
        "hostname": hostname,
        "kernel": uname.release,
        "kernel_version": uname.version,
        "arch": uname.machine,
        "distro": parse_os_release(read_file("/etc/os-release")),
        "cpus": os.cpu_count(),
        "cpus_usable": usable,
        "cpu_model": parse_cpu_model(read_file("/proc/cpuinfo")),
        "memory_mb": parse_meminfo_mb(read_file("/proc/meminfo")),
        "virtualization": virtualization,
        "virtualization_type": virt_type,
        "python_version": platform.python_version(),
        "identity": identity(read_file, listdir, readlink, hostname),
        "tuning": tuning(read_file, listdir, readlink, run_command, find_binary, ethtool_ioctl),
    }


def main():
    module = AnsibleModule(
        argument_spec=dict(
            tools=dict(type="list", elements="str", default=[]),
            required=dict(type="list", elements="str", default=[]),
            timeout=dict(type="int", default=10),
        ),
        supports_check_mode=True,
    )
    module.run_command_environ_update = {"LANG": "C", "LC_ALL": "C", "LC_MESSAGES": "C"}
    params = module.params
    if params["timeout"] < 1:
        module.fail_json(msg=f"tool_versions: timeout must be at least 1 second, got {params['timeout']}")
    names = []
    for name in list(params["tools"]) + list(params["required"]):
        if not re.match(r"^[A-Za-z0-9][\w.+-]*$", name):
            module.fail_json(msg=f"tool_versions: tool name {name!r} is not a plain command name")
        if name not in names:
            names.append(name)

    def run_command(args):
        return module.run_command(args, check_rc=False)

    def find_binary(name):
        return module.get_bin_path(name, required=False, opt_dirs=["/usr/sbin", "/sbin", "/usr/local/sbin"])

    details = {}
    warnings = []
    for name in names:
        details[name] = get_tool_version(name, run_command, find_binary, timeout=params["timeout"])
        info = details[name]
        if info["path"] and info["version"] is None:
            warnings.append(f"version of {name} unreadable: {info['problem']}")
    missing = [name for name in params["required"] if not details[name]["path"]]
    if missing:
        module.fail_json(
            msg="tool_versions: required tool(s) not installed on {}: {} (install them, or remove them from "
                "required)".format(socket.gethostname(), ", ".join(missing)),
            tools=details)
    versions = {name: details[name]["version"] for name in names}
    environment = gather_environment(run_command, find_binary)
    environment["tools"] = versions
    result = dict(changed=False, tools=details,
                  ansible_facts={"testbed_tool_versions": versions, "testbed_environment": environment})
    if warnings:
        result["warnings"] = warnings
    module.exit_json(**result)


if __name__ == "__main__":
    main()
