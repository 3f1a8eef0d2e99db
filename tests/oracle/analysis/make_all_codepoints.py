#!/usr/bin/python3
"""Prints one line per code point (every code point of planes 0 and 1, the C0/C1 controls,
every 7th of plane 2, the tags block and some private use; no CR/LF/NEL/LS/PS, which would
split lines) in four contexts: "a<X>a <X> 1<X>1 <X><X>". Run through Lucene and scry by
scripts/test.d/20-analysis-oracle.sh: every character class must agree with Lucene's.
Usage: make_all_codepoints.py > lines.txt"""
import sys

cps = (list(range(0x01, 0xD800)) + list(range(0xE000, 0x20000)) +
       list(range(0x20000, 0x30000, 7)) + list(range(0xE0000, 0xE0200)) +
       list(range(0xF0000, 0xF0100)))
out = sys.stdout
for c in cps:
    if c in (0x0A, 0x0D, 0x85, 0x2028, 0x2029):
        continue
    x = chr(c)
    out.write("a" + x + "a " + x + " 1" + x + "1 " + x + x + "\n")
