"""_validate/query over HTTP (issue 14): valid / invalid queries, explain's parsed form and
errors, per index."""
import pytest

from conftest import assert_error


@pytest.fixture(scope="module")
def ix(server):
    name = "validate-q"
    server.request("DELETE", "/" + name)
    st, h, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"},
                                    "n": {"type": "long"}}}})
    assert st == 200, b
    yield name
    server.request("DELETE", "/" + name)


def validate(server, path, body=None, method="POST"):
    st, h, b = server.request(method, path, body)
    assert st == 200, b
    return b


def test_valid_query(server, ix):
    q = {"bool": {"must": [{"match": {"title": "Quick Fox"}}],
                  "filter": [{"term": {"tag": "a"}}], "must_not": [{"term": {"tag": "b"}}]}}
    b = validate(server, "/%s/_validate/query" % ix, {"query": q})
    assert b["valid"] is True and "explanations" not in b
    assert b["_shards"] == {"total": 1, "successful": 1, "failed": 0}
    b = validate(server, "/%s/_validate/query?explain=true" % ix, {"query": q})
    assert b["valid"] is True
    (e,) = b["explanations"]
    assert e["index"] == ix and e["valid"] is True
    # the analyzed query: lowercased terms, clause marks as Lucene prints them
    assert "title:quick" in e["explanation"] and "title:fox" in e["explanation"]
    assert "#tag:a" in e["explanation"] and "-tag:b" in e["explanation"]
    b = validate(server, "/%s/_validate/query?explain=true&q=title:hello" % ix, method="GET")
    assert b["valid"] is True and b["explanations"][0]["explanation"] == "title:hello"
    b = validate(server, "/%s/_validate/query?explain=true" % ix, method="GET")
    assert b["explanations"][0]["explanation"] == "*:*"


def test_invalid_query(server, ix):
    for q in ({"no_such_query": {}}, {"range": {"n": {"gte": "not a number"}}}):
        b = validate(server, "/%s/_validate/query" % ix, {"query": q})
        assert b == {"_shards": {"total": 1, "successful": 1, "failed": 0}, "valid": False}
        b = validate(server, "/%s/_validate/query?explain=true" % ix, {"query": q})
        assert b["valid"] is False
        (e,) = b["explanations"]
        assert e["index"] == ix and e["valid"] is False and e["error"], e
        assert "explanation" not in e
    b = validate(server, "/%s/_validate/query?explain=true" % ix, {"query": "x"})
    assert b["valid"] is False


def test_errors(server, ix):
    st, h, b = server.request("POST", "/no-such-index/_validate/query", {"query": {}})
    assert_error(b, 404, "index_not_found_exception")
    st, h, b = server.request("POST", "/%s/_validate/query" % ix, "{not json")
    assert st == 400, b
