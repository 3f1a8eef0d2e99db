#!/usr/bin/env bash
# Server CPU of overwriting existing ids (docs/benchmarks.md, "Keys of the id table where the
# docs are"): N `scry gen wiki` docs with explicit ids (`d<line>`) go through _bulk into a fresh
# server (refresh off), a refresh makes them a segment, then the same N docs again: every write
# of the second pass finds its id in a segment, so the id table confirms the id there (a read
# of the segment's `_id` doc values since h-idkeys). Prints, per binary and round, the server's
# CPU seconds of the first pass (new ids: no id is read) and of the second (every id read).
# Binaries alternate round by round, so drift of a shared machine hits them alike.
#
#   bench/update_cpu.sh N BIN [BIN...]     # env: OUT (/tmp/scry-update-cpu) SEED (1) ROUNDS (2)
set -euo pipefail
cd "$(dirname "$0")/.."
N=$1; shift
: "${OUT:=/tmp/scry-update-cpu}" "${SEED:=1}" "${ROUNDS:=2}"
mkdir -p "$OUT"
die() { echo "bench/update_cpu.sh: $*" >&2; exit 1; }
BULK=$OUT/wiki-$N-$SEED.bulk
if [ ! -s "$BULK" ]; then
  "$1" gen wiki --seed "$SEED" --docs "$N" |
    awk '{ printf "{\"index\":{\"_id\":\"d%d\"}}\n%s\n", NR, $0 }' > "$BULK.tmp"
  mv "$BULK.tmp" "$BULK"
fi
/usr/bin/python3 -c '
import json
m = json.load(open("bench/workloads/wiki.index.json"))
m["settings"]["index"]["refresh_interval"] = "-1"
print(json.dumps(m))' > "$OUT/index.json"
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
    rm -rf "$OUT/data" "$OUT/port"
    "$bin" serve --data "$OUT/data" --port 0 --port-file "$OUT/port" --log-level warn \
      > "$OUT/server.log" 2>&1 &
    SPID=$!
    for _ in $(seq 600); do [ -s "$OUT/port" ] && break; sleep 0.1; done
    [ -s "$OUT/port" ] || die "$bin serve did not start"
    URL=http://127.0.0.1:$(cat "$OUT/port")
    req PUT /wiki @"$OUT/index.json"
    c0=$(cpu_s)
    "$bin" load --index wiki "$BULK" --url "$URL" --quiet
    req POST /wiki/_refresh
    c1=$(cpu_s)
    "$bin" load --index wiki "$BULK" --url "$URL" --quiet
    req POST /wiki/_refresh
    c2=$(cpu_s)
    req GET /wiki/_count
    grep -q "\"count\":$N[,}]" "$OUT/last.json" || die "wiki holds $(cat "$OUT/last.json")"
    echo "round=$round bin=$bin new_ids_cpu_s=$(echo "$c1 - $c0" | bc) overwrite_cpu_s=$(echo "$c2 - $c1" | bc)"
    kill "$SPID"; wait "$SPID" 2>/dev/null || true; SPID=""
  done
done
