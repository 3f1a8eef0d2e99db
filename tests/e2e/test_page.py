"""Search-page features over HTTP (issue 14): prefix-as-you-type queries (match_bool_prefix,
multi_match bool_prefix, match_phrase_prefix) and highlighting."""
import pytest

from conftest import assert_error, bulk_body

DOCS = [
    {"title": "Gaming laptop with fast screen", "body": "A laptop for games. It is fast. "
     "The screen is bright and the keyboard lights up.", "tag": "Laptops"},
    {"title": "Laptop bag", "body": "Carry your laptop safely.", "tag": "Bags"},
    {"title": "Desk lamp", "body": "A lamp for the desk <b>with</b> a warm light & dimmer.",
     "tag": "Lamps"},
    {"title": "Quick brown fox", "body": "The quick brown fox jumps over the lazy dog. "
     "Brown foxes are quick.", "tag": "Animals"},
    {"title": "Lapland travel guide", "body": "Travel to Lapland in winter.", "tag": "Travel"},
]


@pytest.fixture(scope="module")
def shop(server):
    name = "page-shop"
    server.request("DELETE", "/" + name)
    st, h, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 2, "number_of_replicas": 0},
        "mappings": {"properties": {"title": {"type": "text"}, "body": {"type": "text"},
                                    "tag": {"type": "keyword"}}}})
    assert st == 200, b
    st, h, b = server.request("POST", "/_bulk?refresh=true", bulk_body(name, DOCS))
    assert st == 200 and not b["errors"], b
    yield name
    server.request("DELETE", "/" + name)


def search(server, index, body):
    st, h, b = server.request("POST", "/%s/_search" % index, body)
    assert st == 200, b
    return b


def ids(b):
    return sorted(h["_id"] for h in b["hits"]["hits"])


def test_multi_match_bool_prefix_last_term(server, shop):
    q = {"multi_match": {"query": "lapt", "type": "bool_prefix", "fields": ["title^3"]}}
    assert ids(search(server, shop, {"query": q})) == ["0", "1"]
    q = {"multi_match": {"query": "la", "type": "bool_prefix", "fields": ["title^3", "body"]}}
    assert ids(search(server, shop, {"query": q})) == ["0", "1", "2", "3", "4"]
    # Earlier terms are whole terms; the last is a prefix.
    q = {"multi_match": {"query": "gaming lap", "type": "bool_prefix", "fields": ["title"],
                         "operator": "and"}}
    assert ids(search(server, shop, {"query": q})) == ["0"]
    q = {"multi_match": {"query": "gam lap", "type": "bool_prefix", "fields": ["title"],
                         "operator": "and"}}
    assert ids(search(server, shop, {"query": q})) == []


def test_bool_prefix_scores_sum_over_fields(server, shop):
    # Elasticsearch scores bool_prefix like most_fields: the fields' scores add up. The prefix
    # clause is constant score 1 * boost.
    q = {"multi_match": {"query": "bag", "type": "bool_prefix", "fields": ["title^3", "tag"]}}
    b = search(server, shop, {"query": q})
    assert ids(b) == ["1"]
    assert b["hits"]["hits"][0]["_score"] == pytest.approx(3.0)
    q = {"multi_match": {"query": "lapto", "type": "bool_prefix",
                         "fields": ["title^2", "body"]}}
    b = search(server, shop, {"query": q})
    got = {h["_id"]: h["_score"] for h in b["hits"]["hits"]}
    assert got == {"0": pytest.approx(3.0), "1": pytest.approx(3.0)}


def test_match_bool_prefix(server, shop):
    b = search(server, shop, {"query": {"match_bool_prefix": {"title": "lap"}}})
    assert ids(b) == ["0", "1", "4"]
    b = search(server, shop, {"query": {"match_bool_prefix": {
        "title": {"query": "quick brown f", "operator": "and"}}}})
    assert ids(b) == ["3"]
    b = search(server, shop, {"query": {"match_bool_prefix": {
        "title": {"query": "quick brown x", "operator": "and"}}}})
    assert ids(b) == []
    # keyword field: the (normalized) value is a prefix
    b = search(server, shop, {"query": {"match_bool_prefix": {"tag": "Lap"}}})
    assert ids(b) == ["0"]
    st, h, b = server.request("POST", "/%s/_search" % shop,
                              {"query": {"match_bool_prefix": {"title": {"query": "x",
                                                                         "nope": 1}}}})
    assert st == 400, b


def test_match_phrase_prefix_last_term(server, shop):
    b = search(server, shop, {"query": {"match_phrase_prefix": {"title": "lapt"}}})
    assert ids(b) == ["0", "1"]
    b = search(server, shop, {"query": {"match_phrase_prefix": {"body": "quick brown fo"}}})
    assert ids(b) == ["3"]
    q = {"multi_match": {"query": "laptop b", "type": "phrase_prefix", "fields": ["title"]}}
    assert ids(search(server, shop, {"query": q})) == ["1"]
