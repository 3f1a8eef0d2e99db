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
NAME=36-aggs-oracle
. scripts/oracle_lib.sh
echo "aggs oracle: $N_DOCS docs, seed $SEED (AGGS_ORACLE_SEED=$SEED replays it)"
oracle_build_scry
mkdir -p "$OUT/classes" "$OUT/q"
javac -d "$OUT/classes" -cp "$JARS" tests/oracle/aggs/AggsOracle.java
$PY tests/oracle/aggs/gen.py "$OUT/q" "$N_DOCS" "$SEED"
oracle_serve
$PY tests/oracle/aggs/scry_side.py "$SCRY_URL" "$OUT/q"
oracle_stop
java -cp "$JARS:$OUT/classes" AggsOracle "$OUT/q/docs.tsv" "$OUT/q/queries.tsv" "$OUT/q/ranges.tsv" \
  "$OUT/lucene" > "$OUT/lucene.txt"
if cmp -s "$OUT/lucene.txt" "$OUT/q/scry.txt"; then
  echo "aggs oracle: $(grep -c . "$OUT/lucene.txt") results equal"
else
  diff "$OUT/lucene.txt" "$OUT/q/scry.txt" | head -20
  echo "36-aggs-oracle: FAILED (seed $SEED)"
  exit 1
fi
