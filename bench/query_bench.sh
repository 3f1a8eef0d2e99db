#!/usr/bin/env bash
# Query-execution benchmark: scry's in-process searcher (bench/query_bench.c) against Lucene 8.7
# (bench/LuceneQueryBench.java) on the same generated documents (tests/oracle/search/gen.py:
# real English words with Zipf frequencies) and the luceneutil query classes, single threaded,
# in three modes (COUNT, TOP_10, TOP_10_COUNT). Prints median/p99 per class and the ratio
# Lucene/scry of medians (> 1 means scry is faster).
# Usage: bench/query_bench.sh [N_DOCS (1000000)] [REPS (5)]   (WORK=dir to keep the indexes;
# QUERIES=file; QB_CLASSES=a,b to run only some classes; NOCANCEL=0 skips the overhead runs;
# QB_MARKDOWN=1 adds the docs' markdown table; QB_INSTR=1 also counts the instructions of the
# whole set with checks on and compiled out under valgrind's cachegrind: exact and
# load-independent, unlike timings on a shared machine; slow)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
REPS=${2:-5}
WORK=${WORK:-/tmp/scry-query-bench-$N}
B=${BUILD:-build/query-bench}
JARS=/usr/share/java/lucene-core-8.7.0.jar:/usr/share/java/lucene-queryparser-8.7.0.jar:/usr/share/java/lucene-analyzers-common-8.7.0.jar
QUERIES=${QUERIES:-../shared/data/queries/luceneutil/queries.txt}
# from a worktree under <root>/wt/<name> the shared data is two levels up
[ -f "$QUERIES" ] || [ ! -f "../$QUERIES" ] || QUERIES="../$QUERIES"
mkdir -p "$WORK"
# The benchmark-game list names its class in "tags" (first tag) instead of "class": rewrite it
# as {"query":...,"class":...} lines grouped by class, the form both programs read.
if ! grep -q '"class":' "$QUERIES"; then
  /usr/bin/python3 - "$QUERIES" "$WORK/queries-by-class.txt" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = [(r["tags"][0], r["query"]) for r in rows if r.get("tags")]
order = {}
for c, _ in rows:
    order.setdefault(c, len(order))
with open(sys.argv[2], "w") as f:
    for c, q in sorted(rows, key=lambda r: order[r[0]]):
        f.write(json.dumps({"query": q, "class": c}, separators=(",", ":"), ensure_ascii=False) + "\n")
PY
  QUERIES="$WORK/queries-by-class.txt"
fi
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O3 -DNDEBUG -g" -DSCRY_WERROR=OFF >/dev/null
cmake --build "$B" -j"$(nproc)" --target query_bench >/dev/null
[ -f "$WORK/docs.tsv" ] || /usr/bin/python3 tests/oracle/search/gen.py "$WORK" "$N" 42
mkdir -p "$WORK/classes"
javac -d "$WORK/classes" -cp "$JARS" bench/LuceneQueryBench.java
"$B/query_bench" "$WORK/docs.tsv" "$QUERIES" "$WORK" "$REPS" > "$WORK/scry.tsv" 2> "$WORK/scry.err"
cat "$WORK/scry.err" >&2
java -Xmx4g -cp "$JARS:$WORK/classes" LuceneQueryBench "$WORK/docs.tsv" "$QUERIES" "$WORK" "$REPS" > "$WORK/lucene.tsv"
/usr/bin/python3 - "$WORK/scry.tsv" "$WORK/lucene.tsv" <<'PY'
import os, sys
def load(p):
    rows = {}
    for line in open(p):
        f = line.rstrip("\n").split("\t")
        if f[0] == "class":
            continue
        rows[(f[0], f[1])] = (float(f[3]), float(f[4]), int(f[5]))
    return rows
