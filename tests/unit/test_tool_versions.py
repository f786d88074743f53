"""tool_versions: version patterns on real captured outputs, with a fake run_command."""

import os
import re

import pytest
import tool_versions
import yaml
from conftest import ROOT, fixture_path, read_fixture
from helpers import run_module
from tool_versions import (
    detect_virtualization,
    get_tool_version,
    parse_cpu_model,
    parse_meminfo_mb,
    parse_os_release,
    upstream_version,
)


def captured(name):
    """(rc, stdout, stderr) of a captured version command."""
    def part(ext):
        path = fixture_path("tool_versions", f"{name}.{ext}")
        if not os.path.exists(path):
            return ""
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    return int(part("rc").strip()), part("stdout"), part("stderr")


class FakeHost:
    """Binaries that 'exist' map to captured outputs; every command run is recorded."""

    def __init__(self, binaries, outputs, with_timeout=False):
        self.binaries = dict(binaries)
        if with_timeout:
            self.binaries["timeout"] = "/usr/bin/timeout"
        self.outputs = outputs
        self.commands = []

    def find_binary(self, name):
        return self.binaries.get(name)

    def run_command(self, args):
        self.commands.append(list(args))
        args = list(args)
        if args[0] == "/usr/bin/timeout":
            args = args[2:]
        key = os.path.basename(args[0])
        if key == "dpkg-query":
            key = "dpkg-query_" + args[-1]
        if key not in self.outputs:
            return 1, "", f"dpkg-query: no packages found matching {args[-1]}\n"
        return captured(self.outputs[key])


# tool -> (binary name, fixture name, expected version)
CASES = {
    "httperf": ("httperf", "httperf", "0.9.0"),
    "iperf3": ("iperf3", "iperf3", "3.12"),
    "iperf": ("iperf", "iperf", "2.1.8"),
    "fio": ("fio", "fio", "3.33"),
    "ab": ("ab", "ab", "2.3"),
    "sysbench": ("sysbench", "sysbench", "1.0.20"),
    "ping": ("ping", "ping", "20221126"),
    "docker": ("docker", "docker", "28.2.2"),
    "python3": ("python3", "python3", "3.11.2"),
    "iptables": ("iptables", "iptables", "1.8.9"),
    "qemu-system-x86_64": ("qemu-system-x86_64", "qemu-system-x86_64", "7.2.22"),
    "nginx": ("nginx", "nginx", "1.22.1"),
    "sockperf": ("sockperf", "sockperf", "3.7-no.git"),
    "haproxy": ("haproxy", "haproxy", "2.6.12-1+deb12u4"),
    "apache2": ("apache2", "apache2", "2.4.71"),
    "qperf": ("qperf", "qperf", "0.4.11"),
    "nft": ("nft", "nft", "1.0.6"),
    "mariadb": ("mariadb", "mariadb", "10.11.19"),
    "nuttcp": ("nuttcp", "nuttcp", "6.1.2"),
    "netperf": ("netperf", "netperf", "2.7.0"),
    "iozone": ("iozone", "iozone", "3.489"),
    "lxc": ("lxc-start", "lxc", "5.0.2"),
    "mpstat": ("mpstat", "mpstat", "12.6.1"),
    "stress-ng": ("stress-ng", "stress-ng", "0.15.06"),
    "hping3": ("hping3", "hping3", "3.0.0-alpha-2"),
    "tc": ("tc", "tc", "6.1.0"),
    "lftp": ("lftp", "lftp", "4.9.2"),
    "postal": ("postal", "postal", "0.75"),
    "xz": ("xz", "xz", "5.4.1"),
    "postfix": ("postconf", "postfix", "3.7.11"),
    "cp": ("cp", "cp", "9.1"),
}


@pytest.mark.parametrize("tool", sorted(CASES))
def test_known_tool_versions_from_captured_outputs(tool):
    binary, fixture, expected = CASES[tool]
    host = FakeHost({binary: f"/usr/bin/{binary}"}, {binary: fixture})
    info = get_tool_version(tool, host.run_command, host.find_binary)
    assert info["version"] == expected
    assert info["source"] == "command"
    assert info["path"] == f"/usr/bin/{binary}"
    assert host.commands == [[f"/usr/bin/{binary}"] + tool_versions.KNOWN_TOOLS[tool]["args"]]


def test_nginx_version_comes_from_stderr():
    rc, out, err = captured("nginx")
    assert out == "" and "nginx/1.22.1" in err


def test_debian_docker_client():
    host = FakeHost({"docker": "/usr/bin/docker"}, {"docker": "docker_debian"})
    assert get_tool_version("docker", host.run_command, host.find_binary)["version"] == "20.10.24+dfsg1"


def test_httperf_probe_only_touches_loopback():
    args = tool_versions.KNOWN_TOOLS["httperf"]["args"]
    assert "--server=127.0.0.1" in args and "--num-conns=1" in args and "--timeout=1" in args


