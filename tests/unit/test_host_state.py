"""A host's identity and tuning state (module_utils/testbed_host_state.py), the VM/container
verdict of tool_versions, and the store refusing a resume on another machine."""

import copy
import json
import os

import pytest
from ansible.module_utils.testbed_host_state import (
    LEGACY_GETS,
    app_specific,
    bracketed,
    cpu_tuning,
    decode_drvinfo,
    identity,
    identity_difference,
    legacy_offloads,
    parse_ethtool_features,
    parse_ethtool_info,
    tuning,
)
from ansible.module_utils.testbed_results import ResultError, open_run
from ansible.module_utils.testbed_results.store import store_point
from tool_versions import detect_virtualization, root_on_disk

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "host_state")


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


class SysFs:
    """The host read from a snapshot (files, links, directories) and ethtool's saved output."""

    def __init__(self, snapshot, ethtool=None):
        self.files = dict(snapshot["files"])
        self.links = dict(snapshot["links"])
        self.dirs = dict(snapshot["dirs"])
        self.ethtool = ethtool
        self.commands = []

    def read_file(self, path):
        return self.files.get(path)

    def listdir(self, path):
        return list(self.dirs.get(path, []))

    def readlink(self, path):
        return self.links.get(path)

    def find_binary(self, name):
        return "/usr/sbin/ethtool" if name == "ethtool" and self.ethtool else None

    def run_command(self, args):
        self.commands.append(args)
        return self.ethtool(args)


def saved_ethtool(args):
    if args[1:] == ["-k", "eth0"]:
        return 0, fixture("ethtool-6.1-k-virtio_net.txt"), ""
    if args[1:] == ["-i", "eth0"]:
        return 0, fixture("ethtool-6.1-i-virtio_net.txt"), ""
    return 71, "", f"Cannot get device feature settings: No such device {args[-1]}"


@pytest.fixture
def vm():
    return json.loads(fixture("sysfs-debian12-virtio.json"))


def test_ethtool_features_of_a_virtio_nic():
    features = parse_ethtool_features(fixture("ethtool-6.1-k-virtio_net.txt"))
    assert features["rx-checksumming"] == {"on": True, "fixed": True}
    assert features["tcp-segmentation-offload"] == {"on": True, "fixed": False}
    assert features["large-receive-offload"] == {"on": False, "fixed": True}
    assert features["rx-udp-gro-forwarding"] == {"on": False, "fixed": False}
    # the indented sub-features are not top-level features
    assert "tx-checksum-ipv4" not in features and "tx-tcp6-segmentation" not in features


def test_ethtool_info_of_a_virtio_nic():
    assert parse_ethtool_info(fixture("ethtool-6.1-i-virtio_net.txt")) == {
        "driver": "virtio_net", "version": "1.0.0", "firmware_version": None, "bus_info": "0000:00:03.0"}


@pytest.mark.parametrize("parse,text", [
    (parse_ethtool_features, "Settings for eth0:\n\tSpeed: Unknown!\n"),
    (parse_ethtool_info, "Features for eth0:\nrx-checksumming: on\n"),
])
def test_ethtool_parsers_name_what_they_were_given(parse, text):
    with pytest.raises(ValueError, match="not the output of ethtool"):
        parse(text)


def test_identity_of_a_vm_takes_the_device_nics_only_and_stores_hashes(vm):
    host = SysFs(vm)
    found = identity(host.read_file, host.listdir, host.readlink, "node1")
    assert found == {"hostname": "node1", "machine_id": app_specific("3d1219c7c4c5404aaa1f6d2a48adfda4"),
                     "product_uuid": None, "macs": [app_specific("02:fc:00:00:00:01")]}
    assert "3d1219c7c4c5404aaa1f6d2a48adfda4" not in json.dumps(found) and "02:fc" not in json.dumps(found)


def test_app_specific_hash():
    assert app_specific("3d1219c7c4c5404aaa1f6d2a48adfda4\n") == app_specific("3D1219C7C4C5404AAA1F6D2A48ADFDA4")
    assert len(app_specific("x")) == 32 and app_specific("x") != app_specific("y")
    assert app_specific("") is None and app_specific(None) is None


def test_tuning_of_a_vm_with_ethtool(vm):
    host = SysFs(vm, saved_ethtool)
    state = tuning(host.read_file, host.listdir, host.readlink, host.run_command, host.find_binary)
    assert state["cpu"] == {"governor": None, "frequency_driver": None, "boost": None, "smt_control": "notsupported",
                            "smt_active": False, "thp_enabled": "madvise", "thp_defrag": "madvise"}
    assert list(state["nics"]) == ["eth0"]
    nic = state["nics"]["eth0"]
    assert nic["driver"] == "virtio_net" and nic["vendor_id"] == "0x1af4" and nic["device_id"] == "0x0001"
    assert nic["speed_mbps"] is None  # -1: a virtio NIC reports no speed
    assert nic["mtu"] == 1400 and nic["firmware"] is None and nic["driver_version"] == "1.0.0"
    assert nic["offloads"]["tcp-segmentation-offload"] is True
    assert nic["offloads"]["large-receive-offload"] is False
    assert "problem" not in nic
    assert list(state["disks"]) == ["vda"]  # loop0 and zram0 are not disks
    assert state["disks"]["vda"] == {"model": None, "vendor": "0x1af4", "firmware": None, "rotational": True,
                                     "scheduler": "mq-deadline", "size_bytes": 536870912 * 512}


