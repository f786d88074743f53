#!/bin/bash
# Step the guest clock to the host's (the VM's RTC only has 1 s resolution, and
# per-point CPU windows are cut by timestamps taken on different hosts).
#   sync-clock.sh KEY PORT BIND MAX_OFFSET_S
# The host's time is written into the ssh session only once the guest is
# reading, and the guest takes its own time from bash's $EPOCHREALTIME (no
# process to start: under emulation starting `date` costs 0.05-0.25 s, which
# made the offset noisy by that much), so the error is the one-way latency of
# the pipe (milliseconds). A step is relative (the guest's clock minus the
# offset, by python3's clock_settime), so the time it takes to start the
# stepping process does not add to the error.
# Prints "offset <guest minus host, s> stepped|kept".
set -euo pipefail
key=$1 port=$2 bind=$3 max=$4
# shellcheck disable=SC2016  # expanded in the guest
remote='export LC_ALL=C; echo ready; read -r t; g=${EPOCHREALTIME:-$(date +%s.%N)}; echo "$g $t"
read -r action
if [ "$action" = step ]; then
  read -r o
  python3 -c "import sys, time; time.clock_settime(time.CLOCK_REALTIME, time.clock_gettime(time.CLOCK_REALTIME) - float(sys.argv[1]))" "$o" \
    || date -s "@$(awk -v n="${EPOCHREALTIME:-$(date +%s.%N)}" -v o="$o" "BEGIN { printf \"%.6f\", n - o }")" >/dev/null
  echo stepped
else
  echo kept
fi'
coproc GUEST { ssh -i "$key" -p "$port" -o BatchMode=yes -o StrictHostKeyChecking=no \
  -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR "root@$bind" "$remote"; }
read -r -t 60 line <&"${GUEST[0]}"
[ "$line" = ready ] || { echo "unexpected answer from the guest: $line" >&2; exit 1; }
date +%s.%N >&"${GUEST[1]}"
read -r -t 30 guest host <&"${GUEST[0]}"
offset=$(awk -v g="$guest" -v h="$host" 'BEGIN { printf "%.6f", g - h }')
if awk -v o="$offset" -v m="$max" 'BEGIN { exit !(o > m || o < -m) }'; then
  echo step >&"${GUEST[1]}"
  echo "$offset" >&"${GUEST[1]}"
else
  echo keep >&"${GUEST[1]}"
fi
read -r -t 60 result <&"${GUEST[0]}"
awk -v o="$offset" -v r="$result" 'BEGIN { printf "offset %.3f %s\n", o, r }'
