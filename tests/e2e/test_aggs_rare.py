"""rare_terms over HTTP with the real server: the terms in at most max_doc_count documents,
exact across three shards (a term rare on one shard but frequent on another is not rare), on
keyword and numeric fields, with include/exclude, missing and sub-aggregations; errors."""
import random

import pytest

from conftest import bulk_body


@pytest.fixture(scope="module")
def idx(server):
    name = "aggs-rare-e2e"
    server.request("DELETE", "/" + name)
    st, _, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 3},
        "mappings": {"properties": {"k": {"type": "keyword"}, "n": {"type": "long"},
                                    "v": {"type": "double"}}}})
    assert st == 200, b
    rnd = random.Random(11)
    docs = []
    for i in range(600):
        # a long tail: term t<j> appears about 600 / (j + 1)^1.3 times
        j = min(int(rnd.paretovariate(0.8)) - 1, 400)
        d = {"k": "t%03d" % j, "n": j % 97, "v": rnd.random()}
        if i % 50 == 0:
            del d["k"]
        docs.append(d)
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(name, docs),
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    yield name, docs
    server.request("DELETE", "/" + name)


def search(server, index, body):
    st, _, b = server.request("POST", "/%s/_search" % index, body)
    return st, b


def counts(docs, field, missing=None):
    c = {}
    for d in docs:
        v = d.get(field, missing)
        if v is not None:
            c[v] = c.get(v, 0) + 1
    return c


@pytest.mark.parametrize("max_count", [1, 2, 5])
def test_rare_keyword(server, idx, max_count):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {"r": {
        "rare_terms": {"field": "k", "max_doc_count": max_count},
        "aggs": {"s": {"sum": {"field": "v"}}}}}})
    assert st == 200, b
    c = counts(docs, "k")
    want = sorted(k for k, n in c.items() if n <= max_count)
    got = b["aggregations"]["r"]["buckets"]
    assert [x["key"] for x in got] == want
    assert len(want) > 3
    for x in got:
        assert x["doc_count"] == c[x["key"]]
        assert x["s"]["value"] == pytest.approx(sum(d["v"] for d in docs if d.get("k") == x["key"]))
    assert set(b["aggregations"]["r"]) == {"buckets"}


def test_rare_numeric_include_missing_and_typed_keys(server, idx):
    name, docs = idx
    st, _, b = server.request("POST", "/%s/_search?typed_keys" % name, {"size": 0, "aggs": {
        "r": {"rare_terms": {"field": "n", "max_doc_count": 3, "exclude": [5, 7]}},
        "m": {"rare_terms": {"field": "k", "missing": "none", "include": "t.*|none",
                             "max_doc_count": 12}}}})
    assert st == 200, b
    c = counts(docs, "n")
    want = sorted(k for k, n in c.items() if n <= 3 and k not in (5, 7))
    assert [x["key"] for x in b["aggregations"]["lrareterms#r"]["buckets"]] == want
    cm = counts(docs, "k", missing="none")
    assert cm["none"] == 12
    want = sorted(k for k, n in cm.items() if n <= 12)
    assert [x["key"] for x in b["aggregations"]["srareterms#m"]["buckets"]] == want


def test_rare_under_terms_and_sum_across_shards(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {"by": {
        "range": {"field": "v", "ranges": [{"to": 0.5}, {"from": 0.5}]},
        "aggs": {"r": {"rare_terms": {"field": "k", "max_doc_count": 2}}}}}})
    assert st == 200, b
    for bucket, (lo, hi) in zip(b["aggregations"]["by"]["buckets"], ((0, 0.5), (0.5, 2))):
        sub = [d for d in docs if lo <= d["v"] < hi]
        c = counts(sub, "k")
        assert [x["key"] for x in bucket["r"]["buckets"]] == sorted(
            k for k, n in c.items() if n <= 2)


@pytest.mark.parametrize("params", [
    {"field": "k", "max_doc_count": 101},
    {"field": "k", "max_doc_count": 0},
    {"field": "k", "precision": 0},
    {"field": "k", "size": 3},
    {"max_doc_count": 1},
])
def test_errors(server, idx, params):
    name, _ = idx
    st, b = search(server, name, {"size": 0, "aggs": {"r": {"rare_terms": params}}})
    assert st == 400, b
