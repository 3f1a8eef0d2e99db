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


def hl(server, index, query, highlight, **extra):
    body = {"query": query, "highlight": highlight}
    body.update(extra)
    b = search(server, index, body)
    return {h["_id"]: h.get("highlight") for h in b["hits"]["hits"]}


def test_highlight_match_default_unified(server, shop):
    got = hl(server, shop, {"match": {"body": "laptop"}}, {"fields": {"body": {}}})
    assert got["1"] == {"body": ["Carry your <em>laptop</em> safely."]}
    assert got["0"] == {"body": ["A <em>laptop</em> for games. It is fast. The screen is bright "
                                 "and the keyboard lights up."]}
    for t in ("plain", "fvh", "unified"):
        got2 = hl(server, shop, {"match": {"body": "laptop"}},
                  {"type": t, "fields": {"body": {}}})
        assert got2 == got


def test_highlight_fields_wildcard_tags_and_field_match(server, shop):
    q = {"multi_match": {"query": "laptop", "fields": ["title", "body"]}}
    got = hl(server, shop, q, {"pre_tags": ["<b>"], "post_tags": ["</b>"], "fields": {"*": {}}})
    assert got["1"] == {"title": ["<b>Laptop</b> bag"], "body": ["Carry your <b>laptop</b> safely."]}
    got = hl(server, shop, q, {"tags_schema": "styled", "fields": [{"title": {}}]})
    assert got["1"] == {"title": ['<em class="hlt1">Laptop</em> bag']}
    # require_field_match false (default): a query on title marks body too
    got = hl(server, shop, {"match": {"title": "laptop"}}, {"fields": {"body": {}}})
    assert got["1"] == {"body": ["Carry your <em>laptop</em> safely."]}
    got = hl(server, shop, {"match": {"title": "laptop"}},
             {"require_field_match": True, "fields": {"body": {}}})
    assert got["1"] is None
    # keyword fields highlight whole values
    got = hl(server, shop, {"term": {"tag": "Bags"}}, {"fields": {"tag": {}}})
    assert got["1"] == {"tag": ["<em>Bags</em>"]}


def test_highlight_phrase_and_multiterm(server, shop):
    got = hl(server, shop, {"match_phrase": {"body": "brown fox"}},
             {"fields": {"body": {"fragment_size": 30}}})
    # the 44-character sentence is longer than fragment_size: re-cut at words around the match
    assert got["3"] == {"body": ["The quick <em>brown</em> <em>fox</em> jumps over"]}
    got = hl(server, shop, {"bool": {"should": [{"prefix": {"body": "lap"}},
                                                {"wildcard": {"title": "d?sk"}},
                                                {"fuzzy": {"body": "lamb"}}]}},
             {"fields": {"body": {}, "title": {}}})
    assert got["1"]["body"] == ["Carry your <em>laptop</em> safely."]
    assert got["2"]["title"] == ["<em>Desk</em> <em>lamp</em>"]  # any field's terms
    assert "<em>lamp</em>" in got["2"]["body"][0]
    got = hl(server, shop, {"query_string": {"query": "body:quick AND title:fox"}},
             {"fields": {"body": {"number_of_fragments": 0}}})
    assert got["3"] == {"body": ["The <em>quick</em> brown <em>fox</em> jumps over the lazy dog. "
                                 "Brown foxes are <em>quick</em>."]}
    got = hl(server, shop, {"match_bool_prefix": {"body": "travel to lap"}},
             {"fields": {"body": {}}})
    assert got["4"] == {"body": ["<em>Travel</em> <em>to</em> <em>Lapland</em> in winter."]}


def test_highlight_options(server, shop):
    q = {"match": {"body": "quick"}}
    got = hl(server, shop, q, {"fields": {"body": {"fragment_size": 20, "number_of_fragments": 1,
                                                   "order": "score"}}})
    assert len(got["3"]["body"]) == 1
    got = hl(server, shop, {"match": {"body": "with"}}, {"encoder": "html", "fields": {"body": {}}})
    assert got["2"] == {"body": ["A lamp for the desk &lt;b&gt;<em>with</em>&lt;&#x2F;b&gt; a warm "
                                 "light &amp; dimmer."]}
    got = hl(server, shop, {"match": {"title": "lamp"}},
             {"fields": {"body": {"no_match_size": 10, "require_field_match": True}}})
    assert got["2"] == {"body": ["A lamp for"]}  # up to the word boundary after 10 chars
    got = hl(server, shop, q, {"fields": {"body": {"highlight_query": {"match": {"body": "dog"}}}}})
    assert got["3"] == {"body": ["The quick brown fox jumps over the lazy <em>dog</em>. Brown "
                                 "foxes are quick."]}
    got = hl(server, shop, q, {"fields": {"body": {"boundary_scanner": "word"}}})
    assert got["3"] == {"body": ["<em>quick</em>", "<em>quick</em>"]}
    got = hl(server, shop, q, {"max_analyzed_offset": 20, "fields": {"body": {}}})
    assert got["3"] == {"body": ["The <em>quick</em> brown fox jumps over the lazy dog. Brown "
                                 "foxes are quick."]}
    # _source off still highlights
    b = search(server, shop, {"query": q, "_source": False, "highlight": {"fields": {"body": {}}}})
    assert "_source" not in b["hits"]["hits"][0] and "highlight" in b["hits"]["hits"][0]


@pytest.mark.parametrize("bad", [
    {"fields": {"body": {"nope": 1}}},
    {"fields": {"body": {"fragment_size": -1}}},
    {"fields": {"body": {"type": "fancy"}}},
    {"tags_schema": "plain", "fields": {"body": {}}},
    {"fields": {"body": {"boundary_scanner": "line"}}},
    {"fields": {"body": {"matched_fields": ["body"]}}},
    {"fields": "body"},
    {"order": "random", "fields": {"body": {}}},
    {"fields": {"body": {"highlight_query": {"nope": {}}}}},
])
def test_highlight_refusals(server, shop, bad):
    st, h, b = server.request("POST", "/%s/_search" % shop,
                              {"query": {"match": {"body": "quick"}}, "highlight": bad})
    assert st == 400, b
