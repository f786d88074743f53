"""Ownership of container-compare's guests and LXD objects: the pure rule and its filter."""

import json

import pytest
import testbed_guest_ownership as filters
from ansible.errors import AnsibleFilterError
from ansible.module_utils.testbed_guest_ownership import (
    LXC_MARKER,
    OwnershipError,
    decide,
    lab_objects,
    lxc_marker,
    owner,
    render_lxc_marker,
)

ID = "3f1c0a9b7d2e" + "5" * 52


def container(labels, cid=ID):
    """A container as docker inspect / podman inspect give it (only what the rule reads)."""
    return {"Id": cid, "Name": "/cc-docker", "Config": {"Labels": labels, "Image": "x"}, "State": {"Running": True}}


def lxc_dir(marker=None, stamp=False, exists=True):
    return {"exists": exists, "dir": "/var/lib/lxc/cc-lxc", "marker": marker, "stamp": stamp}


# -- Docker and Podman: the label org.testbed.role --------------------------------------------------

@pytest.mark.parametrize("kind", ["docker", "podman"])
def test_no_container_of_that_name_is_absent_and_may_be_created(kind):
    for inspected in (None, {}):
        assert decide(kind, "cc-" + kind, inspected, "bench1") == {"owner": "absent", "remove": False, "problem": ""}


@pytest.mark.parametrize("kind", ["docker", "podman"])
def test_a_container_with_the_roles_label_is_ours(kind):
    got = decide(kind, "cc-" + kind, container({"org.testbed.role": "runtime_" + kind}), "bench1")
    assert got == {"owner": "ours", "remove": True, "problem": ""}


def test_a_foreign_docker_container_is_refused_in_one_sentence_naming_it_and_the_fix():
    got = decide("docker", "cc-docker", container({"maintainer": "ops"}), "bench1")
    assert got["owner"] == "foreign" and got["remove"] is False
    assert got["problem"] == (
        "Docker container cc-docker on host bench1 was not created by the testbed (id 3f1c0a9b7d2e, no label "
        "org.testbed.role=runtime_docker): rename it (docker rename cc-docker <new name>) or set "
        "runtime_docker_guest_name (and the guest's ansible_host) to another name.")
    assert got["problem"].count(". ") == 0 and got["problem"].endswith(".")


def test_a_container_without_any_label_is_foreign():
    for labels in (None, {}):
        got = decide("podman", "cc-podman", container(labels), "bench1")
        assert got["owner"] == "foreign"
        assert "no label org.testbed.role=runtime_podman" in got["problem"]
        assert "podman rename cc-podman <new name>" in got["problem"]
        assert "runtime_podman_guest_name" in got["problem"]
    assert owner("docker", "cc-docker", {"Id": ID})[0] == "foreign"      # no Config at all


def test_another_testbed_roles_label_is_not_this_roles():
    """An NFV container or the Podman guest's label on a Docker container of the name: not the Docker guest."""
    got = decide("docker", "cc-docker", container({"org.testbed.role": "runtime_podman"}), "bench1")
    assert got["owner"] == "foreign"
    assert "its label org.testbed.role is 'runtime_podman', not runtime_docker" in got["problem"]
    assert owner("docker", "cc-docker", container({"org.testbed.nfv-chain": "chain1"}))[0] == "foreign"


def test_the_callers_variable_is_named_in_the_fix():
    got = decide("docker", "tbtest-x-cc-docker", container({}), "localhost", variable="cc_test_guest_name")
    assert "or set cc_test_guest_name (and the guest's ansible_host) to another name." in got["problem"]


# -- LXC: the marker file in the container's directory ---------------------------------------------

def test_no_lxc_directory_is_absent():
    assert decide("lxc", "cc-lxc", lxc_dir(exists=False), "h")["owner"] == "absent"
    assert decide("lxc", "cc-lxc", None, "h")["owner"] == "absent"


def test_an_lxc_directory_with_its_marker_is_ours():
    got = decide("lxc", "cc-lxc", lxc_dir(marker=render_lxc_marker("cc-lxc")), "h")
    assert got == {"owner": "ours", "remove": True, "problem": ""}
    assert json.loads(render_lxc_marker("cc-lxc")) == lxc_marker("cc-lxc") == {"created_by": "runtime_lxc",
                                                                               "name": "cc-lxc"}


def test_an_lxc_directory_an_earlier_role_made_counts_by_its_image_stamp():
    assert decide("lxc", "cc-lxc", lxc_dir(stamp=True), "h")["owner"] == "ours"


def test_an_lxc_directory_without_the_marker_is_refused_and_never_removed():
    got = decide("lxc", "cc-lxc", lxc_dir(), "bench1")
    assert got["owner"] == "foreign" and got["remove"] is False
    assert got["problem"] == (
        "LXC container cc-lxc on host bench1 was not created by the testbed (/var/lib/lxc/cc-lxc holds no marker "
        "testbed-guest.json): rename it (lxc-copy -R -P /var/lib/lxc -n cc-lxc -N <new name>) or set "
        "runtime_lxc_guest_name (and the guest's ansible_host) to another name.")


