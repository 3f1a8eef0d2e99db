#!/usr/bin/env bash
# HTTP + JSON overhead and idle memory of `scry serve` (docs/benchmarks.md, "Server overhead"):
# loads the wiki corpus into a fresh server (release build), force-merges it to one segment,
# records the idle server's resident memory (RssAnon / RssFile of /proc/PID/status), then per
# class of the luceneutil TOP_10 workload and per concurrency (1, 8, 32) runs, back to back so
# that machine load drifts alike: `scry bench run` over HTTP (connections), and
# bench/api_bench.c in process on a copy of the same data folder (min(connections, cores)
# threads, the server's HTTP worker count) in its two modes:
# "engine" (sc_search_run with pre-built queries) and "api" (the REST handler without sockets).
# Prints a markdown table, with CPU time per request (server process over HTTP, worker threads in
# process): throughput at saturation is cores / CPU per request, and CPU time is far less
# disturbed by other load on the machine than QPS. Usage: bench/http_overhead.sh [DOCS (1000000)]
#   OUT (/tmp/scry-http-overhead) DURATION (2) REPS (3) CONNS ("1 8 32")
#   CLASSES ("high_term med_term low_term and_high_high and_high_low or_high_low prefix3")
#   KEEP=1 reuses OUT/data when it holds a loaded index.
set -euo pipefail
cd "$(dirname "$0")/.."
DOCS=${1:-1000000}
OUT=${OUT:-/tmp/scry-http-overhead}
DURATION=${DURATION:-2}
REPS=${REPS:-3}
CONNS=${CONNS:-"1 8 32"}
CLASSES=${CLASSES:-"high_term med_term low_term and_high_high and_high_low or_high_low prefix3"}
BIN=build/release/scry
cmake --preset release >/dev/null
cmake --build build/release -j"$(nproc)" --target scry api_bench >/dev/null
mkdir -p "$OUT"
[ -s "$OUT/wiki-$DOCS.ndjson" ] || "$BIN" gen wiki --seed 1 --docs "$DOCS" > "$OUT/wiki-$DOCS.ndjson"
SPID=""
start() {
  rm -f "$OUT/port"
  "$BIN" serve --data "$OUT/data" --port 0 --port-file "$OUT/port" --log-level warn \
    > "$OUT/server.log" 2>&1 &
  SPID=$!
  for _ in $(seq 300); do [ -s "$OUT/port" ] && break; sleep 0.1; done
  URL="http://127.0.0.1:$(cat "$OUT/port")"
}
stop() { kill "$SPID"; wait "$SPID" || true; SPID=""; }
trap '[ -z "$SPID" ] || kill "$SPID" 2>/dev/null || true' EXIT
if [ "${KEEP:-0}" != 1 ] || [ ! -d "$OUT/data" ]; then
  rm -rf "$OUT/data"
  start
  curl -sf -XPUT "$URL/wiki" -H 'Content-Type: application/json' \
    --data-binary @bench/workloads/wiki.index.json >/dev/null
  "$BIN" load --index wiki "$OUT/wiki-$DOCS.ndjson" --url "$URL" --quiet
  curl -sf -XPOST "$URL/wiki/_refresh" >/dev/null
  curl -sf -XPOST "$URL/wiki/_forcemerge?max_num_segments=1" >/dev/null
  curl -sf -XPOST "$URL/wiki/_flush" >/dev/null
  stop
fi
rm -rf "$OUT/data-copy"
cp -r "$OUT/data" "$OUT/data-copy"
start
sleep 5 # idle: the background thread's first refresh/flush are done
echo "idle server, $DOCS docs: $(grep -E 'RssAnon|RssFile' /proc/$SPID/status | tr -s ' \t' ' ' | tr '\n' ' ')"
PORT=${URL##*:}
: > "$OUT/inproc.tsv"
rm -f "$OUT"/http-*.json
for cls in $CLASSES; do
  awk -F'\t' -v c="$cls" '$1 == c' bench/workloads/luceneutil.top10.txt > "$OUT/wl-$cls.txt"
  for c in $CONNS; do
    "$BIN" bench run --port "$PORT" --pid "$SPID" --workload "$OUT/wl-$cls.txt" --conns "$c" --warmup 1 \
      --reps "$REPS" --duration "$DURATION" --out "$OUT/http-$cls-$c.json" 2>> "$OUT/http.log"
    # In process, as many threads as the server has HTTP workers (one per core): more would
    # only queue (the server's extra connections wait in the kernel instead).
    t=$(( c < $(nproc) ? c : $(nproc) ))
    for mode in engine api; do
      build/release/api_bench "$OUT/data-copy" "$OUT/wl-$cls.txt" "$mode" "$t" \
        "$((DURATION * REPS))" "$cls" 2>> "$OUT/inproc.log" | sed "s/\t$t\t/\t$c\t/" >> "$OUT/inproc.tsv"
    done
  done
done
echo "idle server after the load test: $(grep -E 'RssAnon|RssFile' /proc/$SPID/status | tr -s ' \t' ' ' | tr '\n' ' ')"
stop
/usr/bin/python3 - "$OUT" "$OUT/inproc.tsv" <<'PY'
import glob, json, sys
http = {}
for p in glob.glob(sys.argv[1] + "/http-*.json"):
    for c in json.load(open(p))["cells"]:
        http[(c["class"], c["conns"])] = c
inp = {}
for line in open(sys.argv[2]):
    cls, mode, t, qps, p50, p99, n, cpu = line.rstrip("\n").split("\t")
    inp[(cls, mode, int(t))] = (float(qps), int(p50), float(cpu))
print("| class | conns | HTTP QPS | api QPS | engine QPS | HTTP / engine | HTTP p50 | api p50 | engine p50 | server CPU/req | api CPU/req | engine CPU/req | HTTP CPU vs engine |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for (cls, c) in sorted(http, key=lambda k: (list(dict.fromkeys(x[0] for x in inp)).index(k[0]) if k[0] in {x[0] for x in inp} else 99, k[1])):
    h, e, a = http[(cls, c)], inp.get((cls, "engine", c)), inp.get((cls, "api", c))
    if not e or not a:
        continue
    hc = h.get("server_cpu_us_per_req", 0.0)
    print("| %s | %d | %.0f | %.0f | %.0f | %.2f | %d µs | %d µs | %d µs | %.1f µs | %.1f µs | %.1f µs | %+.0f %% |" % (
        cls, c, h["qps"], a[0], e[0], h["qps"] / e[0], h["latency_us"]["p50"], a[1], e[1],
        hc, a[2], e[2], (hc / e[2] - 1) * 100 if e[2] else 0))
PY
