#!/usr/bin/env bash
# Whole-process figures side by side, in one run (docs/performance.md): `esimdash balance`
# against `curl | jq` on the same sandbox, over loopback http and over https (the sandbox with a
# test certificate made here by openssl, trusted through ca_file and curl's --cacert), key to
# frame while a request takes 2 s, then the
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
# The sandbox is told to allow as much: the pace is not what is timed.
export ESIMDASH_RATE_LIMIT=1000000
export XDG_STATE_HOME=$(mktemp -d) XDG_CONFIG_HOME=$(mktemp -d)

# 1. One balance, wall time: ours against curl + jq, in microseconds, on http and on https.
CERTS=$(mktemp -d)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=bench CA" \
  -keyout "$CERTS/ca.key" -out "$CERTS/ca.pem" -addext basicConstraints=critical,CA:TRUE 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
  -keyout "$CERTS/server.key" -out "$CERTS/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' > "$CERTS/ext"
openssl x509 -req -in "$CERTS/server.csr" -CA "$CERTS/ca.pem" -CAkey "$CERTS/ca.key" -CAcreateserial \
  -days 2 -extfile "$CERTS/ext" -out "$CERTS/server.pem" 2>/dev/null
TLS_PORT=$((PORT + 1))
"$BIN" sandbox --addr "127.0.0.1:$TLS_PORT" --rate-limit 1000000 \
  --tls-cert "$CERTS/server.pem" --tls-key "$CERTS/server.key" >/dev/null 2>&1 &
TLS_SANDBOX=$!
trap '$T kill-server 2>/dev/null || true; kill $SANDBOX $TLS_SANDBOX 2>/dev/null; rm -rf "$CERTS"' EXIT
TLS_BASE="https://127.0.0.1:$TLS_PORT/api/v1"
for _ in $(seq 1 300); do curl -s --cacert "$CERTS/ca.pem" -o /dev/null "$TLS_BASE/reseller/balance" && break; sleep 0.1; done
# Timed by the shell's own clock (no `date` started around each run, which would add a
# process start to both sides and hide the difference).
clock() { echo "${EPOCHREALTIME/./}"; }
compare() { # name, base URL, curl's extra option, our CA file (or nothing)
  local name=$1 base=$2 extra=$3 ours theirs
  ours=$(if [ -n "$4" ]; then export ESIMDASH_CA_FILE=$4; fi
    for _ in $(seq "$RUNS"); do
      s=$(clock); ESIMDASH_BASE_URL=$base "$BIN" balance >/dev/null; echo $(( $(clock) - s ))
    done | median)
  echo "$name: esimdash balance: median ${ours} µs over $RUNS runs"
  if command -v jq >/dev/null; then
    theirs=$(for _ in $(seq "$RUNS"); do
      s=$(clock)
      curl -s $extra -H "x-access-code: ak_demo_acme" -H "x-secret-key: sk_demo_acme" "$base/reseller/balance" | jq -r .balanceUsd >/dev/null
      echo $(( $(clock) - s ))
    done | median)
    echo "$name: curl -s … | jq -r .balanceUsd: median ${theirs} µs; ratio $(awk "BEGIN {printf \"%.2f\", $ours/$theirs}")"
  else
    echo "jq is not installed: the curl | jq comparison is skipped (Debian's jq)"
  fi
}
compare http "$BASE" "" ""
compare https "$TLS_BASE" "--cacert $CERTS/ca.pem" "$CERTS/ca.pem"
kill $TLS_SANDBOX; wait $TLS_SANDBOX 2>/dev/null || true
[ "${ONLY_BALANCE:-0}" = 1 ] && exit 0

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
