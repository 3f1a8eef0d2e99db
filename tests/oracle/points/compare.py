#!/usr/bin/python3
"""Compares the points oracle's answers (tests/oracle/points): every line of scry's output must
equal Lucene's exactly (range counts; sorted top 10 totals and ids in order, ties by doc id).
Usage: compare.py LUCENE_OUT SCRY_OUT QUERIES_JSONL LABEL"""
import sys


def main():
    luc = open(sys.argv[1]).read().splitlines()
    scry = open(sys.argv[2]).read().splitlines()
    qs = open(sys.argv[3]).read().splitlines()
    label = sys.argv[4]
    if not (len(luc) == len(scry) == len(qs)):
        print("%s: line counts differ: lucene %d scry %d queries %d" % (label, len(luc), len(scry), len(qs)))
        return 1
    bad = [(q, l, s) for q, l, s in zip(qs, luc, scry) if l != s]
    kinds = {}
    for l in luc:
        kinds[l.split("\t")[0]] = kinds.get(l.split("\t")[0], 0) + 1
    for q, l, s in bad[:15]:
        print("  DIFF %s\n    lucene: %s\n    scry:   %s" % (q, l, s))
    print("%s: %d queries (%s), %d differ" % (
        label, len(qs), ", ".join("%d %s" % (v, k) for k, v in sorted(kinds.items())), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
