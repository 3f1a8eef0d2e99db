#!/usr/bin/python3
"""kNN over HTTP at scale (issue 16; a benchmark, not a test): loads BASE.fvecs through _bulk
into one `scry serve` (a release build: $SCRY_BIN, default build/release/scry), index `vec`
with one shard, a dense_vector field `v` (l2_norm, int8_hnsw by default, M 16,
ef_construction 100), refreshes and force-merges it to one segment, then sends every query of
QUERY.fvecs as a top-level `knn` search (k 10, size 10, `_source: false`) for each
num_candidates over one keep-alive HTTP connection, one request at a time. Reports per
num_candidates the latency p50 / p99 / mean (wall clock at the client: request sent to
response read), the server's `took`, the server process's CPU time per query (all its
threads: HTTP, JSON, search; on a shared machine the wall times include waiting for a core,
the CPU time does not) and recall@10 against brute force (numpy). Loading
reports the wall and server CPU seconds of the bulk, refresh and force merge, the segment
count before the merge and the server's peak RSS.

    SCRY_BIN=build/release/scry /usr/bin/python3 bench/knn_http.py BASE.fvecs QUERY.fvecs \\
        [--data DIR] [--nc 10,40,100,200,500] [--type int8_hnsw]

With --data DIR the server's data folder is kept: a later run against the same folder (and
the same BASE) skips the loading and only measures the searches.
"""
import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
os.environ.setdefault("SCRY_BIN", os.path.join(ROOT, "build", "release", "scry"))
from conftest import Server  # noqa: E402
from knn_compare import fvecs, recall, truth  # noqa: E402


