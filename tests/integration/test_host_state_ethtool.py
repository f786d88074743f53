"""The kernel's ethtool ioctls (testbed_host_state.ethtool_ioctl, what tool_versions reads where ethtool
is not installed: the lab's images) give what ethtool -i and -k give, on loopback and on each NIC of this
host that sits on a device (what tool_versions records; the bridges, taps and veths of lab runs going on
beside the test come and go)."""

import os
import shutil
import subprocess

import pytest
from ansible.module_utils.testbed_host_state import (
    decode_drvinfo,
    ethtool_ioctl,
    legacy_offloads,
    parse_ethtool_features,
    parse_ethtool_info,
)

LINKS = ["lo"] + sorted(name for name in os.listdir("/sys/class/net") if os.path.exists("/sys/class/net/%s/device" % name))


@pytest.fixture(scope="module")
def ethtool():
    path = shutil.which("ethtool") or shutil.which("ethtool", path="/usr/sbin:/sbin")
    assert path, "ethtool is not installed: the lab host's packages (roles/lab_host, ./scripts/setup.sh --lab) have it"
    return path


@pytest.mark.parametrize("link", LINKS)
def test_the_ioctls_give_ethtools_offloads_and_driver(ethtool, link):
    answer = ethtool_ioctl(link)
    shown = subprocess.run([ethtool, "-k", link], capture_output=True, text=True, check=True).stdout
    features = parse_ethtool_features(shown)
    offloads = legacy_offloads(answer["values"])
    assert offloads, "no ioctl answered for %s" % link
    assert offloads == {name: features[name]["on"] for name in offloads}, shown
    info = subprocess.run([ethtool, "-i", link], capture_output=True, text=True, check=False)
    if info.returncode == 0:
        expected = parse_ethtool_info(info.stdout)
        assert decode_drvinfo(answer["drvinfo"]) == expected
    else:  # loopback has no driver info: neither has the ioctl
        assert answer["drvinfo"] is None, info.stderr
