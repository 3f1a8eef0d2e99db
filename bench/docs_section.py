#!/usr/bin/env python3
"""Replaces one generated section of docs/benchmarks.md and leaves the rest of the page alone.

    docs_section.py DOC NAME FILE

FILE's text (which starts with `<!-- BEGIN NAME ...-->` and ends with `<!-- END NAME -->`)
replaces the part of DOC between those two markers, or is appended when DOC has none. Several
scripts write docs/benchmarks.md (bench/run.sh's report, bench/taxis_bench.sh, sections people
write by hand), each owning only its own part.
"""
import os
import re
import sys


def splice(doc_text, name, section):
    section = section.rstrip("\n") + "\n"
    pat = re.compile(r"<!-- BEGIN %s\b.*?<!-- END %s -->\n?" % (re.escape(name), re.escape(name)),
                     re.S)
    if pat.search(doc_text):
        return pat.sub(lambda _: section, doc_text, count=1)
    if doc_text and not doc_text.endswith("\n\n"):
        doc_text = doc_text.rstrip("\n") + "\n\n"
    return doc_text + section


def main():
    doc, name, path = sys.argv[1:4]
    old = open(doc, encoding="utf-8").read() if os.path.exists(doc) else ""
    new = splice(old, name, open(path, encoding="utf-8").read())
    with open(doc, "w", encoding="utf-8") as f:
        f.write(new)
    print("docs_section: %s section of %s updated" % (name, doc))


if __name__ == "__main__":
    main()
