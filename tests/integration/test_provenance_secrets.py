"""No secret given on the command line reaches a run's results (issue #40).

The worked example (playbooks/cpu-scaling.yml, the smallest run of
test_sweep_example.py) runs on localhost with secrets in every form of -e - a
become password as key=value, an API token in a JSON mapping, a secret key in
an @file, vaulted values (an @file holding a !vault value, a !vault value in an
inline YAML -e) - and then no file under the results directory holds one, while
run.json still names the variables; every file is for its owner only.
"""

import glob
import json
import os
import stat
import subprocess
import sys

import playbook_run
from playbook_run import assert_ok

BIN = os.path.dirname(sys.executable)
# The smallest run of the worked example (test_sweep_example.py).
SMALL = ['-e', '{"cpu_scaling_threads": [1, 2]}', '-e', 'cpu_scaling_duration_s=1', '-e', 'testbed_repetitions=2',
         '-e', 'cpu_scaling_max_prime=2000']
SECRETS = ("s3cretA", "s3cretB", "s3cretC", "s3cretD", "s3cretE")


def _encrypt_string(password_file, name, plaintext):
    proc = subprocess.run([os.path.join(BIN, "ansible-vault"), "encrypt_string", "--vault-password-file",
                           str(password_file), "--name", name, plaintext], capture_output=True, text=True, check=True)
    return proc.stdout


def test_secrets_on_the_command_line_are_not_stored(tmp_path):
    results = tmp_path / "results"
    password_file = tmp_path / "vault-pass"
    password_file.write_text("vault-pw\n")
    secret_file = tmp_path / "secret-vars.yml"
    secret_file.write_text("my_secret_key: s3cretC\n")
    vault_file = tmp_path / "vault-vars.yml"
    vault_file.write_text(_encrypt_string(password_file, "my_vaulted_password", "s3cretD"))
    ciphertext = _encrypt_string(password_file, "x", "s3cretE").split("!vault |", 1)[1]
    ciphertext = "\n".join(line.strip() for line in ciphertext.strip().splitlines())
    inline_vault = "{vaulted_inline: !vault " + json.dumps(ciphertext) + "}"
    proc = playbook_run.play(
        "playbooks/cpu-scaling.yml", *SMALL, "-e", "ansible_become_password=s3cretA",
        "-e", '{"my_api_token": "s3cretB"}', "-e", f"@{secret_file}", f"-e@{vault_file}", "--extra-vars", inline_vault,
        "--vault-password-file", str(password_file), results=results)
    assert_ok(proc)
    # Every file under the results, hidden ones too, whatever its name (not only the store's documents):
    # a secret must be in none of them.
    files = [p for p in glob.glob(os.path.join(str(results), "**"), recursive=True) + glob.glob(
        os.path.join(str(results), "**", ".*"), recursive=True) if os.path.isfile(p)]
    run = playbook_run.run_file(results, "cpu_scaling")
    assert len(files) > 10 and {"report.md", "report.html"} <= {os.path.basename(p) for p in files}
    for path in files:
        with open(path, "rb") as handle:
            data = handle.read()
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret} stored in {path}"
        assert b"$ANSIBLE_VAULT" not in data, path
    for path in set(files) | {os.path.dirname(p) for p in files}:
        assert stat.S_IMODE(os.stat(path).st_mode) & 0o007 == 0, f"{path} is readable by others"
    invocation = run["invocations"][-1]
    stored = json.dumps(invocation)
    for name in ("ansible_become_password", "my_api_token", "vaulted_inline", str(secret_file), str(vault_file)):
        assert name in stored, name
    assert "ansible_become_password=<redacted>" in invocation["extra_vars"]
    assert '{"my_api_token":"<redacted>"}' in invocation["extra_vars"]
    assert '{"vaulted_inline":"<redacted>"}' in invocation["extra_vars"]
    assert f"@{secret_file}" in invocation["extra_vars"] and f"-e@{vault_file}" in invocation["command"]
