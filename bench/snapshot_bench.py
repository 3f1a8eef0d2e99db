#!/usr/bin/env python3
"""Snapshot and restore cost (issue 15): one `scry serve --path-repo` node, an index of DOCS
generated documents (3 shards), then per round, side by side on the same files:
  - `cp -a` of the index's shard folders and `sync` (the baseline: a plain durable copy of
    the same bytes),
  - a full snapshot into an empty repository (`wait_for_completion=true`),
  - an incremental snapshot after adding 1 % more documents (only new segment files copy),
  - a restore under a new name (copy back + verify + open).
Reports the medians and the ratios to the baseline copy, and the bytes each snapshot added to
the repository. Usage: python3 bench/snapshot_bench.py [--docs 200000] [--rounds 3]
(SCRY_BIN picks the binary; measure a release build)."""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import urllib3

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from conftest import Server  # noqa: E402

WORDS = None


def words():
    global WORDS
    if WORDS is None:
        rng = random.Random(7)
        WORDS = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
                 for _ in range(20000)]
    return WORDS


def load(s, index, start, n, rng):
    w = words()
    for b in range(start, start + n, 5000):
        lines = []
        for i in range(b, min(b + 5000, start + n)):
            lines.append(json.dumps({"index": {"_index": index, "_id": str(i)}}))
            lines.append(json.dumps({"title": " ".join(rng.choice(w) for _ in range(8)),
                                     "body": " ".join(rng.choice(w) for _ in range(60)),
                                     "n": i, "tag": rng.choice(w[:50])}))
        st, _, r = s.request("POST", "/_bulk", "\n".join(lines) + "\n",
                             headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not r["errors"], r


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
    return total


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def ok(s, method, path, body=None):
    st, _, b = s.request(method, path, body)
    assert st == 200, (path, b)
    return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=200000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="scry-snapbench-")
    repo = os.path.join(tmp, "repo")
    os.makedirs(repo)
    s = Server(os.path.join(tmp, "data"), ["--path-repo", repo]).start()
    s.http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(1800))
    rng = random.Random(1)
    try:
        ok(s, "PUT", "/docs", {"settings": {"number_of_shards": 3, "refresh_interval": "-1"},
                               "mappings": {"properties": {"title": {"type": "text"},
                                                           "body": {"type": "text"},
                                                           "n": {"type": "long"},
                                                           "tag": {"type": "keyword"}}}})
        load(s, "docs", 0, a.docs, rng)
        ok(s, "POST", "/docs/_forcemerge?max_num_segments=1")
        ix_dir = [d for d in os.listdir(os.path.join(tmp, "data", "indices"))][0]
        ix_path = os.path.join(tmp, "data", "indices", ix_dir)
        size = du(ix_path)
        res = {"refresh": [], "cp": [], "full": [], "incr": [], "restore": [], "full_bytes": [], "incr_bytes": []}
        next_id = a.docs
        for r in range(a.rounds):
            in_full = next_id
            dst = os.path.join(tmp, "cp%d" % r)
            subprocess.run(["sync"], check=True)
            res["cp"].append(timed(lambda: (subprocess.run(["cp", "-a", ix_path, dst], check=True),
                                            subprocess.run(["sync"], check=True))))
            shutil.rmtree(dst)
            loc = "r%d" % r
            ok(s, "PUT", "/_snapshot/" + loc, {"type": "fs", "settings": {"location": loc}})
            res["full"].append(timed(lambda: ok(s, "PUT", "/_snapshot/%s/full?wait_for_completion=true" % loc)))
            b0 = du(os.path.join(repo, loc))
            res["full_bytes"].append(b0)
            load(s, "docs", next_id, a.docs // 100, rng)
            next_id += a.docs // 100
            res["refresh"].append(timed(lambda: ok(s, "POST", "/docs/_refresh")))
            res["incr"].append(timed(lambda: ok(s, "PUT", "/_snapshot/%s/incr?wait_for_completion=true" % loc)))
            res["incr_bytes"].append(du(os.path.join(repo, loc)) - b0)
            res["restore"].append(timed(lambda: ok(
                s, "POST", "/_snapshot/%s/full/_restore?wait_for_completion=true" % loc,
                {"rename_pattern": "docs", "rename_replacement": "back%d" % r})))
            assert ok(s, "GET", "/back%d/_count" % r)["count"] == in_full
            ok(s, "DELETE", "/back%d" % r)
        med = {k: statistics.median(v) for k, v in res.items()}
        print("index: %d docs, %d shards, %.1f MB on disk; %d rounds, medians" %
              (a.docs, 3, size / 1e6, a.rounds))
        print("| step | seconds | vs cp -a | bytes added to the repository |")
        print("|---|---:|---:|---:|")
        print("| cp -a + sync of the shard folders (baseline) | %.3f | 1.00x | |" % med["cp"])
        print("| full snapshot | %.3f | %.2fx | %.1f MB |" % (med["full"], med["full"] / med["cp"],
                                                            med["full_bytes"] / 1e6))
        print("| refresh of the +1 %% docs before it (not part of the snapshot) | %.3f | | |" %
              med["refresh"])
        print("| incremental snapshot (+1 %% docs) | %.3f | %.2fx | %.2f MB |" % (
            med["incr"], med["incr"] / med["cp"], med["incr_bytes"] / 1e6))
        print("| restore (copy, verify, open) | %.3f | %.2fx | |" % (med["restore"],
                                                                   med["restore"] / med["cp"]))
    finally:
        s.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
