#!/usr/bin/env bash
# Build times, frames and `balance`, side by side for two commits (docs/performance.md, "build"):
# for each, in a worktree of its own with a fresh target folder, one build at a time: a clean
# `cargo build --release`, the rebuild after touching a dashboard file and a domain file, and
# the frame benches; then `balance` by `perf stat -r 40`, three rounds alternating, against one
# sandbox. Usage: scripts/measure-build.sh BEFORE [AFTER]  (AFTER defaults to HEAD).
set -u
cd "$(dirname "$0")/.."
BEFORE=${1:?which commit to compare with}
AFTER=${2:-HEAD}
WORK=$(mktemp -d)
secs() { local s e; s=$(date +%s.%N); "$@" >"$WORK/last.log" 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc; }
for side in before after; do
  rev=$([ $side = before ] && echo "$BEFORE" || echo "$AFTER")
  dir=$WORK/$side
  git worktree add -f --detach "$dir" "$rev" >/dev/null 2>&1
  export CARGO_TARGET_DIR=$WORK/target-$side
  (
    cd "$dir"
    echo "$side ($rev): clean release build: $(secs cargo build --release) s"
    dash=$(ls crates/tui/src/app/mod.rs src/tui/app/mod.rs 2>/dev/null | head -1)
    touch "$dash"; echo "$side: rebuild after touching $dash: $(secs cargo build --release) s"
    touch crates/domain/src/money.rs; echo "$side: rebuild after touching crates/domain/src/money.rs: $(secs cargo build --release) s"
    cargo bench --bench hot_paths -- frame 2>/dev/null | grep -E "search|Catalog|Orders|Esims|Profile"
  )
done
unset CARGO_TARGET_DIR
PORT=${PORT:-18195}
"$WORK/target-after/release/esimdash" sandbox --addr "127.0.0.1:$PORT" --rate-limit 1000000 >/dev/null 2>&1 &
SANDBOX=$!
trap 'kill $SANDBOX 2>/dev/null; git worktree remove --force "$WORK/before"; git worktree remove --force "$WORK/after"; rm -rf "$WORK"' EXIT
sleep 2
export ESIMDASH_BASE_URL=http://127.0.0.1:$PORT/api/v1 ESIMDASH_ACCESS_CODE=ak_demo_acme ESIMDASH_SECRET_KEY=sk_demo_acme
export XDG_STATE_HOME=$WORK/state XDG_CONFIG_HOME=$WORK/config
for round in 1 2 3; do
  for side in before after; do
    echo "balance $side, round $round: $(perf stat -r 40 "$WORK/target-$side/release/esimdash" balance 2>&1 >/dev/null | grep 'time elapsed')"
  done
done
