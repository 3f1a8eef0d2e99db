#!/usr/bin/env python3
"""Query-phase features across nodes (issues 13/14/16 benchmark): a private etcd, three
`scry serve --cluster` nodes and a single node on this machine, one index of 6 shards (0
replicas) with the same DOCS documents on both (text, keyword, integer and a DIMS-dim
dense_vector). For each feature (a plain match as the baseline, kNN-only, hybrid kNN + query
with its global kNN phase, RRF, rescore, collapse, profile) it runs SEARCHES searches per round
on the cluster (coordinator n1) and on the single node, alternating, and reports the median
latency of each and the CPU per search: the single node's, and the cluster's summed over its
three processes (utime + stime from /proc). The ratios cluster / single say what running the
feature across nodes costs over one node; compare them with the plain match's.
Usage: python3 bench/cluster_query_features.py [--docs 20000] [--searches 40] [--rounds 3]
       (SCRY_BIN picks the binary; a release build measures the engine, debug the logic)"""
import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from conftest import Server  # noqa: E402
from test_cluster import Etcd, free_port, wait_until  # noqa: E402

DIMS = 32
WORDS = ["quick", "brown", "fox", "lazy", "dog", "jumps", "over", "river", "stone", "light",
         "north", "field", "cloud", "green", "paper", "window"]


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(servers, n_docs, seed):
    rnd = random.Random(seed)
    mapping = {"properties": {
        "title": {"type": "text"}, "tag": {"type": "keyword"}, "grp": {"type": "integer"},
        "v": {"type": "dense_vector", "dims": DIMS, "similarity": "l2_norm"}}}
    for s in servers:
        st, _, r = s.request("PUT", "/docs", {
            "settings": {"number_of_shards": 6, "number_of_replicas": 0,
                         "refresh_interval": "-1"}, "mappings": mapping})
        assert st == 200, r
    for s in servers:
        wait_until("green on " + s.url, lambda s=s: s.request(
            "GET", "/_cluster/health/docs?wait_for_status=green&timeout=1s")[0] == 200)
    step = 2000
    for first in range(0, n_docs, step):
        lines = []
        for i in range(first, min(n_docs, first + step)):
            words = [rnd.choice(WORDS) for _ in range(3 + rnd.randrange(8))]
            lines.append(json.dumps({"index": {"_id": str(i)}}))
            lines.append(json.dumps({
                "title": " ".join(words), "tag": "t%d" % rnd.randrange(50),
                "grp": rnd.randrange(200),
                "v": [round(rnd.uniform(-1, 1), 4) for _ in range(DIMS)]}))
        body = "\n".join(lines) + "\n"
        for s in servers:
            st, _, r = s.request("POST", "/docs/_bulk", body,
                                 headers={"Content-Type": "application/x-ndjson"})
            assert st == 200 and not r["errors"], str(r)[:500]
    for s in servers:
        st, _, r = s.request("POST", "/docs/_refresh")
        assert st == 200, r


def features(seed):
    rnd = random.Random(seed + 1)
    qv = [round(rnd.uniform(-1, 1), 4) for _ in range(DIMS)]
    knn = {"field": "v", "query_vector": qv, "k": 10, "num_candidates": 100}
    match = {"match": {"title": "fox river"}}
    return [
        ("match (baseline)", {"query": match, "size": 10}),
        ("knn only", {"knn": knn, "size": 10}),
        ("hybrid knn + match", {"query": match, "knn": knn, "size": 10}),
        ("rrf match + knn", {"query": match, "knn": knn, "size": 10, "rank": {"rrf": {}}}),
        ("rescore (window 50)", {"query": match, "size": 10, "rescore": {
            "window_size": 50, "query": {"rescore_query": {"match_phrase": {
                "title": "quick brown"}}}}}),
        ("collapse on tag", {"query": match, "size": 10, "collapse": {"field": "tag"}}),
        ("profile", {"query": match, "size": 10, "profile": True}),
    ]


def measure(server, pids, body, n):
    lat = []
    c0 = sum(cpu_seconds(p) for p in pids)
    for _ in range(n):
        t0 = time.perf_counter()
        st, _, r = server.request("POST", "/docs/_search", body)
        lat.append((time.perf_counter() - t0) * 1000)
        assert st == 200 and r["_shards"]["failed"] == 0, json.dumps(r)[:1000]
    return statistics.median(lat), (sum(cpu_seconds(p) for p in pids) - c0) * 1000 / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--searches", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    print("seed", a.seed, flush=True)
    tmp = tempfile.mkdtemp(prefix="scry-cqf-bench-")
    etcd = Etcd(tmp).start()
    nodes = {n: Server(os.path.join(tmp, n), [
        "--cluster", "etcd=" + etcd.url, "--node-name", n, "--cluster-name", "bench",
        "--transport-port", str(free_port()), "--lease-ttl", "3s"]).start()
        for n in ("n1", "n2", "n3")}
    single = Server(os.path.join(tmp, "single")).start()
    try:
        wait_until("3 nodes", lambda: nodes["n1"].request(
            "GET", "/_cluster/health?wait_for_nodes=3&timeout=1s")[0] == 200)
        t0 = time.time()
        load([nodes["n1"], single], a.docs, a.seed)
        print("loaded %d docs into both in %.1f s" % (a.docs, time.time() - t0), flush=True)
        cpids = [s.proc.pid for s in nodes.values()]
        res = {}
        for name, body in features(a.seed):
            for side in ("single", "cluster"):
                res[(name, side)] = []
        for _ in range(a.rounds):
            for name, body in features(a.seed):
                for side, srv, pids in (("single", single, [single.proc.pid]),
                                        ("cluster", nodes["n1"], cpids)):
                    measure(srv, pids, body, 3)  # warm-up
                    res[(name, side)].append(measure(srv, pids, body, a.searches))
        print("docs=%d shards=6 searches/round=%d rounds=%d" % (a.docs, a.searches, a.rounds))
        print("| feature | single latency | cluster latency | ratio | single CPU | "
              "cluster CPU (3 nodes) | CPU ratio |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for name, _ in features(a.seed):
            sl = statistics.median(x[0] for x in res[(name, "single")])
            sc = statistics.median(x[1] for x in res[(name, "single")])
            cl = statistics.median(x[0] for x in res[(name, "cluster")])
            cc = statistics.median(x[1] for x in res[(name, "cluster")])
            print("| %s | %.2f ms | %.2f ms | %.2fx | %.2f ms | %.2f ms | %.2fx |"
                  % (name, sl, cl, cl / sl if sl else 0, sc, cc, cc / sc if sc else 0))
    finally:
        for s in list(nodes.values()) + [single]:
            if s.alive():
                s.proc.send_signal(signal.SIGTERM)
        for s in list(nodes.values()) + [single]:
            try:
                s.stop(timeout=300)
            except subprocess.TimeoutExpired:
                pass
        etcd.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
