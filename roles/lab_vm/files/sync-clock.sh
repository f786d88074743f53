#!/bin/bash
# Step the guest clock to the host's (the VM's RTC only has 1 s resolution, and
# per-point CPU windows are cut by timestamps taken on different hosts).
#   sync-clock.sh KEY PORT BIND MAX_OFFSET_S
# The host's time is written into the ssh session only once the guest is
# reading, so the error is the one-way latency of the pipe (milliseconds).
# Prints "offset <guest minus host, s> stepped|kept".
set -euo pipefail
key=$1 port=$2 bind=$3 max=$4
coproc GUEST { ssh -i "$key" -p "$port" -o BatchMode=yes -o StrictHostKeyChecking=no \
  -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR "root@$bind" \
  'echo ready; read -r t; g=$(date +%s.%N); echo "$g $t";
   read -r action; [ "$action" = step ] && { read -r t2; date -s "@$t2" >/dev/null; echo stepped; } || echo kept'; }
read -r -t 60 line <&"${GUEST[0]}"
[ "$line" = ready ] || { echo "unexpected answer from the guest: $line" >&2; exit 1; }
date +%s.%N >&"${GUEST[1]}"
read -r -t 30 guest host <&"${GUEST[0]}"
offset=$(awk -v g="$guest" -v h="$host" 'BEGIN { printf "%.3f", g - h }')
if awk -v o="$offset" -v m="$max" 'BEGIN { exit !(o > m || o < -m) }'; then
  echo step >&"${GUEST[1]}"
  date +%s.%N >&"${GUEST[1]}"
else
  echo keep >&"${GUEST[1]}"
fi
read -r -t 30 result <&"${GUEST[0]}"
echo "offset $offset $result"
