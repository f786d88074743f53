# Copyright: contributors to the infrastructure testbed
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a run came from: the testbed's own version, the command, the controller's software.

Pure apart from the git queries (each bounded to 10 s). Used on the controller
by the ``testbed_provenance`` lookup (roles/testbed_sweep), which hands it the
running ansible-playbook's argv and extra vars; the result store keeps it in
run.json and in every point document, and the report prints it.

Secrets are never kept (``redact_args``, ``redact_extra_var``): the command and
the extra vars are stored with the *value* of every secret replaced by
``<redacted>``; the names stay. A value is secret when

* its variable's name is a secret name (``is_secret_name``): one of Ansible's
  connection, become and vault password variables (``SECRET_VARIABLES``); or a
  name containing, case-insensitively and with ``-``/``.``/spaces read as
  ``_``, one of ``SECRET_PARTS`` (password, passwd, secret, token, private_key,
  api_key, secret_key, access_key, keyring, passphrase, credential, and their
  camelCase spellings such as apiKey); or a name with one of
  ``SECRET_WORDS`` (key, pass, pwd, pw) as a whole word - words are split at
  non-alphanumerics and camelCase humps, so ``ssh_key``, ``db_pass`` and
  ``sshKey`` are secret but ``monkey``, ``segment_keys``, ``keyboard`` and
  ``passes`` are not. A secret name's whole value (a nested mapping too) goes;
* or it is vault-encrypted, whatever its name: a string starting with
  ``$ANSIBLE_VAULT;``, a ``!vault`` YAML value, an ``{"__ansible_vault": ...}``
  JSON value, an AnsibleVaultEncryptedUnicode/EncryptedString object or a
  string Ansible tagged as decrypted from a vault;
