"""batched_reduce_size (Elasticsearch's search parameter, default 512) on one node: the node
folds its shards' results every batched_reduce_size of them (top hits and aggregation partials)
instead of holding all of them, and reports `num_reduce_phases` (the folds plus the final
reduce) when there was more than one phase. Results equal the default's (doubles to 1e-12:
sums taken in another order) on an index of 24
shards, for top hits by score and by field and for terms / avg / cardinality / percentiles /
top_hits aggregations; a value below 2 is refused (400) as Elasticsearch does."""
import json
import math
import random

import pytest

from conftest import assert_error

SHARDS = 24
N_DOCS = 600


@pytest.fixture(scope="module")
def many(server):
    seed = random.randrange(1 << 30)
    print("seed", seed)
    rnd = random.Random(seed)
    server.request("DELETE", "/brs")
    st, _, r = server.request("PUT", "/brs", {
        "settings": {"number_of_shards": SHARDS, "number_of_replicas": 0},
        "mappings": {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                                    "n": {"type": "long"}, "price": {"type": "double"}}}})
    assert st == 200, r
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
    lines = []
    for i in range(N_DOCS):
        lines.append(json.dumps({"index": {"_index": "brs", "_id": str(i)}}))
        lines.append(json.dumps({
            "title": " ".join(rnd.choice(words) for _ in range(rnd.randint(1, 6))),
            "tag": "t%d" % rnd.randrange(40), "n": rnd.randrange(100000),
            "price": round(rnd.random() * 100, 2)}))
    st, _, r = server.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not r["errors"], r
    yield server
    server.request("DELETE", "/brs")


AGGS = {
    "tags": {"terms": {"field": "tag", "size": 50},
             "aggs": {"avg_price": {"avg": {"field": "price"}},
                      "best": {"top_hits": {"size": 2, "sort": [{"n": "desc"}]}}}},
    "avg_n": {"avg": {"field": "n"}},
    "distinct": {"cardinality": {"field": "tag"}},
    "pct": {"percentiles": {"field": "price", "percents": [1, 25, 50, 75, 99]}},
}


def diff(a, b, path=""):
    """The first place where a and b differ (for the assertion message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            d = diff(a.get(k), b.get(k), path + "." + str(k))
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            d = diff(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    if isinstance(a, float) and isinstance(b, float):
        # sums of doubles taken in another order may differ in the last bits (as in
        # Elasticsearch): equal to 1e-12, relative
        return None if math.isclose(a, b, rel_tol=1e-12) else (path, a, b)
    return None if a == b else (path, a, b)


def run(node, body, params=""):
    st, _, r = node.request("POST", "/brs/_search" + params, body)
    assert st == 200, r
    r.pop("took")
    return r


@pytest.mark.parametrize("body", [
    {"query": {"match": {"title": "alpha gamma"}}, "size": 15, "aggs": AGGS},
    {"query": {"match_all": {}}, "size": 20, "sort": [{"n": "asc"}], "aggs": AGGS},
    {"query": {"match": {"title": "beta"}}, "size": 10, "sort": [{"tag": "desc"}, {"n": "asc"}]},
    {"query": {"match": {"title": "delta"}}, "size": 5, "from": 7},
], ids=["score+aggs", "field+aggs", "keyword-sort", "from"])
def test_small_batches_equal_the_default(many, body):
    default = run(many, body)
    assert "num_reduce_phases" not in default, default  # 24 shards < 512: one reduce
    assert default["_shards"]["successful"] == SHARDS
    for size in (2, 3, 5, 23):
        small = run(many, body, "?batched_reduce_size=%d" % size)
        phases = small.pop("num_reduce_phases", 1)
        # every `size` results (the fold counting as one) make a fold, and the final reduce
        assert phases > 1, (size, small)
        assert diff(small, default) is None, (size, diff(small, default))
    # 24 results in one batch: one phase, as the default
    assert "num_reduce_phases" not in run(many, body, "?batched_reduce_size=24")


def test_bad_batched_reduce_size(many):
    for bad in ("1", "0", "-3", "x"):
        st, _, r = many.request("POST", "/brs/_search?batched_reduce_size=" + bad, {})
        assert st == 400, (bad, r)
        assert_error(r, 400, r["error"]["type"])
