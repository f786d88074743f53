#!/usr/bin/env bash
# Bounded load through the local lab's director VM, watching for its NIC hang.
#
#   scripts/lab-nic-stress.sh [--minutes 15] [--rate 200] [--chunk-seconds 60]
#                             [--vip 10.250.1.10] [--clients "lvs-client1 lvs-client2"]
#                             [--processes 2] [--console /var/lib/testbed/lab/lvs-director.console.log]
#                             [--pidfile /var/lib/testbed/lab/lvs-director.pid] [--keep-going]
#                             [--monitor /var/lib/testbed/lab/lvs-director.monitor] [--state-only]
#
# Runs httperf in the lab's client containers (docker exec) against the lab VIP
# only, in chunks of --chunk-seconds, split over clients x processes (the
# lvs-compare split at the lab's top rate: 2 clients x 2 processes x 50 conn/s).
# After every chunk it counts the "NETDEV WATCHDOG" lines the guest printed on
# its serial console since the script started. It stops at the first hang
# (unless --keep-going) or after --minutes (hard cap 30). The director must
# already serve the VIP (playbooks/lab-nic-stress.yml configures it first).
#
# Output: one tab-separated line per chunk
#   chunk  elapsed_s  vm_uptime_s  conns  replies  errors  watchdog_lines
# and a last line "RESULT hang=<0|1> load_s=<seconds of load> conns=<total>
# replies=<total> errors=<total> first_hang_vm_s=<VM age at the first hang or ->".
# At the first hang, when qemu's monitor socket exists, the state of every
# virtio-net queue (qemu's indexes and the guest's avail/used rings) is printed
# first, as lines starting with "vq ". --state-only prints just that and exits.
# Exit status: 0 no hang, 3 hang seen, 1 usage or setup error.
set -euo pipefail

minutes=15
rate=200
chunk=60
vip=10.250.1.10
clients="lvs-client1 lvs-client2"
processes=2
console=/var/lib/testbed/lab/lvs-director.console.log
pidfile=/var/lib/testbed/lab/lvs-director.pid
keep_going=0
timeout_s=5
monitor=/var/lib/testbed/lab/lvs-director.monitor
state_only=0

usage() { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --chunk-seconds) chunk=$2; shift 2 ;;
    --vip) vip=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --processes) processes=$2; shift 2 ;;
    --console) console=$2; shift 2 ;;
    --pidfile) pidfile=$2; shift 2 ;;
    --keep-going) keep_going=1; shift ;;
    --monitor) monitor=$2; shift 2 ;;
    --state-only) state_only=1; shift ;;
    -h | --help) usage ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done

# Every virtio-net queue as qemu sees it (last_avail_idx, used_idx, ...) and as
# the guest left it in memory (avail and used ring: flags, idx), read through
# qemu's human monitor. Read-only.
vq_state() {
  [ -S "$monitor" ] || { echo "vq no monitor socket $monitor"; return 0; }
  python3 - "$monitor" <<'PY' || echo "vq monitor query failed"
import re, socket, sys
sock = socket.socket(socket.AF_UNIX)
sock.connect(sys.argv[1])
sock.settimeout(5)
def cmd(line=None):
    if line is not None:
        sock.sendall((line + "\n").encode())
    out = b""
    while not out.endswith(b"(qemu) "):
        chunk = sock.recv(65536)
        if not chunk:
            break
        out += chunk
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out.decode(errors="replace")).replace("\r", "")
    # drop the echoed command line and the prompt
    return text.split("\n", 1)[-1].rsplit("\n", 1)[0] if line is not None else text
cmd()
for path in re.findall(r"^(/\S+) \[virtio-net\]", cmd("info virtio"), re.M):
    for queue in (0, 1):
        status = cmd("info virtio-queue-status %s %d" % (path, queue))
        fields = dict(re.findall(r"^\s+(\w+):\s+(\S+)", status, re.M))
        if "avail" not in fields or "used" not in fields:
            print("vq %s %d: %s" % (path, queue, " ".join(status.split())))
            continue
        ring = {}
        for name in ("avail", "used"):
            dump = cmd("xp /2hx %s" % fields[name])
            ring[name] = " ".join(str(int(v, 16)) for v in re.findall(r"\b0x[0-9a-f]{4}\b", dump.split(":", 1)[-1]))
        print("vq %s %s: inuse=%s last_avail_idx=%s shadow_avail_idx=%s used_idx=%s signalled_used=%s"
              " guest avail(flags idx)=%s used(flags idx)=%s"
              % (path, "tx" if queue else "rx", fields.get("inuse"), fields.get("last_avail_idx"),
                 fields.get("shadow_avail_idx"), fields.get("used_idx"), fields.get("signalled_used"),
                 ring["avail"], ring["used"]))
