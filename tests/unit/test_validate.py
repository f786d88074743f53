"""Checks of an experiment's input before anything is built (module_utils/testbed_validate.py).

Every case is one operator mistake; each must give exactly the sentence that
names the variable, what it is and how to fix it, and valid input must give
no problem at all.
"""
import copy

import experiment_validate
import pytest
from ansible.module_utils.testbed_validate import (
    SpecError,
    check_groups,
    check_host_vars,
    check_unknown,
    check_values,
    constraint_map,
    convert,
    format_message,
    spec_options,
    validate,
)
from helpers import run_module

# A spec like the LVS comparison's (roles/experiment_<name>/meta/argument_specs.yml).
SPEC = {
    "argument_specs": {
        "main": {
            "short_description": "LVS scheduler comparison.",
            "options": {
                "lvs_compare_schedulers": {
                    "type": "list", "elements": "str", "default": ["rr", "wrr"],
                    "choices": ["rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq"],
                    "description": "Schedulers compared.",
                },
                "lvs_compare_rates": {"type": "list", "elements": "int", "default": [2000, 8000],
                                      "description": "Requested rates (conn/s)."},
                "lvs_compare_num_conns": {"type": "int", "default": 20000, "description": "Connections per point."},
                "lvs_compare_repetitions": {"type": "int", "required": True, "description": "Repetitions."},
                "lvs_compare_min_rate_ratio": {"type": "float", "default": 0.9, "description": "Valid ratio."},
                "lvs_compare_hog": {"type": "bool", "default": True, "description": "httperf --hog."},
                "lvs_compare_uri": {"type": "str", "default": "/", "description": "URI."},
            },
        },
    },
}
CONSTRAINTS = {
    "testbed_constraints": {
        "lvs_compare_rates": {"exclusive_minimum": 0, "integer": True, "min_items": 1, "unique": True},
        "lvs_compare_repetitions": {"minimum": 1},
        "lvs_compare_num_conns": {"minimum": 1},
        "lvs_compare_min_rate_ratio": {"exclusive_minimum": 0, "maximum": 1},
        "lvs_compare_schedulers": {"min_items": 1, "unique": True},
    },
}
VALUES = {
    "lvs_compare_schedulers": ["rr", "wrr", "lc"],
    "lvs_compare_rates": [50, 100],
    "lvs_compare_num_conns": 3000,
    "lvs_compare_repetitions": 2,
    "lvs_compare_min_rate_ratio": 0.9,
    "lvs_compare_hog": True,
    "lvs_compare_uri": "/",
}
GROUPS = {
    "all": ["localhost", "director", "web1", "web2"], "ungrouped": [],
    "lvs_director": ["director"], "lvs_real_servers": ["web1", "web2"], "lvs_clients": ["localhost"],
}
HOST_VARS = [{
    "group": "lvs_real_servers", "var": "lvs_rip", "check": "ipv4_in_network",
    "network": "10.250.2.1", "prefix_length": 24, "network_var": "lab_director_private_address",
    "network_description": "the director's private network",
}]
HOSTS = {"web1": {"lvs_rip": "10.250.2.11"}, "web2": {"lvs_rip": "10.250.2.12"}}
PREFIXES = ["lvs_compare_"]


def problems(values=None, all_vars=None, groups=None, required_groups=("lvs_director", "lvs_real_servers"),
             host_vars=None, hosts=None, **changes):
    """Problems of the valid input with ``changes`` applied to the values."""
    vals = copy.deepcopy(VALUES if values is None else values)
    vals.update(changes)
    return validate(
        spec=SPEC, constraints=CONSTRAINTS, values=vals,
        all_vars=list(vals) + list(all_vars or []) + ["testbed_repetitions", "lvs_director_vip"],
        prefixes=PREFIXES, groups=GROUPS if groups is None else groups, required_groups=list(required_groups),
        host_vars=HOST_VARS if host_vars is None else host_vars, hosts=HOSTS if hosts is None else hosts,
        docs="roles/experiment_lvs_compare/README.md")


def only(found):
    assert len(found) == 1, found
    return found[0]


def test_valid_input_has_no_problem():
    assert problems() == []
    assert format_message([], "lvs_compare") == "lvs_compare: input is valid."


