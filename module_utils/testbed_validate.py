# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check an experiment's input on the controller before anything is built.

Pure functions (pytest imports them without a host); ``library/experiment_validate.py``
is the thin module the ``testbed_validate`` role calls from a play on localhost.

Inputs:

* the experiment role's ``meta/argument_specs.yml`` (the whole file or the
  ``options`` mapping of one entry point): ``type``, ``elements``, ``choices``,
  ``required``, ``default`` and nested ``options`` of every experiment variable;
* the role's ``meta/testbed_constraints.yml`` companion file: range and list
  constraints per variable (``minimum``, ``maximum``, ``exclusive_minimum``,
  ``exclusive_maximum``, ``integer``, ``min_items``, ``max_items``, ``unique``),
  and for strings (or lists of them) ``pattern`` (a regular expression the whole
  value must match) with ``pattern_meaning`` (what it stands for, named in the
  sentence), ``format`` (``ipv4``: an IPv4 address; ``absolute_path``: an
  absolute path other than ``/``), ``allow_empty`` (an empty string, the
  setting's "none" or "automatic", passes the pattern and the format) and, for
  any scalar, ``not_in`` (values that are refused) with ``not_in_reason``.
  They live in their own file because ansible-lint's schema of argument_specs
  rejects unknown keys in an option and at the file's top level (ansible-core
  itself ignores both);
