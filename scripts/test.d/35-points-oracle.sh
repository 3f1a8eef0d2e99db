#!/usr/bin/env bash
# Lucene oracle for points, ranges and numeric sorts (tests/oracle/points): the same generated
# documents (long with the 64-bit extremes, integer, double with -0.0, date, multi-valued long,
# scaled_float; missing values; 1 doc in 97 deleted) go into Lucene 8.7 (LongPoint / IntPoint /
# DoublePoint + SortedNumericDocValues, PointsOracle.java) and, over HTTP, into the debug
# `scry serve` (the real mapping, bulk and shard path: three segments, then force-merged to one;
# Lucene indexes the live documents in scry's doc id order, read with `sort: _doc`, so that doc
# ids correspond).
# Random range counts (gt/gte/lt/lte, one- and two-sided) and sorted top-10s (asc/desc, over
# match_all or a range, ties by doc id) must be exactly equal. POINTS_ORACLE_SEED replays a run.
set -euo pipefail
cd "$(dirname "$0")/../.."
N_DOCS=${POINTS_ORACLE_DOCS:-60000}
SEED=${POINTS_ORACLE_SEED:-7}
PY=/usr/bin/python3
JARS=/usr/share/java/lucene-core-8.7.0.jar
BIN=${SCRY_BIN:-build/debug/scry}
OUT=$(mktemp -d)
SPID=""
cleanup() {
  if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi
  rm -rf "$OUT"
}
trap cleanup EXIT
echo "points oracle: $N_DOCS docs, seed $SEED (POINTS_ORACLE_SEED=$SEED replays it)"

if [ -z "${SCRY_BIN:-}" ]; then
  if [ ! -f build/debug/CMakeCache.txt ]; then cmake --preset debug >/dev/null; fi
  cmake --build build/debug -j"$(nproc)" --target scry >/dev/null
fi
mkdir -p "$OUT/classes" "$OUT/q"
javac -d "$OUT/classes" -cp "$JARS" tests/oracle/points/PointsOracle.java
$PY tests/oracle/points/gen.py "$OUT/q" "$N_DOCS" "$SEED"

"$BIN" serve --data "$OUT/data" --port 0 --port-file "$OUT/port" --log-level warn > "$OUT/server.log" 2>&1 &
SPID=$!
for _ in $(seq 300); do [ -s "$OUT/port" ] && break; kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
[ -s "$OUT/port" ] || { cat "$OUT/server.log" >&2; echo "35-points-oracle: scry serve did not start" >&2; exit 1; }
$PY tests/oracle/points/scry_side.py "http://127.0.0.1:$(cat "$OUT/port")" "$OUT/q"
kill "$SPID"; wait "$SPID" 2>/dev/null || true; SPID=""
rc=0
# Lucene indexes scry's live documents in scry's doc id order, once per scry state (three
# segments; force-merged, where the merge may have reordered them), so ties correspond
for state in "3 segments:order:scry" "force-merged:order-merged:scry-merged"; do
  IFS=: read -r label order answers <<< "$state"
  java -cp "$JARS:$OUT/classes" PointsOracle "$OUT/q/docs.tsv" "$OUT/q/queries.tsv" "$OUT/lucene-$order" \
    "$OUT/q/$order.txt" > "$OUT/lucene-$order.txt"
  $PY tests/oracle/points/compare.py "$OUT/lucene-$order.txt" "$OUT/q/$answers.txt" "$OUT/q/queries.jsonl" "$label" || rc=1
done
[ $rc -eq 0 ] || echo "35-points-oracle: FAILED (seed $SEED)"
exit $rc
