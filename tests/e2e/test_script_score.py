"""script_score over HTTP: the script_score query and the script_score function of
function_score, with _score, params, doc['f'].value and Math; the vector functions
(cosineSimilarity, dotProduct, l1norm, l2norm, hamming) against a numpy brute force over the
same vectors (seeded, printed); a filtered exact kNN; saturation / sigmoid / decay scripts
against values computed here; errors (compile, wrong dims, non-vector field, negative scores,
unknown fields) as 400s."""
import math
import random

import numpy as np
import pytest

from conftest import assert_error, bulk_body

DIMS = 16
N = 400
SEED = 20261201


def make_index(server, index, sim="cosine", shards=1):
    print("seed", SEED)
    rng = np.random.default_rng(SEED)
    vecs = rng.normal(size=(N, DIMS)).astype(np.float32)
    st, _, b = server.request("PUT", "/" + index, {
        "settings": {"number_of_shards": shards},
        "mappings": {"properties": {
            "v": {"type": "dense_vector", "dims": DIMS, "similarity": sim},
            "n": {"type": "long"}, "x": {"type": "double"},
            "tag": {"type": "keyword"}, "t": {"type": "date"}}}})
    assert st == 200, b
    docs = [{"v": [float(x) for x in vecs[i]], "n": i, "x": i / 10.0,
             "tag": "even" if i % 2 == 0 else "odd", "t": 1700000000000 + i * 86400000}
            for i in range(N)]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(index, docs),
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    return vecs


def search(server, index, body):
    st, _, b = server.request("POST", "/%s/_search" % index, body)
    assert st == 200, b
    return b


def sq(script, query=None, **kw):
    body = {"query": query or {"match_all": {}}, "script": script}
    body.update(kw)
    return {"script_score": body}


def top(scores, k, ids=None):
    ids = list(range(len(scores))) if ids is None else ids
    return sorted(ids, key=lambda i: (-scores[i], i))[:k]


def check_topk(b, scores, k, ids=None, rel=1e-5):
    hits = b["hits"]["hits"]
    want = top(scores, k, ids)
    got = [int(h["_id"]) for h in hits]
    # equal scores may only swap places among themselves
    assert len(got) == len(want)
    for h, i in zip(hits, want):
        assert h["_score"] == pytest.approx(float(scores[i]), rel=rel, abs=1e-6), (h, i)
    assert set(got) == set(want) or all(
        abs(scores[a] - scores[b]) < 1e-5 for a, b in zip(got, want))


def test_exact_knn_cosine_equals_brute_force(server, fresh_index):
    vecs = make_index(server, fresh_index)
    rng = np.random.default_rng(SEED + 1)
    for _ in range(5):
        q = rng.normal(size=DIMS).astype(np.float32)
        qn = q / np.linalg.norm(q)
        vn = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
        cos = (vn.astype(np.float64) @ qn.astype(np.float64)) + 1.0
        b = search(server, fresh_index, {"size": 10, "query": sq(
            {"source": "cosineSimilarity(params.query_vector, 'v') + 1.0",
             "params": {"query_vector": [float(x) for x in q]}})})
        assert b["hits"]["total"]["value"] == N
        check_topk(b, cos, 10)
        # the knn section's exact answer over the same vectors agrees on the ids
        k = search(server, fresh_index, {"size": 10, "knn": {
            "field": "v", "query_vector": [float(x) for x in q], "k": 10,
            "num_candidates": N}})
        assert [h["_id"] for h in k["hits"]["hits"]] == [h["_id"] for h in b["hits"]["hits"]]


@pytest.mark.parametrize("fn", ["dotProduct", "l1norm", "l2norm"])
def test_vector_functions(server, fresh_index, fn):
    vecs = make_index(server, fresh_index, sim="l2_norm", shards=2).astype(np.float64)
    q = np.random.default_rng(SEED + 2).normal(size=DIMS).astype(np.float32).astype(np.float64)
    if fn == "dotProduct":
        src, scores = "dotProduct(params.q, 'v') + 100", vecs @ q + 100
    elif fn == "l1norm":
        src, scores = "1 / (1 + l1norm(params.q, 'v'))", 1 / (1 + np.abs(vecs - q).sum(1))
    else:
        src = "1 / (1 + l2norm(params.q, 'v'))"
        scores = 1 / (1 + np.sqrt(((vecs - q) ** 2).sum(1)))
    b = search(server, fresh_index, {"size": 10, "query": sq(
        {"source": src, "params": {"q": [float(x) for x in q]}})})
    check_topk(b, scores, 10)


