#!/usr/bin/env python3
"""Writes docs/benchmarks.md and its gnuplot charts from a run's result files.

    report.py --results DIR [--docs docs] [--seconds N] [--quick] [--lucene FILE]

DIR holds one `scry bench` result JSON per workload (and load.txt from bench/run.sh). The
previous run's results are kept in docs/benchmarks/results/; this run is compared with them
(QPS ratio per cell, hit counts per query) and then replaces them. --lucene gives Lucene 8.7
in-process numbers per class for a "vs Lucene 8.7" column: the lucene.tsv of
bench/lucene_wiki.sh or bench/query_bench.sh (class, mode, queries, median_us, p99_us,
hits_sum), or JSON {"class": qps | {"qps": ..} | {"median_us": ..}, ...}. The ratio is
Lucene's median latency over scry's p50 at one connection (> 1: scry faster).

Only the part of docs/benchmarks.md between `<!-- BEGIN make_bench -->` and
`<!-- END make_bench -->` is rewritten; other sections (bench/taxis_bench.sh's, hand-written
ones) are kept (bench/docs_section.py).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docs_section import splice  # noqa: E402


ORDER = ["luceneutil.top10", "luceneutil.count", "luceneutil.top10total", "luceneutil.top100", "game.top10", "game.count",
         "taxis", "logs", "taxis.aggs", "logs.aggs"]


def load_dir(d):
    out = {}
    paths = glob.glob(os.path.join(d, "*.json"))
    rank = lambda p: (ORDER.index(os.path.basename(p)[:-5]) if os.path.basename(p)[:-5] in ORDER
                      else len(ORDER), p)
    for p in sorted(paths, key=rank):
        try:
            with open(p) as f:
                r = json.load(f)
        except (OSError, ValueError):
            continue
        if "cells" in r:
            out[os.path.basename(p)[:-5]] = r
    return out


MODE_OF = {"luceneutil.top10": "TOP_10", "luceneutil.count": "COUNT",
           "luceneutil.top10total": "TOP_10_COUNT"}


def load_lucene(path):
    """Returns {mode or None: {class: {"median_us": .., "hits": ..}}}. A .tsv is the Lucene
    output of bench/lucene_wiki.sh / bench/query_bench.sh (class, mode, queries, median_us,
    p99_us, hits_sum), single-threaded in-process."""
    if not path or not os.path.exists(path):
        return {}
    if path.endswith(".tsv"):
        out = {}
        for line in open(path):
            f = line.rstrip("\n").split("\t")
            if len(f) >= 4 and f[0] != "class" and float(f[3]) > 0:
                out.setdefault(f[1], {})[f[0]] = {
                    "median_us": float(f[3]), "hits": int(f[5]) if len(f) > 5 else None}
        return out
    with open(path) as f:
        j = json.load(f)
    if isinstance(j, dict):
        j = j.get("classes", j)

    def med(v):
        if not isinstance(v, dict):  # QPS of a single-threaded harness
            return {"median_us": 1e6 / float(v), "hits": None}
        if v.get("median_us"):
            return {"median_us": float(v["median_us"]), "hits": v.get("hits")}
        return {"median_us": 1e6 / float(v["qps"]), "hits": v.get("hits")}
    if isinstance(j, dict):
        return {None: {k: med(v) for k, v in j.items()}}
    return {None: {x["class"]: med(x) for x in j if "class" in x}}


def cells_by(r):
    return {(c["class"], c["conns"]): c for c in r["cells"]}


def bad_cell(c):
    """More than half of the cell's requests were errors: its numbers measure failures."""
    return c["errors"] * 2 > c["requests"]


def fmt_qps(q):
    return "%.0f" % q if q >= 100 else "%.1f" % q


def fmt_us(us):
    return "%.2f ms" % (us / 1000.0) if us >= 1000 else "%d µs" % us