def test_valid_strings_from_key_value_extra_vars_are_converted():
    # -e lvs_compare_repetitions=3 -e lvs_compare_hog=no ... give strings
    assert problems(lvs_compare_repetitions="3", lvs_compare_hog="no", lvs_compare_min_rate_ratio="0.5",
                    lvs_compare_num_conns="3000", lvs_compare_uri=5) == []


def test_rate_zero():
    assert only(problems(lvs_compare_rates=[0, 100])) == (
        "lvs_compare_rates item 1 must be greater than 0, got 0: "
        "fix the list in your inventory's group_vars or with -e.")


def test_negative_rate():
    assert only(problems(lvs_compare_rates=[100, -50])) == (
        "lvs_compare_rates item 2 must be greater than 0, got -50: "
        "fix the list in your inventory's group_vars or with -e.")


def test_string_where_int_expected():
    assert only(problems(lvs_compare_num_conns="many")) == (
        "lvs_compare_num_conns must be an integer, got the string 'many': "
        "set it in your inventory's group_vars or with -e lvs_compare_num_conns=20000.")


def test_string_where_list_expected():
    assert only(problems(lvs_compare_rates="50,100")) == (
        "lvs_compare_rates must be a list of integers, got the string '50,100': give a list, "
        "e.g. -e '{\"lvs_compare_rates\": [50, 100]}', or a YAML list in your inventory's group_vars.")


def test_unknown_scheduler_in_list_with_choices():
    assert only(problems(lvs_compare_schedulers=["rr", "wrrr"])) == (
        "lvs_compare_schedulers item 2 is 'wrrr', which is not one of rr, wrr, lc, wlc, lblc, lblcr, dh, sh, "
        "sed, nq (did you mean wrr?): fix the list in your inventory's group_vars or with -e.")


def test_choice_of_a_scalar():
    spec = {"x_mode": {"type": "str", "choices": ["fast", "slow"]}}
    assert only(check_values(spec, {"x_mode": "fats"})) == (
        "x_mode is 'fats', which is not one of fast, slow (did you mean fast?): "
        "set one of them in your inventory's group_vars or with -e x_mode=fast.")


def test_typo_variable_did_you_mean():
    assert only(problems(all_vars=["lvs_compare_rate"])) == (
        "unknown variable lvs_compare_rate: did you mean lvs_compare_rates? "
        "Rename it in your inventory's group_vars or with -e.")


def test_unknown_variable_without_close_match_points_to_docs():
    assert only(problems(all_vars=["lvs_compare_flux_capacitor"])) == (
        "unknown variable lvs_compare_flux_capacitor: the experiment has no such setting; remove it and see "
        "roles/experiment_lvs_compare/README.md for the valid names.")


def test_known_derived_variable_is_not_unknown():
    options = spec_options(SPEC)
    assert check_unknown(options, ["lvs_compare_report_spec"], PREFIXES, known=["lvs_compare_report_spec"]) == []
    assert check_unknown(options, ["lvs_compare_report_spec"], []) == []


def test_empty_group():
    groups = dict(GROUPS, lvs_clients=[])
    assert only(problems(groups=groups, required_groups=["lvs_director", "lvs_clients"])) == (
        "inventory group lvs_clients has no hosts: add the hosts under it in your inventory "
        "(see inventories/example_hardware/hosts.yml).")


def test_missing_group():
    groups = {k: v for k, v in GROUPS.items() if k != "lvs_director"}
    assert only(problems(groups=groups)) == (
        "inventory group lvs_director does not exist: add it with its hosts to your inventory "
        "(see inventories/example_hardware/hosts.yml).")


def test_misspelt_group_did_you_mean():
    assert check_groups(GROUPS, ["lvs_client"]) == [
        "inventory group lvs_client does not exist (did you mean lvs_clients?): add it with its hosts to "
        "your inventory (see inventories/example_hardware/hosts.yml)."]


def test_real_server_without_lvs_rip():
    hosts = {"web1": {"lvs_rip": "10.250.2.11"}, "web2": {}}
    assert only(problems(hosts=hosts)) == (
        "host web2 of group lvs_real_servers has no lvs_rip: set it in your inventory "
        "(web2: {lvs_rip: ...}) or in host_vars/web2.yml.")


