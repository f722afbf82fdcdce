#!/usr/bin/env bash
# The sandbox at scale, for each size in SIZES (orders per reseller, two resellers): the time to
# seed and start, resident memory (now and at its peak), and per request both the time at the
# server (its Server-Timing header) and curl's whole time_total, for the first, middle and last
# page of the lists (plain and filtered by status, the first ask of each uncached) and for the
# lookups by ICCID; then the median of many pages of each kind of list.
# Needs a release build (cargo build --release --bin esimdash), curl and a Linux /proc.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-${ORDERS:-100000 1000000}}
BIN=${BIN:-target/release/esimdash}
PORT=${PORT:-18093}
BASE="http://127.0.0.1:$PORT/api/v1"
AUTH=(-H x-access-code:ak_demo_acme -H x-secret-key:sk_demo_acme)
PID=
BODY=$(mktemp)
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -f "$BODY"' EXIT

mb() { awk -v k="$1" '$1 == k":" {printf "%.0f MB", $2/1024}' "/proc/$PID/status"; }
# One request, its body kept in $BODY: the time at the server and curl's time_total.
ask() {
  curl -s -D - -o "$BODY" -w 'time_total=%{time_total}\n' "${AUTH[@]}" "$BASE/$1" | tr -d '\r' |
    awk -F'dur=|time_total=' 'tolower($0) ~ /^server-timing:/ {s=$2} /^time_total=/ {t=$2*1000}
      END {printf "%7.3f ms at the server, %7.3f ms in all", s, t}'
}
body() { curl -s "${AUTH[@]}" "$BASE/$1"; }
total_of() { body "$1" | grep -o '"total":[0-9]*' | head -1 | cut -d: -f2; }
last_page() { echo $(( ($1 + 99) / 100 > 0 ? ($1 + 99) / 100 : 1 )); }
median() { sort -n | awk '{v[NR]=$1} END {printf "median %.3f ms, max %.3f ms over %d pages", v[int((NR+1)/2)], v[NR], NR}'; }
server_ms() { curl -s -D - -o /dev/null "${AUTH[@]}" "$BASE/$1" |
  tr -d '\r' | awk -F'dur=' 'tolower($0) ~ /^server-timing:/ {print $2}'; }

# First, middle and last page of one list, each asked once, in that order: the first ask of a
# filtered list is the one that finds its matches, the others are served from them.
three_pages() {
  local label=$1 path=$2 first total last
  first=$(ask "$path&pageSize=100&page=1")
  total=$(grep -o '"total":[0-9]*' "$BODY" | head -1 | cut -d: -f2)
  last=$(last_page "$total")
  printf '  %-28s page %7d of %7d: %s\n' "$label" 1 "$last" "$first"
  for page in $(( (last + 1) / 2 )) "$last"; do
    printf '  %-28s page %7d of %7d: %s\n' "$label" "$page" "$last" "$(ask "$path&pageSize=100&page=$page")"
  done
}

measure_size() {
  local orders=$1 started ready iccid first_iccid
  started=$(date +%s.%N)
  "$BIN" sandbox --addr "127.0.0.1:$PORT" --orders "$orders" --rate-limit 1000000 >/dev/null 2>&1 &
  PID=$!
  until curl -s -o /dev/null "$BASE/reseller/balance"; do
    kill -0 $PID 2>/dev/null || { echo "sandbox --orders $orders did not start" >&2; exit 1; }
    sleep 0.05
  done
  ready=$(date +%s.%N)
  echo "sandbox --orders $orders (2 resellers):"
  awk -v a="$started" -v b="$ready" 'BEGIN {printf "  seeded and listening after %.2f s\n", b - a}'
  echo "  $(mb VmRSS) resident after start, peak $(mb VmHWM)"
  three_pages "orders" "reseller/orders?x=1"
  three_pages "orders, status=active" "reseller/orders?status=active"
  three_pages "orders, status=cancel" "reseller/orders?status=cancel"
  three_pages "esims" "reseller/esims?x=1"
  three_pages "esims, status=in_use" "reseller/esims?status=in_use"
  three_pages "esims, status=active" "reseller/esims?status=active"
  local total
  total=$(total_of "reseller/esims?pageSize=1")
  iccid=$(body "reseller/esims?pageSize=1&page=$total" | grep -o '"iccid":"[0-9]*"' | head -1 | cut -d'"' -f4)
  first_iccid=$(body "reseller/esims?pageSize=1" | grep -o '"iccid":"[0-9]*"' | head -1 | cut -d'"' -f4)
  for i in "$iccid" "$first_iccid"; do
    printf '  %-45s %s\n' "lookup esims?iccid=$i" "$(ask "reseller/esims?iccid=$i")"
    printf '  %-45s %s\n' "lookup orders?iccid=$i" "$(ask "reseller/orders?iccid=$i")"
    printf '  %-45s %s\n' "top-ups of $i" "$(ask "portal/plans?type=topup&iccid=$i")"
  done
  repeated() {
    local label=$1 path=$2
    for page in 1 2 3 50 100 250 500 750 900 1000 1; do server_ms "$path&page=$page"; done | median | sed "s|^|  $label: |"
    echo
  }
  repeated "orders, plain           " "reseller/orders?pageSize=100"
  repeated "orders, q=fr            " "reseller/orders?pageSize=100&q=fr"
  repeated "orders, status=active   " "reseller/orders?pageSize=100&status=active"
  repeated "orders, iccid           " "reseller/orders?pageSize=100&iccid=$iccid"
  repeated "esims, plain            " "reseller/esims?pageSize=100"
  repeated "esims, status=in_use    " "reseller/esims?pageSize=100&status=in_use"
  repeated "esims, iccid            " "reseller/esims?pageSize=100&iccid=$iccid"
  echo "  first (uncached) query, q=xyz over every order: $(server_ms "reseller/orders?pageSize=100&q=xyz&page=1") ms"
  echo "  after the pages: $(mb VmRSS) resident, peak $(mb VmHWM)"
  kill $PID
  wait $PID 2>/dev/null || true
  PID=
}

for orders in $SIZES; do measure_size "$orders"; done
