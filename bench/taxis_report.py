#!/usr/bin/env python3
"""The report of bench/taxis_bench.sh: reads OUT/scry.json (`scry bench run`), OUT/lucene.tsv
(`LucenePointsBench taxis`) and OUT/load.times, writes OUT/taxis.md (the "Points, ranges and
sorts on nyc_taxis" section of docs/benchmarks.md, between its markers) and prints it. Exits 3
when an exact count differs between scry and Lucene or scry answered an error.

    taxis_report.py OUT "taxis DOCS SEED" RUN_SECONDS
"""
import json
import os
import sys
import time

OPS = [  # class, what (the scry request; LucenePointsBench.TaxisCases does the same)
    ("range_count", "`range` total_amount gte 5 lt 15: exact count (`size: 0`, "
                    "`track_total_hits: true`)"),
    ("range_total", "the same range, Rally body + `track_total_hits: true` (top 10, exact total)"),
    ("range", "the same range, Rally body (top 10, totals up to 10,000)"),
    ("date_range_count", "`range` dropoff_datetime gte 01/01/2015 lte 21/01/2015, `format` "
                         "dd/MM/yyyy: exact count"),
    ("date_range_total", "the same date range, top 10 with `track_total_hits: true`"),
    ("date_range", "the same date range, default request (top 10, totals up to 10,000)"),
    ("sort_pickup_desc_1000_total", "match_all sorted by pickup_datetime desc, size 1000, "
                                    "`track_total_hits: true`"),
    ("sort_pickup_desc_1000", "match_all sorted by pickup_datetime desc, size 1000 (totals up "
                              "to 10,000)"),
    ("sort_pickup_desc_1000_nototal", "the same sort with `track_total_hits: false`"),
    ("sort_passenger_desc_total", "match_all sorted by passenger_count desc, top 10, "
                                  "`track_total_hits: true`"),
    ("sort_passenger_desc", "match_all sorted by passenger_count desc, top 10 (totals up to "
                            "10,000)"),
    ("sort_passenger_desc_nototal", "the same sort with `track_total_hits: false`"),
]
EXACT = [c for c, _ in OPS if c.endswith(("_count", "_total"))]


def fus(us):
    return "%.2f ms" % (us / 1000.0) if us >= 1000 else "%d µs" % us