@pytest.mark.parametrize("text, why", [
    ("{not json", "it is not JSON"),
    ("[1, 2]", "it is not a JSON object"),
    (json.dumps({"created_by": "runtime_lxc", "name": "other"}), "it names runtime_lxc other, not runtime_lxc cc-lxc"),
    (json.dumps({"created_by": "someone", "name": "cc-lxc"}), "it names someone cc-lxc, not runtime_lxc cc-lxc"),
])
def test_a_marker_that_is_not_this_guests_is_refused_even_with_a_stamp(text, why):
    got = decide("lxc", "cc-lxc", lxc_dir(marker=text, stamp=True), "h")
    assert got["owner"] == "foreign"
    assert "its marker /var/lib/lxc/cc-lxc/%s is not the testbed's: %s" % (LXC_MARKER, why) in got["problem"]


# -- LXD: the instance's user.testbed.* config keys ------------------------------------------------

def test_an_lxd_instance_with_the_owner_key_or_an_earlier_roles_image_key_is_ours():
    assert decide("lxd", "cc-lxd", {"config": {"user.testbed.owner": "runtime_lxd"}}, "h")["remove"] is True
    assert decide("lxd", "cc-lxd", {"config": {"user.testbed.image_id": "ab" * 32}}, "h")["owner"] == "ours"


def test_a_foreign_lxd_instance_is_refused():
    got = decide("lxd", "cc-lxd", {"name": "cc-lxd", "config": {"image.os": "ubuntu"}}, "bench1")
    assert got["owner"] == "foreign" and got["remove"] is False
    assert got["problem"] == (
        "LXD instance cc-lxd on host bench1 was not created by the testbed (no config key "
        "user.testbed.owner=runtime_lxd): rename it (lxc rename cc-lxd <new name>) or set runtime_lxd_guest_name "
        "(and the guest's ansible_host) to another name.")
    other = decide("lxd", "cc-lxd", {"config": {"user.testbed.owner": "someone", "user.testbed.image_id": "x"}}, "h")
    assert other["owner"] == "foreign" and "its config key user.testbed.owner is 'someone'" in other["problem"]


# -- LXD network and pool: the role's record and the object's mark ----------------------------------

NETWORK = {"name": "lxdbr0", "managed": True, "type": "bridge", "description": "testbed LXD network (roles/runtime_lxd)",
           "config": {"ipv4.address": "10.254.0.1/24"}}
RECORD = "/var/lib/testbed/runtime-lxd/created-network"


def test_a_recorded_network_with_the_preseeds_mark_is_removed():
    got = decide("lxd_network", "lxdbr0", NETWORK, "h", recorded=True, record=RECORD)
    assert got == {"owner": "ours", "remove": True, "problem": ""}
    keyed = dict(NETWORK, description="", config={"user.testbed.owner": "runtime_lxd"})
    assert decide("lxd_network", "lxdbr0", keyed, "h", recorded=True)["remove"] is True


def test_an_unrecorded_network_is_used_and_never_removed_whatever_its_mark():
    for network in (NETWORK, dict(NETWORK, description="ops bridge")):
        got = decide("lxd_network", "lxdbr0", network, "h", recorded=False)
        assert got["remove"] is False and got["problem"] == ""


def test_a_recorded_network_without_the_mark_was_replaced_and_is_refused():
    got = decide("lxd_network", "lxdbr0", dict(NETWORK, description="ops bridge"), "bench1", recorded=True,
                 record=RECORD)
    assert got["owner"] == "foreign" and got["remove"] is False
    assert got["problem"] == (
        "LXD network lxdbr0 on host bench1 was not created by the testbed (neither the config key "
        "user.testbed.owner=runtime_lxd nor the description 'testbed LXD network (roles/runtime_lxd)'), though "
        "/var/lib/testbed/runtime-lxd/created-network says runtime_lxd created one of that name: remove that record "
        "if the network is yours (the testbed then leaves it), or remove the network yourself.")


def test_a_recorded_pool_that_is_gone_is_absent_and_nothing_is_refused():
    got = decide("lxd_pool", "default", None, "h", recorded=True)
    assert got == {"owner": "absent", "remove": False, "problem": ""}
    pool = {"name": "default", "driver": "dir", "description": "testbed LXD pool (roles/runtime_lxd)", "config": {}}
    assert decide("lxd_pool", "default", pool, "h", recorded=True)["remove"] is True
    foreign = decide("lxd_pool", "default", dict(pool, description=""), "h", recorded=True)
    assert "LXD storage pool default on host h was not created by the testbed" in foreign["problem"]
    assert "or remove the storage pool yourself." in foreign["problem"]


# -- bad arguments and the filter -------------------------------------------------------------------

def test_bad_arguments_raise():
    with pytest.raises(OwnershipError, match="kind 'rkt'"):
        decide("rkt", "x", None, "h")
    with pytest.raises(OwnershipError, match="not a mapping"):
        decide("docker", "x", ["a"], "h")
    with pytest.raises(OwnershipError, match="recorded"):
        decide("lxd_network", "lxdbr0", NETWORK, "h")
    with pytest.raises(OwnershipError, match="config"):
        decide("lxd", "cc-lxd", {"config": "x"}, "h")