def chart(docs_dir, name, rows, conns, title, ylabel, cols, logscale=False):
    """rows: [(label, [values per col])]; writes docs/benchmarks/<name>.png with gnuplot."""
    if not rows or not shutil.which("gnuplot"):
        return None
    img_dir = os.path.join(docs_dir, "benchmarks")
    os.makedirs(img_dir, exist_ok=True)
    data = os.path.join(img_dir, name + ".dat")
    with open(data, "w") as f:
        for label, vals in rows:
            f.write('"%s" %s\n' % (label, " ".join("%g" % max(v, 1e-9) for v in vals)))
    png = name + ".png"
    plots = ", ".join("'%s' using %d:xtic(1) title '%s'" % (data, i + 2, c)
                      for i, c in enumerate(cols))
    script = """set terminal pngcairo size 1100,520 noenhanced font ',9'
set output '%s'
set title '%s'
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set xtics rotate by -40 scale 0
set ylabel '%s'
set grid ytics
set key top right
%s
plot %s
""" % (os.path.join(img_dir, png), title, ylabel, "set logscale y" if logscale else "", plots)
    try:
        subprocess.run(["gnuplot"], input=script.encode(), check=True, capture_output=True)
    except (subprocess.CalledProcessError, OSError) as e:
        print("report: gnuplot failed for %s: %s" % (name, e), file=sys.stderr)
        return None
    os.remove(data)
    return "benchmarks/" + png


def validation_diffs(cur, prev):
    if not prev:
        return None
    old = {(q["path"], q["body"]): q for q in prev.get("validation", [])}
    n = diff = 0
    for q in cur.get("validation", []):
        o = old.get((q["path"], q["body"]))
        if o is None or o["error"] or q["error"]:
            continue
        n += 1
        diff += o["total"] != q["total"] or o["returned"] != q["returned"]
    return n, diff


def agg_facts(L, results, name, cells):
    """For an aggregation workload: per class the docs it collects, ns per collected doc at
    scry's 1-connection p50 and the peak request-breaker bytes (bench/agg_probe.py's
    <name>.probe.json), then the operations that were not timed with the server's answer
    (<name>.failed.json, written by bench/run.sh)."""
    path = os.path.join(results, name + ".probe.json")
    probe = json.load(open(path)) if os.path.exists(path) else {}
    if probe:
        L.append("Per operation (request cache off: scry has none, every request recomputes; "
                 "docs collected = the query's exact hit count; peak breaker = the request "
                 "breaker's `peak_used_in_bytes`, reset before one request):\n")
        L.append("| class | docs collected | p50 1c | ns per doc | peak breaker bytes |")
        L.append("|---|---:|---:|---:|---:|")
        for cls, p in probe.items():
            if "error" in p:
                continue
            one = cells.get((cls, 1))
            p50 = one["latency_us"]["p50"] if one else 0
            docs = p.get("docs") or 0
            L.append("| %s | %d | %s | %s | %d |" % (
                cls, docs, fmt_us(p50) if p50 else "-",
                "%.2f" % (p50 * 1000.0 / docs) if p50 and docs else "-",
                p.get("peak_breaker_bytes") or 0))
        L.append("")
    path = os.path.join(results, name + ".failed.json")
    failed = json.load(open(path)) if os.path.exists(path) else []
    if failed:
        L.append("Not timed (the server does not answer them yet):\n")
        L.append("| class | server's answer |\n|---|---|")
        for q in failed:
            reason = q.get("error_body", "")
            try:
                reason = json.loads(reason)["error"]["reason"]
            except (ValueError, KeyError, TypeError):
                reason = reason[:120]
            L.append("| %s | HTTP %s: %s |" % (q["class"], q["status"],
                                               str(reason).replace("|", "\\|")))
        L.append("")


def not_supported(L, name, r):
    """A workload run with --validate-only because the server rejects it (aggregations): one
    row per class with the server's answer, instead of a grid of error cells."""
    L.append("## %s: not supported yet\n" % name)
    L.append("Workload `bench/workloads/%s.txt` is validated (every request once) but not timed: "
             "the server does not answer it yet, so its cells would only measure error "
             "responses. bench/run.sh times it as soon as every request succeeds.\n" % name)
    L.append("| class | requests | answered | server's answer |\n|---|---:|---:|---|")
    rows = {}
    for q in r.get("validation", []):
        x = rows.setdefault(q["class"], [0, 0, ""])
        x[0] += 1
        if q["error"]:
            if not x[2]:
                reason = q.get("error_body", "")
                try:
                    reason = json.loads(reason)["error"]["reason"]
                except (ValueError, KeyError, TypeError):
                    reason = reason[:120]
                x[2] = "HTTP %s: %s" % (q["status"], reason)
        else:
            x[1] += 1
    for cls, (n, ok, why) in rows.items():
        L.append("| %s | %d | %d | %s |" % (cls, n, ok, (why or "ok").replace("|", "\\|")))
    L.append("")


