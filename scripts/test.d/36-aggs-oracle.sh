#!/usr/bin/env bash
# Lucene oracle for aggregation counts (tests/oracle/aggs): the same generated documents go
# into Lucene 8.7 with lucene-facet (SortedSetDocValuesFacetCounts for a skewed multi-valued
# keyword, LongRangeFacetCounts for ranges over a long with the 64-bit extremes;
# AggsOracle.java) and, over HTTP, into the debug `scry serve` (3 shards, 3 refreshes: segment
# and shard partials reduced). For match_all and five term filters, the terms counts of every
# value and the range counts must be exactly equal. AGGS_ORACLE_SEED replays a run.
set -euo pipefail
cd "$(dirname "$0")/../.."
N_DOCS=${AGGS_ORACLE_DOCS:-30000}
SEED=${AGGS_ORACLE_SEED:-11}
PY=/usr/bin/python3
JARS=/usr/share/java/lucene-core-8.7.0.jar:/usr/share/java/lucene-facet-8.7.0.jar
BIN=${SCRY_BIN:-build/debug/scry}
OUT=$(mktemp -d)
SPID=""
cleanup() {
  if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi
  rm -rf "$OUT"
}
trap cleanup EXIT
echo "aggs oracle: $N_DOCS docs, seed $SEED (AGGS_ORACLE_SEED=$SEED replays it)"
if [ -z "${SCRY_BIN:-}" ]; then
  if [ ! -f build/debug/CMakeCache.txt ]; then cmake --preset debug >/dev/null; fi
  cmake --build build/debug -j"$(nproc)" --target scry >/dev/null
fi
mkdir -p "$OUT/classes" "$OUT/q"
javac -d "$OUT/classes" -cp "$JARS" tests/oracle/aggs/AggsOracle.java
$PY tests/oracle/aggs/gen.py "$OUT/q" "$N_DOCS" "$SEED"
"$BIN" serve --data "$OUT/data" --port 0 --port-file "$OUT/port" --log-level warn > "$OUT/server.log" 2>&1 &
SPID=$!
for _ in $(seq 300); do [ -s "$OUT/port" ] && break; kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
[ -s "$OUT/port" ] || { cat "$OUT/server.log" >&2; echo "36-aggs-oracle: scry serve did not start" >&2; exit 1; }
$PY tests/oracle/aggs/scry_side.py "http://127.0.0.1:$(cat "$OUT/port")" "$OUT/q"
kill "$SPID"; wait "$SPID" 2>/dev/null || true; SPID=""
java -cp "$JARS:$OUT/classes" AggsOracle "$OUT/q/docs.tsv" "$OUT/q/queries.tsv" "$OUT/q/ranges.tsv" \
  "$OUT/lucene" > "$OUT/lucene.txt"
if cmp -s "$OUT/lucene.txt" "$OUT/q/scry.txt"; then
  echo "aggs oracle: $(grep -c . "$OUT/lucene.txt") results equal"
else
  diff "$OUT/lucene.txt" "$OUT/q/scry.txt" | head -20
  echo "36-aggs-oracle: FAILED (seed $SEED)"
  exit 1
fi
