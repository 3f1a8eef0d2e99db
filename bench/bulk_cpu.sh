#!/usr/bin/env bash
# Server CPU of a _bulk load of new documents, with ids the server generates (action lines
# without `_id`: the append-only path, no id lookup) and with explicit ids (`d<line>`: every
# write looks its id up in the table and behind each segment's filter), docs/benchmarks.md
# "One id lookup per write, none for generated ids". N `scry gen wiki` docs go through
# `scry load` into a fresh server per load (index settings of bench/workloads/wiki.index.json);
# the server's CPU seconds from the index's creation to the end of the load are printed per
# binary, mode and round. Binaries alternate round by round, so drift of a shared machine hits
# them alike; the load average is printed with each line.
#
#   bench/bulk_cpu.sh N BIN [BIN...]     # env: OUT (/tmp/scry-bulk-cpu) SEED (1) ROUNDS (3)
set -euo pipefail
cd "$(dirname "$0")/.."
N=$1; shift
: "${OUT:=/tmp/scry-bulk-cpu}" "${SEED:=1}" "${ROUNDS:=3}"
mkdir -p "$OUT"
die() { echo "bench/bulk_cpu.sh: $*" >&2; exit 1; }
DOCS=$OUT/wiki-$N-$SEED.ndjson
BULK=$OUT/wiki-$N-$SEED.bulk
if [ ! -s "$DOCS" ]; then
  "$1" gen wiki --seed "$SEED" --docs "$N" > "$DOCS.tmp"
  mv "$DOCS.tmp" "$DOCS"
fi
if [ ! -s "$BULK" ]; then
  awk '{ printf "{\"index\":{\"_id\":\"d%d\"}}\n%s\n", NR, $0 }' "$DOCS" > "$BULK.tmp"
  mv "$BULK.tmp" "$BULK"
fi
SPID=""
trap '[ -z "$SPID" ] || kill "$SPID" 2>/dev/null || true' EXIT
cpu_s() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$SPID/stat"
}
req() { # method path [body]
  local code
  code=$(curl -s -o "$OUT/last.json" -w '%{http_code}' -X "$1" "$URL$2" \
    -H 'Content-Type: application/json' ${3:+--data-binary "$3"})
  [ "${code:0:1}" = 2 ] || die "$1 $2 answered $code: $(head -c 300 "$OUT/last.json")"
}
for round in $(seq "$ROUNDS"); do
  for bin in "$@"; do
    for mode in auto explicit; do
      rm -rf "$OUT/data" "$OUT/port"
      "$bin" serve --data "$OUT/data" --port 0 --port-file "$OUT/port" --log-level warn \
        > "$OUT/server.log" 2>&1 &
      SPID=$!
      for _ in $(seq 600); do [ -s "$OUT/port" ] && break; sleep 0.1; done
      [ -s "$OUT/port" ] || die "$bin serve did not start"
      URL=http://127.0.0.1:$(cat "$OUT/port")
      req PUT /wiki @bench/workloads/wiki.index.json
      c0=$(cpu_s)
      if [ $mode = auto ]; then file=$DOCS; else file=$BULK; fi
      "$bin" load --index wiki "$file" --url "$URL" --quiet
      c1=$(cpu_s)
      req POST /wiki/_refresh
      req GET /wiki/_count
      grep -q "\"count\":$N[,}]" "$OUT/last.json" || die "wiki holds $(cat "$OUT/last.json")"
      echo "round=$round bin=$bin mode=$mode load_cpu_s=$(echo "$c1 - $c0" | bc) loadavg=$(cut -d' ' -f1 /proc/loadavg)"
      kill "$SPID"; wait "$SPID" 2>/dev/null || true; SPID=""
    done
  done
done