def test_lvs_rip_outside_director_network():
    hosts = {"web1": {"lvs_rip": "10.250.2.11"}, "web2": {"lvs_rip": "172.16.0.3"}}
    assert only(problems(hosts=hosts)) == (
        "lvs_rip of host web2 (group lvs_real_servers) is 172.16.0.3, outside the director's private network "
        "10.250.2.0/24 (lab_director_private_address): give the host an address in 10.250.2.0/24, "
        "or fix lab_director_private_address.")


def test_lvs_rip_not_an_address():
    hosts = {"web1": {"lvs_rip": "10.250.2.300"}, "web2": {"lvs_rip": "10.250.2.12"}}
    assert only(problems(hosts=hosts)) == (
        "lvs_rip of host web1 (group lvs_real_servers) is the string '10.250.2.300', not an IPv4 address: "
        "fix it in your inventory or host_vars/web1.yml.")


def test_network_given_as_cidr_and_optional_host_var():
    reqs = [{"group": "lvs_real_servers", "var": "lvs_rip", "check": "ipv4_in_network",
             "network": "10.250.2.0/24", "required": False}]
    assert check_host_vars(GROUPS, reqs, {"web1": {"lvs_rip": "10.250.2.11"}}) == []
    assert len(check_host_vars(GROUPS, reqs, {"web1": {"lvs_rip": "10.250.3.11"}})) == 1


def test_host_var_group_is_required_too():
    groups = {k: v for k, v in GROUPS.items() if k != "lvs_real_servers"}
    assert only(problems(groups=groups, required_groups=["lvs_director"])).startswith(
        "inventory group lvs_real_servers does not exist")


def test_repetitions_zero():
    assert only(problems(lvs_compare_repetitions=0)) == (
        "lvs_compare_repetitions must be at least 1, got 0: fix it in your inventory's group_vars or with -e.")


def test_float_where_integer_required():
    # an int option given 2.5, and an int-constrained element given 2.5
    assert only(problems(lvs_compare_repetitions=2.5)) == (
        "lvs_compare_repetitions must be a whole number, got the number 2.5: "
        "set it in your inventory's group_vars or with -e lvs_compare_repetitions=1.")
    spec = {"x_count": {"type": "float"}}
    assert check_values(spec, {"x_count": 2.5}, {"x_count": {"integer": True}}) == [
        "x_count must be a whole number, got 2.5: fix it in your inventory's group_vars or with -e."]
    assert check_values(spec, {"x_count": 2.0}, {"x_count": {"integer": True}}) == []


def test_required_variable_missing_or_null():
    values = dict(VALUES)
    del values["lvs_compare_repetitions"]
    assert only(problems(values=values)) == (
        "lvs_compare_repetitions is required but not set: "
        "set it in your inventory's group_vars or with -e lvs_compare_repetitions=1.")
    assert only(problems(lvs_compare_repetitions=None)).startswith("lvs_compare_repetitions is required but is null")


def test_empty_and_repeated_lists():
    assert only(problems(lvs_compare_rates=[])) == (
        "lvs_compare_rates must have at least 1 item, got an empty list: set it in your inventory's "
        "group_vars or with -e, e.g. -e '{\"lvs_compare_rates\": [\"...\"]}'.")
    assert only(problems(lvs_compare_schedulers=["rr", "wrr", "rr"])) == (
        "lvs_compare_schedulers must not repeat items, got 'rr' more than once: "
        "remove the repeats in your inventory's group_vars or with -e.")


def test_bool_and_float_mistakes():
    found = problems(lvs_compare_hog="maybe", lvs_compare_min_rate_ratio=1.5)
    assert found == [
        "lvs_compare_hog must be a boolean (true/false, yes/no), got the string 'maybe': "
        "set it in your inventory's group_vars or with -e lvs_compare_hog=true.",
        "lvs_compare_min_rate_ratio must be at most 1, got 1.5: fix it in your inventory's group_vars or with -e.",
    ]


def test_str_rejects_a_list_and_int_rejects_a_bool():
    assert only(problems(lvs_compare_uri=["/a"])).startswith(
        "lvs_compare_uri must be a string, got the list [\"/a\"]")
    assert only(problems(lvs_compare_num_conns=True)).startswith(
        "lvs_compare_num_conns must be an integer, got the boolean true")


