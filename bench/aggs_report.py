#!/usr/bin/env python3
"""The "Aggregations" section of docs/benchmarks.md from a bench/aggs_bench.sh run.

    aggs_report.py OUT CORPUS SECONDS

Reads OUT/scry.json (`scry bench run`), OUT/probe.json (bench/agg_probe.py), OUT/lucene.tsv
(bench/LuceneAggBench.java, optional) and OUT/loadavg.txt; writes OUT/aggs.md. One row per
operation: scry p50 and the spread of the repetitions' mean latencies, Lucene's median (the
faster of its methods) and its best..worst, the ratio Lucene / scry (above 1: scry faster), ns
per collected doc (scry p50 / docs the query matched) and the peak request-breaker bytes.
Operations the server refused are listed with its error. Exits 1 when a doc count sum differs
from Lucene's."""
import json
import os
import sys
import time

# two t-digests of the same values with the same compression (scry's, LuceneAggMore's) agree
# within this relative error at the Rally percents (70..99); they are approximations
TDIGEST_TOLERANCE = 0.02


def lucene_rows(path):
    best = {}
    if not os.path.exists(path):
        return best
    lines = open(path).read().splitlines()
    for line in lines[1:]:
        f = line.split("\t")
        if len(f) < 8:
            continue
        row = {"hits": int(f[1]), "buckets": int(f[2]), "sum": int(f[3]), "median": float(f[4]),
               "best": float(f[5]), "worst": float(f[6]), "method": f[7],
               "cpu": float(f[8]) if len(f) > 8 else None,
               "values": [float(x) for x in f[9].split(",")] if len(f) > 9 and f[9] else None}
        if f[0] not in best or row["median"] < best[f[0]]["median"]:
            row["all"] = best.get(f[0], {}).get("all", []) + [row]
            best[f[0]] = row
        else:
            best[f[0]]["all"].append(row)
    return best


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0
    return str(n)


