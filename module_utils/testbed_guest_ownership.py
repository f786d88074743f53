# -*- coding: utf-8 -*-
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ownership of container-compare's guests and LXD objects, as pure logic (no host access).

The runtime roles (runtime_docker, runtime_podman, runtime_lxc, runtime_lxd) name their guest
(``cc-docker``, ``cc-podman``, ``cc-lxc``, ``cc-lxd`` by default) and replace or remove it by that
name. A machine may hold someone else's container of that name: the testbed touches an object only
when it carries the mark its role set at creation, and refuses - in one sentence naming the object
and the fix - when an object of the name is there without it.

The marks:

* Docker and Podman: the container label ``org.testbed.role=<role>`` (the key of the testbed's
  labels, ``org.testbed.*``, as the NFV chain's ``org.testbed.nfv-chain``).
* LXC: the file ``testbed-guest.json`` in the container's directory (``<lxc_path>/<name>``), written
  right after the directory is made (before the root filesystem is unpacked into it), holding
  ``{"created_by": "runtime_lxc", "name": <name>}``; a directory an earlier version of the role made
  carries ``testbed-image.sha256`` instead (the image stamp it wrote), which counts as the mark.
* LXD: the instance config key ``user.testbed.owner=runtime_lxd`` (an instance an earlier version
  made carries ``user.testbed.image_id``, which counts too). The storage pool and network the role's
  preseed creates are removed only when the role's state records it created them *and* the object
  carries the mark: ``user.testbed.owner=runtime_lxd`` (network) or the preseed's description.

The lab's networks (role lab_network: the LVS lab, the storage lab, the KVM guest's bridge) carry
marks too:

* a Docker network: the label ``org.testbed.role=lab_network``; one without labels that a version
  before the label made (its bridge option ``com.docker.network.bridge.name`` is the configured
  bridge and its IP masquerading is off, as the role creates it) counts as the testbed's;
* a tap device: the interface alias ``testbed:lab_network`` (``ip link set dev <tap> alias ...``);
  one without an alias enslaved to the configured bridge counts as the testbed's (an earlier
  version's).

The roles read the object (the runtime's own inspect output, or for LXC the directory, marker and
stamp) and call :func:`decide` through the ``guest_ownership`` filter; everything decided is here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

KINDS = ("docker", "podman", "lxc", "lxd", "lxd_network", "lxd_pool", "lab_network", "lab_tap")
# The role that creates each kind (and is the value of its mark).
ROLE = {"docker": "runtime_docker", "podman": "runtime_podman", "lxc": "runtime_lxc", "lxd": "runtime_lxd",
        "lxd_network": "runtime_lxd", "lxd_pool": "runtime_lxd", "lab_network": "lab_network", "lab_tap": "lab_network"}
NOUN = {"docker": "Docker container", "podman": "Podman container", "lxc": "LXC container", "lxd": "LXD instance",
        "lxd_network": "LXD network", "lxd_pool": "LXD storage pool", "lab_network": "Docker network",
        "lab_tap": "tap device"}
# The variable that names the object (what the operator sets to another name).
VARIABLE = {"docker": "runtime_docker_guest_name", "podman": "runtime_podman_guest_name",
            "lxc": "runtime_lxc_guest_name", "lxd": "runtime_lxd_guest_name",
            "lxd_network": "runtime_lxd_network", "lxd_pool": "runtime_lxd_storage_pool",
            "lab_network": "lab_network_networks", "lab_tap": "lab_network_taps"}
# How the operator frees the name of a lab network or tap that is not the testbed's.
FREE = {"lab_network": "docker network rm {name}, when nothing of yours uses it",
        "lab_tap": "ip link delete dev {name}, when nothing of yours uses it"}
# How the operator renames a guest of that name (the object keeps its content).
RENAME = {"docker": "docker rename {name} <new name>", "podman": "podman rename {name} <new name>",
          "lxc": "lxc-copy -R -P {lxc_path} -n {name} -N <new name>", "lxd": "lxc rename {name} <new name>"}

LABEL = "org.testbed.role"
LXC_MARKER = "testbed-guest.json"
LXC_STAMP = "testbed-image.sha256"
LXD_KEY = "user.testbed.owner"
LXD_LEGACY_KEY = "user.testbed.image_id"
LXD_DESCRIPTION = {"lxd_network": "testbed LXD network (roles/runtime_lxd)",
                   "lxd_pool": "testbed LXD pool (roles/runtime_lxd)"}
GUESTS = ("docker", "podman", "lxc", "lxd")
LAB = ("lab_network", "lab_tap")
TAP_ALIAS = "testbed:lab_network"
BRIDGE_OPTION = "com.docker.network.bridge.name"
MASQUERADE_OPTION = "com.docker.network.bridge.enable_ip_masquerade"


class OwnershipError(ValueError):
    """An argument the rule cannot judge (an unknown kind, an inspected object of the wrong shape)."""


def _kind(kind):
    if kind not in KINDS:
        raise OwnershipError("kind %r is not one of %s" % (kind, ", ".join(KINDS)))
    return kind


