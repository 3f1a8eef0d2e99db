#!/usr/bin/env bash
# Points, ranges and numeric sorts on an nyc_taxis-like corpus (issue #5's benchmark): scry over
# HTTP against Lucene 8.7 in-process, side by side in one run.
#
#   bench/taxis_bench.sh            # 5M docs (generation ~30 s, load ~2 min, Lucene index ~3 min)
#   TAXIS_DOCS=200000 bench/taxis_bench.sh   # smaller, for a try
#
# scry: `scry gen taxis` -> release `scry serve` (fresh data folder) -> the Rally nyc_taxis
# mapping (bench/workloads/taxis.index.json) -> `scry load` -> refresh, force-merge to one
# segment; then `scry bench run` with one connection (single-threaded client, request_cache off)
# over the operations below: the validation pass records every request's hit count, then WARMUP
# seconds and REPS x DURATION seconds per operation. Lucene: bench/LucenePointsBench.java `taxis`
# mode indexes the same documents (LongPoint/IntPoint + NumericDocValues, one segment) and times
# the same operations in-process (median of RUNS after a JIT warm-up). Exact counts must agree
# (the script fails otherwise). Writes $OUT/taxis.md and, unless NO_DOCS=1, the "Points, ranges
# and sorts on nyc_taxis" section of docs/benchmarks.md (between its markers).
#
# Environment: TAXIS_DOCS (5000000) SEED (1) OUT (build/taxis-bench) WARMUP (1) REPS (3)
# DURATION (2) RUNS (Lucene timed runs, 21) SKIP_BUILD=1 (use build/release/scry as it is)
# KEEP_DATA=1 (reuse the loaded scry data folder when it holds the same corpus; a 5M-doc index
# reopens in about 3 s).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${TAXIS_DOCS:=5000000}" "${SEED:=1}" "${OUT:=build/taxis-bench}" "${WARMUP:=1}" "${REPS:=3}"
: "${DURATION:=2}" "${RUNS:=21}"
PY=/usr/bin/python3
BIN=build/release/scry
JAR=/usr/share/java/lucene-core-8.7.0.jar
START=$(date +%s)
log() { echo "[taxis_bench $(($(date +%s) - START))s] $*" >&2; }
die() { echo "bench/taxis_bench.sh: $*" >&2; exit 1; }
mkdir -p "$OUT/corpus" "$OUT/classes"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  log "building release scry"
  cmake --preset release >/dev/null
  cmake --build build/release -j"$(nproc)" --target scry >"$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log" >&2; die "release build failed"; }
fi
[ -x "$BIN" ] || die "$BIN missing"
javac -d "$OUT/classes" -cp "$JAR" bench/LucenePointsBench.java

CORPUS=$OUT/corpus/taxis.ndjson
META="taxis $TAXIS_DOCS $SEED"
if [ ! -s "$CORPUS" ] || [ "$(cat "$CORPUS.meta" 2>/dev/null)" != "$META" ]; then
  log "generating $TAXIS_DOCS taxis docs (seed $SEED)"
  "$BIN" gen taxis --seed "$SEED" --docs "$TAXIS_DOCS" > "$CORPUS.tmp"
  mv "$CORPUS.tmp" "$CORPUS"
  echo "$META" > "$CORPUS.meta"
fi

# ---- the operations (scry request bodies; the Lucene equivalents are in TaxisCases) ----
WL=$OUT/taxis_points.txt
P=/nyc_taxis/_search?request_cache=false
AMT='{"range":{"total_amount":{"gte":5,"lt":15}}}'
DATE='{"range":{"dropoff_datetime":{"gte":"01/01/2015","lte":"21/01/2015","format":"dd/MM/yyyy"}}}'
{
  echo "# bench/taxis_bench.sh: CLASS\\tMETHOD\\tPATH\\tBODY"
  printf 'range_count\tPOST\t%s\t{"query":%s,"track_total_hits":true,"size":0}\n' "$P" "$AMT"
  printf 'range_total\tPOST\t%s\t{"query":%s,"track_total_hits":true}\n' "$P" "$AMT"
  printf 'range\tPOST\t%s\t{"query":%s}\n' "$P" "$AMT"
  printf 'date_range_count\tPOST\t%s\t{"query":%s,"track_total_hits":true,"size":0}\n' "$P" "$DATE"
  printf 'date_range_total\tPOST\t%s\t{"query":%s,"track_total_hits":true}\n' "$P" "$DATE"
  printf 'date_range\tPOST\t%s\t{"query":%s}\n' "$P" "$DATE"
  printf 'sort_pickup_desc_1000_total\tPOST\t%s\t{"query":{"match_all":{}},"sort":[{"pickup_datetime":"desc"}],"size":1000,"track_total_hits":true}\n' "$P"
  printf 'sort_pickup_desc_1000\tPOST\t%s\t{"query":{"match_all":{}},"sort":[{"pickup_datetime":"desc"}],"size":1000}\n' "$P"
  printf 'sort_pickup_desc_1000_nototal\tPOST\t%s\t{"query":{"match_all":{}},"sort":[{"pickup_datetime":"desc"}],"size":1000,"track_total_hits":false}\n' "$P"
  printf 'sort_passenger_desc_total\tPOST\t%s\t{"query":{"match_all":{}},"sort":[{"passenger_count":"desc"}],"track_total_hits":true}\n' "$P"
  printf 'sort_passenger_desc\tPOST\t%s\t{"query":{"match_all":{}},"sort":[{"passenger_count":"desc"}]}\n' "$P"
  printf 'sort_passenger_desc_nototal\tPOST\t%s\t{"query":{"match_all":{}},"sort":[{"passenger_count":"desc"}],"track_total_hits":false}\n' "$P"
} > "$WL"

