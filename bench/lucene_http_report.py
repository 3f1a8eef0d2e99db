#!/usr/bin/python3
"""bench/lucene_http.sh's helper.
validate WL SCRY_PORT LUCENE_PORT "FAMILIES": sends every request of those families once to
both servers; prints TSV per family: requests, errors of each (not HTTP 200 or a shard failure),
requests whose totals agree (where both report one), requests whose hit ids agree.
report OUT: the markdown tables of docs/benchmarks.md from OUT/cells.tsv and OUT/validate.tsv."""
import http.client
import json
import os
import sys


def ask(port, method, path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request(method, path, body=body.encode(), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    try:
        j = json.loads(data)
    except ValueError:
        return r.status, None
    return r.status, j


def summary(status, j):
    if status == 200 and isinstance(j, dict) and "tagline" in j:
        return None, []  # the root (http_floor): no hits
    if status != 200 or j is None or j.get("timed_out") or j.get("_shards", {}).get("failed", 1) != 0:
        return None
    h = j.get("hits", {})
    total = h.get("total", {}).get("value") if isinstance(h.get("total"), dict) else None
    # the documents' own "id" (scry's load gives auto _ids): equal lists mean the same hits in
    # the same order; ties may still be ordered differently (the segments' doc orders differ)
    return total, [(x.get("fields") or {}).get("id", [x.get("_id")])[0] for x in h.get("hits", [])]


def validate(wl, sport, lport, fams):
    fams = fams.split()
    rows = {f: [0, 0, 0, 0, 0, 0] for f in fams}
    for line in open(wl):
        c, m, p, b = line.rstrip("\n").split("\t", 3)
        if c not in rows:
            continue
        r = rows[c]
        r[0] += 1
        s, l = summary(*ask(sport, m, p, b)), summary(*ask(lport, m, p, b))
        r[1] += s is None
        r[2] += l is None
        if s and l:
            if s[0] is not None and l[0] is not None:
                r[3] += 1
                r[4] += s[0] == l[0]
            r[5] += s[1] == l[1]
    print("family\trequests\tscry_errors\tlucene_errors\twith_totals\tsame_total\tsame_ids")
    for f in fams:
        print(f + "\t" + "\t".join(map(str, rows[f])))


def report(out):
    tck = os.sysconf("SC_CLK_TCK")
    cells = {}
    order = []
    for line in open(os.path.join(out, "cells.tsv")):
        parts = line.rstrip("\n").split("\t")
        fam, conns, srv, res, ticks, busy, allt = parts[:7]
        other = int(parts[7]) if len(parts) > 7 else None  # the idle server's CPU ticks
        user = int(parts[9]) if len(parts) > 9 else None  # the server's user-mode ticks
        r = json.loads(res)
        n = r["requests"]
        d = r["duration_us"] / 1e6
        cells.setdefault((fam, int(conns), srv), []).append({
            "qps": n / d if d else 0, "p50": r["p50_us"], "p99": r["p99_us"],
            "cpu": int(ticks) * 1e6 / tck / n if n else 0,
            "user": None if user is None or not n else user * 1e6 / tck / n,
            "busy": 100.0 * int(busy) / int(allt) if int(allt) else 0,
            "err": r["errors"] + r["non2xx"],
            "other_ms": None if other is None else other * 1000.0 / tck,
            "secs": d})
        if fam not in order:
            order.append(fam)
    # a cell run ROUNDS times: its median-QPS run (the upper median of an even count)
    rounds = max(len(v) for v in cells.values()) if cells else 1
    for k, runs in cells.items():
        runs.sort(key=lambda x: x["qps"])
        cells[k] = dict(runs[len(runs) // 2], runs=[x["qps"] for x in runs])
    conns = sorted({k[1] for k in cells})
    us = lambda v: "%d µs" % v if v < 10000 else "%.1f ms" % (v / 1000)
    print("| family | conns | QPS scry | QPS Lucene | scry / Lucene | p50 scry | p50 Lucene | p99 scry "
          "| p99 Lucene | CPU/req scry | CPU/req Lucene | busy scry | busy Lucene | scry QPS / 1-conn |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    short, slow_scale, idle, cpu_short = [], [], [], []
    for f in order:
        for c in conns:
            s, l = cells.get((f, c, "scry")), cells.get((f, c, "lucene"))
            if not s or not l:
                continue
            ratio = s["qps"] / l["qps"] if l["qps"] else float("inf")
            one = cells.get((f, conns[0], "scry"))
            scale = s["qps"] / one["qps"] if one and one["qps"] else 0
            err = "" if not (s["err"] or l["err"]) else " (errors: scry %d, Lucene %d)" % (s["err"], l["err"])
            print("| %s | %d | %.0f | %.0f | **%.2fx**%s | %s | %s | %s | %s | %.1f µs | %.1f µs | %.0f %% | %.0f %% | %s |" % (
                f, c, s["qps"], l["qps"], ratio, err, us(s["p50"]), us(l["p50"]), us(s["p99"]),
                us(l["p99"]), s["cpu"], l["cpu"], s["busy"], l["busy"],
                "-" if c == conns[0] else "%.2fx" % scale))
            if ratio < 2:
                short.append("%s@%d (%.2fx)" % (f, c, ratio))
            if s["cpu"] and l["cpu"] / s["cpu"] < 2:
                cpu_short.append("%s@%d (%.2fx)" % (f, c, l["cpu"] / s["cpu"]))
            if c >= 8 and scale < 1.8:
                slow_scale.append("%s@%d (%.2fx)" % (f, c, scale))
            if c >= 8 and s["busy"] < 90:
                idle.append("%s@%d (%.0f %%)" % (f, c, s["busy"]))
    if rounds > 1:
        print()
        print("Each cell is the median of %d runs (QPS of every run, scry then Lucene):" % rounds)
        print()
        for f in order:
            print("- %s: %s" % (f, "; ".join(
                "@%d %s / %s" % (c, ", ".join("%.0f" % q for q in cells[(f, c, "scry")]["runs"]),
                                 ", ".join("%.0f" % q for q in cells[(f, c, "lucene")]["runs"]))
                for c in conns if (f, c, "scry") in cells and (f, c, "lucene") in cells)))
    print()
    print("Cells under 2x Lucene's QPS: %d of %d%s" % (len(short), len(order) * len(conns),
          (": " + ", ".join(short)) if short else ""))
    print()
    print("Cells where scry's server CPU per request is more than half of Lucene's: %d of %d%s" % (
        len(cpu_short), len(order) * len(conns), (": " + ", ".join(cpu_short)) if cpu_short else ""))
    floor = [f for f in ("http_floor", "term_count") if f in order]
    if floor and all(cells.get((f, c, srv), {}).get("user") is not None
                     for f in floor for c in conns for srv in ("scry", "lucene")):
        print()
        print("Server CPU per request split into user and kernel time (µs; the kernel's part is "
              "mostly the loopback TCP send and receive, the same work for any server):")
        print()
        print("| family | conns | scry user | scry kernel | Lucene user | Lucene kernel |")
        print("|---|---:|---:|---:|---:|---:|")
        for f in floor:
            for c in conns:
                s, l = cells[(f, c, "scry")], cells[(f, c, "lucene")]
                print("| %s | %d | %.1f | %.1f | %.1f | %.1f |" % (
                    f, c, s["user"], s["cpu"] - s["user"], l["user"], l["cpu"] - l["user"]))
    print()
    print("scry cells at 8/32 connections under 1.8x their 1-connection QPS: %d%s" % (
        len(slow_scale), (": " + ", ".join(slow_scale)) if slow_scale else ""))
    print()
    print("scry cells at 8/32 connections with the machine busy < 90 %%: %d%s" % (
        len(idle), (": " + ", ".join(idle)) if idle else ""))
    for srv, name, idle_name in (("scry", "scry's", "Lucene"), ("lucene", "Lucene's", "scry")):
        o = sorted(((v["other_ms"] / v["secs"] / 10, "%s@%d" % (k[0], k[1]))
                    for k, v in cells.items() if k[2] == srv and v["other_ms"] is not None and v["secs"]),
                   reverse=True)
        if o:
            print()
            print("%s CPU while %s cells ran (share of one core): median %.1f %%, highest %s" % (
                idle_name, name, o[len(o) // 2][0],
                ", ".join("%s %.1f %%" % (n, p) for p, n in o[:3])))
    v = os.path.join(out, "validate.tsv")
    if os.path.exists(v):
        rows = [l.rstrip("\n").split("\t") for l in open(v)][1:]
        print()
        print("Validation (every request once to both servers):")
        print()
        print("| family | requests | errors scry / Lucene | same total (of those with one) | same top-k ids |")
        print("|---|---:|---:|---:|---:|")
        for r in rows:
            print("| %s | %s | %s / %s | %s / %s | %s |" % (r[0], r[1], r[2], r[3], r[5], r[4], r[6]))


if __name__ == "__main__":
    if sys.argv[1] == "validate":
        validate(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        report(sys.argv[2])