def lxc_marker(name):
    """The LXC marker's document for the guest ``name``."""
    return {"created_by": ROLE["lxc"], "name": name}


def render_lxc_marker(name):
    return json.dumps(lxc_marker(name), indent=2, sort_keys=True) + "\n"


def _lxc_marker_error(text, name):
    """"" when ``text`` is the marker of the guest ``name``; else why it is not."""
    try:
        marker = json.loads(text)
    except ValueError as exc:
        return "it is not JSON (%s)" % exc
    if not isinstance(marker, dict):
        return "it is not a JSON object"
    if marker.get("created_by") != ROLE["lxc"] or marker.get("name") != name:
        return "it names %s %s, not runtime_lxc %s" % (marker.get("created_by"), marker.get("name"), name)
    return ""


def _labels(inspected):
    config = inspected.get("Config") or {}
    labels = config.get("Labels") if isinstance(config, dict) else None
    return labels if isinstance(labels, dict) else {}


def _lab_mark(kind, inspected):
    """The mark a lab network (its label org.testbed.role) or tap (its alias) carries, None without one."""
    if kind == "lab_network":
        labels = inspected.get("Labels") if isinstance(inspected.get("Labels"), dict) else {}
        return labels.get(LABEL)
    return inspected.get("ifalias") or None


def _lab_owner(kind, inspected, bridge):
    """owner() of a lab network (``docker network inspect``) or tap (an ``ip -j link show`` item)."""
    value = _lab_mark(kind, inspected)
    if kind == "lab_network":
        options = inspected.get("Options") if isinstance(inspected.get("Options"), dict) else {}
        if value == ROLE[kind]:
            return "ours", ""
        if value is not None:
            return "foreign", "its label %s is %r, not %s" % (LABEL, value, ROLE[kind])
        if bridge and options.get(BRIDGE_OPTION) == bridge and options.get(MASQUERADE_OPTION) == "false":
            return "ours", ""
        return "foreign", "no label %s=%s%s" % (
            LABEL, ROLE[kind], (" and its bridge is %r, not %s without masquerading"
                                % (options.get(BRIDGE_OPTION), bridge)) if bridge else "")
    if value == TAP_ALIAS:
        return "ours", ""
    if value:
        return "foreign", "its alias is %r, not %s" % (value, TAP_ALIAS)
    if bridge and inspected.get("master") == bridge:
        return "ours", ""
    return "foreign", "no alias %s%s" % (TAP_ALIAS, (" and it is not a port of bridge %s" % bridge) if bridge else "")


def owner(kind, name, inspected, bridge=None):
    """(``absent`` | ``ours`` | ``foreign``, why it is not ours - "" unless foreign).

    ``inspected`` is what the role read, None or empty when there is no object of that name:

    * docker, podman: the container as ``docker inspect`` / ``podman inspect`` give it (the
      ``container`` of community.docker.docker_container_info, a ``containers`` item of
      containers.podman.podman_container_info);
    * lxc: ``{"exists": <the directory <lxc_path>/<name> is there>, "dir": that path,
      "marker": <text of its testbed-guest.json or None>, "stamp": <testbed-image.sha256 is there>}``;
    * lxd, lxd_network, lxd_pool: the object as ``lxc query /1.0/<instances|networks|storage-pools>/<name>``
      gives it;
    * lab_network: the network as ``docker network inspect`` gives it (``bridge``: the bridge the
      role gives it); lab_tap: the link as ``ip -j link show`` gives it (``bridge``: its network's bridge).
    """
    _kind(kind)
    if not inspected:
        return "absent", ""
    if not isinstance(inspected, dict):
        raise OwnershipError("the inspected %s %s is not a mapping: %r" % (NOUN[kind], name, inspected))
    if kind in LAB:
        return _lab_owner(kind, inspected, bridge)
    role = ROLE[kind]
    if kind in ("docker", "podman"):
        value = _labels(inspected).get(LABEL)
        shown = (inspected.get("Id") or "")[:12]
        ident = ("id %s, " % shown) if shown else ""
        if value == role:
            return "ours", ""
        if value is None:
            return "foreign", "%sno label %s=%s" % (ident, LABEL, role)
        return "foreign", "%sits label %s is %r, not %s" % (ident, LABEL, value, role)
    if kind == "lxc":
        if not inspected.get("exists"):
            return "absent", ""
        where = inspected.get("dir") or name
        marker = inspected.get("marker")
        if marker is not None:
            error = _lxc_marker_error(marker, name)
            if not error:
                return "ours", ""
            return "foreign", "its marker %s/%s is not the testbed's: %s" % (where, LXC_MARKER, error)
        if inspected.get("stamp"):
            return "ours", ""
        return "foreign", "%s holds no marker %s" % (where, LXC_MARKER)
    config = inspected.get("config") or {}
    if not isinstance(config, dict):
        raise OwnershipError("the config of the inspected %s %s is not a mapping: %r" % (NOUN[kind], name, config))
    value = config.get(LXD_KEY)
    if value == role:
        return "ours", ""
    if kind == "lxd":
        if value is None and config.get(LXD_LEGACY_KEY):
            return "ours", ""
        if value is None:
            return "foreign", "no config key %s=%s" % (LXD_KEY, role)
        return "foreign", "its config key %s is %r, not %s" % (LXD_KEY, value, role)
    if value is None and inspected.get("description") == LXD_DESCRIPTION[kind]:
        return "ours", ""
    return "foreign", "neither the config key %s=%s nor the description %r" % (LXD_KEY, role, LXD_DESCRIPTION[kind])


