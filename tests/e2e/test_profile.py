"""profile: true over HTTP (2 shards): the profile section's layout (shards -> searches ->
query tree / rewrite_time / collector, aggregations), node types and descriptions of the plan,
calls counted on the iterators, the collector by kind of search; the same hits and scores as
without profiling (the timed wrappers must not change results); a non-boolean value is a
400; no section without profile. Times are only checked to be present (no timing
assertions)."""
import random

import pytest

from conftest import bulk_body

SEED = 77
N = 400
OPS = ["next_doc", "advance", "into_bitset", "run_end", "next_batch", "score"]


@pytest.fixture(scope="module")
def index(server):
    print("seed", SEED)
    rng = random.Random(SEED)
    ix = "profile-%d" % SEED
    server.request("DELETE", "/" + ix)
    st, _, b = server.request("PUT", "/" + ix, {
        "settings": {"number_of_shards": 2},
        "mappings": {"properties": {"t": {"type": "text"}, "b": {"type": "keyword"},
                                    "n": {"type": "long"}}}})
    assert st == 200, b
    words = ["red", "fox", "blue", "dog", "green", "cat"]
    docs = [{"t": " ".join(rng.choice(words) for _ in range(rng.randint(1, 8))),
             "b": rng.choice(["x", "y", "z"]), "n": i} for i in range(N)]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(ix, docs))
    assert st == 200 and not b["errors"], b
    yield ix
    server.request("DELETE", "/" + ix)


def search(server, ix, body):
    st, _, b = server.request("POST", "/%s/_search" % ix, body)
    assert st == 200, b
    return b


def walk(node):
    yield node
    for c in node.get("children", []):
        yield from walk(c)


def check_node(node):
    assert isinstance(node["type"], str) and isinstance(node["description"], str)
    bd = node["breakdown"]
    for op in OPS + ["build_scorer"]:
        assert bd[op] >= 0 and bd[op + "_count"] >= 0
    assert node["time_in_nanos"] == bd["build_scorer"] + sum(bd[op] for op in OPS)


Q = {"bool": {"must": [{"match": {"t": "red fox"}}], "filter": [{"range": {"n": {"gte": 10}}}]}}


def test_layout_and_tree(server, index):
    b = search(server, index, {"query": Q, "profile": True, "track_total_hits": True})
    shards = b["profile"]["shards"]
    assert sorted(s["shard_id"] for s in shards) == [0, 1]
    for s in shards:
        assert s["index"] == index and s["id"] == "[%s][%s][%d]" % (s["node_id"], index,
                                                                     s["shard_id"])
        (srch,) = s["searches"]
        assert srch["rewrite_time"] >= 0
        assert [c["name"] for c in srch["collector"]] == ["top_docs"]
        assert srch["collector"][0]["time_in_nanos"] >= 0
        assert s["aggregations"] == []
        (root,) = srch["query"]
        assert root["type"] == "BooleanQuery"
        kids = root["children"]
        assert [k["type"] for k in kids] == ["BooleanQuery", "PointRangeQuery"]
        assert kids[1]["description"].startswith("n:[10 TO ")
        terms = kids[0]["children"]
        assert sorted(t["description"] for t in terms) == ["t:fox", "t:red"]
        assert all(t["type"] == "TermQuery" for t in terms)
        for n in walk(root):
            check_node(n)
        # every node's iterator was built and called (each shard holds matches)
        for n in walk(root):
            bd = n["breakdown"]
            assert bd["build_scorer_count"] >= 1
            assert sum(bd[op + "_count"] for op in OPS) > 0, n


@pytest.mark.parametrize("body", [
    {"query": Q},
    {"query": Q, "size": 25, "from": 5},
    {"query": {"match": {"t": "blue dog cat"}}, "track_total_hits": True, "size": 50},
    {"query": {"match": {"t": "green"}}, "sort": [{"n": "desc"}]},
    {"query": {"bool": {"should": [{"term": {"b": "x"}}, {"prefix": {"t": "gr"}}],
                        "must_not": [{"term": {"t": "cat"}}]}}, "size": 30},
])
def test_same_results_with_and_without_profile(server, index, body):
    plain = search(server, index, body)
    prof = search(server, index, dict(body, profile=True))
    assert "profile" not in plain
    key = lambda b: [(h["_id"], h["_score"], h.get("sort")) for h in b["hits"]["hits"]]
    assert key(prof) == key(plain)
    assert prof["hits"]["total"] == plain["hits"]["total"]
    assert len(prof["profile"]["shards"]) == 2


def test_collectors_and_aggregations(server, index):
    b = search(server, index, {"query": {"match": {"t": "green"}}, "sort": [{"n": "asc"}],
                               "profile": True})
    assert {s["searches"][0]["collector"][0]["name"] for s in b["profile"]["shards"]} == {"sorted"}
    b = search(server, index, {"query": {"match": {"t": "green"}}, "size": 0, "profile": True})
    for s in b["profile"]["shards"]:
        assert s["searches"][0]["collector"][0]["name"] == "count"
        assert s["searches"][0]["query"][0]["type"] == "TermQuery"
    b = search(server, index, {"query": {"match": {"t": "green"}}, "profile": True,
                               "aggs": {"b": {"terms": {"field": "b"}}}})
    for s in b["profile"]["shards"]:
        (agg,) = s["aggregations"]
        assert agg["type"] == "aggregations" and agg["time_in_nanos"] >= 0
        assert s["searches"][0]["collector"][0]["name"] == "top_docs"
    b = search(server, index, {"size": 0, "profile": True, "aggs": {"b": {"terms": {"field": "b"}}}})
    for s in b["profile"]["shards"]:
        assert s["searches"][0]["collector"][0]["name"] == "aggregations_only"
        assert s["searches"][0]["query"] == []
        assert len(s["aggregations"]) == 1


def test_bad_and_off(server, index):
    st, _, b = server.request("POST", "/%s/_search" % index, {"profile": "yes"})
    assert st == 400 and b["error"]["type"] == "parsing_exception", b
    b = search(server, index, {"profile": False})
    assert "profile" not in b
    st, _, c = server.request("POST", "/%s/_count" % index, {"query": Q})
    assert st == 200 and "profile" not in c
