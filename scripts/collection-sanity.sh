#!/usr/bin/env bash
# ansible-test sanity on the built collection (make collection-sanity; docs/collection.md).
# The tarball is installed into a directory outside the repository (ansible-test lists a
# collection's files with git, and build/ is git-ignored), then checked with Python 3.11 from a
# throw-away virtual environment outside the repository (SANITY_VENV) holding the same
# ansible-core as .venv and ansible-test's own requirements (--requirements, from PyPI; never
# installed into the project's .venv). ansible-test makes a virtual environment per test and
# bootstraps pip in it with a script from ci-files.testing.ansible.com, which is not reachable
# here: ansible-test runs with HOME=$SANITY_HOME, whose cache holds a stand-in for that script
# (ensurepip, then pip from PyPI at the version asked for). Extra arguments go to ansible-test
# (e.g. --test pylint).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The build removes older tarballs: there is one.
TARBALLS=("$ROOT"/build/collection/testbed-infra-*.tar.gz)
TARBALL="${TARBALLS[-1]}"
[ -e "$TARBALL" ] || { echo "no tarball in build/collection: run make collection" >&2; exit 2; }
if [ -n "${COLLECTION_SANITY_DIR:-}" ]; then
  WORK="$COLLECTION_SANITY_DIR"   # kept afterwards
else
  WORK="$(mktemp -d /tmp/testbed-collection-sanity.XXXXXX)"
  trap 'rm -rf "$WORK"' EXIT
fi
rm -rf "$WORK/ansible_collections/testbed/infra"
ansible-galaxy collection install --no-deps --force -p "$WORK" "$TARBALL" >/dev/null
PYTHON="${COLLECTION_SANITY_PYTHON:-3.11}"
CORE="$(python -c 'from ansible.release import __version__; print(__version__)')"
SANITY_VENV="${SANITY_VENV:-/tmp/testbed-sanity-venv-$CORE}"
if [ ! -x "$SANITY_VENV/bin/ansible-test" ]; then
  "python$PYTHON" -m venv "$SANITY_VENV"
  "$SANITY_VENV/bin/python" -m pip install -q "ansible-core==$CORE"
fi
SANITY_HOME="${SANITY_HOME:-/tmp/testbed-sanity-home}"
mkdir -p "$SANITY_HOME/.ansible/test/cache"
PIP_VERSION="$(grep -o "pip='[0-9.]*'" "$("$SANITY_VENV/bin/python" -c 'import ansible_test, os; print(os.path.dirname(ansible_test.__file__))')/_internal/python_requirements.py" | grep -o "[0-9][0-9.]*")"
SHIM="$SANITY_HOME/.ansible/test/cache/get_pip_${PIP_VERSION//./_}.py"
# ansible-test runs pip without this shell's pip settings (PIP_CONFIG_FILE=/dev/null): the CA
# bundle this shell's pip uses (PIP_CERT) is written into the stand-in; pip 24.2 then uses the
# system's certificate store (truststore).
cat > "$SHIM" <<PYTHON_SHIM
"""Stand-in for ansible-test's get-pip bootstrap (scripts/collection-sanity.sh): ensurepip, then pip from PyPI."""
import ensurepip
import subprocess
import sys

ensurepip.bootstrap(upgrade=True)
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
cert = "${PIP_CERT:-}"
subprocess.check_call([sys.executable, "-m", "pip", "install", *(["--cert", cert] if cert else []), *args])
PYTHON_SHIM
cd "$WORK/ansible_collections/testbed/infra"
echo "ansible-test sanity in $PWD ($(basename "$TARBALL"), ansible-core $CORE, Python $PYTHON)"
HOME="$SANITY_HOME" PATH="$SANITY_VENV/bin:$PATH" "$SANITY_VENV/bin/ansible-test" sanity --requirements --python "$PYTHON" --color no "$@"
