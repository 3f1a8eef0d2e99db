#!/usr/bin/env bash
# Regenerates the seed segments of the segment fuzzer (tests/fuzz/corpus/segment/) at the
# current segment format version, from tests/fuzz/seeds/make_segment_seeds.c linked against the
# debug build's index and base libraries. Run it after a segment format change.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset debug >/dev/null
cmake --build build/debug -j"$(nproc)" --target scry_index scry_base >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c11 -D_GNU_SOURCE -O1 -Isrc tests/fuzz/seeds/make_segment_seeds.c \
  build/debug/libscry_index.a build/debug/libscry_base.a -lzstd -lxxhash -lpthread -lm \
  -o "$tmp/make_segment_seeds"
"$tmp/make_segment_seeds" "$tmp"
rm -f tests/fuzz/corpus/segment/*.seg
for s in small blocks skip2 vectors; do cp "$tmp/$s.seg" "tests/fuzz/corpus/segment/$s.seg"; done
ls -l tests/fuzz/corpus/segment/
