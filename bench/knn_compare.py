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

int8_hnsw's default curve starts at a beam of 3 k = 30 (every candidate rescored with the raw
floats), so its low-recall end is never measured; `--oversample 1.5,2` adds one curve per
Elasticsearch rescore_vector.oversample value (beam max(num_candidates, ceil(10 x)), the best
ceil(10 x) candidates rescored), which reaches down to recall 0.95. `--rounds N` sweeps N times
round-robin and reports each row's median QPS.
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


class Scry:
    """One build/release/knn_bench process: builds the section when started, then answers one
    num_candidates per line on stdin (so the libraries' runs can be interleaved)."""

    def __init__(self, a, itype):
        exe = os.path.join(ROOT, "build", "release", "knn_bench")
        sim = {"l2": "l2", "cosine": "cosine", "ip": "dot"}[a.sim]
        self.p = subprocess.Popen([exe, a.base, a.query, sim, itype, str(a.m), str(a.efc), "-"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.itype = itype
        self.shape = []

    def built(self):
        """Waits for the build: the "#" lines (build, graph shape) up to "# ready"."""
        for line in self.p.stdout:
            if line.startswith("# ready"):
                return self
            self.shape.append(line.rstrip("\n"))
        raise RuntimeError("knn_bench ended early")

    def run(self, ef, oversample=None):
        self.p.stdin.write("%d%s\n" % (ef, "/%g" % oversample if oversample else ""))
        self.p.stdin.flush()
        impl, nc, r, qps, build, bpv, scored = self.p.stdout.readline().split("\t")
        return (impl, int(nc), float(r), float(qps), float(build), float(bpv), float(scored))

    def close(self):
        self.p.stdin.close()
        self.p.wait()


class Hnswlib:
    def __init__(self, a, b, q, gt):
        import hnswlib
        self.q, self.gt = q, gt
        p = hnswlib.Index(space="l2" if a.sim == "l2" else "ip", dim=b.shape[1])
        p.init_index(max_elements=len(b), ef_construction=a.efc, M=a.m, random_seed=1)
        p.set_num_threads(1)
        t = time.process_time()
        p.add_items(b)
        self.build = time.process_time() - t
        with tempfile.NamedTemporaryFile() as f:
            p.save_index(f.name)
            self.bpv = os.path.getsize(f.name) / len(b)
        self.p = p

    def run(self, ef):
        self.p.set_ef(max(ef, 10))
        t = time.process_time()
        labels, _ = self.p.knn_query(self.q, k=10)
        dt = time.process_time() - t
        return ("hnswlib", ef, recall(labels, self.gt), len(self.q) / dt, self.build, self.bpv,
                None)


class Faiss:
    def __init__(self, a, b, q, gt, sq):
        import faiss
        faiss.omp_set_num_threads(1)
        self.q, self.gt, self.sq = q, gt, sq
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
        self.build = time.process_time() - t
        self.bpv = len(faiss.serialize_index(idx)) / len(b)
        self.idx = idx

    def run(self, ef):
        self.idx.hnsw.efSearch = max(ef, 10)
        t = time.process_time()
        _, labels = self.idx.search(self.q, 10)
        dt = time.process_time() - t
        return ("faiss-HNSW" + ("SQ8" if self.sq else "Flat"), ef, recall(labels, self.gt),
                len(self.q) / dt, self.build, self.bpv, None)


def qps_at(rows, target):
    """QPS at recall `target` on a curve of (recall, qps) rows sorted by beam: linear between
    the two beams around it; None when the curve never reaches it."""
    pts = sorted((r[1], r[2], r[3]) for r in rows)
    for (e0, r0, q0), (e1, r1, q1) in zip(pts, pts[1:]):
        if r0 >= target:
            return q0
        if r1 >= target:
            f = (target - r0) / (r1 - r0)
            return q0 + f * (q1 - q0)
    return pts[-1][2] if pts and pts[-1][1] >= target else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("query")
    ap.add_argument("--sim", choices=["l2", "cosine", "ip"], default="l2")
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--efc", type=int, default=100)
    ap.add_argument("--ef", default="10,20,40,60,100,150,200,300,500")
    ap.add_argument("--skip", default="", help="comma list of: scry,scry8,hnswlib,faiss,faiss8")
    ap.add_argument("--target", type=float, default=0.95, help="recall for the ratio table")
    ap.add_argument("--oversample", default="",
                    help="comma list of int8 rescoring oversamples (Elasticsearch's "
                         "rescore_vector.oversample: the best ceil(10 x) candidates rescored, "
                         "the beam at least that), each its own scry-int8_hnsw/x curve beside "
                         "the default one (beam at least 30, every candidate rescored)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="sweep every beam this many times, round-robin; QPS is each row's "
                         "median over the rounds")
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
    sys.stdout.flush()
    # every index is built first, then the beams are swept round-robin across them, so a
    # change of the machine's load lands on every library alike (QPS is CPU time anyway)
    # (the scry processes build while this one builds hnswlib's and FAISS's: build seconds are
    # each process's own CPU time)
    libs = []
    if "scry" not in skip:
        libs.append(Scry(a, "hnsw"))
    if "scry8" not in skip:
        libs.append(Scry(a, "int8_hnsw"))
    if "hnswlib" not in skip:
        libs.append(Hnswlib(a, b, q, gt))
    if "faiss" not in skip:
        libs.append(Faiss(a, b, q, gt, False))
    if "faiss8" not in skip:
        libs.append(Faiss(a, b, q, gt, True))
    for lib in libs:
        if isinstance(lib, Scry):
            lib.built()
    oversamples = [float(x) for x in a.oversample.split(",") if x]
    runs = {}
    for _ in range(a.rounds):
        for ef in efs:
            for lib in libs:
                variants = [None]
                if isinstance(lib, Scry) and lib.itype == "int8_hnsw":
                    variants += oversamples
                for os_ in variants:
                    row = lib.run(ef, os_) if os_ else lib.run(ef)
                    runs.setdefault((row[0], ef), []).append(row)
    rows = {}
    for (impl, ef), rs in runs.items():
        qps = sorted(r[3] for r in rs)
        med = qps[len(qps) // 2] if len(qps) % 2 else (qps[len(qps) // 2 - 1] + qps[len(qps) // 2]) / 2
        rows.setdefault(impl, []).append(rs[0][:3] + (med,) + rs[0][4:])
    for lib in libs:
        if isinstance(lib, Scry):
            lib.close()
            for line in lib.shape:
                print(line)
    print()
    print("| impl | ef / num_candidates | recall@10 | QPS | build s | bytes/vector "
          "| nodes scored / query |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for impl, rs in rows.items():
        for _, ef, r, qps, build, bpv, scored in rs:
            print("| %s | %d | %.3f | %.0f | %.1f | %.0f | %s |"
                  % (impl, ef, r, qps, build, bpv, "%.0f" % scored if scored else ""))
    base = qps_at(rows.get("hnswlib", []), a.target)
    print()
    print("At recall@10 %.2f (QPS interpolated between beams; ratio to hnswlib):" % a.target)
    print()
    print("| impl | QPS at recall %.2f | x hnswlib | build s | x hnswlib build |" % a.target)
    print("| --- | ---: | ---: | ---: | ---: |")
    hb = rows["hnswlib"][0][4] if "hnswlib" in rows else None
    for impl, rs in rows.items():
        v = qps_at(rs, a.target)
        print("| %s | %s | %s | %.1f | %s |"
              % (impl, "%.0f" % v if v else "not reached",
                 "%.2f" % (v / base) if v and base else "",
                 rs[0][4], "%.2f" % (hb / rs[0][4]) if hb and rs[0][4] else ""))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
