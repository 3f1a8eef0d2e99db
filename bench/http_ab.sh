#!/usr/bin/env bash
# A/B of two scry binaries over HTTP on the data of bench/lucene_http.sh (run it once first):
# each round starts A, then B, on $OUT/data; per family one warm-up second at 8 connections,
# then DURATION seconds per connection count with wrk and bench/lucene_http.lua; server CPU per
# request from /proc/PID/stat. Prints per cell the rounds' QPS, the medians' ratio B / A, p50
# and CPU per request.
# Usage: bench/http_ab.sh A_BIN B_BIN   with OUT (/tmp/scry-lucene-http), ROUNDS (3),
#   FAMILIES ("date_range low_term"), CONNS ("1 8"), DURATION (3), WRK_THREADS (1).
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1 B=$2
OUT=${OUT:-/tmp/scry-lucene-http} ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-3}
FAMILIES=${FAMILIES:-date_range low_term} CONNS=${CONNS:-1 8} WRK_THREADS=${WRK_THREADS:-1}
[ -d "$OUT/data" ] && [ -s "$OUT/wl.txt" ] || { echo "run bench/lucene_http.sh first ($OUT)" >&2; exit 1; }
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TSV=$(mktemp)
PID=""
trap '[ -z "$PID" ] || kill "$PID" 2>/dev/null || true; rm -f "$TSV" "$TSV.port"' EXIT
for r in $(seq "$ROUNDS"); do
  for tag in A B; do
    bin=$A; [ $tag = B ] && bin=$B
    rm -f "$TSV.port"
    "$bin" serve --data "$OUT/data" --port 0 --port-file "$TSV.port" --log-level warn >/dev/null 2>&1 &
    PID=$!
    for _ in $(seq 600); do [ -s "$TSV.port" ] && break; sleep 0.1; done
    port=$(cat "$TSV.port")
    for fam in $FAMILIES; do
      WL=$OUT/wl.txt CLASS=$fam wrk -t2 -c8 -d1s -s bench/lucene_http.lua "http://127.0.0.1:$port" >/dev/null
      for c in $CONNS; do
        t=$WRK_THREADS; [ "$c" -lt "$t" ] && t=$c
        c1=$(cpu_of $PID)
        res=$(WL=$OUT/wl.txt CLASS=$fam wrk -t$t -c"$c" -d"${DURATION}s" -s bench/lucene_http.lua \
              "http://127.0.0.1:$port" | grep '^{')
        c2=$(cpu_of $PID)
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$tag" "$fam" "$c" "$res" "$((c2 - c1))" >> "$TSV"
      done
    done
    kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""
  done
done
/usr/bin/python3 - "$TSV" "$(getconf CLK_TCK)" <<'PY'
import collections, json, statistics, sys
rows = collections.defaultdict(list)
tck = int(sys.argv[2])
for line in open(sys.argv[1]):
    r, tag, fam, c, res, ticks = line.rstrip("\n").split("\t")
    j = json.loads(res)
    rows[(fam, int(c), tag)].append((j["requests"] / (j["duration_us"] / 1e6), j["p50_us"],
                                     int(ticks) * 1e6 / tck / max(j["requests"], 1)))
print("| family | conns | QPS A (median) | QPS B (median) | B / A | p50 µs A | p50 µs B | CPU/req µs A | CPU/req µs B |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
med = lambda xs, i: statistics.median(x[i] for x in xs)
for f, c in sorted({(f, c) for f, c, _ in rows}):
    a, b = rows[(f, c, "A")], rows[(f, c, "B")]
    print("| %s | %d | %s (%.0f) | %s (%.0f) | %.2fx | %.0f | %.0f | %.1f | %.1f |" % (
        f, c, ", ".join("%.0f" % x[0] for x in a), med(a, 0), ", ".join("%.0f" % x[0] for x in b),
        med(b, 0), med(b, 0) / med(a, 0), med(a, 1), med(b, 1), med(a, 2), med(b, 2)))
PY
