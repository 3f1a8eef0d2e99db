#!/usr/bin/python3
"""A real-text corpus built from what is on this machine (nothing is downloaded), for the index
size comparison of bench/index_size.sh. One flat JSON document per line, in a fixed order:

- every Debian package apt knows (`apt-cache dumpavail`): title = the short description,
  body = description, tags and dependencies;
- every section (.SH / .SS) of every installed manual page in every language
  (/usr/share/man/**/*.gz, troff markup dropped);
- every entry of every changelog under /usr/share/doc (changelog*.gz);
- the other text files under /usr/share/doc (README, NEWS, copyright, ...) in chunks of
  paragraphs of about 2 KB.

Fields: title, body (text); kind, name, section, author, lang (keyword); size (long: bytes of
the body); date (date, when the source has one: changelog entry date, else the file's mtime).
Mapping for scry in bench/workloads/realtext.index.json.

    /usr/bin/python3 bench/real_text_corpus.py > /tmp/realtext.ndjson

Standard library only."""
import argparse
import email.utils
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import time

TROFF_ESC = re.compile(r"\\f[BIRP1-4]|\\f\(..|\\f\[[^]]*\]|\\s[-+]?\d|\\\(..|\\\[[^]]*\]|\\[-&e|^%]")
TROFF_REQ = re.compile(r"^\.\s*(B|I|BI|BR|IB|IR|RB|RI|SM|SB)\s+")


def iso(ts):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(max(0, ts)))


def doc(title, body, kind, name, section, author, lang, date):
    d = {"title": title[:300], "body": body, "kind": kind, "name": name[:200],
         "section": section[:100]}
    if author:
        d["author"] = author[:200]
    d["lang"] = lang
    d["size"] = len(body.encode("utf-8"))
    if date:
        d["date"] = date
    return d


def packages():
    try:
        raw = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return
    for stanza in raw.split("\n\n"):
        f, key = {}, None
        for line in stanza.splitlines():
            if line.startswith(" ") and key:
                f[key] += " " + line.strip()
            elif ":" in line:
                key, v = line.split(":", 1)
                f[key] = v.strip()
        if "Package" not in f or "Description" not in f:
            continue
        body = " ".join(x for x in (f["Description"], f.get("Tag", ""), f.get("Depends", ""),
                                    f.get("Recommends", ""), f.get("Suggests", "")) if x)
        maint = f.get("Maintainer", "")
        yield doc(f["Description"], body, "package", f["Package"], f.get("Section", ""),
                  maint, "en", None)


def man_text(line):
    if line.startswith(("'", ".\\\"", '.\\"')):
        return None
    m = TROFF_REQ.match(line)
    if m:
        line = line[m.end():]
    elif line.startswith("."):
        return None
    return " ".join(TROFF_ESC.sub("", line).replace('"', " ").split())


def man_pages():
    for path in sorted(glob.glob("/usr/share/man/**/*.gz", recursive=True)):
        rel = os.path.relpath(path, "/usr/share/man").split(os.sep)
        lang = "en" if rel[0].startswith("man") else rel[0]
        base = os.path.basename(path)[:-3]
        name, _, sect = base.rpartition(".")
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                src = f.read()
            mtime = os.path.getmtime(path)
        except (OSError, EOFError):
            continue
        if src.startswith(".so "):
            continue
        head, body = "", []

        def flush():
            text = " ".join(t for t in body if t)
            if len(text.split()) >= 5:
                return doc("%s(%s) %s" % (name, sect, head), text, "man", name, sect, "",
                           lang, iso(mtime))
            return None
        for line in src.splitlines():
            if line.startswith((".SH", ".SS")):
                d = flush()
                if d:
                    yield d
                head = " ".join(line[3:].replace('"', " ").split())
                body = []
            else:
                t = man_text(line)
                if t:
                    body.append(t)
        d = flush()
        if d:
            yield d


CL_HEAD = re.compile(r"^(\S+) \(([^)]*)\) ([^;]*);")
CL_TAIL = re.compile(r"^ -- (.*?) <[^>]*>\s+(.*)$")


def changelogs(files):
    for path in files:
        pkg = path.split(os.sep)[4]
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
            mtime = os.path.getmtime(path)
        except (OSError, EOFError):
            continue
        head, body = None, []
        for line in lines:
            m = CL_HEAD.match(line)
            if m:
                head, body = m, []
                continue
            t = CL_TAIL.match(line)
            if t and head:
                try:
                    ts = email.utils.parsedate_to_datetime(t.group(2)).timestamp()
                except (TypeError, ValueError, IndexError, OverflowError):
                    ts = mtime
                text = " ".join(" ".join(body).split())
                if text:
                    yield doc("%s (%s) %s" % (head.group(1), head.group(2), head.group(3)),
                              text, "changelog", pkg, head.group(3).strip(), t.group(1), "en",
                              iso(ts))
                head, body = None, []
            elif head:
                body.append(line.strip())


def doc_files(files):
    for path in files:
        pkg = path.split(os.sep)[4]
        try:
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8", errors="strict") as f:
                src = f.read(4 << 20)
            mtime = os.path.getmtime(path)
        except (OSError, EOFError, UnicodeDecodeError):
            continue
        if "\0" in src:
            continue
        fname = os.path.basename(path)
        chunk, n = [], 0
        paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", src)]
        paras.append(None)
        for p in paras:
            if p is None or (chunk and sum(len(c) for c in chunk) + len(p) > 2000):
                if chunk:
                    n += 1
                    yield doc("%s %s part %d" % (pkg, fname, n), " ".join(chunk), "doc", pkg,
                              fname, "", "en", iso(mtime))
                chunk = []
            if p:
                chunk.append(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-docs", type=int, default=10 ** 9, help="stop after this many")
    a = ap.parse_args()
    docs = sorted(glob.glob("/usr/share/doc/*/*"))
    cl = [p for p in docs if os.path.basename(p).startswith("changelog") and p.endswith(".gz")]
    other = [p for p in docs if p not in set(cl) and os.path.isfile(p) and
             not os.path.islink(p) and os.path.getsize(p) < (8 << 20) and
             re.search(r"(README|NEWS|TODO|copyright|AUTHORS|THANKS|\.txt)(\.gz)?$|"
                       r"^[A-Z]+(\.gz)?$", os.path.basename(p))]
    n, out = 0, sys.stdout
    for gen in (packages(), man_pages(), changelogs(cl), doc_files(other)):
        for d in gen:
            out.write(json.dumps(d, ensure_ascii=False))
            out.write("\n")
            n += 1
            if n >= a.max_docs:
                break
        if n >= a.max_docs:
            break
    print("%d docs" % n, file=sys.stderr)


if __name__ == "__main__":
    main()
