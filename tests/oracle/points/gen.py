#!/usr/bin/python3
"""Deterministic documents and queries for the points oracle (tests/oracle/points).

Usage: gen.py OUT_DIR N_DOCS SEED

Fields (mapping.json): `l` long (always present: uniform over the whole 64-bit range, small
values with many duplicates, the extremes, values around 2^53), `i` integer (mostly few distinct
values, 10 % missing), `d` double (uniform, duplicates, 0.0 and -0.0, 10 % missing), `t` date
(milliseconds through 2015-2016, 5 % missing), `m` multi-valued long (0 to 3 values; 20 % none),
`s` scaled_float with scaling_factor 100 (3 decimals, so values round, halves included: see
scaled_value; 10 % missing).

Writes:
  mapping.json   index creation body
  bulk-1..3.ndjson  _bulk bodies (index actions with _id = ordinal), loaded with a refresh
                 after each (several segments)
  deletes.ndjson _bulk delete actions (ordinal % 97 == 5)
  docs.tsv       ordinal <TAB> l <TAB> i <TAB> d <TAB> t <TAB> m (comma list) <TAB> s; empty =
                 missing (the Lucene side)
  queries.tsv    one query per line: KIND <TAB> FIELD <TAB> LOWER_OP <TAB> LOWER <TAB> UPPER_OP
                 <TAB> UPPER <TAB> ORDER; KIND count (range count) or top (size 10 sorted by FIELD,
                 over match_all when LOWER_OP and UPPER_OP are '-', else over the range of FIELD2
                 given as FIELD:FIELD2); ops gt/gte/lt/lte or '-'; ORDER asc/desc or '-'.
                 Numbers are written exactly as sent in JSON (dates as ISO strings with millis).
  queries.jsonl  the same queries as Elasticsearch request bodies (the scry side)
"""
import datetime
import json
import os
import random
import struct
import sys

LMIN, LMAX = -(1 << 63), (1 << 63) - 1
IMIN, IMAX = -(1 << 31), (1 << 31) - 1
T0 = 1420070400000  # 2015-01-01
T_SPAN = 2 * 365 * 86400000
N_DELETE_MOD, N_DELETE_REM = 97, 5