def test_postal_runs_without_arguments():
    # postal has no version option; with no arguments it prints its usage (and version), exit 1
    assert tool_versions.KNOWN_TOOLS["postal"]["args"] == []
    rc, out, err = captured("postal")
    assert rc == 1 and out.startswith("Usage: postal")


def test_hpcc_is_never_run_and_read_from_the_package():
    host = FakeHost({"hpcc": "/usr/bin/hpcc", "dpkg-query": "/usr/bin/dpkg-query"},
                    {"dpkg-query_hpcc": "dpkg-query_hpcc"}, with_timeout=True)
    info = get_tool_version("hpcc", host.run_command, host.find_binary)
    assert host.commands == [["/usr/bin/dpkg-query", "-W", "-f=${Version}", "hpcc"]]
    assert info == {"version": "1.5.0", "path": "/usr/bin/hpcc", "source": "package",
                    "command": ["/usr/bin/dpkg-query", "-W", "-f=${Version}", "hpcc"], "output": "1.5.0-3",
                    "problem": None}


def test_vsftpd_is_never_run_and_read_from_the_package():
    host = FakeHost({"vsftpd": "/usr/sbin/vsftpd", "dpkg-query": "/usr/bin/dpkg-query"},
                    {"dpkg-query_vsftpd": "dpkg-query_vsftpd"}, with_timeout=True)
    info = get_tool_version("vsftpd", host.run_command, host.find_binary)
    assert host.commands == [["/usr/bin/dpkg-query", "-W", "-f=${Version}", "vsftpd"]]
    assert (info["version"], info["source"], info["output"]) == ("3.0.3", "package", "3.0.3-13+b2")


def test_hpcc_without_its_package_is_null_with_a_reason():
    host = FakeHost({"hpcc": "/usr/local/bin/hpcc", "dpkg-query": "/usr/bin/dpkg-query"}, {})
    info = get_tool_version("hpcc", host.run_command, host.find_binary)
    assert info["version"] is None and info["source"] is None
    assert info["problem"] == ("hpcc has no version option and is not run; no installed package (hpcc) "
                               "found by dpkg-query or rpm")
    assert all(os.path.basename(command[0]) == "dpkg-query" for command in host.commands)


def test_failing_version_command_falls_back_to_the_package():
    host = FakeHost({"ipvsadm": "/usr/sbin/ipvsadm", "dpkg-query": "/usr/bin/dpkg-query"},
                    {"ipvsadm": "ipvsadm", "dpkg-query_ipvsadm": "dpkg-query_ipvsadm"})
    info = get_tool_version("ipvsadm", host.run_command, host.find_binary)
    assert info["version"] == "1.31"
    assert info["source"] == "package"
    assert info["output"] == "1:1.31-1+b1"
    assert info["problem"].startswith("ipvsadm --version exited 2: modprobe: FATAL: Module ip_vs not found")
    assert host.commands[1] == ["/usr/bin/dpkg-query", "-W", "-f=${Version}", "ipvsadm"]


def test_unreadable_version_without_package_is_null():
    host = FakeHost({"ipvsadm": "/usr/sbin/ipvsadm", "dpkg-query": "/usr/bin/dpkg-query"}, {"ipvsadm": "ipvsadm"})
    info = get_tool_version("ipvsadm", host.run_command, host.find_binary)
    assert info["version"] is None and info["source"] is None
    assert "exited 2" in info["problem"]


def test_missing_tool_is_null_and_runs_nothing():
    host = FakeHost({}, {})
    info = get_tool_version("haproxy", host.run_command, host.find_binary)
    assert info == {"version": None, "path": None, "source": None, "command": None, "output": None,
                    "problem": "haproxy is not installed (not found in PATH or sbin)"}
    assert host.commands == []


def test_unknown_tool_uses_dash_dash_version_and_a_generic_pattern():
    host = FakeHost({"mytool": "/opt/bin/mytool"}, {"mytool": "docker_debian"}, with_timeout=True)
    info = get_tool_version("mytool", host.run_command, host.find_binary, timeout=7)
    assert host.commands == [["/usr/bin/timeout", "7", "/opt/bin/mytool", "--version"]]
    assert info["version"] == "20.10.24+dfsg1"


def test_second_binary_name_is_tried():
    host = FakeHost({"lxc-info": "/usr/bin/lxc-info"}, {"lxc-info": "lxc"})
    assert get_tool_version("lxc", host.run_command, host.find_binary)["version"] == "5.0.2"


@pytest.mark.parametrize("package,upstream", [
    ("1:1.31-1+b1", "1.31"),
    ("0.9.0-9+b2", "0.9.0"),
    ("2.6.12-1+deb12u4", "2.6.12"),
    ("1:7.2+dfsg-7+deb12u18+b3", "7.2+dfsg"),
    ("3.33", "3.33"),
    ("", None),
])
def test_upstream_version(package, upstream):
    assert upstream_version(package) == upstream


