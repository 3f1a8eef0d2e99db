#!/usr/bin/env bash
# Many idle shards on one node: threads and memory per shard. Starts a fresh `scry serve`
# (release build), creates indices of 10 shards until the node holds each of the counts asked
# for (default 1000 5000), and after each step prints the node's threads, RssAnon and the
# growth per shard over the empty node, and the CPU the idle node uses in 5 s (timers only).
#
#   bash bench/many_shards.sh [COUNTS...]      e.g. bash bench/many_shards.sh 1000 5000 20000
# Environment: SCRY_BIN (build/release/scry), PORT (9399), OUT (build/bench/many_shards).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${SCRY_BIN:-build/release/scry}
PORT=${PORT:-9399}
OUT=${OUT:-build/bench/many_shards}
COUNTS=("$@")
[ ${#COUNTS[@]} -gt 0 ] || COUNTS=(1000 5000)
[ -x "$BIN" ] || { cmake --preset release >/dev/null && cmake --build build/release -j"$(nproc)" --target scry >/dev/null; }
rm -rf "$OUT"; mkdir -p "$OUT"
"$BIN" serve --data "$OUT/data" --port "$PORT" >"$OUT/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "localhost:$PORT/" >/dev/null && break; sleep 0.1; done
field() { awk -v k="$1:" '$1 == k {print $2}' /proc/$pid/status; }
cpu_ticks() { awk '{print $14 + $15}' /proc/$pid/stat; }
base_anon=$(field RssAnon)
printf '%-8s %-8s %-12s %-14s %-12s\n' shards threads RssAnon_kB kB_per_shard idle_cpu_5s
printf '%-8s %-8s %-12s %-14s %-12s\n' 0 "$(field Threads)" "$base_anon" - -
have=0; ix=0
for want in "${COUNTS[@]}"; do
  while [ $have -lt "$want" ]; do
    curl -sf -XPUT "localhost:$PORT/many-$ix" -H 'Content-Type: application/json' \
      -d '{"settings":{"number_of_shards":10,"number_of_replicas":0}}' >/dev/null
    ix=$((ix + 1)); have=$((have + 10))
  done
  sleep 2
  t0=$(cpu_ticks); sleep 5; t1=$(cpu_ticks)
  anon=$(field RssAnon)
  per=$(awk -v a="$anon" -v b="$base_anon" -v n="$have" 'BEGIN {printf "%.1f", (a - b) / n}')
  cpu=$(awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2fs", d / hz}')
  printf '%-8s %-8s %-12s %-14s %-12s\n' "$have" "$(field Threads)" "$anon" "$per" "$cpu"
done
