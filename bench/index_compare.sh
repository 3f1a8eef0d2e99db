#!/usr/bin/env bash
# Indexing benchmark: scry's real write path (bench/index_bench.c: mapping + analysis + translog
# + segment buffer + commit, one thread) against Lucene 8.7 (bench/LuceneIndexBench.java, the
# same fields as Elasticsearch would index with bench/workloads/wiki.index.json; 1 thread, then
# 2 threads) on the `scry gen wiki` corpus. Reports docs/s, MB/s of raw JSON, CPU seconds, the
# index size after the commit and after a force merge to one segment, and the ratios.
# Usage: bench/index_compare.sh [N_DOCS (1000000)] [RAM_MB (64)]   (WORK=dir keeps the corpus)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
RAM=${2:-64}
WORK=${WORK:-/tmp/scry-index-compare}
B=${BUILD:-build/index-compare}
JARS=/usr/share/java/lucene-core-8.7.0.jar:/usr/share/java/lucene-analyzers-common-8.7.0.jar
mkdir -p "$WORK"
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O3 -DNDEBUG -g" \
    -DSCRY_WERROR=OFF >/dev/null
cmake --build "$B" -j"$(nproc)" --target scry index_bench >/dev/null
CORPUS="$WORK/wiki-$N.ndjson"
[ -s "$CORPUS" ] || "$B/scry" gen wiki --seed 1 --docs "$N" > "$CORPUS"
mkdir -p "$WORK/classes"
javac -d "$WORK/classes" -cp "$JARS" bench/LuceneIndexBench.java bench/LuceneNdjson.java
echo "corpus: $N docs, $(du -mL "$CORPUS" | cut -f1) MB; RAM buffer $RAM MB; $(nproc) cores" >&2
"$B/index_bench" "$CORPUS" bench/workloads/wiki.index.json "$RAM" | tee "$WORK/scry.txt"
for T in 1 2; do
    java -Xms8g -Xmx8g -cp "$JARS:$WORK/classes" LuceneIndexBench "$CORPUS" "$WORK/lucene-idx" \
        "$T" "$RAM" | tee "$WORK/lucene-$T.txt"
done
rm -rf "$WORK/lucene-idx"
/usr/bin/python3 - "$WORK/scry.txt" "$WORK/lucene-1.txt" "$WORK/lucene-2.txt" <<'PY'
import sys
def load(p):
    for line in open(p):
        if line.startswith("docs="):
            return {k: float(v) for k, v in (f.split("=") for f in line.split())}
s, l1, l2 = (load(p) for p in sys.argv[1:4])
print("\n%-16s %10s %8s %8s %8s %10s %10s %8s" % ("engine", "docs/s", "MB/s", "wall_s", "cpu_s",
      "size_MB", "merged_MB", "merge_s"))
for name, r in (("scry 1 thread", s), ("lucene 1 thread", l1), ("lucene 2 threads", l2)):
    print("%-16s %10.0f %8.2f %8.1f %8.1f %10.1f %10.1f %8.1f" % (name, r["docs_per_s"],
          r["mb_per_s"], r["index_s"], r["cpu_s"], r["size_bytes"] / 1e6,
          r["merged_bytes"] / 1e6, r["merge_s"]))
print("\nscry / lucene-1t docs/s: %.2fx   scry / lucene-2t docs/s: %.2fx" % (
      s["docs_per_s"] / l1["docs_per_s"], s["docs_per_s"] / l2["docs_per_s"]))
print("lucene-1t cpu_s / scry cpu_s: %.2fx (CPU per doc; robust when the machine is busy)" % (
      l1["cpu_s"] / s["cpu_s"]))
print("index size scry / lucene: %.3f after commit, %.3f after force merge; raw JSON %.0f MB" % (
      s["size_bytes"] / l1["size_bytes"], s["merged_bytes"] / l1["merged_bytes"],
      s["bytes"] / 1e6))
PY
