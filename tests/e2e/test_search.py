"""_search, _count, _msearch and the query DSL over real shards."""
import json

import pytest

from conftest import assert_error, bulk_body

DOCS = [
    {"title": "The quick brown fox", "tag": "animal", "body": "jumps over the lazy dog"},
    {"title": "Quick start guide", "tag": "doc", "body": "how to start quickly"},
    {"title": "Brown bread recipe", "tag": "food", "body": "flour water salt yeast"},
    {"title": "Lazy sunday", "tag": "doc", "body": "the dog sleeps all day"},
    {"title": "Fox news", "tag": "news", "body": "a fox was seen in the city"},
]


@pytest.fixture(scope="module")
def corpus(server):
    name = "search-corpus"
    server.request("DELETE", "/" + name)
    st, h, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 3, "number_of_replicas": 0},
        "mappings": {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                                    "body": {"type": "text"}}}})
    assert st == 200, b
    st, h, b = server.request("POST", "/_bulk?refresh=true", bulk_body(name, DOCS))
    assert st == 200 and not b["errors"], b
    yield name
    server.request("DELETE", "/" + name)


def ids(b):
    return sorted(h["_id"] for h in b["hits"]["hits"])


def search(server, index, body=None, params=""):
    st, h, b = server.request("POST", "/%s/_search%s" % (index, params), body)
    assert st == 200, b
    return b


def test_shape(server, corpus):
    st, h, raw = server.request("POST", "/%s/_search" % corpus, {"query": {"match_all": {}}},
                                raw=True)
    assert st == 200
    assert b'"timed_out":false' in raw and b'"failed":0' in raw
    b = json.loads(raw)
    assert b["_shards"] == {"total": 3, "successful": 3, "skipped": 0, "failed": 0}
    assert b["hits"]["total"] == {"value": 5, "relation": "eq"}
    assert len(b["hits"]["hits"]) == 5
    hit = b["hits"]["hits"][0]
    assert hit["_index"] == corpus and hit["_score"] == 1.0 and "_source" in hit
    assert isinstance(b["took"], int)


def test_match(server, corpus):
    b = search(server, corpus, {"query": {"match": {"title": "quick"}}})
    assert ids(b) == ["0", "1"]
    assert b["hits"]["max_score"] > 0
    scores = [h["_score"] for h in b["hits"]["hits"]]
    assert scores == sorted(scores, reverse=True)
    b = search(server, corpus, {"query": {"match": {"title": {"query": "quick fox",
                                                               "operator": "and"}}}})
    assert ids(b) == ["0"]


def test_term_terms_bool(server, corpus):
    assert ids(search(server, corpus, {"query": {"term": {"tag": "doc"}}})) == ["1", "3"]
    assert ids(search(server, corpus, {"query": {"terms": {"tag": ["news", "food"]}}})) == ["2", "4"]
    b = search(server, corpus, {"query": {"bool": {
        "must": [{"match": {"body": "dog"}}], "must_not": [{"term": {"tag": "animal"}}]}}})
    assert ids(b) == ["3"]
    b = search(server, corpus, {"query": {"bool": {"filter": {"term": {"tag": "doc"}}}}})
    assert ids(b) == ["1", "3"] and all(h["_score"] == 0.0 for h in b["hits"]["hits"])


def test_pure_negative_and_empty_bool(server, corpus):
    # Elasticsearch (unlike a bare Lucene BooleanQuery) matches every other doc, score 0
    b = search(server, corpus, {"query": {"bool": {"must_not": [{"term": {"tag": "doc"}}]}}})
    assert ids(b) == ["0", "2", "4"] and all(h["_score"] == 0.0 for h in b["hits"]["hits"])
    b = search(server, corpus, {"query": {"bool": {"must_not": {"term": {"tag": "doc"}},
                                                   "adjust_pure_negative": False}}})
    assert ids(b) == []
    b = search(server, corpus, {"query": {"bool": {}}})
    assert ids(b) == ["0", "1", "2", "3", "4"]
    b = search(server, corpus, {"query": {"query_string": {"query": "-tag:doc -tag:news"}}})
    assert ids(b) == ["0", "2"]


