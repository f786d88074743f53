#!/bin/bash
# Step the guest clock to the host's (the VM's RTC only has 1 s resolution, and
# per-point CPU windows are cut by timestamps taken on different hosts).
#   sync-clock.sh KEY PORT BIND MAX_OFFSET_S [boot]
# As NTP does: the host sends its time, the guest answers with its own (bash's
# $EPOCHREALTIME: no process to start, which under emulation costs 0.05-0.25 s),
# and the host notes when the answer came. The guest read its clock between the
# two host times, so its offset is the guest's time minus their midpoint, give
# or take half the round trip. The exchange with the shortest round trip counts
# (a busy host or an emulated guest delays some of them by a second or more).
#
# The clock is stepped only when it is off by more than MAX_OFFSET_S beyond that
# uncertainty, so a slow round trip never makes a step (and a change) of a clock
# that is right. A measurement that cannot tell (the offset is within
# MAX_OFFSET_S of the limit, give or take the uncertainty) is not decided by a
# guess: exchanges go on, 5 at least and 25 at most, until one is short enough
# to tell. Otherwise a clock kept on a slow measurement could be found off on
# the next, quick one, and a second run would step it (molecule's idempotence
# on a busy CI machine, 2026-12-04).
#
# "boot" (the guest has just started, its clock read from the 1-s RTC): the
# clock is stepped whatever the offset, on a measurement with an uncertainty of
# at most a quarter of MAX_OFFSET_S when one comes within the 25 exchanges, so
# that the next run starts from a clock that is right, not merely within the
# limit. A step is relative (the guest's clock minus the offset, by python3's
# clock_settime), so the time it takes to start the stepping process does not
# add to the error; after a step one more measurement gives the residual.
# Prints "offset <guest minus host, s> +- <half round trip, s> stepped|kept",
# then after a step " residual <s> +- <s>".
set -euo pipefail
key=$1 port=$2 bind=$3 max=$4 mode=${5:-}
min_exchanges=5 max_exchanges=25
# shellcheck disable=SC2016  # expanded in the guest
remote='export LC_ALL=C; echo ready
while read -r cmd; do
  case $cmd in
    time) echo "${EPOCHREALTIME:-$(date +%s.%N)}" ;;
    step)
      read -r o
      python3 -c "import sys, time; time.clock_settime(time.CLOCK_REALTIME, time.clock_gettime(time.CLOCK_REALTIME) - float(sys.argv[1]))" "$o" \
        || date -s "@$(awk -v n="${EPOCHREALTIME:-$(date +%s.%N)}" -v o="$o" "BEGIN { printf \"%.6f\", n - o }")" >/dev/null
      echo stepped ;;
    *) exit 0 ;;
  esac
done'
coproc GUEST { ssh -i "$key" -p "$port" -o BatchMode=yes -o StrictHostKeyChecking=no \
  -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR "root@$bind" "$remote"; }
read -r -t 60 line <&"${GUEST[0]}"
[ "$line" = ready ] || { echo "unexpected answer from the guest: $line" >&2; exit 1; }

# decided OFFSET UNCERTAINTY: whether that sample is good enough to act on
decided() {
  awk -v o="$1" -v u="$2" -v m="$max" -v boot="$3" 'BEGIN {
    if (o < 0) o = -o
    if (boot) exit !(u <= m / 4)
    exit !(o - u > m || o + u <= m)
  }'
}

# measure [boot]: sets offset and uncertainty from the shortest round trip
measure() {
  local best= n=0 sent guest back sample
  while :; do
    n=$((n + 1))
    sent=$EPOCHREALTIME
    echo time >&"${GUEST[1]}"
    read -r -t 60 guest <&"${GUEST[0]}"
    back=$EPOCHREALTIME
    sample=$(awk -v g="$guest" -v a="$sent" -v b="$back" 'BEGIN { printf "%.6f %.6f", g - (a + b) / 2, (b - a) / 2 }')
    if [ -z "$best" ] || awk -v s="${sample#* }" -v b="${best#* }" 'BEGIN { exit !(s < b) }'; then
      best=$sample
    fi
    if [ "$n" -ge "$max_exchanges" ]; then break; fi
    if [ "$n" -ge "$min_exchanges" ] && decided "${best% *}" "${best#* }" "${1:-}"; then break; fi
  done
  offset=${best% *} uncertainty=${best#* }
}

boot=
[ "$mode" = boot ] && boot=1
measure "$boot"
residual=
if [ -n "$boot" ] || awk -v o="$offset" -v u="$uncertainty" -v m="$max" 'BEGIN { if (o < 0) o = -o; exit !(o - u > m) }'; then
  printf 'step\n%s\n' "$offset" >&"${GUEST[1]}"
  read -r -t 60 result <&"${GUEST[0]}"
  [ "$result" = stepped ] || { echo "the guest did not step its clock: $result" >&2; exit 1; }
  first_offset=$offset first_uncertainty=$uncertainty
  measure
  residual=$(awk -v o="$offset" -v u="$uncertainty" 'BEGIN { printf " residual %.3f +- %.3f", o, u }')
  offset=$first_offset uncertainty=$first_uncertainty
else
  result=kept
fi
echo done >&"${GUEST[1]}"
awk -v o="$offset" -v u="$uncertainty" -v r="$result" -v x="$residual" 'BEGIN { printf "offset %.3f +- %.3f %s%s\n", o, u, r, x }'
