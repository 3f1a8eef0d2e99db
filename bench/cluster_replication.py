#!/usr/bin/env python3
"""Measures the cost of replication on one machine: a private etcd and three `scry serve
--cluster` nodes; two indices of 6 shards side by side, `r0` (0 replicas) and `r1` (1 replica),
loaded with the same BATCH-document bulks through the same node, alternating bulk by bulk, ROUNDS
times (the ratio r1/r0 is the replication overhead on the write path); then a third index is loaded
with 0 replicas, switched to 1 replica, and the time until health is green is the peer recovery
of 6 copies of DOCS/6 documents each.
Usage: python3 bench/cluster_replication.py [--docs 20000] [--batch 500] [--rounds 3]
(SCRY_BIN picks the binary)"""
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


def bulk(index, start, n):
    lines = []
    for i in range(start, start + n):
        lines.append(json.dumps({"index": {"_index": index, "_id": str(i)}}))
        lines.append(json.dumps({"title": " ".join(WORDS[(i * 7 + k) % 10] for k in range(6)),
                                 "n": i}))
    return "\n".join(lines) + "\n"


def load(node, index, docs, batch):
    t0 = time.time()
    for k in range(0, docs, batch):
        st, _, r = node.request("POST", "/_bulk", bulk(index, k, min(batch, docs - k)),
                                headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], r
    return time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="scry-replbench-")
    etcd = Etcd(tmp).start()
    nodes = {n: Server(os.path.join(tmp, n), [
        "--cluster", "etcd=" + etcd.url, "--node-name", n, "--cluster-name", "bench",
        "--transport-port", str(free_port()), "--lease-ttl", "3s"]).start()
        for n in ("n1", "n2", "n3")}
    n1 = nodes["n1"]
    try:
        wait_until("3 nodes", lambda: n1.request(
            "GET", "/_cluster/health?wait_for_nodes=3&timeout=1s")[0] == 200)
        times = {"r0": [], "r1": []}
        for rnd in range(a.rounds):
            idx = {}
            for reps in (0, 1):
                idx[reps] = "r%d-%d" % (reps, rnd)
                st, _, r = n1.request("PUT", "/" + idx[reps], {"settings": {
                    "number_of_shards": 6, "number_of_replicas": reps}})
                assert st == 200, r
                for s in nodes.values():
                    wait_until("index on every node", lambda s=s, i=idx[reps]: s.request(
                        "GET", "/_cluster/health/%s?wait_for_status=green&timeout=1s" % i)[0]
                        == 200 and s.request("HEAD", "/" + i)[0] == 200, timeout=60)
            spent = {0: 0.0, 1: 0.0}
            for k in range(0, a.docs, a.batch):  # bulks alternate between the two indices
                for reps in (0, 1):
                    t0 = time.time()
                    st, _, r = n1.request("POST", "/_bulk", bulk(idx[reps], k, min(
                        a.batch, a.docs - k)), headers={"Content-Type": "application/x-ndjson"})
                    assert st == 200 and not r["errors"], r
                    spent[reps] += time.time() - t0
            times["r0"].append(spent[0])
            times["r1"].append(spent[1])
        r0, r1 = statistics.median(times["r0"]), statistics.median(times["r1"])
        print("bulk %d docs in %d-doc bulks through one node, bulks alternating between the two "
              "indices, median of %d: 0 replicas %.2f s (%.0f docs/s), 1 replica %.2f s "
              "(%.0f docs/s): ratio %.2f" % (a.docs, a.batch, a.rounds, r0, a.docs / r0, r1,
                                             a.docs / r1, r1 / r0))
        st, _, r = n1.request("PUT", "/rec", {"settings": {"number_of_shards": 6,
                                                           "number_of_replicas": 0}})
        for s in nodes.values():
            wait_until("index on every node", lambda s=s: s.request(
                "GET", "/_cluster/health/rec?wait_for_status=green&timeout=1s")[0] == 200 and
                s.request("HEAD", "/rec")[0] == 200, timeout=60)
        load(n1, "rec", a.docs, a.batch)
        t0 = time.time()
        st, _, r = n1.request("PUT", "/rec/_settings", {"index": {"number_of_replicas": 1}})
        assert st == 200, r
        wait_until("the replicas in the routing", lambda: n1.request(
            "GET", "/_cluster/health/rec")[2]["active_shards"] + n1.request(
            "GET", "/_cluster/health/rec")[2]["initializing_shards"] == 12, interval=0.01)
        st, _, h = n1.request("GET", "/_cluster/health/rec?wait_for_status=green&timeout=300s")
        assert st == 200 and h["status"] == "green", h
        print("replicas 0 -> 1 on %d docs (6 copies of ~%d docs recover): green after %.2f s" % (
            a.docs, a.docs // 6, time.time() - t0))
    finally:
        for s in nodes.values():
            s.stop()
        etcd.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