def test_phrase_prefix_wildcard(server, corpus):
    assert ids(search(server, corpus, {"query": {"match_phrase": {"title": "quick brown"}}})) == ["0"]
    assert ids(search(server, corpus, {"query": {"prefix": {"tag": "ne"}}})) == ["4"]
    assert ids(search(server, corpus, {"query": {"wildcard": {"tag": {"value": "d*c"}}}})) == ["1", "3"]
    assert ids(search(server, corpus, {"query": {"ids": {"values": ["2", "4", "99"]}}})) == ["2", "4"]
    assert ids(search(server, corpus, {"query": {"exists": {"field": "tag"}}})) == list("01234")


def test_query_string_and_uri(server, corpus):
    b = search(server, corpus, {"query": {"query_string": {"query": "title:fox AND tag:news"}}})
    assert ids(b) == ["4"]
    st, h, b = server.request("GET", "/%s/_search?q=title:lazy" % corpus)
    assert st == 200 and ids(b) == ["3"]
    # Lucene's SimpleQueryParser: with OR, "-news" is (NOT news) OR-ed in, matching everything
    # without "news" too (the well-known Elasticsearch behaviour); with AND it excludes.
    b = search(server, corpus, {"query": {"simple_query_string": {"query": "fox -news",
                                                                   "fields": ["title"]}}})
    assert ids(b) == ["0", "1", "2", "3", "4"]
    b = search(server, corpus, {"query": {"simple_query_string": {
        "query": "fox -news", "fields": ["title"], "default_operator": "and"}}})
    assert ids(b) == ["0"]
    b = search(server, corpus, {"query": {"query_string": {"query": "/qu.*k/ AND brown~1",
                                                            "default_field": "title"}}})
    assert ids(b) == ["0"]
    b = search(server, corpus, {"query": {"multi_match": {"query": "dog", "fields": ["title", "body"]}}})
    assert ids(b) == ["0", "3"]


def test_size_from_source_totals(server, corpus):
    b = search(server, corpus, {"query": {"match_all": {}}, "size": 2, "from": 1})
    assert len(b["hits"]["hits"]) == 2
    b = search(server, corpus, {"query": {"match_all": {}}, "_source": False})
    assert all("_source" not in h for h in b["hits"]["hits"])
    b = search(server, corpus, {"query": {"match_all": {}}, "_source": ["tag"]})
    assert all(set(h["_source"]) == {"tag"} for h in b["hits"]["hits"])
    b = search(server, corpus, {"query": {"match_all": {}}, "track_total_hits": False})
    assert "total" not in b["hits"]
    b = search(server, corpus, {"query": {"match_all": {}}, "track_total_hits": 2})
    assert b["hits"]["total"] == {"value": 2, "relation": "gte"}
    b = search(server, corpus, {"size": 0})
    assert b["hits"]["hits"] == [] and b["hits"]["total"]["value"] == 5


def test_count(server, corpus):
    st, h, b = server.request("POST", "/%s/_count" % corpus, {"query": {"term": {"tag": "doc"}}})
    assert st == 200 and b["count"] == 2
    assert b["_shards"]["total"] == 3
    st, h, b = server.request("GET", "/%s/_count" % corpus)
    assert b["count"] == 5


def test_multi_index_and_wildcards(server, corpus):
    other = corpus + "-2"
    server.request("PUT", "/%s/_doc/1?refresh=true" % other, {"title": "quick"})
    try:
        b = search(server, "%s,%s" % (corpus, other), {"query": {"match": {"title": "quick"}}})
        assert b["hits"]["total"]["value"] == 3
        assert {h["_index"] for h in b["hits"]["hits"]} == {corpus, other}
        b = search(server, "search-corp*", {"query": {"match": {"title": "quick"}}})
        assert b["hits"]["total"]["value"] == 3
        b = search(server, "_all", {"query": {"ids": {"values": ["1"]}}, "size": 100})
        assert b["hits"]["total"]["value"] >= 2
        b = search(server, "no-match-*")
        assert b["hits"]["total"]["value"] == 0 and b["_shards"]["total"] == 0
    finally:
        server.request("DELETE", "/" + other)


