"""The diversified_sampler aggregation over HTTP (three shards, two segments each): under
queries whose matches all score alike, each shard's sample is its matches in doc order, a doc
taken while the sample is below shard_size and its value of the diversifying field has fewer
than max_docs_per_value docs in it (docs without a value share one key). The brute force reads
each shard's matches in doc order (preference=_shards:N, sort _doc) and computes the samples and
their sub-aggregations in Python over random docs (the seed is printed). Errors: a multi-valued
doc, bad parameters, a scoring query."""
import json
import os
import random

import pytest

from conftest import assert_error, make_index

SEED = int(os.environ.get("DIVERSIFIED_SEED", random.randrange(1 << 30)))
SHARDS = 3


def make_docs(rnd, n=300):
    docs = []
    for _ in range(n):
        d = {"g": "xyz"[rnd.randrange(3)], "m": ["a", "b"]}
        if rnd.random() < 0.85:
            d["k"] = "k%d" % rnd.randrange(12)
        if rnd.random() < 0.9:
            d["n"] = rnd.randrange(20)
        docs.append(d)
    return docs


@pytest.fixture(scope="module")
def idx(server):
    print("diversified_sampler seed", SEED)
    rnd = random.Random(SEED)
    name = "aggs-diversified-e2e"
    docs = make_docs(rnd)  # loaded in two parts: two segments per shard
    make_index(server, name, {
        "settings": {"number_of_shards": SHARDS},
        "mappings": {"properties": {"g": {"type": "keyword"}, "k": {"type": "keyword"},
                                    "m": {"type": "keyword"}, "n": {"type": "long"}}}}, docs,
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
    return out


def sample(docs, ids, field, shard_size, per_value):
    taken, seen = [], {}
    for i in ids:
        if len(taken) >= shard_size:
            break
        key = docs[i].get(field)
        if seen.get(key, 0) < per_value:
            seen[key] = seen.get(key, 0) + 1
            taken.append(docs[i])
    return taken


def counts(docs, f):
    c = {}
    for d in docs:
        if f in d:
            c[d[f]] = c.get(d[f], 0) + 1
    return c


def got_terms(agg):
    return {b["key"]: b["doc_count"] for b in agg["buckets"]}


QUERIES = [
    {"match_all": {}},
    {"range": {"n": {"gte": 3, "lt": 15}}},
    {"bool": {"filter": [{"term": {"g": "x"}}]}},
]


@pytest.mark.parametrize("qi", range(len(QUERIES)))
@pytest.mark.parametrize("field,shard_size,per_value", [
    ("k", 100, 1), ("k", 5, 1), ("k", 40, 3), ("n", 100, 2), ("n", 1000, 1000)])
def test_diversified_top_level(server, idx, qi, field, shard_size, per_value):
    name, docs = idx
    q = QUERIES[qi]
    per_shard = shard_matches(server, name, q)
    smp = [d for ids in per_shard for d in sample(docs, ids, field, shard_size, per_value)]
    params = {"field": field, "shard_size": shard_size, "max_docs_per_value": per_value}
    if shard_size == 5:
        params["execution_hint"] = "map"
    st, _, b = server.request("POST", "/%s/_search" % name, {"size": 0, "query": q, "aggs": {
        "s": {"diversified_sampler": params, "aggs": {
            "k": {"terms": {"field": "k", "size": 100}},
            "n": {"terms": {"field": "n", "size": 100}}}}}})
    assert st == 200, b
    s = b["aggregations"]["s"]
    assert s["doc_count"] == len(smp), SEED
    assert got_terms(s["k"]) == counts(smp, "k"), SEED
    assert got_terms(s["n"]) == counts(smp, "n"), SEED


def test_diversified_per_bucket(server, idx):
    """Under a terms bucket each bucket diversifies its own sample per shard."""
    name, docs = idx
    q = {"match_all": {}}
    per_shard = shard_matches(server, name, q)
    st, _, b = server.request("POST", "/%s/_search?typed_keys=true" % name, {
        "size": 0, "query": q, "aggs": {"g": {"terms": {"field": "g"}, "aggs": {
            "s": {"diversified_sampler": {"field": "k", "shard_size": 6},
                  "aggs": {"k": {"terms": {"field": "k", "size": 100}}}}}}}})
    assert st == 200, b
    buckets = b["aggregations"]["sterms#g"]["buckets"]
    assert len(buckets) == 3
    for bk in buckets:
        smp = []
        for ids in per_shard:
            smp += sample(docs, [i for i in ids if docs[i]["g"] == bk["key"]], "k", 6, 1)
        assert bk["sampler#s"]["doc_count"] == len(smp), SEED
        assert got_terms(bk["sampler#s"]["sterms#k"]) == counts(smp, "k"), SEED


def test_diversified_unmapped(server, idx):
    name, _ = idx
    st, _, b = server.request("POST", "/%s/_search" % name, {"size": 0, "aggs": {
        "s": {"diversified_sampler": {"field": "nope"},
              "aggs": {"k": {"terms": {"field": "k"}}}}}})
    assert st == 200, b
    assert b["aggregations"]["s"]["doc_count"] == 0
    assert b["aggregations"]["s"]["k"]["buckets"] == []


@pytest.mark.parametrize("body,etype,text", [
    ({"aggs": {"s": {"diversified_sampler": {"field": "m"}}}},
     "search_phase_execution_exception", "single valued-field"),
    ({"aggs": {"s": {"diversified_sampler": {"field": "k", "shard_size": 0}}}},
     "illegal_argument_exception", "[shard_size] must be greater than 0"),
    ({"aggs": {"s": {"diversified_sampler": {"field": "k", "max_docs_per_value": 0}}}},
     "illegal_argument_exception", "[max_docs_per_value] must be greater than 0"),
    ({"aggs": {"s": {"diversified_sampler": {"field": "k", "execution_hint": "fast"}}}},
     "illegal_argument_exception", "Unknown `execution_hint`"),
    ({"aggs": {"s": {"diversified_sampler": {"shard_size": 5}}}},
     "illegal_argument_exception", "Required one of fields [field, script]"),
    ({"query": {"match": {"k": "k1"}}, "aggs": {"s": {"diversified_sampler": {"field": "k"}}}},
     "search_phase_execution_exception", "[diversified_sampler] aggregation [s] under a query"),
])
def test_diversified_errors(server, idx, body, etype, text):
    name, _ = idx
    st, _, b = server.request("POST", "/%s/_search" % name, dict(body, size=0))
    assert st == 400, b
    assert b["error"]["type"] == etype, b
    assert text in json.dumps(b), b
    if etype != "search_phase_execution_exception":
        assert_error(b, 400, etype)