PY
}
if [ "$state_only" -eq 1 ]; then vq_state; exit 0; fi

for n in "$minutes" "$rate" "$chunk" "$processes"; do
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -gt 0 ] || { echo "--minutes, --rate, --chunk-seconds, --processes: positive integers" >&2; exit 1; }
done
[ "$minutes" -le 30 ] || { echo "--minutes is capped at 30" >&2; exit 1; }
# Lab traffic only: the VIP must be in the lab's private 10.250.0.0/16 range.
[[ "$vip" =~ ^10\.250\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || { echo "--vip must be a lab address (10.250.x.y)" >&2; exit 1; }
[ -r "$console" ] || { echo "no console log $console (is the director VM up?)" >&2; exit 1; }

read -r -a client_list <<< "$clients"
for c in "${client_list[@]}"; do
  docker exec "$c" true 2>/dev/null || { echo "client container $c is not running" >&2; exit 1; }
done
parts=$(( ${#client_list[@]} * processes ))
per_rate=$(awk -v r="$rate" -v p="$parts" 'BEGIN { printf "%.3f", r / p }')
per_conns=$(awk -v r="$rate" -v p="$parts" -v s="$chunk" 'BEGIN { n = int(r * s / p); print (n < 1 ? 1 : n) }')

vm_started=$(stat -c %Y "$pidfile" 2>/dev/null || echo "")
vm_age() { if [ -n "$vm_started" ]; then echo $(( $(date +%s) - vm_started )); else echo -; fi; }
watchdogs() { tail -c +"$((offset + 1))" "$console" | grep -c 'NETDEV WATCHDOG' || true; }

offset=$(stat -c %s "$console")
workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT
start=$(date +%s)
end=$(( start + minutes * 60 ))
total_conns=0 total_replies=0 total_errors=0 hang=0 first_hang=- load_s=0 i=0

printf '# %s rate=%s conn/s (%s x %s conn/s) chunks of %s s, at most %s min; VIP %s\n' \
  "$(date -u +%FT%TZ)" "$rate" "$parts" "$per_rate" "$chunk" "$minutes" "$vip"
printf 'chunk\telapsed_s\tvm_uptime_s\tconns\treplies\terrors\twatchdog_lines\n'
while [ "$(( $(date +%s) + chunk ))" -le "$end" ]; do
  i=$((i + 1))
  t0=$(date +%s)
  pids=()
  k=0
  for c in "${client_list[@]}"; do
    for _ in $(seq 1 "$processes"); do
      k=$((k + 1))
      timeout $((chunk * 2 + 60)) docker exec "$c" httperf --hog --server "$vip" --port 80 --uri / \
        --rate "$per_rate" --num-conns "$per_conns" --timeout "$timeout_s" \
        > "$workdir/$k.out" 2>&1 &
      pids+=($!)
    done
  done
  for p in "${pids[@]}"; do wait "$p" || true; done
  load_s=$(( load_s + $(date +%s) - t0 ))
  conns=0 replies=0 errors=0
  for f in "$workdir"/*.out; do
    read -r c r <<< "$(awk '/^Total: connections/ { print $3, $7 }' "$f")"
    e=$(awk '/^Errors: total/ { print $3 }' "$f")
    conns=$((conns + ${c:-0})); replies=$((replies + ${r:-0})); errors=$((errors + ${e:-0}))
  done
  rm -f "$workdir"/*.out
  total_conns=$((total_conns + conns)); total_replies=$((total_replies + replies)); total_errors=$((total_errors + errors))
  w=$(watchdogs)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "$(( $(date +%s) - start ))" "$(vm_age)" "$conns" "$replies" "$errors" "$w"
  if [ "$w" -gt 0 ]; then
    if [ "$hang" -eq 0 ]; then first_hang=$(vm_age); vq_state; fi
    hang=1
    [ "$keep_going" -eq 1 ] || break
  fi
done
printf 'RESULT hang=%s load_s=%s conns=%s replies=%s errors=%s first_hang_vm_s=%s\n' \
  "$hang" "$load_s" "$total_conns" "$total_replies" "$total_errors" "$first_hang"
[ "$hang" -eq 0 ] || exit 3
