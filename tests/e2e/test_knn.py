"""Vector search over HTTP: dense_vector mappings (defaults, options, errors), bad vectors
refused per document, the knn query, the top-level knn section (filter, similarity, boost,
several clauses), hybrid knn + query scoring, rank.rrf and retrievers, against a brute-force
Python model over the same vectors (fixed seeds). Recall@10 with num_candidates 100 must be
>= 0.95 (hnsw and int8_hnsw), also under filters of 50 %, 5 % and 0.1 % selectivity (l2_norm,
and max_inner_product for both index types); deletes
are respected; results are identical across a restart and a force merge. Also through the
official Python client."""
import math
import os
import random
import tempfile

import pytest

from conftest import Server, assert_error, bulk_body

DIMS = 24
N = 1500
NQ = 20


def gauss_mixture(n, dims, seed, centres=12):
    rng = random.Random(seed)
    cs = [[rng.gauss(0, 3) for _ in range(dims)] for _ in range(centres)]
    return [[x + rng.gauss(0, 1) for x in rng.choice(cs)] for _ in range(n)]


def unit(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def es_score(sim, a, b):
    """Elasticsearch's _score for float vectors (the brute-force oracle)."""
    if sim == "l2_norm":
        return 1 / (1 + sum((x - y) ** 2 for x, y in zip(a, b)))
    if sim == "cosine":
        return (1 + sum(x * y for x, y in zip(unit(a), unit(b)))) / 2
    d = sum(x * y for x, y in zip(a, b))
    if sim == "dot_product":
        return max((1 + d) / 2, 0)
    return d + 1 if d >= 0 else 1 / (1 - d)


def brute(vecs, q, sim, k, accept=None):
    ids = [i for i in range(len(vecs)) if accept is None or accept(i)]
    ids.sort(key=lambda i: (-es_score(sim, vecs[i], q), i))
    return ids[:k]


def search(server, index, body):
    st, _, b = server.request("POST", "/%s/_search" % index, body)
    assert st == 200, b
    return b


def ids_of(b):
    return [int(h["_id"]) for h in b["hits"]["hits"]]


def load(server, index, vecs, sim="l2_norm", itype="hnsw", shards=1, batches=3, extra=None):
    props = {"v": {"type": "dense_vector", "dims": DIMS, "similarity": sim,
                   "index_options": {"type": itype, "m": 16, "ef_construction": 100}},
             "sel": {"type": "integer"}, "t": {"type": "text"}}
    if extra:
        props.update(extra)
    st, _, b = server.request("PUT", "/" + index, {
        "settings": {"number_of_shards": shards, "refresh_interval": "-1"},
        "mappings": {"properties": props}})
    assert st == 200, b
    docs = [{"v": v, "sel": i % 1000, "t": "w%d common" % (i % 7)} for i, v in enumerate(vecs)]
    step = (len(docs) + batches - 1) // batches
    for s in range(0, len(docs), step):
        lines = bulk_body(index, docs[s:s + step]).splitlines()
        # bulk_body numbers from 0 per call: renumber to the global ids
        for j in range(0, len(lines), 2):
            lines[j] = '{"index":{"_index":"%s","_id":"%d"}}' % (index, s + j // 2)
        st, _, b = server.request("POST", "/_bulk", "\n".join(lines) + "\n",
                                  headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not b["errors"], b
        server.request("POST", "/%s/_refresh" % index)


def recall(server, index, vecs, queries, sim, accept=None, filt=None, nc=100):
    found = wanted = 0
    for q in queries:
        knn = {"field": "v", "query_vector": q, "k": 10, "num_candidates": nc}
        if filt is not None:
            knn["filter"] = filt
        got = ids_of(search(server, index, {"knn": knn, "size": 10, "_source": False}))
        truth = brute(vecs, q, sim, 10, accept)
        found += len(set(got) & set(truth))
        wanted += len(truth)
    return found / max(wanted, 1)


@pytest.fixture(scope="module")
def l2_index(server):
    vecs = gauss_mixture(N, DIMS, 1)
    load(server, "knn-l2", vecs)
    yield vecs
    server.request("DELETE", "/knn-l2")


QUERIES = gauss_mixture(NQ, DIMS, 2)


def test_mapping_defaults_and_options(server, fresh_index):
    st, _, b = server.request("PUT", "/" + fresh_index, {"mappings": {"properties": {
        "a": {"type": "dense_vector", "dims": 3},
        "b": {"type": "dense_vector", "dims": 4, "element_type": "byte", "similarity": "dot_product"},
        "c": {"type": "dense_vector", "dims": 2, "index": False},
        "d": {"type": "dense_vector", "dims": 2, "similarity": "max_inner_product",
              "index_options": {"type": "int8_flat"}}}}})
    assert st == 200, b
    m = server.request("GET", "/%s/_mapping" % fresh_index)[2][fresh_index]["mappings"]["properties"]
    assert m["a"] == {"type": "dense_vector", "dims": 3, "index": True, "similarity": "cosine",
                      "index_options": {"type": "int8_hnsw", "m": 16, "ef_construction": 100}}
    assert m["b"]["element_type"] == "byte" and m["b"]["index_options"]["type"] == "hnsw"
    assert m["c"] == {"type": "dense_vector", "dims": 2, "index": False, "similarity": "cosine"}
    assert m["d"]["index_options"] == {"type": "int8_flat"}


@pytest.mark.parametrize("props", [
    {"type": "dense_vector", "dims": 5000},
    {"type": "dense_vector", "dims": 0},
    {"type": "dense_vector", "dims": 3, "similarity": "hamming"},
    {"type": "dense_vector", "dims": 3, "element_type": "double"},
    {"type": "dense_vector", "dims": 3, "index_options": {"type": "ivf"}},
    {"type": "dense_vector", "dims": 3, "index_options": {"type": "hnsw", "m": 0}},
    {"type": "dense_vector", "dims": 3, "index_options": {"type": "flat", "m": 8}},
    {"type": "dense_vector", "dims": 3, "element_type": "byte",
     "index_options": {"type": "int8_hnsw"}},
    {"type": "dense_vector", "dims": 3, "foo": 1},
    {"type": "dense_vector", "dims": 3,
     "index_options": {"type": "int8_hnsw", "rescore_vector": {"oversample": 0.5}}},
    {"type": "dense_vector", "dims": 3,
     "index_options": {"type": "int8_hnsw", "rescore_vector": {"oversample": 11}}},
    {"type": "dense_vector", "dims": 3,
     "index_options": {"type": "int8_hnsw", "rescore_vector": {"oversample": 2, "x": 1}}},
    {"type": "dense_vector", "dims": 3,
     "index_options": {"type": "int8_hnsw", "rescore_vector": 2}},
    {"type": "dense_vector", "dims": 3,
     "index_options": {"type": "hnsw", "rescore_vector": {"oversample": 2}}},
])
def test_bad_mappings(server, fresh_index, props):
    st, _, b = server.request("PUT", "/" + fresh_index, {"mappings": {"properties": {"v": props}}})
    assert st == 400, b
    assert_error(b, 400, "mapper_parsing_exception")


def test_bad_vectors_fail_their_document_only(server, fresh_index):
    server.request("PUT", "/" + fresh_index, {"mappings": {"properties": {
        "c": {"type": "dense_vector", "dims": 2},
        "d": {"type": "dense_vector", "dims": 2, "similarity": "dot_product"},
        "b": {"type": "dense_vector", "dims": 2, "element_type": "byte", "similarity": "l2_norm"}}}})
    docs = [{"c": [1, 2]}, {"c": [1, 2, 3]}, {"c": [0, 0]}, {"c": ["x", 1]}, {"c": 5},
            {"d": [0.6, 0.8]}, {"d": [1, 1]}, {"b": [1, -128]}, {"b": [1, 128]}, {"b": [1.5, 1]},
            {"c": [1e39, 1]}, {"c": [[1, 2], [3, 4]]}]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs),
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200
    ok = [it["index"]["status"] for it in b["items"]]
    assert ok == [201, 400, 400, 400, 400, 201, 400, 201, 400, 400, 400, 400], b
    for it in b["items"]:
        if it["index"]["status"] == 400:
            assert it["index"]["error"]["type"] == "mapper_parsing_exception", it
    assert server.request("GET", "/%s/_count" % fresh_index)[2]["count"] == 3


def test_dims_from_first_document(server, fresh_index):
    server.request("PUT", "/" + fresh_index,
                   {"mappings": {"properties": {"v": {"type": "dense_vector", "similarity": "l2_norm"}}}})
    st, _, b = server.request("PUT", "/%s/_doc/1?refresh=true" % fresh_index, {"v": [1, 2, 3]})
    assert st == 201, b
    m = server.request("GET", "/%s/_mapping" % fresh_index)[2][fresh_index]["mappings"]
    assert m["properties"]["v"]["dims"] == 3
    st, _, b = server.request("PUT", "/%s/_doc/2" % fresh_index, {"v": [1, 2]})
    assert st == 400, b
    b = search(server, fresh_index, {"knn": {"field": "v", "query_vector": [1, 2, 3], "k": 1}})
    assert ids_of(b) == [1] and b["hits"]["hits"][0]["_score"] == 1.0


def test_recall_hnsw_l2(server, l2_index):
    r = recall(server, "knn-l2", l2_index, QUERIES, "l2_norm")
    print("recall@10 hnsw l2_norm", r)
    assert r >= 0.95, r


def test_scores_are_elasticsearch_scores(server, l2_index):
    q = QUERIES[0]
    b = search(server, "knn-l2", {"knn": {"field": "v", "query_vector": q, "k": 5,
                                          "num_candidates": 200}})
    for h in b["hits"]["hits"]:
        assert h["_score"] == pytest.approx(es_score("l2_norm", l2_index[int(h["_id"])], q),
                                            rel=1e-4)
        assert h["_source"]["v"] == l2_index[int(h["_id"])]
    assert b["hits"]["total"] == {"value": 5, "relation": "eq"}


@pytest.mark.parametrize("every", [2, 20, 1000])
def test_filtered_recall(server, l2_index, every):
    # sel = i % 1000: sel % every == 0 keeps 1/every of the docs (0.1 % for 1000)
    if every == 1000:
        filt = {"term": {"sel": 0}}
        accept = lambda i: i % 1000 == 0  # noqa: E731
    else:
        filt = {"terms": {"sel": list(range(0, 1000, every))}}
        accept = lambda i: (i % 1000) % every == 0  # noqa: E731
    r = recall(server, "knn-l2", l2_index, QUERIES[:10], "l2_norm", accept=accept, filt=filt)
    print("filtered 1/%d recall@10" % every, r)
    assert r >= 0.95, (every, r)



@pytest.fixture(scope="module", params=["hnsw", "int8_hnsw"])
def mip_index(request, server):
    # max_inner_product over vectors of varied norms (centres N(0, 3^2) per dimension): the
    # score is not a metric, so the graph must still find the largest inner products
    index = "knn-mip-" + request.param.replace("_", "-")
    vecs = gauss_mixture(N, DIMS, 11)
    load(server, index, vecs, sim="max_inner_product", itype=request.param)
    yield index, vecs
    server.request("DELETE", "/" + index)


@pytest.mark.parametrize("every", [1, 2, 20, 1000])
def test_filtered_recall_max_inner_product(server, mip_index, every):
    """Filtered kNN with max_inner_product at 100 %, 50 %, 5 % and 0.1 % selectivity:
    recall@10 with num_candidates 100 against the exact top 10 of the filtered set."""
    index, vecs = mip_index
    if every == 1:
        filt, accept = None, None
    elif every == 1000:
        filt = {"term": {"sel": 0}}
        accept = lambda i: i % 1000 == 0  # noqa: E731
    else:
        filt = {"terms": {"sel": list(range(0, 1000, every))}}
        accept = lambda i: (i % 1000) % every == 0  # noqa: E731
    r = recall(server, index, vecs, QUERIES, "max_inner_product", accept=accept, filt=filt)
    print("%s max_inner_product filtered 1/%d recall@10" % (index, every), r)
    assert r >= 0.95, (index, every, r)


def test_knn_query_in_dsl_and_post_filter(server, l2_index):
    q = QUERIES[1]
    b = search(server, "knn-l2", {"query": {"knn": {"field": "v", "query_vector": q, "k": 10,
                                                    "num_candidates": 100}}, "size": 10})
    assert len(b["hits"]["hits"]) == 10
    # a bool filter around the knn query is a post-filter: at most k hits, all passing
    b = search(server, "knn-l2", {"query": {"bool": {
        "must": [{"knn": {"field": "v", "query_vector": q, "k": 10}}],
        "filter": [{"range": {"sel": {"lt": 500}}}]}}, "size": 20})
    assert len(b["hits"]["hits"]) <= 10
    assert all(h["_source"]["sel"] < 500 for h in b["hits"]["hits"])


def test_similarity_threshold_and_boost(server, l2_index):
    q = QUERIES[2]
    base = search(server, "knn-l2", {"knn": {"field": "v", "query_vector": q, "k": 10,
                                             "num_candidates": 100}, "_source": False})
    s = [h["_score"] for h in base["hits"]["hits"]]
    # similarity is a raw l2 distance: keep the hits within the 5th hit's distance
    d5 = math.sqrt(1 / s[4] - 1)
    b = search(server, "knn-l2", {"knn": {"field": "v", "query_vector": q, "k": 10,
                                          "num_candidates": 100, "similarity": d5 * 1.0001},
                                  "_source": False})
    assert ids_of(b) == ids_of(base)[:5]
    b = search(server, "knn-l2", {"knn": {"field": "v", "query_vector": q, "k": 10,
                                          "num_candidates": 100, "boost": 3},
                                  "_source": False})
    assert [h["_score"] for h in b["hits"]["hits"]] == pytest.approx([3 * x for x in s])


def test_hybrid_scores_add(server, l2_index):
    q = QUERIES[3]
    knn = {"field": "v", "query_vector": q, "k": 10, "num_candidates": 100}
    text = {"match": {"t": "w3"}}
    kb = {h["_id"]: h["_score"] for h in search(server, "knn-l2", {"knn": knn, "size": 10})["hits"]["hits"]}
    tb = search(server, "knn-l2", {"query": text, "size": 1000})
    tscore = {h["_id"]: h["_score"] for h in tb["hits"]["hits"]}
    b = search(server, "knn-l2", {"knn": knn, "query": text, "size": 50})
    assert b["hits"]["total"]["value"] == len(set(kb) | set(tscore))
    for h in b["hits"]["hits"]:
        want = kb.get(h["_id"], 0) + tscore.get(h["_id"], 0)
        assert h["_score"] == pytest.approx(want, rel=1e-5), h


def test_several_knn_clauses(server, l2_index):
    a = {"field": "v", "query_vector": QUERIES[4], "k": 3, "num_candidates": 50}
    c = {"field": "v", "query_vector": QUERIES[5], "k": 3, "num_candidates": 50, "boost": 2}
    sa = {h["_id"]: h["_score"] for h in search(server, "knn-l2", {"knn": a})["hits"]["hits"]}
    sc = {h["_id"]: h["_score"] for h in search(server, "knn-l2", {"knn": c})["hits"]["hits"]}
    b = search(server, "knn-l2", {"knn": [a, c], "size": 10})
    got = {h["_id"]: h["_score"] for h in b["hits"]["hits"]}
    assert set(got) == set(sa) | set(sc)
    for k, v in got.items():
        assert v == pytest.approx(sa.get(k, 0) + sc.get(k, 0), rel=1e-5)


def rrf_model(lists, k=60):
    out = {}
    for lst in lists:
        for r, i in enumerate(lst):
            out[i] = out.get(i, 0) + 1 / (k + r + 1)
    return out


def test_rank_rrf_and_retrievers(server, l2_index):
    q = QUERIES[6]
    knn = {"field": "v", "query_vector": q, "k": 10, "num_candidates": 100}
    text = {"match": {"t": "w2"}}
    lk = ids_of(search(server, "knn-l2", {"knn": knn, "size": 20, "_source": False}))
    lt = ids_of(search(server, "knn-l2", {"query": text, "size": 20, "_source": False}))
    model = rrf_model([lt, lk], 20)
    want = sorted(model, key=lambda i: -model[i])[:10]
    forms = [
        {"query": text, "knn": knn, "rank": {"rrf": {"rank_constant": 20, "rank_window_size": 20}}},
        {"retriever": {"rrf": {"retrievers": [{"standard": {"query": text}}, {"knn": knn}],
                               "rank_constant": 20, "rank_window_size": 20}}},
    ]
    for body in forms:
        body["size"] = 10
        b = search(server, "knn-l2", body)
        got = [(int(h["_id"]), h["_score"]) for h in b["hits"]["hits"]]
        assert [s for _, s in got] == pytest.approx([model[i] for i in want], rel=1e-5)
        assert {i for i, _ in got} <= set(model)
    b = search(server, "knn-l2", {"retriever": {"knn": knn}, "size": 10})
    assert ids_of(b) == lk[:10]
    b = search(server, "knn-l2", {"retriever": {"standard": {"query": text, "filter": {"range": {"sel": {"lt": 100}}}}}})
    assert all(h["_source"]["sel"] < 100 for h in b["hits"]["hits"])


def test_aggregations_on_knn_results(server, l2_index):
    q = QUERIES[8]
    aggs = {"s": {"histogram": {"field": "sel", "interval": 100}}}
    b = search(server, "knn-l2", {"knn": {"field": "v", "query_vector": q, "k": 10,
                                          "num_candidates": 50}, "aggs": aggs, "size": 10})
    buckets = b["aggregations"]["s"]["buckets"]
    assert sum(x["doc_count"] for x in buckets) == 10
    want = {}
    for h in b["hits"]["hits"]:
        key = float(h["_source"]["sel"] // 100 * 100)
        want[key] = want.get(key, 0) + 1
    assert {x["key"]: x["doc_count"] for x in buckets if x["doc_count"]} == want
    # with rank.rrf the aggregations cover the query's matches
    b = search(server, "knn-l2", {"query": {"match": {"t": "w4"}}, "aggs": aggs, "size": 5,
                                  "knn": {"field": "v", "query_vector": q, "k": 5},
                                  "rank": {"rrf": {}}})
    total = search(server, "knn-l2", {"query": {"match": {"t": "w4"}}, "size": 0})["hits"]["total"]
    assert sum(x["doc_count"] for x in b["aggregations"]["s"]["buckets"]) == total["value"]


def test_search_errors(server, l2_index):
    bad = [
        ({"knn": {"field": "v", "query_vector": [1, 2], "k": 3}}, "illegal_argument_exception"),
        ({"knn": {"field": "v", "query_vector": QUERIES[0], "k": 10, "num_candidates": 5}},
         "illegal_argument_exception"),
        ({"knn": {"field": "v", "query_vector": QUERIES[0], "k": 0}}, "illegal_argument_exception"),
        ({"knn": {"field": "v", "query_vector": QUERIES[0], "k": 5, "num_candidates": 10001}},
         "illegal_argument_exception"),
        ({"knn": {"field": "t", "query_vector": QUERIES[0], "k": 5}}, "illegal_argument_exception"),
        ({"knn": {"field": "nope", "query_vector": QUERIES[0], "k": 5}}, "illegal_argument_exception"),
        ({"knn": {"field": "v", "k": 5}}, "illegal_argument_exception"),
        ({"knn": {"field": "v", "query_vector": QUERIES[0], "k": 5, "foo": 1}}, "parsing_exception"),
        ({"knn": {"field": "v", "query_vector": QUERIES[0]}, "rank": {"rrf": {}}},
         "illegal_argument_exception"),
        ({"retriever": {"knn": {"field": "v", "query_vector": QUERIES[0]}}, "query": {"match_all": {}}},
         "illegal_argument_exception"),
        ({"retriever": {"rrf": {"retrievers": [{"standard": {}}]}}}, "illegal_argument_exception"),
    ]
    for body, etype in bad:
        st, _, b = server.request("POST", "/knn-l2/_search", body)
        assert st == 400, (body, b)
        assert_error(b, 400, etype)


@pytest.fixture(scope="module")
def int8_index(server):
    vecs = gauss_mixture(N, DIMS, 1)
    load(server, "knn-int8", vecs, itype="int8_hnsw")
    yield vecs
    server.request("DELETE", "/knn-int8")


def test_rescore_vector_oversample(server, int8_index):
    """rescore_vector.oversample (Elasticsearch 8.18+) on int8_hnsw, in a top-level knn
    clause, the knn query and the knn retriever alike: the beam is max(num_candidates,
    ceil(k oversample)) and its best ceil(k oversample) by quantized score are rescored, so
    scores are exact; a large oversample finds the exact top k, and recall rises with it."""
    vecs = int8_index

    def knn(q, os, nc=10):
        c = {"field": "v", "query_vector": q, "k": 10, "num_candidates": nc}
        if os is not None:
            c["rescore_vector"] = {"oversample": os}
        return c

    found = {}
    for os in (1, 2, 100):
        hit = 0
        for q in QUERIES:
            truth = brute(vecs, q, "l2_norm", 10)
            b = search(server, "knn-int8", {"knn": knn(q, os), "size": 10})
            got = ids_of(b)
            hit += len(set(got) & set(truth))
            for h in b["hits"]["hits"]:  # rescored with the raw floats: exact scores
                want = es_score("l2_norm", vecs[int(h["_id"])], q)
                assert abs(h["_score"] - want) <= 1e-5 * max(1, want), (os, h, want)
            if os == 100:
                assert got == truth, (q, got, truth)
            for other in ({"query": {"knn": knn(q, os)}, "size": 10},
                          {"retriever": {"knn": knn(q, os)}, "size": 10}):
                assert ids_of(search(server, "knn-int8", other)) == got, other
        found[os] = hit / (10 * len(QUERIES))
    print("int8_hnsw recall@10, num_candidates 10, by oversample:", found)
    # oversample 1 returns the k best by quantized score (exactly ordered): int8 over these
    # 24 dims misses some of the exact top 10 (11 of 200 when written), which the default
    # (a beam of at least 3 k, all rescored) finds: the oversample reaches the search
    assert found[1] < found[100] == 1.0 and found[1] <= found[2], found
    assert found[2] >= 0.9, found
    # 0 (Elasticsearch 9.1+: no oversample) is accepted: scry's default, every candidate of a
    # beam of at least 3 k rescored
    q = QUERIES[0]
    assert ids_of(search(server, "knn-int8", {"knn": knn(q, 0), "size": 10})) == ids_of(
        search(server, "knn-int8", {"knn": knn(q, None), "size": 10}))
    bad = [({"oversample": 0.5}, "illegal_argument_exception"),
           ({"oversample": -1}, "illegal_argument_exception"),
           ({"oversample": "x"}, "parsing_exception"),
           ({}, "illegal_argument_exception"),
           ({"oversample": 2, "foo": 1}, "parsing_exception"),
           (3, "parsing_exception")]
    for rv, etype in bad:
        for body in ({"knn": dict(knn(q, None), rescore_vector=rv)},
                     {"query": {"knn": dict(knn(q, None), rescore_vector=rv)}},
                     {"retriever": {"knn": dict(knn(q, None), rescore_vector=rv)}}):
            st, _, b = server.request("POST", "/knn-int8/_search", body)
            assert st == 400, (body, b)
            assert_error(b, 400, etype)
    st, _, b = server.request("POST", "/knn-int8/_search",
                              {"knn": dict(knn(q, None), rescore_vector={"oversample": 0.5})})
    assert "[oversample] must be >= 1.0" in b["error"]["reason"], b


def test_rescore_vector_mapping_default(server, fresh_index, int8_index):
    """index_options.rescore_vector.oversample is the default of the field's knn clauses
    (shown by GET _mapping); a clause's own rescore_vector (0 included) overrides it."""
    vecs = int8_index
    io = {"type": "int8_hnsw", "m": 16, "ef_construction": 100,
          "rescore_vector": {"oversample": 1}}
    load(server, fresh_index, vecs, extra={"v": {"type": "dense_vector", "dims": DIMS,
                                                 "similarity": "l2_norm", "index_options": io}})
    m = server.request("GET", "/%s/_mapping" % fresh_index)[2][fresh_index]["mappings"]
    assert m["properties"]["v"]["index_options"] == io, m
    found = {}
    for os in (None, 1, 0):
        hit = 0
        for q in QUERIES:
            c = {"field": "v", "query_vector": q, "k": 10, "num_candidates": 10}
            if os is not None:
                c["rescore_vector"] = {"oversample": os}
            got = ids_of(search(server, fresh_index, {"knn": c, "size": 10}))
            hit += len(set(got) & set(brute(vecs, q, "l2_norm", 10)))
        found[os] = hit / (10 * len(QUERIES))
    print("mapping oversample 1, recall@10 by the clause's oversample:", found)
    assert found[None] == found[1] < found[0], found


def test_int8_and_cosine_recall_deletes_restart_forcemerge(fresh_index):
    """int8_hnsw over cosine across two shards: recall after rescoring, deletes never
    returned, and identical answers after a restart and after a force merge."""
    tmp = tempfile.mkdtemp(prefix="scry-knn-")
    srv = Server(os.path.join(tmp, "data")).start()
    try:
        vecs = gauss_mixture(N, DIMS, 3)
        load(srv, fresh_index, vecs, sim="cosine", itype="int8_hnsw", shards=2)
        r = recall(srv, fresh_index, vecs, QUERIES, "cosine")
        print("recall@10 int8_hnsw cosine (rescored), 2 shards", r)
        assert r >= 0.95, r
        gone = set(range(0, N, 10))
        lines = "".join('{"delete":{"_index":"%s","_id":"%d"}}\n' % (fresh_index, i) for i in gone)
        st, _, b = srv.request("POST", "/_bulk?refresh=true", lines,
                               headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not b["errors"]
        alive = lambda i: i not in gone  # noqa: E731
        r = recall(srv, fresh_index, vecs, QUERIES, "cosine", accept=alive)
        assert r >= 0.95, r

        def answers():
            out = []
            for q in QUERIES[:8]:
                b = search(srv, fresh_index, {"knn": {"field": "v", "query_vector": q, "k": 10,
                                                      "num_candidates": 100}, "_source": False})
                out.append([(h["_id"], round(h["_score"], 6)) for h in b["hits"]["hits"]])
                assert not gone & set(ids_of(b))
            return out

        before = answers()
        srv.request("POST", "/%s/_flush" % fresh_index)
        assert srv.stop() == 0
        srv.start()
        assert answers() == before
        st, _, b = srv.request("POST", "/%s/_forcemerge?max_num_segments=1" % fresh_index)
        assert st == 200, b
        merged = answers()
        # a merged graph is another graph: exact-score answers may differ at the tail only
        same = sum(len(set(a) & set(m)) for a, m in zip(before, merged))
        assert same >= 0.95 * sum(len(a) for a in before)
        r = recall(srv, fresh_index, vecs, QUERIES, "cosine", accept=alive)
        assert r >= 0.95, r
    finally:
        srv.stop()


def test_global_k_across_shards(server, fresh_index):
    vecs = gauss_mixture(600, DIMS, 5)
    load(server, fresh_index, vecs, shards=3, batches=2)
    for q in QUERIES[:5]:
        b = search(server, fresh_index, {"knn": {"field": "v", "query_vector": q, "k": 7,
                                                 "num_candidates": 100}, "size": 20})
        assert b["hits"]["total"] == {"value": 7, "relation": "eq"}
        assert ids_of(b) == brute(vecs, q, "l2_norm", 7)


def test_knn_query_k_defaults_to_size(server, l2_index):
    # Elasticsearch 8.14+: the knn query's k defaults to the request's size (it was 10 here)
    q = QUERIES[9]
    b = search(server, "knn-l2", {"query": {"knn": {"field": "v", "query_vector": q,
                                                    "num_candidates": 100}},
                                  "size": 25, "_source": False})
    assert b["hits"]["total"] == {"value": 25, "relation": "eq"}
    assert ids_of(b) == brute(l2_index, q, "l2_norm", 25)
    # no size: 10; an explicit num_candidates below size drives a defaulted k
    b = search(server, "knn-l2", {"query": {"knn": {"field": "v", "query_vector": q}},
                                  "_source": False})
    assert b["hits"]["total"]["value"] == 10
    b = search(server, "knn-l2", {"query": {"knn": {"field": "v", "query_vector": q,
                                                    "num_candidates": 6}},
                                  "size": 25, "_source": False})
    assert b["hits"]["total"]["value"] == 6
    # an explicit k still must not exceed num_candidates
    st, _, b = server.request("POST", "/knn-l2/_search", {"query": {"knn": {
        "field": "v", "query_vector": q, "k": 20, "num_candidates": 6}}})
    assert st == 400, b


def test_hybrid_global_k_equals_one_shard(server, fresh_index):
    # knn + query: the knn part is the global top k (Elasticsearch's DFS kNN phase), so a
    # 3-shard index answers exactly as a 1-shard index of the same docs
    vecs = gauss_mixture(900, DIMS, 8)
    one = fresh_index + "-one"
    load(server, one, vecs, shards=1, batches=2)
    load(server, fresh_index, vecs, shards=3, batches=2)
    try:
        for qi, q in enumerate(QUERIES[10:15]):
            body = {"knn": [{"field": "v", "query_vector": q, "k": 5, "num_candidates": 100},
                            {"field": "v", "query_vector": QUERIES[qi], "k": 3,
                             "num_candidates": 50, "boost": 2}],
                    # constant-score text part: BM25 statistics are per shard in both engines
                    "query": {"constant_score": {"filter": {"match": {"t": "w%d" % qi}}}},
                    "size": 200, "_source": False}
            a = search(server, one, body)
            b = search(server, fresh_index, body)
            assert b["hits"]["total"] == a["hits"]["total"]
            ga = sorted((h["_id"], round(h["_score"], 5)) for h in a["hits"]["hits"])
            gb = sorted((h["_id"], round(h["_score"], 5)) for h in b["hits"]["hits"])
            assert gb == ga
    finally:
        server.request("DELETE", "/" + one)


def test_byte_and_mip_and_flat(server, fresh_index):
    server.request("PUT", "/" + fresh_index, {"mappings": {"properties": {
        "b": {"type": "dense_vector", "dims": 3, "element_type": "byte", "similarity": "dot_product"},
        "m": {"type": "dense_vector", "dims": 2, "similarity": "max_inner_product",
              "index_options": {"type": "flat"}}}}})
    docs = [{"b": [10, -20, 30], "m": [1, 2]}, {"b": [-128, 127, 0], "m": [-3, 0.5]}]
    server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs),
                   headers={"Content-Type": "application/x-ndjson"})
    b = search(server, fresh_index, {"knn": {"field": "b", "query_vector": [1, 2, 3], "k": 2}})
    dots = {"0": 10 - 40 + 90, "1": -128 + 254}
    for h in b["hits"]["hits"]:
        assert h["_score"] == pytest.approx(0.5 + dots[h["_id"]] / (3 * 32768.0))
    b = search(server, fresh_index, {"knn": {"field": "b", "query_vector": "0a14ff", "k": 1}})
    assert len(b["hits"]["hits"]) == 1
    b = search(server, fresh_index, {"knn": {"field": "m", "query_vector": [1, 1], "k": 2}})
    got = {h["_id"]: h["_score"] for h in b["hits"]["hits"]}
    assert got["0"] == pytest.approx(3 + 1) and got["1"] == pytest.approx(1 / (1 + 2.5))


def test_official_client(server, l2_index):
    elasticsearch = pytest.importorskip("elasticsearch")
    es = elasticsearch.Elasticsearch([server.url])
    try:
        q = QUERIES[7]
        r = es.search(index="knn-l2", body={"knn": {"field": "v", "query_vector": q, "k": 10,
                                                    "num_candidates": 100}, "_source": False})
        truth = brute(l2_index, q, "l2_norm", 10)
        assert len(set(int(h["_id"]) for h in r["hits"]["hits"]) & set(truth)) >= 9
        r = es.search(index="knn-l2", body={"query": {"knn": {"field": "v", "query_vector": q,
                                                              "k": 5}}})
        assert len(r["hits"]["hits"]) == 5
    finally:
        es.close()


def test_kill9_during_vector_indexing_loses_no_acknowledged_vector(fresh_index):
    """A writer thread streams vectors in _bulk requests; the server is killed with SIGKILL
    in the middle; after a restart every acknowledged document is counted, its vector is found
    by an exact kNN search (a filter on its id) and by a graph search for its own vector (l2
    score 1.0).

    The field is a float `hnsw`, not the default int8_hnsw: int8 codes share one [lo, hi] over
    all dims (as Lucene's quantizer), and here dim 0 is the doc number while dims 1-7 stay in
    0..100. Once ~24k docs are acknowledged, hi ~ 25k, a code step ~ 200, dims 1-7 all
    quantize to 0 and ~200 neighbouring docs share one code: a beam of 50 stalls on that
    plateau, on a fresh index as after recovery. That is int8 recall on this data, not a
    durability question, so it must not decide this test."""
    import signal
    import threading
    import time

    import urllib3

    tmp = tempfile.mkdtemp(prefix="scry-knn-kill-")
    srv = Server(os.path.join(tmp, "data")).start()
    try:
        st, _, b = srv.request("PUT", "/" + fresh_index, {"mappings": {"properties": {
            "v": {"type": "dense_vector", "dims": 8, "similarity": "l2_norm",
                  "index_options": {"type": "hnsw"}}}}})
        assert st == 200, b
        vec = lambda i: [float(i)] + [float((i * 7 + j * 13) % 101) for j in range(7)]  # noqa: E731
        acked, stop = [], threading.Event()

        def writer():
            http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=2, read=10))
            i = 0
            while not stop.is_set():
                lines = []
                for j in range(i, i + 40):
                    lines.append('{"index":{"_index":"%s","_id":"%d"}}' % (fresh_index, j))
                    lines.append('{"v":%s}' % vec(j))
                try:
                    r = http.request("POST", srv.url + "/_bulk", body="\n".join(lines) + "\n",
                                     headers={"Content-Type": "application/x-ndjson"})
                except Exception:
                    return
                if r.status == 200:
                    import json
                    for it in json.loads(r.data)["items"]:
                        if it["index"]["status"] in (200, 201):
                            acked.append(int(it["index"]["_id"]))
                i += 40

        t = threading.Thread(target=writer)
        t.start()
        time.sleep(0.6)
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait()
        stop.set()
        t.join()
        assert acked, "nothing was acknowledged before the kill"
        srv.start()
        srv.request("POST", "/%s/_refresh" % fresh_index)
        st, _, b = srv.request("GET", "/%s/_count" % fresh_index)
        assert st == 200 and b["count"] >= len(set(acked)), (b, len(set(acked)))
        for i in acked[:: max(1, len(acked) // 60)] + acked[-5:]:
            exact = {"field": "v", "query_vector": vec(i), "k": 1, "num_candidates": 50,
                     "filter": {"ids": {"values": [str(i)]}}}
            b = search(srv, fresh_index, {"knn": exact, "_source": False})
            assert [(h["_id"], h["_score"]) for h in b["hits"]["hits"]] == [(str(i), 1.0)], (i, b)
            b = search(srv, fresh_index, {"knn": {"field": "v", "query_vector": vec(i), "k": 1,
                                                  "num_candidates": 50}, "_source": False})
            top = b["hits"]["hits"][0]
            assert top["_score"] == 1.0 and top["_id"] == str(i), (i, top)
    finally:
        srv.stop()


def test_bit_vectors_hamming(server, fresh_index):
    st, _, b = server.request("PUT", "/" + fresh_index, {"mappings": {"properties": {
        "h": {"type": "dense_vector", "dims": 16, "element_type": "bit"}}}})
    assert st == 200, b
    m = server.request("GET", "/%s/_mapping" % fresh_index)[2][fresh_index]["mappings"]["properties"]
    assert m["h"]["element_type"] == "bit" and m["h"]["similarity"] == "l2_norm"
    assert m["h"]["index_options"]["type"] == "hnsw"
    docs = [{"h": "ff00"}, {"h": [15, -1]}, {"h": "0000"}, {"h": "f0"}, {"h": [1, 2, 3]}]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs),
                              headers={"Content-Type": "application/x-ndjson"})
    assert [it["index"]["status"] for it in b["items"]] == [201, 201, 201, 400, 400], b
    b = search(server, fresh_index, {"knn": {"field": "h", "query_vector": "ff0f", "k": 3,
                                             "num_candidates": 10}})
    # hamming to ff0f: ff00 -> 4, 0fff -> 8, 0000 -> 12; score (16 - d) / 16
    got = [(h["_id"], h["_score"]) for h in b["hits"]["hits"]]
    assert got == [("0", 0.75), ("1", 0.5), ("2", 0.25)], got
    b = search(server, fresh_index, {"knn": {"field": "h", "query_vector": [-1, 15], "k": 3,
                                             "similarity": 4}})
    assert ids_of(b) == [0]
    for props in ({"type": "dense_vector", "dims": 12, "element_type": "bit"},
                  {"type": "dense_vector", "dims": 16, "element_type": "bit", "similarity": "cosine"},
                  {"type": "dense_vector", "dims": 16, "element_type": "bit",
                   "index_options": {"type": "int8_hnsw"}}):
        st, _, b = server.request("PUT", "/%s-bad" % fresh_index,
                                  {"mappings": {"properties": {"h": props}}})
        assert st == 400, (props, b)
