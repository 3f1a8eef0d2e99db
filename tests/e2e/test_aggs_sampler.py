"""The sampler aggregation over HTTP (three shards, two segments each): under queries whose
matches all score alike, each shard's sample is its first shard_size matches in doc order
(Elasticsearch's top docs by score, ties by doc id). The brute force reads each shard's
matches in doc order (preference=_shards:N, sort _doc) and computes the sub-aggregations over
the samples in Python; random docs with missing and multi-valued fields (the seed is
printed). Errors: a scoring query, a bad shard_size."""
import os
import random

import pytest

from conftest import assert_error, make_index

SEED = int(os.environ.get("SAMPLER_SEED", random.randrange(1 << 30)))
SHARDS = 3


def make_docs(rnd, n=300):
    docs = []
    for _ in range(n):
        d = {"g": "xyz"[rnd.randrange(3)]}
        r = rnd.random()
        if r < 0.8:
            d["k"] = "k%d" % rnd.randrange(12)
        elif r < 0.9:
            d["k"] = ["k%d" % rnd.randrange(12), "k%d" % rnd.randrange(12)]
        if rnd.random() < 0.9:
            d["n"] = rnd.randrange(50)
        docs.append(d)
    return docs


@pytest.fixture(scope="module")
def idx(server):
    print("sampler seed", SEED)
    rnd = random.Random(SEED)
    name = "aggs-sampler-e2e"
    docs = make_docs(rnd)  # loaded in two parts: two segments per shard
    make_index(server, name, {
        "settings": {"number_of_shards": SHARDS},
        "mappings": {"properties": {"g": {"type": "keyword"}, "k": {"type": "keyword"},
                                    "n": {"type": "long"}}}}, docs,
               headers={"Content-Type": "application/x-ndjson"}, segments=2)
    yield name, docs
    server.request("DELETE", "/" + name)


def shard_matches(server, name, query):
    """Each shard's matching doc ids in doc order."""
    out = []
    for s in range(SHARDS):
        st, _, b = server.request("POST", "/%s/_search?preference=_shards:%d" % (name, s), {
            "query": query, "size": 10000, "sort": ["_doc"], "_source": False})
        assert st == 200, b
        out.append([int(h["_id"]) for h in b["hits"]["hits"]])
    assert sum(len(x) for x in out) == len({i for x in out for i in x})
    return out


def values(d, f):
    v = d.get(f)
    return [] if v is None else sorted(set(v if isinstance(v, list) else [v]))


def terms_counts(docs, f):
    c = {}
    for d in docs:
        for v in values(d, f):
            c[v] = c.get(v, 0) + 1
    return c


def got_terms(agg):
    return {b["key"]: b["doc_count"] for b in agg["buckets"]}


QUERIES = [
    {"match_all": {}},
    {"range": {"n": {"gte": 10, "lt": 40}}},
    {"bool": {"filter": [{"term": {"g": "x"}}], "must_not": [{"range": {"n": {"lt": 5}}}]}},
    {"constant_score": {"filter": {"terms": {"k": ["k1", "k2", "k3"]}}}},
]


@pytest.mark.parametrize("qi", range(len(QUERIES)))
@pytest.mark.parametrize("shard_size", [1, 7, 40, 1000])
def test_sampler_top_level(server, idx, qi, shard_size):
    name, docs = idx
    q = QUERIES[qi]
    per_shard = shard_matches(server, name, q)
    sample = [docs[i] for ids in per_shard for i in ids[:shard_size]]
    st, _, b = server.request("POST", "/%s/_search" % name, {"size": 0, "query": q, "aggs": {
        "s": {"sampler": {"shard_size": shard_size}, "aggs": {
            "k": {"terms": {"field": "k", "size": 100}},
            "n": {"terms": {"field": "n", "size": 100}},
            "avg": {"avg": {"field": "n"}}}}}})
    assert st == 200, b
    s = b["aggregations"]["s"]
    assert b["hits"]["total"]["value"] == sum(len(x) for x in per_shard)
    assert s["doc_count"] == len(sample), SEED
    assert got_terms(s["k"]) == terms_counts(sample, "k"), SEED
    assert got_terms(s["n"]) == terms_counts(sample, "n"), SEED
    ns = [v for d in sample for v in values(d, "n")]
    if ns:
        assert abs(s["avg"]["value"] - sum(ns) / len(ns)) < 1e-9
    else:
        assert s["avg"]["value"] is None


def test_sampler_per_bucket(server, idx):
    """Under a terms bucket each bucket samples its own first shard_size docs per shard."""
    name, docs = idx
    q = {"range": {"n": {"gte": 3}}}
    per_shard = shard_matches(server, name, q)
    st, _, b = server.request("POST", "/%s/_search" % name, {"size": 0, "query": q, "aggs": {
        "g": {"terms": {"field": "g"}, "aggs": {
            "s": {"sampler": {"shard_size": 4}, "aggs": {
                "k": {"terms": {"field": "k", "size": 100}}}}}}}})
    assert st == 200, b
    buckets = b["aggregations"]["g"]["buckets"]
    assert len(buckets) == 3
    for bk in buckets:
        sample = []
        for ids in per_shard:
            sample += [docs[i] for i in ids if bk["key"] in values(docs[i], "g")][:4]
        assert bk["s"]["doc_count"] == len(sample), SEED
        assert got_terms(bk["s"]["k"]) == terms_counts(sample, "k"), SEED


def test_sampler_path_and_typed_keys(server, idx):
    name, _ = idx
    per_shard = shard_matches(server, name, {"match_all": {}})
    st, _, b = server.request("POST", "/%s/_search?typed_keys=true" % name, {"size": 0, "aggs": {
        "s": {"sampler": {}, "aggs": {"m": {"max": {"field": "n"}}}},
        "mb": {"max_bucket": {"buckets_path": "g>s>m"}},
        "g": {"terms": {"field": "g"}, "aggs": {"s": {"sampler": {"shard_size": 2},
                                                       "aggs": {"m": {"max": {"field": "n"}}}}}}}})
    assert st == 200, b
    aggs = b["aggregations"]
    assert "sampler#s" in aggs and aggs["sampler#s"]["doc_count"] == sum(
        min(100, len(x)) for x in per_shard)
    assert "max_bucket#mb" in aggs


@pytest.mark.parametrize("body,etype", [
    ({"query": {"match": {"k": "k1"}},
      "aggs": {"s": {"sampler": {"shard_size": 5}, "aggs": {"k": {"terms": {"field": "k"}}}}}},
     None),
    ({"aggs": {"s": {"sampler": {"shard_size": 0}}}}, "illegal_argument_exception"),
    ({"aggs": {"s": {"sampler": {"shard_size": "x"}}}}, None),
    ({"aggs": {"s": {"sampler": {"field": "k"}}}}, None),
])
def test_sampler_errors(server, idx, body, etype):
    name, _ = idx
    st, _, b = server.request("POST", "/%s/_search" % name, dict(body, size=0))
    assert st == 400, b
    assert b["status"] == 400 and b["error"]["root_cause"][0]["type"] in (
        "illegal_argument_exception", "x_content_parse_exception", "parsing_exception"), b
    if etype:
        assert_error(b, 400, etype)
