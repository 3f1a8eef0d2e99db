"""Markdown table of bench/http_transport.sh: per family and connection count, A and B
(median over the rounds, [min-max]) of QPS, p50, p99, server CPU per request and machine busy
share, and the cores the server used (CPU per request x QPS: about 1.0 when its requests are
pinned to one thread, up to 2 on two cores). Usage: http_transport_report.py OUT_DIR"""
import glob
import json
import os
import statistics
import sys

out = sys.argv[1]
cells = {}
for p in glob.glob(os.path.join(out, "r-*.json")):
    v, rep, cls, c = os.path.basename(p)[2:-5].split("-")
    cell = json.load(open(p))["cells"][0]
    cells.setdefault((cls, int(c), v), []).append(cell)
busy = {}
for line in open(os.path.join(out, "busy.tsv")):
    v, rep, cls, c, b = line.split()
    busy.setdefault((cls, int(c), v), []).append(int(b))


def med(xs, fmt):
    xs = sorted(xs)
    if len(xs) == 1:
        return fmt % xs[0]
    return (fmt + " [" + fmt + "–" + fmt + "]") % (statistics.median(xs), xs[0], xs[-1])


print("| family | conns | QPS A | QPS B | p50 A | p50 B | p99 A | p99 B | CPU/req A | CPU/req B "
      "| server cores A | server cores B | machine busy A | machine busy B |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
order = ["term_count", "and2_top10", "wildcard_top10", "phrase_count"]
for cls in order:
    for c in (1, 8, 32):
        a, b = cells.get((cls, c, "A"), []), cells.get((cls, c, "B"), [])
        if not a or not b:
            continue
        row = [cls, str(c)]
        for key, fmt in (("qps", "%.0f"),):
            row += [med([x[key] for x in a], fmt), med([x[key] for x in b], fmt)]
        for q in ("p50", "p99"):
            row += [med([x["latency_us"][q] for x in a], "%d µs"),
                    med([x["latency_us"][q] for x in b], "%d µs")]
        row += [med([x["server_cpu_us_per_req"] for x in a], "%.1f µs"),
                med([x["server_cpu_us_per_req"] for x in b], "%.1f µs")]
        row += [med([x["server_cpu_us_per_req"] * x["qps"] / 1e6 for x in a], "%.2f"),
                med([x["server_cpu_us_per_req"] * x["qps"] / 1e6 for x in b], "%.2f")]
        row += [med(busy.get((cls, c, "A"), [0]), "%d %%"), med(busy.get((cls, c, "B"), [0]), "%d %%")]
        print("| " + " | ".join(row) + " |")