def iso(ms):
    dt = datetime.datetime.fromtimestamp(ms / 1000.0, tz=datetime.timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def fmt_double(x):
    if x == 0.0 and struct.pack(">d", x)[0] & 0x80:
        return "-0.0"
    return repr(x)


def scaled_value(rnd):
    """A scaled_float source value with 3 decimals, so that it rounds when scaled by 100; one in
    four ends in 5, so v * 100 is (close to) a half, which Elasticsearch rounds up (Math.round)."""
    v = round(rnd.uniform(-100, 100), 3)
    if rnd.random() < 0.25:
        v = round(int(v * 100) / 100 + (0.005 if v >= 0 else -0.005), 3)
    return v


def gen_docs(rnd, n):
    dups_d = [rnd.uniform(-1000, 1000) for _ in range(20)]
    dups_s = [scaled_value(rnd) for _ in range(20)]
    docs = []
    for k in range(n):
        d = {}
        u = rnd.random()
        if u < 0.25:
            d["l"] = rnd.randint(LMIN, LMAX)
        elif u < 0.6:
            d["l"] = rnd.randint(-40, 40)
        elif u < 0.65:
            d["l"] = rnd.choice([LMIN, LMIN + 1, LMAX, LMAX - 1, 0, -1])
        elif u < 0.75:
            d["l"] = rnd.choice([1, -1]) * ((1 << 53) + rnd.randint(-3, 3))
        else:
            d["l"] = rnd.randint(-(1 << 40), 1 << 40)
        if rnd.random() >= 0.1:
            # no IMIN/IMAX values: Elasticsearch sorts a missing int as Integer.MAX_VALUE (ties
            # with a real one), a corner this oracle leaves out; the extremes are query bounds
            d["i"] = rnd.randint(-300, 300) if rnd.random() < 0.9 else rnd.randint(IMIN + 1, IMAX - 1)
        if rnd.random() >= 0.1:
            u = rnd.random()
            if u < 0.5:
                d["d"] = rnd.uniform(-1e6, 1e6)
            elif u < 0.8:
                d["d"] = rnd.choice(dups_d)
            elif u < 0.9:
                d["d"] = rnd.choice([0.0, -0.0])
            else:
                d["d"] = rnd.uniform(-1, 1) * 10 ** rnd.randint(-300, 300)
        if rnd.random() >= 0.05:
            d["t"] = T0 + rnd.randrange(T_SPAN) if rnd.random() < 0.7 else \
                T0 + rnd.randrange(500) * 86400000  # whole days: ties
        nm = rnd.choice([0, 1, 1, 2, 3]) if rnd.random() >= 0.2 else 0
        if nm:
            d["m"] = [rnd.randint(-10000, 10000) for _ in range(nm)]
        if rnd.random() >= 0.1:
            d["s"] = rnd.choice(dups_s) if rnd.random() < 0.3 else scaled_value(rnd)
        docs.append(d)
    return docs


def doc_json(d):
    parts = []
    for f in ("l", "i", "d", "t", "m", "s"):
        if f not in d:
            continue
        v = d[f]
        if f == "d":
            parts.append('"d":%s' % fmt_double(v))
        elif f == "t":
            parts.append('"t":"%s"' % iso(v))
        elif f == "m":
            parts.append('"m":[%s]' % ",".join(str(x) for x in v))
        else:
            parts.append('"%s":%s' % (f, repr(v) if f == "s" else str(v)))
    return "{" + ",".join(parts) + "}"


def values(docs, f):
    out = []
    for d in docs:
        v = d.get(f)
        if isinstance(v, list):
            out.extend(v)
        elif v is not None:
            out.append(v)
    return out


def bound(rnd, f, vals):
    """A range bound for field f: often a value that occurs (boundaries matter), else random
    or an extreme. Returned as the JSON text and the TSV text."""
    u = rnd.random()
    if f in ("l", "m", "i"):
        lo, hi = (IMIN, IMAX) if f == "i" else (LMIN, LMAX)
        if u < 0.6:
            v = rnd.choice(vals)
        elif u < 0.9:
            v = rnd.randint(-50, 50) if rnd.random() < 0.5 else rnd.randint(lo, hi)
        else:
            v = rnd.choice([lo, hi, lo + 1, hi - 1])
        return str(v), str(v)
    if f == "d":
        if u < 0.6:
            v = rnd.choice(vals)
        elif u < 0.9:
            v = rnd.uniform(-1e6, 1e6)
        else:
            v = rnd.choice([0.0, -0.0, 1e308, -1e308, 5e-324])
        return fmt_double(v), fmt_double(v)
    if f == "s":
        if u < 0.5:
            v = rnd.choice(vals)
        elif u < 0.8:
            v = round(rnd.uniform(-100, 100), rnd.choice([0, 1, 2, 3, 4]))
        else:
            v = rnd.choice([0, 12.345, -12.345, 0.005, -0.005, 99.995, 1e6])
        return repr(v), repr(v)
    # date
    if u < 0.6:
        v = rnd.choice(vals)
    else:
        v = T0 - 86400000 + rnd.randrange(T_SPAN + 2 * 86400000)
    return '"%s"' % iso(v), str(v)


def range_body(rnd, f, vals):
    """Random gt/gte/lt/lte combination (one- or two-sided). Returns (json dict text, tsv cols)."""
    shape = rnd.random()
    lo_op = rnd.choice(["gt", "gte"]) if shape < 0.85 else "-"
    hi_op = rnd.choice(["lt", "lte"]) if shape >= 0.15 else "-"
    a, b = bound(rnd, f, vals), bound(rnd, f, vals)
    # mostly ordered bounds; sometimes reversed (an empty range)
    if lo_op != "-" and hi_op != "-" and rnd.random() < 0.9:
        ka, kb = float(a[1]), float(b[1])
        if ka > kb:
            a, b = b, a
    parts = []
    if lo_op != "-":
        parts.append('"%s":%s' % (lo_op, a[0]))
    if hi_op != "-":
        parts.append('"%s":%s' % (hi_op, b[0]))
    cols = [lo_op, a[1] if lo_op != "-" else "-", hi_op, b[1] if hi_op != "-" else "-"]
    return '{"range":{"%s":{%s}}}' % (f, ",".join(parts)), cols


def main():
    out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rnd = random.Random(seed)
    docs = gen_docs(rnd, n)
    mapping = {"settings": {"number_of_shards": 1, "number_of_replicas": 0},
               "mappings": {"dynamic": "strict", "properties": {
                   "l": {"type": "long"}, "i": {"type": "integer"}, "d": {"type": "double"},
                   "t": {"type": "date"}, "m": {"type": "long"},
                   "s": {"type": "scaled_float", "scaling_factor": 100}}}}
    with open(os.path.join(out, "mapping.json"), "w") as f:
        json.dump(mapping, f)
    cuts = [0, n // 3, (2 * n) // 3, n]
    for part in range(3):
        with open(os.path.join(out, "bulk-%d.ndjson" % (part + 1)), "w") as f:
            for k in range(cuts[part], cuts[part + 1]):
                f.write('{"index":{"_id":"%d"}}\n%s\n' % (k, doc_json(docs[k])))
    with open(os.path.join(out, "deletes.ndjson"), "w") as f:
        for k in range(N_DELETE_REM, n, N_DELETE_MOD):
            f.write('{"delete":{"_id":"%d"}}\n' % k)
    with open(os.path.join(out, "docs.tsv"), "w") as f:
        for k, d in enumerate(docs):
            cols = [str(k), str(d["l"]), str(d.get("i", "")),
                    fmt_double(d["d"]) if "d" in d else "", str(d.get("t", "")),
                    ",".join(str(x) for x in d.get("m", [])),
                    repr(d["s"]) if "s" in d else ""]
            f.write("\t".join(cols) + "\n")
    vals = {f: values(docs, f) for f in ("l", "i", "d", "t", "m", "s")}
    fields = ["l", "i", "d", "t", "m", "s"]
    with open(os.path.join(out, "queries.tsv"), "w") as qt, \
            open(os.path.join(out, "queries.jsonl"), "w") as qj:
        for f in fields:
            for _ in range(60):  # range counts
                body, cols = range_body(rnd, f, vals[f])
                qt.write("\t".join(["count", f] + cols + ["-"]) + "\n")
                qj.write('{"query":%s,"size":0,"track_total_hits":true}\n' % body)
        for f in fields:
            for _ in range(24):  # sorted top 10, over match_all or a range of another field
                order = rnd.choice(["asc", "desc"])
                if rnd.random() < 0.35:
                    qt.write("\t".join(["top", f, "-", "-", "-", "-", order]) + "\n")
                    q = '{"match_all":{}}'
                else:
                    g = rnd.choice(fields)
                    q, cols = range_body(rnd, g, vals[g])
                    qt.write("\t".join(["top", f + ":" + g] + cols + [order]) + "\n")
                qj.write('{"query":%s,"size":10,"track_total_hits":true,"_source":false,'
                         '"sort":[{"%s":"%s"}]}\n' % (q, f, order))
    print("points oracle: %d docs, seed %d, %d deletes" % (n, seed, len(range(N_DELETE_REM, n, N_DELETE_MOD))))


if __name__ == "__main__":
    main()
