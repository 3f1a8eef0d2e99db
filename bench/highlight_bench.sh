#!/usr/bin/env bash
# Highlighting overhead (issue 14): the same `match` queries on body over the wiki corpus (top
# 10, with _source) without highlighting, highlighting body, and highlighting body + title; one
# connection, sequential, interleaved rounds; prints median and mean latencies and the
# overheads. A measurement, not a test.
# Usage: bench/highlight_bench.sh [DOCS] [QUERIES]   (needs build/release/scry)
set -euo pipefail
cd "$(dirname "$0")/.."
DOCS=${1:-100000}
NQ=${2:-400}
BIN=${SCRY_BIN:-build/release/scry}
TMP=$(mktemp -d)
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$TMP"' EXIT
"$BIN" serve --data "$TMP/data" --port 0 --port-file "$TMP/port" >"$TMP/log" 2>&1 &
PID=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
PORT=$(cat "$TMP/port")
curl -sf -XPUT "localhost:$PORT/wiki" -H 'Content-Type: application/json' \
  -d @bench/workloads/wiki.index.json >/dev/null
"$BIN" gen wiki --docs "$DOCS" > "$TMP/docs.ndjson"
"$BIN" load --index wiki --url "http://127.0.0.1:$PORT" --refresh "$TMP/docs.ndjson" >/dev/null
/usr/bin/python3 - "$PORT" "$NQ" "$TMP/docs.ndjson" <<'PY'
import json, random, statistics, sys, time, urllib3
port, nq, docs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
words = []
with open(docs) as f:
    for i, line in enumerate(f):
        if i % 2 and len(words) < 200000:
            words += [w.strip(".,").lower() for w in json.loads(line)["body"].split()[:40]]
rng = random.Random(1)
freq = {}
for w in words:
    freq[w] = freq.get(w, 0) + 1
mid = [w for w, c in freq.items() if 20 <= c <= 2000 and w.isalpha()]
queries = [" ".join(rng.sample(mid, rng.choice([1, 2]))) for _ in range(nq)]
http = urllib3.PoolManager(maxsize=1)
url = "http://127.0.0.1:%d/wiki/_search" % port
def run(hl):
    lat = []
    for q in queries:
        body = {"query": {"match": {"body": q}}, "size": 10}
        if hl:
            body["highlight"] = {"fields": {f: {} for f in hl}}
        data = json.dumps(body).encode()
        t = time.perf_counter()
        r = http.request("POST", url, body=data, headers={"Content-Type": "application/json"})
        lat.append(time.perf_counter() - t)
        assert r.status == 200, r.data[:300]
    return lat
modes = {"none": (), "body": ("body",), "body+title": ("body", "title")}
lat = {m: [] for m in modes}
for m in modes:
    run(modes[m])  # warm up
for _ in range(3):
    for m in modes:
        lat[m] += run(modes[m])
mb, ab = statistics.median(lat["none"]) * 1e3, statistics.mean(lat["none"]) * 1e3
print("queries %d x 3 rounds; without highlight: median %.3f ms, mean %.3f ms" % (nq, mb, ab))
for m in ("body", "body+title"):
    mh, ah = statistics.median(lat[m]) * 1e3, statistics.mean(lat[m]) * 1e3
    print("highlight %s (top 10): median %.3f ms (%+.1f%%), mean %.3f ms (%+.1f%%)" %
          (m, mh, (mh / mb - 1) * 100, ah, (ah / ab - 1) * 100))
PY