def test_msearch(server, corpus):
    body = "\n".join([json.dumps({"index": corpus}), json.dumps({"query": {"term": {"tag": "doc"}}}),
                      json.dumps({}), json.dumps({"query": {"match_all": {}}, "size": 1}),
                      json.dumps({"index": "nope"}), json.dumps({})]) + "\n"
    st, h, b = server.request("POST", "/%s/_msearch" % corpus, body,
                              headers={"Content-Type": "application/x-ndjson"})
    assert st == 200
    r = b["responses"]
    assert len(r) == 3
    assert r[0]["hits"]["total"]["value"] == 2 and r[0]["status"] == 200
    assert len(r[1]["hits"]["hits"]) == 1
    assert r[2]["status"] == 404 and r[2]["error"]["type"] == "index_not_found_exception"


def test_search_errors(server, corpus):
    st, h, b = server.request("POST", "/%s/_search" % corpus, {"query": {"match": {}}})
    assert st == 400
    assert_error(b, 400, "parsing_exception")
    st, h, b = server.request("POST", "/%s/_search" % corpus, {"size": -1})
    assert st == 400


def test_realtime_refresh(server, fresh_index):
    server.request("PUT", "/" + fresh_index, {"settings": {"refresh_interval": "-1"}})
    server.request("PUT", "/%s/_doc/1" % fresh_index, {"t": "x"})
    st, h, b = server.request("GET", "/%s/_count" % fresh_index)
    assert b["count"] == 0
    server.request("POST", "/%s/_refresh" % fresh_index)
    st, h, b = server.request("GET", "/%s/_count" % fresh_index)
    assert b["count"] == 1
    server.request("PUT", "/%s/_doc/2?refresh=wait_for" % fresh_index, {"t": "y"})
    st, h, b = server.request("GET", "/%s/_count" % fresh_index)
    assert b["count"] == 2


def test_docvalue_fields(server, fresh_index):
    server.request("PUT", "/" + fresh_index, {"mappings": {"properties": {
        "k": {"type": "keyword"}, "n": {"type": "long"}, "t": {"type": "text"}}}})
    server.request("PUT", "/%s/_doc/1?refresh=true" % fresh_index,
                   {"k": ["b", "a"], "n": 7, "t": "hello"})
    b = search(server, fresh_index, {"query": {"match_all": {}},
                                     "docvalue_fields": ["k", {"field": "n"}, "missing"],
                                     "_source": False})
    hit = b["hits"]["hits"][0]
    assert "_source" not in hit
    assert hit["fields"] == {"k": ["a", "b"], "n": [7]}


def test_sort_and_search_after(server, fresh_index):
    server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 3},
        "mappings": {"properties": {"k": {"type": "keyword"}, "n": {"type": "long"},
                                    "d": {"type": "date"}, "t": {"type": "text"}}}})
    docs = [{"k": "k%02d" % (i % 7), "n": (i * 37) % 50, "d": "2020-01-%02dT00:00:00Z" % (1 + i % 28),
             "t": "all docs"} for i in range(40)]
    docs.append({"t": "all docs"})  # no sort values: sorts last
    server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs))
    b = search(server, fresh_index, {"query": {"match": {"t": "docs"}}, "size": 41,
                                     "sort": [{"n": "desc"}, {"k": {"order": "asc"}}]})
    hits = b["hits"]["hits"]
    assert b["hits"]["max_score"] is None and hits[0]["_score"] is None
    keys = [(h["sort"][0], h["sort"][1]) for h in hits[:-1]]
    assert keys == sorted(keys, key=lambda x: (-x[0], x[1]))
    assert hits[-1]["_id"] == "40" and hits[-1]["sort"] == [None, None]
    # Paging with search_after sees every doc once, in order.
    seen, after = [], None
    while True:
        body = {"size": 7, "sort": ["k", {"n": "asc"}, "_doc"], "_source": False}
        if after:
            body["search_after"] = after
        page = search(server, fresh_index, body)["hits"]["hits"]
        if not page:
            break
        seen += [h["_id"] for h in page]
        after = page[-1]["sort"]
    assert len(seen) == 41 and len(set(seen)) == 41
    b = search(server, fresh_index, {"size": 1, "sort": [{"d": "asc"}]})
    assert b["hits"]["hits"][0]["sort"] == [1577836800000]
    st, h, b = server.request("GET", "/%s/_search?sort=n:desc&size=1" % fresh_index)
    assert st == 200 and b["hits"]["hits"][0]["sort"] == [49]
    st, h, b = server.request("POST", "/%s/_search" % fresh_index,
                              {"sort": [{"n": {"order": "sideways"}}]})
    assert st == 400


