#!/usr/bin/env bash
# Benchmark tooling test (owner: bench): the corpus generators are deterministic and hit their
# frequency bands; the load driver, run for a few seconds against a tiny local HTTP server
# (bench/tests/mini_server.py), counts requests and errors exactly (one error response = one
# error) and `scry bench compare` flags differing hit counts. Timing is never asserted.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-/usr/bin/python3}
# scry-bench is the driver and generators without the engine (same code as `scry bench/gen`)
SCRY=${SCRY_BIN:-build/debug/scry-bench}
if [ ! -x "$SCRY" ]; then
  echo "70-bench: $SCRY not built" >&2
  exit 1
fi
T=$(mktemp -d)
SRV=""
cleanup() { [ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "70-bench: FAIL: $*" >&2; exit 1; }

echo "-- generators: same seed -> same bytes"
for kind in wiki taxis logs; do
  a=$("$SCRY" gen $kind --seed 7 --docs 3000 | sha256sum)
  b=$("$SCRY" gen $kind --seed 7 --docs 3000 | sha256sum)
  c=$("$SCRY" gen $kind --seed 8 --docs 3000 | sha256sum)
  [ "$a" = "$b" ] || fail "$kind: same seed gave different output"
  [ "$a" != "$c" ] || fail "$kind: different seeds gave the same output"
  "$SCRY" gen $kind --seed 7 --docs 50 | "$PY" -c 'import json,sys; [json.loads(l) for l in sys.stdin]' ||
    fail "$kind: output is not NDJSON"
done
# a shorter run is a prefix of a longer one (wiki and logs order do not depend on --docs for wiki)
cmp <("$SCRY" gen wiki --seed 3 --docs 500) <("$SCRY" gen wiki --seed 3 --docs 900 | head -n 500) ||
  fail "wiki: --docs 500 is not a prefix of --docs 900"

echo "-- generators: frequency bands (wiki, 20000 docs)"
"$SCRY" gen wiki --seed 11 --docs 20000 > "$T/wiki.json"
"$PY" - "$T/wiki.json" bench/gen/terms.txt <<'PYEOF'
import collections, json, re, statistics, sys
df = collections.Counter(); n = 0; body = 0; phrase = 0
for line in open(sys.argv[1]):
    d = json.loads(line); n += 1; body += len(d["body"])
    text = d["body"].lower()
    df.update(set(re.findall(r"[a-z0-9]+(?:[.:'][a-z0-9]+)*", text)))
    phrase += " new york " in " " + re.sub(r"[^a-z0-9 ]", "", text) + " "
target = {}
for l in open(sys.argv[2]):
    f = l.split()
    if f and f[0] == "T":
        target[f[2]] = int(f[1]) / 1e6
def check(term, lo, hi):
    got = df[term] / n
    print("  %-8s target %.4f got %.4f" % (term, target[term], got))
    assert lo <= got / target[term] <= hi, term
check("of", 0.9, 1.1)        # high band (~82% of documents)
check("most", 0.85, 1.15)    # medium band (~8%)
check("husband", 0.7, 1.3)   # low band (~0.8%)
ratios = [df[t] / n / p for t, p in target.items() if p * n >= 30]
med = statistics.median(ratios)
print("  median df/target over %d terms: %.3f; mean body %.0f chars; 'new york' in %.2f%%"
      % (len(ratios), med, body / n, 100 * phrase / n))
assert 0.9 <= med <= 1.1
assert 800 <= body / n <= 1300
assert phrase > 0
PYEOF

echo "-- driver against a local test server"
"$PY" bench/tests/mini_server.py "$T/port" &
SRV=$!
for _ in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
PORT=$(cat "$T/port")
printf '%s\n' \
  $'ok\tPOST\t/i/_search\t{"query":{"match_all":{}}}' \
  $'ok\tPOST\t/i/_search\t{"q":"CHUNKED answer"}' \
  $'err\tPOST\t/i/_search\t{"q":"ERR500"}' \
  $'mix\tPOST\t/i/_search\t{"q":"fine"}' \
  $'mix\tPOST\t/i/_search\t{"q":"TIMEDOUT"}' > "$T/wl.txt"
"$SCRY" bench run --port "$PORT" --workload "$T/wl.txt" --conns 1,3 --threads 2 --warmup 0.2 \
  --reps 2 --duration 1 --pid "$SRV" --label test --out "$T/a.json"
curl -s "http://127.0.0.1:$PORT/stats" > "$T/server.json"
"$PY" - "$T/a.json" "$T/server.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1])); srv = json.load(open(sys.argv[2]))
v = r["validation"]
assert [q["error"] for q in v] == [False, False, True, False, True], v
assert [q["total"] for q in v][:2] == [26, 22], v          # hits.total.value = body length
assert v[2]["status"] == 500 and v[4]["status"] == 200
cells = {(c["class"], c["conns"]): c for c in r["cells"]}
assert set(cells) == {(k, c) for k in ("ok", "err", "mix") for c in (1, 3)}, cells.keys()
total = 0
for (cls, conns), c in cells.items():
    n, e = c["requests"], c["errors"]
    total += n
    assert n > 0 and c["latency_us"]["p50"] > 0 and c["bytes_in"] > 0 and c["bytes_out"] > 0
    assert c["latency_us"]["p50"] <= c["latency_us"]["p99"] <= c["latency_us"]["max"]
    assert "server_cpu_us_per_req" in c and c["server_peak_rss_kb"] > 0
    if cls == "ok": assert e == 0, c
    if cls == "err": assert e == n, c
    if cls == "mix" and conns == 1:
        # one connection alternates fine/TIMEDOUT from the start of each repetition
        assert n // 2 - 2 <= e <= n // 2 + 2, c
    print("  %-4s conns=%d requests=%d errors=%d p50=%dus" % (cls, conns, n, e, c["latency_us"]["p50"]))
# the server answered everything the driver counted plus warm-up and validation
assert srv["requests"] >= total + len(v), (srv, total)
PYEOF

echo "-- compare"
"$SCRY" bench compare "$T/a.json" "$T/a.json" > "$T/cmp.txt"
grep -q "validation: 5 queries compared, 0 differ" "$T/cmp.txt" || { cat "$T/cmp.txt"; fail "compare A A"; }
"$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); r["validation"][0]["total"]=99; json.dump(r,open(sys.argv[2],"w"))' "$T/a.json" "$T/b.json"
rc=0; "$SCRY" bench compare --strict "$T/a.json" "$T/b.json" > "$T/cmp2.txt" || rc=$?
[ $rc -eq 3 ] || { cat "$T/cmp2.txt"; fail "compare --strict should exit 3 on differing counts (got $rc)"; }
grep -q "DIFF" "$T/cmp2.txt" || fail "compare did not flag the differing query"
echo "-- report: its own part of docs/benchmarks.md only; rejected workloads listed as not supported"
mkdir -p "$T/res" "$T/docs"
cp "$T/a.json" "$T/res/test.json"
# a validation-only run whose requests partly fail: no cells, a "not supported" table
"$SCRY" bench run --port "$PORT" --workload "$T/wl.txt" --validate-only --out "$T/res/test.aggs.json"
printf '## Written by hand\n\nkept text\n\n<!-- BEGIN taxis_bench -->\ntaxis part\n<!-- END taxis_bench -->\n' \
  > "$T/docs/benchmarks.md"
for _ in 1 2; do "$PY" bench/report.py --results "$T/res" --docs "$T/docs" --seconds 1 >/dev/null; done
"$PY" - "$T/docs/benchmarks.md" <<'PYEOF'
import sys
t = open(sys.argv[1]).read()
assert t.count("<!-- BEGIN make_bench") == 1 and t.count("<!-- END make_bench -->") == 1, t
assert t.count("kept text") == 1 and t.count("taxis part") == 1, t
assert "## test.aggs: not supported yet" in t, t
assert "| err | 1 | 0 | HTTP 500" in t and "| mix | 2 | 1 |" in t, t
assert "## test\n" in t and "| ok |" in t, t
PYEOF
echo "-- the Lucene 8.7 side of make bench (bench/lucene_wiki.sh) on a small wiki corpus"
"$SCRY" gen wiki --seed 5 --docs 400 > "$T/w.ndjson"
echo "wiki 400 5" > "$T/w.ndjson.meta"
bash bench/lucene_wiki.sh "$T/w.ndjson" "$T/luc" 1 2> "$T/luc.log" || { cat "$T/luc.log"; fail "lucene_wiki.sh"; }
"$PY" - "$T/luc/lucene.tsv" bench/workloads/luceneutil.top10.txt <<'PYEOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
classes = {l.split("\t")[0] for l in open(sys.argv[2]) if not l.startswith("#")}
got = {(r[0], r[1]) for r in rows}
want = {(c, m) for c in classes for m in ("COUNT", "TOP_10", "TOP_10_COUNT")}
assert got == want, sorted(want ^ got)
n = {r[0]: int(r[2]) for r in rows}  # queries per class
assert sum(n.values()) == sum(1 for l in open(sys.argv[2]) if not l.startswith("#")), n
hits = {r[0]: int(r[5]) for r in rows if r[1] == "COUNT"}
assert hits["high_term"] > 0 and all(float(r[3]) > 0 for r in rows), rows
print("  %d classes x 3 modes, %d queries; high_term COUNT hits %d" % (len(classes), sum(n.values()), hits["high_term"]))
PYEOF
echo "70-bench: OK"
