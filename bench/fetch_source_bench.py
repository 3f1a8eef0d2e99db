#!/usr/bin/python3
"""Top-10 fetch cost side by side: two running scry servers (e.g. the base build on its index
and the branch build on the same docs indexed by it, both from bench/index_size.sh), the same
queries sent to each in turn over one keep-alive connection, `match` on `body` with `size: 10`,
once with `_source` (every hit's stored block decompressed) and once with `_source: false`.
Reports the servers' CPU time per request (utime + stime of the server process from /proc,
robust when the machine is busy) and the wall time, per round, and the ratio branch / base.

    /usr/bin/python3 bench/fetch_source_bench.py QUERIES.jsonl INDEX \\
        base=http://127.0.0.1:9391,PID branch=http://127.0.0.1:9392,PID [ROUNDS (3)] [N (1000)]

QUERIES.jsonl: one {"query": "..."} per line (../shared/data/queries/luceneutil/queries.txt).
Standard library only."""
import http.client
import json
import os
import sys
import time
import urllib.parse

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def run(url, pid, index, queries, source):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port)
    c0, t0, hits = cpu_s(pid), time.perf_counter(), 0
    for q in queries:
        body = {"query": {"match": {"body": q}}, "size": 10}
        if not source:
            body["_source"] = False
        conn.request("POST", "/%s/_search" % index, json.dumps(body),
                     {"Content-Type": "application/json"})
        r = json.loads(conn.getresponse().read())
        hits += len(r["hits"]["hits"])
    wall = time.perf_counter() - t0
    conn.close()
    return (cpu_s(pid) - c0) / len(queries) * 1e6, wall / len(queries) * 1e6, hits


def main():
    qfile, index = sys.argv[1], sys.argv[2]
    servers = []
    for a in sys.argv[3:5]:
        name, rest = a.split("=", 1)
        url, pid = rest.rsplit(",", 1)
        servers.append((name, url, int(pid)))
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    n = int(sys.argv[6]) if len(sys.argv) > 6 else 1000
    queries = []
    with open(qfile) as f:
        for line in f:
            q = json.loads(line)["query"]
            if q.strip():
                queries.append(q)
    queries = (queries * (n // max(1, len(queries)) + 1))[:n]
    for name, url, pid in servers:  # warm the page cache and the code
        run(url, pid, index, queries[:200], True)
    tot = {}
    print("%-8s %-7s %5s %12s %12s %8s" % ("server", "source", "round", "cpu_us/req",
                                            "wall_us/req", "hits"))
    for r in range(rounds):
        for source in (True, False):
            for name, url, pid in servers:
                c, w, h = run(url, pid, index, queries, source)
                tot.setdefault((name, source), []).append(c)
                print("%-8s %-7s %5d %12.0f %12.0f %8d" % (name, source, r, c, w, h))
    for source in (True, False):
        a = sum(tot[(servers[0][0], source)])
        b = sum(tot[(servers[1][0], source)])
        print("_source=%s: CPU per request %s / %s = %.3f" % (source, servers[1][0],
                                                              servers[0][0], b / a))


if __name__ == "__main__":
    main()
