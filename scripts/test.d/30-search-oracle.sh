#!/usr/bin/env bash
# Lucene oracle for query execution (tests/oracle/search): generates a deterministic corpus of
# real English words with Zipf frequencies (50k docs) and ~350 queries of every kind, indexes it
# with Lucene 8.7 (Debian's liblucene8-java) and with scry (several segments, 1 doc in 97
# deleted), and requires equal counts and totals, equal top-10 ids and scores within 1e-5
# relative (allowed differences are listed in compare.py). Also checks that the query_string and
# simple_query_string parser tests' expectations are what Lucene's QueryParser and
# SimpleQueryParser print today (ParseDump.java).
set -euo pipefail
cd "$(dirname "$0")/../.."
N_DOCS=${SEARCH_ORACLE_DOCS:-50000}
SEED=${SEARCH_ORACLE_SEED:-42}
PY=/usr/bin/python3
JARS=/usr/share/java/lucene-core-8.7.0.jar:/usr/share/java/lucene-queryparser-8.7.0.jar:/usr/share/java/lucene-analyzers-common-8.7.0.jar
B=${SEARCH_ORACLE_BUILD:-build/debug}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

if [ ! -f "$B/CMakeCache.txt" ]; then cmake --preset debug >/dev/null; fi
cmake --build "$B" -j"$(nproc)" --target scry_search >/dev/null
cc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Isrc tests/oracle/search/search_oracle.c \
  "$B/libscry_search.a" "$B/libscry_index.a" "$B/libscry_text.a" "$B/libscry_base.a" \
  $(pkg-config --libs jansson libzstd libxxhash icu-uc icu-i18n zlib) -lstemmer -lm -lpthread \
  -o "$OUT/search_oracle"
mkdir -p "$OUT/classes" "$OUT/segs"
javac -d "$OUT/classes" -cp "$JARS" tests/oracle/search/SearchOracle.java tests/oracle/search/ParseDump.java

echo "query_string parser vs Lucene QueryParser:"
java -cp "$JARS:$OUT/classes" ParseDump tests/oracle/search/parse_queries.txt > "$OUT/parse_or.tsv"
java -cp "$JARS:$OUT/classes" ParseDump tests/oracle/search/parse_queries.txt and > "$OUT/parse_and.tsv"
diff -u tests/unit/search/cases/query_string_or.tsv "$OUT/parse_or.tsv"
diff -u tests/unit/search/cases/query_string_and.tsv "$OUT/parse_and.tsv"
java -cp "$JARS:$OUT/classes" ParseDump tests/oracle/search/simple_queries.txt simple > "$OUT/simple_or.tsv"
java -cp "$JARS:$OUT/classes" ParseDump tests/oracle/search/simple_queries.txt simple_and > "$OUT/simple_and.tsv"
diff -u tests/unit/search/cases/simple_query_string_or.tsv "$OUT/simple_or.tsv"
diff -u tests/unit/search/cases/simple_query_string_and.tsv "$OUT/simple_and.tsv"
echo "  the unit test's expectations are what Lucene 8.7 prints (parser test: search_query_parser_test)"

echo "corpus: $N_DOCS docs, seed $SEED"
$PY tests/oracle/search/gen.py "$OUT" "$N_DOCS" "$SEED"
java -cp "$JARS:$OUT/classes" SearchOracle "$OUT/docs.tsv" "$OUT/queries.txt" 97 > "$OUT/lucene.txt"
"$OUT/search_oracle" "$OUT/docs.tsv" "$OUT/queries.txt" 97 "$OUT/segs" 20000 > "$OUT/scry.txt"
$PY tests/oracle/search/compare.py "$OUT/lucene.txt" "$OUT/scry.txt"