* or it is a URL with a password in it (``scheme://user:password@host``).

Every form of ``-e``/``--extra-vars`` is covered: ``key=value`` pairs (parsed
with Ansible's own ``parse_kv`` on the controller, else an equivalent
splitter; the tokens without a secret are kept as typed), a JSON or YAML
mapping (redacted recursively and stored as compact JSON, so nothing outside
the data - a YAML comment - is kept either) and ``@file`` (only the name is
stored, never the file's content). An argument that cannot be parsed is stored
as ``<redacted>`` as a whole. In argv, ``-e X``, ``-eX`` (also after other
short flags, ``-ve X``), ``--extra-vars X``, ``--extra-vars=X`` and their
argparse abbreviations (``--extra X``) are found. ansible-playbook has no
option that takes a secret itself (passwords come from prompts or from the
``--*-password-file`` options, whose values are file names), so the other
options are kept as they are. A string value that is itself a JSON/YAML
mapping is looked into as well. The redaction is idempotent: the result store
(``open_run``) applies it again to any provenance it is given, and
``describe`` to a command stored before it existed.
"""

import json
import os
import platform
import re
import subprocess
import sys

PROVENANCE_KEYS = ("testbed", "command", "extra_vars", "cwd", "ansible_core_version", "collections",
                   "python_version", "controller")

REDACTED = "<redacted>"
VAULT_HEADER = "$ANSIBLE_VAULT;"
# Ansible's connection, become and vault password variables (most are also caught by SECRET_PARTS).
SECRET_VARIABLES = frozenset((
    "ansible_password", "ansible_ssh_pass", "ansible_ssh_password", "ansible_become_password", "ansible_become_pass",
    "ansible_become_passwd", "ansible_sudo_pass", "ansible_sudo_password", "ansible_su_pass", "ansible_su_password",
    "ansible_vault_password", "ansible_ssh_private_key_passphrase", "ansible_private_key_passphrase",
    "ansible_paramiko_pass", "ansible_paramiko_password", "ansible_httpapi_pass", "ansible_httpapi_password",
    "ansible_winrm_pass", "ansible_winrm_password", "ansible_enable_pass", "ansible_net_auth_pass"))
# A name containing one of these (lower case, separators read as "_") is secret ...
SECRET_PARTS = ("password", "passwd", "secret", "token", "private_key", "privatekey", "api_key", "apikey",
                "secret_key", "secretkey", "access_key", "accesskey", "keyring", "passphrase", "credential")
# ... and so is one with one of these as a whole word.
SECRET_WORDS = frozenset(("key", "pass", "pwd", "pw"))
# Types whose values are vault-encrypted (ansible-core up to 2.18, and 2.19's EncryptedString).
VAULT_TYPES = frozenset(("AnsibleVaultEncryptedUnicode", "_AnsibleVaultEncryptedUnicode", "EncryptedString"))
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")

# ansible-playbook's options that take a value (argparse; tests/unit/test_provenance_redact.py checks this
# against ansible-core's own parser). A short one can end a cluster of flags (-vvve X, -vex=1).
SHORT_WITH_VALUE = frozenset("ucTtilefM")
SHORT_FLAGS = frozenset("hvkbKCDJ")
LONG_WITH_VALUE = (
    "--private-key", "--key-file", "--user", "--connection", "--timeout", "--ssh-common-args", "--sftp-extra-args",
    "--scp-extra-args", "--ssh-extra-args", "--connection-password-file", "--conn-pass-file", "--become-method",
    "--become-user", "--become-password-file", "--become-pass-file", "--tags", "--skip-tags", "--inventory",
    "--inventory-file", "--limit", "--extra-vars", "--vault-id", "--vault-password-file", "--vault-pass-file",
    "--forks", "--module-path", "--start-at-task")
LONG_FLAGS = (
    "--help", "--version", "--verbose", "--ask-pass", "--force-handlers", "--become", "--ask-become-pass", "--check",
    "--diff", "--list-hosts", "--flush-cache", "--ask-vault-password", "--ask-vault-pass", "--syntax-check",
    "--list-tasks", "--list-tags", "--step")


def is_secret_name(name):
    """True when a variable called ``name`` holds a secret (the rule: this module's docstring)."""
    text = str(name)
    lowered = text.lower()
    if lowered in SECRET_VARIABLES:
        return True
    if any(part in re.sub(r"[^a-z0-9]+", "_", lowered) for part in SECRET_PARTS):
        return True
    return any(word in SECRET_WORDS for word in re.split(r"[^a-z0-9]+", _CAMEL.sub(r"\1_\2", text).lower()))


def is_vaulted(value):
    """True for a vault-encrypted value: an encrypted object, a string tagged as vaulted, vault text."""
    if any(cls.__name__ in VAULT_TYPES for cls in type(value).__mro__):
        return True  # checked by type only: touching an EncryptedString's text would decrypt it
    tags = getattr(value, "_ansible_tags_mapping", None)
    try:
        if tags and any(getattr(tag, "__name__", "") == "VaultedValue" for tag in tags):
            return True
    except TypeError:
        pass
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return isinstance(value, str) and value.lstrip().startswith(VAULT_HEADER)


def _secret_value(value):
    """True when a value must go whatever its name: vaulted, or a URL with a password."""
    return is_vaulted(value) or (isinstance(value, str) and _URL_PASSWORD.search(value) is not None)


class _Vaulted(object):
    """What a ``!vault`` YAML value is read as (it is redacted, never decrypted)."""


def _load_mapping_text(text):
    """A JSON or YAML text as data (``!vault`` -> _Vaulted, ``!unsafe`` -> the plain value); ValueError when unreadable."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        import yaml
    except ImportError:
        raise ValueError("not JSON, and PyYAML is not importable") from None

    class Loader(yaml.SafeLoader):
        pass

    def vaulted(loader, node):
        return _Vaulted()

    def unsafe(loader, node):
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_scalar(node)

    for tag in ("!vault", "!vault-encrypted"):
        Loader.add_constructor(tag, vaulted)
    Loader.add_constructor("!unsafe", unsafe)
    try:
        return yaml.load(text, Loader=Loader)  # a SafeLoader with two more tags
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def redact_data(data):
    """``data`` (parsed extra vars) with every secret value replaced by REDACTED, recursively; a new object."""
    if isinstance(data, _Vaulted) or _secret_value(data):
        return REDACTED
    if isinstance(data, dict):
        return {key: REDACTED if is_secret_name(key) else redact_data(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_data(item) for item in data]
    if isinstance(data, str) and data[:1] in ("{", "["):
        # a mapping written into a string value (-e 'creds={"password": "x"}') is looked into as well
        try:
            parsed = _load_mapping_text(data)
        except ValueError:
            return data
        redacted = redact_data(parsed)
        return data if redacted == parsed else _compact(redacted)
    return data


def _compact(data):
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)


def _ansible_splitter():
    """Ansible's ``ansible.parsing.splitter`` where it is loaded already (ansible-playbook, where the lookup
    runs), else None.

    Never imported here: in a module (the result store redacts again) importing controller code next to the
    module's own copy of ansible.module_utils breaks it, and ansible-test sanity allows module_utils no
    ansible import but ansible.module_utils. The fallback follows the same rules.
    """
    return sys.modules.get("ansible.parsing.splitter")


def _split_kv(text):
    """Ansible's ``split_args`` on the controller, else an equivalent whitespace/quote-aware splitter."""
    splitter = _ansible_splitter()
    if splitter is not None:
        return splitter.split_args(text)
    tokens, current, quote, escaped = [], "", None, False
    for char in text:
        if escaped:
            current, escaped = current + char, False
        elif char == "\\":
            current, escaped = current + char, True
        elif quote:
            current += char
            quote = None if char == quote else quote
        elif char in "\"'":
            current, quote = current + char, char
        elif char.isspace():
            if current:
                tokens.append(current)
            if char == "\n" and tokens and not tokens[-1].endswith("\n"):
                tokens[-1] += "\n"  # as split_args: a line's last token keeps its newline
            current = ""
        else:
            current += char
    if quote:
        raise ValueError("unbalanced quotes")
    if current:
        tokens.append(current)
    return tokens


def _parse_kv(text):
    """Ansible's ``parse_kv`` on the controller, else the same rules: ``{name: value}``, free words as _raw_params."""
    splitter = _ansible_splitter()
    if splitter is not None:
        return dict(splitter.parse_kv(text))
    options, raw = {}, []
    for token in _split_kv(text):
        pos = token.find("=", 1)
        while pos > 0 and token[pos - 1] == "\\":
            pos = token.find("=", pos + 1)
        if pos < 0:
            raw.append(token.replace("\\=", "=") if "=" in token else token)
            continue
        name, value = token[:pos], token[pos + 1:].strip()
        if len(value) > 1 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        options[name.strip()] = value
    if raw:
        options["_raw_params"] = " ".join(raw)
    return options


def _join(tokens):
    """Tokens back into one argument (Ansible's ``join_args``: a token after a newline starts no space)."""
    text = ""
    for token in tokens:
        text += token if not text or text.endswith("\n") else " " + token
    return text


def _redact_kv(text):
    """A ``key=value ...`` extra-vars argument with every secret value replaced; the other tokens as typed."""
    parsed = _parse_kv(text)
    if redact_data(parsed) == parsed and VAULT_HEADER not in text:
        return text
    tokens = []
    for token in _split_kv(text):
        pairs = _parse_kv(token)
        names = [key for key in pairs if key != "_raw_params"]
        if not names:
            # a free word (Ansible's _raw_params); the lines of an unquoted vault blob land here
            tokens.append(REDACTED if VAULT_HEADER in text or redact_data(token) != token else token)
        elif is_secret_name(names[0]) or redact_data(pairs[names[0]]) != pairs[names[0]]:
            tokens.append(f"{names[0]}={REDACTED}")
        else:
            tokens.append(token)
    joined = _join(tokens)
    kept = _parse_kv(joined)
    if redact_data(kept) != kept:
        return REDACTED  # the token-wise pass missed something: keep nothing of this argument
    return joined


def redact_extra_var(item):
    """One ``-e`` argument as it may be stored (Ansible's four forms; the rule: this module's docstring)."""
    if is_vaulted(item):
        return REDACTED  # before str(): str() of an encrypted object decrypts it
    text = str(item)
    if not text or text.startswith("@"):
        return text  # a file's name; its content is never read here, never stored
    try:
        if text[0] in ("{", "["):
            return _compact(redact_data(_load_mapping_text(text)))
        return _redact_kv(text)
    except Exception:  # whatever cannot be parsed is not kept (Ansible would have refused it too)
        return REDACTED


def redact_extra_vars(items):
    """Every ``-e`` argument as it may be stored (``redact_extra_var`` on each)."""
    return [redact_extra_var(item) for item in items or ()]


def _long_option(arg):
    """(option, takes_value) of a ``--name`` argument, argparse's unique abbreviations too; (None, False) unknown."""
    name = arg.split("=", 1)[0]
    known = LONG_WITH_VALUE + LONG_FLAGS
    if name in known:
        return name, name in LONG_WITH_VALUE
    matches = [option for option in known if option.startswith(name)]
    if len(matches) == 1:
        return matches[0], matches[0] in LONG_WITH_VALUE
    return None, False


def redact_args(argv, extra_vars=()):
    """The command line ``argv`` (program first) as it may be stored: the value of every ``-e``/``--extra-vars``
    (every spelling argparse accepts) through ``redact_extra_var``, everything else as it is. ``extra_vars`` (the
    ``-e`` values as ansible-playbook parsed them, when known) is a second net: an argument ending in one that
    has a secret is redacted too."""
    args = [REDACTED if is_vaulted(arg) else str(arg) for arg in argv]
    out = list(args)
    index = 1
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            break
        if arg.startswith("--"):
            option, takes_value = _long_option(arg)
            if "=" in arg:
                if option == "--extra-vars":
                    name, value = arg.split("=", 1)
                    out[index - 1] = f"{name}={redact_extra_var(value)}"
            elif takes_value:
                if option == "--extra-vars" and index < len(args):
                    out[index] = redact_extra_var(args[index])
                index += 1
        elif arg.startswith("-") and len(arg) > 1:
            for position in range(1, len(arg)):
                char = arg[position]
                if char in SHORT_FLAGS:
                    continue
                if char in SHORT_WITH_VALUE:
                    rest = arg[position + 1:]
                    if not rest:
                        if char == "e" and index < len(args):
                            out[index] = redact_extra_var(args[index])
                        index += 1
                    elif char == "e":
                        # argparse reads -e=X as X, but -ve=X as =X
                        value = rest[1:] if position == 1 and rest.startswith("=") else rest
                        out[index - 1] = arg[:len(arg) - len(value)] + redact_extra_var(value)
                break
    for raw in extra_vars or ():
        safe = redact_extra_var(raw)
        raw = REDACTED if is_vaulted(raw) else str(raw)
        if raw and safe != raw:
            out = [arg[:len(arg) - len(raw)] + safe if arg.endswith(raw) else arg for arg in out]
    return out


def redact_provenance(prov):
    """A provenance mapping with its command and extra vars redacted (idempotent; other keys as they are)."""
    if not isinstance(prov, dict):
        return prov
    safe = dict(prov)
    extra = prov.get("extra_vars")
    if isinstance(extra, (list, tuple)):
        safe["extra_vars"] = redact_extra_vars(extra)
    if isinstance(prov.get("command"), (list, tuple)):
        safe["command"] = redact_args(prov["command"], extra if isinstance(extra, (list, tuple)) else ())
    return safe


def _git(root, *args):
    try:
        proc = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, timeout=10,
                              env=dict(os.environ, LC_ALL="C", GIT_OPTIONAL_LOCKS="0"), check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def testbed_version(root, galaxy_version=None):
    """``{version, commit, dirty, source}`` of the testbed code under ``root``.

    In a git checkout: the commit, whether tracked files differ from it
    (``dirty``; untracked files do not count) and ``git describe``. Elsewhere (an
    installed collection): the collection's version, commit and dirty unknown.
    """
    commit = _git(root, "rev-parse", "HEAD")
    if commit is None:
        return {"version": galaxy_version, "commit": None, "dirty": None, "source": "installed"}
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    return {"version": _git(root, "describe", "--tags", "--always", "--dirty") or commit[:12], "commit": commit,
            "dirty": None if status is None else bool(status), "source": "git"}


def provenance(root, argv, extra_vars, ansible_core_version, collections=None, galaxy_version=None):
    """The provenance mapping stored with a run (keys: PROVENANCE_KEYS); JSON-safe, with no secret in it."""
    return {
        "testbed": testbed_version(root, galaxy_version),
        "command": redact_args(argv, extra_vars),
        "extra_vars": redact_extra_vars(extra_vars),
        "cwd": os.getcwd(),
        "ansible_core_version": ansible_core_version,
        "collections": dict(sorted((collections or {}).items())),
        "python_version": platform.python_version(),
        "controller": platform.node(),
    }


def describe(prov):
    """One line for a report header, or None when there is no provenance."""
    if not isinstance(prov, dict) or not prov:
        return None
    testbed = prov.get("testbed") or {}
    if testbed.get("commit"):
        state = {True: "with uncommitted changes", False: "clean", None: "state unknown"}[testbed.get("dirty")]
        code = f"testbed {testbed.get('version')} (commit {testbed['commit'][:12]}, {state})"
    else:
        code = f"testbed {testbed.get('version') or 'version unknown'} (installed, no git)"
    command = " ".join(redact_args(prov.get("command") or [], prov.get("extra_vars") or ())) or "unknown"
    return (f"{code}; ansible-core {prov.get('ansible_core_version') or '?'}, Python {prov.get('python_version') or '?'}"
            f" on {prov.get('controller') or '?'}; command: {command}")