s, l = load(sys.argv[1]), load(sys.argv[2])
print("%-20s %-13s %10s %10s %10s %10s %7s %s" % ("class", "mode", "scry_med", "luc_med",
      "scry_p99", "luc_p99", "ratio", "hits"))
for k in s:
    if k not in l:
        continue
    (sm, sp, sh), (lm, lp, lh) = s[k], l[k]
    ratio = lm / sm if sm > 0 else float("inf")
    note = "" if sh == lh else " (hits differ: scry %d lucene %d)" % (sh, lh)
    print("%-20s %-13s %9.1fus %9.1fus %9.1fus %9.1fus %6.2fx%s" % (k[0], k[1], sm, lm, sp, lp,
          ratio, note))
if os.environ.get("QB_MARKDOWN"):
    # the docs' table: per class, "scry / Lucene (ratio)" median µs per mode
    def cell(k):
        if k not in s or k not in l:
            return "-"
        sm, lm = s[k][0], l[k][0]
        f = lambda v: ("%.1f" % v) if v < 100 else ("%d" % round(v))
        return "%s / %s (**%.2fx**)" % (f(sm), f(lm), lm / sm if sm > 0 else float("inf"))
    print("\n| class | COUNT | TOP_10 | TOP_10_COUNT |\n|---|---|---|---|")
    for c in dict.fromkeys(k[0] for k in s):
        print("| %s | %s |" % (c, " | ".join(cell((c, m)) for m in ("COUNT", "TOP_10", "TOP_10_COUNT"))))
PY
# Cancellation overhead: the same binary built twice, checks on (the build above) and compiled
# out (SC_SEARCH_NO_CANCEL_CHECKS), the whole query set in all three modes; alternating runs,
# best of 3 each (NOCANCEL=0 skips this).
if [ "${NOCANCEL:-1}" != 0 ]; then
  cmake -S . -B "$B-nocancel" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="-O3 -DNDEBUG -g -DSC_SEARCH_NO_CANCEL_CHECKS" -DSCRY_WERROR=OFF >/dev/null
  cmake --build "$B-nocancel" -j"$(nproc)" --target query_bench >/dev/null
  on=() off=()
  for r in 1 2 3; do
    on+=("$(QB_TOTAL_ROUNDS=2 "$B/query_bench" "$WORK/docs.tsv" "$QUERIES" "$WORK")")
    off+=("$(QB_TOTAL_ROUNDS=2 "$B-nocancel/query_bench" "$WORK/docs.tsv" "$QUERIES" "$WORK")")
  done
  /usr/bin/python3 - "${on[*]}" "${off[*]}" <<'PY'
import sys
on = min(map(float, sys.argv[1].split())); off = min(map(float, sys.argv[2].split()))
print("cancellation checks (whole set, 3 modes, best of 3): %.1f ms on, %.1f ms compiled out: overhead %+.2f%%"
      % (on, off, 100.0 * (on - off) / off))
PY
  if [ "${QB_INSTR:-0}" = 1 ]; then
    # instructions of one whole-set round = (1 round) - (0 rounds: start-up only)
    ir() {
      local out; out=$(mktemp)
      QB_TOTAL_ROUNDS=$2 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "$1/query_bench" "$WORK/docs.tsv" "$QUERIES" "$WORK" >/dev/null 2>"$out"
      sed -n 's/.*I *refs: *//p' "$out" | tr -d ,; rm -f "$out"
    }
    on1=$(ir "$B" 1) on0=$(ir "$B" 0) off1=$(ir "$B-nocancel" 1) off0=$(ir "$B-nocancel" 0)
    /usr/bin/python3 -c '
import sys
on, off = int(sys.argv[1]) - int(sys.argv[2]), int(sys.argv[3]) - int(sys.argv[4])
print("cancellation checks, instructions of one whole-set round (cachegrind): %d on, %d compiled out: overhead %+.3f%%" % (on, off, 100.0 * (on - off) / off))
' "$on1" "$on0" "$off1" "$off0"
  fi
fi