# ---- scry ----
SPID=""
cleanup() { if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi; }
trap cleanup EXIT
if [ "${KEEP_DATA:-0}" != 1 ] || [ "$(cat "$OUT/data.meta" 2>/dev/null)" != "$META" ]; then
  rm -rf "$OUT/data" "$OUT/data.meta"
fi
start_server() { # extra serve options
  rm -f "$OUT/port"
  "$BIN" serve --data "$OUT/data" --port 0 --port-file "$OUT/port" --log-level warn "$@" \
    >> "$OUT/server.log" 2>&1 &
  SPID=$!
  for _ in $(seq 600); do [ -s "$OUT/port" ] && break; kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
  [ -s "$OUT/port" ] || { tail -20 "$OUT/server.log" >&2; die "scry serve did not start"; }
  PORT=$(cat "$OUT/port")
  URL=http://127.0.0.1:$PORT
}
: > "$OUT/server.log"
req() { # method path [body-file]
  local code
  code=$(curl -s -o "$OUT/last.json" -w '%{http_code}' -X "$1" "$URL$2" -H 'Content-Type: application/json' ${3:+--data-binary @"$3"})
  [ "${code:0:1}" = 2 ] || die "$1 $2 answered $code: $(head -c 300 "$OUT/last.json")"
}
# one search worker: the single-threaded measurement (HTTP workers stay at the default for the
# load; the client keeps one request in flight)
start_server --search-threads 1
if [ ! -s "$OUT/data.meta" ]; then
  req PUT /nyc_taxis bench/workloads/taxis.index.json
  log "loading $TAXIS_DOCS docs into scry"
  t0=$(date +%s.%N)
  "$BIN" load --index nyc_taxis "$CORPUS" --url "$URL" --quiet
  t1=$(date +%s.%N)
  req POST /nyc_taxis/_refresh
  log "force-merging to one segment"
  t2=$(date +%s.%N)
  req POST "/nyc_taxis/_forcemerge?max_num_segments=1"
  req POST /nyc_taxis/_refresh
  t3=$(date +%s.%N)
  echo "$t0 $t1 $t2 $t3" > "$OUT/load.times"
  req POST /nyc_taxis/_flush
  echo "$META" > "$OUT/data.meta"
fi
req GET /nyc_taxis/_count
grep -q "\"count\":$TAXIS_DOCS[,}]" "$OUT/last.json" || die "nyc_taxis holds $(cat "$OUT/last.json"), not $TAXIS_DOCS docs"
log "scry: timing (1 connection, warm-up $WARMUP s, $REPS x $DURATION s per operation)"
"$BIN" bench run --host 127.0.0.1 --port "$PORT" --workload "$WL" --conns 1 --threads 1 \
  --warmup "$WARMUP" --reps "$REPS" --duration "$DURATION" --pid "$SPID" --label taxis_points \
  --build "scry $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  --corpus "$META" --out "$OUT/scry.json" >&2
cleanup
SPID=""

# ---- Lucene ----
if [ "$(cat "$OUT/lucene.meta" 2>/dev/null)" != "$META" ]; then rm -rf "$OUT/lucene" "$OUT/lucene.meta"; fi
log "lucene: index (unless cached) and timing ($RUNS runs per operation)"
java -Xmx3g -cp "$OUT/classes:$JAR" LucenePointsBench taxis "$CORPUS" "$OUT/lucene" "$RUNS" > "$OUT/lucene.tsv"
echo "$META" > "$OUT/lucene.meta"

# ---- report ----
rc=0
"$PY" bench/taxis_report.py "$OUT" "$META" "$(($(date +%s) - START))" || rc=$?
if [ "${NO_DOCS:-0}" != 1 ]; then
  "$PY" bench/docs_section.py docs/benchmarks.md taxis_bench "$OUT/taxis.md"
fi
log "done in $(($(date +%s) - START)) s"
exit $rc
