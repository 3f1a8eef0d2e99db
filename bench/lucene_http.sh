#!/usr/bin/env bash
# Server-level matrix, scry vs Lucene 8.7 over HTTP (issue 18, "Benchmark"): the same request
# bodies to `scry serve` and to bench/LuceneHttpServer.java (Lucene 8.7 behind Netty 4, a fixed
# search pool of one thread per core, as Elasticsearch serves Lucene) on the same wiki
# documents (`scry gen wiki --seed 1`, one force-merged segment/shard each), driven by wrk
# (bench/lucene_http.lua) at 1, 8 and 32 keep-alive connections. Families: every class of
# bench/workloads/luceneutil.top10.txt and game.top10.txt (prefixed game_), term COUNT
# (high_term of luceneutil.count), and issue 18's date range (`range` on date_dt,
# epoch_millis, `size: 10`, `track_total_hits: false`) and term query sorted by price_i desc
# (`size: 10`, no total), and http_floor (`GET /`: each server's HTTP floor). Cells alternate
# scry and Lucene per family and connection count; per cell: QPS, p50/p99 (wrk), server CPU
# per request (utime+stime of /proc/PID/stat over the cell / requests, utime also apart) and
# the machine's busy share (/proc/stat). First every request body is
# sent once to both servers; the hit counts and ids that differ are reported.
# Usage: bench/lucene_http.sh   with OUT (/tmp/scry-lucene-http), DOCS (200000), DURATION
#   (seconds per cell, 3), WARMUP (seconds per family before its cells, 1), CONNS ("1 8 32"),
#   FAMILIES (space-separated subset), ROUNDS (1; with more, every cell runs that many times,
#   scry and Lucene alternating, and the report takes each cell's median-QPS run: one 3 s
#   sample of a cell moved up to 15 % between runs on this 2-core VM), WRK_THREADS (1, as
#   issue 18 measured; before 2026-12-03 the script ran 2 at 8 and 32 connections), SCRY (binary,
#   build/release/scry), CORPUS (an existing
#   `scry gen wiki` NDJSON to use instead of generating DOCS documents), DOCS_MD=1 (also
#   replace the "lucene_http" section of docs/benchmarks.md, as bench/run.sh does).
# Writes $OUT/cells.tsv, $OUT/validate.tsv and prints the markdown of docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/scry-lucene-http}
DOCS=${DOCS:-200000}
DURATION=${DURATION:-3}
ROUNDS=${ROUNDS:-1}
WRK_THREADS=${WRK_THREADS:-1}
WARMUP=${WARMUP:-1}
CONNS=${CONNS:-1 8 32}
SCRY=${SCRY:-build/release/scry}
J=/usr/share/java
CP=$J/lucene-core-8.7.0.jar:$J/lucene-queryparser-8.7.0.jar:$J/lucene-analyzers-common-8.7.0.jar:$J/jackson-core.jar
for n in buffer codec codec-http common handler transport resolver; do CP=$CP:$J/netty-$n.jar; done
mkdir -p "$OUT/classes"
if [ "$SCRY" = build/release/scry ]; then
  [ -f build/release/CMakeCache.txt ] || cmake --preset release >/dev/null
  cmake --build build/release -j2 --target scry >/dev/null
fi
javac -d "$OUT/classes" -cp "$CP" bench/LuceneHttpServer.java
W=bench/workloads
if [ -n "${CORPUS:-}" ]; then
  ln -sf "$(realpath "$CORPUS")" "$OUT/wiki.ndjson"
else
  [ -s "$OUT/wiki.ndjson" ] || "$SCRY" gen wiki --seed 1 --docs "$DOCS" > "$OUT/wiki.ndjson"
fi
/usr/bin/python3 - "$W" "$OUT/wl.txt" <<'PY'
import json, random, sys
w, out = sys.argv[1], sys.argv[2]
rows = []
def read(path, prefix="", only=None, rename=None):
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        c, m, p, b = line.rstrip("\n").split("\t", 3)
        if only and c != only:
            continue
        rows.append((rename or prefix + c, m, p, b))
read(w + "/luceneutil.top10.txt")
read(w + "/game.top10.txt", prefix="game_")
read(w + "/luceneutil.count.txt", only="high_term", rename="term_count")
rnd = random.Random(18)
base, span, hour = 1577836800000, 5 * 365 * 86400000, 3600000
for _ in range(50):  # widths from one hour to one year, log-uniform
    width = int(hour * (24 * 365) ** rnd.random())
    lo = base + rnd.randrange(span - width)
    body = {"query": {"range": {"date_dt": {"gte": lo, "lte": lo + width - 1, "format": "epoch_millis"}}},
            "size": 10, "track_total_hits": False, "_source": False, "docvalue_fields": ["id"]}
    rows.append(("date_range", "POST", "/wiki/_search?request_cache=false", json.dumps(body, separators=(",", ":"))))
terms = []
for line in open(w + "/luceneutil.top10.txt"):
    f = line.rstrip("\n").split("\t", 3)
    if f[0] in ("high_term", "med_term"):
        q = json.loads(f[3])["query"]["query_string"]["query"]
        if q.isalnum() and q.lower() == q:
            terms.append(q)
for t in terms:
    body = {"query": {"term": {"body": t}}, "sort": [{"price_i": "desc"}], "size": 10,
            "track_total_hits": False, "_source": False, "docvalue_fields": ["id"]}
    rows.append(("term_sort", "POST", "/wiki/_search?request_cache=false", json.dumps(body, separators=(",", ":"))))
