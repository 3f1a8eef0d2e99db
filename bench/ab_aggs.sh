#!/usr/bin/env bash
# Server CPU per request of several `scry serve` binaries on the aggregation operations,
# alternated round by round on one data folder (docs/benchmarks.md, issue #12's under-2x rows).
# A binary is one line of the VARIANTS file: NAME<TAB>BINARY. Each round starts each binary
# on DATA in turn (searched, never written) and times every CLASS of WORKLOAD with one
# connection (`scry bench run --pid`: the server's user + system CPU over the timed requests).
#
#   bench/ab_aggs.sh DATA VARIANTS WORKLOAD "CLASS1 CLASS2 ..."
#     env: ROUNDS (3) DURATION (2) WARMUP (1) OUT (/tmp/scry-ab-aggs)
# Prints a table: per class and variant the CPU ms per request of each round and their median,
# then the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=$1 VARIANTS=$2 WORKLOAD=$3 CLASSES=$4
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-2}
WARMUP=${WARMUP:-1}
OUT=${OUT:-/tmp/scry-ab-aggs}
mkdir -p "$OUT"
rm -f "$OUT"/r-*.json
cut -d' ' -f1-3 /proc/loadavg > "$OUT/load.before"
SPID=""
trap '[ -z "$SPID" ] || kill "$SPID" 2>/dev/null || true' EXIT
for round in $(seq "$ROUNDS"); do
  while IFS=$'\t' read -r name bin; do
    [ -n "$name" ] && [ "${name:0:1}" != "#" ] || continue
    rm -f "$OUT/port"
    "$bin" serve --data "$DATA" --port 0 --port-file "$OUT/port" --log-level warn \
      --search-threads 1 > "$OUT/server-$name.log" 2>&1 &
    SPID=$!
    for _ in $(seq 300); do [ -s "$OUT/port" ] && break; sleep 0.1; done
    PORT=$(cat "$OUT/port")
    for _ in $(seq 600); do # shards recover in the background after the open
      curl -sf "http://127.0.0.1:$PORT/_cluster/health?wait_for_status=green&timeout=1s" \
        >/dev/null && break
      sleep 0.2
    done
    for cl in $CLASSES; do
      "$bin" bench run --port "$PORT" --pid "$SPID" --workload "$WORKLOAD" --class "$cl" \
        --conns 1 --warmup "$WARMUP" --reps 1 --duration "$DURATION" --no-validate \
        --out "$OUT/r-$name-$round-$cl.json" > /dev/null
    done
    kill "$SPID"; wait "$SPID" || true; SPID=""
  done < "$VARIANTS"
done
cut -d' ' -f1-3 /proc/loadavg > "$OUT/load.after"
/usr/bin/python3 - "$OUT" "$VARIANTS" "$CLASSES" "$ROUNDS" <<'PY'
import json, statistics, sys
out, variants, classes, rounds = sys.argv[1], sys.argv[2], sys.argv[3].split(), int(sys.argv[4])
names = [l.split("\t")[0] for l in open(variants) if l.strip() and not l.startswith("#")]
def find(o, key):
    if isinstance(o, dict):
        if key in o:
            return o[key]
        for v in o.values():
            r = find(v, key)
            if r is not None:
                return r
    elif isinstance(o, list):
        for v in o:
            r = find(v, key)
            if r is not None:
                return r
    return None
print("| operation | " + " | ".join(f"{n} CPU ms (rounds) | {n} median" for n in names) + " |")
print("|---|" + "---:|---:|" * len(names))
for cl in classes:
    cells = []
    for n in names:
        xs = [find(json.load(open(f"{out}/r-{n}-{r}-{cl}.json")), "server_cpu_us_per_req") / 1000
              for r in range(1, rounds + 1)]
        cells.append(", ".join(f"{x:.2f}" for x in xs) + f" | {statistics.median(xs):.2f}")
    print(f"| {cl} | " + " | ".join(cells) + " |")
print(f"load average before: {open(out + '/load.before').read().strip()}; "
      f"after: {open(out + '/load.after').read().strip()}")
PY
