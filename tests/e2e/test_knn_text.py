"""kNN recall on real text over HTTP: TF-IDF vectors of this machine's Debian package
descriptions (and man page paragraphs), randomly projected to 128 dims and normalized
(bench/vectors_from_text.py, seed 1, 6,000 texts, the last 50 held out as queries), indexed as
cosine `hnsw` and `int8_hnsw` in 2 segments. Recall@10 at num_candidates 100 against numpy
brute force must be >= 0.95, also under filters accepting 50 %, 5 % and 0.1 % of the docs."""
import os
import subprocess
import tempfile

import numpy as np
import pytest

from conftest import bulk_body

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SEED = 1


def fvecs_read(path):
    raw = np.fromfile(path, dtype=np.int32)
    d = int(raw[0])
    return raw.reshape(-1, d + 1)[:, 1:].view(np.float32).copy()


@pytest.fixture(scope="module")
def text_vectors():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "vectors_from_text.py"),
                        "--dims", "128", "--max-docs", "6000", "--queries", "50",
                        "--seed", str(SEED), "--out", tmp], check=True)
        base = fvecs_read(os.path.join(tmp, "base.fvecs"))
        queries = fvecs_read(os.path.join(tmp, "query.fvecs"))
    print("text vectors: seed %d, base %d x %d, queries %d"
          % (SEED, base.shape[0], base.shape[1], queries.shape[0]))
    assert base.shape[0] >= 5000 and queries.shape[0] == 50
    return base, queries


def load(server, index, base, itype):
    st, _, b = server.request("PUT", "/" + index, {
        "settings": {"number_of_shards": 1, "refresh_interval": "-1"},
        "mappings": {"properties": {
            "v": {"type": "dense_vector", "dims": base.shape[1], "similarity": "cosine",
                  "index_options": {"type": itype, "m": 16, "ef_construction": 100}},
            "sel": {"type": "integer"}}}})
    assert st == 200, b
    docs = [{"v": [float(x) for x in v], "sel": i % 1000} for i, v in enumerate(base)]
    half = len(docs) // 2
    for s, e in ((0, half), (half, len(docs))):  # two segments
        lines = bulk_body(index, docs[s:e]).splitlines()
        for j in range(0, len(lines), 2):
            lines[j] = '{"index":{"_index":"%s","_id":"%d"}}' % (index, s + j // 2)
        st, _, b = server.request("POST", "/_bulk", "\n".join(lines) + "\n",
                                  headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not b["errors"], b
        server.request("POST", "/%s/_refresh" % index)


def recall(server, index, base, queries, below=None):
    accept = np.arange(len(base)) % 1000 < below if below is not None else None
    found = wanted = 0
    for q in queries:
        knn = {"field": "v", "query_vector": [float(x) for x in q], "k": 10,
               "num_candidates": 100}
        if below is not None:
            knn["filter"] = {"range": {"sel": {"lt": below}}}
        st, _, b = server.request("POST", "/%s/_search" % index,
                                  {"knn": knn, "size": 10, "_source": False})
        assert st == 200, b
        got = {int(h["_id"]) for h in b["hits"]["hits"]}
        sims = base @ q
        if accept is not None:
            sims = np.where(accept, sims, -np.inf)
        order = np.lexsort((np.arange(len(base)), -sims))
        truth = [int(i) for i in order[:10] if np.isfinite(sims[i])]
        found += len(got & set(truth))
        wanted += len(truth)
    return found / max(wanted, 1)


@pytest.mark.parametrize("itype", ["hnsw", "int8_hnsw"])
def test_text_recall(server, text_vectors, itype):
    base, queries = text_vectors
    index = "knn-text-" + itype.replace("_", "-")
    load(server, index, base, itype)
    try:
        r = recall(server, index, base, queries)
        print("%s recall@10 %.3f" % (itype, r))
        assert r >= 0.95, r
        for below, name in ((500, "50%"), (50, "5%"), (1, "0.1%")):
            fr = recall(server, index, base, queries, below)
            print("%s filter %s recall@10 %.3f" % (itype, name, fr))
            assert fr >= 0.95, (name, fr)
    finally:
        server.request("DELETE", "/" + index)
