#!/usr/bin/env bash
# Server-level HTTP benchmark of two `scry` binaries back to back (docs/benchmarks.md, "HTTP
# transport"): loads DOCS wiki documents (`scry gen wiki --seed 1`) into one force-merged shard,
# then for REPS rounds, alternating A and B on a fresh copy of the data folder, runs
# `scry bench run` per query family and concurrency (1, 8, 32 keep-alive connections) and
# records QPS, p50/p99, server CPU per request and the machine's busy share (/proc/stat) during
# each cell. Families: term COUNT (high_term of luceneutil.count), and2 TOP_10 (and_high_high),
# wildcard TOP_10, phrase COUNT (high_phrase). Prints a markdown table (median over the rounds,
# min-max in brackets). Usage: bench/http_transport.sh A_BIN B_BIN
#   OUT (/tmp/scry-http-transport) DOCS (300000) REPS (3) DURATION (3)
#   A_ARGS / B_ARGS: extra `scry serve` arguments, e.g. A_ARGS="-E http.transport=mhd" to
#   compare the two transports inside one binary.
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1 B=$2
OUT=${OUT:-/tmp/scry-http-transport}
DOCS=${DOCS:-300000}
REPS=${REPS:-3}
DURATION=${DURATION:-3}
mkdir -p "$OUT"
W=bench/workloads
{ awk -F'\t' -v OFS='\t' '$1=="high_term"{$1="term_count";print}' $W/luceneutil.count.txt
  awk -F'\t' -v OFS='\t' '$1=="and_high_high"{$1="and2_top10";print}' $W/luceneutil.top10.txt
  awk -F'\t' -v OFS='\t' '$1=="wildcard"{$1="wildcard_top10";print}' $W/luceneutil.top10.txt
  awk -F'\t' -v OFS='\t' '$1=="high_phrase"{$1="phrase_count";print}' $W/luceneutil.count.txt
} > "$OUT/wl.txt"
SPID=""
start() { # BIN DATA [ARGS...]
  rm -f "$OUT/port"
  local bin=$1 data=$2; shift 2
  "$bin" serve --data "$data" --port 0 --port-file "$OUT/port" --log-level warn "$@" \
    > "$OUT/server.log" 2>&1 &
  SPID=$!
  for _ in $(seq 300); do [ -s "$OUT/port" ] && break; sleep 0.1; done
  PORT=$(cat "$OUT/port")
}
stop() { kill "$SPID"; wait "$SPID" || true; SPID=""; }
trap '[ -z "$SPID" ] || kill "$SPID" 2>/dev/null || true' EXIT
if [ ! -d "$OUT/data" ]; then
  [ -s "$OUT/wiki.ndjson" ] || "$A" gen wiki --seed 1 --docs "$DOCS" > "$OUT/wiki.ndjson"
  start "$A" "$OUT/data"
  URL=http://127.0.0.1:$PORT
  curl -sf -XPUT "$URL/wiki" -H 'Content-Type: application/json' \
    --data-binary @$W/wiki.index.json >/dev/null
  "$A" load --index wiki "$OUT/wiki.ndjson" --url "$URL" --quiet
  for op in _refresh "_forcemerge?max_num_segments=1" _flush; do curl -sf -XPOST "$URL/wiki/$op" >/dev/null; done
  stop
fi
cpu() { head -1 /proc/stat | awk '{print $2+$3+$4, $2+$3+$4+$5+$6}'; }
: > "$OUT/busy.tsv"
rm -f "$OUT"/r-*.json
for rep in $(seq "$REPS"); do
  for v in A B; do
    bin=$A args=${A_ARGS:-}; [ $v = B ] && bin=$B args=${B_ARGS:-}
    rm -rf "$OUT/data-run"; cp -r "$OUT/data" "$OUT/data-run"
    # shellcheck disable=SC2086
    start "$bin" "$OUT/data-run" $args
    for cls in term_count and2_top10 wildcard_top10 phrase_count; do
      for c in 1 8 32; do
        read -r b1 t1 < <(cpu)
        "$B" bench run --port "$PORT" --pid "$SPID" --workload "$OUT/wl.txt" --class "$cls" \
          --conns "$c" --warmup 1 --reps 1 --duration "$DURATION" --no-validate \
          --out "$OUT/r-$v-$rep-$cls-$c.json" > /dev/null
        read -r b2 t2 < <(cpu)
        printf '%s\t%s\t%s\t%s\t%s\n' "$v" "$rep" "$cls" "$c" \
          "$(( (b2 - b1) * 100 / (t2 - t1) ))" >> "$OUT/busy.tsv"
      done
    done
    stop
  done
done
/usr/bin/python3 bench/http_transport_report.py "$OUT"
