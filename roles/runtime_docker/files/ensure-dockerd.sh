#!/usr/bin/env bash
# Make sure a Docker daemon answers. Uses systemd when it runs as PID 1,
# otherwise starts dockerd in the background (log: /var/log/testbed-dockerd.log).
set -euo pipefail
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"

if docker info >/dev/null 2>&1; then
  echo "[dockerd] running"
  exit 0
fi
if [ "$(ps -p 1 -o comm= 2>/dev/null)" = "systemd" ]; then
  echo "[dockerd] starting with systemctl"
  $SUDO systemctl start docker
else
  command -v dockerd >/dev/null || { echo "[dockerd] dockerd not installed (apt-get install docker.io)" >&2; exit 1; }
  echo "[dockerd] no systemd: starting dockerd in the background"
  # shellcheck disable=SC2024
  $SUDO nohup dockerd >>/var/log/testbed-dockerd.log 2>&1 &
fi
for _ in $(seq 1 60); do
  docker info >/dev/null 2>&1 && { echo "[dockerd] ready"; exit 0; }
  sleep 1
done
echo "[dockerd] did not answer within 60 s; see /var/log/testbed-dockerd.log" >&2
exit 1
