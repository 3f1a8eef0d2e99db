#!/usr/bin/python3
"""Deterministic corpus and query set for the search oracle (tests/oracle/search).

Writes docs.tsv (id <TAB> text) and queries.txt (one Lucene classic query per line) into an
output folder. Words are real English words (words.txt, taken from the luceneutil query lists)
drawn with Zipf frequencies; some words have a fixed "partner" that often follows them so
phrases match. Usage: gen.py OUT_DIR N_DOCS SEED
"""
import os
import random
import sys


def main():
    out, n_docs, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    here = os.path.dirname(os.path.abspath(__file__))
    words = [w.strip() for w in open(os.path.join(here, "words.txt")) if w.strip()]
    rnd = random.Random(seed)
    n = len(words)
    weights = [1.0 / (r + 1) ** 1.05 for r in range(n)]
    cum = []
    acc = 0.0
    for w in weights:
        acc += w
        cum.append(acc)
    partner = {w: words[rnd.randrange(n)] for w in words}

    import bisect

    def draw():
        return words[min(n - 1, bisect.bisect_left(cum, rnd.random() * acc))]

    with open(os.path.join(out, "docs.tsv"), "w") as f:
        for i in range(n_docs):
            length = rnd.randint(3, 120)
            toks = []
            while len(toks) < length:
                if toks and rnd.random() < 0.25:
                    toks.append(partner[toks[-1]])
                else:
                    toks.append(draw())
            # some capitals and punctuation for the analyzer
            if rnd.random() < 0.2:
                toks[0] = toks[0].capitalize()
            text = " ".join(toks)
            if rnd.random() < 0.3:
                text = text.replace(" ", ", ", 1) + "."
            f.write("%d\t%s\n" % (i, text))

    def freq_word():
        return words[rnd.randrange(min(n, 40))]

    def mid_word():
        return words[rnd.randrange(40, min(n, 400))]

    def rare_word():
        return words[rnd.randrange(400, n)]

    def any_word():
        return rnd.choice([freq_word, mid_word, rare_word])()

    def long_word(minlen=5):
        while True:
            w = any_word()
            if len(w) >= minlen:
                return w

    qs = []
    for _ in range(30):
        qs.append(any_word())
    for _ in range(25):
        qs.append("+%s +%s" % (any_word(), any_word()))
    for _ in range(10):
        qs.append("+%s +%s" % (freq_word(), freq_word()))
    for _ in range(25):
        qs.append("%s %s" % (any_word(), any_word()))
    for _ in range(10):
        qs.append("%s %s %s" % (freq_word(), mid_word(), rare_word()))
    for _ in range(25):
        qs.append("+%s -%s %s" % (any_word(), any_word(), any_word()))
    for _ in range(10):
        qs.append("%s %s -%s" % (freq_word(), mid_word(), freq_word()))
    for _ in range(30):
        a = any_word()
        b = partner[a] if rnd.random() < 0.7 else any_word()
        if a != b:
            qs.append('"%s %s"' % (a, b))
    for _ in range(10):
        a = freq_word()
        b = partner[a]
        c = partner[b]
        if len({a, b, c}) == 3:
            qs.append('"%s %s %s"' % (a, b, c))
    for _ in range(30):
        a = any_word()
        b = partner[a] if rnd.random() < 0.5 else freq_word()
        if a != b:
            qs.append('"%s %s"~%d' % (a, b, rnd.randint(1, 4)))
    for _ in range(8):
        a, b, c = freq_word(), freq_word(), mid_word()
        if len({a, b, c}) == 3:
            qs.append('"%s %s %s"~%d' % (a, b, c, rnd.randint(1, 5)))
    for _ in range(25):
        w = any_word()
        qs.append("%s*" % w[: rnd.randint(1, max(1, min(4, len(w))))])
    for _ in range(20):
        w = long_word(4)
        i = rnd.randrange(len(w))
        pat = w[:i] + "?" + w[i + 1:]
        if rnd.random() < 0.5:
            pat = pat[: max(2, len(pat) - 2)] + "*"
        qs.append(pat)
    qs += ["*ing", "?he", "t*e", "*tion*"]
    for _ in range(12):
        w = long_word(4)
        qs.append("/%s.*/" % w[:2])
    qs += ["/[a-c]+ing/", "/th(e|is|at)/", "/.{3}/", "/[^aeiou]{4,5}/", "/(ab|ac).*/",
           "/s[a-z]*s/", "/<1-99>/", "/~(the)&t.*/", "/w.*&.*d/", "/[0-9]+/"]
    for _ in range(30):
        w = long_word(5)
        qs.append("%s~%d" % (w, rnd.choice([1, 2])))
    for _ in range(8):
        w = long_word(5)
        i = rnd.randrange(len(w))
        qs.append("%s%s%s~" % (w[:i], "x", w[i + 1:]))
    for _ in range(30):
        a, b, c, d = any_word(), any_word(), freq_word(), mid_word()
        qs.append(rnd.choice([
            "(%s OR %s) AND %s" % (a, b, c),
            "%s^2 %s" % (a, b),
            '"%s %s" %s' % (c, partner[c], d),
            "%s AND NOT %s" % (c, d),
            "(%s %s)^0.5 +%s" % (a, b, c),
            "%s* AND %s" % (a[:2], c),
            "+%s -(%s OR %s)" % (c, a, b),
            "%s~1 OR %s" % (long_word(5), d),
            "body:%s || body:%s && %s" % (a, b, c),
        ]))
    # term ranges (Lucene's TermRangeQuery: byte order, constant score), fixed so the random
    # queries above stay the same
    qs += ["[apple TO banana]", "{a TO b}", "[ya TO *]", "[* TO ab}", "[the TO the]",
           "{the TO thf}", "+[s TO t} +the", "[zz TO a]", "body:[ca TO cb] OR dog",
           "[Ma TO mb]^3 water", "[a TO c] -[b TO c]"]
    # sloppy phrases with a repeated term (Lucene's repeat groups), and exact ones
    qs += ['"the of the"~3', '"the the"~2', '"of the of the"~4', '"and the and"~6',
           '"the a the"~1', '"of of"~5', '"the of the"', '"the the"']
    # phrases beside other required clauses (two-phase: positions read only where every clause
    # matches), drawn after everything above so the earlier queries stay the same
    for _ in range(16):
        c, d, e = freq_word(), mid_word(), any_word()
        qs.append(rnd.choice([
            '+"%s %s" +%s' % (c, partner[c], d),
            '"%s %s"~2 AND %s' % (c, partner[c], d),
            '+%s +"%s %s" -%s' % (d, c, partner[c], e),
            '+"%s %s" +(%s OR %s)' % (c, partner[c], d, e),
        ]))
    # phrases of three and four terms, exact and sloppy (matched term by term, the fewest
    # positions first), drawn after everything above so the earlier queries stay the same
    for _ in range(12):
        a = freq_word()
        ws = [a, partner[a], partner[partner[a]], partner[partner[partner[a]]]]
        ws = ws[: rnd.choice([3, 4])]
        if len(set(ws)) == len(ws):
            qs.append('"%s"' % " ".join(ws))
            qs.append('"%s"~%d' % (" ".join(ws), rnd.randint(1, 4)))
    for _ in range(10):
        ws = [freq_word(), mid_word(), freq_word(), freq_word()][: rnd.choice([3, 4])]
        if len(set(ws)) == len(ws):
            qs.append('"%s"~%d' % (" ".join(ws), rnd.randint(2, 8)))
            qs.append('"%s"' % " ".join(ws))
    with open(os.path.join(out, "queries.txt"), "w") as f:
        for q in qs:
            f.write(q + "\n")


main()
