#!/usr/bin/env bash
# The dashboard with a real reseller's inventory: a sandbox of ORDERS orders a reseller, the
# whole inventory read by a search (rate budget lifted), then the dashboard's resident memory;
# and the saved index a second session starts from. Needs a release build and tmux.
set -euo pipefail
cd "$(dirname "$0")/.."
ORDERS=${ORDERS:-100000}
BIN=$(pwd)/target/release/esimdash
PORT=${PORT:-18094}
WORK=$(mktemp -d)
T="tmux -L measure-inventory"
"$BIN" sandbox --addr "127.0.0.1:$PORT" --orders "$ORDERS" --rate-limit 1000000 >/dev/null 2>&1 &
SANDBOX=$!
trap '$T kill-server 2>/dev/null; kill $SANDBOX 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1 300); do curl -s -o /dev/null "http://127.0.0.1:$PORT/api/v1/reseller/balance" && break; sleep 0.1; done
ENV="XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state XDG_CONFIG_HOME=$WORK/config ESIMDASH_RATE_LIMIT=1000000 \
ESIMDASH_BASE_URL=http://127.0.0.1:$PORT ESIMDASH_ACCESS_CODE=ak_demo_acme ESIMDASH_SECRET_KEY=sk_demo_acme"
$T new-session -d -x 160 -y 45 "sh -c 'echo \$\$ > $WORK/pid; exec env $ENV $BIN'"
sleep 1
$T send-keys 3; sleep 0.5; $T send-keys /; sleep 0.2; $T send-keys 8
start=$(date +%s%N)
until $T capture-pane -p | grep -q "all [0-9 ]* loaded"; do sleep 0.2; done
end=$(date +%s%N)
pid=$(cat "$WORK/pid")
echo "whole inventory read by the search: $(( (end-start)/1000000 )) ms"
$T capture-pane -p | grep -o "search: .*loaded" | head -1
grep -E 'VmRSS|VmHWM' /proc/$pid/status | tr -s ' ' | sed 's/^/dashboard with every eSIM loaded: /'
ls -l "$WORK"/cache/esimdash/ | tail -n +2 | awk '{print "saved index: " $1 " " $5 " bytes " $9}'
stat -c 'index directory: %A' "$WORK/cache/esimdash"