def main():
    out, corpus, seconds = sys.argv[1], sys.argv[2], sys.argv[3]
    scry = json.load(open(os.path.join(out, "scry.json")))
    probe = json.load(open(os.path.join(out, "probe.json")))
    luc = lucene_rows(os.path.join(out, "lucene.tsv"))
    cells = {c["class"]: c for c in scry["cells"]}
    loads = [line.split() for line in open(os.path.join(out, "loadavg.txt"))] \
        if os.path.exists(os.path.join(out, "loadavg.txt")) else []
    m = scry.get("machine", {})
    s = scry.get("settings", {})
    L = ["<!-- BEGIN aggs_bench (bench/aggs_bench.sh writes this section) -->", "",
         "## Aggregations: Rally nyc_taxis and http_logs vs Lucene 8.7 faceting", ""]
    L.append(
        "`bench/aggs_bench.sh` (issue #12), run %s on %s (%s CPUs). Corpus: %s (`scry gen`), "
        "the Rally mappings, loaded with `scry load` into a release `scry serve "
        "--search-threads 1`, force-merged to one segment; `scry bench run` over HTTP, one "
        "connection, `request_cache=false` on every request (scry has no request cache: every "
        "request recomputes its aggregations), p50 over %s x %s s after %s s warm-up. Lucene 8.7 "
        "in-process (`bench/LuceneAggBench.java`): the same fields as Elasticsearch maps them "
        "(one segment), lucene-facet's `SortedSetDocValuesFacetCounts` for `terms`, "
        "`LongRangeFacetCounts` and a plain doc-values loop for the date histograms (the faster "
        "is compared), a doc-values loop for the numeric histogram + stats; for the operations "
        "lucene-facet has no module for (time zones, metric sub-aggregations, "
        "`auto_date_histogram`, `composite`, `sampler`, t-digest `percentiles`, `multi_terms`) "
        "the plain doc-values loops of `bench/LuceneAggMore.java` (java.time roundings looked "
        "up per hour, composite's bounded sorted page of `size` keys, the geotile of the "
        "`LatLonDocValuesField`, `IndexSearcher.search(q, shard_size)` for the sample, a "
        "merging t-digest of the same compression); median of its runs after a JIT warm-up. scry's time includes HTTP, parsing and the JSON response; "
        "Lucene's does not." % (
            time.strftime("%Y-%m-%d", time.gmtime()), m.get("cpu_model", m.get("cpu", "?")),
            m.get("nproc", "?"), corpus, s.get("reps", "?"), s.get("duration_s", "?"),
            s.get("warmup_s", "?")))
    L.append("")
    L.append("| operation | docs collected | scry p50 ms (reps' means) | Lucene ms (best..worst) "
             "| Lucene / scry | scry CPU ms (probe) | Lucene CPU ms | Lucene / scry by CPU "
             "| scry ns per doc (p50, CPU) | peak breaker bytes | buckets (scry / Lucene) |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    bad = 0
    failed = []
    for cls, p in probe.items():
        if "error" in p or cls not in cells:
            failed.append((cls, p.get("error", "not timed")))
            continue
        c = cells[cls]
        p50 = c["latency_us"]["p50"] / 1000.0
        reps = ", ".join("%.2f" % (1000.0 / q) for q in c.get("qps_reps", []) if q)
        docs = p.get("docs") or 0
        # the server's CPU per request: `scry bench run --pid` over the timed requests, else
        # agg_probe's (one request at a time until 0.5 s of CPU)
        cpu = c["server_cpu_us_per_req"] / 1000.0 if c.get("server_cpu_us_per_req") \
            else p.get("cpu_ms")
        pcpu = p.get("cpu_ms")
        nsdoc = "%.2f, %s" % (p50 * 1e6 / docs, "%.2f" % (cpu * 1e6 / docs) if cpu else "-") \
            if docs else "-"
        lr = luc.get(cls)
        # by CPU: Lucene's method with the least CPU against the server's CPU per request
        lcpu = min((x["cpu"] for x in lr["all"] if x.get("cpu") is not None), default=None) \
            if lr else None
        cpu_s = ("%.2f" % cpu if cpu is not None else "-") + \
            (" (%.2f)" % pcpu if pcpu is not None else "")
        lcpu_s = "%.2f" % lcpu if lcpu is not None else "-"
        cratio = "%.2fx" % (lcpu / cpu) if cpu and lcpu is not None else \
            ("> %.2fx" % (lcpu / 0.01) if cpu == 0 and lcpu else "-")
        if lr:
            lms = "%.2f (%.2f..%.2f, %s)" % (lr["median"], lr["best"], lr["worst"], lr["method"])
            ratio = "%.2fx" % (lr["median"] / p50) if p50 else "-"
            lb = "%s / %d" % (p.get("buckets"), lr["buckets"])
            # single-value metrics (avg_tip_percent_aggregation) have no buckets to compare
            if p.get("doc_count_sum") is not None and lr["sum"] != p.get("doc_count_sum"):
                bad += 1
                lb += " **doc counts differ: %s vs %d**" % (p.get("doc_count_sum"), lr["sum"])
            # percentiles: the values the two t-digests give, and the docs they digest
            if lr.get("values") and p.get("values"):
                worst = max(abs(a - b) / max(abs(a), abs(b), 1e-9)
                            for a, b in zip(p["values"], lr["values"]))
                lb = "values within %.2f%%" % (100 * worst)
                if worst > TDIGEST_TOLERANCE or len(p["values"]) != len(lr["values"]) \
                        or lr["sum"] != docs:
                    bad += 1
                    lb += " **values or docs differ: %s vs %s over %d vs %d docs**" % (
                        p["values"], lr["values"], docs, lr["sum"])
        else:
            lms, ratio, lb = "-", "-", "%s" % p.get("buckets")
        L.append("| %s | %d | %.2f (%s) | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            cls, docs, p50, reps, lms, ratio, cpu_s, lcpu_s, cratio, nsdoc,
            human(p.get("peak_breaker_bytes") or 0), lb))
    L.append("")
    if failed:
        L.append("Operations that do not run yet (listed, not timed):")
        L.append("")
        L.append("| operation | server's answer |")
        L.append("|---|---|")
        for cls, why in failed:
            L.append("| %s | %s |" % (cls, str(why).replace("|", "\\|")))
        L.append("")
    L.append(
        "Docs collected: the query's exact hit count. ns per doc: scry's p50 over it (HTTP "
        "included), then the server's CPU per request over it. scry CPU ms: the server "
        "process's user + system time per request (`/proc/PID/stat`, HTTP and JSON included) "
        "over the timed requests of `scry bench run --pid`; in brackets the same from "
        "`bench/agg_probe.py`, one request at a time until 0.5 s of CPU (10 ms clock ticks "
        "averaged over the requests: two samples of one number). Lucene CPU ms: the median of its runs' thread CPU time (`ThreadMXBean`), "
        "of its cheapest method. On a shared machine the CPU columns are the ones to compare: "
        "wall times include waits for a core. Peak breaker bytes: the request breaker's `peak_used_in_bytes` "
        "(`_nodes/stats/breaker`, reset before the request): the largest scratch high-water plus "
        "shard result of the request's shard executions. Buckets differ where they should: "
        "`histogram` returns the empty buckets between the smallest and largest key "
        "(`min_doc_count` 0), Lucene's row counts non-empty ones; the doc count sums must and "
        "do agree. `terms_payment_type` is not a Rally operation (the issue's terms target). "
        "`sampler`: both sample the first 50 docs of their index (every hit scores 1), which "
        "are not the same docs (the two indexes order them differently): the sums (50) agree, "
        "the buckets may not. `percentiles`: the two t-digests are compared by their values "
        "(within %.0f%%) and the docs they digest." % (100 * TDIGEST_TOLERANCE))
    lt = os.path.join(out, "load.times")
    if os.path.exists(lt) and os.path.getsize(lt):
        L.append("")
        rows = [x.split() for x in open(lt) if x.strip()]
        what = {"load_s": "loaded and refreshed", "merge_s": "force-merged to one segment"}
        L.append("Loading (`scry load --conns`, refresh off; both indices side by side), in "
                 "seconds of wall time: " + "; ".join(
                     "%s %s in %s s%s" % (f[0], what.get(f[1], f[1]), f[2],
                                          " (server CPU %s s)" % f[4] if len(f) >= 5 else "")
                     for f in rows if len(f) >= 3) + ".")
    if loads:
        L.append("")
        L.append("Load average (1/5/15 min) after scry: %s; after Lucene: %s. The machine is "
                 "shared (2 cores): absolute times are noisy, compare within one run." % (
                     " ".join(loads[0]), " ".join(loads[1]) if len(loads) > 1 else "-"))
    L.append("")
    L.append("Reproduce: `bash bench/aggs_bench.sh` (`TAXIS_DOCS=` / `LOGS_DOCS=` for other "
             "sizes; the issue asks 5M / 10M, this machine ran the sizes above; this run took "
             "%s s, generation and loading included unless KEEP_DATA=1 reused them)." % seconds)
    L.append("")
    L.append("<!-- END aggs_bench -->")
    open(os.path.join(out, "aggs.md"), "w").write("\n".join(L) + "\n")
    print("\n".join(L))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
