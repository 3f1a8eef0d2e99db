#!/usr/bin/env bash
# Vector search benchmark (not a test): makes two vector sets, runs bench/knn_compare.py on
# each (scry's HNSW in process beside hnswlib and FAISS, single thread, M 16,
# ef_construction 100) and writes the "knn" section of docs/benchmarks.md.
#   text: TF-IDF of Debian package descriptions + man page paragraphs, random projection to
#         256 dims, cosine (bench/vectors_from_text.py)
#   gmm:  `scry gen vectors`: 64-component Gaussian mixture, 128 dims, l2_norm
# Usage: bash bench/knn_bench.sh [n_vectors, default 100000]
# Needs python3-numpy, python3-hnswlib, python3-faiss (scripts/deps.sh) and a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
cmake --preset release >/dev/null
cmake --build build/release -j2 --target scry knn_bench >/dev/null
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
  /usr/bin/python3 bench/knn_compare.py "$tmp/gmm_base.fvecs" "$tmp/gmm_query.fvecs" --sim l2
  echo
  echo "### Text: package descriptions and man pages (bench/vectors_from_text.py), cosine"
  echo
  /usr/bin/python3 bench/knn_compare.py "$tmp/text/base.fvecs" "$tmp/text/query.fvecs" --sim cosine
  echo "<!-- END knn -->"
} >"$tmp/section.md"
/usr/bin/python3 bench/docs_section.py docs/benchmarks.md knn "$tmp/section.md"
echo "knn section written to docs/benchmarks.md"
