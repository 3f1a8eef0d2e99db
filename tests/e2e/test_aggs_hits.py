"""top_hits and top_metrics over HTTP with the real server: the best documents per bucket
against Python over the same documents (three shards, so the top-hits reduce runs), _source
filtering, sort values, from/size, the Elasticsearch response shapes and errors."""
import pytest

from conftest import bulk_body
from test_aggs import MAPPING, make_docs


@pytest.fixture(scope="module")
def idx(server):
    name = "aggs-hits-e2e"
    server.request("DELETE", "/" + name)
    st, _, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 3}, "mappings": MAPPING})
    assert st == 200, b
    docs = make_docs()
    for i, d in enumerate(docs):
        d["n"] = i
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(name, docs),
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b
    yield name, docs
    server.request("DELETE", "/" + name)


def search(server, index, body):
    st, _, b = server.request("POST", "/%s/_search" % index, body)
    return st, b


def test_top_hits_under_terms_sorted_by_field(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {"g": {
        "terms": {"field": "genre", "size": 10},
        "aggs": {"best": {"top_hits": {"size": 2, "sort": [{"price": "desc"}, {"qty": "asc"}],
                                       "_source": ["title", "price"]}}}}}})
    assert st == 200, b
    for bucket in b["aggregations"]["g"]["buckets"]:
        mine = [d for d in docs if d["genre"] == bucket["key"]]
        # missing prices sort last; ties by qty; then any order (compare keys only)
        mine.sort(key=lambda d: ("price" not in d, -d.get("price", 0), d["qty"]))
        hits = bucket["best"]["hits"]
        assert hits["total"] == {"value": len(mine), "relation": "eq"}
        assert hits["max_score"] is None
        assert len(hits["hits"]) == min(2, len(mine))
        for h, d in zip(hits["hits"], mine):
            assert h["_index"] == name
            assert h["_score"] is None
            assert h["sort"] == [d["price"], d["qty"]]
            src = h["_source"]
            assert set(src) <= {"title", "price"}
            assert src["price"] == d["price"]
            assert docs[int(src["title"].split()[1])]["price"] == d["price"]


def test_top_hits_from_size_and_keyword_sort_across_shards(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {"t": {"top_hits": {
        "from": 3, "size": 4, "sort": [{"n": "desc"}],
        "_source": False}}}})
    assert st == 200, b
    hits = b["aggregations"]["t"]["hits"]
    assert hits["total"]["value"] == len(docs)
    expect = sorted(range(len(docs)), reverse=True)[3:7]
    assert [h["sort"] for h in hits["hits"]] == [[n] for n in expect]
    assert all("_source" not in h for h in hits["hits"])
    # keyword sort with a query: genre ascending, ties by the numeric sort
    st, b = search(server, name, {"size": 0, "query": {"range": {"qty": {"gte": 10}}},
                                  "aggs": {"t": {"top_hits": {
                                      "size": 5, "sort": ["genre", {"n": "asc"}]}}}})
    assert st == 200, b
    mine = sorted((d["genre"], d["n"]) for d in docs if d["qty"] >= 10)
    assert [tuple(h["sort"]) for h in b["aggregations"]["t"]["hits"]["hits"]] == mine[:5]
    assert b["aggregations"]["t"]["hits"]["hits"][0]["_source"]["n"] == mine[0][1]


def test_top_hits_default_score_sort(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 3, "query": {"match": {"title": "song 7"}},
                                  "aggs": {"t": {"top_hits": {"size": 3}}}})
    assert st == 200, b
    top = b["aggregations"]["t"]["hits"]
    # the same docs and scores as the search's own hits
    assert [h["_id"] for h in top["hits"]] == [h["_id"] for h in b["hits"]["hits"]]
    for x, y in zip(top["hits"], b["hits"]["hits"]):
        assert x["_score"] == pytest.approx(y["_score"], rel=1e-6)
    assert top["max_score"] == pytest.approx(b["hits"]["max_score"], rel=1e-6)
    assert all("sort" not in h for h in top["hits"])


def test_top_metrics(server, idx):
    name, docs = idx
    st, b = search(server, name, {"size": 0, "aggs": {"g": {
        "terms": {"field": "genre"},
        "aggs": {"tm": {"top_metrics": {"metrics": [{"field": "qty"}, {"field": "price"}],
                                        "sort": {"n": "desc"}, "size": 2}}}}}})
    assert st == 200, b
    for bucket in b["aggregations"]["g"]["buckets"]:
        mine = sorted((d for d in docs if d["genre"] == bucket["key"]), key=lambda d: -d["n"])
        top = bucket["tm"]["top"]
        assert len(top) == min(2, len(mine))
        for t, d in zip(top, mine):
            assert t["sort"] == [d["n"]]
            assert t["metrics"]["qty"] == d["qty"]
            assert t["metrics"]["price"] == d.get("price")


@pytest.mark.parametrize("aggs,etype", [
    ({"x": {"top_hits": {"size": 60, "from": 41}}}, "illegal_argument_exception"),
    ({"x": {"top_hits": {"highlight": {"fields": {"title": {}}}}}}, "illegal_argument_exception"),
    ({"x": {"top_hits": {"sort": [{"title": "asc"}]}}}, "search_phase_execution_exception"),
    ({"x": {"top_hits": {"sort": [{"nope": "asc"}]}}}, "search_phase_execution_exception"),
    ({"x": {"top_hits": {"sort": [{"qty": "sideways"}]}}}, "x_content_parse_exception"),
    ({"x": {"top_hits": {"bogus": 1}}}, "x_content_parse_exception"),
    ({"x": {"top_hits": {}, "aggs": {"y": {"max": {"field": "qty"}}}}},
     "aggregation_initialization_exception"),
    ({"x": {"top_metrics": {"metrics": {"field": "qty"}}}}, "illegal_argument_exception"),
    ({"x": {"top_metrics": {"sort": {"n": "asc"}}}}, "illegal_argument_exception"),
    ({"x": {"top_metrics": {"metrics": {"field": "qty"}, "sort": {"n": "asc"}, "size": 11}}},
     "illegal_argument_exception"),
    ({"x": {"top_metrics": {"metrics": {"field": "genre"}, "sort": {"n": "asc"}}}},
     "search_phase_execution_exception"),
])
def test_errors(server, idx, aggs, etype):
    name, _ = idx
    st, b = search(server, name, {"size": 0, "aggs": aggs})
    assert st == 400, b
    assert b["error"]["type"] == etype, b
