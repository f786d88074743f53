#!/usr/bin/python
# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check an experiment's variables, inventory groups and host variables before anything is built."""

DOCUMENTATION = r"""
---
module: experiment_validate
short_description: Check an experiment's input on the controller and list every problem at once
description:
  - Checks the operator's input of an experiment against the experiment role's argument spec
    (C(roles/experiment_<name>/meta/argument_specs.yml)) and its companion constraints file
    (C(meta/testbed_constraints.yml)), the inventory groups the experiment needs and the host
    variables their hosts need, and fails with one message that lists every problem, one sentence
    each (the variable, what it is, what is expected, how to fix it).
  - "Variables: C(type) (C(str), C(int), C(float), C(bool), C(list), C(dict), C(path), C(raw)) with
    Ansible's conversions for scalars (C(-e rate=50) gives the string C(50), accepted for an C(int)),
    but strict for lists and mappings: a string where a list is expected is an error, never split;
    C(elements) for each item of a list; C(choices) (for a list, for each item); C(required);
    nested C(options) of a mapping or of a list of mappings (unknown keys are reported)."
  - "Constraints (C(testbed_constraints) mapping, variable -> rules): C(minimum), C(maximum),
    C(exclusive_minimum), C(exclusive_maximum) and C(integer) (no fractional part) for numbers, and
    for each item of a list of numbers; C(min_items), C(max_items) and C(unique) for lists. They live
    beside the spec because ansible-lint's schema of argument_specs.yml rejects unknown keys in an
    option and at the top level of the file (ansible-core ignores them)."
  - Variables whose name starts with one of I(prefixes) but that the spec does not declare are
    reported as unknown, with the closest declared name (C(did you mean lvs_compare_rates?)).
  - "Only reads its input; runs on the controller (C(delegate_to: localhost), C(run_once: true)).
    The C(testbed_validate) role (C(roles/testbed_validate)) gathers the input and calls it."
version_added: "1.0.0"
author: Testbed contributors
options:
  spec:
    description:
      - The experiment role's argument spec - the whole C(meta/argument_specs.yml) mapping (the entry
        point I(entry_point) is used), one entry point's mapping, or its C(options) mapping.
    type: dict
    default: {}
  entry_point:
    description: Entry point of I(spec) whose options are checked.
    type: str
    default: main
  constraints:
    description:
      - Range and list constraints, the whole C(meta/testbed_constraints.yml) mapping (key
        C(testbed_constraints)) or the mapping under that key. Every name must be an option of the spec.
    type: dict
    default: {}
  values:
    description:
      - The value of every variable of the spec that is defined, as the play sees it (templated).
        A variable missing here is not set; a required one is then a problem.
    type: dict
    default: {}
  all_vars:
    description: Names of every visible variable, searched for names with one of I(prefixes).
    type: list
    elements: str
    default: []
  prefixes:
    description: The experiment's variable prefixes, e.g. C([lvs_compare_]).
    type: list
    elements: str
    default: []
  known:
    description: Names with one of I(prefixes) that are not in the spec but are not errors (derived variables).
    type: list
    elements: str
    default: []
  required_vars:
    description: Variables (names) that must be defined and non-empty; their values are in I(values).
    type: list
    elements: str
    default: []
  groups:
    description: The C(groups) magic variable (group name -> host names).
    type: dict
    default: {}
  required_groups:
    description:
      - Inventory groups that must exist and have at least one host. The groups of I(host_vars)
        are required too.
    type: list
    elements: str
    default: []
  host_vars:
    description:
      - Host variables every host of a group must have, each a mapping with C(group) and C(var),
        C(check) (C(present), the default; C(ipv4); C(ipv4_in_network); C(equals); or C(differs)), C(required) (default
        true; false checks only the hosts that define it), and for C(ipv4_in_network) C(network)
        (C(address/prefix), or an address plus C(prefix_length)), C(network_var) (the variable
        that gave it, named in the message) and C(network_description) (for example
        C(the director's private network)). C(unique) true also refuses two hosts of the group with the same value.
        C(equals) compares each host's value (or C(default) when the host sets none) with C(value), another role's
        setting named by C(value_var), and says C(reason) when they differ (a cross-role check). C(differs) refuses
        a host whose value (or C(default)) equals its own C(other_var), for example a service port that is the
        host's C(ansible_port).
    type: list
    elements: dict
    default: []
  builder_specs:
    description:
      - Builder role name -> its whole C(meta/argument_specs.yml). Their options (every entry point, C(required)
        ignored) are checked too, and C(<role>_) is one more prefix for misspelt names.
    type: dict
    default: {}
  builder_constraints:
    description:
      - Builder role name -> its C(meta/testbed_constraints.yml) (when it has one), the ranges, patterns, formats
        and refused values of the builder's settings, in the experiment constraints' format (the experiment's own
        constraints win for a name both declare).
    type: dict
    default: {}
  host_values:
    description:
      - Host name -> the spec's (and the builders') variables that host defines, as it sees them (its group_vars
        and host_vars). A value that differs from I(values) is checked too, once per distinct value, and a
        problem names the hosts that have it.
    type: dict
    default: {}
  assertions:
    description:
      - Conditions across settings, evaluated by the play, each C({that, msg}); when C(that) is false, C(msg) (one
        sentence that says what to change) is one more problem.
    type: list
    elements: dict
    default: []
  max_hosts:
    description:
      - Group name -> the most hosts of it the experiment uses; a group with more is refused (no host is silently
        left out).
    type: dict
    default: {}
  exclusive_groups:
    description:
      - Lists of groups whose hosts play different parts; a host in two groups of one list is refused.
    type: list
    elements: list
    default: []
  hosts:
    description: Host name -> the host's variables named in I(host_vars) that it defines.
    type: dict
    default: {}
  experiment:
    description: Name of the experiment, the subject of the failure message.
    type: str
    default: the experiment
  docs:
    description: Where the valid variable names are documented, named when an unknown variable has no close match.
    type: str
    default: the experiment role's README.md
attributes:
  check_mode:
    support: full
    description: It only reads its input; check mode does the same checks.
notes:
  - "A mistake in the spec or the constraints themselves (unknown type, a constraint for a
    variable the spec does not declare) fails with C(experiment_validate: the argument spec ...)."
seealso:
  - name: Role argument validation
    description: Ansible's own check of a role's argument_specs.yml when the role runs.
    link: https://docs.ansible.com/ansible/latest/playbook_guide/playbooks_reuse_roles.html#role-argument-validation
"""

