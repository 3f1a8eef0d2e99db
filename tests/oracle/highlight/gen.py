"""Cases for the highlighter oracle: real sentences (tests/fixtures/text/sentences.txt) grouped
into multi-sentence texts, each with queries built from its own words (term, two-term should,
adjacent-word phrase, prefix, wildcard, fuzzy with one edit) and 1-3 passages.
Usage: gen.py OUT_TSV [SEED]"""
import random
import re
import sys

out_path = sys.argv[1]
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 7)
root = __file__.rsplit("/tests/", 1)[0]
sents = [s.strip() for s in open(root + "/tests/fixtures/text/sentences.txt", encoding="utf-8")
         if s.strip() and "\t" not in s]
WORD = re.compile(r"[A-Za-z]{3,}")
cases = []
i = 0
while i < len(sents):
    k = rng.randint(1, 6)
    text = " ".join(sents[i:i + k])
    i += k
    words = [w.lower() for w in WORD.findall(text)]
    if len(words) < 2:
        continue
    pairs = [(a.lower(), b.lower()) for a, b in
             re.findall(r"\b([A-Za-z]{3,}) ([A-Za-z]{3,})\b", text)]
    w1, w2 = rng.choice(words), rng.choice(words)
    qs = ["term:" + w1, "term:%s | term:%s" % (w1, w2), "prefix:" + w2[:3],
          "wildcard:%s?%s*" % (w1[0], w1[2]) if len(w1) > 3 else "wildcard:" + w1[0] + "*",
          "fuzzy:" + w2[:-1] + ("x" if w2[-1] != "x" else "y")]
    if pairs:
        a, b = rng.choice(pairs)
        qs.append("phrase:%s %s" % (a, b))
        qs.append("phrase:%s %s | term:%s" % (a, b, w1))
    qs.append("term:zzzunknown")
    for q in qs:
        cases.append((text, q, rng.randint(1, 3)))
with open(out_path, "w", encoding="utf-8") as f:
    for t, q, n in cases:
        f.write("%s\t%s\t%d\n" % (t, q, n))
print("%d texts' cases: %d" % (len(set(c[0] for c in cases)), len(cases)), file=sys.stderr)