def decide(kind, name, inspected, host, variable=None, recorded=None, record=None, bridge=None):
    """What the role may do with the object named ``name`` on ``host``, and the refusal sentence.

    Returns ``{"owner": absent|ours|foreign, "remove": bool, "problem": str}``: ``remove`` says the
    object may be replaced or removed; ``problem`` is one sentence when the run must stop ("" else).

    A lab network or tap (lab_network, lab_tap; ``bridge`` the bridge of its network): as a guest,
    the fix being to free the name or rename the lab's object; ``marked`` says it carries the mark
    (not only an earlier version's bridge).

    A guest (docker, podman, lxc, lxd): absent - the role creates it; ours - it may replace or
    remove it; foreign - refused, naming it and the fix (rename it, or set ``variable``, the role's
    guest name variable by default, to another name).

    An LXD network or storage pool is removed only when the role's state records that it created
    one of that name (``recorded``, the record's path ``record``) and the object carries the mark.
    One of that name without the mark is someone else's: left alone when nothing records it (the
    role uses an existing network or pool as it is), refused when the record says the role made it
    (it was replaced since).
    """
    _kind(kind)
    state, why = owner(kind, name, inspected, bridge=bridge)
    if kind in LAB:
        problem = ""
        if state == "foreign":
            fields = (NOUN[kind], name, host, why, FREE[kind].format(name=name), NOUN[kind].split(" ")[-1],
                      variable or VARIABLE[kind])
            problem = ("%s %s on host %s was not created by the testbed (%s): free the name (%s) or give the "
                       "lab's %s another name in %s." % fields)
            problem = problem[0].upper() + problem[1:]
        marked = state == "ours" and _lab_mark(kind, inspected) == (ROLE[kind] if kind == "lab_network" else TAP_ALIAS)
        return {"owner": state, "remove": state == "ours", "problem": problem, "marked": marked}
    if kind in GUESTS:
        problem = ""
        if state == "foreign":
            lxc_path = (inspected.get("dir") or "").rpartition("/")[0] or "/var/lib/lxc"
            fix = RENAME[kind].format(name=name, lxc_path=lxc_path)
            problem = ("%s %s on host %s was not created by the testbed (%s): rename it (%s) or set %s "
                       "(and the guest's ansible_host) to another name."
                       % (NOUN[kind], name, host, why, fix, variable or VARIABLE[kind]))
        return {"owner": state, "remove": state == "ours", "problem": problem}
    if recorded is None:
        raise OwnershipError("%s %s: say whether the role's state records creating it (recorded)" % (NOUN[kind], name))
    problem = ""
    if recorded and state == "foreign":
        what = NOUN[kind].split(" ", 1)[1]
        problem = ("%s %s on host %s was not created by the testbed (%s), though %s says runtime_lxd created one "
                   "of that name: remove that record if the %s is yours (the testbed then leaves it), or remove "
                   "the %s yourself." % (NOUN[kind], name, host, why, record or "the role's state", what, what))
    return {"owner": state, "remove": bool(recorded) and state == "ours", "problem": problem}


def lab_objects(networks, taps, inspected, links, host):
    """The ownership of the lab's networks and taps on ``host``, and the sentences refusing the others.

    ``networks``: lab_network_networks (``{name, bridge, ...}``); ``taps``: lab_network_taps
    (``{name, network}``); ``inspected``: the network of each name as ``docker network inspect``
    gives it, a mapping by name or community.docker.docker_network_info's loop results (``item``,
    ``network``); ``links``: ``ip -j link show``. Returns ``{"networks": {name: decision},
    "taps": {name: decision}, "problems": [sentence, ...]}``, a decision being :func:`decide`'s.
    """
    if isinstance(inspected, list):
        inspected = dict(((r.get("item") or {}).get("name"), r.get("network")) for r in inspected if isinstance(r, dict))
    if not isinstance(inspected, dict):
        raise OwnershipError("the inspected networks are neither a mapping by name nor loop results: %r" % (inspected,))
    bridges = {}
    out = {"networks": {}, "taps": {}, "problems": []}
    for network in networks or []:
        bridges[network["name"]] = network.get("bridge")
        decision = decide("lab_network", network["name"], inspected.get(network["name"]), host,
                          bridge=network.get("bridge"))
        out["networks"][network["name"]] = decision
    by_name = dict((link.get("ifname"), link) for link in links or [] if isinstance(link, dict))
    for tap in taps or []:
        decision = decide("lab_tap", tap["name"], by_name.get(tap["name"]), host, bridge=bridges.get(tap.get("network")))
        out["taps"][tap["name"]] = decision
    out["problems"] = [d["problem"] for kind in ("networks", "taps") for d in out[kind].values() if d["problem"]]
    return out