def test_every_problem_in_one_message():
    found = problems(lvs_compare_rates="50,100", lvs_compare_repetitions=0, all_vars=["lvs_compare_rate"],
                     groups=dict(GROUPS, lvs_director=[]))
    assert len(found) == 4
    message = format_message(found, "lvs_compare")
    lines = message.splitlines()
    assert lines[0] == "lvs_compare cannot start: 4 problems with its input:"
    assert lines[1:] == ["- " + p for p in found]


def test_nested_options_of_a_list_of_mappings():
    spec = {"nfv_chain_scenarios": {"type": "list", "elements": "dict", "options": {
        "name": {"type": "str", "required": True},
        "hops": {"type": "list", "elements": "str", "choices": ["firewall", "haproxy"]},
    }}}
    values = {"nfv_chain_scenarios": [{"name": "baseline", "hops": []},
                                      {"nmae": "fw", "hops": ["firewall", "nat"]}]}
    assert check_values(spec, values) == [
        "nfv_chain_scenarios item 2 has unknown key nmae (did you mean name?); known keys: hops, name: "
        "fix it in your inventory's group_vars or with -e.",
        "nfv_chain_scenarios item 2 has no name, which is required: add it in your inventory's group_vars or with -e.",
        "nfv_chain_scenarios item 2.hops item 2 is 'nat', which is not one of firewall, haproxy: "
        "fix the list in your inventory's group_vars or with -e.",
    ]


@pytest.mark.parametrize("value,kind,expected", [
    ("3", "int", 3), ("3.0", "int", 3), (3.0, "int", 3), ("0.5", "float", 0.5), ("7", "float", 7),
    ("yes", "bool", True), ("off", "bool", False), (0, "bool", False), (5, "str", "5"), ([1], "list", [1]),
])
def test_conversions_like_ansible(value, kind, expected):
    assert convert(value, kind) == expected


@pytest.mark.parametrize("value,kind", [
    ("50,100", "list"), ("[50, 100]", "list"), ("a=1", "dict"), ("nan", "float"), ("inf", "float"),
    ("2.5", "int"), (True, "float"), ({"a": 1}, "str"), ("maybe", "bool"),
])
def test_conversions_strict(value, kind):
    with pytest.raises(Exception) as info:
        convert(value, kind)
    assert type(info.value).__name__ == "_Bad"


def test_spec_forms_are_equivalent():
    options = SPEC["argument_specs"]["main"]["options"]
    assert spec_options(SPEC) is options
    assert spec_options(SPEC["argument_specs"]) is options
    assert spec_options(SPEC["argument_specs"]["main"]) is options
    assert spec_options(options) is options
    with pytest.raises(SpecError, match="no entry point 'other'"):
        spec_options(SPEC, "other")


@pytest.mark.parametrize("constraints,match", [
    ({"lvs_compare_rate": {"minimum": 1}}, "not an option of the argument spec \\(did you mean lvs_compare_rates"),
    ({"lvs_compare_rates": {"minimun": 1}}, "unknown constraint 'minimun'"),
    ({"lvs_compare_uri": {"minimum": 1}}, "applies to numbers"),
    ({"lvs_compare_num_conns": {"unique": True}}, "applies to lists"),
    ({"lvs_compare_rates": {"min_items": -1}}, "whole number >= 0"),
])
def test_constraint_mistakes_are_spec_errors(constraints, match):
    with pytest.raises(SpecError, match=match):
        constraint_map(constraints, spec_options(SPEC))


def test_bad_type_in_spec_is_a_spec_error():
    with pytest.raises(SpecError, match="has type 'integer'"):
        spec_options({"x_n": {"type": "integer"}})


def test_module_fails_with_every_problem_and_passes_valid_input():
    args = dict(spec=SPEC, constraints=CONSTRAINTS, values=dict(VALUES, lvs_compare_rates="50,100"),
                all_vars=list(VALUES) + ["lvs_compare_rate"], prefixes=PREFIXES, groups=GROUPS,
                required_groups=["lvs_director"], host_vars=HOST_VARS, hosts=HOSTS, experiment="lvs_compare",
                _ansible_check_mode=True)
    failed, result = run_module(experiment_validate, args)
    assert failed is True
    assert len(result["problems"]) == 2
    assert result["msg"].startswith("lvs_compare cannot start: 2 problems with its input:")
    assert "did you mean lvs_compare_rates?" in result["msg"]
    args.update(values=VALUES, all_vars=list(VALUES))
    failed, result = run_module(experiment_validate, args)
    assert failed is False
    assert result["changed"] is False and result["problems"] == []
    assert result["checked"] == sorted(VALUES)


