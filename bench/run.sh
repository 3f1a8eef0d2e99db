#!/usr/bin/env bash
# The standard benchmark run (`make bench`; `make bench-quick` = --quick): release build,
# deterministic corpora (scry gen), a fresh `scry serve`, index creation from
# bench/workloads/*.index.json, bulk load (scry load), refresh + force-merge to one segment,
# then per workload the validation pass and the grid (1 and 8 connections) with `scry bench`,
# Lucene 8.7 in-process on the same wiki corpus (bench/lucene_wiki.sh, server stopped), and
# finally docs/benchmarks.md with tables and gnuplot charts (bench/report.py). Aggregation
# workloads (bench/workloads/*.aggs.txt): the operations that answer join the grid, with docs
# collected, ns per doc and peak request-breaker bytes (bench/agg_probe.py); the ones that fail
# are listed with the server's error. Side by side with Lucene's faceting module:
# bench/aggs_bench.sh.
#
# Sizes and timings can be overridden from the environment:
#   WIKI_DOCS TAXIS_DOCS LOGS_DOCS   corpus sizes (defaults: full 300000/500000/500000,
#                                    quick 20000/20000/20000)
#   CONNS (1,8) WARMUP REPS DURATION grid settings
#   SEED (1)                         generator seed
#   OUT (build/bench)                corpora, server data and raw results
#   SERVER_URL                       benchmark an already running server instead (no load)
#   SKIP_BUILD=1                     use the existing build/release/scry as it is
#   LUCENE=0                         skip the Lucene run (quick mode skips it unless LUCENE=1)
#   LUCENE=FILE                      use these Lucene numbers instead of running it (lucene.tsv
#                                    from bench/lucene_wiki.sh, or JSON; see bench/report.py)
#   LUCENE_REPS (3)                  timed runs per query on the Lucene side
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
QUICK=0
for a in "$@"; do
  case "$a" in
    --quick) QUICK=1 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    *) echo "bench/run.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
START=$(date +%s)
if [ $QUICK -eq 1 ]; then
  : "${WIKI_DOCS:=20000}" "${TAXIS_DOCS:=20000}" "${LOGS_DOCS:=20000}"
  : "${WARMUP:=0.2}" "${REPS:=1}" "${DURATION:=0.5}"
  WORKLOADS="luceneutil.top10 taxis logs"
  : "${LUCENE:=0}"
else
  : "${WIKI_DOCS:=300000}" "${TAXIS_DOCS:=500000}" "${LOGS_DOCS:=500000}"
  : "${WARMUP:=1}" "${REPS:=3}" "${DURATION:=2}"
  WORKLOADS="luceneutil.top10 luceneutil.count game.top10 taxis logs"
  : "${LUCENE:=1}"
fi
AGG_WORKLOADS="taxis.aggs logs.aggs"
: "${CONNS:=1,8}" "${SEED:=1}" "${OUT:=build/bench}"
PY=/usr/bin/python3
BIN=build/release/scry
log() { echo "[bench $(($(date +%s) - START))s] $*" >&2; }
die() { echo "bench/run.sh: $*" >&2; exit 1; }

mkdir -p "$(dirname "$OUT")"
if [ "${SKIP_BUILD:-0}" = 1 ]; then
  log "SKIP_BUILD=1: using the existing $BIN"
else
  log "building release"
  cmake --preset release >/dev/null
fi
if [ "${SKIP_BUILD:-0}" != 1 ] && ! cmake --build build/release -j"$(nproc)" --target scry >"$OUT.build.log" 2>&1; then
  mkdir -p "$(dirname "$OUT")"
  tail -20 "$OUT.build.log" >&2 || true
  die "the release build failed (log: $OUT.build.log); the benchmark needs build/release/scry"
fi
[ -x "$BIN" ] || die "$BIN missing after the build"
"$BIN" bench --help >/dev/null 2>&1 || die "$BIN has no 'bench' command (src/cmd/main.c dispatch)"
mkdir -p "$OUT/corpus" "$OUT/results"

SPID=""
cleanup() {
  if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi
}
trap cleanup EXIT

