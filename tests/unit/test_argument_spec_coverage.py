"""Every setting an operator may give an experiment is checked on the controller, with a bound.

Walks the argument specs of every experiment role the four experiment playbooks import the
prologue with and of the builder roles its ``meta/testbed_experiment.yml`` names, and their
``meta/testbed_constraints.yml``, and fails when

* an option has no explicit ``type``;
* an integer (or a list of integers) has no ``maximum`` / ``exclusive_maximum``;
* a string named like an address (``*_address``, ``*_ip``, ``*_vip``) is not ``format: ipv4``;
* a string named like a path (``*_dir``, ``*_path``, ``*_file``, ``*mountpoint``) is not
  ``format: absolute_path``;
* a port (``*_port``) does not refuse sshd's port 22.

Deliberate exceptions are listed below, each with its reason. The constraints themselves are loaded
through the validator, so a constraint the validator would reject fails here too.
"""
import glob
import os

import pytest
import yaml
from ansible.module_utils.testbed_validate import builder_constraint_map, constraint_map, spec_options

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXPERIMENT_PLAYBOOKS = ["lvs-compare", "storage-compare", "container-compare", "nfv-chain"]

# name -> why it has no upper bound / no format (each a deliberate decision).
NO_MAXIMUM = {
    "lvs_client_host_index": "set by lvs_compare for each client (its index in lvs_client_hosts), never by an operator",
}
NO_IPV4 = {
    "nfv_loadbalancer_bind_address": "HAProxy's bind address may be * (every address); a pattern allows an address or *",
    "runtime_lxc_ipv4_address": "an address with its prefix (10.0.3.10/24, lxc.net.0.ipv4.address); a pattern checks it",
}
NO_ABSOLUTE_PATH = {
    "container_compare_ftp_download_dir": "a directory name under vsftpd's anonymous root; a pattern keeps it a plain name",
    "container_compare_ftp_upload_dir": "a directory name under vsftpd's anonymous root; a pattern keeps it a plain name",
    "guest_services_ftp_download_dir": "a directory name under guest_services_ftp_root; a pattern keeps it a plain name",
    "guest_services_ftp_upload_dir": "a directory name under guest_services_ftp_root; a pattern keeps it a plain name",
    "container_compare_ftp_file": "a file name inside vsftpd's download directory, not a path on the host",
    "guest_services_ftp_file": "a file name inside vsftpd's download directory, not a path on the host",
    "storage_zfs_replace_mark_file": "set by storage_compare's rebuild workload for each point, never by an operator",
    "storage_ceph_replace_mark_file": "set by storage_compare's rebuild workload for each point, never by an operator",
}
NO_SSH_REFUSAL = {}


def _experiment_roles():
    """(role, kind) for every experiment role the experiment playbooks import the prologue with, and its builder roles.

    A playbook names its experiment role once (``testbed_experiment_role`` of its
    ``import_playbook: experiment-prologue.yml``); the role's ``meta/testbed_experiment.yml``
    lists the builder roles whose settings the prologue checks with the experiment's.
    """
    roles = {}
    for name in EXPERIMENT_PLAYBOOKS:
        with open(os.path.join(ROOT, "playbooks", name + ".yml")) as handle:
            plays = yaml.safe_load(handle)
        for play in plays:
            if play.get("ansible.builtin.import_playbook") != "experiment-prologue.yml":
                continue
            role = play["vars"]["testbed_experiment_role"]
            roles.setdefault(role, "experiment")
            with open(os.path.join(ROOT, "roles", role, "meta", "testbed_experiment.yml")) as handle:
                declared = yaml.safe_load(handle)["testbed_experiment"]
            for builder in declared.get("builder_roles") or ():
                roles.setdefault(builder, "builder")
    return sorted(roles.items())


ROLES = _experiment_roles()


def _load(role, name):
    path = os.path.join(ROOT, "roles", role, "meta", name)
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return yaml.safe_load(handle)


def _options(role):
    """Every entry point's options of the role (name -> option)."""
    spec = _load(role, "argument_specs.yml")
    options = {}
    for entry in spec["argument_specs"]:
        for name, opt in spec_options(spec, entry).items():
            options.setdefault(name, opt)
    return options


def _rules(role, options, kind):
    constraints = _load(role, "testbed_constraints.yml")
    if kind == "experiment":
        return constraint_map(constraints, options)
    return builder_constraint_map({role: constraints}, options)


def test_every_experiment_playbook_names_its_roles():
    names = dict(ROLES)
    for role in ("lvs_compare", "storage_compare", "container_compare", "nfv_measure"):
        assert names.get(role) == "experiment", role
    for role in ("lvs_director", "lvs_real_server", "lvs_client", "storage_zfs", "storage_ceph", "storage_disks",
                 "runtime_docker", "runtime_podman", "runtime_lxc", "runtime_lxd", "runtime_kvm", "guest_services",
                 "nfv_chain", "nfv_image", "nfv_firewall", "nfv_loadbalancer", "nfv_backend", "nfv_client",
                 "guest_rootfs"):
        assert names.get(role) == "builder", role


def _problems(role, kind):
    options = _options(role)
    rules = _rules(role, options, kind)
    problems = []
    for name, opt in sorted(options.items()):
        if "type" not in opt:
            problems.append("%s has no type" % name)
            continue
        kind_ = opt["type"]
        target = opt.get("elements") if kind_ == "list" else kind_
        mine = rules.get(name, {})
        if target == "int" and not ({"maximum", "exclusive_maximum"} & set(mine)) and name not in NO_MAXIMUM:
            problems.append("%s is an integer without a maximum" % name)
        if target in ("str", "path") and "choices" not in opt:
            if name.endswith(("_address", "_ip", "_vip")) and mine.get("format") != "ipv4" \
                    and name not in NO_IPV4:
                problems.append("%s is an address without format: ipv4" % name)
            if name.endswith(("_dir", "_path", "_file", "mountpoint")) and mine.get("format") != "absolute_path" \
                    and name not in NO_ABSOLUTE_PATH:
                problems.append("%s is a path without format: absolute_path" % name)
        if target == "int" and name.endswith("_port") and 22 not in (mine.get("not_in") or ()) \
                and name not in NO_SSH_REFUSAL:
            problems.append("%s is a port that does not refuse 22 (sshd's)" % name)
    return problems


@pytest.mark.parametrize("role, kind", ROLES, ids=[role for role, _ in ROLES])
def test_every_setting_has_a_type_and_its_bounds(role, kind):
    assert _problems(role, kind) == []


def test_the_exceptions_name_real_settings():
    """An exception for a setting that no longer exists (or now has its bound) is stale: remove it."""
    every = {}
    for role, kind in ROLES:
        options = _options(role)
        rules = _rules(role, options, kind)
        every.update({name: rules.get(name, {}) for name in options})
    for name in NO_MAXIMUM:
        assert name in every and not {"maximum", "exclusive_maximum"} & set(every[name]), name
    for name in list(NO_IPV4) + list(NO_ABSOLUTE_PATH) + list(NO_SSH_REFUSAL):
        assert name in every, name


def test_no_role_outside_the_walk_has_constraints_nobody_reads():
    """testbed_validate reads constraints of experiment and builder roles only."""
    walked = {role for role, _ in ROLES} | {"cpu_scaling"}
    for path in glob.glob(os.path.join(ROOT, "roles", "*", "meta", "testbed_constraints.yml")):
        assert path.split(os.sep)[-3] in walked, path