def test_tuning_without_ethtool_says_so(vm):
    host = SysFs(vm)
    nic = tuning(host.read_file, host.listdir, host.readlink, host.run_command, host.find_binary)["nics"]["eth0"]
    assert nic["offloads"] is None and "ethtool is not installed" in nic["problem"]
    assert host.commands == []


def saved_ioctl():
    """ethtool_ioctl's answer for a virtio_net NIC (kernel 6.18), read beside `ethtool -k` of the same NIC."""
    saved = json.loads(fixture("ethtool-ioctl-virtio_net.json"))
    return {"drvinfo": bytes.fromhex(saved["drvinfo_hex"]), "values": saved["values"]}


def test_ethtool_ioctls_give_what_ethtool_k_gives_for_the_same_nic():
    features = parse_ethtool_features(fixture("ethtool-6.1-k-virtio_net-ioctl-host.txt"))
    offloads = legacy_offloads(saved_ioctl()["values"])
    assert offloads == {name: features[name]["on"] for name in offloads}
    # every legacy get answered; the flags give the five names ethtool prints from them
    assert len(offloads) == len(LEGACY_GETS) + 5 and offloads["tcp-segmentation-offload"] is True
    # the driver info's strings end at their NUL (the kernel leaves bytes of an earlier string after it)
    assert decode_drvinfo(saved_ioctl()["drvinfo"]) == {"driver": "virtio_net", "version": "1.0.0",
                                                       "firmware_version": None, "bus_info": "0000:00:03.0"}
    with pytest.raises(ValueError, match="not an ethtool_drvinfo"):
        decode_drvinfo(b"\x03\0\0\0virtio")
    # a get the driver does not support is left out, not recorded as off
    assert "scatter-gather" not in legacy_offloads({"scatter-gather": None, "rx-checksumming": 1})


def test_tuning_without_ethtool_reads_the_kernels_ethtool_ioctls(vm):
    host = SysFs(vm)
    asked = []
    nic = tuning(host.read_file, host.listdir, host.readlink, host.run_command, host.find_binary,
                 lambda name: asked.append(name) or saved_ioctl())["nics"]["eth0"]
    assert asked == ["eth0"] and host.commands == []
    assert nic["offloads"]["generic-receive-offload"] is True and nic["offloads"]["large-receive-offload"] is False
    assert nic["driver_version"] == "1.0.0" and nic["firmware"] is None and "problem" not in nic
    assert nic["source"] == "ethtool ioctls (ethtool is not installed)"
    # a NIC that answers no ioctl says so
    nic = tuning(host.read_file, host.listdir, host.readlink, host.run_command, host.find_binary,
                 lambda name: {"drvinfo": None, "values": {}})["nics"]["eth0"]
    assert nic["offloads"] is None and "gave no offloads for eth0" in nic["problem"]


def test_tuning_when_ethtool_fails_keeps_its_message(vm):
    host = SysFs(vm, lambda args: (75, "", "Cannot get device feature settings: Operation not supported"))
    nic = tuning(host.read_file, host.listdir, host.readlink, host.run_command, host.find_binary)["nics"]["eth0"]
    assert nic["offloads"] is None and nic["problem"] == (
        "ethtool -k eth0 exited 75: Cannot get device feature settings: Operation not supported")


@pytest.mark.parametrize("files,expected", [
    ({"/sys/devices/system/cpu/cpufreq/boost": "1\n"}, True),
    ({"/sys/devices/system/cpu/cpufreq/boost": "0\n"}, False),
    ({"/sys/devices/system/cpu/intel_pstate/no_turbo": "1\n"}, False),
    ({"/sys/devices/system/cpu/intel_pstate/no_turbo": "0\n"}, True),
    ({}, None),
])
def test_boost_from_cpufreq_or_intel_pstate(files, expected):
    assert cpu_tuning(files.get)["boost"] is expected


def test_governor_and_smt_of_a_machine():
    files = {"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance\n",
             "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver": "intel_pstate\n",
             "/sys/devices/system/cpu/smt/control": "on\n", "/sys/devices/system/cpu/smt/active": "1\n"}
    state = cpu_tuning(files.get)
    assert (state["governor"], state["frequency_driver"], state["smt_control"], state["smt_active"]) == (
        "performance", "intel_pstate", "on", True)


