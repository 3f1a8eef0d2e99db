#!/usr/bin/env python3
"""Per-operation facts of an aggregation workload that `scry bench run` does not measure:
the docs each operation collects (its query's exact hit count), the peak request-breaker bytes
(scry's `peak_used_in_bytes` of the request breaker in `_nodes/stats/breaker`, reset before the
request: the largest scratch high-water + result of one shard execution), the number of
top-level buckets and the sum of their doc counts (to check against Lucene), or the error.

    bench/agg_probe.py [--pid PID] URL WORKLOAD.txt [WORKLOAD.txt ...] > probe.json

With --pid (the server's process id, on this machine), each operation that answers is also
repeated one request at a time until the server has used 0.5 s of CPU (or 200 requests, or
30 s): `cpu_ms` is the server's user + system CPU time per request from /proc/PID/stat, the
number to compare on a shared machine, where the wall time includes waits for a core.

Used by bench/run.sh and bench/aggs_bench.sh; standard library only."""
import json
import os
import sys
import time
import urllib.error
import urllib.request


def call(url, method="GET", body=None):
    data = body.encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, {"error": {"reason": raw[:200].decode("utf-8", "replace")}}


def peak(url, reset):
    _, r = call(url + "/_nodes/stats/breaker" + ("?reset_peak=true" if reset else ""))
    for node in r.get("nodes", {}).values():
        return node.get("breakers", {}).get("request", {}).get("peak_used_in_bytes")
    return None


def buckets(aggs):
    """(buckets, doc count sum) of the first top-level aggregation with buckets; under a
    single-bucket aggregation (sampler, filter) without buckets of its own, of its first
    sub-aggregation with buckets."""
    for a in (aggs or {}).values():
        b = a.get("buckets") if isinstance(a, dict) else None
        if isinstance(b, dict):
            b = list(b.values())
        if isinstance(b, list):
            return len(b), sum(x.get("doc_count", 0) for x in b)
    for a in (aggs or {}).values():
        if isinstance(a, dict) and "doc_count" in a:
            n, total = buckets({k: v for k, v in a.items() if isinstance(v, dict)})
            if n is not None:
                return n, total
    return None, None


def values(aggs):
    """The values of the first top-level multi-value metric (percentiles), in key order."""
    for a in (aggs or {}).values():
        v = a.get("values") if isinstance(a, dict) else None
        if isinstance(v, dict):
            return [v[k] for k in sorted(v, key=float)]
    return None


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime (fields 14 and 15)


def cpu_per_request(url, pid, path, body):
    hz = os.sysconf("SC_CLK_TCK")
    t0, c0, n = time.time(), cpu_ticks(pid), 0
    while True:
        call(url + path, "POST", body)
        n += 1
        used = cpu_ticks(pid) - c0
        if used >= hz // 2 or n >= 200 or time.time() - t0 > 30:
            return round(used * 1000.0 / hz / n, 3), n


def probe(url, cls, path, body, pid=None):
    row = {"class": cls}
    peak(url, True)
    status, r = call(url + path, "POST", body)
    if status != 200:
        err = r.get("error", {})
        row["error"] = "HTTP %d: %s" % (status, err.get("reason", err) if isinstance(err, dict)
                                        else err)
        return row
    row["peak_breaker_bytes"] = peak(url, False)
    row["buckets"], row["doc_count_sum"] = buckets(r.get("aggregations"))
    vals = values(r.get("aggregations"))
    if vals is not None:
        row["values"] = vals
    q = json.loads(body)
    q["track_total_hits"] = True
    q["size"] = 0
    q.pop("aggs", None)
    q.pop("aggregations", None)
    status, r = call(url + path, "POST", json.dumps(q))
    if status == 200:
        row["docs"] = r["hits"]["total"]["value"]
    if pid:
        row["cpu_ms"], row["cpu_requests"] = cpu_per_request(url, pid, path, body)
    return row


def main():
    args = sys.argv[1:]
    pid = None
    if args[:1] == ["--pid"]:
        pid, args = int(args[1]), args[2:]
    url = args[0].rstrip("/")
    out = {}
    for wl in args[1:]:
        for line in open(wl):
            if not line.strip() or line.startswith("#"):
                continue
            cls, _method, path, body = line.rstrip("\n").split("\t", 3)
            if cls not in out:
                out[cls] = probe(url, cls, path, body, pid)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
