#!/usr/bin/python3
"""Compares scry's and Lucene's answers (tests/oracle/search): counts and totals exactly,
top-10 ids in order (ties by doc id), scores within 1e-5 relative.

Allowed differences, each with its reason:
- Two hits whose scores differ by less than 1e-5 relative may swap places: summing clause
  scores in a different order can move a float by one ulp, which reorders near-ties. The swap
  is accepted only when both sides' scores agree within the tolerance position by position.
- A query Lucene rejects (ParseException) must be rejected by scry too (any error).
Usage: compare.py LUCENE_OUT SCRY_OUT
"""
import sys

TOL = 1e-5


def parse(path):
    rows = []
    for line in open(path, encoding="utf-8"):
        parts = line.rstrip("\n").split("\t")
        rows.append(parts)
    return rows


def close(a, b):
    return abs(a - b) <= TOL * max(abs(a), abs(b), 1e-30)


def main():
    luc, scry = parse(sys.argv[1]), parse(sys.argv[2])
    if len(luc) != len(scry):
        print("different number of lines: lucene %d scry %d" % (len(luc), len(scry)))
        return 1
    bad = 0
    kinds = {}
    for l, s in zip(luc, scry):
        q = l[0]
        problem = None
        if s[0] != q:
            problem = "query text differs: %r" % s[0]
        elif l[1].startswith("ERROR"):
            if not s[1].startswith("ERROR"):
                problem = "lucene rejects it (%s), scry does not" % l[1]
        elif s[1].startswith("ERROR"):
            problem = "scry error: %s" % s[1]
        elif l[1] != s[1]:
            problem = "count: lucene %s scry %s" % (l[1], s[1])
        elif l[2] != s[2]:
            problem = "total: lucene %s scry %s" % (l[2], s[2])
        else:
            lh = [(int(x.split(":")[0]), float(x.split(":")[1])) for x in l[3:]]
            sh = [(int(x.split(":")[0]), float(x.split(":")[1])) for x in s[3:]]
            if len(lh) != len(sh):
                problem = "hits: lucene %d scry %d" % (len(lh), len(sh))
            else:
                for i, ((ld, ls), (sd, ss)) in enumerate(zip(lh, sh)):
                    if not close(ls, ss):
                        problem = "hit %d score: lucene %d:%r scry %d:%r" % (i, ld, ls, sd, ss)
                        break
                    if ld != sd:
                        # a near-tie swap is allowed if the other side's doc is at a place
                        # with a close score
                        lset = {d for d, _ in lh}
                        if sd not in lset and i < len(lh) - 1:
                            problem = "hit %d: lucene doc %d scry doc %d" % (i, ld, sd)
                            break
                        if i == len(lh) - 1 and not close(ls, ss):
                            problem = "last hit: lucene doc %d scry doc %d" % (ld, sd)
                            break
        kind = classify(q)
        kinds.setdefault(kind, [0, 0])
        kinds[kind][0] += 1
        if problem:
            bad += 1
            kinds[kind][1] += 1
            print("MISMATCH [%s]: %s" % (q, problem))
    for k in sorted(kinds):
        print("  %-12s %4d queries, %d mismatches" % (k, kinds[k][0], kinds[k][1]))
    print("search oracle: %d queries, %d mismatches" % (len(luc), bad))
    return 1 if bad else 0


def classify(q):
    if "[" in q or "{" in q:
        return "range"
    if q.startswith("/"):
        return "regexp"
    if q.startswith('"'):
        return "sloppy" if '"~' in q else "phrase"
    if q.endswith("~1") or q.endswith("~2") or q.endswith("~"):
        return "fuzzy" if " " not in q else "mixed"
    if " " not in q:
        if q.endswith("*") and "?" not in q and q.count("*") == 1:
            return "prefix"
        if "*" in q or "?" in q:
            return "wildcard"
        return "term"
    if "AND" in q or "OR" in q or "^" in q or "(" in q or "||" in q or ":" in q or '"' in q:
        return "mixed"
    if q.startswith("+") and " -" in q:
        return "must_not"
    if " -" in q:
        return "must_not"
    if q.startswith("+"):
        return "and"
    return "or"


sys.exit(main())
