#!/usr/bin/env python3
"""Writes the sample documents for `make run` as NDJSON (one document per line) to stdout:
every installed Debian package (from /var/lib/dpkg/status) and the NAME line of up to 4,000
manual pages under /usr/share/man. Nothing is downloaded; the text is what ships with the
system, so the README's examples ("search for compression tools") have real answers."""
import glob
import gzip
import json
import re
import sys


def packages():
    try:
        text = open("/var/lib/dpkg/status", encoding="utf-8", errors="replace").read()
    except OSError:
        return
    for block in text.split("\n\n"):
        fields, last = {}, None
        for line in block.splitlines():
            if line.startswith((" ", "\t")) and last:
                fields[last] += "\n" + line.strip()
            elif ":" in line:
                k, v = line.split(":", 1)
                last = k.strip()
                fields[last] = v.strip()
        if "Package" not in fields:
            continue
        desc = fields.get("Description", "")
        title, _, body = desc.partition("\n")
        body = "\n".join(l for l in body.splitlines() if l != ".")
        doc = {"name": fields["Package"], "kind": "package",
               "section": fields.get("Section", "misc"),
               "title": title, "description": body,
               "version": fields.get("Version", ""),
               "maintainer": fields.get("Maintainer", ""),
               "priority": fields.get("Priority", "optional")}
        if fields.get("Installed-Size", "").isdigit():
            doc["installed_size_kb"] = int(fields["Installed-Size"])
        yield doc


NAME_RE = re.compile(r"^\.SH\s+\"?NAME\"?\s*$", re.I)


def manpages(limit=4000):
    n = 0
    for path in sorted(glob.glob("/usr/share/man/man[1-8]/*.gz")):
        if n >= limit:
            break
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                lines = f.read(20000).splitlines()
        except (OSError, EOFError):
            continue
        for i, line in enumerate(lines):
            if NAME_RE.match(line):
                rest = []
                for l in lines[i + 1:i + 4]:
                    if l.startswith(".SH"):
                        break
                    if not l.startswith(".") or l.startswith(".B"):
                        rest.append(re.sub(r"\\f[BIRP]|\\\(..|^\.B\s*", "", l))
                text = " ".join(rest).replace("\\-", "-").replace("\\", "")
                name, sep, title = text.partition(" - ")
                if sep and title.strip():
                    section = path.split("/")[-2][3:]
                    yield {"name": name.strip(), "kind": "manpage", "section": "man" + section,
                           "title": title.strip(), "description": title.strip()}
                    n += 1
                break


def main():
    out = sys.stdout
    for doc in packages():
        out.write(json.dumps(doc, ensure_ascii=False) + "\n")
    for doc in manpages():
        out.write(json.dumps(doc, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