# http_floor: the root (`GET /`, a constant JSON object on both servers): each server's HTTP
# stack with no search, the floor under the cheap families' server CPU per request
rows.append(("http_floor", "GET", "/", ""))
with open(out, "w") as f:
    for r in rows:
        f.write("\t".join(r) + "\n")
PY
SPID="" LPID=""
cleanup() {
  [ -z "$SPID" ] || kill "$SPID" 2>/dev/null || true
  [ -z "$LPID" ] || kill "$LPID" 2>/dev/null || true
}
trap cleanup EXIT
wait_port() { for _ in $(seq 6000); do [ -s "$1" ] && return 0; sleep 0.1; done; echo "no port in $1" >&2; exit 1; }
start_scry() {
  rm -f "$OUT/scry.port"
  "$SCRY" serve --data "$1" --port 0 --port-file "$OUT/scry.port" --log-level warn > "$OUT/scry.log" 2>&1 &
  SPID=$!
  wait_port "$OUT/scry.port"
  SPORT=$(cat "$OUT/scry.port")
}
if [ ! -d "$OUT/data" ]; then
  start_scry "$OUT/data"
  URL=http://127.0.0.1:$SPORT
  curl -sf -XPUT "$URL/wiki" -H 'Content-Type: application/json' --data-binary @$W/wiki.index.json >/dev/null
  "$SCRY" load --index wiki "$OUT/wiki.ndjson" --url "$URL" --quiet
  for op in _refresh "_forcemerge?max_num_segments=1" _flush; do curl -sf -XPOST "$URL/wiki/$op" >/dev/null; done
  kill "$SPID"; wait "$SPID" || true; SPID=""
fi
start_scry "$OUT/data"
rm -f "$OUT/lucene.port"
java -Xms2g -Xmx2g -cp "$OUT/classes:$CP" LuceneHttpServer "$OUT/lucene" "$OUT/wiki.ndjson" \
  "$OUT/lucene.port" > "$OUT/lucene.log" 2>&1 &
LPID=$!
wait_port "$OUT/lucene.port"
LPORT=$(cat "$OUT/lucene.port")
FAMS=${FAMILIES:-$(cut -f1 "$OUT/wl.txt" | awk '!s[$0]++' | tr '\n' ' ')}
# validation: every request once to both servers
/usr/bin/python3 bench/lucene_http_report.py validate "$OUT/wl.txt" "$SPORT" "$LPORT" "$FAMS" > "$OUT/validate.tsv"
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
usr_of() { awk '{print $14}' "/proc/$1/stat"; }
busy() { head -1 /proc/stat | awk '{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}'; }
: > "$OUT/cells.tsv"
for fam in $FAMS; do
  for srv in scry lucene; do # warm-up (the JIT for Lucene), 8 connections
    port=$SPORT; [ $srv = lucene ] && port=$LPORT
    WL="$OUT/wl.txt" CLASS="$fam" wrk -t2 -c8 -d"${WARMUP}s" -s bench/lucene_http.lua "http://127.0.0.1:$port" > /dev/null
  done
  for r in $(seq "$ROUNDS"); do
  for c in $CONNS; do
    for srv in scry lucene; do
      port=$SPORT pid=$SPID other=$LPID; [ $srv = lucene ] && port=$LPORT pid=$LPID other=$SPID
      t=$WRK_THREADS; [ "$c" -lt "$t" ] && t=$c
      c1=$(cpu_of "$pid"); u1=$(usr_of "$pid"); o1=$(cpu_of "$other"); read -r b1 a1 < <(busy)
      res=$(WL="$OUT/wl.txt" CLASS="$fam" wrk -t$t -c"$c" -d"${DURATION}s" -s bench/lucene_http.lua \
            "http://127.0.0.1:$port" | grep '^{')
      c2=$(cpu_of "$pid"); u2=$(usr_of "$pid"); o2=$(cpu_of "$other"); read -r b2 a2 < <(busy)
      # the idle server's CPU during the cell (a JVM's GC or JIT after its own cell competes
      # with the measured server for the same 2 cores)
      # 10th column: the server's user-mode share of its CPU ticks (the rest is the kernel's)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fam" "$c" "$srv" "$res" "$((c2 - c1))" \
        "$((b2 - b1))" "$((a2 - a1))" "$((o2 - o1))" "$r" "$((u2 - u1))" >> "$OUT/cells.tsv"
    done
  done
  done
done
START=$(date -u '+%Y-%m-%d %H:%M')
/usr/bin/python3 bench/lucene_http_report.py report "$OUT" | tee "$OUT/report.md"
if [ "${DOCS_MD:-0}" = 1 ]; then
  { echo "<!-- BEGIN lucene_http (bench/lucene_http.sh writes this section) -->"
    echo "## scry vs Lucene 8.7 over HTTP (bench/lucene_http.sh)"
    echo
    echo "Run of $START UTC, $(wc -l < "$OUT/wiki.ndjson") wiki documents, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), wrk with $WRK_THREADS thread(s), ${DURATION} s per cell after a ${WARMUP} s warm-up per family and server, $ROUNDS round(s) per cell (the median-QPS round shown); 1-minute load average at the end: $(cut -d' ' -f1 /proc/loadavg)."
    echo
    cat "$OUT/report.md"
    echo "<!-- END lucene_http -->"
  } > "$OUT/section.md"
  /usr/bin/python3 bench/docs_section.py docs/benchmarks.md lucene_http "$OUT/section.md"
fi
