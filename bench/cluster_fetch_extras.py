#!/usr/bin/env python3
"""The fetch-phase features across nodes (issue 14 benchmark): a private etcd, three `scry serve
--cluster` nodes and a single node on this machine, one index of 6 shards (0 replicas) with
DOCS text documents on each. The same top-10 `match` search runs plain and with the fetch-phase
extras (highlight of two fields, a named query, version + seq_no_primary_term, explain), in
alternating rounds, from the cluster's n1 (4 of 6 shards remote: their hits' extras are computed
on the data nodes and shipped in the fetch response) and from the single node. Reports the
median latency and the coordinator's CPU per search (utime + stime from /proc), and the ratio
extras / plain on each side: what crossing nodes adds to the extras' cost.
Usage: python3 bench/cluster_fetch_extras.py [--docs 3000] [--searches 100] [--rounds 3]
       (SCRY_BIN picks the binary; a release build measures the engine, debug the logic)"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from conftest import Server  # noqa: E402
from test_cluster import Etcd, free_port, wait_until  # noqa: E402
from cluster_many_shards import cpu_seconds  # noqa: E402

WORDS = ("quick brown fox lazy dog jumps over river stone light green hill wind cloud rain "
         "field road town market bridge").split()
PLAIN = {"query": {"bool": {"should": [{"match": {"body": "river stone"}},
                                       {"match": {"title": {"query": "fox", "_name": "t"}}}]}},
         "size": 10}
EXTRAS = dict(PLAIN, highlight={"fields": {"body": {}, "title": {}}}, version=True,
              seq_no_primary_term=True, explain=True)


def load(server, n_docs):
    lines = []
    for i in range(n_docs):
        body = " ".join(WORDS[(i * 7 + k * 13) % len(WORDS)] for k in range(40 + i % 30))
        title = " ".join(WORDS[(i + k * 3) % len(WORDS)] for k in range(1 + i % 6))
        lines.append(json.dumps({"index": {"_index": "fx", "_id": str(i)}}))
        lines.append(json.dumps({"title": title, "body": body}))
    st, _, r = server.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not r["errors"], str(r)[:500]


def measure(server, body, n, all_nodes):
    lat = []
    c0 = cpu_seconds(server.proc.pid)
    a0 = sum(cpu_seconds(s.proc.pid) for s in all_nodes)
    for _ in range(n):
        t0 = time.perf_counter()
        st, _, r = server.request("POST", "/fx/_search", body)
        lat.append(time.perf_counter() - t0)
        assert st == 200 and r["_shards"]["failed"] == 0 and len(r["hits"]["hits"]) == 10, r
    a1 = sum(cpu_seconds(s.proc.pid) for s in all_nodes)
    return (statistics.median(lat) * 1e3, (cpu_seconds(server.proc.pid) - c0) / n * 1e3,
            (a1 - a0) / n * 1e3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--searches", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="scry-bench-cfetch-")
    etcd = Etcd(tmp).start()
    nodes, single = {}, None
    try:
        for name in ("n1", "n2", "n3"):
            nodes[name] = Server(os.path.join(tmp, name), [
                "--cluster", "etcd=" + etcd.url, "--node-name", name, "--cluster-name", "bf",
                "--transport-port", str(free_port()), "--lease-ttl", "10"]).start()
        single = Server(os.path.join(tmp, "single")).start()
        n1 = nodes["n1"]
        wait_until("3 nodes", lambda: n1.request(
            "GET", "/_cluster/health?wait_for_nodes=3&timeout=1s")[0] == 200)
        body = {"settings": {"number_of_shards": 6, "number_of_replicas": 0},
                "mappings": {"properties": {"title": {"type": "text"},
                                            "body": {"type": "text"}}}}
        for s in (n1, single):
            st, _, r = s.request("PUT", "/fx", body)
            assert st == 200, r
        for s in nodes.values():
            wait_until("green on " + s.url, lambda s=s: s.request(
                "GET", "/_cluster/health/fx?wait_for_status=green&timeout=1s")[0] == 200)
        load(n1, a.docs)
        load(single, a.docs)
        res = {}
        sides = (("cluster", n1, list(nodes.values())), ("single", single, [single]))
        for side, srv, every in sides:
            for kind, q in (("plain", PLAIN), ("extras", EXTRAS)):
                measure(srv, q, 5, every)  # warm
        for _ in range(a.rounds):
            for side, srv, every in sides:
                for kind, q in (("plain", PLAIN), ("extras", EXTRAS)):
                    res.setdefault((side, kind), []).append(measure(srv, q, a.searches, every))
        for side, _, _ in sides:
            p = [statistics.median(x[i] for x in res[(side, "plain")]) for i in (0, 1, 2)]
            e = [statistics.median(x[i] for x in res[(side, "extras")]) for i in (0, 1, 2)]
            print("%-7s plain %.2f ms (coordinator cpu %.2f, all nodes %.2f ms)  extras %.2f ms "
                  "(%.2f, %.2f ms)  ratio extras/plain: latency %.2f, all nodes' cpu %.2f"
                  % (side, p[0], p[1], p[2], e[0], e[1], e[2], e[0] / p[0], e[2] / p[2]))
    finally:
        for s in list(nodes.values()) + [single]:
            if s and s.alive():
                s.stop()
        etcd.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