def test_bracketed():
    assert bracketed("always defer defer+madvise [madvise] never\n") == "madvise"
    assert bracketed("none\n") == "none"
    assert bracketed(None) is None


BASE = {"hostname": "node1", "machine_id": "aaaa", "product_uuid": None, "macs": ["02:00:00:00:00:01"]}


@pytest.mark.parametrize("change,expected", [
    ({}, None),
    ({"hostname": "renamed"}, None),                      # the same machine renamed
    ({"machine_id": "bbbb"}, "host node1's machine-id is bbbb, but the run's stored points were measured on aaaa"),
    ({"machine_id": None}, None),                         # nothing to compare but the MACs, which match
    ({"machine_id": None, "macs": ["02:00:00:00:00:09"]}, "host node1's NICs share no MAC with the host"),
    ({"macs": []}, None),                                 # a container: no device NIC
    ({"macs": ["02:00:00:00:00:01", "02:00:00:00:00:02"]}, None),  # a NIC added
])
def test_identity_difference(change, expected):
    found = identity_difference("node1", BASE, dict(BASE, **change))
    assert found == expected if expected is None else found.startswith(expected)


def test_identity_difference_by_product_uuid():
    old, new = dict(BASE, machine_id=None, product_uuid="u-1"), dict(BASE, machine_id=None, product_uuid="u-2")
    assert "DMI product UUID is u-2" in identity_difference("node1", old, new)


def test_root_on_disk_tells_a_vm_from_a_container(vm):
    assert root_on_disk(vm["files"]["/proc/self/mountinfo"]) is True
    assert root_on_disk(fixture("mountinfo-docker-overlay.txt")) is False
    assert root_on_disk("") is False


def test_an_image_exported_from_docker_and_booted_as_a_vm_is_a_vm(vm):
    """The lab's VMs boot a rootfs exported from Docker: its /.dockerenv is not taken for Docker,
    neither from the file nor from systemd-detect-virt, which reads it too."""
    files = {"/proc/self/mountinfo": vm["files"]["/proc/self/mountinfo"], "/sys/class/dmi/id/sys_vendor": "QEMU\n"}
    no_tool = (lambda args: (1, "", ""), lambda name: None)
    assert detect_virtualization(*no_tool, files.get, {"/.dockerenv"}.__contains__) == ("qemu", "vm")
    detect_virt = (lambda args: (0, "docker\n", ""), lambda name: "/usr/bin/systemd-detect-virt")
    assert detect_virtualization(*detect_virt, files.get, {"/.dockerenv"}.__contains__) == ("qemu", "vm")
    # in a container (overlay root) both still say docker
    files["/proc/self/mountinfo"] = fixture("mountinfo-docker-overlay.txt")
    assert detect_virtualization(*no_tool, files.get, {"/.dockerenv"}.__contains__) == ("docker", "container")
    assert detect_virtualization(*detect_virt, files.get, set().__contains__) == ("docker", "container")


# --- the store: a resume on another machine ---------------------------------------------------

PLAN = [{"variant": "v", "parameters": {"n": n}, "repetition": 1} for n in (1, 2)]


def _env(machine_id):
    return {"hosts": {"node1": {"hostname": "node1", "identity": dict(BASE, machine_id=machine_id)}}}


def _store(run, index, machine_id, **extra):
    return store_point(run["run_dir"], PLAN[index], {"x_s": 1.0}, True, [], [], _env(machine_id),
                       "2026-12-02T10:00:00Z", "2026-12-02T10:00:01Z", **extra)


def test_a_resume_on_another_machine_is_refused_naming_it(tmp_path):
    run = open_run(str(tmp_path), "demo", copy.deepcopy(PLAN))
    _store(run, 0, "aaaa")
    with pytest.raises(ResultError) as refused:
        _store(run, 1, "bbbb")
    message = str(refused.value)
    assert "host node1's machine-id is bbbb, but the run's stored points were measured on aaaa" in message
    assert "-e testbed_run_id=new" in message
    assert sorted(os.listdir(run["run_dir"])).count("v__n-2__rep1.json") == 0
    with pytest.raises(ResultError, match="machine-id is bbbb"):  # a dry store (write=false) says so too
        _store(run, 1, "bbbb", write=False)
    _store(run, 1, "aaaa")  # the same machine: stored


def test_documents_without_an_identity_are_not_compared(tmp_path):
    run = open_run(str(tmp_path), "demo", copy.deepcopy(PLAN))
    store_point(run["run_dir"], PLAN[0], {"x_s": 1.0}, True, [], [], {"hosts": {"node1": {"hostname": "node1"}}},
                "2026-12-02T10:00:00Z", "2026-12-02T10:00:01Z")
    _store(run, 1, "bbbb")
