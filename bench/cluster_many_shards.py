#!/usr/bin/env python3
"""Many-shards search across nodes (issue 13 benchmark, first increment): a private etcd and
three `scry serve --cluster` nodes on this machine, INDICES indices of 10 shards (0 replicas)
with a few docs each, then `match_all` with `size: 0` over all of them from one coordinator,
with the cluster setting search.batched_query_phase true and false (alternating rounds).
Reports the median latency and the coordinator's CPU per search (utime + stime of its process
from /proc, so it includes its HTTP handling and its own local shards' query phase).
Also reports each node's resident memory before and after the setup (the difference per local
shard copy: the memory an idle shard costs), its thread count, and how long the nodes take to
stop (SIGTERM until exit).
Usage: python3 bench/cluster_many_shards.py [--indices 100] [--searches 50] [--rounds 3]
       (SCRY_BIN picks the binary; a release build measures the engine, debug the logic)"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import statistics
import sys
import tempfile
import time

import urllib3

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from conftest import Server  # noqa: E402
from test_cluster import Etcd, free_port, wait_until  # noqa: E402


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status(pid):
    """(resident KiB, anonymous resident KiB, threads) of a process from /proc/<pid>/status:
    the file-backed rest is mapped segment pages, which the kernel can drop."""
    rss = anon = threads = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("RssAnon:"):
                anon = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, anon, threads


def name(i):
    return "ix%04d" % i


def setup(nodes, n_indices):
    n1 = nodes["n1"]
    for i in range(n_indices):
        st, _, r = n1.request("PUT", "/" + name(i), {
            "settings": {"number_of_shards": 10, "number_of_replicas": 0},
            "mappings": {"properties": {"n": {"type": "long"}}}})
        assert st == 200, r
    for s in nodes.values():
        wait_until("green on " + s.url, lambda s=s: s.request(
            "GET", "/_cluster/health?wait_for_status=green&timeout=1s")[0] == 200, timeout=300)
    # in slices of 50 indices: one bulk refreshing thousands of shards outlasts the client's
    # 30 s timeout on a loaded machine
    for first in range(0, n_indices, 50):
        lines = []
        for i in range(first, min(n_indices, first + 50)):
            for d in range(5):
                lines.append(json.dumps({"index": {"_index": name(i), "_id": str(d)}}))
                lines.append(json.dumps({"n": d}))
        st, _, r = n1.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                              headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], str(r)[:500]


def measure(coord, n_searches, want_shards):
    lat = []
    c0 = cpu_seconds(coord.proc.pid)
    for _ in range(n_searches):
        t0 = time.perf_counter()
        st, _, r = coord.request("POST", "/ix*/_search", {"query": {"match_all": {}}, "size": 0})
        lat.append((time.perf_counter() - t0) * 1000)
        assert st == 200 and r["_shards"]["successful"] == want_shards, json.dumps(
            r.get("_shards", r))[:1500]
    return statistics.median(lat), (cpu_seconds(coord.proc.pid) - c0) * 1000 / n_searches


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--indices", type=int, default=100)
    ap.add_argument("--searches", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="client timeout per request in seconds")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="scry-manyshards-")
    etcd = Etcd(tmp).start()
    nodes = {n: Server(os.path.join(tmp, n), [
        "--cluster", "etcd=" + etcd.url, "--node-name", n, "--cluster-name", "bench",
        "--transport-port", str(free_port()), "--lease-ttl", "3s"]).start()
        for n in ("n1", "n2", "n3")}
    for s in nodes.values():
        s.http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(a.timeout))
    try:
        wait_until("3 nodes", lambda: nodes["n1"].request(
            "GET", "/_cluster/health?wait_for_nodes=3&timeout=1s")[0] == 200)
        time.sleep(2)
        before = {n: proc_status(s.proc.pid) for n, s in nodes.items()}
        t0 = time.time()
        setup(nodes, a.indices)
        print("setup: %d indices x 10 shards in %.1f s" % (a.indices, time.time() - t0),
              flush=True)
        time.sleep(5)  # refresh/flush of the new shards settle
        st, _, rows = nodes["n1"].request("GET", "/_cat/shards?format=json&h=node")
        per_node = {}
        for row in rows:
            per_node[row["node"]] = per_node.get(row["node"], 0) + 1
        for n, s in nodes.items():
            rss, anon, threads = proc_status(s.proc.pid)
            k = per_node.get(n, 0) or 1
            print("node %s: %d shard copies, RSS %.1f -> %.1f MiB (%.1f KiB per copy; anonymous "
                  "%.1f KiB per copy), %d threads"
                  % (n, per_node.get(n, 0), before[n][0] / 1024, rss / 1024,
                     (rss - before[n][0]) / k, (anon - before[n][1]) / k, threads), flush=True)
        coord = nodes["n1"]
        res = {True: [], False: []}
        for _ in range(a.rounds):
            for batched in (True, False):
                st, _, r = coord.request("PUT", "/_cluster/settings", {
                    "transient": {"search.batched_query_phase": batched}})
                assert st == 200, r
                time.sleep(2.5)
                measure(coord, a.warmup, a.indices * 10)  # warm-up
                res[batched].append(measure(coord, a.searches, a.indices * 10))
                print("round: batched_query_phase=%-5s median latency %.1f ms, coordinator CPU "
                      "%.1f ms/search" % (str(batched).lower(), *res[batched][-1]), flush=True)
        print("shards=%d searches/round=%d rounds=%d" % (a.indices * 10, a.searches, a.rounds))
        for batched in (True, False):
            lat = statistics.median(x[0] for x in res[batched])
            cpu = statistics.median(x[1] for x in res[batched])
            print("batched_query_phase=%-5s median latency %.1f ms, coordinator CPU %.1f ms/search"
                  % (str(batched).lower(), lat, cpu))
    finally:
        # closing flushes the shards with changes (in parallel; idle ones write nothing): all
        # nodes close at once, and a node that takes too long is killed
        t0 = time.time()
        for s in nodes.values():
            if s.alive():
                s.proc.send_signal(signal.SIGTERM)
        for s in nodes.values():
            try:
                s.stop(timeout=1800)
            except subprocess.TimeoutExpired:
                pass
        print("stop: every node exited %.1f s after SIGTERM" % (time.time() - t0))
        etcd.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
