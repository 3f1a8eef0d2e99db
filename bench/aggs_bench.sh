#!/usr/bin/env bash
# Aggregations (issue #12's benchmark): the Rally nyc_taxis and http_logs aggregation operations
# (bench/workloads/taxis.aggs.txt, logs.aggs.txt) plus a keyword `terms` under match_all, scry
# over HTTP against Lucene 8.7's faceting module in-process, on the same generated documents.
#
#   bench/aggs_bench.sh                                  # 2M taxis + 2M logs docs
#   TAXIS_DOCS=5000000 LOGS_DOCS=10000000 bench/aggs_bench.sh   # the issue's sizes
#
# scry: `scry gen` (once per size and seed; both engines read the same file) -> release
# `scry serve --search-threads 1` (fresh data folder unless KEEP_DATA=1) -> the Rally mappings
# (one shard, no replica) -> refresh off -> `scry load --conns LOAD_CONNS` -> refresh,
# force-merge to one segment; the
# validation pass of `scry bench run` over every operation; the operations that answer are
# timed (one connection, request_cache=false on every request: scry has no request cache, so
# every request recomputes), the ones that fail are listed with the server's error.
# bench/agg_probe.py records per operation the docs it collects, the peak request-breaker bytes,
# its buckets and the server's CPU time per request. Lucene: bench/LuceneAggBench.java indexes the same fields (one segment) and
# times the same operations single-threaded. Buckets' doc count sums must agree.
# bench/aggs_report.py writes $OUT/aggs.md and, unless NO_DOCS=1, the "Aggregations" section
# of docs/benchmarks.md (between its aggs_bench markers).
#
# Environment: TAXIS_DOCS (2000000) LOGS_DOCS (2000000) SEED (1) OUT (build/aggs-bench)
# LOAD_CONNS (_bulk requests in flight while loading, 2)
# WARMUP (1) REPS (3) DURATION (2) RUNS (Lucene timed runs, 21) SKIP_BUILD=1 KEEP_DATA=1
# LUCENE=0 (scry only) ONLY (an extended regex: time only the operations whose names match) BIN (the scry binary, build/release/scry; another copy lets a long load
# run while build/release is rebuilt).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${TAXIS_DOCS:=2000000}" "${LOGS_DOCS:=2000000}" "${SEED:=1}" "${OUT:=build/aggs-bench}"
: "${WARMUP:=1}" "${REPS:=3}" "${DURATION:=2}" "${RUNS:=21}" "${LUCENE:=1}" "${LOAD_CONNS:=2}"
PY=/usr/bin/python3
BIN=${BIN:-build/release/scry}
J=/usr/share/java
CP=$J/lucene-core-8.7.0.jar:$J/lucene-facet-8.7.0.jar
START=$(date +%s)
log() { echo "[aggs_bench $(($(date +%s) - START))s] $*" >&2; }
die() { echo "bench/aggs_bench.sh: $*" >&2; exit 1; }
mkdir -p "$OUT/corpus" "$OUT/classes"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  log "building release scry"
  cmake --preset release >/dev/null
  cmake --build build/release -j2 --target scry >"$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log" >&2; die "release build failed"; }
fi
[ -x "$BIN" ] || die "$BIN missing"

gen() { # kind docs file
  if [ ! -s "$3" ] || [ "$(cat "$3.meta" 2>/dev/null)" != "$1 $2 $SEED" ]; then
    log "generating $2 $1 docs (seed $SEED)"
    "$BIN" gen "$1" --seed "$SEED" --docs "$2" > "$3.tmp" && mv "$3.tmp" "$3"
    echo "$1 $2 $SEED" > "$3.meta"
  fi
}
gen taxis "$TAXIS_DOCS" "$OUT/corpus/taxis.ndjson"
gen logs "$LOGS_DOCS" "$OUT/corpus/logs.ndjson"
META="taxis $TAXIS_DOCS, logs $LOGS_DOCS docs, seed $SEED"

# ---- the operations: the Rally ones as they are, plus a keyword terms under match_all ----
WL=$OUT/aggs.txt
{
  grep -hv '^#' bench/workloads/taxis.aggs.txt bench/workloads/logs.aggs.txt
  printf 'terms_payment_type\tPOST\t/nyc_taxis/_search?request_cache=false\t{"size":0,"aggs":{"payment_types":{"terms":{"field":"payment_type"}}}}\n'
} > "$WL"
if [ -n "${ONLY:-}" ]; then
  grep -E "^(${ONLY})"$'\t' "$WL" > "$WL.only" || die "ONLY=$ONLY matches no operation"
  mv "$WL.only" "$WL"
fi

# ---- scry ----
SPID=""
cleanup() { if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi; }
trap cleanup EXIT
if [ "${KEEP_DATA:-0}" != 1 ] || [ "$(cat "$OUT/data.meta" 2>/dev/null)" != "$META" ]; then
  rm -rf "$OUT/data" "$OUT/data.meta"
fi
: > "$OUT/server.log"
rm -f "$OUT/port"
"$BIN" serve --data "$OUT/data" --port 0 --port-file "$OUT/port" --log-level warn \
  --search-threads 1 >> "$OUT/server.log" 2>&1 &
