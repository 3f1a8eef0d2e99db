#!/usr/bin/python3
"""The scry side of the aggregations oracle (tests/oracle/aggs): over HTTP against a running
`scry serve`, creates index `aggs` (3 shards: the shard partials are reduced), loads
bulk.ndjson in three parts with a refresh after each, and for each filter of queries.tsv
answers a terms aggregation on "k" (size large enough for every term: exact) and a range
aggregation on "s" with ranges.tsv, in AggsOracle.java's output format.
Usage: scry_side.py URL DIR"""
import http.client
import json
import os
import sys
import urllib.parse


def main():
    url, d = sys.argv[1], sys.argv[2]
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)

    def req(method, path, body=None, ctype="application/json"):
        conn.request(method, path, body=body, headers={"Content-Type": ctype})
        r = conn.getresponse()
        data = r.read()
        if r.status // 100 != 2:
            sys.exit("scry_side: %s %s answered %d: %s" % (method, path, r.status, data[:400]))
        return json.loads(data)

    req("PUT", "/aggs", json.dumps({"settings": {"number_of_shards": 3}, "mappings": {
        "properties": {"k": {"type": "keyword"}, "s": {"type": "long"},
                       "tag": {"type": "keyword"}}}}))
    lines = open(os.path.join(d, "bulk.ndjson")).read().splitlines(True)
    step = (len(lines) // 6) * 2 or 2
    for k in range(0, len(lines), step):
        r = req("POST", "/aggs/_bulk", "".join(lines[k:k + step]), "application/x-ndjson")
        if r.get("errors"):
            sys.exit("scry_side: bulk errors")
        req("POST", "/aggs/_refresh")
    ranges = []
    for line in open(os.path.join(d, "ranges.tsv")):
        a, b = line.strip().split("\t")
        r = {}
        if a != "-":
            r["from"] = int(a)
        if b != "-":
            r["to"] = int(b)
        ranges.append(r)
    out = []
    for q in open(os.path.join(d, "queries.tsv")):
        q = q.strip()
        query = {"match_all": {}} if q == "*" else {"term": {"tag": q}}
        body = {"size": 0, "query": query, "aggs": {
            "k": {"terms": {"field": "k", "size": 100000, "order": {"_key": "asc"}}},
            "s": {"range": {"field": "s", "ranges": ranges}}}}
        r = req("POST", "/aggs/_search?request_cache=false", json.dumps(body))
        terms = ",".join("%s=%d" % (b["key"], b["doc_count"]) for b in r["aggregations"]["k"]["buckets"])
        out.append("terms\t" + terms)
        out.append("ranges\t" + ",".join(str(b["doc_count"]) for b in r["aggregations"]["s"]["buckets"]))
    with open(os.path.join(d, "scry.txt"), "w") as f:
        f.write("\n".join(out) + "\n")


main()
