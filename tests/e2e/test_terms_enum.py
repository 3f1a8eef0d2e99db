"""_terms_enum over HTTP (issue 14): prefix, size, case_insensitive and dedup across shards and
segments, checked against the terms computed from the documents."""
import pytest

from conftest import assert_error, bulk_body

TAGS = ["Apple", "apple", "apricot", "banana", "avocado", "Apex", "apple", "berry", "ape"]


@pytest.fixture(scope="module")
def ix(server):
    name = "terms-enum"
    server.request("DELETE", "/" + name)
    st, h, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 3, "number_of_replicas": 0},
        "mappings": {"properties": {"tag": {"type": "keyword"}, "body": {"type": "text"}}}})
    assert st == 200, b
    # two refreshes: more than one segment per shard
    half = len(TAGS) // 2
    for part in (TAGS[:half], TAGS[half:]):
        docs = [{"tag": t, "body": t} for t in part]
        st, h, b = server.request("POST", "/_bulk?refresh=true", bulk_body(name, docs))
        assert st == 200 and not b["errors"], b
    yield name
    server.request("DELETE", "/" + name)


def enum(server, index, body):
    st, h, b = server.request("POST", "/%s/_terms_enum" % index, body)
    assert st == 200, b
    assert b["complete"] is True and b["_shards"]["failed"] == 0
    return b["terms"]


def test_prefix_and_size(server, ix):
    uniq = sorted(set(TAGS))
    assert enum(server, ix, {"field": "tag"}) == uniq[:10]
    assert enum(server, ix, {"field": "tag", "string": "ap"}) == \
        [t for t in uniq if t.startswith("ap")]
    assert enum(server, ix, {"field": "tag", "string": "ap", "size": 2}) == ["ape", "apple"]
    assert enum(server, ix, {"field": "tag", "string": "zz"}) == []
    assert enum(server, ix, {"field": "tag", "size": 0}) == []


def test_case_insensitive(server, ix):
    got = enum(server, ix, {"field": "tag", "string": "AP", "case_insensitive": True})
    assert got == sorted(t for t in set(TAGS) if t.lower().startswith("ap"))


def test_non_keyword_fields_have_no_terms(server, ix):
    assert enum(server, ix, {"field": "body"}) == []
    assert enum(server, ix, {"field": "unmapped"}) == []


def test_errors(server, ix):
    for body in ({}, {"field": 3}, {"field": "tag", "size": -1}, {"field": "tag", "x": 1}):
        st, h, b = server.request("POST", "/%s/_terms_enum" % ix, body)
        assert st == 400, (body, b)
    st, h, b = server.request("POST", "/nope-x/_terms_enum", {"field": "tag"})
    assert_error(b, 404, "index_not_found_exception")