SPID=$!
for _ in $(seq 600); do [ -s "$OUT/port" ] && break; kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
[ -s "$OUT/port" ] || { tail -20 "$OUT/server.log" >&2; die "scry serve did not start"; }
PORT=$(cat "$OUT/port")
URL=http://127.0.0.1:$PORT
req() { # method path [body-file]
  local code last="$OUT/last.$BASHPID.json" # a file per process: the loads run side by side
  code=$(curl -s -o "$last" -w '%{http_code}' -X "$1" "$URL$2" -H 'Content-Type: application/json' ${3:+--data-binary @"$3"})
  [ "${code:0:1}" = 2 ] || die "$1 $2 answered $code: $(head -c 300 "$last")"
}
load() { # index corpus mapping: loads and refreshes; the times go to $OUT/load.times
  # no periodic refresh while loading: segments are written as the indexing buffer fills
  printf '{"index":{"refresh_interval":"-1"}}' > "$OUT/refresh_off.json"
  req PUT "/$1/_settings" "$OUT/refresh_off.json"
  log "loading $2 into scry [$1] ($LOAD_CONNS _bulk requests in flight)"
  local t0 t1
  t0=$(date +%s.%N)
  "$BIN" load --index "$1" "$2" --url "$URL" --quiet --conns "$LOAD_CONNS" 2>&1 | tee -a "$OUT/load.log" >&2
  req POST "/$1/_refresh"
  t1=$(date +%s.%N)
  echo "$1 load_s $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")" >> "$OUT/load.times"
}
merge() { # index
  local t0 t1
  t0=$(date +%s.%N)
  req POST "/$1/_forcemerge?max_num_segments=1"
  req POST "/$1/_refresh"
  req POST "/$1/_flush"
  t1=$(date +%s.%N)
  echo "$1 merge_s $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")" >> "$OUT/load.times"
}
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.0f", ($14 + $15) / hz}' "/proc/$SPID/stat"; }
# kept data: the shards recover in the background after the server starts
req GET "/_cluster/health?wait_for_status=yellow&timeout=600s"
if [ ! -s "$OUT/data.meta" ]; then
  : > "$OUT/load.times"
  req PUT /nyc_taxis bench/workloads/taxis.index.json
  req PUT /logs-gen bench/workloads/logs.index.json
  # both indices at once: each shard indexes under its own lock, so the two loads use both
  # cores (one load is one indexing thread plus the shard's refresh and merge threads)
  c0=$(cpu_s)
  t0=$(date +%s)
  load nyc_taxis "$OUT/corpus/taxis.ndjson" taxis &
  LP1=$!
  load logs-gen "$OUT/corpus/logs.ndjson" logs &
  LP2=$!
  wait $LP1 || die "loading nyc_taxis failed"
  wait $LP2 || die "loading logs-gen failed"
  echo "both load_s $(($(date +%s) - t0)) server_cpu_s $(($(cpu_s) - c0))" >> "$OUT/load.times"
  c0=$(cpu_s)
  t0=$(date +%s)
  merge nyc_taxis
  merge logs-gen
  echo "both merge_s $(($(date +%s) - t0)) server_cpu_s $(($(cpu_s) - c0))" >> "$OUT/load.times"
  echo "$META" > "$OUT/data.meta"
fi
bench() { # workload out [options]
  local wl=$1 out=$2
  shift 2
  "$BIN" bench run --host 127.0.0.1 --port "$PORT" --workload "$wl" --conns 1 --threads 1 \
    --warmup "$WARMUP" --reps "$REPS" --duration "$DURATION" --pid "$SPID" --label aggs \
    --build "scry $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    --corpus "$META" --out "$out" "$@" >&2
}
log "scry: validation, probe (docs collected, peak breaker bytes, buckets)"
bench "$WL" "$OUT/validate.json" --validate-only
"$PY" bench/agg_probe.py --pid "$SPID" "$URL" "$WL" > "$OUT/probe.json"
# only the operations that answer are timed
"$PY" -c 'import json, sys
bad = {q["class"] for q in json.load(open(sys.argv[1]))["validation"] if q["error"]}
for line in open(sys.argv[2]):
    if line.startswith("#") or line.split("\t", 1)[0] not in bad:
        sys.stdout.write(line)' "$OUT/validate.json" "$WL" > "$OUT/aggs.ok.txt"
log "scry: timing (1 connection, warm-up $WARMUP s, $REPS x $DURATION s per operation)"
bench "$OUT/aggs.ok.txt" "$OUT/scry.json"
echo "$(cut -d' ' -f1-3 /proc/loadavg)" > "$OUT/loadavg.txt"
cleanup
SPID=""

# ---- Lucene ----
if [ "$LUCENE" = 1 ]; then
  javac -d "$OUT/classes" -cp "$CP" bench/LucenePointsBench.java bench/LuceneAggBench.java \
    bench/LuceneAggMore.java
  # the fields the Lucene index holds: bump when LuceneAggBench indexes more
  LMETA="$META; lucene fields 2"
  if [ "$(cat "$OUT/lucene.meta" 2>/dev/null)" != "$LMETA" ]; then rm -rf "$OUT/lucene" "$OUT/lucene.meta"; fi
  log "lucene: index (unless cached) and timing ($RUNS runs per operation)"
  java -Xmx2g -cp "$OUT/classes:$CP" LuceneAggBench "$OUT/corpus/taxis.ndjson" \
    "$OUT/corpus/logs.ndjson" "$OUT/lucene" "$RUNS" > "$OUT/lucene.tsv"
  echo "$LMETA" > "$OUT/lucene.meta"
  echo "$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/loadavg.txt"
fi

# ---- report ----
rc=0
"$PY" bench/aggs_report.py "$OUT" "$META" "$(($(date +%s) - START))" || rc=$?
if [ "${NO_DOCS:-0}" != 1 ]; then
  "$PY" bench/docs_section.py docs/benchmarks.md aggs_bench "$OUT/aggs.md"
fi
log "done in $(($(date +%s) - START)) s"
exit $rc
