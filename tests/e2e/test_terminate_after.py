"""terminate_after (issue 14): each shard collects at most that many matching docs, in index
order (segment by segment, ascending doc ids); `terminated_early` tells whether a shard stopped
short; hits, hits.total, aggregations and _count see only the collected docs, and their scores
are the shard's usual ones (term statistics are not cut)."""
from conftest import assert_error


def make_index(server, name):
    st, _, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 1},
        "mappings": {"properties": {"t": {"type": "text"}, "n": {"type": "integer"},
                                    "k": {"type": "keyword"}}}})
    assert st == 200, b
    # three segments (a refresh after each batch) so that the cut falls inside the second
    for batch in range(3):
        docs = [{"_id": str(batch * 4 + i), "t": "red fox" if i % 2 == 0 else "blue fox",
                 "n": batch * 4 + i, "k": "g%d" % (i % 2)} for i in range(4)]
        body = "".join('{"index":{"_index":"%s","_id":"%s"}}\n{"t":"%s","n":%d,"k":"%s"}\n'
                       % (name, d["_id"], d["t"], d["n"], d["k"]) for d in docs)
        st, _, b = server.request("POST", "/_bulk?refresh=true", body)
        assert st == 200 and not b["errors"], b


def search(server, index, body, params=""):
    st, _, b = server.request("POST", "/%s/_search%s" % (index, params), body)
    assert st == 200, b
    return b


def test_terminate_after_search(server, fresh_index):
    make_index(server, fresh_index)
    b = search(server, fresh_index, {"query": {"match": {"t": "fox"}}, "terminate_after": 6,
                                     "size": 20, "sort": [{"n": "asc"}]})
    assert b["terminated_early"] is True
    assert b["hits"]["total"] == {"value": 6, "relation": "eq"}
    assert [h["_id"] for h in b["hits"]["hits"]] == ["0", "1", "2", "3", "4", "5"]
    # only "red" docs: the first three of them in index order
    b = search(server, fresh_index, {"query": {"match": {"t": "red"}}, "terminate_after": 3,
                                     "size": 20})
    assert b["terminated_early"] is True and b["hits"]["total"]["value"] == 3
    assert sorted(int(h["_id"]) for h in b["hits"]["hits"]) == [0, 2, 4]
    # scores are those of the search without terminate_after
    full = search(server, fresh_index, {"query": {"match": {"t": "red"}}, "size": 20})
    scores = {h["_id"]: h["_score"] for h in full["hits"]["hits"]}
    assert all(h["_score"] == scores[h["_id"]] for h in b["hits"]["hits"])
    # more than match: not terminated, everything there
    b = search(server, fresh_index, {"query": {"match": {"t": "red"}}, "terminate_after": 6})
    assert b["terminated_early"] is False and b["hits"]["total"]["value"] == 6
    # exactly as many as match: nothing is left out, so not terminated
    b = search(server, fresh_index, {"query": {"match_all": {}}, "terminate_after": 12})
    assert b["terminated_early"] is False and b["hits"]["total"]["value"] == 12
    # no terminate_after: no terminated_early key (as Elasticsearch)
    assert "terminated_early" not in full
    # URL parameter
    b = search(server, fresh_index, None, "?terminate_after=2&q=t:fox")
    assert b["terminated_early"] is True and b["hits"]["total"]["value"] == 2


def test_terminate_after_aggs_and_count(server, fresh_index):
    make_index(server, fresh_index)
    b = search(server, fresh_index, {"size": 0, "terminate_after": 5,
                                     "aggs": {"k": {"terms": {"field": "k"}},
                                              "s": {"sum": {"field": "n"}}}})
    assert b["terminated_early"] is True and b["hits"]["total"]["value"] == 5
    assert {x["key"]: x["doc_count"] for x in b["aggregations"]["k"]["buckets"]} == {
        "g0": 3, "g1": 2}
    assert b["aggregations"]["s"]["value"] == 0 + 1 + 2 + 3 + 4
    st, _, b = server.request("POST", "/%s/_count" % fresh_index,
                              {"query": {"match": {"t": "blue"}}, "terminate_after": 4})
    assert st == 200 and b["count"] == 4 and b["terminated_early"] is True, b
    st, _, b = server.request("POST", "/%s/_count" % fresh_index,
                              {"query": {"match": {"t": "blue"}}, "terminate_after": 100})
    assert st == 200 and b["count"] == 6 and b["terminated_early"] is False, b
    st, _, b = server.request("POST", "/%s/_count?terminate_after=1" % fresh_index, None)
    assert st == 200 and b["count"] == 1 and b["terminated_early"] is True, b


def test_terminate_after_bad_values(server, fresh_index):
    make_index(server, fresh_index)
    for bad in (-1, "x", 1.5):
        st, _, b = server.request("POST", "/%s/_search" % fresh_index, {"terminate_after": bad})
        assert st == 400, (bad, b)
        assert_error(b, 400, "illegal_argument_exception")
    st, _, b = server.request("POST", "/%s/_search?terminate_after=-3" % fresh_index, None)
    assert st == 400, b


def test_terminate_after_with_deletes(server, fresh_index):
    make_index(server, fresh_index)
    for doc_id in ("1", "5"):
        st, _, b = server.request("DELETE", "/%s/_doc/%s?refresh=true" % (fresh_index, doc_id))
        assert st == 200, b
    # deleted docs are not collected: the first 4 live docs in index order
    b = search(server, fresh_index, {"query": {"match_all": {}}, "terminate_after": 4,
                                     "size": 10, "sort": [{"n": "asc"}]})
    assert b["terminated_early"] is True and b["hits"]["total"]["value"] == 4
    assert [h["_id"] for h in b["hits"]["hits"]] == ["0", "2", "3", "4"]
    b = search(server, fresh_index, {"query": {"match_all": {}}, "terminate_after": 5,
                                     "size": 10, "sort": [{"n": "asc"}]})
    assert [h["_id"] for h in b["hits"]["hits"]] == ["0", "2", "3", "4", "6"]
