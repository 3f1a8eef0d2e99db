"""Compares the highlighter oracle's outputs: Lucene's (HighlightOracle.java) and scry's
(highlight_oracle.c), one line per case of cases.tsv. Strict (default): every line must be
equal. With `info` (Lucene on java.text's sentence rules, scry on ICU's) it only reports: cases
with the same marked words but other passage texts are counted as boundary differences, the
rest (a different passage chosen because the passages' lengths differ) as other differences.
Usage: compare.py CASES LUCENE SCRY [SHOW] [info]"""
import re
import sys

cases = open(sys.argv[1], encoding="utf-8").read().split("\n")
luc = open(sys.argv[2], encoding="utf-8").read().split("\n")
scr = open(sys.argv[3], encoding="utf-8").read().split("\n")
show = int(sys.argv[4]) if len(sys.argv) > 4 else 5
assert len(luc) == len(scr), (len(luc), len(scr))
n = len([c for c in cases if c])
same = breaks = 0
bad = []
TAG = re.compile(r"<em>(.*?)</em>")
for i in range(n):
    if luc[i] == scr[i]:
        same += 1
        continue
    if TAG.findall(luc[i]) == TAG.findall(scr[i]) or (
            set(TAG.findall(luc[i])) == set(TAG.findall(scr[i]))
            and luc[i].count(" ## ") == scr[i].count(" ## ")):
        breaks += 1
        kind = "same marks"
    else:
        kind = "differs"
        bad.append(i)
    if show > 0:
        show -= 1
        t, q, m = cases[i].split("\t")
        print("%s case %d: query %s, %s passages\n  text:   %s\n  lucene: %s\n  scry:   %s" %
              (kind, i + 1, q, m, t[:300], luc[i][:400], scr[i][:400]))
info = len(sys.argv) > 5 and sys.argv[5] == "info"
if info:
    print("highlight oracle: %d cases, %d equal, %d with the same marks but other sentence "
          "boundaries, %d other differences (passages chosen over other boundaries)" %
          (n, same, breaks, len(bad)))
else:
    print("highlight oracle: %d cases, %d equal, %d differ" % (n, same, n - same))
sys.exit(0 if info or same == n else 1)
