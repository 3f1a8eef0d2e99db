"""_field_caps over HTTP (issue 14): types, searchable / aggregatable, wildcards, and fields
whose type differs between indices."""
import pytest

from conftest import assert_error


@pytest.fixture(scope="module")
def two(server):
    names = ["fcaps-a", "fcaps-b"]
    maps = [{"title": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
             "n": {"type": "long"}, "tag": {"type": "keyword", "index": False},
             "user": {"properties": {"name": {"type": "keyword"}}}},
            {"title": {"type": "text"}, "n": {"type": "keyword"},
             "tag": {"type": "keyword"}}]
    for name, props in zip(names, maps):
        server.request("DELETE", "/" + name)
        st, h, b = server.request("PUT", "/" + name, {
            "settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "mappings": {"properties": props}})
        assert st == 200, b
    yield names
    for name in names:
        server.request("DELETE", "/" + name)


def caps(server, path, body=None, method="GET"):
    st, h, b = server.request(method, path, body)
    assert st == 200, b
    return b


def test_one_index(server, two):
    b = caps(server, "/fcaps-a/_field_caps?fields=title,title.raw,n,tag,user.name")
    assert b["indices"] == ["fcaps-a"]
    f = b["fields"]
    assert f["title"] == {"text": {"type": "text", "metadata_field": False,
                                   "searchable": True, "aggregatable": False}}
    assert f["title.raw"]["keyword"]["aggregatable"] is True
    assert f["n"] == {"long": {"type": "long", "metadata_field": False,
                               "searchable": True, "aggregatable": True}}
    assert f["tag"]["keyword"]["searchable"] is False
    assert f["user.name"]["keyword"]["searchable"] is True
    assert set(f) == {"title", "title.raw", "n", "tag", "user.name"}


def test_wildcards_and_body(server, two):
    b = caps(server, "/fcaps-a/_field_caps?fields=t*")
    assert set(b["fields"]) == {"title", "title.raw", "tag"}
    b = caps(server, "/fcaps-a/_field_caps", {"fields": ["user.*"]}, "POST")
    assert set(b["fields"]) == {"user.name"}
    b = caps(server, "/fcaps-a/_field_caps?fields=nothing*")
    assert b["fields"] == {}


def test_across_indices(server, two):
    b = caps(server, "/fcaps-*/_field_caps?fields=n,title,tag")
    assert b["indices"] == ["fcaps-a", "fcaps-b"]
    f = b["fields"]
    assert f["title"] == {"text": {"type": "text", "metadata_field": False,
                                   "searchable": True, "aggregatable": False}}
    assert f["n"]["long"]["indices"] == ["fcaps-a"]
    assert f["n"]["keyword"]["indices"] == ["fcaps-b"]
    t = f["tag"]["keyword"]
    assert t["searchable"] is False and t["non_searchable_indices"] == ["fcaps-a"]
    assert t["aggregatable"] is True and "indices" not in t


def test_errors(server, two):
    st, h, b = server.request("GET", "/fcaps-a/_field_caps")
    assert_error(b, 400, "action_request_validation_exception")
    st, h, b = server.request("GET", "/nope-idx/_field_caps?fields=*")
    assert_error(b, 404, "index_not_found_exception")
