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
NAME=35-points-oracle
. scripts/oracle_lib.sh
echo "points oracle: $N_DOCS docs, seed $SEED (POINTS_ORACLE_SEED=$SEED replays it)"

oracle_build_scry
mkdir -p "$OUT/classes" "$OUT/q"
javac -d "$OUT/classes" -cp "$JARS" tests/oracle/points/PointsOracle.java
$PY tests/oracle/points/gen.py "$OUT/q" "$N_DOCS" "$SEED"

oracle_serve
$PY tests/oracle/points/scry_side.py "$SCRY_URL" "$OUT/q"
oracle_stop
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
