#!/usr/bin/env bash
# Lucene oracle for geo queries (tests/oracle/geo): 30k docs of random points (clusters with
# duplicates, the poles, the dateline, the globe; some docs with two points) and 600 boxes and
# distances are counted by Lucene 8.7's LatLonPoint queries and by scry's searcher over three
# segments; counts must be equal, except by points within float ambiguity of a circle's edge
# (Lucene uses a sloppy haversine). GEO_ORACLE_DOCS / GEO_ORACLE_SEED override the defaults.
set -euo pipefail
cd "$(dirname "$0")/../.."
N_DOCS=${GEO_ORACLE_DOCS:-30000}
SEED=${GEO_ORACLE_SEED:-42}
JARS=/usr/share/java/lucene-core-8.7.0.jar
B=${GEO_ORACLE_BUILD:-build/debug}
if ! command -v javac >/dev/null || [ ! -f "$JARS" ]; then
  echo "geo oracle: javac or the Lucene 8.7 jars are missing (scripts/deps.sh)"; exit 1
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
if [ ! -f "$B/CMakeCache.txt" ]; then cmake --preset debug >/dev/null; fi
cmake --build "$B" -j"$(nproc)" --target scry_search >/dev/null
cc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Isrc tests/oracle/geo/geo_oracle.c \
  "$B/libscry_search.a" "$B/libscry_index.a" "$B/libscry_base.a" \
  $(pkg-config --libs jansson libzstd libxxhash) -lm -lpthread -o "$OUT/geo_oracle"
javac -d "$OUT" -cp "$JARS" tests/oracle/geo/GeoOracle.java
"$OUT/geo_oracle" gen "$N_DOCS" 600 "$SEED" "$OUT"
java -cp "$JARS:$OUT" GeoOracle "$OUT" > "$OUT/lucene.txt"
"$OUT/geo_oracle" check "$OUT" "$OUT/lucene.txt"
