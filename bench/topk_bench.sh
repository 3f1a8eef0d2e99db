#!/usr/bin/env bash
# Top-10 without totals, scry vs Lucene 8.7 in process on the same generated documents
# (issue 18 sections 2 and 3): a date range (`size: 10`, `track_total_hits: false`) of four
# widths and a term query sorted by a numeric field. scry: bench/topk_bench.c; Lucene:
# bench/LuceneTopkBench.java (IndexOrDocValuesQuery; numeric sort with setCanUsePoints).
# Both single threaded, thread CPU time, median of RUNS. Prints per case the two medians,
# the ratio Lucene / scry (> 1: scry faster) and whether the top 10 doc ids are identical.
# Usage: bench/topk_bench.sh [N_DOCS (1000000)] [RUNS (300)]   (OUT=dir keeps the Lucene index)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
RUNS=${2:-300}
OUT=${OUT:-/tmp/scry-topk-bench-$N}
B=${BUILD:-build/release}
JAR=/usr/share/java/lucene-core-8.7.0.jar
mkdir -p "$OUT/classes"
[ -f "$B/CMakeCache.txt" ] || cmake --preset release >/dev/null
cmake --build "$B" -j2 --target topk_bench >/dev/null
javac -d "$OUT/classes" -cp "$JAR" bench/LuceneTopkBench.java
"$B/topk_bench" "$N" "$RUNS" > "$OUT/scry.tsv"
java -Xmx2g -cp "$OUT/classes:$JAR" LuceneTopkBench "$N" "$RUNS" "$OUT/lucene" > "$OUT/lucene.tsv"
/usr/bin/python3 - "$OUT/scry.tsv" "$OUT/lucene.tsv" <<'PY'
import sys
def load(p):
    rows = [l.rstrip("\n").split("\t") for l in open(p)]
    h = rows[0]
    return {r[0]: dict(zip(h, r)) for r in rows[1:]}
s, l = load(sys.argv[1]), load(sys.argv[2])
print("| case | scry µs | Lucene µs | Lucene / scry | scry points only µs | scry scan only µs | docs read (sort) | same top 10 |")
print("|---|---:|---:|---:|---:|---:|---:|---|")
for k, r in s.items():
    if k not in l:
        continue
    sm, lm = float(r["median_us"]), float(l[k]["median_us"])
    print("| %s | %.1f | %.1f | **%.2fx** | %s | %s | %s | %s |" % (
        k, sm, lm, lm / sm if sm else float("inf"), r["points_us"], r["scan_us"],
        r["docs_read"], "yes" if r["top"] == l[k]["top"] else "NO: %s vs %s" % (r["top"], l[k]["top"])))
PY
