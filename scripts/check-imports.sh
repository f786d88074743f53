#!/bin/sh
# make lint: every `ansible.module_utils.<name>` import resolves, as an editor sees it.
#
# The testbed imports its shared libraries as ansible.module_utils.<name> (docs/architecture.md,
# "Python imports"); pyrightconfig.json maps that name to module_utils/ and roles/*/module_utils/
# through the partial stub package .config/import-map (scripts/import-map.py). This script:
#   1. checks that the map has one link per shared library and nothing else;
#   2. shows that pyright reports a missing import at all (a probe with one import that exists
#      and one that does not: exactly the second must be reported);
#   3. runs pyright over the repository with missing imports as errors (only imports are checked).
# pyright comes from PyPI as basedpyright (Node.js bundled) into build/typing-venv, pinned in
# requirements-typing.txt: a controller's .venv does not carry it.
set -eu
cd "$(dirname "$0")/.."
python3 scripts/import-map.py --check
venv=build/typing-venv
if ! "$venv/bin/basedpyright" --version >/dev/null 2>&1; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r requirements-typing.txt
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '%s\n' 'from ansible.errors import AnsibleError' 'from ansible.module_utils.testbed_parse import ParseError' \
  'from ansible.module_utils.testbed_no_such_library import nothing' > "$probe/probe.py"
"$venv/bin/basedpyright" --project pyrightconfig.json "$probe/probe.py" > "$probe/out" 2>&1 || true
if ! grep -q 'probe.py:3:.*"ansible.module_utils.testbed_no_such_library" could not be resolved' "$probe/out" \
   || ! grep -q '^1 error' "$probe/out"; then
  echo "[imports] ERROR: pyright did not report exactly the probe's one missing import:" >&2
  cat "$probe/out" >&2
  exit 1
fi
"$venv/bin/basedpyright" --project pyrightconfig.json
count=$(grep -rhE --include='*.py' '^[[:space:]]*(from|import) ansible\.module_utils\.[a-z_0-9]+' \
  library module_utils filter_plugins action_plugins callback_plugins connection_plugins roles scripts | wc -l)
echo "[imports] pyright resolved every import, $count of them through ansible.module_utils.<name>"
