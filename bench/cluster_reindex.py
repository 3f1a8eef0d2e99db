#!/usr/bin/env python3
"""The cost of reindex and by-query jobs through the cluster (issue 13, "routing the rest"):
etcd + 3 clustered nodes and one single node side by side, the same documents in an index of 6
shards (0 replicas: on the cluster, two per node). Each round, alternating between the two:
  reindex   POST /_reindex src -> a new index of 6 shards (the cluster's reads a clustered
            scroll and writes routed _bulk pages, all through the receiving node);
  ubq-fan   POST /src/_update_by_query (waiting: the cluster sends it to every primary's node,
            each updates its own primaries);
  ubq-task  POST /src/_update_by_query?wait_for_completion=false, polled until it completes
            (the cluster's task reads and writes through the receiving node).
Reported per job: median wall time and CPU (user + system from /proc, summed over the nodes)
per 1,000 documents; then cluster / single node, and on the cluster ubq-task / ubq-fan.
Usage: python3 bench/cluster_reindex.py [--docs 50000] [--rounds 3]
       (SCRY_BIN picks the binary; use a release build)"""
import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from conftest import Server  # noqa: E402
from test_cluster import Etcd, free_port, wait_until  # noqa: E402

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]
SETTINGS = {"settings": {"number_of_shards": 6, "number_of_replicas": 0},
            "mappings": {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                                        "n": {"type": "long"}}}}


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ok(node, method, path, body=None, **kw):
    st, _, r = node.request(method, path, body, **kw)
    assert st == 200, (method, path, str(r)[:400])
    return r


def create(node, nodes, index):
    ok(node, "PUT", "/" + index, SETTINGS)
    for s in nodes:
        wait_until(index + " green", lambda s=s: s.request(
            "GET", "/_cluster/health/%s?wait_for_status=green&timeout=1s" % index)[0] == 200,
            timeout=60)


def load(node, nodes, docs):
    create(node, nodes, "src")
    rng = random.Random(7)
    for start in range(0, docs, 5000):
        lines = []
        for i in range(start, min(docs, start + 5000)):
            lines.append(json.dumps({"index": {"_id": str(i)}}))
            lines.append(json.dumps({"title": " ".join(rng.choice(WORDS) for _ in range(8)),
                                     "tag": "t%d" % rng.randrange(200), "n": i}))
        r = ok(node, "POST", "/src/_bulk", "\n".join(lines) + "\n",
               headers={"Content-Type": "application/x-ndjson"})
        assert not r["errors"], str(r)[:300]
    ok(node, "POST", "/src/_refresh")


def run(kind, node, nodes, rnd, docs):
    """One job; its wall time (s)."""
    t0 = time.perf_counter()
    if kind == "reindex":
        dst = "dst%d" % rnd
        create(node, nodes, dst)
        t0 = time.perf_counter()
        r = ok(node, "POST", "/_reindex", {"source": {"index": "src"}, "dest": {"index": dst}})
        assert r["created"] == docs and not r["failures"], str(r)[:300]
        t = time.perf_counter() - t0
        ok(node, "DELETE", "/" + dst)
        return t
    if kind == "ubq-fan":
        r = ok(node, "POST", "/src/_update_by_query?refresh=true", {"query": {"match_all": {}}})
        assert r["updated"] == docs, str(r)[:300]
        return time.perf_counter() - t0
    task = ok(node, "POST", "/src/_update_by_query?wait_for_completion=false&refresh=true",
              {"query": {"match_all": {}}})["task"]
    while True:
        b = ok(node, "GET", "/_tasks/" + task)
        if b["completed"]:
            break
        time.sleep(0.02)
    assert b["response"]["updated"] == docs, str(b)[:300]
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=50000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="scry-reindexbench-")
    etcd = Etcd(tmp).start()
    servers = []
    try:
        cl = []
        for n in ("n1", "n2", "n3"):
            cl.append(Server(os.path.join(tmp, n), [
                "--cluster", "etcd=" + etcd.url, "--node-name", n, "--cluster-name", "rb",
                "--transport-port", str(free_port()), "--lease-ttl", "10s"]).start())
        servers += cl
        wait_until("3 nodes", lambda: cl[0].request(
            "GET", "/_cluster/health?wait_for_nodes=3&timeout=1s")[0] == 200)
        single = Server(os.path.join(tmp, "single")).start()
        servers.append(single)
        setups = {"cluster": (cl[0], cl), "single": (single, [single])}
        for node, nodes in setups.values():
            load(node, nodes, a.docs)
        kinds = ("reindex", "ubq-fan", "ubq-task")
        wall = {(s, k): [] for s in setups for k in kinds}
        cpu = {(s, k): [] for s in setups for k in kinds}
        for rnd in range(a.rounds + 1):  # round 0 warms up
            for k in kinds:
                for s, (node, nodes) in setups.items():
                    pids = [x.proc.pid for x in nodes]
                    c0 = sum(cpu_s(p) for p in pids)
                    t = run(k, node, nodes, rnd, a.docs)
                    c = sum(cpu_s(p) for p in pids) - c0
                    if rnd:
                        wall[(s, k)].append(t)
                        cpu[(s, k)].append(c)
        per_k = a.docs / 1000.0
        print("%d docs, 6 shards (0 replicas); 3 clustered nodes vs 1 node; %d rounds"
              % (a.docs, a.rounds))
        print("| job | single: wall s | single: CPU ms / 1k docs | cluster: wall s | "
              "cluster: CPU ms / 1k docs | wall ratio | CPU ratio |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        med = {}
        for k in kinds:
            for s in setups:
                med[(s, k)] = (statistics.median(wall[(s, k)]),
                               statistics.median(cpu[(s, k)]) * 1000 / per_k)
            sw, sc = med[("single", k)]
            cw, cc = med[("cluster", k)]
            print("| %s | %.2f | %.1f | %.2f | %.1f | %.2f | %.2f |"
                  % (k, sw, sc, cw, cc, cw / sw, cc / sc))
        fw, fc = med[("cluster", "ubq-fan")]
        tw, tc = med[("cluster", "ubq-task")]
        print("cluster ubq-task / ubq-fan: wall %.2f, CPU %.2f" % (tw / fw, tc / fc))
    finally:
        for s in servers:
            if s.alive():
                s.stop()
        etcd.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