def test_filtered_exact_knn_and_min_score_and_boost(server, fresh_index):
    vecs = make_index(server, fresh_index).astype(np.float64)
    q = np.random.default_rng(SEED + 3).normal(size=DIMS)
    vn = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    cos = vn @ (q / np.linalg.norm(q)) + 1.0
    script = {"source": "cosineSimilarity(params.qv, 'v') + 1.0",
              "params": {"qv": [float(x) for x in q]}}
    flt = {"bool": {"filter": [{"term": {"tag": "even"}}, {"range": {"n": {"lt": 300}}}]}}
    evens = [i for i in range(300) if i % 2 == 0]
    b = search(server, fresh_index, {"size": 10, "query": sq(script, flt)})
    assert b["hits"]["total"]["value"] == len(evens)
    check_topk(b, cos, 10, evens)
    # boost multiplies the script's score; min_score keeps exactly the docs whose boosted
    # score is at or above it (Elasticsearch's MinScoreScorer over the boosted scorer)
    ms = float(2 * sorted(cos[evens])[-25])
    b = search(server, fresh_index, {"size": 100, "query": sq(script, flt, min_score=ms,
                                                              boost=2.0)})
    want = [i for i in evens if np.float32(2 * cos[i]) >= np.float32(ms)]
    assert b["hits"]["total"]["value"] == len(want)
    for h in b["hits"]["hits"]:
        assert h["_score"] == pytest.approx(2 * cos[int(h["_id"])], rel=1e-5)


def test_saturation_sigmoid_decay_and_score(server, fresh_index):
    make_index(server, fresh_index)
    xs = [i / 10.0 for i in range(N)]
    cases = [
        ("saturation(doc['x'].value, params.pivot)",
         "doc['x'].value / (doc['x'].value + params.pivot)", {"pivot": 3},
         lambda x, n: x / (x + 3)),
        ("sigmoid", "Math.pow(doc['x'].value, 2) / (Math.pow(doc['x'].value, 2) + "
         "Math.pow(params.k, 2))", {"k": 5.5}, lambda x, n: x * x / (x * x + 5.5 ** 2)),
        ("gauss decay", "Math.exp(-Math.pow(Math.max(0, Math.abs(doc['n'].value - params.o) - "
         "params.off), 2) / (2 * params.s2))", {"o": 200, "off": 5, "s2": 300.0},
         lambda x, n: math.exp(-max(0, abs(n - 200) - 5) ** 2 / 600.0)),
        ("long and ternary", "doc['n'].value % 7 == 0 ? 10 + doc['n'].size() : "
         "(doc['tag'].empty ? 0 : 1)", {}, None),
    ]
    for name, src, params, fn in cases[:3]:
        b = search(server, fresh_index, {"size": N, "query": sq(
            {"source": src, "params": params})})
        assert len(b["hits"]["hits"]) == N, name
        for h in b["hits"]["hits"]:
            i = int(h["_id"])
            assert h["_score"] == pytest.approx(fn(xs[i], i), rel=1e-5, abs=1e-7), (name, i)
    # keyword doc values are refused with a clear 400
    st, _, b = server.request("POST", "/%s/_search" % fresh_index, {"query": sq(
        {"source": cases[3][1]})})
    assert st == 400, b
    assert "doc['tag']" in b["error"]["reason"]
    # _score is the inner query's score; dates read as epoch millis
    b = search(server, fresh_index, {"size": 3, "query": sq(
        {"source": "_score * 2 + (doc['t'].value - 1700000000000L) / 86400000"},
        {"constant_score": {"filter": {"range": {"n": {"gte": 10}}}, "boost": 1.5}})})
    assert [h["_score"] for h in b["hits"]["hits"]] == [3 + 399, 3 + 398, 3 + 397]


