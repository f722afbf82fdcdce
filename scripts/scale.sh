#!/usr/bin/env bash
# What grows with the inventory, at three sizes (SIZES, orders of one reseller: about one eSIM an
# order), with the growth exponent from one size to the next (1.0: linear; time t and size n,
# log(t2/t1) / log(n2/n1)). One run each, whole processes, the client's pace and the sandbox's
# limit lifted (what is counted is work, not waits). Against a sandbox with only the published
# routes (no lookup by ICCID) unless it says "with the lookup". docs/performance.md's table
# comes from one run of this. Needs a release build (`cargo build --release`), curl, tmux.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-${CARGO_TARGET_DIR:-$(pwd)/target}/release/esimdash}
SIZES=${SIZES:-"10000 100000 1000000"}
PORT=${PORT:-18096}
API="http://127.0.0.1:$PORT/api/v1"
T="tmux -L scale"
[ -x "$BIN" ] || { echo "build first: cargo build --release"; exit 1; }
WORK=$(mktemp -d)
SANDBOX=
trap '$T kill-server 2>/dev/null || true; [ -n "$SANDBOX" ] && kill $SANDBOX 2>/dev/null; rm -rf "$WORK"' EXIT
H=(-H "x-access-code: ak_demo_acme" -H "x-secret-key: sk_demo_acme")

sandbox() { # orders, extra flags
  [ -n "$SANDBOX" ] && { kill $SANDBOX 2>/dev/null; wait $SANDBOX 2>/dev/null || true; }
  "$BIN" sandbox --addr "127.0.0.1:$PORT" --orders "$1" --rate-limit 100000000 "${@:2}" >/dev/null 2>&1 &
  SANDBOX=$!
  for _ in $(seq 1 1200); do curl -s -o /dev/null "$API/reseller/balance" && return; sleep 0.1; done
  echo "the sandbox did not start"; exit 1
}
export XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state XDG_CONFIG_HOME=$WORK/config
export ESIMDASH_RATE_LIMIT=100000000 ESIMDASH_BASE_URL=$API
export ESIMDASH_ACCESS_CODE=ak_demo_acme ESIMDASH_SECRET_KEY=sk_demo_acme
# One command: "wall-s cpu-s max-MB requests" (requests from the client's own log).
run() {
  rm -f "$WORK/log"
  local s=${EPOCHREALTIME/./}
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" env ESIMDASH_LOG=debug "$BIN" --log-file "$WORK/log" "$@" \
    >/dev/null 2>"$WORK/err" || true
  local e=${EPOCHREALTIME/./}
  read -r _ user sys kb < <(tail -1 "$WORK/time")
  echo "$(awk "BEGIN {printf \"%.3f\", ($e - $s) / 1e6}") $(awk "BEGIN {print $user + $sys}") $((kb / 1024)) $(grep -c 'answer' "$WORK/log" || true)"
}
declare -A FIG
SEEN=""

