#!/usr/bin/env python3
"""Writes the word list of the light-stemmer oracle (tests/fixtures/text/light_words.txt):
lines "<language>\t<word>", 2,000 lowercase words per language sampled evenly from Debian's
word lists (packages wngerman, wfrench, wspanish, witalian, wportuguese), so that every
suffix rule of the German, French, Spanish, Italian and Portuguese light stemmers is met.
Usage: make_light_words.py > tests/fixtures/text/light_words.txt"""
import sys

LISTS = [("german", "/usr/share/dict/ngerman"), ("french", "/usr/share/dict/french"),
         ("spanish", "/usr/share/dict/spanish"), ("italian", "/usr/share/dict/italian"),
         ("portuguese", "/usr/share/dict/portuguese")]
PER_LANGUAGE = 2000

for lang, path in LISTS:
    with open(path, encoding="utf-8") as f:
        words = sorted({w.strip().lower() for w in f
                        if w.strip().isalpha() and len(w.strip()) >= 3})
    step = max(1, len(words) // PER_LANGUAGE)
    for w in words[::step][:PER_LANGUAGE]:
        sys.stdout.write("%s\t%s\n" % (lang, w))