def test_the_filter_gives_the_decision_and_an_ansible_error_for_bad_arguments():
    flt = filters.FilterModule().filters()
    got = flt["guest_ownership"](container({}), "docker", "cc-docker", "bench1")
    assert got["owner"] == "foreign" and got["problem"].startswith("Docker container cc-docker on host bench1")
    assert flt["guest_ownership"](None, "docker", "cc-docker", "bench1")["owner"] == "absent"
    assert flt["lxc_guest_marker"]("cc-lxc") == render_lxc_marker("cc-lxc")
    with pytest.raises(AnsibleFilterError, match="guest_ownership: kind 'rkt'"):
        flt["guest_ownership"](None, "rkt", "x", "h")


# -- the lab's Docker networks and taps (role lab_network) ------------------------------------------

LAB_NETS = [{"name": "testbed-cc", "bridge": "tb-cc", "subnet": "10.253.0.0/24"}]
LAB_TAPS = [{"name": "tb-cc-tap", "network": "testbed-cc"}]


def docker_net(labels=None, bridge="tb-cc", masquerade="false"):
    options = {"com.docker.network.bridge.name": bridge, "com.docker.network.bridge.enable_ip_masquerade": masquerade}
    return {"Name": "testbed-cc", "Id": "ab" * 32, "Labels": labels if labels is not None else {}, "Options": options}


def test_a_labelled_lab_network_is_the_testbeds_and_marked():
    got = decide("lab_network", "testbed-cc", docker_net({"org.testbed.role": "lab_network"}), "h", bridge="tb-cc")
    assert got == {"owner": "ours", "remove": True, "problem": "", "marked": True}


def test_an_earlier_versions_network_counts_by_its_bridge_but_is_not_marked():
    got = decide("lab_network", "testbed-cc", docker_net(), "h", bridge="tb-cc")
    assert got["owner"] == "ours" and got["remove"] and not got["marked"]


@pytest.mark.parametrize("net, why", [
    (docker_net(bridge="br-other"), "no label org.testbed.role=lab_network and its bridge is 'br-other'"),
    (docker_net(masquerade="true"), "no label org.testbed.role=lab_network"),
    (docker_net({"org.testbed.role": "nfv"}), "its label org.testbed.role is 'nfv', not lab_network"),
])
def test_someone_elses_lab_network_is_refused_by_name(net, why):
    got = decide("lab_network", "testbed-cc", net, "bench1", bridge="tb-cc")
    assert got["owner"] == "foreign" and not got["remove"]
    assert got["problem"].startswith("Docker network testbed-cc on host bench1 was not created by the testbed (" + why)
    assert "docker network rm testbed-cc" in got["problem"] and "lab_network_networks" in got["problem"]


@pytest.mark.parametrize("link, state", [
    ({"ifname": "tb-cc-tap", "ifalias": "testbed:lab_network", "master": "tb-cc"}, "ours"),
    ({"ifname": "tb-cc-tap", "master": "tb-cc"}, "ours"),                     # an earlier version's, by its bridge
    ({"ifname": "tb-cc-tap"}, "foreign"),
    ({"ifname": "tb-cc-tap", "master": "br0"}, "foreign"),
    ({"ifname": "tb-cc-tap", "ifalias": "vm uplink", "master": "tb-cc"}, "foreign"),
    (None, "absent"),
])
def test_a_taps_owner(link, state):
    assert decide("lab_tap", "tb-cc-tap", link, "h", bridge="tb-cc")["owner"] == state


def test_lab_objects_reads_the_modules_loop_results_and_collects_every_problem():
    results = [{"item": LAB_NETS[0], "exists": True, "network": docker_net(bridge="br-x")}]
    links = [{"ifname": "lo"}, {"ifname": "tb-cc-tap", "master": "br0"}]
    got = lab_objects(LAB_NETS, LAB_TAPS, results, links, "bench1")
    assert got["networks"]["testbed-cc"]["owner"] == "foreign" and got["taps"]["tb-cc-tap"]["owner"] == "foreign"
    assert [p.split(" (")[0] for p in got["problems"]] == [
        "Docker network testbed-cc on host bench1 was not created by the testbed",
        "Tap device tb-cc-tap on host bench1 was not created by the testbed"]
    none = lab_objects(LAB_NETS, LAB_TAPS, [{"item": LAB_NETS[0], "exists": False, "network": None}], [], "h")
    assert none["problems"] == [] and none["networks"]["testbed-cc"]["owner"] == "absent"
    with pytest.raises(OwnershipError, match="neither a mapping"):
        lab_objects(LAB_NETS, LAB_TAPS, "x", [], "h")


def test_the_lab_network_filter_wraps_errors():
    flt = filters.FilterModule().filters()
    with pytest.raises(AnsibleFilterError, match="lab_network_ownership: the inspected networks"):
        flt["lab_network_ownership"]("x", [], LAB_NETS, LAB_TAPS, "h")
