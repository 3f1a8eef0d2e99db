#!/usr/bin/env python3
"""script_score exact kNN against the knn section's exact (flat) path (issues 14 and 16): one
`scry serve` process, one index of N random float vectors (one shard, force-merged to one
segment) mapped twice as the same vectors: `v` with index_options flat (the knn section scans
every vector exactly) and read by a script_score `cosineSimilarity(params.q, 'v') + 1.0` over
match_all. Per round the same Q queries run through both, alternating, top 10; reported: the
median per-query latency of each over the rounds and the ratio script_score / knn. Both return
the same ids (checked). Usage: python3 bench/script_score_bench.py [--docs 100000]
[--dims 128] [--queries 50] [--rounds 5] (SCRY_BIN picks the binary; measure a release
build)."""
import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from conftest import Server  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=100000)
    ap.add_argument("--dims", type=int, default=128)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    print("seed", a.seed, file=sys.stderr)
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="scry-ssbench-")
    s = Server(os.path.join(tmp, "data")).start()
    try:
        st, _, r = s.request("PUT", "/v", {
            "settings": {"number_of_shards": 1, "refresh_interval": "-1"},
            "mappings": {"properties": {"v": {
                "type": "dense_vector", "dims": a.dims, "similarity": "cosine",
                "index_options": {"type": "flat"}}}}})
        assert st == 200, r
        for b in range(0, a.docs, 2000):
            lines = []
            for i in range(b, min(b + 2000, a.docs)):
                lines.append(json.dumps({"index": {"_id": str(i)}}))
                lines.append(json.dumps({"v": [round(rng.gauss(0, 1), 5)
                                               for _ in range(a.dims)]}))
            st, _, r = s.request("POST", "/v/_bulk", "\n".join(lines) + "\n",
                                 headers={"Content-Type": "application/x-ndjson"})
            assert st == 200 and not r["errors"], r
        s.request("POST", "/v/_refresh")
        st, _, r = s.request("POST", "/v/_forcemerge?max_num_segments=1")
        assert st == 200, r
        qs = [[rng.gauss(0, 1) for _ in range(a.dims)] for _ in range(a.queries)]

        def knn(q):
            return {"size": 10, "_source": False, "knn": {
                "field": "v", "query_vector": q, "k": 10, "num_candidates": 10}}

        def script(q):
            return {"size": 10, "_source": False, "query": {"script_score": {
                "query": {"match_all": {}},
                "script": {"source": "cosineSimilarity(params.q, 'v') + 1.0",
                           "params": {"q": q}}}}}

        def run(body):
            t = time.perf_counter()
            st, _, r = s.request("POST", "/v/_search", body)
            dt = time.perf_counter() - t
            assert st == 200, r
            return dt, [h["_id"] for h in r["hits"]["hits"]]

        for q in qs[:5]:  # warm-up, and the two agree
            assert run(knn(q))[1] == run(script(q))[1]
        tk, ts = [], []
        for _ in range(a.rounds):
            rk = rs = 0.0
            for q in qs:
                rk += run(knn(q))[0]
                rs += run(script(q))[0]
            tk.append(rk / len(qs))
            ts.append(rs / len(qs))
        mk, ms = statistics.median(tk), statistics.median(ts)
        print("docs %d dims %d queries %d rounds %d" % (a.docs, a.dims, a.queries, a.rounds))
        print("knn flat (exact)        %.2f ms/query" % (mk * 1e3))
        print("script_score cosine     %.2f ms/query" % (ms * 1e3))
        print("ratio script_score/knn  %.2f" % (ms / mk))
    finally:
        s.stop()


if __name__ == "__main__":
    main()