def test_function_score_script_function(server, fresh_index):
    make_index(server, fresh_index)
    b = search(server, fresh_index, {"size": 5, "query": {"function_score": {
        "query": {"constant_score": {"filter": {"term": {"tag": "odd"}}, "boost": 2}},
        "functions": [
            {"script_score": {"script": {"source": "Math.log(2 + doc['n'].value) * params.f",
                                         "params": {"f": 3}}}},
            {"filter": {"range": {"n": {"gte": 390}}}, "weight": 10}],
        "score_mode": "sum", "boost_mode": "multiply"}}})
    got = [(int(h["_id"]), h["_score"]) for h in b["hits"]["hits"]]
    want = sorted(((i, 2 * (math.log(2 + i) * 3 + (10 if i >= 390 else 0)))
                   for i in range(1, N, 2)), key=lambda t: -t[1])[:5]
    assert [g[0] for g in got] == [w[0] for w in want]
    for (gi, gs), (wi, ws) in zip(got, want):
        assert gs == pytest.approx(ws, rel=1e-5)


def test_hamming_on_bits_and_bytes(server, fresh_index):
    rng = random.Random(SEED)
    print("seed", SEED)
    st, _, b = server.request("PUT", "/" + fresh_index, {"mappings": {"properties": {
        "bits": {"type": "dense_vector", "dims": 32, "element_type": "bit",
                 "similarity": "l2_norm"},
        "bytes": {"type": "dense_vector", "dims": 4, "element_type": "byte",
                  "similarity": "l2_norm"}}}})
    assert st == 200, b
    bits = [[rng.randrange(-128, 128) for _ in range(4)] for _ in range(50)]
    byts = [[rng.randrange(-128, 128) for _ in range(4)] for _ in range(50)]
    docs = [{"bits": bits[i], "bytes": byts[i]} for i in range(50)]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs),
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    q = [5, -7, 100, -128]

    def ham(a, c):
        return sum(bin((x & 0xFF) ^ (y & 0xFF)).count("1") for x, y in zip(a, c))

    for field, vals, qv in (("bytes", byts, q), ("bits", bits, q),
                            ("bits", bits, None)):
        if qv is None:  # the bit query also as 32 0/1 values, most significant bit first
            qv = [(q[j // 8] >> (7 - j % 8)) & 1 for j in range(32)]
        b = search(server, fresh_index, {"size": 50, "query": sq(
            {"source": "100 - hamming(params.q, '%s')" % field, "params": {"q": qv}})})
        for h in b["hits"]["hits"]:
            assert h["_score"] == 100 - ham(vals[int(h["_id"])], q), (field, h)


def test_errors(server, fresh_index):
    make_index(server, fresh_index)

    def err(script, status=400, query=None):
        st, _, b = server.request("POST", "/%s/_search" % fresh_index,
                                  {"query": sq(script, query)})
        assert st == status, b
        assert b["status"] == status and b["error"]["reason"], b
        return b

    b = err({"source": "cosineSimilarity(params.q, 'v'", "params": {"q": [1] * DIMS}})
    assert b["error"]["type"] == "script_exception"
    b = err({"source": "cosineSimilarity(params.q, 'v')", "params": {"q": [1, 2, 3]}})
    assert "different number of dimensions [3]" in str(b)
    b = err({"source": "cosineSimilarity(params.q, 'n')", "params": {"q": [1] * DIMS}})
    assert "not a dense_vector field" in str(b)
    b = err({"source": "cosineSimilarity(params.q, 'v') - 5", "params": {"q": [1] * DIMS}})
    assert "must not produce negative scores" in str(b)
    b = err({"source": "doc['nope'].value"})
    assert "No field found for [nope]" in str(b)
    b = err({"source": "cosineSimilarity(params.missing, 'v')"})
    assert "query vector" in str(b)
    b = err({"source": "'a string'"})
    assert "must return a number" in str(b)
    b = err({"source": "params.q + 1", "params": {"q": {"a": 1}}})
    assert "objects are not supported" in str(b)
    b = err({"source": "1", "lang": "mustache"})
    st, _, b = server.request("POST", "/%s/_search" % fresh_index,
                              {"query": {"script_score": {"script": {"source": "1"}}}})
    assert st == 400 and "requires [query]" in str(b), b
    # the same errors through the function form
    st, _, b = server.request("POST", "/%s/_search" % fresh_index, {"query": {"function_score": {
        "script_score": {"script": {"source": "-1"}}}}})
    assert st == 400 and "negative" in str(b), b
