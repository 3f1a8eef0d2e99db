#!/usr/bin/python3
"""The scry side of the points oracle (tests/oracle/points): over HTTP against a running
`scry serve`, creates index `points` from mapping.json, loads bulk-1..3.ndjson with a refresh
after each (three segments), deletes the docs of deletes.ndjson, refreshes, and answers every
request of queries.jsonl; then force-merges to one segment and answers them again. Writes
scry.txt and scry-merged.txt in the format of PointsOracle.java ("count\\tN" or
"top\\tTOTAL\\tid,id,..."), and after each, order.txt / order-merged.txt: the live docs' ids
in scry's doc id order (a scroll sorted by _doc; ties sort by it; a merge may reorder documents, as Lucene's may).
Usage: scry_side.py URL DIR"""
import http.client
import json
import os
import sys
import urllib.parse


class Client:
    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)

    def req(self, method, path, body=None, ctype="application/json"):
        self.conn.request(method, path, body=body, headers={"Content-Type": ctype})
        r = self.conn.getresponse()
        data = r.read()
        if r.status // 100 != 2:
            sys.exit("scry_side: %s %s answered %d: %s" % (method, path, r.status, data[:400]))
        return json.loads(data)


def bulk(c, path):
    lines = open(path, encoding="utf-8").read().splitlines(True)
    for k in range(0, len(lines), 8000):  # 4000 docs per request
        r = c.req("POST", "/points/_bulk", "".join(lines[k:k + 8000]), "application/x-ndjson")
        if r.get("errors"):
            bad = next(i for i in r["items"] if list(i.values())[0].get("error"))
            sys.exit("scry_side: bulk %s: %s" % (path, json.dumps(bad)[:400]))


def answer(c, queries, out):
    with open(out, "w") as f:
        for q in queries:
            r = c.req("POST", "/points/_search?request_cache=false", q)
            total = r["hits"]["total"]["value"]
            if json.loads(q).get("size") == 0:
                f.write("count\t%d\n" % total)
            else:
                ids = ",".join(h["_id"] for h in r["hits"]["hits"])
                f.write("top\t%d\t%s\n" % (total, ids))


def doc_order(c, out):
    """The live documents' ids in scry's doc id order (a scroll sorted by `_doc`): the order
    ties are broken in, which the Lucene side indexes in."""
    body = {"size": 5000, "sort": ["_doc"], "_source": False}
    r = c.req("POST", "/points/_search?scroll=1m&request_cache=false", json.dumps(body))
    ids = []
    while r["hits"]["hits"]:
        ids.extend(h["_id"] for h in r["hits"]["hits"])
        r = c.req("POST", "/_search/scroll", json.dumps({"scroll": "1m", "scroll_id": r["_scroll_id"]}))
    c.req("DELETE", "/_search/scroll", json.dumps({"scroll_id": r["_scroll_id"]}))
    with open(out, "w") as f:
        f.write("\n".join(ids) + "\n")


def main():
    url, d = sys.argv[1], sys.argv[2]
    c = Client(url)
    c.req("PUT", "/points", open(os.path.join(d, "mapping.json")).read())
    for part in (1, 2, 3):
        bulk(c, os.path.join(d, "bulk-%d.ndjson" % part))
        c.req("POST", "/points/_refresh")
    bulk(c, os.path.join(d, "deletes.ndjson"))
    c.req("POST", "/points/_refresh")
    queries = [l.strip() for l in open(os.path.join(d, "queries.jsonl")) if l.strip()]
    answer(c, queries, os.path.join(d, "scry.txt"))
    doc_order(c, os.path.join(d, "order.txt"))
    c.req("POST", "/points/_forcemerge?max_num_segments=1")
    c.req("POST", "/points/_refresh")
    answer(c, queries, os.path.join(d, "scry-merged.txt"))
    doc_order(c, os.path.join(d, "order-merged.txt"))


if __name__ == "__main__":
    main()
