#!/usr/bin/env python3
"""Scrolling a whole index across nodes (issue 13): a private etcd and three `scry serve
--cluster` nodes holding a 6-shard index (0 replicas), and a single node with the same index
and documents, side by side. Each round scrolls through every document once on each (pages of
--size, `match_all`, then the same with a sort on a numeric field), alternating which goes
first, and reports per full scan the median wall time and the CPU time of the server processes
(utime + stime from /proc: the three nodes together for the cluster, the one process for the
single node), and the cluster / single-node ratios.
Usage: python3 bench/cluster_scroll.py [--docs 20000] [--size 500] [--rounds 3]
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

WORDS = ["quick", "brown", "fox", "lazy", "dog", "jumps", "over", "river", "stone", "light"]


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(server, n_docs):
    for first in range(0, n_docs, 5000):
        lines = []
        for i in range(first, min(n_docs, first + 5000)):
            lines.append(json.dumps({"index": {"_index": "docs", "_id": str(i)}}))
            lines.append(json.dumps({"title": " ".join(WORDS[(i * 7 + k) % 10] for k in range(6)),
                                     "n": i}))
        st, _, r = server.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                                  headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], str(r)[:300]


def scan(coord, body, size):
    st, _, r = coord.request("POST", "/docs/_search?scroll=1m", dict(body, size=size))
    assert st == 200, r
    n, sid = 0, r["_scroll_id"]
    while r["hits"]["hits"]:
        n += len(r["hits"]["hits"])
        st, _, r = coord.request("POST", "/_search/scroll", {"scroll": "1m", "scroll_id": sid})
        assert st == 200, r
        sid = r["_scroll_id"]
    coord.request("DELETE", "/_search/scroll", {"scroll_id": sid})
    return n


def timed(coord, pids, body, size, n_docs):
    c0 = sum(cpu_seconds(p) for p in pids)
    t0 = time.perf_counter()
    n = scan(coord, body, size)
    wall = time.perf_counter() - t0
    assert n == n_docs, (n, n_docs)
    return wall, sum(cpu_seconds(p) for p in pids) - c0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--size", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="scry-bscroll-")
    etcd = Etcd(tmp).start()
    nodes = {}
    try:
        for name in ("n1", "n2", "n3"):
            nodes[name] = Server(os.path.join(tmp, name), [
                "--cluster", "etcd=" + etcd.url, "--node-name", name, "--cluster-name", "bs",
                "--transport-port", str(free_port())]).start()
        single = Server(os.path.join(tmp, "single")).start()
        n1 = nodes["n1"]
        wait_until("3 nodes", lambda: n1.request(
            "GET", "/_cluster/health?wait_for_nodes=3&timeout=1s")[0] == 200, timeout=60)
        body = {"settings": {"number_of_shards": 6, "number_of_replicas": 0},
                "mappings": {"properties": {"title": {"type": "text"}, "n": {"type": "long"}}}}
        for s in (n1, single):
            st, _, r = s.request("PUT", "/docs", body)
            assert st == 200, r
        for s in nodes.values():
            wait_until("green", lambda s=s: s.request(
                "GET", "/_cluster/health/docs?wait_for_status=green&timeout=1s")[0] == 200,
                timeout=60)
        load(n1, a.docs)
        load(single, a.docs)
        cpids = [s.proc.pid for s in nodes.values()]
        for label, q in (("match_all", {"query": {"match_all": {}}}),
                         ("sort n", {"query": {"match_all": {}}, "sort": [{"n": "asc"}]})):
            res = {"cluster": [], "single": []}
            for r in range(a.rounds):
                order = [("cluster", n1, cpids), ("single", single, [single.proc.pid])]
                if r % 2:
                    order.reverse()
                for name, coord, pids in order:
                    res[name].append(timed(coord, pids, q, a.size, a.docs))
            med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
                   for k, v in res.items()}
            print("%-9s %d docs, pages of %d: cluster %.2f s wall, %.2f s CPU; single node "
                  "%.2f s wall, %.2f s CPU; ratio wall %.2f, CPU %.2f" % (
                      label, a.docs, a.size, med["cluster"][0], med["cluster"][1],
                      med["single"][0], med["single"][1], med["cluster"][0] / med["single"][0],
                      med["cluster"][1] / max(med["single"][1], 1e-9)))
    finally:
        for s in nodes.values():
            if s.alive():
                s.stop()
        if "single" in locals() and single.alive():
            single.stop()
        etcd.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
