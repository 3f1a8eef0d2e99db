#!/usr/bin/env python3
"""Memory of idle shards on one node (issue 13: "<= 20 KiB per idle shard"), side by side.

For each binary (SCRY_BIN, the build under test, and BASE_BIN, a build of `main`): starts a
fresh `scry serve`, reads its RssAnon with no index, then creates indices of 1 shard
(0 replicas) and indexes --docs small documents into each (one _bulk per 100 indices, refreshed
by the default 1 s refresh), until the node holds each count asked for; at each count it waits
until every indexing buffer is released (a build with the setting) and then --idle seconds,
reads RssAnon again and prints
(RssAnon with N shards - RssAnon with 0) / N, and the ratio of the two binaries. After the last
count it checks every index still answers its documents (a _count over all of them, then a
write to one) so an idle shard that lost something would show.

A binary whose `serve --help` mentions indices.memory.shard_inactive_time gets
`-E indices.memory.shard_inactive_time=<--inactive>` (main has no such setting; its shards
keep what they allocated however long they idle).

Usage: SCRY_BIN=build/release/scry BASE_BIN=build/base/scry \\
           python3 bench/idle_shards.py [--counts 1000 5000] [--docs 3] [--idle 20] \\
           [--inactive 5s]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import urllib3

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def status_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Node:
    def __init__(self, binary, inactive, tmp, tag):
        self.binary = binary
        self.data = os.path.join(tmp, tag)
        port_file = self.data + ".port"
        args = [binary, "serve", "--data", self.data, "--port", "0", "--port-file", port_file,
                "--threads", "2", "--log-level", "warn"]
        h = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True)
        self.has_setting = "shard_inactive_time" in h.stdout + h.stderr
        if self.has_setting:
            args += ["-E", "indices.memory.shard_inactive_time=" + inactive]
        self.log = open(self.data + ".log", "wb")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(600):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            if self.proc.poll() is not None:
                sys.exit("%s exited: see %s.log" % (binary, self.data))
            time.sleep(0.05)
        self.url = "http://127.0.0.1:%s" % open(port_file).read().strip()
        self.http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(600))

    def req(self, method, path, body=None, ndjson=False):
        data = None
        if body is not None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        ct = "application/x-ndjson" if ndjson else "application/json"
        r = self.http.request(method, self.url + path, body=data,
                              headers={"Content-Type": ct})
        return r.status, json.loads(r.data) if r.data else None

    def anon_kib(self):
        return status_kib(self.proc.pid, "RssAnon")

    def threads(self):
        return status_kib(self.proc.pid, "Threads")

    def stop(self):
        # SIGKILL: the data folder is thrown away, and main's shutdown flushes every shard
        self.proc.kill()
        self.proc.wait()
        self.log.close()

    def wait_released(self, timeout):
        """Seconds until every index's indexing buffer is released (a build that reports
        segments.index_writer_memory_in_bytes); None without that stat or past timeout."""
        t0 = time.time()
        while time.time() - t0 < timeout:
            st, r = self.req("GET", "/idle-*/_stats")
            seg = r["_all"]["primaries"]["segments"] if st == 200 else {}
            if "index_writer_memory_in_bytes" not in seg:
                return None
            if seg["index_writer_memory_in_bytes"] == 0:
                return time.time() - t0
            time.sleep(1)
        return None


def index_name(i):
    return "idle-%05d" % i


def grow(node, have, want, docs):
    """Creates indices have..want-1 and fills each with `docs` documents."""
    for i in range(have, want):
        st, r = node.req("PUT", "/" + index_name(i),
                         {"settings": {"number_of_shards": 1, "number_of_replicas": 0}})
        if st != 200:
            sys.exit("create %s: %s %s" % (index_name(i), st, r))
    for lo in range(have, want, 100):
        lines = []
        for i in range(lo, min(want, lo + 100)):
            for d in range(docs):
                lines.append(json.dumps({"index": {"_index": index_name(i), "_id": str(d)}}))
                lines.append(json.dumps({"title": "small doc %d of %d" % (d, i), "n": d,
                                         "tag": "t%d" % (d % 3)}))
        st, r = node.req("POST", "/_bulk", "\n".join(lines) + "\n", ndjson=True)
        if st != 200 or r.get("errors"):
            sys.exit("bulk: %s %s" % (st, json.dumps(r)[:500]))


def check(node, n, docs):
    """Every document is still there, searchable and writable, after the idle period."""
    st, r = node.req("GET", "/idle-*/_count")
    if st != 200 or r["count"] != n * docs:
        sys.exit("count after idle: %s %s (want %d)" % (st, r, n * docs))
    st, r = node.req("PUT", "/%s/_doc/extra?refresh=true" % index_name(0), {"title": "again"})
    if st not in (200, 201):
        sys.exit("write after idle: %s %s" % (st, r))
    st, r = node.req("GET", "/%s/_count" % index_name(0))
    if st != 200 or r["count"] != docs + 1:
        sys.exit("count of the written index: %s %s" % (st, r))


def run(binary, args, tmp, tag):
    node = Node(binary, args.inactive, tmp, tag)
    time.sleep(1)
    base = node.anon_kib()
    rows = []
    have = 0
    try:
        for want in args.counts:
            t0 = time.time()
            grow(node, have, want, args.docs)
            have = want
            setup_s = time.time() - t0
            busy = node.anon_kib()
            released = node.wait_released(args.timeout) if node.has_setting else None
            time.sleep(args.idle)
            anon = node.anon_kib()
            rows.append({"shards": want, "base": base, "busy": busy, "anon": anon,
                         "per_shard": (anon - base) / want, "threads": node.threads(),
                         "setup_s": setup_s, "released_s": released})
            print("  %s: %d shards: RssAnon %d kB (right after setup %d, empty node %d), "
                  "%.1f KiB per shard, %d threads, setup %.0f s%s" %
                  (tag, want, anon, busy, base, (anon - base) / want, node.threads(), setup_s,
                   ", all released %.0f s after setup" % released if released is not None
                   else ""), flush=True)
        check(node, have, args.docs)
    finally:
        node.stop()
    return node.has_setting, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--counts", type=int, nargs="+", default=[1000, 5000])
    ap.add_argument("--docs", type=int, default=3)
    ap.add_argument("--idle", type=float, default=20.0,
                    help="seconds without requests before reading RssAnon (after every buffer "
                         "was released, for a build that reports it)")
    ap.add_argument("--timeout", type=float, default=900.0,
                    help="seconds to wait for the releases")
    ap.add_argument("--inactive", default="5s",
                    help="indices.memory.shard_inactive_time for a binary that has it")
    args = ap.parse_args()
    new_bin = os.environ.get("SCRY_BIN", os.path.join(ROOT, "build", "release", "scry"))
    base_bin = os.environ.get("BASE_BIN")
    tmp = tempfile.mkdtemp(prefix="scry-idle-shards-")
    try:
        results = {}
        for tag, b in (("base", base_bin), ("new", new_bin)):
            if b:
                print("%s: %s" % (tag, b), flush=True)
                results[tag] = run(b, args, tmp, tag)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    print("| shards | main KiB/shard | this build KiB/shard | ratio (this / main) |")
    print("| --- | --- | --- | --- |")
    new_rows = results.get("new", (False, []))[1]
    base_rows = results.get("base", (False, []))[1]
    for i, row in enumerate(new_rows):
        b = base_rows[i]["per_shard"] if i < len(base_rows) else float("nan")
        print("| %d | %.1f | %.1f | %.2f |" % (row["shards"], b, row["per_shard"],
                                              row["per_shard"] / b if b else float("nan")))


if __name__ == "__main__":
    main()