def main():
    out, meta, secs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    r = json.load(open(os.path.join(out, "scry.json")))
    cells = {c["class"]: c for c in r["cells"]}
    val = {q["class"]: q for q in r["validation"]}
    luc = {}
    for line in open(os.path.join(out, "lucene.tsv")):
        f = line.rstrip("\n").split("\t")
        if f[0] != "case":
            luc[f[0]] = (int(f[1]), float(f[2]) * 1000.0)  # hits, median µs
    ops = [(c, w) for c, w in OPS if c in val and c in luc]
    bad = []
    for cls, _ in ops:
        if val[cls]["error"]:
            bad.append("%s: scry answered an error: %s" % (cls, val[cls].get("error_body", "")[:200]))
        elif cls in EXACT and val[cls]["total"] != luc[cls][0]:
            bad.append("%s: scry counts %d, Lucene %d" % (cls, val[cls]["total"], luc[cls][0]))
    p50 = {c: cells[c]["latency_us"]["p50"] for c, _ in ops if c in cells}
    m, st = r.get("machine", {}), r["settings"]
    docs, seed = meta.split()[1], meta.split()[2]
    L = ["<!-- BEGIN taxis_bench (bench/taxis_bench.sh writes this section) -->",
         "## Points, ranges and sorts on nyc_taxis (scry vs Lucene 8.7)\n",
         "`bench/taxis_bench.sh` (issue #5), run %s on %s (%s CPUs). %s documents from `scry gen "
         "taxis --seed %s` with the Rally nyc_taxis mapping, loaded with `scry load` into a release "
         "`scry serve` (one search thread), force-merged to one segment, measured with `scry bench "
         "run` over HTTP: one connection, `request_cache=false`, p50 over %s × %s s after %s s "
         "warm-up. Lucene 8.7 in-process (`bench/LucenePointsBench.java taxis`): the same documents "
         "as Elasticsearch maps them (LongPoint / IntPoint + NumericDocValues, one segment), the "
         "same operations (`IndexSearcher.count`; `TopScoreDocCollector` / `TopFieldCollector` "
         "with a total threshold of 10,000 or unbounded; sorts with `setCanUsePoints`), median of "
         "%s runs after a JIT warm-up. scry's time includes the HTTP round trip, JSON and (for "
         "sorts) fetching `_source` of the hits; Lucene's does not. The machine was shared with "
         "four other people's builds and benchmarks during the run: absolute times are noisy, "
         "the ratios come from one run side by side.\n" % (
             time.strftime("%Y-%m-%d", time.gmtime(os.path.getmtime(os.path.join(out, "scry.json")))),
             m.get("cpu", "?"), m.get("nproc", "?"), docs, seed, st["reps"], st["duration_s"],
             st["warmup_s"], os.environ.get("RUNS", "21")),
         "| operation | scry hits | scry p50 | Lucene hits | Lucene median | Lucene / scry |",
         "|---|---:|---:|---:|---:|---:|"]
    for cls, what in ops:
        v, (lh, lmed) = val[cls], luc[cls]
        sh = "%d%s" % (v["total"], " (≥)" if cls not in EXACT and v["total"] >= 10000 else "")
        lhs = "%d%s" % (lh, " (≥)" if cls not in EXACT and lh >= 10000 else "")
        if cls.endswith("_nototal"):
            sh = lhs = "-"
        ratio = "**%.2f×**" % (lmed / p50[cls]) if p50.get(cls) else "-"
        L.append("| `%s`: %s | %s | %s | %s | %s | %s |" % (cls, what, sh, fus(p50.get(cls, 0)),
                                                             lhs, fus(lmed), ratio))
    L.append("")
    L.append("Issue #5's aims, from the table (✓ met, ✗ not met):\n")
    L.append("| aim | scry | ratio | |\n|---|---|---:|---|")
    for cls in ("range_count", "range_total", "date_range_count", "date_range_total"):
        if cls in p50:
            x = luc[cls][1] / p50[cls]
            L.append("| range counts ≥ 2× faster than Lucene | `%s` %s vs Lucene %s | %.1f× | %s |"
                     % (cls, fus(p50[cls]), fus(luc[cls][1]), x, "✓" if x >= 2 else "✗"))
    for exact, bounded in (("range_total", "range"), ("date_range_total", "date_range"),
                           ("sort_pickup_desc_1000_total", "sort_pickup_desc_1000"),
                           ("sort_pickup_desc_1000_total", "sort_pickup_desc_1000_nototal"),
                           ("sort_passenger_desc_total", "sort_passenger_desc"),
                           ("sort_passenger_desc_total", "sort_passenger_desc_nototal")):
        if exact in p50 and bounded in p50:
            x = p50[exact] / p50[bounded]
            L.append("| bounded hits ≥ 10× faster than the exact total of the same request | "
                     "`%s` %s vs `%s` %s | %.1f× | %s |" % (bounded, fus(p50[bounded]), exact,
                                                           fus(p50[exact]), x,
                                                           "✓" if x >= 10 else "✗"))
    lt = os.path.join(out, "load.times")
    if os.path.exists(lt):
        t = [float(x) for x in open(lt).read().split()]
        L.append("\nLoad %.0f s (%.0f docs/s; not a load benchmark: the machine was busy), "
                 "force-merge %.0f s." % (t[1] - t[0], int(docs) / (t[1] - t[0]), t[3] - t[2]))
    L.append("\nReproduce: `bash bench/taxis_bench.sh` (`TAXIS_DOCS=` for another size; this run "
             "took %d min, most of it generating and loading).\n" % max(1, round(secs / 60)))
    if bad:
        L.append("**Answers differ:** " + "; ".join(bad) + "\n")
    L.append("<!-- END taxis_bench -->")
    text = "\n".join(L) + "\n"
    with open(os.path.join(out, "taxis.md"), "w") as f:
        f.write(text)
    print(text)
    if bad:
        print("taxis_bench: " + "; ".join(bad), file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main()
