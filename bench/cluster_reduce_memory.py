#!/usr/bin/env python3
"""Reduce memory across nodes (issue 13 benchmark): a private etcd and three `scry serve
--cluster` nodes on this machine, http_logs-like data in 7 indices x 10 shards (0 replicas):
each document has a `clientip` (ip) drawn from a pool of distinct addresses (Zipf-like: a few
clients send most requests, most send a few), a `status`, a `size` and a `@timestamp`. The
search is a `terms` aggregation on `clientip` with size 1000 and shard_size 50000 over all
70 shards, from n1, with the cluster setting search.batched_query_phase true and false
(alternating rounds). Before each search every node's request-breaker peak is reset
(`_nodes/stats/breaker?reset_peak=true`); after it, each node's `peak_used_in_bytes` is read.
Reports the median peak per node and the coordinator's ratio batched / unbatched, plus the
median latency. Both modes must return the same buckets.
With --batched-reduce-size N, each mode also runs with `?batched_reduce_size=N` (the default is
512): the data nodes fold every N shard results and the coordinator every N answers (unbatched:
one per shard), and the peaks of the four runs are reported side by side.
Usage: python3 bench/cluster_reduce_memory.py [--docs 700000] [--ips 300000] [--searches 5]
       [--rounds 3] [--batched-reduce-size N] [--buckets-out FILE]   (SCRY_BIN picks the
       binary; use a release build; --buckets-out writes the buckets, to compare two builds)"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from conftest import Server  # noqa: E402
from test_cluster import Etcd, free_port, wait_until  # noqa: E402

N_INDICES = 7
MAPPING = {"properties": {"clientip": {"type": "ip"}, "status": {"type": "integer"},
                          "size": {"type": "long"}, "@timestamp": {"type": "date"}}}
BODY = {"size": 0, "aggs": {"ips": {"terms": {"field": "clientip", "size": 1000,
                                              "shard_size": 50000}}}}


def ip_of(k):
    return "%d.%d.%d.%d" % (10 + (k >> 24) % 200, (k >> 16) & 255, (k >> 8) & 255, k & 255)


def load(n1, n_docs, n_ips, seed):
    rng = random.Random(seed)
    for i in range(N_INDICES):
        st, _, r = n1.request("PUT", "/logs-%d" % i, {
            "settings": {"number_of_shards": 10, "number_of_replicas": 0}, "mappings": MAPPING})
        assert st == 200, r
    wait_until("green", lambda: n1.request(
        "GET", "/_cluster/health?wait_for_status=green&timeout=1s")[0] == 200, timeout=120)
    time.sleep(2)  # the mappings reach every node's copies
    per = n_docs // N_INDICES
    t0 = 1_400_000_000_000
    for i in range(N_INDICES):
        for start in range(0, per, 5000):
            lines = []
            for d in range(start, min(per, start + 5000)):
                # Zipf-like client skew: k = pool * u^3 puts most requests on few clients
                k = int(n_ips * rng.random() ** 3)
                lines.append('{"index":{}}')
                lines.append(json.dumps({"clientip": ip_of(k), "status": rng.choice(
                    (200, 200, 200, 304, 404, 500)), "size": rng.randrange(100, 50000),
                    "@timestamp": t0 + (i * per + d) * 1000}))
            st, _, r = n1.request("POST", "/logs-%d/_bulk" % i, "\n".join(lines) + "\n",
                                  headers={"Content-Type": "application/x-ndjson"})
            assert st == 200 and not r["errors"], str(r)[:500]
    for i in range(N_INDICES):
        st, _, r = n1.request("POST", "/logs-%d/_bulk?refresh=true" % i,
                              '{"index":{"_id":"x"}}\n{"status":200}\n',
                              headers={"Content-Type": "application/x-ndjson"})
        assert st == 200, r


def peaks(nodes, reset):
    out = {}
    for name, s in nodes.items():
        st, _, r = s.request("GET", "/_nodes/stats/breaker" + ("?reset_peak=true" if reset else ""))
        assert st == 200, r
        (stats,) = r["nodes"].values()
        out[name] = stats["breakers"]["request"]["peak_used_in_bytes"]
    return out


def one_search(nodes, coord, brs=None):
    peaks(nodes, True)
    t0 = time.perf_counter()
    params = "?batched_reduce_size=%d" % brs if brs else ""
    st, _, r = coord.request("POST", "/logs-*/_search" + params, BODY)
    ms = (time.perf_counter() - t0) * 1000
    assert st == 200 and r["_shards"]["failed"] == 0, json.dumps(r)[:1000]
    return ms, peaks(nodes, False), r["aggregations"]["ips"]["buckets"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=700000)
    ap.add_argument("--ips", type=int, default=300000)
    ap.add_argument("--searches", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--batched-reduce-size", type=int, default=0)
    ap.add_argument("--buckets-out", help="write the buckets (JSON) here, to compare builds")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="scry-reducemem-")
    etcd = Etcd(tmp).start()
    nodes = {n: Server(os.path.join(tmp, n), [
        "--cluster", "etcd=" + etcd.url, "--node-name", n, "--cluster-name", "bench",
        "--transport-port", str(free_port()), "--lease-ttl", "3s"]).start()
        for n in ("n1", "n2", "n3")}
    try:
        n1 = nodes["n1"]
        wait_until("3 nodes", lambda: n1.request(
            "GET", "/_cluster/health?wait_for_nodes=3&timeout=1s")[0] == 200)
        t0 = time.time()
        load(n1, a.docs, a.ips, a.seed)
        print("setup: %d docs in %d indices x 10 shards, %d client ips in the pool, %.1f s"
              % (a.docs, N_INDICES, a.ips, time.time() - t0))
        sizes = [None] + ([a.batched_reduce_size] if a.batched_reduce_size else [])
        modes = [(b, s) for b in (True, False) for s in sizes]
        res = {m: [] for m in modes}
        buckets = {}
        for _ in range(a.rounds):
            for batched in (True, False):
                st, _, r = n1.request("PUT", "/_cluster/settings", {
                    "transient": {"search.batched_query_phase": batched}})
                assert st == 200, r
                time.sleep(2.5)
                one_search(nodes, n1)  # warm-up
                for _ in range(a.searches):
                    for brs in sizes:  # side by side
                        ms, pk, b = one_search(nodes, n1, brs)
                        res[(batched, brs)].append((ms, pk))
                        buckets.setdefault((batched, brs), b)
        for m in modes:
            assert buckets[m] == buckets[modes[0]], "%s: the buckets differ" % (m,)
        if a.buckets_out:
            with open(a.buckets_out, "w") as f:
                json.dump(buckets[modes[0]], f)
        print("terms clientip size 1000 shard_size 50000 over 70 shards; %d searches/mode"
              % len(res[modes[0]]))
        med = {}
        for m in modes:
            lat = statistics.median(x[0] for x in res[m])
            med[m] = {n: statistics.median(x[1][n] for x in res[m]) for n in nodes}
            print("batched_query_phase=%-5s batched_reduce_size=%-4s median latency %.0f ms, "
                  "peak request breaker: %s" % (str(m[0]).lower(), m[1] or 512, lat, ", ".join(
                      "%s %.1f MB" % (n, med[m][n] / 1048576) for n in nodes)))
        print("coordinator (n1) peak batched / unbatched = %.3f"
              % (med[(True, None)]["n1"] / med[(False, None)]["n1"]))
        if a.batched_reduce_size:
            for b in (True, False):
                print("batched_query_phase=%s: coordinator (n1) peak batched_reduce_size %d / "
                      "default = %.3f" % (str(b).lower(), a.batched_reduce_size,
                                          med[(b, a.batched_reduce_size)]["n1"] /
                                          med[(b, None)]["n1"]))
    finally:
        # closing flushes every shard (~20 s for 1,000 on this machine, over 10 minutes for
        # 5,000): all nodes close at once, and a node that takes too long is killed
        for s in nodes.values():
            if s.alive():
                s.proc.send_signal(signal.SIGTERM)
        for s in nodes.values():
            try:
                s.stop(timeout=1800)
            except subprocess.TimeoutExpired:
                pass
        etcd.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