def test_module_reports_a_broken_spec_as_such():
    failed, result = run_module(experiment_validate, dict(
        spec={"x_n": {"type": "integer"}}, values={"x_n": 1}, experiment="x"))
    assert failed is True
    assert result["msg"].startswith("experiment_validate: the argument spec or constraints of x are unusable:")


# --- strings: pattern, format, not_in; topology: group sizes, one part per host, unique host values ----------

TEXT_OPTIONS = {
    "x_block_sizes": {"type": "list", "elements": "str"},
    "x_mon_address": {"type": "str"},
    "x_mountpoint": {"type": "path"},
    "x_port": {"type": "int"},
}
TEXT_RULES = {
    "x_block_sizes": {"pattern": "[0-9]+[kKmM]?", "pattern_meaning": "a block size such as 4k or 1m"},
    "x_mon_address": {"format": "ipv4"},
    "x_mountpoint": {"format": "absolute_path"},
    "x_port": {"not_in": [22], "not_in_reason": "port 22 is sshd's"},
}


@pytest.mark.parametrize("values, sentence", [
    ({"x_block_sizes": ["4k", "banana"]},
     "x_block_sizes item 2 is 'banana', not a block size such as 4k or 1m: fix the list in your inventory's "
     "group_vars or with -e."),
    ({"x_mon_address": "not-an-ip"},
     "x_mon_address is 'not-an-ip', not an IPv4 address such as 10.0.0.1: fix it in your inventory's group_vars or "
     "with -e."),
    ({"x_mountpoint": "/"}, "x_mountpoint is '/', not an absolute path other than / (the testbed mounts, writes and "
                            "removes there): fix it in your inventory's group_vars or with -e."),
    ({"x_mountpoint": "relative/dir"}, "x_mountpoint is 'relative/dir', not an absolute path other than /"),
    ({"x_port": 22}, "x_port is 22: port 22 is sshd's; fix it in your inventory's group_vars or with -e."),
])
def test_text_constraints_give_one_sentence(values, sentence):
    problems = check_values(TEXT_OPTIONS, values, {"testbed_constraints": TEXT_RULES})
    assert len(problems) == 1 and problems[0].startswith(sentence), problems


def test_text_constraints_pass_good_values():
    good = {"x_block_sizes": ["4k", "64K", "1m"], "x_mon_address": "10.0.0.1", "x_mountpoint": "/mnt/tb", "x_port": 3307}
    assert check_values(TEXT_OPTIONS, good, {"testbed_constraints": TEXT_RULES}) == []


@pytest.mark.parametrize("rules, message", [
    ({"x_port": {"pattern": "[0-9]+"}}, "applies to strings"),
    ({"x_mon_address": {"format": "ipv6"}}, "format is 'ipv6'; known: ipv4, absolute_path"),
    ({"x_mon_address": {"pattern": "("}}, "is not a regular expression"),
    ({"x_port": {"not_in": 22}}, "not_in must be a list"),
])
def test_bad_text_rules_are_the_authors_mistake(rules, message):
    with pytest.raises(SpecError, match=message):
        constraint_map({"testbed_constraints": rules}, TEXT_OPTIONS)


def test_a_group_with_more_hosts_than_used_is_refused():
    groups = {"storage_nodes": ["s1", "s2"], "lvs_director": ["d1"]}
    problems = validate(spec={}, groups=groups, max_hosts={"storage_nodes": 1, "lvs_director": 1})
    assert problems == ["inventory group storage_nodes has 2 hosts (s1, s2), but the experiment uses 1: keep one host "
                        "in the group (or make an inventory per node)."]


def test_a_host_in_two_parts_is_refused():
    groups = {"lvs_director": ["d1"], "lvs_real_servers": ["d1", "w1"], "lvs_clients": ["c1"]}
    problems = validate(spec={}, groups=groups, exclusive_groups=[["lvs_director", "lvs_real_servers", "lvs_clients"]])
    assert problems == ["host d1 is in lvs_director and lvs_real_servers: each host plays one part in this experiment; "
                        "give each group its own host."]


