#!/usr/bin/env bash
# The dashboard with a real reseller's inventory: a sandbox of ORDERS orders a reseller (with
# NO_LOOKUP=1, one without the lookup by ICCID, as a server of the published spec), the whole
# inventory read into the index by a search (rate budget lifted), then the dashboard's resident
# memory; the saved index a second session starts from; and what that second session reads to
# find the oldest eSIM. Needs a release build, tmux and curl.
set -euo pipefail
cd "$(dirname "$0")/.."
ORDERS=${ORDERS:-100000}
BIN=${BIN:-${CARGO_TARGET_DIR:-$(pwd)/target}/release/esimdash}
PORT=${PORT:-18094}
WORK=$(mktemp -d)
T="tmux -L measure-inventory"
LOOKUP=()
[ "${NO_LOOKUP:-0}" = 1 ] && LOOKUP=(--no-iccid-lookup)
"$BIN" sandbox --addr "127.0.0.1:$PORT" --orders "$ORDERS" --rate-limit 1000000 "${LOOKUP[@]}" >/dev/null 2>&1 &
SANDBOX=$!
trap '$T kill-server 2>/dev/null || true; kill $SANDBOX 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1 300); do curl -s -o /dev/null "http://127.0.0.1:$PORT/api/v1/reseller/balance" && break; sleep 0.1; done
ENV="XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state XDG_CONFIG_HOME=$WORK/config ESIMDASH_RATE_LIMIT=1000000 \
ESIMDASH_BASE_URL=http://127.0.0.1:$PORT ESIMDASH_ACCESS_CODE=ak_demo_acme ESIMDASH_SECRET_KEY=sk_demo_acme"
$T new-session -d -x 160 -y 45 "sh -c 'echo \$\$ > $WORK/pid; exec env $ENV $BIN'"
sleep 1
$T send-keys 3; sleep 0.5; $T send-keys /; sleep 0.2; $T send-keys 8
start=$(date +%s%N)
until $T capture-pane -p | grep -q "all [0-9 ]* in the index"; do sleep 0.2; done
end=$(date +%s%N)
pid=$(cat "$WORK/pid")
echo "whole inventory read by the search: $(( (end-start)/1000000 )) ms"
$T capture-pane -p | grep -o "search: .*in the index" | head -1
grep -E 'VmRSS|VmHWM' /proc/$pid/status | tr -s ' ' | sed 's/^/dashboard with every eSIM loaded: /'

# A second session, as a command: the oldest eSIM found from the saved index.
H=(-H "x-access-code: ak_demo_acme" -H "x-secret-key: sk_demo_acme")
API="http://127.0.0.1:$PORT/api/v1"
total=$(curl -s "${H[@]}" "$API/reseller/esims?pageSize=1" | grep -o '"total":[0-9]*' | cut -d: -f2)
oldest=$(curl -s "${H[@]}" "$API/reseller/esims?page=$total&pageSize=1" | grep -o '"iccid":"[0-9]*"' | head -1 | cut -d'"' -f4)
$T send-keys Escape; sleep 0.2; $T send-keys Escape; sleep 0.2; $T send-keys q
while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done   # it waits for the last pages to be written
ls -l "$WORK"/cache/esimdash/ | tail -n +2 | awk '{print "saved index: " $1 " " $5 " bytes " $9}'
stat -c 'index directory: %A' "$WORK/cache/esimdash"
start=$(date +%s%N)
env $ENV ESIMDASH_LOG=debug "$BIN" --log-file "$WORK/find.log" esims --iccid "$oldest" --json >/dev/null
end=$(date +%s%N)
pages=$(grep -c 'reseller/esims.*answer\|answer.*reseller/esims' "$WORK/find.log" || true)
echo "second session, esims --iccid of the oldest eSIM (place $total): $(( (end-start)/1000000 )) ms, $pages eSIM requests"
