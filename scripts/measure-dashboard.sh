#!/bin/bash
# Launch-to-balance, idle CPU over 10 s, and memory of the release dashboard in tmux.
BIN=${BIN:-${CARGO_TARGET_DIR:-$(cd "$(dirname "$0")/.." && pwd)/target}/release/esimdash}
set -u
PIDFILE=$(mktemp)
[ -x "$BIN" ] || { echo "build first: cargo build --release"; exit 1; }
T="tmux -L measure"
for run in 1 2 3 4 5; do
  $T kill-server 2>/dev/null; sleep 0.3
  rm -f "$PIDFILE"
  start=$(date +%s%N)
  $T new-session -d -x 120 -y 40 "sh -c 'echo \$\$ > "$PIDFILE"; exec $BIN --demo --log-file /dev/null'"
  n=0; until [ $n -gt 2000 ] || $T capture-pane -p 2>/dev/null | grep -q "Balance 250.00"; do sleep 0.005; n=$((n+1)); done
  end=$(date +%s%N)
  echo "run $run: launch to balance $(( (end-start)/1000000 )) ms"
done
pid=$(cat "$PIDFILE")
sleep 2
tick=$(getconf CLK_TCK)
read -r u1 s1 < <(awk '{print $14, $15}' /proc/$pid/stat)
sleep 10
read -r u2 s2 < <(awk '{print $14, $15}' /proc/$pid/stat)
echo "idle 10 s: $(( (u2-u1)+(s2-s1) )) ticks of CPU (1 tick = $((1000/tick)) ms)"
grep -E 'VmHWM|VmRSS|Threads' /proc/$pid/status
$T kill-server