EXAMPLES = r"""
- name: Check the input of the LVS comparison
  experiment_validate:
    experiment: lvs_compare
    spec: "{{ lookup('ansible.builtin.file', 'roles/experiment_lvs_compare/meta/argument_specs.yml') | from_yaml }}"
    constraints: "{{ lookup('ansible.builtin.file', 'roles/experiment_lvs_compare/meta/testbed_constraints.yml') | from_yaml }}"
    values: "{{ dict(__names | zip(query('ansible.builtin.vars', *__names))) }}"
    all_vars: "{{ query('ansible.builtin.varnames', '^lvs_compare_') }}"
    prefixes: [lvs_compare_]
    groups: "{{ groups }}"
    required_groups: [lvs_director, lvs_real_servers, lvs_clients]
    host_vars:
      - group: lvs_real_servers
        var: lvs_rip
        check: ipv4_in_network
        network: "{{ lab_director_private_address }}"
        prefix_length: 24
        network_var: lab_director_private_address
        network_description: the director's private network
    hosts: "{{ dict(groups['lvs_real_servers'] | zip(groups['lvs_real_servers'] | map('extract', hostvars))) }}"
  vars:
    __names: "{{ ['lvs_compare_rates', 'lvs_compare_schedulers'] | select('in', query('ansible.builtin.varnames', '.+')) }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
problems:
  description: Every problem found, one sentence each (empty when the input is valid).
  returned: always
  type: list
  elements: str
  sample:
    - "lvs_compare_rates must be a list of integers, got the string '50,100': give a list, e.g.
      -e '{\"lvs_compare_rates\": [50, 100]}', or a YAML list in your inventory's group_vars."
    - "unknown variable lvs_compare_rate: did you mean lvs_compare_rates? Rename it in your inventory's
      group_vars or with -e."
checked:
  description: Names of the spec's variables that were set and checked.
  returned: always
  type: list
  elements: str
  sample: [lvs_compare_rates, lvs_compare_schedulers]
msg:
  description: The problems as one message (a heading and one line per problem), or that the input is valid.
  returned: always
  type: str
  sample: "lvs_compare: input is valid."
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402 (Ansible modules import after their documentation)
from ansible.module_utils.testbed_validate import (  # noqa: E402
    SpecError,
    builder_options,
    format_message,
    spec_options,
    validate,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            spec=dict(type="dict", default={}),
            entry_point=dict(type="str", default="main"),
            constraints=dict(type="dict", default={}),
            values=dict(type="dict", default={}),
            all_vars=dict(type="list", elements="str", default=[]),
            prefixes=dict(type="list", elements="str", default=[]),
            known=dict(type="list", elements="str", default=[]),
            required_vars=dict(type="list", elements="str", default=[]),
            groups=dict(type="dict", default={}),
            required_groups=dict(type="list", elements="str", default=[]),
            host_vars=dict(type="list", elements="dict", default=[]),
            hosts=dict(type="dict", default={}),
            max_hosts=dict(type="dict", default={}),
            builder_specs=dict(type="dict", default={}),
            builder_constraints=dict(type="dict", default={}),
            assertions=dict(type="list", elements="dict", default=[]),
            host_values=dict(type="dict", default={}),
            exclusive_groups=dict(type="list", elements="list", default=[]),
            experiment=dict(type="str", default="the experiment"),
            docs=dict(type="str", default="the experiment role's README.md"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        options = spec_options(p["spec"], p["entry_point"])
        problems = validate(
            spec=options, constraints=p["constraints"], values=p["values"], all_vars=p["all_vars"],
            prefixes=p["prefixes"], known=p["known"], required_vars=p["required_vars"], groups=p["groups"],
            required_groups=p["required_groups"], host_vars=p["host_vars"], hosts=p["hosts"], docs=p["docs"],
            max_hosts=p["max_hosts"], exclusive_groups=p["exclusive_groups"], builder_specs=p["builder_specs"],
            builder_constraints=p["builder_constraints"], assertions=p["assertions"], host_values=p["host_values"])
    except SpecError as exc:
        module.fail_json(msg="experiment_validate: the argument spec or constraints of %s are unusable: %s"
                         % (p["experiment"], exc), problems=[])
    checked = sorted(name for name in list(options) + list(builder_options(p["builder_specs"])[0])
                     if name in (p["values"] or {}))
    message = format_message(problems, p["experiment"])
    if problems:
        module.fail_json(msg=message, problems=problems, checked=checked)
    module.exit_json(changed=False, msg=message, problems=[], checked=checked)


if __name__ == "__main__":
    main()
