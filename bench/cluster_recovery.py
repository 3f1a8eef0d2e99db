#!/usr/bin/env python3
"""Peer recovery of a new replica, this build against a baseline build side by side: for each
binary a private etcd and two `scry serve --cluster` nodes; an index of SHARDS shards and 0
replicas is bulk-loaded with DOCS documents through n1, then switched to 1 replica; measured is
the time until health is green and the CPU time (user + system, from /proc) both node processes
spent in that interval. Rounds alternate between the two binaries so that the machine's load
hits both alike. With this branch a copy of a shard with 1,000+ documents recovers by files (the
primary's segments); the baseline (before file-based recovery) sends every document as an
operation that the copy re-analyzes.
Usage: python3 bench/cluster_recovery.py --baseline PATH/TO/scry [--docs 30000] [--shards 2]
       [--rounds 3]   (SCRY_BIN picks this build's binary)"""
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

WORDS = ["quick", "brown", "fox", "lazy", "dog", "jumps", "over", "river", "stone", "light",
         "north", "quiet", "amber", "cedar", "delta", "ember"]
TICK = os.sysconf("SC_CLK_TCK")


def bulk(start, n):
    lines = []
    for i in range(start, start + n):
        lines.append(json.dumps({"index": {"_index": "rec", "_id": str(i)}}))
        lines.append(json.dumps({"title": " ".join(WORDS[(i * 7 + k * 5) % 16] for k in range(12)),
                                 "n": i, "tag": "t%d" % (i % 50)}))
    return "\n".join(lines) + "\n"


def cpu_s(pids):
    total = 0
    for pid in pids:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICK


def one_run(binary, docs, shards):
    os.environ["SCRY_BIN"] = binary
    tmp = tempfile.mkdtemp(prefix="scry-recbench-")
    etcd = Etcd(tmp).start()
    nodes = {n: Server(os.path.join(tmp, n), [
        "--cluster", "etcd=" + etcd.url, "--node-name", n, "--cluster-name", "bench",
        "--transport-port", str(free_port()), "--lease-ttl", "3s"]).start() for n in ("n1", "n2")}
    n1 = nodes["n1"]
    try:
        wait_until("2 nodes", lambda: n1.request(
            "GET", "/_cluster/health?wait_for_nodes=2&timeout=1s")[0] == 200)
        st, _, r = n1.request("PUT", "/rec", {"settings": {"number_of_shards": shards,
                                                           "number_of_replicas": 0}})
        assert st == 200, r
        for s in nodes.values():
            wait_until("index on every node", lambda s=s: s.request(
                "GET", "/_cluster/health/rec?wait_for_status=green&timeout=1s")[0] == 200 and
                s.request("HEAD", "/rec")[0] == 200, timeout=60)
        for k in range(0, docs, 1000):
            st, _, r = n1.request("POST", "/_bulk", bulk(k, min(1000, docs - k)),
                                  headers={"Content-Type": "application/x-ndjson"})
            assert st == 200 and not r["errors"], r
        assert n1.request("POST", "/rec/_refresh")[0] == 200
        pids = [s.proc.pid for s in nodes.values()]
        c0, t0 = cpu_s(pids), time.time()
        st, _, r = n1.request("PUT", "/rec/_settings", {"index": {"number_of_replicas": 1}})
        assert st == 200, r
        wait_until("green with the replicas", lambda: (lambda h: h["status"] == "green" and
                   h["active_shards"] == 2 * shards)(n1.request("GET", "/_cluster/health/rec")[2]),
                   timeout=600, interval=0.01)
        return time.time() - t0, cpu_s(pids) - c0
    finally:
        for s in nodes.values():
            s.stop()
        etcd.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--docs", type=int, default=30000)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    this = os.environ.get("SCRY_BIN") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "release", "scry")
    res = {"baseline": [], "this": []}
    for rnd in range(a.rounds):
        for name, binary in (("baseline", a.baseline), ("this", this)):
            wall, cpu = one_run(binary, a.docs, a.shards)
            res[name].append((wall, cpu))
            print("round %d %-8s green after %.2f s, %.2f s CPU" % (rnd, name, wall, cpu),
                  flush=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
           for k, v in res.items()}
    print("replicas 0 -> 1, %d docs in %d shards, median of %d: baseline %.2f s wall %.2f s CPU, "
          "this %.2f s wall %.2f s CPU; ratio this/baseline wall %.2f, CPU %.2f" % (
              a.docs, a.shards, a.rounds, med["baseline"][0], med["baseline"][1], med["this"][0],
              med["this"][1], med["this"][0] / med["baseline"][0],
              med["this"][1] / med["baseline"][1]))


if __name__ == "__main__":
    main()
