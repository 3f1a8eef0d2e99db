"""Completion suggester cost against a baseline run side by side (docs/benchmarks.md,
"Completion suggester"): starts BIN on an empty data folder, indexes N documents (seeded
pseudo-words; each document has a completion field with two weighted inputs and a keyword
field with the same first input), then runs the same random 1..3-letter prefixes, interleaved,
as a completion suggestion (size 5) and as the baseline, a `prefix` query on the keyword field
(size 5, track_total_hits false, _source on). Prints the median and p90 latency of each and the
ratio. Usage: completion_bench.py BIN [N] [QUERIES] [SEED]"""
import json, os, random, shutil, statistics, subprocess, sys, time, urllib.request

binp = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
nq = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 7
print("seed", seed)
rnd = random.Random(seed)
root = "/tmp/scry-completion-bench"
shutil.rmtree(root, ignore_errors=True)
os.makedirs(root)
pf = root + "/port"
p = subprocess.Popen([binp, "serve", "--data", root + "/data", "--port", "0", "--port-file", pf,
                      "--log-level", "warn"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
while not os.path.exists(pf) or not open(pf).read().strip():
    time.sleep(0.05)
url = "http://127.0.0.1:%s" % open(pf).read().strip()


def req(method, path, body=None, ctype="application/json"):
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    r = urllib.request.Request(url + path, data=data, method=method,
                               headers={"content-type": ctype})
    with urllib.request.urlopen(r) as f:
        return json.loads(f.read())


letters = "abcdefghijklmnopqrstuvwxyz"


def word():
    return "".join(rnd.choice(letters[:12] if i == 0 else letters)
                   for i in range(rnd.randint(3, 9)))


req("PUT", "/c", {"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                  "mappings": {"properties": {"s": {"type": "completion"},
                                              "k": {"type": "keyword"}}}})
for lo in range(0, n, 5000):
    lines = []
    for i in range(lo, min(n, lo + 5000)):
        a, b = word() + " " + word(), word()
        lines.append(json.dumps({"index": {"_index": "c", "_id": str(i)}}))
        lines.append(json.dumps({"s": [{"input": a, "weight": rnd.randint(1, 1000)},
                                       {"input": b, "weight": rnd.randint(1, 1000)}],
                                 "k": a}))
    req("POST", "/_bulk", ("\n".join(lines) + "\n").encode(), "application/x-ndjson")
req("POST", "/c/_refresh")
req("POST", "/c/_forcemerge?max_num_segments=1")
prefixes = ["".join(rnd.choice(letters[:12] if j == 0 else letters)
                    for j in range(rnd.randint(1, 3))) for _ in range(nq)]
tc, tb = [], []
for px in prefixes:
    t0 = time.perf_counter()
    req("POST", "/c/_search", {"size": 0, "suggest": {"x": {"prefix": px,
                                                            "completion": {"field": "s"}}}})
    t1 = time.perf_counter()
    req("POST", "/c/_search", {"size": 5, "track_total_hits": False,
                               "query": {"prefix": {"k": px}}})
    t2 = time.perf_counter()
    tc.append(t1 - t0)
    tb.append(t2 - t1)


def q(v, f):
    return sorted(v)[int(f * (len(v) - 1))] * 1000


print("docs %d, prefixes %d (1..3 letters)" % (n, nq))
print("completion suggest: median %.2f ms, p90 %.2f ms" % (q(tc, .5), q(tc, .9)))
print("prefix query (baseline): median %.2f ms, p90 %.2f ms" % (q(tb, .5), q(tb, .9)))
print("ratio completion / baseline: median %.2f, p90 %.2f" % (q(tc, .5) / q(tb, .5),
                                                             q(tc, .9) / q(tb, .9)))
p.terminate()
p.wait()