def test_two_hosts_with_the_same_address_are_refused():
    groups = {"lvs_real_servers": ["w1", "w2", "w3"]}
    hosts = {"w1": {"lvs_rip": "10.0.2.11"}, "w2": {"lvs_rip": "10.0.2.11"}, "w3": {"lvs_rip": "10.0.2.13"}}
    req = [{"group": "lvs_real_servers", "var": "lvs_rip", "check": "ipv4", "unique": True}]
    assert check_host_vars(groups, req, hosts) == [
        "lvs_rip is 10.0.2.11 on w1 and w2 (group lvs_real_servers): each host needs its own; fix it in your inventory."]
    hosts["w2"]["lvs_rip"] = "10.0.2.12"
    assert check_host_vars(groups, req, hosts) == []


def test_builder_roles_settings_are_checked_without_their_required_flags():
    builder = {"argument_specs": {
        "main": {"options": {"lvs_director_scheduler": {"type": "str", "required": True},
                             "lvs_director_forwarding": {"type": "str", "choices": ["nat", "dr", "tun"]}}},
        "switch": {"options": {"lvs_director_switch_to": {"type": "str"}}}}}
    problems = validate(spec={}, values={"lvs_director_forwarding": "banana"},
                        all_vars=["lvs_director_shceduler", "lvs_director_switch_to"],
                        builder_specs={"lvs_director": builder})
    assert problems == [
        "lvs_director_forwarding is 'banana', which is not one of nat, dr, tun: set one of them in your inventory's "
        "group_vars or with -e lvs_director_forwarding=nat.",
        "unknown variable lvs_director_shceduler: did you mean lvs_director_scheduler? Rename it in your inventory's "
        "group_vars or with -e.",
    ]


def test_a_builder_spec_that_is_not_a_whole_file_is_the_authors_mistake():
    with pytest.raises(SpecError, match="builder role x must be a whole argument_specs.yml"):
        validate(spec={}, builder_specs={"x": {"options": {}}})


# --- builder roles' own constraints, allow_empty, cross-role host checks, assertions ---------------------------

BUILDER = {"argument_specs": {"main": {"options": {
    "lvs_director_vip": {"type": "str"},
    "lvs_director_port": {"type": "int"},
    "lvs_director_private_network": {"type": "str"},
}}}}
BUILDER_RULES = {"testbed_constraints": {
    "lvs_director_vip": {"format": "ipv4"},
    "lvs_director_port": {"minimum": 1, "maximum": 65535},
    "lvs_director_private_network": {"pattern": "[0-9.]+/[0-9]+", "pattern_meaning": "an IPv4 network",
                                     "allow_empty": True},
}}


def test_builder_roles_constraints_are_checked_too():
    problems = validate(spec={}, values={"lvs_director_vip": "not-an-ip", "lvs_director_port": 70000},
                        builder_specs={"lvs_director": BUILDER}, builder_constraints={"lvs_director": BUILDER_RULES})
    assert problems == [
        "lvs_director_port must be at most 65535, got 70000: fix it in your inventory's group_vars or with -e.",
        "lvs_director_vip is 'not-an-ip', not an IPv4 address such as 10.0.0.1: fix it in your inventory's group_vars "
        "or with -e.",
    ]


def test_the_experiments_constraints_win_over_a_builders():
    spec = {"lvs_director_port": {"type": "int"}}
    problems = validate(spec=spec, constraints={"lvs_director_port": {"maximum": 100}},
                        values={"lvs_director_port": 200}, builder_specs={"lvs_director": BUILDER},
                        builder_constraints={"lvs_director": BUILDER_RULES})
    assert problems == ["lvs_director_port must be at most 100, got 200: fix it in your inventory's group_vars or "
                        "with -e."]


def test_a_builders_constraint_for_an_unknown_setting_is_the_authors_mistake():
    with pytest.raises(SpecError, match="names lvs_director_vipp, which is not an option"):
        validate(spec={}, builder_specs={"lvs_director": BUILDER},
                 builder_constraints={"lvs_director": {"testbed_constraints": {"lvs_director_vipp": {"format": "ipv4"}}}})


