#!/usr/bin/env bash
# The team gateway in front of a reseller of ORDERS orders (default 100 000) on a server without
# the lookup by ICCID (the sandbox's --no-iccid-lookup). First the team index is read whole with
# the rate limit lifted (the gateway's CPU seconds and peak memory for it); then, the key's
# limit back at 120 a minute and the index warm (as saved), AGENTS agents (default 20) look up
# ICCIDs in a loop for SECONDS (default 60): lookups, their p50 and p95 as each agent's curl
# timed them, and what reached the API: requests counted by the gateway (reads, index pages),
# answers 429. The load comes from wrk (Debian's wrk; its Lua picks an agent and an ICCID per
# request; an answer other than 200 counts as an error; the gateway's tests check what a lookup
# answers). Needs a release build, curl, python3 and wrk.
set -euo pipefail
cd "$(dirname "$0")/.."
ORDERS=${ORDERS:-100000}
AGENTS=${AGENTS:-20}
SECONDS_=${SECONDS:-60}
BIN=${BIN:-${CARGO_TARGET_DIR:-$(pwd)/target}/release/esimdash}
PORT=${PORT:-18097}
GW_PORT=$((PORT + 1))
METRICS=$((PORT + 2))
WORK=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
export XDG_CACHE_HOME=$WORK/cache XDG_STATE_HOME=$WORK/state XDG_CONFIG_HOME=$WORK/config
API="http://127.0.0.1:$PORT/api/v1"
GW="http://127.0.0.1:$GW_PORT/api/v1"

sandbox() { # rate limit
  "$BIN" sandbox --addr "127.0.0.1:$PORT" --orders "$ORDERS" --no-iccid-lookup --rate-limit "$1" >/dev/null 2>&1 &
  SANDBOX=$!
  PIDS+=("$SANDBOX")
  for _ in $(seq 1 1200); do curl -s -o /dev/null "$API/portal/plans?slug=x" && return; sleep 0.1; done
  echo "the sandbox did not start"; exit 1
}
gateway() { # rate limit
  ESIMDASH_RATE_LIMIT=$1 ESIMDASH_BASE_URL=$API ESIMDASH_ACCESS_CODE=ak_demo_acme ESIMDASH_SECRET_KEY=sk_demo_acme \
    "$BIN" gateway serve --listen "127.0.0.1:$GW_PORT" --metrics-listen "127.0.0.1:$METRICS" \
    --store "$WORK/gateway.db" >"$WORK/gateway.out" 2>&1 &
  GATEWAY=$!
  PIDS+=("$GATEWAY")
  for _ in $(seq 1 300); do curl -s -o /dev/null "http://127.0.0.1:$METRICS/metrics" && return; sleep 0.1; done
  echo "the gateway did not start"; cat "$WORK/gateway.out"; exit 1
}
figure() { curl -s "http://127.0.0.1:$METRICS/metrics" | awk -v n="$1" '$1 == n {print $2}'; }

"$BIN" gateway agent add admin --role admin --store "$WORK/gateway.db" --json >/dev/null
for n in $(seq 1 "$AGENTS"); do
  "$BIN" gateway agent add "agent$n" --role viewer --store "$WORK/gateway.db" --json >"$WORK/agent$n.json"
done

# 1. The team index read whole, the rate limit lifted on both sides.
sandbox 100000000
gateway 100000000
start=$(date +%s%N)
until [ "$(figure esimdash_gateway_index_list_total)" != "0" ] &&
  [ "$(figure esimdash_gateway_index_esims)" = "$(figure esimdash_gateway_index_list_total)" ]; do sleep 0.5; done
end=$(date +%s%N)
read -r utime stime < <(awk '{print $14, $15}' "/proc/$GATEWAY/stat")
ticks=$(getconf CLK_TCK)
echo "team index read whole: $(figure esimdash_gateway_index_esims) eSIMs in $(( (end - start) / 1000000 )) ms," \
  "gateway CPU $(awk "BEGIN {printf \"%.1f\", ($utime + $stime) / $ticks}") s," \
  "$(grep -E 'VmHWM' "/proc/$GATEWAY/status" | tr -s ' ' | cut -d' ' -f2-) peak"
kill "$GATEWAY" "$SANDBOX"; wait "$GATEWAY" "$SANDBOX" 2>/dev/null || true

# 2. The key's limit at 120 a minute; the index as saved. ICCIDs from pages across the list,
# read before the agents start (the window then resets).
sandbox 120
H=(-H "x-access-code: ak_demo_acme" -H "x-secret-key: sk_demo_acme")
total=$(curl -s "${H[@]}" "$API/reseller/esims?pageSize=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
for page in 1 $((total / 300)) $((total / 150)) $((total / 100)); do
  curl -s "${H[@]}" "$API/reseller/esims?page=$page&pageSize=100" |
    python3 -c 'import json,sys; [print(e["rawOrderJson"]["iccid"]) for e in json.load(sys.stdin)["esims"][::20]]'
done >"$WORK/iccids"
sleep 61
gateway 120
until [ "$(figure esimdash_gateway_index_list_total)" != "0" ]; do sleep 0.2; done
sent_before=$(( $(figure esimdash_gateway_upstream_reads_total) + $(figure esimdash_gateway_index_reads_total) ))
{
  echo "local tokens = {"
  for n in $(seq 1 "$AGENTS"); do
    python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); print("{\"%s\", \"%s\"}," % (t["accessCode"], t["secretKey"]))' "$WORK/agent$n.json"
  done
  echo "}"
  echo "local iccids = {"
  sed 's/.*/"&",/' "$WORK/iccids"
  echo "}"
  cat <<'LUA'
local n = 0
request = function()
  n = n + 1
  local t = tokens[(n % #tokens) + 1]
  local iccid = iccids[(n % #iccids) + 1]
  return wrk.format("GET", "/api/v1/reseller/esims?iccid=" .. iccid,
    { ["x-access-code"] = t[1], ["x-secret-key"] = t[2] })
end
done = function(summary, latency, requests)
  io.write(string.format("%d lookups in %.0f s: p50 %.1f ms, p95 %.1f ms, p99 %.1f ms; errors %d\n",
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000,
    latency:percentile(95) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.timeout))
end
LUA
} >"$WORK/lookups.lua"
# One connection an agent, one thread (wrk's and the gateway's share the two cores).
wrk -t1 -c"$AGENTS" -d"${SECONDS_}s" -s "$WORK/lookups.lua" "http://127.0.0.1:$GW_PORT" | tail -1
sent=$(( $(figure esimdash_gateway_upstream_reads_total) + $(figure esimdash_gateway_index_reads_total) - sent_before ))
echo "requests to the API in that time (reads + index pages, counted by the gateway): $sent of the key's 120 a minute;" \
  "answers 429 from the API: $(figure esimdash_gateway_upstream_rate_limited_total)"
