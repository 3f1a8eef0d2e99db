#!/usr/bin/python3
"""Builds tests/fixtures/text/sentences.txt: real English sentences taken from text that Debian
ships (common licenses, package copyright files, man pages), then the hand-written edge cases
of tests/fixtures/text/handmade.txt. Deterministic for a given set of installed files.
Usage: make_sentences.py > tests/fixtures/text/sentences.txt"""
import glob, gzip, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")

def sentences(text):
    text = re.sub(r"\s+", " ", text)
    for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\"'(])", text):
        s = s.strip()
        if 40 <= len(s) <= 400 and "\t" not in s:
            yield s

def main():
    out, seen = [], set()
    def take(text, limit):
        n = 0
        for s in sentences(text):
            if s in seen:
                continue
            seen.add(s)
            out.append(s)
            n += 1
            if n >= limit:
                break
    for name in ["GPL-3", "Apache-2.0", "Artistic", "MPL-2.0", "LGPL-2.1", "GFDL-1.3"]:
        p = "/usr/share/common-licenses/" + name
        if os.path.exists(p):
            take(open(p, encoding="utf-8", errors="replace").read(), 15)
    for p in sorted(glob.glob("/usr/share/doc/*/copyright"))[::50]:
        take(open(p, encoding="utf-8", errors="replace").read(), 3)
    for p in sorted(glob.glob("/usr/share/man/man1/*.1.gz"))[::150]:
        try:
            raw = gzip.open(p).read().decode("utf-8", "replace")
        except OSError:
            continue
        raw = re.sub(r"^\.[A-Za-z]+ ?", "", raw, flags=re.M)
        raw = re.sub(r"\\f[BIRP]|\\-|\\\(..|\\&|\\e", "", raw)
        take(raw, 2)
    for s in out:
        print(s)
    with open(os.path.join(ROOT, "tests/fixtures/text/handmade.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#!"):
                continue
            print(line)

main()
