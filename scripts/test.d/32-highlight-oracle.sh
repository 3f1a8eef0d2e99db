#!/usr/bin/env bash
# Lucene oracle for highlighting (tests/oracle/highlight): ~1,000 cases built from the real
# sentences of tests/fixtures/text/sentences.txt (texts of 1-6 sentences; term, should-terms,
# phrase, phrase + term, prefix, wildcard, fuzzy and no-match queries; 1-3 passages) run through
# Lucene 8.7's UnifiedHighlighter (Debian's liblucene8-java) and through scry's highlighter.
# Both sides cut passages at the same (ICU) sentence boundaries, which scry writes out for the
# Java side: every case must give the same snippets, marks and passage choice (scores). A second
# run with java.text's own sentence rules reports how many cases differ only because the two
# sentence breakers disagree (informational).
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
J=/usr/share/java
JARS=$J/lucene-core-8.7.0.jar:$J/lucene-highlighter-8.7.0.jar:$J/lucene-analyzers-common-8.7.0.jar:$J/lucene-memory-8.7.0.jar:$J/lucene-queries-8.7.0.jar
B=${HIGHLIGHT_ORACLE_BUILD:-build/debug}
SEED=${HIGHLIGHT_ORACLE_SEED:-7}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

if [ ! -f "$B/CMakeCache.txt" ]; then cmake --preset debug >/dev/null; fi
cmake --build "$B" -j"$(nproc)" --target scry_search >/dev/null
cc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Isrc tests/oracle/highlight/highlight_oracle.c \
  "$B/libscry_search.a" "$B/libscry_index.a" "$B/libscry_text.a" "$B/libscry_base.a" \
  $(pkg-config --libs jansson libzstd libxxhash icu-uc icu-i18n zlib) -lstemmer -lm -lpthread \
  -o "$OUT/highlight_oracle"
mkdir -p "$OUT/classes"
javac -d "$OUT/classes" -cp "$JARS" tests/oracle/highlight/HighlightOracle.java

$PY tests/oracle/highlight/gen.py "$OUT/cases.tsv" "$SEED"
"$OUT/highlight_oracle" "$OUT/cases.tsv" "$OUT/breaks.txt" > "$OUT/scry.txt"
java -cp "$JARS:$OUT/classes" HighlightOracle "$OUT/cases.tsv" "$OUT/breaks.txt" > "$OUT/lucene.txt"
echo "same sentence boundaries (must be equal):"
$PY tests/oracle/highlight/compare.py "$OUT/cases.tsv" "$OUT/lucene.txt" "$OUT/scry.txt" 5
echo "java.text sentence boundaries on the Lucene side (informational):"
java -cp "$JARS:$OUT/classes" HighlightOracle "$OUT/cases.tsv" > "$OUT/lucene_java.txt"
$PY tests/oracle/highlight/compare.py "$OUT/cases.tsv" "$OUT/lucene_java.txt" "$OUT/scry.txt" 0 info
