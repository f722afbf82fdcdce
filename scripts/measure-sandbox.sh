#!/usr/bin/env bash
# The sandbox at scale: resident memory with 2 × ORDERS orders, and the time at the server
# (its Server-Timing header, median of every page asked) for pages of orders and eSIMs with and
# without q, status and iccid. Needs a release build (cargo build --release) and curl.
set -euo pipefail
cd "$(dirname "$0")/.."
ORDERS=${ORDERS:-100000}
BIN=${BIN:-target/release/esimdash}
PORT=${PORT:-18093}
BASE="http://127.0.0.1:$PORT/api/v1"
"$BIN" sandbox --addr "127.0.0.1:$PORT" --orders "$ORDERS" --rate-limit 1000000 >/dev/null 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null' EXIT
for _ in $(seq 1 300); do
  curl -s -o /dev/null "$BASE/reseller/balance" && break
  sleep 0.1
done
get() { curl -s -D - -o /dev/null -H x-access-code:ak_demo_acme -H x-secret-key:sk_demo_acme "$BASE/$1" |
  tr -d '\r' | awk -F'dur=' 'tolower($0) ~ /^server-timing:/ {print $2}'; }
iccid=$(curl -s -H x-access-code:ak_demo_acme -H x-secret-key:sk_demo_acme \
  "$BASE/reseller/esims?pageSize=1&page=$ORDERS" | grep -o '"iccid":"[0-9]*"' | head -1 | cut -d'"' -f4)
echo "sandbox --orders $ORDERS: $(grep VmRSS /proc/$PID/status | awk '{printf "%.0f MB resident", $2/1024}') after start"
median() { sort -n | awk '{v[NR]=$1} END {printf "median %.3f ms, max %.3f ms over %d pages", v[int((NR+1)/2)], v[NR], NR}'; }
measure() {
  local label=$1 path=$2
  for page in 1 2 3 50 100 250 500 750 900 1000 1; do get "$path&page=$page"; done | median | sed "s|^|$label: |"
  echo
}
measure "orders, plain           " "reseller/orders?pageSize=100"
measure "orders, q=fr            " "reseller/orders?pageSize=100&q=fr"
measure "orders, status=active   " "reseller/orders?pageSize=100&status=active"
measure "orders, iccid           " "reseller/orders?pageSize=100&iccid=$iccid"
measure "esims, plain            " "reseller/esims?pageSize=100"
measure "esims, status=in_use    " "reseller/esims?pageSize=100&status=in_use"
measure "esims, iccid            " "reseller/esims?pageSize=100&iccid=$iccid"
echo "first (uncached) query, q=xyz over every order: $(get "reseller/orders?pageSize=100&q=xyz&page=1") ms"
echo "after the pages: $(grep VmRSS /proc/$PID/status | awk '{printf "%.0f MB resident", $2/1024}')"