* the values as the play sees them, every visible variable name (to find
  misspelt ones by the experiment's prefixes), the ``groups`` magic variable and
  host variables of the hosts of some groups.

Every problem is one sentence naming the variable, what it is, what is
expected and how to fix it; :func:`validate` returns them all at once. The
vocabulary - constants, exceptions, :func:`describe`, :func:`convert` - is
``testbed_validate_values.py``, re-exported here.
Mistakes in the spec or the constraints themselves (the experiment author's,
not the operator's) raise :class:`SpecError`.
"""

from __future__ import absolute_import, division, print_function

import ipaddress
import json
import re

from ansible.module_utils.testbed_validate_values import (  # noqa: F401 (re-exported: the library's one import)
    CONSTRAINTS,
    DEFAULT_DOCS,
    ENTRY_POINT_KEYS,
    EXAMPLE_VALUES,
    FIX,
    FORMATS,
    HOST_CHECKS,
    LIST_CONSTRAINTS,
    NUMERIC_CONSTRAINTS,
    PLURAL_NAMES,
    TEXT_CONSTRAINTS,
    TYPES,
    UNCHECKED_TYPES,
    VALUE_CONSTRAINTS,
    SpecError,
    _Bad,
    _close,
    _did_you_mean,
    _json_example,
    _num,
    _short,
    convert,
    describe,
)

# --- reading the spec ------------------------------------------------------------------


def spec_options(spec, entry_point="main"):
    """The ``options`` mapping of ``spec``: a whole argument_specs.yml, one entry point or options."""
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise SpecError("the argument spec must be a mapping, got %s" % describe(spec))
    if "argument_specs" in spec:
        entries = spec["argument_specs"]
        if not isinstance(entries, dict) or entry_point not in entries:
            raise SpecError("argument_specs has no entry point %r (it has: %s)" % (
                entry_point, ", ".join(sorted(entries)) if isinstance(entries, dict) else "none"))
        spec = (entries[entry_point] or {}).get("options")
    elif isinstance(spec.get(entry_point), dict) and "options" in spec[entry_point]:
        spec = spec[entry_point]["options"]
    elif isinstance(spec.get("options"), dict) and set(spec) <= ENTRY_POINT_KEYS:
        spec = spec["options"]
    options = spec or {}
    _check_options(options, "")
    return options


def builder_options(builder_specs):
    """The options of the builder roles an experiment runs (role -> its whole argument_specs.yml).

    Every entry point's options, without ``required`` (the experiment's playbook
    passes some of them itself); with the role's prefix ``<role>_`` they let the
    check find a misspelt builder setting and a value of the wrong type or choice.
    """
    options, prefixes = {}, []
    for role, spec in sorted((builder_specs or {}).items()):
        if not isinstance(spec, dict) or not isinstance(spec.get("argument_specs"), dict):
            raise SpecError("the argument spec of builder role %s must be a whole argument_specs.yml" % role)
        for entry in spec["argument_specs"].values():
            for name, opt in ((entry or {}).get("options") or {}).items():
                if isinstance(opt, dict):
                    options.setdefault(name, dict((k, v) for k, v in opt.items() if k != "required"))
        prefixes.append(role + "_")
    _check_options(options, "")
    return options, prefixes


def builder_constraint_map(builder_constraints, options):
    """The builder roles' constraints (role -> its testbed_constraints.yml) as one mapping, checked like the experiment's."""
    merged = {}
    for role, constraints in sorted((builder_constraints or {}).items()):
        if constraints is None:
            continue
        if not isinstance(constraints, dict):
            raise SpecError("the constraints of builder role %s must be a mapping, got %s" % (role, describe(constraints)))
        for name, rules in constraint_map(constraints, options).items():
            merged.setdefault(name, rules)
    return merged


def _check_options(options, where):
    if not isinstance(options, dict):
        raise SpecError("options%s must be a mapping of option name to its spec" % where)
    for name, opt in options.items():
        if not isinstance(opt, dict):
            raise SpecError("option %s%s must be a mapping (type, description...)" % (where, name))
        for key in ("type", "elements"):
            kind = opt.get(key, "str" if key == "type" else None)
            if kind is not None and kind not in TYPES + UNCHECKED_TYPES:
                raise SpecError("option %s%s has %s %r; expected one of %s" % (
                    where, name, key, kind, ", ".join(TYPES)))
        if "choices" in opt and not isinstance(opt["choices"], list):
            raise SpecError("option %s%s: choices must be a list" % (where, name))
        if "options" in opt:
            _check_options(opt["options"], " of %s%s." % (where, name))


def constraint_map(constraints, options):
    """The constraints mapping (variable -> {minimum: ...}) checked against the spec's options."""
    if constraints is None:
        return {}
    if not isinstance(constraints, dict):
        raise SpecError("the constraints must be a mapping, got %s" % describe(constraints))
    if "testbed_constraints" in constraints:
        constraints = constraints["testbed_constraints"] or {}
        if not isinstance(constraints, dict):
            raise SpecError("testbed_constraints must be a mapping of variable name to its constraints")
    for name, rules in constraints.items():
        if name not in options:
            raise SpecError("testbed_constraints names %s, which is not an option of the argument spec%s" % (
                name, _did_you_mean(name, options)))
        if not isinstance(rules, dict):
            raise SpecError("testbed_constraints.%s must be a mapping (minimum, maximum...)" % name)
        kind = options[name].get("type", "str")
        target = options[name].get("elements") if kind == "list" else kind
        for key, limit in rules.items():
            if key not in CONSTRAINTS:
                raise SpecError("testbed_constraints.%s has unknown constraint %r; known: %s" % (
                    name, key, ", ".join(CONSTRAINTS)))
            if key in LIST_CONSTRAINTS and kind != "list":
                raise SpecError("testbed_constraints.%s.%s applies to lists, but %s is a %s" % (
                    name, key, name, kind))
            if key in NUMERIC_CONSTRAINTS and target not in ("int", "float"):
                raise SpecError("testbed_constraints.%s.%s applies to numbers (or lists of numbers), but %s is %s" % (
                    name, key, name, "a list of %s" % target if kind == "list" else "a %s" % kind))
            if key in TEXT_CONSTRAINTS and target not in ("str", "path"):
                raise SpecError("testbed_constraints.%s.%s applies to strings (or lists of strings), but %s is %s" % (
                    name, key, name, "a list of %s" % target if kind == "list" else "a %s" % kind))
            if key in TEXT_CONSTRAINTS + VALUE_CONSTRAINTS:
                _check_text_rule(name, key, limit)
                continue
            if key in ("integer", "unique"):
                if not isinstance(limit, bool):
                    raise SpecError("testbed_constraints.%s.%s must be true or false" % (name, key))
            elif key in ("min_items", "max_items"):
                if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
                    raise SpecError("testbed_constraints.%s.%s must be a whole number >= 0" % (name, key))
            elif isinstance(limit, bool) or not isinstance(limit, (int, float)):
                raise SpecError("testbed_constraints.%s.%s must be a number" % (name, key))
    return constraints


def _check_text_rule(name, key, limit):
    """The author's pattern/format/not_in rules are well formed."""
    if key == "pattern":
        try:
            re.compile(limit)
        except (re.error, TypeError) as exc:
            raise SpecError("testbed_constraints.%s.pattern is not a regular expression: %s" % (name, exc)) from None
    elif key == "format" and limit not in FORMATS:
        raise SpecError("testbed_constraints.%s.format is %r; known: %s" % (name, limit, ", ".join(FORMATS)))
    elif key == "not_in" and not isinstance(limit, list):
        raise SpecError("testbed_constraints.%s.not_in must be a list of refused values" % name)
    elif key == "allow_empty" and not isinstance(limit, bool):
        raise SpecError("testbed_constraints.%s.allow_empty must be true or false" % name)
    elif key in ("pattern_meaning", "not_in_reason") and not isinstance(limit, str):
        raise SpecError("testbed_constraints.%s.%s must be a sentence (a string)" % (name, key))


# --- checking values -------------------------------------------------------------------


def _list_example(opt, value):
    """A list to show in the fix of "must be a list": the string's comma-separated items, else the default."""
    elements = opt.get("elements")
    if isinstance(value, str) and value.strip():
        items = []
        for part in re.split(r"[,\s]+", value.strip().strip("[]")):
            if not part:
                continue
            try:
                items.append(convert(part.strip("'\""), elements) if elements else part)
            except _Bad:
                items.append(part.strip("'\""))
        if items:
            return items
    default = opt.get("default")
    if isinstance(default, list) and default:
        return default
    return [EXAMPLE_VALUES.get(elements or "str", "item")]


def _scalar_example(opt, kind):
    default = opt.get("default")
    if default is not None and not (isinstance(default, str) and "{{" in default):
        try:
            return convert(default, kind)
        except _Bad:
            pass
    if opt.get("choices"):
        return opt["choices"][0]
    return EXAMPLE_VALUES.get(kind, "value")


def _fix(name, opt, kind):
    """How to fix ``name``: an -e example of the right shape, or group_vars."""
    if kind in ("list", "dict"):
        return "set it %s, e.g. %s" % (FIX, _json_example(name, _list_example(opt, None) if kind == "list" else {}))
    example = _scalar_example(opt, kind)
    if isinstance(example, bool):
        example = "true" if example else "false"
    return "set it %s %s=%s" % (FIX, name, example)


def check_value(name, opt, value, rules=None, top=True):
    """Problems (sentences) of one variable ``name`` = ``value`` against its option spec and rules."""
    problems = []
    kind = opt.get("type", "str")
    if value is None:
        if opt.get("required"):
            problems.append("%s is required but is null: %s." % (name, _fix(name, opt, kind)))
        return problems, None
    try:
        converted = convert(value, kind)
    except _Bad as bad:
        if kind == "list":
            elements = opt.get("elements")
            what = "a list of %s" % PLURAL_NAMES[elements] if elements in PLURAL_NAMES else "a list"
            example = _list_example(opt, value)
            fix = "give a list, e.g. %s, or a YAML list in your inventory's group_vars" % _json_example(name, example)
            if not top:
                fix = "write it as a list"
            problems.append("%s must be %s, got %s: %s." % (name, what, bad.got, fix))
        else:
            fix = _fix(name, opt, kind) if top else "fix it %s" % FIX
            problems.append("%s must be %s, got %s: %s." % (name, bad.expected, bad.got, fix))
        return problems, None
    rules = rules or {}
    if kind == "list":
        items = []
        elements = opt.get("elements")
        for index, item in enumerate(converted, 1):
            label = "%s item %d" % (name, index)
            if elements and elements not in ("raw",) + UNCHECKED_TYPES:
                try:
                    item = convert(item, elements)
                except _Bad as bad:
                    problems.append("%s must be %s, got %s: fix the list %s." % (label, bad.expected, bad.got, FIX))
                    items.append(None)
                    continue
            if item is None:
                problems.append("%s is null: fix the list %s." % (label, FIX))
                items.append(None)
                continue
            problems.extend(_check_choices(label, opt, item, name))
            problems.extend(_check_numbers(label, item, rules, name))
            problems.extend(_check_text(label, item, rules, name))
            if elements == "dict" and "options" in opt:
                problems.extend(_check_suboptions(label, opt["options"], item))
            items.append(item)
        problems.extend(_check_list_rules(name, converted, items, rules))
        return problems, items
    problems.extend(_check_choices(name, opt, converted, name))
    problems.extend(_check_numbers(name, converted, rules, name))
    problems.extend(_check_text(name, converted, rules, name))
    if kind == "dict" and "options" in opt:
        problems.extend(_check_suboptions(name, opt["options"], converted))
    return problems, converted


def _check_choices(label, opt, value, name):
    choices = opt.get("choices")
    if not choices:
        return []
    kind = opt.get("elements") if opt.get("type") == "list" else opt.get("type", "str")
    allowed = []
    for choice in choices:
        try:
            allowed.append(convert(choice, kind) if kind else choice)
        except _Bad:
            allowed.append(choice)
    if value in allowed:
        return []
    hint = _did_you_mean(value, [str(c) for c in choices])
    shown = ", ".join(str(c) for c in choices)
    if label == name:
        return ["%s is %s, which is not one of %s%s: set one of them %s %s=%s." % (
            name, _short(repr(value)), shown, hint, FIX, name, choices[0])]
    return ["%s is %s, which is not one of %s%s: fix the list %s." % (
        label, _short(repr(value)), shown, hint, FIX)]


def _check_numbers(label, value, rules, name):
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return []
    problems = []
    where = "fix it %s" % FIX if label == name else "fix the list %s" % FIX
    if rules.get("integer") and isinstance(value, float) and not value.is_integer():
        problems.append("%s must be a whole number, got %s: %s." % (label, _num(value), where))
    for key, word in (("minimum", "at least"), ("exclusive_minimum", "greater than"),
                      ("maximum", "at most"), ("exclusive_maximum", "less than")):
        if key not in rules:
            continue
        limit = rules[key]
        bad = {"minimum": value < limit, "exclusive_minimum": value <= limit,
               "maximum": value > limit, "exclusive_maximum": value >= limit}[key]
        if bad:
            problems.append("%s must be %s %s, got %s: %s." % (label, word, _num(limit), _num(value), where))
    return problems


def _check_text(label, value, rules, name):
    """pattern, format and not_in: one sentence each, naming what the value should be."""
    where = "fix it %s" % FIX if label == name else "fix the list %s" % FIX
    if "not_in" in rules and value in rules["not_in"]:
        reason = rules.get("not_in_reason") or "that value is refused"
        return ["%s is %s: %s; %s." % (label, _short(repr(value)), reason, where)]
    if not isinstance(value, str) or (value == "" and rules.get("allow_empty")):
        return []
    if "pattern" in rules and not re.fullmatch(rules["pattern"], value):
        meaning = rules.get("pattern_meaning") or "a value matching %s" % rules["pattern"]
        return ["%s is %s, not %s: %s." % (label, _short(repr(value)), meaning, where)]
    form = rules.get("format")
    if form == "ipv4" and _ipv4(value) is None:
        return ["%s is %s, not %s: %s." % (label, _short(repr(value)), FORMATS[form], where)]
    if form == "absolute_path" and (not value.startswith("/") or value.rstrip("/") == ""):
        return ["%s is %s, not %s (the testbed mounts, writes and removes there): %s." % (
            label, _short(repr(value)), FORMATS[form], where)]
    return []


def _check_list_rules(name, raw, items, rules):
    problems = []
    if "min_items" in rules and len(raw) < rules["min_items"]:
        problems.append("%s must have at least %d item%s, got %s: %s." % (
            name, rules["min_items"], "" if rules["min_items"] == 1 else "s", describe(raw),
            "set it %s, e.g. -e '%s'" % (FIX, json.dumps({name: ["..."]})) if not raw else "fix it %s" % FIX))
    if "max_items" in rules and len(raw) > rules["max_items"]:
        problems.append("%s must have at most %d items, got %d: fix it %s." % (
            name, rules["max_items"], len(raw), FIX))
    if rules.get("unique"):
        seen, repeated = [], []
        for item in items:
            if item is None:
                continue
            key = json.dumps(item, sort_keys=True, default=str)
            if key in seen and item not in repeated:
                repeated.append(item)
            seen.append(key)
        if repeated:
            problems.append("%s must not repeat items, got %s more than once: remove the repeats %s." % (
                name, ", ".join(_short(repr(item)) for item in repeated), FIX))
    return problems


def _check_suboptions(label, options, mapping):
    problems = []
    for key in sorted(set(mapping) - set(options), key=str):
        problems.append("%s has unknown key %s%s; known keys: %s: fix it %s." % (
            label, key, _did_you_mean(key, options), ", ".join(sorted(options)), FIX))
    for key, opt in options.items():
        if key not in mapping:
            if opt.get("required"):
                problems.append("%s has no %s, which is required: add it %s." % (label, key, FIX))
            continue
        found, _problems = check_value("%s.%s" % (label, key), opt, mapping[key], top=False)
        problems.extend(found)
    return problems


def check_values(options, values, constraints=None):
    """Problems of every variable of the spec; ``values`` holds the variables that are defined."""
    values = values or {}
    rules = constraint_map(constraints, options)
    problems = []
    for name in sorted(options):
        opt = options[name]
        if name not in values:
            if opt.get("required"):
                problems.append("%s is required but not set: %s." % (name, _fix(name, opt, opt.get("type", "str"))))
            continue
        found, _problems = check_value(name, opt, values[name], rules.get(name))
        problems.extend(found)
    return problems


def check_host_values(options, values, host_values, constraints=None):
    """The settings other hosts see differently (their group_vars, host_vars): each distinct value checked once.

    ``host_values`` is host -> {name: value} for the spec's names a host of the experiment defines;
    a value equal to the play's own (``values``, already checked) is skipped. A problem names the
    hosts: "lvs_real_server_document_root of host w1 and w2 is '/', ...".
    """
    values = values or {}
    rules = constraint_map(constraints, options)
    owners = {}
    for host in sorted(host_values or {}):
        for name, value in sorted((host_values[host] or {}).items()):
            if name not in options or (name in values and values[name] == value):
                continue
            key = (name, json.dumps(value, sort_keys=True, default=str))
            owners.setdefault(key, (value, []))[1].append(host)
    problems = []
    for (name, _key), (value, hosts) in sorted(owners.items()):
        found, _converted = check_value(name, options[name], value, rules.get(name))
        where = "%s of host %s" % (name, " and ".join(hosts))
        problems.extend(sentence.replace(name, where, 1) for sentence in found)
    return problems


def check_unknown(options, all_vars, prefixes, known=(), docs=None):
    """Visible variables with one of the experiment's prefixes that the spec does not declare."""
    problems = []
    if not prefixes:
        return problems
    allowed = set(options) | set(known or ())
    for name in sorted(set(str(v) for v in all_vars or ())):
        if name in allowed or not any(name.startswith(p) for p in prefixes):
            continue
        match = _close(name, sorted(options), prefixes)
        if match:
            problems.append("unknown variable %s: did you mean %s? Rename it %s." % (
                name, " or ".join(match), FIX))
        else:
            problems.append("unknown variable %s: the experiment has no such setting; remove it and see %s "
                            "for the valid names." % (name, docs or DEFAULT_DOCS))
    return problems


def check_required_vars(names, values):
    """Variables that must be defined and non-empty (the role's testbed_validate_required_vars)."""
    problems = []
    for name in names or ():
        value = (values or {}).get(name)
        if name not in (values or {}) or value is None or (hasattr(value, "__len__") and len(value) == 0):
            problems.append("%s is not set: set it %s %s=<value>." % (name, FIX, name))
    return problems


def check_groups(groups, required):
    """Required inventory groups must exist and have at least one host."""
    problems = []
    groups = groups or {}
    for name in required or ():
        if name not in groups:
            close = _did_you_mean(name, [g for g in groups if g not in ("all", "ungrouped")])
            problems.append("inventory group %s does not exist%s: add it with its hosts to your inventory "
                            "(see inventories/example_hardware/hosts.yml)." % (name, close))
        elif not groups[name]:
            problems.append("inventory group %s has no hosts: add the hosts under it in your inventory "
                            "(see inventories/example_hardware/hosts.yml)." % name)
    return problems


def check_group_sizes(groups, max_hosts):
    """Groups the experiment uses only part of: more hosts than it uses is an error, not a silent choice."""
    problems = []
    for name, limit in sorted((max_hosts or {}).items()):
        hosts = list((groups or {}).get(name) or ())
        if len(hosts) > limit:
            problems.append("inventory group %s has %d hosts (%s), but the experiment uses %d: keep %s in the group "
                            "(or make an inventory per node)." % (
                                name, len(hosts), ", ".join(hosts), limit,
                                "one host" if limit == 1 else "at most %d hosts" % limit))
    return problems


def check_exclusive_groups(groups, exclusive):
    """A host may play one part only: a host in two groups of one set is named."""
    problems = []
    for names in exclusive or ():
        seen = {}
        for name in names:
            for host in (groups or {}).get(name) or ():
                seen.setdefault(host, []).append(name)
        for host, where in sorted(seen.items()):
            if len(where) > 1:
                problems.append("host %s is in %s: each host plays one part in this experiment; give each group "
                                "its own host." % (host, " and ".join(where)))
    return problems


def _network(req):
    """The IPv4 network of an ipv4_in_network requirement; (network, problem)."""
    value = req.get("network")
    source = req.get("network_var")
    label = source if source else "the network for %s" % req["var"]
    if value is None or value == "":
        return None, "%s is not set, so %s of group %s cannot be checked: set it %s." % (
            label, req["var"], req["group"], FIX)
    text = str(value).strip()
    if "/" not in text and req.get("prefix_length") is not None:
        text = "%s/%s" % (text, req["prefix_length"])
    if "/" not in text:
        raise SpecError("the ipv4_in_network check of %s (group %s) got %s without a prefix length; "
                        "pass network as address/prefix or give prefix_length" % (req["var"], req["group"], text))
    try:
        return ipaddress.IPv4Network(text, strict=False), None
    except ValueError:
        return None, "%s is %s, not an IPv4 network (address/prefix such as 10.0.2.0/24): set it %s." % (
            label, describe(value), FIX)


def _ipv4(value):
    try:
        return ipaddress.IPv4Address(str(value).strip())
    except ValueError:
        return None


def _unique_host_values(group_hosts, hosts, var, group):
    owners = {}
    for host in group_hosts:
        value = (hosts.get(host) or {}).get(var)
        if value not in (None, ""):
            owners.setdefault(str(value).strip(), []).append(host)
    return ["%s is %s on %s (group %s): each host needs its own; fix it in your inventory." % (
        var, value, " and ".join(names), group) for value, names in sorted(owners.items()) if len(names) > 1]


_UNSET = object()


def _host_value(host_values, var, req):
    """A host's ``var`` when it sets one (not null or empty), else the check's ``default``, else ``_UNSET``."""
    if var in host_values and host_values[var] not in (None, ""):
        return host_values[var]
    return req.get("default", _UNSET)


def _check_equal_host_values(group_hosts, hosts, req):
    """Each host's ``var`` (or ``default`` when it sets none) equals ``value`` (another role's setting)."""
    if "value" not in req:
        raise SpecError("the equals check of %s (group %s) needs value (and value_var)" % (req["var"], req["group"]))
    var, group, expected = req["var"], req["group"], req["value"]
    other = req.get("value_var") or "the expected value"
    reason = req.get("reason") or "the two settings must agree"
    differing = {}
    for host in group_hosts:
        host_values = hosts.get(host) or {}
        value = _host_value(host_values, var, req)
        if value is _UNSET:
            continue
        if str(value).strip() != str(expected).strip():
            differing.setdefault(str(value).strip(), []).append(host)
    # One sentence per differing value, naming every host that has it.
    return ["%s of host%s %s (group %s) is %s, but %s is %s: %s; set both to the same value %s." % (
        var, "s" if len(names) > 1 else "", " and ".join(names), group, _short(repr(value)), other,
        _short(repr(str(expected).strip())), reason, FIX) for value, names in sorted(differing.items())]


def _check_differing_host_values(group_hosts, hosts, req):
    """Each host's ``var`` (or ``default``) differs from the same host's ``other_var`` (e.g. a port vs ansible_port)."""
    if not req.get("other_var"):
        raise SpecError("the differs check of %s (group %s) needs other_var" % (req["var"], req["group"]))
    var, group, other = req["var"], req["group"], req["other_var"]
    reason = req.get("reason") or "the two must differ"
    problems = []
    for host in group_hosts:
        host_values = hosts.get(host) or {}
        value = _host_value(host_values, var, req)
        if value is _UNSET:
            continue
        if other in host_values and host_values[other] not in (None, "") \
                and str(value).strip() == str(host_values[other]).strip():
            problems.append("%s of host %s (group %s) is %s, the same as its %s: %s; choose another value %s." % (
                var, host, group, _short(repr(value)), other, reason, FIX))
    return problems


def check_host_vars(groups, requirements, hosts):
    """Host variables each host of a group must have (present, an IPv4 address, inside a network)."""
    problems = []
    groups = groups or {}
    hosts = hosts or {}
    for req in requirements or ():
        if not isinstance(req, dict) or not req.get("group") or not req.get("var"):
            raise SpecError("every host_vars requirement needs group and var, got %r" % (req,))
        check = req.get("check", "present")
        if check not in HOST_CHECKS:
            raise SpecError("host_vars check %r of %s is not one of %s" % (check, req["var"], ", ".join(HOST_CHECKS)))
        network = None
        if check == "ipv4_in_network":
            network, problem = _network(req)
            if problem:
                problems.append(problem)
                check = "ipv4"
        var, group = req["var"], req["group"]
        where = req.get("network_description") or "the network"
        if check == "equals":
            problems.extend(_check_equal_host_values(groups.get(group) or (), hosts, req))
            continue
        if check == "differs":
            problems.extend(_check_differing_host_values(groups.get(group) or (), hosts, req))
            continue
        if req.get("unique"):
            problems.extend(_unique_host_values(groups.get(group) or (), hosts, var, group))
        for host in groups.get(group) or ():
            host_values = hosts.get(host) or {}
            if var not in host_values or host_values[var] is None or host_values[var] == "":
                if req.get("required", True):
                    state = "has no" if var not in host_values else "has an empty"
                    problems.append("host %s of group %s %s %s: set it in your inventory (%s: {%s: ...}) or in "
                                    "host_vars/%s.yml." % (host, group, state, var, host, var, host))
                continue
            value = host_values[var]
            if check in ("ipv4", "ipv4_in_network"):
                address = _ipv4(value)
                if address is None:
                    problems.append("%s of host %s (group %s) is %s, not an IPv4 address: fix it in your "
                                    "inventory or host_vars/%s.yml." % (var, host, group, describe(value), host))
                    continue
                if network is not None and address not in network:
                    source = " (%s)" % req["network_var"] if req.get("network_var") else ""
                    problems.append("%s of host %s (group %s) is %s, outside %s %s%s: give the host an address in "
                                    "%s, or fix %s." % (var, host, group, address, where, network, source, network,
                                                        req.get("network_var") or "the network"))
    return problems


def check_assertions(assertions):
    """Conditions across settings that the play evaluated: ``[{that: bool, msg: sentence}]``; a false one is a problem."""
    problems = []
    for item in assertions or ():
        if not isinstance(item, dict) or "that" not in item or not item.get("msg"):
            raise SpecError("every assertion needs that (a condition) and msg (its sentence), got %r" % (item,))
        try:
            holds = convert(item["that"], "bool")
        except _Bad:
            raise SpecError("assertion %r: that must be true or false, got %s" % (item["msg"], describe(item["that"]))) from None
        if not holds:
            problems.append(str(item["msg"]).strip())
    return problems


def validate(spec=None, entry_point="main", constraints=None, values=None, all_vars=None, prefixes=None,
             known=None, required_vars=None, groups=None, required_groups=None, host_vars=None, hosts=None,
             docs=None, max_hosts=None, exclusive_groups=None, builder_specs=None, builder_constraints=None,
             assertions=None, host_values=None):
    """Every problem of an experiment's input, in a stable order: groups, host vars, variables."""
    options = spec_options(spec, entry_point)
    extra, builder_prefixes = builder_options(builder_specs)
    options = dict(extra, **options)
    rules = builder_constraint_map(builder_constraints, options)
    rules.update(constraint_map(constraints, options))
    prefixes = list(prefixes or ()) + [p for p in builder_prefixes if p not in (prefixes or ())]
    required_groups = list(required_groups or ())
    for req in host_vars or ():
        if isinstance(req, dict) and req.get("group") and req["group"] not in required_groups:
            required_groups.append(req["group"])
    problems = []
    problems.extend(check_groups(groups, required_groups))
    problems.extend(check_group_sizes(groups, max_hosts))
    problems.extend(check_exclusive_groups(groups, exclusive_groups))
    problems.extend(check_host_vars(groups, host_vars, hosts))
    problems.extend(check_required_vars(required_vars, values))
    problems.extend(check_values(options, values, rules))
    problems.extend(check_host_values(options, values, host_values, rules))
    problems.extend(check_unknown(options, all_vars, prefixes or (), known, docs))
    problems.extend(check_assertions(assertions))
    return problems


def format_message(problems, what="the experiment"):
    """One message listing every problem, one sentence per line."""
    if what.startswith("the "):
        what = "T" + what[1:]
    if not problems:
        return "%s: input is valid." % what
    head = "%s cannot start: %d problem%s with its input:" % (
        what, len(problems), "" if len(problems) == 1 else "s")
    return "\n".join([head] + ["- %s" % p for p in problems])
