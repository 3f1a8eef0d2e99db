#!/usr/bin/env python3
"""The cost of TLS on the transport (issue 13, "Transport"): two 2-node clusters side by side on
one etcd (cluster names `plain` and `tls`), the second with mutual TLS between its nodes
(`--transport-tls-*`, certificates made here with the `openssl` command line). Each gets the
same documents in an index of 8 shards (0 replicas: half of them on the other node, so every
search crosses the transport), and the same searches alternate between the two coordinators
(n1 of each): a batched query phase (one request to the other node) with a `match` query, a
`terms` aggregation and 10 hits to fetch (a second request). Reported per cluster: the median
latency, and the CPU time (user + system, /proc) of both nodes per search; then TLS / plain.
Usage: python3 bench/cluster_tls.py [--docs 50000] [--searches 400] [--rounds 3]
       (SCRY_BIN picks the binary; use a release build)"""
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
from test_cluster_tls import make_ca, make_cert, tls_args  # noqa: E402

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_cluster(tmp, etcd, name, extra):
    nodes = {}
    for n in ("n1", "n2"):
        nodes[n] = Server(os.path.join(tmp, name + "-" + n), [
            "--cluster", "etcd=" + etcd.url, "--node-name", n, "--cluster-name", name,
            "--transport-port", str(free_port()), "--lease-ttl", "5s"] + extra).start()
    wait_until(name + " 2 nodes", lambda: nodes["n1"].request(
        "GET", "/_cluster/health?wait_for_nodes=2&timeout=1s")[0] == 200)
    return nodes


def load(n1, docs, seed):
    st, _, r = n1.request("PUT", "/b", {
        "settings": {"number_of_shards": 8, "number_of_replicas": 0},
        "mappings": {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                                    "n": {"type": "long"}}}})
    assert st == 200, r
    wait_until("green", lambda: n1.request(
        "GET", "/_cluster/health/b?wait_for_status=green&timeout=1s")[0] == 200, timeout=60)
    time.sleep(1)
    rng = random.Random(seed)
    for start in range(0, docs, 5000):
        lines = []
        for i in range(start, min(docs, start + 5000)):
            lines.append(json.dumps({"index": {"_id": str(i)}}))
            lines.append(json.dumps({"title": " ".join(rng.choice(WORDS) for _ in range(8)),
                                     "tag": "t%d" % rng.randrange(200), "n": i}))
        st, _, r = n1.request("POST", "/b/_bulk", "\n".join(lines) + "\n",
                              headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], str(r)[:300]
    st, _, r = n1.request("POST", "/b/_refresh")
    assert st == 200, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=50000)
    ap.add_argument("--searches", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="scry-tlsbench-")
    certs = os.path.join(tmp, "certs")
    os.mkdir(certs)
    make_ca(certs, "ca")
    make_cert(certs, "node", "ca")
    etcd = Etcd(tmp).start()
    clusters = {}
    try:
        clusters["plain"] = start_cluster(tmp, etcd, "plain", [])
        clusters["tls"] = start_cluster(tmp, etcd, "tls", tls_args(certs, "node", "ca"))
        for c in clusters.values():
            load(c["n1"], a.docs, 7)
        rng = random.Random(1)
        bodies = [{"query": {"match": {"title": "%s %s" % (rng.choice(WORDS), rng.choice(WORDS))}},
                   "size": 10, "aggs": {"tags": {"terms": {"field": "tag", "size": 5}}}}
                  for _ in range(50)]
        lat = {k: [] for k in clusters}
        cpu = {k: [] for k in clusters}
        answers = {}
        for rnd in range(a.rounds + 1):  # round 0 warms up
            for k, c in clusters.items():
                pids = [c[n].proc.pid for n in c]
                c0 = sum(cpu_s(p) for p in pids)
                for i in range(a.searches):
                    t0 = time.perf_counter()
                    st, _, r = c["n1"].request("POST", "/b/_search", bodies[i % len(bodies)])
                    ms = (time.perf_counter() - t0) * 1000
                    assert st == 200 and r["_shards"]["successful"] == 8, str(r)[:300]
                    if rnd:
                        lat[k].append(ms)
                    # totals and scores (equal scores may rank in another order: the clusters'
                    # segments differ)
                    answers.setdefault((k, i % len(bodies)), (r["hits"]["total"]["value"], [
                        round(h["_score"], 4) for h in r["hits"]["hits"]]))
                if rnd:
                    cpu[k].append((sum(cpu_s(p) for p in pids) - c0) * 1000 / a.searches)
        for i in range(len(bodies)):
            assert answers[("plain", i)] == answers[("tls", i)], "the clusters answer differently"
        print("%d docs, index of 8 shards on 2 nodes; %d searches x %d rounds per cluster"
              % (a.docs, a.searches, a.rounds))
        med = {}
        for k in clusters:
            med[k] = (statistics.median(lat[k]), statistics.median(cpu[k]))
            print("%-5s median latency %.2f ms, CPU of both nodes %.2f ms per search"
                  % (k, med[k][0], med[k][1]))
        print("TLS / plain: latency %.3f, CPU %.3f" % (med["tls"][0] / med["plain"][0],
                                                      med["tls"][1] / med["plain"][1]))
    finally:
        for c in clusters.values():
            for s in c.values():
                if s.alive():
                    s.stop()
        etcd.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
