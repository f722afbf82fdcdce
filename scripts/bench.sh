#!/usr/bin/env bash
# Whole-process figures side by side, in one run (README, "Performance"): `esimdash balance`
# against `curl | jq` on the same sandbox, key to frame while a request takes 2 s, then the
# dashboard's launch, idle CPU and memory (measure-dashboard.sh) and its memory with 10 000 and
# 100 000 eSIMs loaded (measure-inventory.sh). Needs a release build, curl, tmux (and jq for
# the comparison). Medians of RUNS runs.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-${CARGO_TARGET_DIR:-$(pwd)/target}/release/esimdash}
RUNS=${RUNS:-20}
PORT=${PORT:-18095}
BASE="http://127.0.0.1:$PORT/api/v1"
[ -x "$BIN" ] || { echo "build first: cargo build --release"; exit 1; }
ms() { echo $(( ($2 - $1) / 1000000 )); }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
now() { date +%s%N; }

"$BIN" sandbox --addr "127.0.0.1:$PORT" --rate-limit 1000000 >/dev/null 2>&1 &
SANDBOX=$!
T="tmux -L bench"
trap '$T kill-server 2>/dev/null || true; kill $SANDBOX 2>/dev/null' EXIT
for _ in $(seq 1 300); do curl -s -o /dev/null "$BASE/reseller/balance" && break; sleep 0.1; done
export ESIMDASH_BASE_URL=$BASE ESIMDASH_ACCESS_CODE=ak_demo_acme ESIMDASH_SECRET_KEY=sk_demo_acme
export XDG_STATE_HOME=$(mktemp -d) XDG_CONFIG_HOME=$(mktemp -d)

# 1. One balance, wall time: ours against curl + jq, in microseconds.
us() { echo $(( ($2 - $1) / 1000 )); }
ours=$(for _ in $(seq "$RUNS"); do s=$(now); "$BIN" balance >/dev/null; us "$s" "$(now)"; done | median)
echo "esimdash balance: median ${ours} µs over $RUNS runs"
if command -v jq >/dev/null; then
  theirs=$(for _ in $(seq "$RUNS"); do
    s=$(now)
    curl -s -H "x-access-code: ak_demo_acme" -H "x-secret-key: sk_demo_acme" "$BASE/reseller/balance" | jq -r .balanceUsd >/dev/null
    us "$s" "$(now)"
  done | median)
  echo "curl -s … | jq -r .balanceUsd: median ${theirs} µs; ratio $(awk "BEGIN {printf \"%.2f\", $ours/$theirs}")"
else
  echo "jq is not installed: the curl | jq comparison is skipped (Debian's jq)"
fi

# 2. Key to frame while a request takes 2 s: the help window opens at once, the answer waits.
kill $SANDBOX; wait $SANDBOX 2>/dev/null || true
"$BIN" sandbox --addr "127.0.0.1:$PORT" --rate-limit 1000000 --latency-ms 2000 >/dev/null 2>&1 &
SANDBOX=$!
for _ in $(seq 1 300); do curl -s -o /dev/null "$BASE/reseller/balance" && break; sleep 0.1; done
$T new-session -d -x 120 -y 40 "$BIN --log-file /dev/null"
until $T capture-pane -p | grep -q "Balance 250.00"; do sleep 0.05; done
frames=$(for _ in $(seq 10); do
  $T send-keys r; sleep 0.2                   # a refresh is now in flight for 2 s
  s=$(now); $T send-keys '?'
  until $T capture-pane -p | grep -q "┌ Keys"; do :; done
  ms "$s" "$(now)"
  $T send-keys Escape; sleep 2.2
done | median)
echo "key to frame while a request takes 2 s: median ${frames} ms (tmux capture included)"
$T kill-server 2>/dev/null || true

# 3. The dashboard: launch to balance, idle CPU, memory; then with the inventory loaded.
kill $SANDBOX; wait $SANDBOX 2>/dev/null || true
scripts/measure-dashboard.sh
for orders in 10000 100000; do
  echo "--- $orders orders a reseller:"
  ORDERS=$orders scripts/measure-inventory.sh
done
