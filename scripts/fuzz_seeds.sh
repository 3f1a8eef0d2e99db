#!/usr/bin/env bash
# Regenerates fuzz seeds that are encoded data rather than hand-written text, from generators
# linked against the debug build. Run it (`make fuzz-seeds`) after a format change:
#   segment  tests/fuzz/corpus/segment/*.seg at the current segment format version
#            (tests/fuzz/seeds/make_segment_seeds.c);
#   sketch   tests/fuzz/corpus/hll/*, tdigest/* and agg_partial/sketches_* at the current
#            sketch and aggregation-partial encodings (tests/fuzz/seeds/make_sketch_seeds.c;
#            the ctest search_agg_sketch_seeds fails while these are stale).
# Usage: scripts/fuzz_seeds.sh [segment|sketch]   (no argument: both)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in all|segment|sketch) ;; *) echo "usage: $0 [segment|sketch]" >&2; exit 2;; esac
cmake --preset debug >/dev/null
if [ "$what" != sketch ]; then
  cmake --build build/debug -j"$(nproc)" --target scry_index scry_base >/dev/null
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cc -std=c11 -D_GNU_SOURCE -O1 -Isrc tests/fuzz/seeds/make_segment_seeds.c \
    build/debug/libscry_index.a build/debug/libscry_base.a -lzstd -lxxhash -lpthread -lm \
    -o "$tmp/make_segment_seeds"
  "$tmp/make_segment_seeds" "$tmp"
  rm -f tests/fuzz/corpus/segment/*.seg
  for s in small blocks skip2 vectors dict; do cp "$tmp/$s.seg" "tests/fuzz/corpus/segment/$s.seg"; done
  ls -l tests/fuzz/corpus/segment/
fi
if [ "$what" != segment ]; then
  cmake --build build/debug -j"$(nproc)" --target make_sketch_seeds >/dev/null
  build/debug/make_sketch_seeds write tests/fuzz/corpus
  build/debug/make_sketch_seeds check tests/fuzz/corpus
  ls -l tests/fuzz/corpus/hll/ tests/fuzz/corpus/tdigest/ tests/fuzz/corpus/agg_partial/sketches_*
fi