def test_allow_empty_lets_the_empty_string_pass_but_not_a_wrong_value():
    rules = {"lvs_director_private_network": BUILDER_RULES["testbed_constraints"]["lvs_director_private_network"]}
    options = BUILDER["argument_specs"]["main"]["options"]
    assert check_values(options, {"lvs_director_private_network": ""}, rules) == []
    assert check_values(options, {"lvs_director_private_network": "10.0.2.0/24"}, rules) == []
    assert check_values(options, {"lvs_director_private_network": "lan"}, rules) == [
        "lvs_director_private_network is 'lan', not an IPv4 network: fix it in your inventory's group_vars or with -e."]
    with pytest.raises(SpecError, match="allow_empty must be true or false"):
        constraint_map({"lvs_director_vip": {"allow_empty": "yes"}}, options)


FORWARDING = [{"group": "lvs_real_servers", "var": "lvs_real_server_forwarding", "check": "equals", "default": "nat",
               "value": "dr", "value_var": "lvs_director_forwarding",
               "reason": "the director and its real servers must use one forwarding method"}]


def test_equals_names_every_host_that_differs_in_one_sentence_per_value():
    groups = {"lvs_real_servers": ["w1", "w2", "w3"]}
    hosts = {"w1": {}, "w2": {"lvs_real_server_forwarding": "dr"}, "w3": {"lvs_real_server_forwarding": "tun"}}
    assert check_host_vars(groups, FORWARDING, hosts) == [
        "lvs_real_server_forwarding of host w1 (group lvs_real_servers) is 'nat', but lvs_director_forwarding is 'dr': "
        "the director and its real servers must use one forwarding method; set both to the same value in your "
        "inventory's group_vars or with -e.",
        "lvs_real_server_forwarding of host w3 (group lvs_real_servers) is 'tun', but lvs_director_forwarding is 'dr': "
        "the director and its real servers must use one forwarding method; set both to the same value in your "
        "inventory's group_vars or with -e.",
    ]
    hosts = {"w1": {"lvs_real_server_forwarding": "dr"}, "w2": {"lvs_real_server_forwarding": "dr"},
             "w3": {"lvs_real_server_forwarding": "dr"}}
    assert check_host_vars(groups, FORWARDING, hosts) == []
    with pytest.raises(SpecError, match="needs value"):
        check_host_vars(groups, [{k: v for k, v in FORWARDING[0].items() if k != "value"}], hosts)


def test_differs_refuses_a_port_that_is_the_hosts_ansible_port():
    req = [{"group": "storage_nodes", "var": "storage_compare_oltp_port", "check": "differs", "other_var": "ansible_port",
            "default": 3307, "reason": "that is the port Ansible reaches the node through (ssh)"}]
    groups = {"storage_nodes": ["n1", "n2"]}
    hosts = {"n1": {"ansible_port": 3307}, "n2": {"ansible_port": 22, "storage_compare_oltp_port": 3307}}
    assert check_host_vars(groups, req, hosts) == [
        "storage_compare_oltp_port of host n1 (group storage_nodes) is 3307, the same as its ansible_port: that is the "
        "port Ansible reaches the node through (ssh); choose another value in your inventory's group_vars or with -e."]
    with pytest.raises(SpecError, match="needs other_var"):
        check_host_vars(groups, [dict(req[0], other_var="")], hosts)


def test_assertions_add_their_sentence_when_false():
    assertions = [{"that": True, "msg": "never shown"}, {"that": "false", "msg": "allow it with -e x=true."}]
    assert validate(spec={}, assertions=assertions) == ["allow it with -e x=true."]
    with pytest.raises(SpecError, match="needs that"):
        validate(spec={}, assertions=[{"msg": "no condition"}])
    with pytest.raises(SpecError, match="that must be true or false"):
        validate(spec={}, assertions=[{"that": "maybe", "msg": "m"}])


def test_values_other_hosts_see_are_checked_once_per_value_naming_the_hosts():
    options = {"x_root": {"type": "path"}, "x_port": {"type": "int"}}
    rules = {"x_root": {"format": "absolute_path"}, "x_port": {"maximum": 65535}}
    host_values = {"w1": {"x_root": "/"}, "w2": {"x_root": "/", "x_port": 80}, "w3": {"x_port": 70000, "y_other": 1}}
    assert validate(spec=options, constraints=rules, values={"x_port": 80}, host_values=host_values) == [
        "x_port of host w3 must be at most 65535, got 70000: fix it in your inventory's group_vars or with -e.",
        "x_root of host w1 and w2 is '/', not an absolute path other than / (the testbed mounts, writes and removes "
        "there): fix it in your inventory's group_vars or with -e.",
    ]