def test_point_in_time(server, fresh_index):
    server.request("PUT", "/" + fresh_index, {"settings": {"number_of_shards": 2},
                                              "mappings": {"properties": {"n": {"type": "long"}}}})
    server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, [{"n": i} for i in range(30)]))
    st, h, b = server.request("POST", "/%s/_pit?keep_alive=1m" % fresh_index)
    assert st == 200 and b["_shards"]["total"] == 2, b
    pit = b["id"]
    server.request("PUT", "/%s/_doc/new?refresh=true" % fresh_index, {"n": 100})
    seen, after = [], None
    while True:
        body = {"size": 8, "sort": [{"n": "asc"}], "pit": {"id": pit, "keep_alive": "1m"}}
        if after:
            body["search_after"] = after
        st, h, b = server.request("POST", "/_search", body)
        assert st == 200, b
        assert b["pit_id"] == pit and b["hits"]["total"]["value"] == 30
        if not b["hits"]["hits"]:
            break
        seen += [hit["sort"][0] for hit in b["hits"]["hits"]]
        after = b["hits"]["hits"][-1]["sort"]
    assert seen == list(range(30))
    st, h, b = server.request("POST", "/%s/_search" % fresh_index, {"pit": {"id": pit}})
    assert st == 400
    st, h, b = server.request("DELETE", "/_pit", {"id": pit})
    assert st == 200 and b["num_freed"] == 1
    st, h, b = server.request("POST", "/_search", {"pit": {"id": pit}})
    assert st == 404


def test_sort_mode_on_multi_valued_fields(server, fresh_index):
    server.request("PUT", "/" + fresh_index, {
        "mappings": {"properties": {"n": {"type": "long"}, "k": {"type": "keyword"}}}})
    docs = [{"n": [1, 9], "k": ["b", "y"]}, {"n": [4, 5], "k": ["c", "d"]},
            {"n": [2, 3], "k": ["a", "z"]}]
    server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs))

    def order(sort):
        b = search(server, fresh_index, {"sort": [sort], "_source": False})
        return [h["_id"] for h in b["hits"]["hits"]], [h["sort"][0] for h in b["hits"]["hits"]]

    assert order({"n": {"order": "asc", "mode": "min"}}) == (["0", "2", "1"], [1, 2, 4])
    assert order({"n": {"order": "asc", "mode": "max"}}) == (["2", "1", "0"], [3, 5, 9])
    assert order({"n": {"order": "desc", "mode": "avg"}}) == (["0", "1", "2"], [5.0, 4.5, 2.5])
    assert order({"n": {"order": "asc", "mode": "sum"}}) == (["2", "1", "0"], [5.0, 9.0, 10.0])
    assert order({"k": {"order": "desc", "mode": "min"}}) == (["1", "0", "2"], ["c", "b", "a"])
    st, _, b = server.request("POST", "/%s/_search" % fresh_index,
                              {"sort": [{"n": {"mode": "median"}}]})
    assert st == 400 and "mode" in b["error"]["reason"]


def test_sort_by_doc(server, corpus):
    # _doc order with sort values and null scores, also for a scoring query; search_after pages
    b = search(server, corpus, {"query": {"match": {"body": "dog fox"}}, "sort": ["_doc"]})
    hits = b["hits"]["hits"]
    assert b["hits"]["max_score"] is None and all(h["_score"] is None for h in hits)
    keys = [h["sort"][0] for h in hits]
    assert len(hits) == 3 and keys == sorted(keys)
    rest = search(server, corpus, {"query": {"match": {"body": "dog fox"}},
                                   "sort": [{"_doc": "asc"}], "search_after": hits[0]["sort"]})
    assert [h["_id"] for h in rest["hits"]["hits"]] == [h["_id"] for h in hits[1:]]
