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
# KEEP_DATA=1 (reuse the loaded scry data folder when it holds the same corpus; note that
# reopening a 5M-doc index is slow today: the id map is rebuilt key by key).
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
  printf 'sort_pickup_desc_1000\tPOST\t%s\t{"query":{"match_all":{}},"sort":[{"pickup_datetime":"desc"}],"size":1000}\n' "$P"
  printf 'sort_passenger_desc\tPOST\t%s\t{"query":{"match_all":{}},"sort":[{"passenger_count":"desc"}]}\n' "$P"
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
"$PY" - "$OUT" "$META" "$((START))" <<'PY' || rc=$?
import json, os, re, sys, time
out, meta, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.load(open(os.path.join(out, "scry.json")))
cells = {c["class"]: c for c in r["cells"]}
val = {}
for q in r["validation"]:
    cls = q.get("class")
    val[cls] = q
luc = {}
for line in open(os.path.join(out, "lucene.tsv")):
    f = line.rstrip("\n").split("\t")
    if f[0] != "case":
        luc[f[0]] = (int(f[1]), float(f[2]), float(f[3]))
order = ["range_count", "range_total", "range", "date_range_count", "date_range_total", "date_range", "sort_pickup_desc_1000",
         "sort_passenger_desc"]
what = {
    "range_count": "`range` total_amount gte 5 lt 15, exact count (track_total_hits true, size 0)",
    "range_total": "the same range, Rally body + track_total_hits true (top 10, exact total)",
    "range": "the same range, Rally body (size 10, totals up to 10,000)",
    "date_range_count": "`range` dropoff_datetime 01/01/2015..21/01/2015 `format` dd/MM/yyyy, exact count",
    "date_range_total": "the same date range, top 10 with track_total_hits true",
    "date_range": "the same date range, default request (size 10, totals up to 10,000)",
    "sort_pickup_desc_1000": "match_all sorted by pickup_datetime desc, size 1000",
    "sort_passenger_desc": "match_all sorted by passenger_count desc (Rally desc_sort_passenger_count)",
}
bad = []
for cls in ("range_count", "range_total", "date_range_count", "date_range_total"):
    s = val[cls]["total"]
    if s != luc[cls][0]:
        bad.append("%s: scry counts %d, Lucene %d" % (cls, s, luc[cls][0]))
for cls in order:
    if val[cls]["error"]:
        bad.append("%s: scry answered an error: %s" % (cls, val[cls].get("error_body", "")[:200]))
m = r.get("machine", {})
L = ["<!-- BEGIN taxis_bench (bench/taxis_bench.sh writes this section) -->",
     "## Points, ranges and sorts on nyc_taxis (scry vs Lucene 8.7)\n",
     "`bench/taxis_bench.sh` (issue #5): %s documents from `scry gen taxis --seed %s` with the Rally "
     "nyc_taxis mapping, loaded with `scry load` into a release `scry serve` (1 search "
     "thread), force-merged to one segment; measured with `scry bench run` over HTTP, one "
     "connection, `request_cache=false` (median latency over %s × %s s after %s s warm-up). Lucene "
     "8.7 in-process (`bench/LucenePointsBench.java taxis`): the same documents as Elasticsearch "
     "maps them (LongPoint/IntPoint + NumericDocValues, one segment), the same operations, median "
     "of %s runs after a JIT warm-up. Run %s on %s (%s CPUs, shared with other work, so absolute "
     "times are noisy; the ratios come from one run side by side). scry's latency includes the "
     "HTTP round trip and JSON; Lucene's does not.\n" % (
         meta.split()[1], meta.split()[2], r["settings"]["reps"], r["settings"]["duration_s"],
         r["settings"]["warmup_s"], os.environ.get("RUNS", "21"),
         time.strftime("%Y-%m-%d", time.gmtime()), m.get("cpu", "?"), m.get("nproc", "?")),
     "| operation | scry hits | scry p50 | Lucene hits | Lucene median | Lucene / scry |",
     "|---|---:|---:|---:|---:|---:|"]
def fus(us):
    return "%.2f ms" % (us / 1000.0) if us >= 1000 else "%d µs" % us
p50 = {}
for cls in order:
    c = cells.get(cls)
    p50[cls] = c["latency_us"]["p50"] if c else 0
    v = val[cls]
    sh = "%d%s" % (v["total"], "" if cls.endswith(("_count", "_total")) else " (≥)" if v["total"] >= 10000 else "")
    lh, lmed, _ = luc[cls]
    ratio = lmed * 1000.0 / p50[cls] if p50[cls] else 0
    L.append("| %s: %s | %s | %s | %s | %s | **%.2f×** |" % (
        cls, what[cls], sh, fus(p50[cls]), "%d" % lh, fus(lmed * 1000.0), ratio))
L.append("")
L.append("Bounded-hits requests against the exact total of the same request (scry p50; issue #5 "
         "aims at ≥ 10×; `_count` = size 0, which scry answers from the points without visiting "
         "documents, `_total` = the same top-10 request with `track_total_hits: true`):\n")
L.append("| | exact | bounded | exact / bounded |\n|---|---:|---:|---:|")
for a, b, name in (("range_total", "range", "total_amount range: `_total` vs default"),
                   ("range_count", "range", "total_amount range: `_count` vs default"),
                   ("date_range_total", "date_range", "dropoff_datetime range: `_total` vs default"),
                   ("date_range_count", "date_range", "dropoff_datetime range: `_count` vs default"),
                   ("range_total", "sort_pickup_desc_1000", "sort pickup desc 1000 vs total_amount `_total`"),
                   ("range_total", "sort_passenger_desc", "sort passenger_count vs total_amount `_total`")):
    if p50[a] and p50[b]:
        L.append("| %s | %s | %s | %.1f× |" % (name, fus(p50[a]), fus(p50[b]), p50[a] / p50[b]))
lt = os.path.join(out, "load.times")
if os.path.exists(lt):
    t = [float(x) for x in open(lt).read().split()]
    n = int(meta.split()[1])
    L.append("\nLoad: %.0f s (%.0f docs/s), force-merge %.0f s." % (t[1] - t[0], n / (t[1] - t[0]), t[3] - t[2]))
L.append("\nReproduce: `bash bench/taxis_bench.sh` (`TAXIS_DOCS=` for another size; the whole run "
         "takes ~%d min here).\n" % max(1, round((time.time() - start) / 60)))
if bad:
    L.append("**Answers differ:** " + "; ".join(bad) + "\n")
L.append("<!-- END taxis_bench -->")
text = "\n".join(L) + "\n"
open(os.path.join(out, "taxis.md"), "w").write(text)
print(text)
if bad:
    print("taxis_bench: " + "; ".join(bad), file=sys.stderr)
    sys.exit(3)
PY
if [ "${NO_DOCS:-0}" != 1 ]; then
  "$PY" bench/docs_section.py docs/benchmarks.md taxis_bench "$OUT/taxis.md"
fi
log "done in $(($(date +%s) - START)) s"
exit $rc
