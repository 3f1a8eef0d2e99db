#!/usr/bin/python3
"""kNN benchmark (not a test): scry's HNSW in process (build/release/knn_bench, the code a
segment flush and a search run) beside hnswlib (Debian python3-hnswlib) and FAISS
IndexHNSWFlat / IndexHNSWSQ (python3-faiss) on the same fvecs files, single-threaded, with
the same M and ef_construction, sweeping the search beam (scry num_candidates, hnswlib ef,
FAISS efSearch). Prints a markdown table: recall@10 against exact brute force, queries per
second and build seconds in CPU time of the one thread (time.process_time; the machine is
shared, so wall time would count other processes), bytes per vector (what a search keeps in memory: vectors or codes plus
the graph). Make the vectors with bench/vectors_from_text.py or `scry gen vectors --fvecs`.

    /usr/bin/python3 bench/knn_compare.py BASE.fvecs QUERY.fvecs --sim cosine --m 16 --efc 100
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def fvecs(path):
    a = np.fromfile(path, dtype=np.int32)
    return a.reshape(-1, a[0] + 1)[:, 1:].view(np.float32).copy()


def truth(b, q, sim, k=10):
    out = np.empty((len(q), k), dtype=np.int64)
    bb = (b * b).sum(1)[None] if sim == "l2" else None
    for s in range(0, len(q), 100):
        qq = q[s:s + 100]
        if sim == "l2":
            d = bb - 2 * qq @ b.T  # + |q|^2, the same for every row
        else:
            d = -(qq @ b.T)
        # the k smallest without sorting a million distances per query
        part = np.argpartition(d, k, axis=1)[:, :k]
        order = np.argsort(np.take_along_axis(d, part, axis=1), axis=1)
        out[s:s + 100] = np.take_along_axis(part, order, axis=1)
    return out


def recall(got, gt):
    return float(np.mean([len(set(got[i]) & set(gt[i])) / 10.0 for i in range(len(gt))]))


def run_scry(a, efs, itype):
    exe = os.path.join(ROOT, "build", "release", "knn_bench")
    sim = {"l2": "l2", "cosine": "cosine", "ip": "dot"}[a.sim]
    out = subprocess.run([exe, a.base, a.query, sim, itype, str(a.m), str(a.efc),
                          ",".join(map(str, efs))], capture_output=True, text=True, check=True)
    rows = []
    for line in out.stdout.splitlines():
        if line.startswith("#"):
            continue
        impl, nc, r, qps, build, bpv = line.split("\t")
        rows.append((impl, int(nc), float(r), float(qps), float(build), float(bpv)))
    return rows


def run_hnswlib(a, b, q, gt, efs):
    import hnswlib
    p = hnswlib.Index(space="l2" if a.sim == "l2" else "ip", dim=b.shape[1])
    p.init_index(max_elements=len(b), ef_construction=a.efc, M=a.m, random_seed=1)
    p.set_num_threads(1)
    t = time.process_time()
    p.add_items(b)
    build = time.process_time() - t
    with tempfile.NamedTemporaryFile() as f:
        p.save_index(f.name)
        bpv = os.path.getsize(f.name) / len(b)
    rows = []
    for ef in efs:
        p.set_ef(max(ef, 10))
        t = time.process_time()
        labels, _ = p.knn_query(q, k=10)
        dt = time.process_time() - t
        rows.append(("hnswlib", ef, recall(labels, gt), len(q) / dt, build, bpv))
    return rows


def run_faiss(a, b, q, gt, efs, sq):
    import faiss
    faiss.omp_set_num_threads(1)
    metric = faiss.METRIC_L2 if a.sim == "l2" else faiss.METRIC_INNER_PRODUCT
    if sq:
        idx = faiss.IndexHNSWSQ(b.shape[1], faiss.ScalarQuantizer.QT_8bit, a.m, metric)
    else:
        idx = faiss.IndexHNSWFlat(b.shape[1], a.m, metric)
    idx.hnsw.efConstruction = a.efc
    t = time.process_time()
    if sq:
        idx.train(b)
    idx.add(b)
    build = time.process_time() - t
    bpv = len(faiss.serialize_index(idx)) / len(b)
    rows = []
    for ef in efs:
        idx.hnsw.efSearch = max(ef, 10)
        t = time.process_time()
        _, labels = idx.search(q, 10)
        dt = time.process_time() - t
        rows.append(("faiss-HNSW" + ("SQ8" if sq else "Flat"), ef, recall(labels, gt), len(q) / dt,
                     build, bpv))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("query")
    ap.add_argument("--sim", choices=["l2", "cosine", "ip"], default="l2")
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--efc", type=int, default=100)
    ap.add_argument("--ef", default="10,20,40,60,100,150,200,300,500")
    ap.add_argument("--skip", default="", help="comma list of: scry,scry8,hnswlib,faiss,faiss8")
    a = ap.parse_args()
    efs = [int(x) for x in a.ef.split(",")]
    skip = set(a.skip.split(","))
    b, q = fvecs(a.base), fvecs(a.query)
    if a.sim == "cosine":
        b /= np.linalg.norm(b, axis=1, keepdims=True)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
    gt = truth(b, q, a.sim)
    print("%d x %d vectors, %d queries, %s, M %d, ef_construction %d, 1 thread"
          % (len(b), b.shape[1], len(q), a.sim, a.m, a.efc))
    print()
    print("| impl | ef / num_candidates | recall@10 | QPS | build s | bytes/vector |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    sys.stdout.flush()
    # one library after the other, each table part printed when it is done (a 1M run takes
    # long: what finished is kept if the rest is stopped)
    runs = [("scry", lambda: run_scry(a, efs, "hnsw")),
            ("scry8", lambda: run_scry(a, efs, "int8_hnsw")),
            ("hnswlib", lambda: run_hnswlib(a, b, q, gt, efs)),
            ("faiss", lambda: run_faiss(a, b, q, gt, efs, False)),
            ("faiss8", lambda: run_faiss(a, b, q, gt, efs, True))]
    for name, run in runs:
        if name in skip:
            continue
        for impl, ef, r, qps, build, bpv in run():
            print("| %s | %d | %.3f | %.0f | %.1f | %.0f |" % (impl, ef, r, qps, build, bpv))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