for orders in $SIZES; do
  rm -rf "$WORK/cache" "$WORK/state"
  sandbox "$orders" --no-iccid-lookup
  total=$(curl -s "${H[@]}" "$API/reseller/esims?pageSize=1" | grep -o '"total":[0-9]*' | cut -d: -f2)
  oldest=$(curl -s "${H[@]}" "$API/reseller/esims?page=$total&pageSize=1" | grep -o '"iccid":"[0-9]*"' | head -1 | cut -d'"' -f4)
  n=$total
  echo "== $n eSIMs ($orders orders), sandbox $(awk '/VmRSS/ {printf "%.0f MB", $2/1024}' /proc/$SANDBOX/status)"

  # The dashboard reads the whole list into its index (a search needs it), in tmux: once for a
  # search, once more (a fresh cache) for the attention filter, whose results come in any order.
  for keys in "/ 8" "!"; do
    rm -rf "$WORK/cache"
    $T kill-server 2>/dev/null || true
    $T new-session -d -x 160 -y 45 "sh -c 'echo \$\$ > $WORK/pid; exec $BIN'"
    sleep 1; $T send-keys 3; sleep 0.5
    for k in $keys; do $T send-keys "$k"; sleep 0.2; done
    s=$(date +%s%N)
    until $T capture-pane -p | grep -q "all [0-9 ]* in the index"; do sleep 0.2; done
    e=$(date +%s%N); pid=$(cat "$WORK/pid")
    cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' /proc/$pid/stat)
    hwm=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' /proc/$pid/status)
    k=${keys// /}
    FIG[dash_s$k,$n]=$(awk "BEGIN {printf \"%.1f\", ($e - $s) / 1e9}"); FIG[dash_cpu$k,$n]=$cpu; FIG[dash_mb$k,$n]=$hwm
    echo "dashboard, whole read for '$keys': ${FIG[dash_s$k,$n]} s, ${cpu} s CPU, ${hwm} MB peak"
    $T send-keys Escape; sleep 0.2; $T send-keys Escape; sleep 0.2; $T send-keys q
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  done
  du -k "$WORK"/cache/esimdash/*.sqlite3* | awk '{s += $1} END {printf "saved index: %.1f MB\n", s/1024}'

  read -r wall cpu mb req < <(run esims --iccid "$oldest" --json)
  FIG[find_ms,$n]=$(awk "BEGIN {print $wall * 1000}"); FIG[find_mb,$n]=$mb
  echo "second session finds the oldest eSIM: $wall s, $mb MB, $req requests"
  read -r wall cpu mb req < <(run check attention --warning 1000000000 --critical 1000000000)
  FIG[check_s,$n]=$wall
  echo "check attention, saved index: $wall s ($cpu s CPU), $req requests"
  rm -rf "$WORK/fresh"
  read -r wall cpu mb req < <(XDG_CACHE_HOME=$WORK/fresh run check attention --warning 1000000000 --critical 1000000000)
  FIG[check_nc_s,$n]=$wall
  echo "check attention, no saved index: $wall s ($cpu s CPU), $req requests"
  read -r wall cpu mb req < <(run metrics)
  FIG[metrics_cpu,$n]=$cpu
  echo "metrics, saved index: $wall s ($cpu s CPU), $mb MB, $req requests"
  read -r wall cpu mb req < <(run esims --all --json)
  FIG[json_mb,$n]=$mb
  echo "esims --all --json: $wall s, $mb MB peak, $req requests"

  run watch --once >/dev/null
  read -r wall cpu mb req < <(run watch --once)
  FIG[watch_mb,$n]=$mb
  echo "watch, a poll of the whole list after the first: $wall s ($cpu s CPU), $mb MB, $req requests; memory $(du -k "$WORK"/state/esimdash/watch/*.sqlite3* | awk '{s += $1} END {printf "%.1f MB", s/1024}')"

  sandbox "$orders"
  read -r wall cpu mb req < <(run esims --iccid "$oldest" --json)
  FIG[lookup_ms,$n]=$(awk "BEGIN {print $wall * 1000}")
  echo "with the lookup, a second session's find: $wall s, $req requests"
  SEEN="$SEEN $n"
done

echo
echo "growth exponent, log(b/a) / log(n2/n1), from each size to the next:"
set -- $SEEN
for key in dash_s/8 dash_cpu/8 dash_mb/8 dash_cpu! dash_mb! find_ms find_mb check_s metrics_cpu json_mb watch_mb; do
  line="$key:"
  prev=
  for n in "$@"; do
    [ -n "$prev" ] && line="$line $(awk -v a="${FIG[$key,$prev]}" -v b="${FIG[$key,$n]}" -v m="$prev" -v k="$n" \
      'BEGIN {if (a <= 0 || b <= 0) print "n/a"; else printf "%.2f", log(b/a) / log(k/m)}')"
    prev=$n
  done
  echo "  $line  (values: $(for n in "$@"; do printf '%s ' "${FIG[$key,$n]}"; done))"
done
