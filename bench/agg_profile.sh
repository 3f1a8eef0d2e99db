#!/usr/bin/env bash
# The profile of one aggregation operation on a running server: `perf record` on the server's
# process while `scry bench run` replays the operation on one connection, then the top
# entries by self time (symbols, then threads). Used for the operations of bench/aggs_bench.sh
# that are below 2x Lucene (docs/benchmarks.md).
#
#   bench/agg_profile.sh PID PORT WORKLOAD.txt OPERATION [SECONDS (10)] [TOP (12)]
#
# PID: the server's process id; WORKLOAD.txt: CLASS<TAB>METHOD<TAB>PATH<TAB>BODY lines (as
# build/aggs-bench/aggs.txt). Needs perf (linux-perf) and the release binary's symbols.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 4 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
PID=$1 PORT=$2 WL=$3 OP=$4 SECS=${5:-10} TOP=${6:-12}
BIN=${BIN:-build/release/scry}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
grep -E "^${OP}"$'\t' "$WL" > "$TMP/op.txt" || { echo "no operation $OP in $WL" >&2; exit 1; }
perf record -F 999 -g -p "$PID" -o "$TMP/perf.data" -- sleep "$SECS" >/dev/null 2>&1 &
PP=$!
"$BIN" bench run --host 127.0.0.1 --port "$PORT" --workload "$TMP/op.txt" --conns 1 \
  --threads 1 --warmup 0 --reps 1 --duration "$SECS" --no-validate --out "$TMP/r.json" \
  >/dev/null 2>&1 || true
wait "$PP" || true
echo "## $OP"
perf report -i "$TMP/perf.data" --no-children --sort sym --stdio -g none 2>/dev/null |
  grep '%' | head -n "$TOP"
perf report -i "$TMP/perf.data" --no-children --sort comm --stdio -g none 2>/dev/null |
  grep '%' | head -n 4