class Conn:
    """One keep-alive HTTP/1.1 connection, no timeout (a force merge of 1M vectors is long)."""

    def __init__(self, port):
        self.c = http.client.HTTPConnection("127.0.0.1", port)

    def req(self, method, path, body=None, ctype="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.c.request(method, path, body=body, headers={"Content-Type": ctype} if body else {})
        r = self.c.getresponse()
        data = r.read()
        return r.status, data


def proc_cpu(pid):
    """User + system CPU seconds of a process (all its threads)."""
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def rss_mb(pid):
    """(RssAnon, RssFile) in MB."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("RssAnon:", "RssFile:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024.0
    return out.get("RssAnon", 0.0), out.get("RssFile", 0.0)


def phase(srv, what, fn):
    """Runs fn, printing its wall and server CPU time, the server's VmHWM so far and the
    largest RssAnon / RssFile seen while it ran (sampled every 50 ms: VmHWM counts the mapped
    segment files' resident pages too, RssAnon is the heap)."""
    pid = srv.proc.pid
    c0, t0 = proc_cpu(pid), time.monotonic()
    peak = [0.0, 0.0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            for i, v in enumerate(rss_mb(pid)):
                peak[i] = max(peak[i], v)
            done.wait(0.05)

    th = threading.Thread(target=sample)
    th.start()
    try:
        out = fn()
    finally:
        done.set()
        th.join()
    print("%-12s wall %7.1f s  server cpu %7.1f s  VmHWM so far %6.0f MB  peak RssAnon %6.0f MB"
          "  peak RssFile %6.0f MB" % (what, time.monotonic() - t0, proc_cpu(pid) - c0,
                                       peak_rss_mb(pid), peak[0], peak[1]))
    sys.stdout.flush()
    return out


def load(srv, conn, b, a):
    st, data = conn.req("PUT", "/vec", {
        "settings": {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1"},
        "mappings": {"properties": {"v": {
            "type": "dense_vector", "dims": int(b.shape[1]), "similarity": "l2_norm",
            "index_options": {"type": a.type, "m": a.m, "ef_construction": a.efc}}}}})
    assert st == 200, data
    # %.9g gives back the exact float32: the server indexes the same vectors as the oracle
    fmt = '{"index":{"_id":"%d"}}\n{"v":[' + ",".join(["%.9g"] * b.shape[1]) + "]}\n"

    def bulk():
        for s in range(0, len(b), a.batch):
            body = "".join(fmt % ((s + i,) + tuple(row))
                           for i, row in enumerate(b[s:s + a.batch].tolist()))
            st, data = conn.req("POST", "/vec/_bulk", body.encode(), "application/x-ndjson")
            assert st == 200 and b'"errors":false' in data[:200], data[:500]

    phase(srv, "bulk", bulk)
    phase(srv, "refresh", lambda: conn.req("POST", "/vec/_refresh"))
    print("segments before the merge: %d" % n_segments(conn))
    st, data = phase(srv, "forcemerge",
                     lambda: conn.req("POST", "/vec/_forcemerge?max_num_segments=1"))
    assert st == 200, data
    phase(srv, "flush", lambda: conn.req("POST", "/vec/_flush"))


def n_segments(conn):
    st, data = conn.req("GET", "/vec/_segments")
    assert st == 200, data
    shards = json.loads(data)["indices"]["vec"]["shards"]
    return sum(len(copy["segments"]) for copies in shards.values() for copy in copies)


def count(conn):
    st, data = conn.req("GET", "/vec/_count")
    return json.loads(data)["count"] if st == 200 else -1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("query")
    ap.add_argument("--data", help="keep the server's data here (reused when already loaded)")
    ap.add_argument("--type", default="int8_hnsw")
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--efc", type=int, default=100)
    ap.add_argument("--nc", default="10,40,100,200,500")
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--load-only", action="store_true", help="stop after loading (memory runs)")
    a = ap.parse_args()
    b, q = fvecs(a.base), fvecs(a.query)
    data_dir = os.path.abspath(a.data) if a.data else os.path.join(
        tempfile.mkdtemp(prefix="scry-knnhttp-"), "data")
    os.makedirs(os.path.dirname(data_dir), exist_ok=True)
    srv = Server(data_dir).start()
    try:
        conn = Conn(srv.port)
        print("%d x %d vectors, %d queries, l2_norm, %s, M %d, ef_construction %d, server %s"
              % (len(b), b.shape[1], len(q), a.type, a.m, a.efc, os.environ["SCRY_BIN"]))
        if count(conn) != len(b):
            if count(conn) >= 0:
                conn.req("DELETE", "/vec")
            load(srv, conn, b, a)
        print("segments: %d, docs: %d, server peak RSS %.0f MB" % (n_segments(conn), count(conn),
                                                                    peak_rss_mb(srv.proc.pid)))
        if a.load_only:
            return
        gt = truth(b, q, "l2")
        qtext = [",".join("%.9g" % x for x in row) for row in q.tolist()]

        def body(i, nc):
            return ('{"knn":{"field":"v","query_vector":[%s],"k":10,"num_candidates":%d},'
                    '"size":10,"_source":false}' % (qtext[i], nc)).encode()

        for i in range(min(a.warmup, len(q))):  # pages the segment in
            conn.req("POST", "/vec/_search", body(i, 100))
        print()
        print("| num_candidates | recall@10 | p50 ms | p99 ms | mean ms | server took p50 ms "
              "| server CPU ms / query |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for nc in [int(x) for x in a.nc.split(",")]:
            reqs = [body(i, nc) for i in range(len(q))]
            lat, took, got = [], [], []
            c0 = proc_cpu(srv.proc.pid)
            for r in reqs:
                t = time.perf_counter()
                st, data = conn.req("POST", "/vec/_search", r)
                lat.append(time.perf_counter() - t)
                assert st == 200, data
                res = json.loads(data)
                took.append(res["took"])
                ids = [int(h["_id"]) for h in res["hits"]["hits"]]
                got.append(ids + [-1] * (10 - len(ids)))
            cpu = proc_cpu(srv.proc.pid) - c0
            lat.sort()
            print("| %d | %.3f | %.3f | %.3f | %.3f | %.0f | %.3f |" % (
                nc, recall(np.array(got), gt), 1e3 * lat[len(lat) // 2],
                1e3 * lat[min(len(lat) - 1, int(len(lat) * 0.99))], 1e3 * statistics.mean(lat),
                statistics.median(took), 1e3 * cpu / len(reqs)))
            sys.stdout.flush()
        print()
        print("server peak RSS %.0f MB" % peak_rss_mb(srv.proc.pid))
    finally:
        rc = srv.stop(timeout=600)
        if rc != 0:
            print("server exit code %s; log:\n%s" % (rc, srv.read_log()), file=sys.stderr)


if __name__ == "__main__":
    main()
