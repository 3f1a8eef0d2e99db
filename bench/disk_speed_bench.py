#!/usr/bin/python3
"""The read paths that touch what the smaller on-disk layouts changed (segment format v11's
sorted-set term offsets, the id table file version 2), side by side: two running scry servers
(e.g. the base build on its index and the branch build on the same docs indexed by it, both
loaded as bench/index_size.sh does), the same requests sent to each in turn over one keep-alive
connection. Reports the servers' CPU time per request (utime + stime of the server process from
/proc, robust when the machine is busy) per round, and the ratio branch / base over all rounds.

Operations (QUERIES.jsonl gives the `match` texts on `body`):
  terms_name    size 0, terms aggregation on the high-cardinality keyword `name` (top 10)
  terms_kind    size 0, terms aggregation on the low-cardinality keyword `kind`
  sort_name     top 10 sorted on `name` ascending, `_source: false`
  ids_only      top 100 by score, `_source: false` (each hit's _id from its doc values)
  get_by_id     GET /INDEX/_doc/<id>, ids spread over the whole index
  bulk_update   _bulk of 100 `index` actions on existing ids (the same docs rewritten)
  flush         one _flush after a 100-doc bulk (writes the id table file: version 2
                compresses it)

    /usr/bin/python3 bench/disk_speed_bench.py QUERIES.jsonl INDEX N_DOCS CORPUS.ndjson \\
        base=http://127.0.0.1:9391,PID branch=http://127.0.0.1:9392,PID [ROUNDS (3)] [N (300)]

Standard library only."""
import http.client
import json
import os
import random
import sys
import time
import urllib.parse

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class Client:
    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)

    def req(self, method, path, body=None, ctype="application/json"):
        if body is not None:
            body = body.encode("utf-8")
        self.conn.request(method, path, body, {"Content-Type": ctype} if body else {})
        r = self.conn.getresponse()
        data = r.read()
        if r.status >= 300 and not (method == "GET" and r.status == 404):
            raise RuntimeError("%s %s: %d %s" % (method, path, r.status, data[:300]))
        return data


def make_requests(op, index, queries, ids, lines, n):
    """A list of (method, path, body) for one run of `op`."""
    rnd = random.Random(7)
    out = []
    for i in range(n):
        q = queries[i % len(queries)]
        match = {"match": {"body": q}}
        if op == "terms_name":
            b = {"query": match, "size": 0, "aggs": {"t": {"terms": {"field": "name"}}}}
        elif op == "terms_kind":
            b = {"query": match, "size": 0, "aggs": {"t": {"terms": {"field": "kind"}}}}
        elif op == "sort_name":
            b = {"query": match, "size": 10, "_source": False, "sort": [{"name": "asc"}]}
        elif op == "ids_only":
            b = {"query": match, "size": 100, "_source": False}
        elif op == "get_by_id":
            out.append(("GET", "/%s/_doc/%s" % (index, rnd.choice(ids)), None))
            continue
        elif op in ("bulk_update", "flush"):
            parts = []
            for _ in range(100):
                k = rnd.randrange(len(lines))
                parts.append(json.dumps({"index": {"_id": str(k)}}))
                parts.append(lines[k])
            out.append(("POST", "/%s/_bulk" % index, "\n".join(parts) + "\n"))
            if op == "flush":
                out.append(("POST", "/%s/_flush?force=true" % index, None))
            continue
        out.append(("POST", "/%s/_search?request_cache=false" % index, json.dumps(b)))
    return out


def run(client, pid, reqs, count_every):
    c0, t0 = cpu_s(pid), time.perf_counter()
    for m, p, b in reqs:
        client.req(m, p, b, "application/x-ndjson" if p.endswith("_bulk") else "application/json")
    n = len(reqs) // count_every
    return (cpu_s(pid) - c0) / n * 1e6, (time.perf_counter() - t0) / n * 1e6


def main():
    qfile, index, n_docs, corpus = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    servers = []
    for a in sys.argv[5:7]:
        name, rest = a.split("=", 1)
        url, pid = rest.rsplit(",", 1)
        servers.append((name, Client(url), int(pid)))
    rounds = int(sys.argv[7]) if len(sys.argv) > 7 else 3
    n = int(sys.argv[8]) if len(sys.argv) > 8 else 300
    queries = [json.loads(l)["query"] for l in open(qfile) if json.loads(l)["query"].strip()]
    rnd = random.Random(1)
    queries = [queries[rnd.randrange(len(queries))] for _ in range(n)]
    lines = []
    with open(corpus) as f:
        for i, line in enumerate(f):
            if i >= 20000:
                break
            lines.append(line.rstrip("\n"))
    ids = [str(rnd.randrange(n_docs)) for _ in range(5000)]
    ops = [("terms_name", n), ("terms_kind", n), ("sort_name", n), ("ids_only", n),
           ("get_by_id", 10 * n), ("bulk_update", n // 10), ("flush", 5)]
    plans = {op: make_requests(op, index, queries, ids, lines, k) for op, k in ops}
    for _, c, pid in servers:  # warm the page cache and the code
        for op, _k in ops[:5]:
            run(c, pid, plans[op][:50], 1)
    tot = {}
    print("%-12s %-8s %5s %12s %12s" % ("op", "server", "round", "cpu_us/op", "wall_us/op"))
    for r in range(rounds):
        for op, _k in ops:
            order = servers if r % 2 == 0 else servers[::-1]
            for name, c, pid in order:
                cu, w = run(c, pid, plans[op], 2 if op == "flush" else 1)
                tot.setdefault((op, name), []).append(cu)
                print("%-12s %-8s %5d %12.0f %12.0f" % (op, name, r, cu, w), flush=True)
    print()
    print("| operation | %s CPU us/op (rounds) | %s CPU us/op (rounds) | %s / %s |" %
          (servers[0][0], servers[1][0], servers[1][0], servers[0][0]))
    print("|---|---|---|---:|")
    for op, _k in ops:
        a, b = tot[(op, servers[0][0])], tot[(op, servers[1][0])]
        print("| %s | %s | %s | %.2f |" % (op, ", ".join("%.0f" % x for x in a),
                                            ", ".join("%.0f" % x for x in b), sum(b) / sum(a)))


if __name__ == "__main__":
    main()
