"""stored_fields over HTTP (issue 14): `_none_` drops _id and _source as Elasticsearch does; a
list returns the listed fields mapped with `store: true` in `fields` (scry reads them from
_source, the only thing it stores) and _source only when asked for."""
import pytest

from conftest import assert_error, bulk_body

DOCS = [{"title": "red fox", "note": "kept", "n": 3, "tags": ["a", "b"]},
        {"title": "blue fox", "note": "also", "n": 5, "tags": "c"}]


@pytest.fixture(scope="module")
def ix(server):
    name = "stored-fields"
    server.request("DELETE", "/" + name)
    st, h, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": {"properties": {"title": {"type": "text", "store": True},
                                    "note": {"type": "text"},
                                    "n": {"type": "long", "store": True},
                                    "tags": {"type": "keyword", "store": True}}}})
    assert st == 200, b
    st, h, b = server.request("POST", "/_bulk?refresh=true", bulk_body(name, DOCS))
    assert st == 200 and not b["errors"], b
    yield name
    server.request("DELETE", "/" + name)


def hits(server, index, body):
    st, h, b = server.request("POST", "/%s/_search" % index, body)
    assert st == 200, b
    return sorted(b["hits"]["hits"], key=lambda x: x.get("_id", ""))


def test_none_drops_metadata_and_source(server, ix):
    for h in hits(server, ix, {"query": {"match": {"title": "fox"}}, "stored_fields": "_none_"}):
        assert set(h) == {"_index", "_score"}, h
    st, h, b = server.request("POST", "/%s/_search" % ix,
                              {"stored_fields": "_none_", "_source": True})
    assert_error(b, 400, "action_request_validation_exception")


def test_listed_stored_fields(server, ix):
    got = hits(server, ix, {"stored_fields": ["title", "note", "tags", "n", "missing"]})
    assert [h["_id"] for h in got] == ["0", "1"]
    assert "_source" not in got[0]
    # note is not stored, missing is unmapped: neither comes back
    assert got[0]["fields"] == {"title": ["red fox"], "tags": ["a", "b"], "n": [3]}
    assert got[1]["fields"] == {"title": ["blue fox"], "tags": ["c"], "n": [5]}
    # an empty list: metadata only
    got = hits(server, ix, {"stored_fields": []})
    assert all(set(h) == {"_index", "_id", "_score"} for h in got), got
    # _source listed or asked for explicitly comes back
    for body in ({"stored_fields": ["title", "_source"]},
                 {"stored_fields": "title", "_source": True}):
        got = hits(server, ix, body)
        assert got[0]["_source"] == DOCS[0] and got[0]["fields"] == {"title": ["red fox"]}


def test_bad_stored_fields(server, ix):
    st, h, b = server.request("POST", "/%s/_search" % ix, {"stored_fields": [1]})
    assert_error(b, 400, "parsing_exception")
