"""Bring your own pool or cluster (issue #25 item 3): the new settings of storage_compare, storage_zfs and
storage_ceph, checked on the controller with the roles' real argument specs and constraints
(module_utils/testbed_validate.py, as roles/testbed_validate calls it for playbooks/storage-compare.yml).
The checks across settings (rebuild refused, a keyring without a configuration...) are the experiment's
assertions (roles/storage_compare/meta/testbed_experiment.yml): tests/integration/test_storage_compare_plan.py."""

import os

import pytest
import yaml
from ansible.module_utils.testbed_validate import validate

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILDERS = ("storage_zfs", "storage_ceph", "storage_disks")


def _meta(role, name):
    path = os.path.join(ROOT, "roles", role, "meta", name)
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def check(**values):
    return validate(spec=_meta("storage_compare", "argument_specs.yml"),
                    constraints=_meta("storage_compare", "testbed_constraints.yml"), values=values,
                    builder_specs={role: _meta(role, "argument_specs.yml") for role in BUILDERS},
                    builder_constraints={role: _meta(role, "testbed_constraints.yml") for role in BUILDERS})


def test_the_defaults_and_good_values_pass():
    assert check(storage_compare_zfs_existing_pool="", storage_compare_ceph_existing_conf="",
                 storage_compare_ceph_existing_keyring="", storage_compare_ceph_existing_client="client.admin") == []
    assert check(storage_compare_zfs_existing_pool="tank", storage_compare_ceph_existing_conf="/etc/ceph/prod.conf",
                 storage_compare_ceph_existing_keyring="/etc/ceph/prod.client.testbed.keyring",
                 storage_compare_ceph_existing_client="client.testbed", storage_zfs_existing_pool="rpool",
                 storage_ceph_existing_conf="/etc/ceph/ceph.conf", storage_ceph_existing_keyring="/root/k",
                 storage_ceph_existing_client="client.x", storage_ceph_existing_pool="ops") == []


@pytest.mark.parametrize("name, value, sentence", [
    ("storage_compare_zfs_existing_pool", "tank/data",
     "storage_compare_zfs_existing_pool is 'tank/data', not the name of an imported pool"),
    ("storage_compare_zfs_existing_pool", "1tank", "storage_compare_zfs_existing_pool is '1tank', not the name"),
    ("storage_compare_zfs_existing_pool", ["tank"], "storage_compare_zfs_existing_pool"),
    ("storage_compare_ceph_existing_conf", "ceph.conf",
     "storage_compare_ceph_existing_conf is 'ceph.conf', not an absolute path other than /"),
    ("storage_compare_ceph_existing_conf", "/", "storage_compare_ceph_existing_conf is '/', not an absolute path"),
    ("storage_compare_ceph_existing_keyring", "keyring",
     "storage_compare_ceph_existing_keyring is 'keyring', not an absolute path other than /"),
    ("storage_compare_ceph_existing_client", "admin",
     "storage_compare_ceph_existing_client is 'admin', not a client name such as client.admin"),
    ("storage_zfs_existing_pool", "tank/x", "storage_zfs_existing_pool is 'tank/x', not the name of an imported pool"),
    ("storage_ceph_existing_conf", "etc/ceph.conf", "storage_ceph_existing_conf is 'etc/ceph.conf', not an absolute"),
    ("storage_ceph_existing_keyring", "k", "storage_ceph_existing_keyring is 'k', not an absolute path"),
    ("storage_ceph_existing_client", "client.", "storage_ceph_existing_client is 'client.', not a client name"),
    ("storage_ceph_existing_pool", "a/b", "storage_ceph_existing_pool is 'a/b', not a plain pool name"),
], ids=["zfs-pool-slash", "zfs-pool-digit", "zfs-pool-list", "conf-relative", "conf-root", "keyring-relative",
        "client-no-prefix", "role-zfs-pool", "role-conf", "role-keyring", "role-client", "role-pool"])
def test_each_bad_value_is_one_sentence(name, value, sentence):
    problems = check(**{name: value})
    assert len(problems) == 1 and sentence in problems[0], problems


def test_a_typo_of_a_new_setting_is_named():
    problems = validate(spec=_meta("storage_compare", "argument_specs.yml"), values={},
                        all_vars=["storage_compare_zfs_exsting_pool"], prefixes=["storage_compare_"])
    assert len(problems) == 1 and problems[0].startswith(
        "unknown variable storage_compare_zfs_exsting_pool: did you mean storage_compare_zfs_existing_pool?"), problems