if [ -z "${SERVER_URL:-}" ]; then
  "$BIN" serve --help >/dev/null 2>&1 ||
    die "'scry serve' is not available yet in $BIN: the server (src/cmd/serve.c) must work before the standard run"
  gen() { # kind docs file
    if [ ! -s "$3" ] || [ "$(cat "$3.meta" 2>/dev/null)" != "$1 $2 $SEED" ]; then
      log "generating $1: $2 docs"
      "$BIN" gen "$1" --seed "$SEED" --docs "$2" > "$3.tmp" && mv "$3.tmp" "$3"
      echo "$1 $2 $SEED" > "$3.meta"
    fi
  }
  gen wiki "$WIKI_DOCS" "$OUT/corpus/wiki.ndjson"
  gen taxis "$TAXIS_DOCS" "$OUT/corpus/taxis.ndjson"
  gen logs "$LOGS_DOCS" "$OUT/corpus/logs.ndjson"

  rm -rf "$OUT/data" "$OUT/port"
  log "starting scry serve"
  "$BIN" serve --data "$OUT/data" --port 0 --port-file "$OUT/port" --log-level warn \
    > "$OUT/server.log" 2>&1 &
  SPID=$!
  for _ in $(seq 100); do [ -s "$OUT/port" ] && break; kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
  [ -s "$OUT/port" ] || { tail -20 "$OUT/server.log" >&2; die "scry serve did not start (log: $OUT/server.log)"; }
  URL="http://127.0.0.1:$(cat "$OUT/port")"
  curl -sf "$URL/" >/dev/null || die "scry serve at $URL does not answer GET /"
  req() { # method path [body-file]
    local code
    if [ $# -ge 3 ]; then
      code=$(curl -s -o "$OUT/last.json" -w '%{http_code}' -X "$1" "$URL$2" -H 'Content-Type: application/json' --data-binary @"$3")
    else
      code=$(curl -s -o "$OUT/last.json" -w '%{http_code}' -X "$1" "$URL$2")
    fi
    [ "${code:0:1}" = 2 ] || { echo "$1 $2 answered $code: $(head -c 300 "$OUT/last.json")" >&2; return 1; }
  }
  note() { echo "$*" >> "$OUT/results/notes.txt"; log "NOTE: $*"; }
  load() { # index corpus-file workload (mapping bench/workloads/<workload>.index[.compat].json)
    log "creating and loading $1"
    if ! req PUT "/$1" "bench/workloads/$3.index.json" 2>>"$OUT/server.log"; then
      local why
      why=$(head -c 300 "$OUT/last.json")
      if [ -e "bench/workloads/$3.index.compat.json" ] &&
         req PUT "/$1" "bench/workloads/$3.index.compat.json" 2>>"$OUT/server.log"; then
        note "$1: the exact Rally mapping was rejected ($why); loaded with $3.index.compat.json"
      else
        note "$1: index creation failed ($(head -c 300 "$OUT/last.json")); workload $3 skipped"
        return 1
      fi
    fi
    local t0 t1
    t0=$(date +%s.%N)
    "$BIN" load --index "$1" "$2" --url "$URL" --quiet || { note "$1: scry load failed; workload $3 skipped"; return 1; }
    t1=$(date +%s.%N)
    req POST "/$1/_refresh" || die "refresh of $1 failed"
    req POST "/$1/_forcemerge?max_num_segments=1" || note "$1: force-merge failed; measured as loaded"
    req POST "/$1/_refresh" || die "refresh of $1 failed"
    echo "$1 $(wc -l < "$2") $t0 $t1" >> "$OUT/results/load.txt"
  }
  rm -f "$OUT/results/"*
  load wiki "$OUT/corpus/wiki.ndjson" wiki || die "cannot load the wiki corpus"
  load nyc_taxis "$OUT/corpus/taxis.ndjson" taxis ||
    { WORKLOADS=${WORKLOADS/taxis/}; AGG_WORKLOADS=${AGG_WORKLOADS/taxis.aggs/}; }
  load logs-gen "$OUT/corpus/logs.ndjson" logs ||
    { WORKLOADS=${WORKLOADS/logs/}; AGG_WORKLOADS=${AGG_WORKLOADS/logs.aggs/}; }
  PIDARG=(--pid "$SPID")
  CORPUS="wiki $WIKI_DOCS, taxis $TAXIS_DOCS, logs $LOGS_DOCS docs, seed $SEED"
else
  URL=$SERVER_URL
  PIDARG=()
  CORPUS="external server $URL"
fi

HOSTPORT=${URL#http://}
BUILD="scry $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo -dirty)"
grid() { # workload [extra scry bench options]
  local wl=$1
  shift
  "$BIN" bench run --host "${HOSTPORT%:*}" --port "${HOSTPORT##*:}" \
    --workload "bench/workloads/$wl.txt" --conns "$CONNS" --warmup "$WARMUP" --reps "$REPS" \
    --duration "$DURATION" "${PIDARG[@]}" --label "$wl" --build "$BUILD" --corpus "$CORPUS" \
    --out "$OUT/results/$wl.json" "$@" || die "scry bench failed on $wl"
}
loadavg() { echo "$1 $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/results/loadavg.txt"; }
loadavg grid_start
for wl in $WORKLOADS; do
  log "workload $wl"
  grid "$wl"
  loadavg "$wl"
done
for wl in $AGG_WORKLOADS; do
  log "workload $wl: validation"
  grid "$wl" --validate-only
  # the classes whose requests all answer are timed; the others are listed with their error
  # (results/$wl.failed.json); per-class docs collected and peak breaker bytes from the probe
  "$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))
bad = [q for q in r["validation"] if q["error"]]
json.dump(bad, open(sys.argv[3], "w"))
badc = {q["class"] for q in bad}
with open(sys.argv[4], "w") as out:
    for line in open(sys.argv[2]):
        if not line.startswith("#") and line.strip() and line.split("\t", 1)[0] not in badc:
            out.write(line)' "$OUT/results/$wl.json" "bench/workloads/$wl.txt" \
    "$OUT/results/$wl.failed.json" "$OUT/$wl.ok.txt"
  "$PY" bench/agg_probe.py "$URL" "bench/workloads/$wl.txt" > "$OUT/results/$wl.probe.json" ||
    note "$wl: the probe (docs collected, peak breaker bytes) failed"
  if [ -s "$OUT/$wl.ok.txt" ]; then
    log "workload $wl: timing the operations that answer"
    "$BIN" bench run --host "${HOSTPORT%:*}" --port "${HOSTPORT##*:}" \
      --workload "$OUT/$wl.ok.txt" --conns "$CONNS" --warmup "$WARMUP" --reps "$REPS" \
      --duration "$DURATION" "${PIDARG[@]}" --label "$wl" --build "$BUILD" --corpus "$CORPUS" \
      --out "$OUT/results/$wl.json" || die "scry bench failed on $wl"
    loadavg "$wl"
  fi
done
cleanup
SPID=""

LUCENE_TSV=""
if [ -n "${SERVER_URL:-}" ]; then
  :
elif [ "$LUCENE" = 1 ]; then
  log "Lucene 8.7 in-process on the wiki corpus (bench/lucene_wiki.sh)"
  if bash bench/lucene_wiki.sh "$OUT/corpus/wiki.ndjson" "$OUT/lucene" "${LUCENE_REPS:-3}" \
      2> "$OUT/lucene.log"; then
    LUCENE_TSV=$OUT/lucene/lucene.tsv
  else
    tail -5 "$OUT/lucene.log" >&2
    note "the Lucene 8.7 run failed (log: $OUT/lucene.log): no Lucene column"
  fi
elif [ "$LUCENE" != 0 ]; then
  LUCENE_TSV=$LUCENE
fi

# The server-level matrix against Lucene 8.7 served over HTTP (Netty), same corpus, wrk at
# 1/8/32 connections: its own section of docs/benchmarks.md (LUCENE_HTTP=0 skips it).
if [ -z "${SERVER_URL:-}" ] && [ "$LUCENE" = 1 ] && [ $QUICK -eq 0 ] && [ "${LUCENE_HTTP:-1}" = 1 ]; then
  log "scry vs Lucene 8.7 over HTTP (bench/lucene_http.sh)"
  OUT=$OUT/lucene-http CORPUS=$OUT/corpus/wiki.ndjson SCRY=$BIN DOCS_MD=1 \
    bash bench/lucene_http.sh > "$OUT/lucene-http.log" 2>&1 ||
    note "the Lucene-over-HTTP matrix failed (log: $OUT/lucene-http.log)"
fi

log "writing docs/benchmarks.md"
"$PY" bench/report.py --results "$OUT/results" --docs docs --seconds "$(($(date +%s) - START))" \
  $([ $QUICK -eq 1 ] && echo --quick) ${LUCENE_TSV:+--lucene "$LUCENE_TSV"} || die "report failed"
log "done in $(($(date +%s) - START))s"
