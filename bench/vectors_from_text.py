#!/usr/bin/python3
"""Vector sets from real text on this machine, for kNN tests and benchmarks (no model can be
downloaded here): the long descriptions of every Debian package apt knows (`apt-cache
dumpavail`, else /var/lib/dpkg/status) and the paragraphs of the installed manual pages become
TF-IDF vectors (sublinear tf, idf = ln(N / df), words seen in >= 2 texts), reduced to --dims
dimensions by a Gaussian random projection (each word gets a fixed pseudo-random N(0, 1/dims)
vector; a text is the TF-IDF-weighted sum) and L2-normalized, so cosine / dot_product apply.
The last --queries texts are held out as queries. Writes <out>/base.fvecs and
<out>/query.fvecs (per vector: int32 dims, then dims float32, little-endian) and
<out>/texts.txt (one text per line, base then queries, for looking at results).

    /usr/bin/python3 bench/vectors_from_text.py --dims 256 --max-docs 100000 --out /tmp/textvec

Uses the standard library and numpy (Debian python3-numpy, scripts/deps.sh)."""
import argparse
import collections
import glob
import gzip
import os
import random
import re
import subprocess
import sys

import numpy as np

WORD = re.compile(r"[a-z][a-z0-9]+")
STOP = set("""a an and are as at be by can for from has have in is it its of on or that the
this to was were will with which you your not this these those into also may more than such
other use used using when if all any can each""".split())


def package_texts():
    try:
        raw = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        raw = ""
    if raw.count("\nPackage:") < 1000:
        with open("/var/lib/dpkg/status", encoding="utf-8", errors="replace") as f:
            raw = f.read()
    seen = set()
    for stanza in raw.split("\n\n"):
        desc, name, inside = [], None, False
        for line in stanza.splitlines():
            if line.startswith("Package:"):
                name = line.split(":", 1)[1].strip()
            if line.startswith("Description:"):
                desc.append(line.split(":", 1)[1])
                inside = True
            elif inside and line.startswith(" "):
                desc.append(line.strip(" ."))
            elif inside:
                inside = False
        if name and desc and name not in seen:
            seen.add(name)
            yield " ".join(desc)


def man_texts(limit):
    """Paragraphs of at least 12 words of the English manual pages (troff markup dropped)."""
    files = sorted(glob.glob("/usr/share/man/man[1-8]/*.gz"))
    n = 0
    for path in files:
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                src = f.read()
        except (OSError, EOFError):
            continue
        para = []
        for line in src.splitlines() + [".PP"]:
            if line.startswith((".PP", ".SH", ".TP", ".IP", ".LP", ".P", ".SS")) or not line.strip():
                text = " ".join(para)
                if len(text.split()) >= 12:
                    yield text
                    n += 1
                    if n >= limit:
                        return
                para = []
            elif line.startswith(".") or line.startswith("'"):
                para.append(re.sub(r"^\.\w+\s*", "", line))
            else:
                para.append(re.sub(r"\\f[BIRP]|\\-|\\\(..|\\.", " ", line))


def fvecs_write(path, m):
    with open(path, "wb") as f:
        d = np.int32(m.shape[1]).tobytes()
        for row in m.astype(np.float32):
            f.write(d)
            f.write(row.tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dims", type=int, default=256)
    ap.add_argument("--max-docs", type=int, default=100000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    texts = list(package_texts())
    texts += list(man_texts(max(0, a.max_docs + a.queries - len(texts))))
    texts = list(dict.fromkeys(" ".join(t.split()) for t in texts))  # distinct texts only
    random.Random(a.seed).shuffle(texts)
    texts = texts[:a.max_docs + a.queries]
    toks = [[w for w in WORD.findall(t.lower()) if w not in STOP] for t in texts]
    df = collections.Counter(w for ws in toks for w in set(ws))
    vocab = {w: i for i, w in enumerate(sorted(w for w, c in df.items() if c >= 2))}
    n = len(texts)
    idf = np.zeros(len(vocab), dtype=np.float32)
    for w, i in vocab.items():
        idf[i] = np.log(n / df[w])
    rng = np.random.default_rng(a.seed)
    proj = rng.standard_normal((len(vocab), a.dims), dtype=np.float32) / np.sqrt(a.dims)
    out = np.zeros((n, a.dims), dtype=np.float32)
    keep = np.ones(n, dtype=bool)
    for r, ws in enumerate(toks):
        c = collections.Counter(w for w in ws if w in vocab)
        if not c:
            keep[r] = False
            continue
        ids = np.fromiter((vocab[w] for w in c), dtype=np.int64)
        tf = np.fromiter((1 + np.log(v) for v in c.values()), dtype=np.float32)
        v = (tf * idf[ids]) @ proj[ids]
        nv = np.linalg.norm(v)
        if nv == 0:
            keep[r] = False
            continue
        out[r] = v / nv
    # distinct vectors only (texts with the same words): ties would make recall ambiguous
    _, first = np.unique(np.round(out, 5), axis=0, return_index=True)
    dup = np.ones(n, dtype=bool)
    dup[first] = False
    keep &= ~dup
    out = out[keep]
    texts = [t for t, k in zip(texts, keep) if k]
    q = min(a.queries, len(out) // 10)
    os.makedirs(a.out, exist_ok=True)
    fvecs_write(os.path.join(a.out, "base.fvecs"), out[:-q])
    fvecs_write(os.path.join(a.out, "query.fvecs"), out[-q:])
    with open(os.path.join(a.out, "texts.txt"), "w") as f:
        for t in texts:
            f.write(" ".join(t.split())[:300] + "\n")
    print("texts %d (packages + man paragraphs), vocab %d, base %d, queries %d, dims %d -> %s"
          % (n, len(vocab), len(out) - q, q, a.dims, a.out), file=sys.stderr)


if __name__ == "__main__":
    main()