def test_environment_parsers_on_captured_files():
    distro = parse_os_release(read_fixture("tool_versions", "os-release"))
    assert distro == {"id": "debian", "version_id": "12", "pretty_name": "Debian GNU/Linux 12 (bookworm)",
                      "version_codename": "bookworm"}
    assert parse_meminfo_mb(read_fixture("tool_versions", "meminfo")) == 24684096 // 1024
    assert parse_cpu_model(read_fixture("tool_versions", "cpuinfo")) == "Intel(R) Xeon(R) Processor @ 2.50GHz"
    assert parse_meminfo_mb("") is None and parse_cpu_model("") is None


def test_virtualization_from_systemd_detect_virt():
    host = FakeHost({"systemd-detect-virt": "/usr/bin/systemd-detect-virt"},
                    {"systemd-detect-virt": "systemd-detect-virt"})
    assert detect_virtualization(host.run_command, host.find_binary, lambda p: None, lambda p: False) == (
        "docker", "container")


@pytest.mark.parametrize("files,exists,expected", [
    ({}, {"/.dockerenv"}, ("docker", "container")),
    ({"/proc/1/environ": "PATH=/bin\x00container=lxc\x00"}, set(), ("lxc", "container")),
    ({"/proc/1/cgroup": "0::/\n"}, {"/run/.containerenv"}, ("podman", "container")),
    ({"/sys/class/dmi/id/sys_vendor": "QEMU\n"}, set(), ("qemu", "vm")),
    ({"/proc/cpuinfo": "flags\t\t: fpu vme hypervisor lahf_lm\n"}, set(), ("vm-other", "vm")),
    ({"/proc/cpuinfo": "flags\t\t: fpu vme lahf_lm\n"}, set(), ("none", "none")),
])
def test_virtualization_heuristics_without_systemd(files, exists, expected):
    host = FakeHost({}, {})
    assert detect_virtualization(host.run_command, host.find_binary, files.get, exists.__contains__) == expected


def test_module_on_this_host():
    failed, out = run_module(tool_versions, {"tools": ["python3", "fio", "no-such-tool-xyz"]})
    assert not failed, out
    versions = out["ansible_facts"]["testbed_tool_versions"]
    assert re.match(r"^3\.\d+\.\d+$", versions["python3"])
    assert versions["fio"] == "3.33"
    assert versions["no-such-tool-xyz"] is None
    env = out["ansible_facts"]["testbed_environment"]
    assert env["kernel"] == os.uname().release and env["arch"] == os.uname().machine
    assert env["cpus"] == os.cpu_count() and env["memory_mb"] > 0
    assert env["distro"]["id"] == "debian"
    assert env["tools"] == versions
    assert out["changed"] is False

    failed, out = run_module(tool_versions, {"tools": ["fio"], "required": ["no-such-tool-xyz"]})
    assert failed and "required tool(s) not installed" in out["msg"] and "no-such-tool-xyz" in out["msg"]
    failed, out = run_module(tool_versions, {"tools": ["rm -rf"]})
    assert failed and out["msg"] == "tool_versions: tool name 'rm -rf' is not a plain command name"


# --- roles/bench_tools: its tool sets against the probes and the experiment roles -----------

def role_defaults(role):
    with open(os.path.join(ROOT, "roles", role, "defaults", "main.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


BENCH_SETS = role_defaults("bench_tools")["bench_tools_package_sets"]


@pytest.mark.parametrize("name", sorted(BENCH_SETS))
def test_every_bench_tools_tool_has_its_own_probe(name):
    tools = BENCH_SETS[name]["tools"]
    assert tools and BENCH_SETS[name]["packages"]
    assert [tool for tool in tools if tool not in tool_versions.KNOWN_TOOLS] == []


@pytest.mark.parametrize("name,role,variable", [
    ("lvs_client", "lvs_client", "lvs_client_packages"),
    ("lvs_director", "lvs_director", "lvs_director_packages"),
    ("lvs_real_server", "lvs_real_server", "lvs_real_server_packages_apache"),
])
def test_bench_tools_sets_hold_the_experiment_roles_packages(name, role, variable):
    assert set(role_defaults(role)[variable]) <= set(BENCH_SETS[name]["packages"])


def test_bench_tools_nfv_set_is_the_nfv_images_tools():
    image = set(role_defaults("nfv_image")["nfv_image_packages"])
    assert set(BENCH_SETS["nfv"]["packages"]) <= image
    assert {"iperf3", "sockperf", "haproxy"} <= set(BENCH_SETS["nfv"]["tools"])


def test_bench_tools_default_sets_exist():
    assert set(role_defaults("bench_tools")["bench_tools_sets"]) <= set(BENCH_SETS)
