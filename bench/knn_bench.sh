#!/usr/bin/env bash
# Vector search benchmark (not a test): makes two vector sets, runs bench/knn_compare.py on
# each (scry's HNSW in process beside hnswlib and FAISS, single thread, M 16,
# ef_construction 100) and writes the "knn" section of docs/benchmarks.md.
#   text: TF-IDF of Debian package descriptions + man page paragraphs, random projection to
#         256 dims, cosine (bench/vectors_from_text.py)
#   gmm:  `scry gen vectors`: 64-component Gaussian mixture, 128 dims, l2_norm
# Usage: bash bench/knn_bench.sh [n_vectors, default 100000]
#        bash bench/knn_bench.sh --scale [n_vectors, default 1000000]
# --scale: the "Scale" section instead (knn-1m): two Gaussian mixtures of N x 128 (seed 11),
# isotropic clusters (intrinsic dimension 128) and clusters near 16-dimensional subspaces
# (`--intrinsic-dims 16`), each through knn_compare.py at num_candidates 10,40,100,200,500,
# then the low-dimensional one over HTTP (bench/knn_http.py: _bulk into a release
# `scry serve`, int8_hnsw, one shard force-merged to one segment, k 10 latency). The fvecs
# files are kept in $KNN_DIR (default: a temporary folder) and reused when present.
# Needs python3-numpy, python3-hnswlib, python3-faiss (scripts/deps.sh) and a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build build/release -j2 --target scry knn_bench >/dev/null
if [ "${1:-}" = "--scale" ]; then
  N=${2:-1000000}
  dir=${KNN_DIR:-$(mktemp -d)}
  mkdir -p "$dir"
  rec=$((4 + 128 * 4))
  ef=10,40,100,200,500
  for set in iso low16; do
    if [ ! -s "$dir/${set}_query.fvecs" ]; then
      extra=""
      [ $set = low16 ] && extra="--intrinsic-dims 16"
      # shellcheck disable=SC2086
      build/release/scry gen vectors --docs $((N + 1000)) --dims 128 --clusters 64 --seed 11 \
        $extra --fvecs >"$dir/${set}_all.fvecs"
      head -c $((N * rec)) "$dir/${set}_all.fvecs" >"$dir/${set}_base.fvecs"
      tail -c $((1000 * rec)) "$dir/${set}_all.fvecs" >"$dir/${set}_query.fvecs"
      rm "$dir/${set}_all.fvecs"
    fi
  done
  out="$dir/section.md"
  {
    echo "<!-- BEGIN knn-1m (bench/knn_bench.sh --scale writes this part) -->"
    echo "### Scale: $N x 128, scry vs hnswlib and FAISS, and over HTTP"
    echo
    echo "\`bash bench/knn_bench.sh --scale $N\`, $(date -u +%Y-%m-%d), scry $(git rev-parse --short HEAD)."
    echo "In process as above (one thread, CPU seconds, M 16, ef_construction 100, 1,000 queries)."
    echo
    echo "#### Isotropic clusters (\`scry gen vectors --dims 128 --clusters 64 --seed 11\`), l2_norm"
    echo
    /usr/bin/python3 bench/knn_compare.py "$dir/iso_base.fvecs" "$dir/iso_query.fvecs" --sim l2 \
      --oversample 1.5,2 --ef $ef
    echo
    echo "#### Clusters of intrinsic dimension 16 (\`... --seed 11 --intrinsic-dims 16\`), l2_norm"
    echo
    /usr/bin/python3 bench/knn_compare.py "$dir/low16_base.fvecs" "$dir/low16_query.fvecs" \
      --sim l2 --oversample 1.5,2 --ef $ef
    echo
    echo "#### Over HTTP: the intrinsic-16 set, int8_hnsw, one segment (bench/knn_http.py)"
    echo
    echo '```'
    SCRY_BIN=build/release/scry /usr/bin/python3 bench/knn_http.py "$dir/low16_base.fvecs" \
      "$dir/low16_query.fvecs" --nc $ef
    echo '```'
    echo "<!-- END knn-1m -->"
  } >"$out"
  /usr/bin/python3 bench/docs_section.py docs/benchmarks.md knn-1m "$out"
  echo "knn-1m section written to docs/benchmarks.md"
  exit 0
fi
N=${1:-100000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rec=$((4 + 128 * 4))
build/release/scry gen vectors --docs $((N + 1000)) --dims 128 --clusters 64 --seed 7 --fvecs \
  >"$tmp/all.fvecs"
head -c $((N * rec)) "$tmp/all.fvecs" >"$tmp/gmm_base.fvecs"
tail -c $((1000 * rec)) "$tmp/all.fvecs" >"$tmp/gmm_query.fvecs"
/usr/bin/python3 bench/vectors_from_text.py --dims 256 --max-docs "$N" --out "$tmp/text"
{
  echo "<!-- BEGIN knn (bench/knn_bench.sh writes this part) -->"
  echo "## Vector search (kNN)"
  echo
  echo "\`bash bench/knn_bench.sh\`, $(date -u +%Y-%m-%dT%H:%M:%SZ), scry $(git rev-parse --short HEAD)."
  echo "In process, one thread: scry's per-segment HNSW (\`build/release/knn_bench\`: the"
  echo "section a flush writes, searched as a segment is) beside hnswlib 0.6 and FAISS 1.7"
  echo "(Debian packages) on the same vectors, same M and ef_construction. QPS and build"
  echo "seconds are CPU seconds of the one thread (the machine is shared). bytes/vector: what a"
  echo "search keeps in memory (vectors or int8 codes plus the graph; scry's int8 types keep the"
  echo "raw floats on disk for rescoring and merges). Recall@10 against brute force."
  echo
  echo "### Gaussian mixture (scry gen vectors), l2_norm"
  echo
  /usr/bin/python3 bench/knn_compare.py "$tmp/gmm_base.fvecs" "$tmp/gmm_query.fvecs" --sim l2 \
    --oversample 1.5,2
  echo
  echo "### Text: package descriptions and man pages (bench/vectors_from_text.py), cosine"
  echo
  /usr/bin/python3 bench/knn_compare.py "$tmp/text/base.fvecs" "$tmp/text/query.fvecs" \
    --sim cosine --oversample 1.5,2
  echo "<!-- END knn -->"
} >"$tmp/section.md"
/usr/bin/python3 bench/docs_section.py docs/benchmarks.md knn "$tmp/section.md"
echo "knn section written to docs/benchmarks.md"
