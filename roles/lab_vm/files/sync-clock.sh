#!/bin/bash
# Step the guest clock to the host's (the VM's RTC only has 1 s resolution, and
# per-point CPU windows are cut by timestamps taken on different hosts).
#   sync-clock.sh KEY PORT BIND MAX_OFFSET_S
# As NTP does: the host sends its time, the guest answers with its own (bash's
# $EPOCHREALTIME: no process to start, which under emulation costs 0.05-0.25 s),
# and the host notes when the answer came. The guest read its clock between the
# two host times, so its offset is the guest's time minus their midpoint, give
# or take half the round trip. Five exchanges in one ssh session; the one with
# the shortest round trip counts (a busy host or an emulated guest delays some
# of them by a second or more). The clock is stepped only when it is off by more
# than MAX_OFFSET_S beyond that uncertainty, so a slow round trip never makes a
# step (and a change) of a clock that is right. A step is relative (the guest's
# clock minus the offset, by python3's clock_settime), so the time it takes to
# start the stepping process does not add to the error.
# Prints "offset <guest minus host, s> +- <half round trip, s> stepped|kept".
set -euo pipefail
key=$1 port=$2 bind=$3 max=$4
exchanges=5
# shellcheck disable=SC2016  # expanded in the guest
remote='export LC_ALL=C; echo ready
for _ in 1 2 3 4 5; do read -r t; echo "${EPOCHREALTIME:-$(date +%s.%N)}"; done
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
best=
for _ in $(seq "$exchanges"); do
  sent=$EPOCHREALTIME
  echo "$sent" >&"${GUEST[1]}"
  read -r -t 60 guest <&"${GUEST[0]}"
  back=$EPOCHREALTIME
  sample=$(awk -v g="$guest" -v a="$sent" -v b="$back" 'BEGIN { printf "%.6f %.6f", g - (a + b) / 2, (b - a) / 2 }')
  if [ -z "$best" ] || awk -v s="${sample#* }" -v b="${best#* }" 'BEGIN { exit !(s < b) }'; then
    best=$sample
  fi
done
offset=${best% *} uncertainty=${best#* }
if awk -v o="$offset" -v u="$uncertainty" -v m="$max" 'BEGIN { if (o < 0) o = -o; exit !(o - u > m) }'; then
  echo step >&"${GUEST[1]}"
  echo "$offset" >&"${GUEST[1]}"
else
  echo keep >&"${GUEST[1]}"
fi
read -r -t 60 result <&"${GUEST[0]}"
awk -v o="$offset" -v u="$uncertainty" -v r="$result" 'BEGIN { printf "offset %.3f +- %.3f %s\n", o, u, r }'