def count_hits(r):
    """Per class, the sum of the validation pass's exact totals (COUNT workloads)."""
    out = {}
    for q in r.get("validation", []):
        if q["error"] or q["total"] < 0:
            out[q["class"]] = None
        elif out.get(q["class"], 0) is not None:
            out[q["class"]] = out.get(q["class"], 0) + q["total"]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--docs", default="docs")
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--lucene", default=None)
    a = ap.parse_args()
    cur = load_dir(a.results)
    if not cur:
        sys.exit("report: no result files in %s" % a.results)
    keep = os.path.join(a.docs, "benchmarks", "results")
    prev = load_dir(keep)
    # regenerating the report of the same run must not compare the run with itself
    prev = {k: v for k, v in prev.items()
            if not (k in cur and v.get("started_at") == cur[k].get("started_at"))}
    # ratios only between runs on the same corpus
    prev_other = {k: v.get("corpus") for k, v in prev.items()
                  if k in cur and v.get("corpus") != cur[k].get("corpus")}
    prev = {k: v for k, v in prev.items() if k in cur and k not in prev_other}
    lpath = a.lucene
    lucene_modes = load_lucene(lpath)
    first = next(iter(cur.values()))
    m = first.get("machine", {})
    s = first.get("settings", {})
    L = []
    L.append("<!-- BEGIN make_bench (bench/report.py writes this part; sections outside it are "
             "kept) -->")
    L.append("# Benchmarks\n")
    L.append("Generated by `make bench%s` (bench/run.sh, bench/report.py); see the end of this "
             "part for how to run and compare.\n" % ("-quick" if a.quick else ""))
    L.append("| | |\n|---|---|")
    L.append("| run started | %s |" % first.get("started_at", "?"))
    L.append("| total run time | %d s%s |" % (a.seconds, " (quick mode)" if a.quick else ""))
    L.append("| build | %s |" % first.get("build", ""))
    L.append("| machine | %s, %s CPUs, %.1f GB RAM (%s) |" % (
        m.get("cpu", "?"), m.get("nproc", "?"), m.get("mem_total_kb", 0) / 1048576.0,
        m.get("hostname", "")))
    L.append("| corpus | %s |" % first.get("corpus", ""))
    L.append("| grid | connections %s, warm-up %s s, %s × %s s measured per cell, "
             "keep-alive, no pipelining, request_cache=false |" % (
                 ",".join(map(str, s.get("conns", []))), s.get("warmup_s"), s.get("reps"),
                 s.get("duration_s")))
    la = os.path.join(a.results, "loadavg.txt")
    if os.path.exists(la):
        ones = [float(l.split()[1]) for l in open(la) if len(l.split()) >= 2]
        if ones:
            L.append("| machine load | 1-minute load average %.1f to %.1f during the grid (%s CPUs; "
                     "above the CPU count, other work shared the machine and absolute numbers are "
                     "noisy) |" % (min(ones), max(ones), m.get("nproc", "?")))
    if lucene_modes:
        L.append("| Lucene 8.7 | in-process on the same wiki corpus (bench/lucene_wiki.sh), "
                 "single-threaded: column `vs Lucene 8.7` |")
    if prev:
        pf = next(iter(prev.values()))
        L.append("| previous run | %s, %s: columns `vs prev` |" % (pf.get("started_at", "?"),
                                                                  pf.get("build", "")))
    elif prev_other:
        L.append("| previous run | on another corpus (%s): no ratios |"
                 % next(iter(prev_other.values())))
    L.append("")
    load_txt = os.path.join(a.results, "load.txt")
    if os.path.exists(load_txt):
        L.append("## Loading\n")
        L.append("| index | documents | seconds | docs/s |\n|---|---:|---:|---:|")
        for line in open(load_txt):
            f = line.split()
            if len(f) == 4:
                secs = float(f[3]) - float(f[2])
                L.append("| %s | %s | %.1f | %.0f |" % (f[0], f[1], secs,
                                                        int(f[1]) / secs if secs > 0 else 0))
        L.append("")
    notes = os.path.join(a.results, "notes.txt")
    if os.path.exists(notes):
        L.append("## Notes\n")
        for line in open(notes):
            L.append("- " + line.strip())
        L.append("")
    for name, r in cur.items():
        cells = cells_by(r)
        if not cells:
            not_supported(L, name, r)
            continue
        conns = sorted({c for _, c in cells})
        classes = []
        for c in r["cells"]:
            if c["class"] not in classes:
                classes.append(c["class"])
        pc = cells_by(prev[name]) if name in prev else {}
        lucene = lucene_modes.get(MODE_OF.get(name), lucene_modes.get(None, {}))
        if not name.startswith("luceneutil"):
            lucene = {}
        hits = count_hits(r) if MODE_OF.get(name) in ("COUNT", "TOP_10_COUNT") else {}
        L.append("## %s\n" % name)
        L.append("Workload `bench/workloads/%s.txt`; QPS is the median of the repetitions; "
                 "latency over all measured requests.\n" % name)
        bad = [q for q in r.get("validation", []) if q["error"]]
        if bad:
            L.append("**%d of %d requests failed validation** (a response is an error unless it "
                     "is 200 with `\"timed_out\":false` and `\"failed\":0`); their cells "
                     "measure error responses and are marked ⚠. First error (HTTP %s): `%s`\n"
                     % (len(bad), len(r["validation"]), bad[0]["status"],
                        bad[0].get("error_body", "")[:200].replace("`", "'")))
        hdr = "| class |" + "".join(" QPS %dc |" % c for c in conns)
        hdr += " p50 1c | p90 1c | p99 1c | max 1c | errors |"
        if pc:
            hdr += "".join(" vs prev %dc |" % c for c in conns)
        if lucene:
            hdr += " Lucene 8.7 p50 | vs Lucene 8.7 |"
            if hits:
                hdr += " hits = Lucene |"
        L.append(hdr)
        L.append("|---|" + "---:|" * (hdr.count("|") - 2))
        qrows, lrows, vrows = [], [], []
        for cls in classes:
            row = "| %s |" % cls
            q = []
            for c in conns:
                cell = cells.get((cls, c))
                q.append(cell["qps"] if cell else 0)
                warn = " ⚠" if cell and bad_cell(cell) else ""
                row += " %s%s |" % (fmt_qps(cell["qps"]) if cell else "-", warn)
            one = cells.get((cls, conns[0]))
            lat = one["latency_us"] if one else {}
            errs = sum(cells[(cls, c)]["errors"] for c in conns if (cls, c) in cells)
            row += " %s | %s | %s | %s | %d |" % tuple(
                [fmt_us(lat.get(k, 0)) for k in ("p50", "p90", "p99", "max")] + [errs])
            if pc:
                for c in conns:
                    o, n = pc.get((cls, c)), cells.get((cls, c))
                    ok = o and n and o["qps"] and not bad_cell(o) and not bad_cell(n)
                    row += " %s |" % ("%.2f×" % (n["qps"] / o["qps"]) if ok else "-")
            if lucene:
                lc = lucene.get(cls)
                ok = lc and lat.get("p50") and one and not bad_cell(one) and conns[0] == 1
                row += " %s | %s |" % (fmt_us(lc["median_us"]) if lc else "-",
                                       "%.2f×" % (lc["median_us"] / lat["p50"]) if ok else "-")
                if ok:
                    vrows.append((cls, [lat["p50"] / 1000.0, lc["median_us"] / 1000.0]))
                if hits:
                    sh, lh = hits.get(cls), lc.get("hits") if lc else None
                    row += " %s |" % ("-" if sh is None or lh is None else "=" if sh == lh else
                                      "scry %d, Lucene %d" % (sh, lh))
            L.append(row)
            qrows.append((cls, q))
            lrows.append((cls, [lat.get("p50", 0) / 1000.0, lat.get("p90", 0) / 1000.0,
                                lat.get("p99", 0) / 1000.0]))
        L.append("")
        if name.endswith(".aggs"):
            agg_facts(L, a.results, name, cells)
        png = chart(a.docs, name + "-qps", qrows, conns, "%s: QPS per class" % name, "QPS",
                    ["%d conn" % c for c in conns], logscale=True)
        if png:
            L.append("![%s QPS](%s)\n" % (name, png))
        png = chart(a.docs, name + "-latency", lrows, conns,
                    "%s: latency at %d connection(s)" % (name, conns[0]), "ms",
                    ["p50", "p90", "p99"], logscale=True)
        if png:
            L.append("![%s latency](%s)\n" % (name, png))
        png = chart(a.docs, name + "-lucene", vrows, conns,
                    "%s: median latency, scry over HTTP (1 conn) vs Lucene 8.7 in-process" % name,
                    "ms", ["scry p50 (HTTP)", "Lucene 8.7 median (in-process)"], logscale=True)
        if png:
            L.append("![%s vs Lucene](%s)\n" % (name, png))
        v = r.get("validation", [])
        if v:
            n_err = sum(1 for q in v if q["error"])
            line = "Validation: %d requests, %d errors" % (len(v), n_err)
            d = validation_diffs(r, prev.get(name))
            if d:
                line += "; hit counts compared with the previous run: %d queries, %d differ" % d
            L.append(line + ".\n")
    L.append("## How to run\n")
    L.append("```\nmake bench          # standard run (~20 min on 2 cores): build, generate, load, "
             "force-merge, validate, grid, Lucene 8.7 on the same corpus, this page\n"
             "make bench-quick    # the same at small size without Lucene, under 3 minutes\n"
             "WIKI_DOCS=2000000 TAXIS_DOCS=5000000 LOGS_DOCS=5000000 "
             "REPS=5 DURATION=10 bash bench/run.sh   # larger\n"
             "SERVER_URL=http://host:9200 bash bench/run.sh   # an already loaded server "
             "(Elasticsearch, OpenSearch)\n"
             "scry bench compare A.json B.json   # per-cell ratios, differing hit counts\n```\n")
    if lucene_modes:
        L.append("`vs Lucene 8.7` = Lucene 8.7's median latency over scry's p50 at one "
                 "connection, per class (> 1: scry faster). Lucene runs in-process and "
                 "single-threaded on the same generated corpus (`body` only, StandardAnalyzer "
                 "without stop words, one segment, the same query texts: bench/lucene_wiki.sh "
                 "with bench/LuceneQueryBench.java; TOP_10 collects totals up to 1,000, COUNT is "
                 "IndexSearcher.count); scry's latency includes the HTTP round trip and JSON, so "
                 "the ratio understates scry. `hits = Lucene` compares the sum of the exact "
                 "counts per class. The run shares its 2 cores with whatever else the machine "
                 "does; both sides ran in the same session, one after the other.\n")
    L.append("Raw results of this run: `docs/benchmarks/results/*.json`. Methodology, the driver "
             "and the generators are described in `bench/README.md`.\n")
    L.append("<!-- END make_bench -->")
    path = os.path.join(a.docs, "benchmarks.md")
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    if "<!-- BEGIN make_bench" not in old and old.startswith("# Benchmarks\n\nGenerated by"):
        # a page written before the markers: everything up to the raw-results line was ours
        i = old.find("Raw results of this run")
        old = old[old.find("\n", i) + 1:].lstrip("\n") if i >= 0 else ""
        old = "<!-- BEGIN make_bench -->\n<!-- END make_bench -->\n\n" + old
    elif "<!-- BEGIN make_bench" not in old:
        old = "<!-- BEGIN make_bench -->\n<!-- END make_bench -->\n\n" + old
    with open(path, "w", encoding="utf-8") as f:
        f.write(splice(old, "make_bench", "\n".join(L) + "\n"))
    os.makedirs(keep, exist_ok=True)
    for p in glob.glob(os.path.join(keep, "*.json")) + glob.glob(os.path.join(keep, "*.tsv")):
        os.remove(p)
    for name in cur:
        shutil.copy(os.path.join(a.results, name + ".json"), os.path.join(keep, name + ".json"))
    if lpath and os.path.exists(lpath) and lpath.endswith(".tsv"):
        shutil.copy(lpath, os.path.join(keep, "lucene.tsv"))
    print("report: wrote %s" % path)


if __name__ == "__main__":
    main()
