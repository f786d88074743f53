#!/usr/bin/env bash
# One-command setup of a control node (Debian 12+, Ubuntu 22.04+); with --lab,
# of this machine as the local lab's host too.
#
#   ./scripts/setup.sh            (or: make setup)       a controller
#   ./scripts/setup.sh --lab      (or: make setup-lab)   a controller that is also the lab host
#
# 1. the Debian packages a controller needs (apt, only what is missing): Python,
#    git, make, the ssh client, the compiler and headers that build the venv's
#    LXC bindings - no Docker, no qemu, no server of any kind
# 2. a Python virtual environment in .venv with the pinned requirements
#    (ansible-core 2.19, the `ansible` collections bundle, molecule, linters...)
# 3. --lab only: playbooks/lab-host.yml - the lab host's packages (qemu,
#    debootstrap, bridges), Docker (dockerd started when it is not running), the
#    benchmark tools and servers the tests run natively here, and the lab's images
#    built locally from a debootstrap rootfs (nothing is pulled)
# The lab's playbooks (playbooks/lvs-lab-up.yml, the storage node VM) apply the
# lab host's role themselves, so `./scripts/setup.sh` and then the README's LVS
# command run the local lab; --lab is what `make test` needs besides.
#
# Idempotent: a second run checks and changes nothing (each step is skipped when
# its result is already there). Environment knobs:
#   TESTBED_PYTHON=/path/to/python3   force the interpreter for the venv
#   TESTBED_LAB=1                     the same as --lab
#   TESTBED_SKIP_IMAGES=1             with --lab: the packages and Docker, not the images
#   TESTBED_SKIP_APT=1                skip step 1 (packages installed by other means)
set -euo pipefail

LAB=${TESTBED_LAB:-0}
for arg in "$@"; do
  case $arg in
    --lab) LAB=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "[setup] ERROR: unknown argument $arg (use --lab, or nothing)" >&2; exit 2 ;;
  esac
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
VENV="$ROOT/.venv"
log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || die "run as root or install sudo"
  SUDO="sudo"
fi

# --- 1. Debian packages ---------------------------------------------------------
# A controller: Python and its venv, git, make, rsync, the ssh client (sshpass for
# password logins). Every package of requirements.txt comes as a wheel: no
# compiler. The lab host's packages are roles/lab_host's (step 3), and so is
# what builds the venv's LXC bindings (requirements-lab.txt).
APT_PACKAGES=(
  python3 python3-venv python3-pip git make rsync
  openssh-client sshpass
)
if [ "${TESTBED_SKIP_APT:-0}" != 1 ]; then
  command -v apt-get >/dev/null || die "apt-get not found: this setup supports Debian/Ubuntu (set TESTBED_SKIP_APT=1 if the packages are installed another way)"
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    log "Debian packages: all present"
  fi
fi

# --- 2. Python virtual environment --------------------------------------------------
# ansible-core 2.19 needs Python 3.11-3.13: take the newest that exists here.
pick_python() {
  if [ -n "${TESTBED_PYTHON:-}" ]; then echo "$TESTBED_PYTHON"; return; fi
  for c in python3.13 python3.12 python3.11 python3; do
    p=$(command -v "$c" 2>/dev/null) || continue
    if "$p" -c 'import sys, venv; sys.exit(0 if (3, 11) <= sys.version_info[:2] <= (3, 13) else 1)' 2>/dev/null; then
      echo "$p"; return
    fi
  done
  return 1
}
PY=$(pick_python) || die "no Python 3.11-3.13 with the venv module found (Debian 12 and Ubuntu 24.04 ship one; or set TESTBED_PYTHON)"
want_stamp="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])') $(sha256sum requirements.txt | cut -c1-16)"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.testbed-stamp" 2>/dev/null)" = "$want_stamp" ]; then
  log "virtualenv .venv: up to date ($want_stamp)"
else
  # a working .venv of the same Python version keeps its interpreter (running
  # `venv` again with another one of that version - pyenv's, Debian's - would
  # point the old interpreter at the other one's standard library); else anew
  if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import subprocess, sys; sys.exit(0 if "%d.%d" % sys.version_info[:2] == "'"${want_stamp%% *}"'" else 1)' 2>/dev/null; then
    log "updating .venv to the pinned requirements ($want_stamp)"
  else
    log "creating .venv with $PY ($want_stamp)"
    rm -rf "$VENV"
    "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
  fi
  "$VENV/bin/python" -m pip install -q -r requirements.txt
  echo "$want_stamp" > "$VENV/.testbed-stamp"
fi

# --- 3. the lab host (--lab) -----------------------------------------------------------
if [ "$LAB" = 1 ]; then
  log "lab host: packages, Docker, the tests' tools (roles/lab_host; only what is missing)"
  args=()
  [ "${TESTBED_SKIP_IMAGES:-0}" = 1 ] && args=(--skip-tags lab_images)
  PATH="$VENV/bin:$PATH" "$VENV/bin/ansible-playbook" playbooks/lab-host.yml "${args[@]}"
  lab_stamp=$(sha256sum requirements-lab.txt | cut -c1-16)
  if [ "$(cat "$VENV/.testbed-lab-stamp" 2>/dev/null)" = "$lab_stamp" ]; then
    log "virtualenv .venv: the lab host's packages up to date ($lab_stamp)"
  else
    log "the lab host's Python packages (requirements-lab.txt: the LXC bindings, built against lxc-dev)"
    "$VENV/bin/python" -m pip install -q -r requirements-lab.txt
    echo "$lab_stamp" > "$VENV/.testbed-lab-stamp"
  fi
else
  log "controller only: nothing of the local lab installed (./scripts/setup.sh --lab makes this machine the lab host)"
fi

if [ "$LAB" = 1 ]; then
  log "done. Activate with: source .venv/bin/activate   (then: make test)"
else
  log "done. Activate with: source .venv/bin/activate   (make test needs ./scripts/setup.sh --lab)"
fi
