#!/usr/bin/env python3
"""Measures master failover on one machine: a private etcd, three `scry serve --cluster` nodes,
then ROUNDS times: SIGKILL the master and time until every survivor's _cat/nodes shows another
master and no longer lists the killed node; restart it and wait until it has rejoined.
Usage: python3 bench/cluster_failover.py [--ttl 3s] [--rounds 5]   (SCRY_BIN picks the binary)"""
import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from conftest import Server  # noqa: E402
from test_cluster import Etcd, converged, free_port, wait_until  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ttl", default="3s")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="scry-failover-")
    etcd = Etcd(tmp).start()
    nodes = {n: Server(os.path.join(tmp, n), [
        "--cluster", "etcd=" + etcd.url, "--node-name", n, "--cluster-name", "bench",
        "--transport-port", str(free_port()), "--lease-ttl", a.ttl]).start()
        for n in ("n1", "n2", "n3")}
    times = []
    try:
        for r in range(a.rounds):
            master = wait_until("convergence", lambda: converged(nodes.values(), nodes.keys()))
            t0 = time.time()
            nodes[master].stop(signal.SIGKILL)
            rest = [n for n in nodes if n != master]
            new = wait_until("failover", lambda: converged([nodes[n] for n in rest], rest),
                             interval=0.02)
            dt = time.time() - t0
            times.append(dt)
            print("round %d: killed master %s, %s master after %.2fs" % (r + 1, master, new, dt))
            nodes[master].start()
    finally:
        for s in nodes.values():
            if s.alive():
                s.stop()
        etcd.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    print("lease TTL %s: failover median %.2fs, min %.2fs, max %.2fs over %d rounds" % (
        a.ttl, statistics.median(times), min(times), max(times), len(times)))


if __name__ == "__main__":
    main()
