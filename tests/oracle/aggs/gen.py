#!/usr/bin/python3
"""Documents and queries for the aggregations oracle (tests/oracle/aggs): a skewed multi-valued
keyword "k" (0-3 values, some docs without), a single-valued long "s" (with the 64-bit
extremes now and then, some docs without) and a keyword "tag" for filters. Writes docs.tsv
(id, tag, k values joined by '|', s or '-'), bulk.ndjson and queries.tsv (one filter per line:
'*' for match_all or a tag value) plus ranges.tsv (from, to per line; '-' open).
Usage: gen.py DIR N_DOCS SEED"""
import json
import os
import random
import sys


def main():
    out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rnd = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "docs.tsv"), "w") as t, \
            open(os.path.join(out, "bulk.ndjson"), "w") as b:
        for i in range(n):
            ks = sorted({"k%03d" % int(rnd.paretovariate(1.2)) for _ in range(rnd.randrange(4))})
            tag = "t%d" % rnd.randrange(5)
            r = rnd.random()
            s = None if r < 0.1 else (-2**63 if r < 0.11 else (2**63 - 1 if r < 0.12 else
                                                               rnd.randrange(-10**6, 10**6)))
            t.write("%d\t%s\t%s\t%s\n" % (i, tag, "|".join(ks), "-" if s is None else s))
            doc = {"tag": tag, "k": ks}
            if s is not None:
                doc["s"] = s
            b.write(json.dumps({"index": {"_id": str(i)}}) + "\n" + json.dumps(doc) + "\n")
    with open(os.path.join(out, "queries.tsv"), "w") as q:
        q.write("*\n")
        for k in range(5):
            q.write("t%d\n" % k)
    with open(os.path.join(out, "ranges.tsv"), "w") as f:
        bounds = sorted(rnd.randrange(-10**6, 10**6) for _ in range(6))
        f.write("-\t%d\n" % bounds[0])
        for a, c in zip(bounds, bounds[1:]):
            f.write("%d\t%d\n" % (a, c))
        f.write("%d\t-\n" % bounds[-1])
        f.write("%d\t%d\n" % (bounds[1], bounds[4]))  # overlapping


main()
