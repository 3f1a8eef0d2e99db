"""The search_as_you_type field type over HTTP (issue 14): the _2gram/_3gram shingle subfields
and the _index_prefix edge n-gram subfield, queried as Elasticsearch documents it (multi_match
bool_prefix over f, f._2gram, f._3gram)."""
import json


DOCS = {"1": "quick brown fox jump lazy dog", "2": "Brown fox", "3": "the fox is brown",
        "4": "brownies for everyone", "5": "lazy cat"}


def ids(server, ix, q, size=10):
    st, h, b = server.request("POST", "/%s/_search" % ix, {"query": q, "size": size})
    assert st == 200, b
    return [x["_id"] for x in b["hits"]["hits"]]


def make(server, ix, mapping):
    st, h, b = server.request("PUT", "/" + ix, {
        "settings": {"number_of_shards": 2, "number_of_replicas": 0},
        "mappings": {"properties": {"f": mapping}}})
    assert st == 200, b
    body = "".join(json.dumps({"index": {"_index": ix, "_id": k}}) + "\n" +
                   json.dumps({"f": v}) + "\n" for k, v in DOCS.items())
    st, h, b = server.request("POST", "/_bulk?refresh=true", body)
    assert st == 200 and not b["errors"], b


def test_subfields_and_bool_prefix(server, fresh_index):
    ix = fresh_index
    make(server, ix, {"type": "search_as_you_type"})
    st, h, b = server.request("GET", "/%s/_mapping" % ix)
    assert b[ix]["mappings"]["properties"]["f"] == {"type": "search_as_you_type"}
    mm = {"multi_match": {"query": "brown f", "type": "bool_prefix",
                          "fields": ["f", "f._2gram", "f._3gram"]}}
    got = ids(server, ix, mm)
    # "brown f" as a 2-gram prefix only in 1 and 2: they rank first; 3 and 4 match on f alone
    assert sorted(got[:2]) == ["1", "2"] and sorted(got[2:]) == ["3", "4"], got
    assert sorted(ids(server, ix, {"match_bool_prefix": {"f._2gram": "brown f"}})) == ["1", "2"]
    assert ids(server, ix, {"match_bool_prefix": {"f._3gram": "quick brown f"}}) == ["1"]
    assert ids(server, ix, {"match_bool_prefix": {"f._3gram": "brown f"}}) == []
    # _index_prefix holds the edge n-grams (1..20 code points) of the shingles of up to 3 tokens
    assert sorted(ids(server, ix, {"term": {"f._index_prefix": "brown fo"}})) == ["1", "2"]
    assert ids(server, ix, {"term": {"f._index_prefix": "brown fox j"}}) == ["1"]
    assert sorted(ids(server, ix, {"term": {"f._index_prefix": "l"}})) == ["1", "5"]
    before = ids(server, ix, mm)
    st, h, b = server.request("POST", "/%s/_forcemerge?max_num_segments=1" % ix)
    assert st == 200, b
    assert ids(server, ix, mm) == before


def test_max_shingle_size_and_analyzer(server, fresh_index):
    ix = fresh_index
    make(server, ix, {"type": "search_as_you_type", "max_shingle_size": 2, "analyzer": "stop"})
    st, h, b = server.request("GET", "/%s/_mapping" % ix)
    assert b[ix]["mappings"]["properties"]["f"] == {
        "type": "search_as_you_type", "max_shingle_size": 2, "analyzer": "stop"}
    # "the fox is brown" -> fox, brown (stop words removed): "fox brown" is a 2-gram
    assert ids(server, ix, {"match_bool_prefix": {"f._2gram": "fox bro"}}) == ["3"]
    st, h, r = server.request("POST", "/%s/_search" % ix,
                              {"query": {"match": {"f._3gram": "quick brown fox"}}})
    assert st == 200 and r["hits"]["hits"] == [], r


def test_errors(server, fresh_index):
    for m in ({"type": "search_as_you_type", "max_shingle_size": 5},
              {"type": "search_as_you_type", "max_shingle_size": "x"},
              {"type": "text", "fields": {"s": {"type": "search_as_you_type"}}},
              {"type": "search_as_you_type", "fields": {"_2gram": {"type": "keyword"}}}):
        st, h, r = server.request("PUT", "/" + fresh_index,
                                  {"mappings": {"properties": {"f": m}}})
        assert st == 400, (m, r)
        assert r["error"]["type"] == "mapper_parsing_exception", r
