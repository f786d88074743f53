"""No secret is stored in results (issue #40): the provenance's command and extra vars are redacted, and
the result store and the report write files for their owner only.

The rule (module_utils/testbed_results/provenance.py): the value of a variable with a secret's name (Ansible's
password variables; a name containing password, passwd, secret, token, private_key, api_key, secret_key,
access_key, keyring, passphrase or credential; a name with key, pass, pwd or pw as a whole word) and every
vault-encrypted value become ``<redacted>``, in every form of -e and every argv spelling of it.
"""

import io
import json
import os
import stat

import ansible.parsing.splitter  # noqa: F401 - loaded, as in ansible-playbook: the redaction uses Ansible's parse_kv
import pytest
from ansible.module_utils.testbed_results import DIR_MODE, FILE_MODE, open_run
from ansible.module_utils.testbed_results import provenance as testbed_provenance
from ansible.module_utils.testbed_results.provenance import (
    LONG_FLAGS,
    LONG_WITH_VALUE,
    REDACTED,
    SHORT_FLAGS,
    SHORT_WITH_VALUE,
    describe,
    is_secret_name,
    is_vaulted,
    provenance,
    redact_args,
    redact_extra_var,
    redact_extra_vars,
)
from ansible.module_utils.testbed_results.store import store_point
from conftest import ROOT

