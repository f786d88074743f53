#!/usr/bin/env bash
# One-command setup of a control node / local lab host (Debian 12+, Ubuntu 22.04+).
#
#   ./scripts/setup.sh            (or: make setup)
#
# 1. Debian packages the lab and the benchmarks need (apt, only what is missing)
# 2. a Python virtual environment in .venv with the pinned requirements
#    (ansible-core 2.19, the `ansible` collections bundle, molecule, linters...)
# 3. the Docker daemon, started when it is not running (systemd or by hand)
# 4. the lab's base images, built locally from a debootstrap rootfs (nothing is pulled)
#
# Idempotent: a second run checks and changes nothing (each step is skipped when
# its result is already there). Environment knobs:
#   TESTBED_PYTHON=/path/to/python3   force the interpreter for the venv
#   TESTBED_SKIP_IMAGES=1             skip step 4
#   TESTBED_SKIP_APT=1                skip step 1 (packages installed by other means)
set -euo pipefail

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
# Control node + lab: docker engine, qemu (lab VMs), debootstrap (images),
# the benchmark tools (also used to capture parser fixtures and smoke tests);
# lxc-dev, pkg-config, gcc and libc6-dev build the Python LXC bindings (pip
# package lxc, built for the venv's python: python3-dev) that the
# community.general.lxc connection plugin imports.
APT_PACKAGES=(
  python3 python3-venv python3-pip git make rsync
  docker.io debootstrap qemu-system-x86 qemu-utils cpio busybox-static kmod
  iproute2 iptables bridge-utils openssh-client sshpass
  httperf iperf3 fio apache2-utils sysbench iputils-ping ipvsadm sockperf sysstat
  nginx-light xz-utils hpcc lftp vsftpd curl
  lxc-dev pkg-config gcc libc6-dev python3-dev
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
  log "creating .venv with $PY ($want_stamp)"
  if [ -x "$VENV/bin/python" ] && ! "$VENV/bin/python" -c 'import sys; sys.exit(0 if "%d.%d" % sys.version_info[:2] == "'"${want_stamp%% *}"'" else 1)'; then
    rm -rf "$VENV"
  fi
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -r requirements.txt
  echo "$want_stamp" > "$VENV/.testbed-stamp"
fi

# --- 3. Docker daemon ----------------------------------------------------------
"$ROOT/scripts/ensure-dockerd.sh"

# --- 4. lab base images --------------------------------------------------------------
if [ "${TESTBED_SKIP_IMAGES:-0}" != 1 ]; then
  log "lab images (debootstrap rootfs -> docker import -> docker build; skipped when present)"
  PATH="$VENV/bin:$PATH" "$VENV/bin/ansible-playbook" playbooks/lab-images.yml
fi

log "done. Activate with: source .venv/bin/activate   (then: make test)"