SECRET_NAMES = [
    "ansible_password", "ansible_ssh_pass", "ansible_become_password", "ansible_become_pass", "ansible_sudo_pass",
    "ansible_su_pass", "ansible_vault_password", "ansible_ssh_private_key_passphrase", "ansible_httpapi_pass",
    "db_password", "DB_PASSWORD", "mysql_passwd", "client_secret", "my_api_token", "github-token", "my_secret_key",
    "aws_access_key", "aws_secret_access_key", "api_key", "apiKey", "API-KEY", "storage_ceph_existing_keyring",
    "ssh_key", "sshKey", "key", "db_pass", "admin_pwd", "ldap_pw", "passphrase", "cloud_credentials",
    "ansible_ssh_private_key_file",
]
PLAIN_NAMES = [
    "testbed_run_id", "testbed_results_dir", "lvs_compare_rates", "cpu_scaling_threads", "monkey", "keyboard_layout",
    "segment_keys", "passes", "bypass", "compass", "turkey", "hotkeys", "pwm", "testbed_repetitions", "_raw_params",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_names_that_are_not_secret(name):
    assert not is_secret_name(name)


# --- the four forms of -e -----------------------------------------------------------------------------------

@pytest.mark.parametrize("given, stored", [
    ("ansible_become_password=s3cretA", "ansible_become_password=<redacted>"),
    ("a=1 db_password=s3cret b=2", "a=1 db_password=<redacted> b=2"),
    ("a=1 db_password='s3 cret' b=\"x y\"", "a=1 db_password=<redacted> b=\"x y\""),
    ('my_api_token="s3 cret" ssh_key=\'k e y\'', "my_api_token=<redacted> ssh_key=<redacted>"),
    ("lvs_compare_rates=[50] testbed_run_id=r1", "lvs_compare_rates=[50] testbed_run_id=r1"),
    ("monkey=1 segment_keys=2", "monkey=1 segment_keys=2"),
    ("k=v\ntoken=s3cret", "k=v\ntoken=<redacted>"),
    ("url=https://user:s3cret@example.org/x", "url=<redacted>"),
    ("creds='{\"password\": \"s3cret\"}' a=1", "creds=<redacted> a=1"),
])
def test_key_value_form(given, stored):
    assert redact_extra_var(given) == stored


def test_key_value_form_is_parsed_as_ansible_does():
    from ansible.parsing.splitter import parse_kv
    given = "a=1 foo b='x y' db_password=s3cret"
    parsed = parse_kv(redact_extra_var(given))
    assert parsed == {"a": "1", "b": "x y", "db_password": REDACTED, "_raw_params": "foo"}


@pytest.mark.parametrize("given, stored", [
    ('{"my_api_token": "s3cretB"}', {"my_api_token": REDACTED}),
    ('{"a": 1, "nested": {"list": [{"passwd": "s3cret", "n": 2}], "client_secret": {"x": "s3cret"}}}',
     {"a": 1, "nested": {"list": [{"passwd": REDACTED, "n": 2}], "client_secret": REDACTED}}),
    ("{cpu_scaling_threads: [1, 2], db: {password: s3cret, user: me}}",
     {"cpu_scaling_threads": [1, 2], "db": {"password": REDACTED, "user": "me"}}),
    ("{a: 1} # password s3cret", {"a": 1}),
    ('{x: !vault "$ANSIBLE_VAULT;1.1;AES256\\n6162", y: !unsafe "{{ z }}"}', {"x": REDACTED, "y": "{{ z }}"}),
    ('{"x": {"__ansible_vault": "$ANSIBLE_VAULT;1.1;AES256\\n6162"}}', {"x": {"__ansible_vault": REDACTED}}),
    ('[{"token": "s3cret"}]', [{"token": REDACTED}]),
])
def test_json_and_yaml_forms_are_redacted_recursively_and_stored_as_compact_json(given, stored):
    text = redact_extra_var(given)
    assert json.loads(text) == stored
    assert text == json.dumps(stored, separators=(",", ":"))
    assert "s3cret" not in text


def test_at_file_form_keeps_the_name_and_never_reads_the_file(tmp_path):
    path = tmp_path / "vars.yml"
    path.write_text("my_secret_key: s3cretC\n")
    assert redact_extra_var(f"@{path}") == f"@{path}"
    assert redact_extra_var("@/nonexistent/vars.yml") == "@/nonexistent/vars.yml"


def _vault_text(plaintext="s3cretV"):
    from ansible.parsing.vault import VaultLib, VaultSecret
    return VaultLib([("default", VaultSecret(b"vault-pw"))]).encrypt(plaintext).decode()


def test_vaulted_values_are_redacted_whatever_their_name():
    vaulted = _vault_text()
    assert redact_extra_var(f"plain_name='{vaulted}'") == "plain_name=<redacted>"
    assert "$ANSIBLE_VAULT" not in redact_extra_var(f"plain_name={vaulted}")  # unquoted: one line per token
    assert json.loads(redact_extra_var(json.dumps({"plain_name": vaulted}))) == {"plain_name": REDACTED}


def test_vault_objects_are_redacted_without_decrypting():
    from ansible.parsing.vault import EncryptedString
    from ansible.parsing.yaml.objects import AnsibleVaultEncryptedUnicode
    encrypted = EncryptedString(ciphertext=_vault_text())
    assert is_vaulted(encrypted) and is_vaulted(AnsibleVaultEncryptedUnicode(_vault_text()))
    assert redact_extra_vars([encrypted, "a=1"]) == [REDACTED, "a=1"]
    assert testbed_provenance.redact_data({"x": [encrypted]}) == {"x": [REDACTED]}


@pytest.mark.parametrize("given", ["{unclosed", "a='unbalanced", "[1, 2"])
def test_what_cannot_be_parsed_is_not_kept(given):
    assert redact_extra_var(given) == REDACTED


def test_redaction_is_idempotent():
    items = ["a=1 db_password=x", '{"token": "x", "n": [1]}', "@f.yml", "plain=1"]
    once = redact_extra_vars(items)
    assert redact_extra_vars(once) == once


def test_without_ansible_the_same_rules_hold(monkeypatch):
    """In a module (the result store redacts again) Ansible's splitter is not loaded: the fallback is used."""
    cases = ["ansible_become_password=s3cretA", "a=1 db_password='s3 cret' b=\"x y\"", "monkey=1 ssh_key=k",
             '{"my_api_token": "s3cretB"}', "@f.yml", "a=1 foo b=2 token=3", "k=v\nw=2 pw=1", "a\\=b=1 c=x\\=y"]
    assert testbed_provenance._ansible_splitter() is not None
    expected = redact_extra_vars(cases)
    monkeypatch.setattr(testbed_provenance, "_ansible_splitter", lambda: None)
    assert redact_extra_vars(cases) == expected


# --- argv: every spelling of -e ----------------------------------------------------------------------------

def test_argv_spellings():
    argv = ["ansible-playbook", "p.yml", "-i", "inv", "-e", "a_token=1", "-eb_secret=2", "--extra-vars",
            "c_password=3", "--extra-vars=d_pass=4", "-ve", "e_key=5", "-vvef_key=6", "--extra", "g_key=7",
            "--ext=h_key=8", "-e=i_key=9", "-l", "-e", "--limit", "-e", "--", "-e", "z_key=1"]
    assert redact_args(argv) == [
        "ansible-playbook", "p.yml", "-i", "inv", "-e", "a_token=<redacted>", "-eb_secret=<redacted>",
        "--extra-vars", "c_password=<redacted>", "--extra-vars=d_pass=<redacted>", "-ve", "e_key=<redacted>",
        "-vvef_key=<redacted>", "--extra", "g_key=<redacted>", "--ext=h_key=<redacted>", "-e=i_key=<redacted>",
        "-l", "-e", "--limit", "-e", "--", "-e", "z_key=1"]


def test_argv_keeps_the_other_options_and_password_files():
    argv = ["ansible-playbook", "p.yml", "--vault-password-file", "/tmp/pw", "--become-password-file=/tmp/b",
            "--private-key", "/home/me/.ssh/id", "-e", "@secrets.yml", "-e", "testbed_run_id=r1", "-K"]
    assert redact_args(argv) == argv


@pytest.mark.parametrize("argv", [
    ["-e", "a_token=1", "-eb_secret=2", "--extra-vars", "c_password=3", "--extra-vars=d_pass=4", "p.yml"],
    ["-ve", "e_key=5", "-vvef_key=6", "--extra", "g_key=7", "--ext=h_key=8", "-e=i_key=9", "p.yml"],
    ["-l", "all", "-Ke", '{"token": 1, "a": [1]}', "-bCDe", "x=1 pw=2", "p.yml", "-ve=j_key=1"],
    ["-e", "@vars.yml", "-eplain=1", "--ssh-extra-args", "-o x=y", "-e", "token=1", "--", "p.yml"],
])
def test_argv_redaction_agrees_with_ansible_playbooks_parser(argv):
    """Parsed by ansible-playbook's own parser, the redacted argv gives exactly the redacted extra vars."""
    from ansible.cli.playbook import PlaybookCLI
    cli = PlaybookCLI(["ansible-playbook", "p.yml"])
    cli.init_parser()
    given = cli.parser.parse_args(argv).extra_vars
    stored = cli.parser.parse_args(redact_args(["ansible-playbook"] + argv)[1:]).extra_vars
    assert stored == redact_extra_vars(given)


def test_the_option_table_is_ansible_playbooks():
    from ansible.cli.playbook import PlaybookCLI
    cli = PlaybookCLI(["ansible-playbook", "p.yml"])
    cli.init_parser()
    short_value, short_flag, long_value, long_flag = set(), set(), set(), set()
    for action in cli.parser._actions:
        for option in action.option_strings:
            takes = action.nargs != 0
            if option.startswith("--"):
                (long_value if takes else long_flag).add(option)
            else:
                (short_value if takes else short_flag).add(option[1])
    assert (short_value, short_flag) == (set(SHORT_WITH_VALUE), set(SHORT_FLAGS))
    assert (long_value, long_flag) == (set(LONG_WITH_VALUE), set(LONG_FLAGS))


def test_the_extra_vars_given_are_a_second_net():
    # an argv spelling the walker does not know still loses a value the parser saw
    argv = ["ansible-playbook", "--some-future-option", "db_password=x", "p.yml"]
    assert redact_args(argv, ["db_password=x"])[2] == "db_password=<redacted>"


# --- provenance, describe, the store --------------------------------------------------------------------------

def test_provenance_stores_names_not_secrets(tmp_path):
    argv = ["ansible-playbook", "playbooks/cpu-scaling.yml", "-e", "ansible_become_password=s3cretA",
            "-e", '{"my_api_token": "s3cretB"}', f"-e@{tmp_path}/v.yml", "--extra-vars=x=1"]
    extra = ["ansible_become_password=s3cretA", '{"my_api_token": "s3cretB"}', f"@{tmp_path}/v.yml", "x=1"]
    prov = provenance(str(tmp_path), argv, extra, "2.19.14")
    text = json.dumps(prov)
    assert "s3cret" not in text
    assert prov["extra_vars"] == ["ansible_become_password=<redacted>", '{"my_api_token":"<redacted>"}',
                                  f"@{tmp_path}/v.yml", "x=1"]
    assert prov["command"] == ["ansible-playbook", "playbooks/cpu-scaling.yml", "-e",
                               "ansible_become_password=<redacted>", "-e", '{"my_api_token":"<redacted>"}',
                               f"-e@{tmp_path}/v.yml", "--extra-vars=x=1"]


def test_describe_redacts_a_provenance_stored_before_redaction():
    old = {"testbed": {"version": "v1", "commit": None}, "command": ["ansible-playbook", "p.yml", "-e", "pw=s3cret"]}
    assert describe(old).endswith("command: ansible-playbook p.yml -e pw=<redacted>")


PLAN = [{"variant": "a", "parameters": {"rate": 1}, "repetition": 1}]
ENV = {"hosts": {"h": {"hostname": "h", "kernel": "6.1", "arch": "x86_64", "cpus": 1, "memory_mb": 1024,
                       "distro": {"id": "debian", "version_id": "12", "pretty_name": "Debian 12"}, "tools": {}}}}


def _all_paths(root):
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            yield os.path.join(folder, name)


@pytest.fixture
def open_umask():
    old = os.umask(0)  # the widest umask: the modes must not depend on it
    yield
    os.umask(old)


def test_the_store_keeps_no_secret_and_writes_for_its_owner_only(tmp_path, open_umask):
    prov = {"testbed": {"version": "v1", "commit": None, "dirty": None, "source": "installed"},
            "command": ["ansible-playbook", "p.yml", "-e", "db_password=s3cret"], "extra_vars": ["db_password=s3cret"],
            "cwd": "/", "ansible_core_version": "2.19.14", "collections": {}, "python_version": "3.11",
            "controller": "c"}
    run = open_run(str(tmp_path / "results"), "exp", PLAN, provenance=prov, report={"x": "rate"})
    doc = store_point(run["run_dir"], PLAN[0], {"rate_per_s": 1.0}, True, [], [], ENV, "2026-01-01T00:00:00Z",
                      "2026-01-01T00:00:01Z", raw={"tool.txt": "output\n"})
    assert doc["environment"]["controller"]["provenance"]["extra_vars"] == ["db_password=<redacted>"]
    from ansible.module_utils.testbed_reports.make import make_report
    make_report(run["run_dir"], formats=("md", "html", "csv", "png"), out=io.StringIO())
    paths = list(_all_paths(str(tmp_path / "results")))
    names = {os.path.relpath(p, run["run_dir"]) for p in paths}
    assert {"run.json", "index.json", ".lock", "raw", "raw/a__rate-1__rep1.tool.txt", "a__rate-1__rep1.json",
            "report.md", "report.html", "results.csv", "summary.csv"} <= names
    for path in paths:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        assert mode & 0o007 == 0, f"{path} is readable by others ({oct(mode)})"
        assert mode == (DIR_MODE if os.path.isdir(path) else FILE_MODE), (path, oct(mode))
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                assert b"s3cret" not in handle.read(), path


def test_a_superseded_point_and_a_comparison_are_private_too(tmp_path, open_umask):
    from ansible.module_utils.testbed_reports.compare import compare
    run = open_run(str(tmp_path / "results"), "exp", PLAN)
    store_point(run["run_dir"], PLAN[0], {"rate_per_s": 1.0}, False, ["bad"], [], ENV, "2026-01-01T00:00:00Z",
                "2026-01-01T00:00:01Z", raw={"tool.txt": "x"})
    store_point(run["run_dir"], PLAN[0], {"rate_per_s": 2.0}, True, [], [], ENV, "2026-01-01T00:00:02Z",
                "2026-01-01T00:00:03Z", replace_invalid=True)
    compare(run["run_dir"], run["run_dir"], out_dir=str(tmp_path / "cmp" / "out"), out=io.StringIO())
    paths = list(_all_paths(str(tmp_path / "results"))) + list(_all_paths(str(tmp_path / "cmp")))
    assert any("superseded" in p for p in paths) and any(p.endswith("compare.csv") for p in paths)
    for path in paths:
        assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0, path


def test_this_checkout_provenance_still_names_its_code():
    mine = provenance(ROOT, ["ansible-playbook", "x.yml", "-e", "a=1"], ["a=1"], "2.19.14")
    assert mine["command"] == ["ansible-playbook", "x.yml", "-e", "a=1"] and mine["extra_vars"] == ["a=1"]
