"""Score explanations over HTTP (issue 14): `explain: true` in search hits and
GET|POST /{index}/_explain/{id}. Every top-level value must be the hit's _score exactly, and the
BM25 breakdown must agree with values computed here from the documents."""
import math

import pytest

from conftest import assert_error, make_index, search_ok

DOCS = [
    {"title": "quick brown fox", "body": "the fox jumps over the fox", "tag": "animal"},
    {"title": "lazy dog", "body": "the dog sleeps", "tag": "animal"},
    {"title": "brown bag", "body": "a bag for a quick trip", "tag": "thing"},
    {"title": "fox news", "body": "news about a fox", "tag": "media"},
]


@pytest.fixture(scope="module")
def ex(server):
    name = "explain-docs"
    make_index(server, name, {
        "settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": {"properties": {"title": {"type": "text"}, "body": {"type": "text"},
                                    "tag": {"type": "keyword"}}}}, DOCS)
    yield name
    server.request("DELETE", "/" + name)


def search(server, index, body):
    return search_ok(server, index, body)["hits"]["hits"]


def by_id(hits):
    return {h["_id"]: h for h in hits}


def idf(n, N):
    return math.log(1 + (N - n + 0.5) / (n + 0.5))


def bm25(freq, dl, avgdl, n, N, boost=1.0):
    k1, b = 1.2, 0.75
    return boost * idf(n, N) * freq / (freq + k1 * (1 - b + b * dl / avgdl))


def close(a, b):
    return abs(a - b) <= 1e-5 * max(1.0, abs(b))


def tokens(field):
    return [d[field].split() for d in DOCS]


def expected_term(field, term, doc, boost=1.0):
    toks = tokens(field)
    N = len(toks)
    n = sum(1 for t in toks if term in t)
    avgdl = sum(len(t) for t in toks) / N
    return bm25(toks[doc].count(term), len(toks[doc]), avgdl, n, N, boost)


def check_term_node(node, field, term, doc, boost=1.0):
    """A Lucene BM25 term explanation, every number checked against the documents."""
    toks = tokens(field)
    N = len(toks)
    n = sum(1 for t in toks if term in t)
    avgdl = sum(len(t) for t in toks) / N
    freq, dl = toks[doc].count(term), len(toks[doc])
    assert node["description"].startswith("weight(%s:%s in " % (field, term)), node
    assert node["description"].endswith(") [PerFieldSimilarity], result of:"), node
    assert close(node["value"], expected_term(field, term, doc, boost))
    (score,) = node["details"]
    assert score["description"] == \
        "score(freq=%g), computed as boost * idf * tf from:" % freq
    bo, i, tf = score["details"]
    assert bo == {"value": boost, "description": "boost", "details": []}
    assert i["description"] == "idf, computed as log(1 + (N - n + 0.5) / (n + 0.5)) from:"
    assert close(i["value"], idf(n, N))
    assert [d["value"] for d in i["details"]] == [n, N]
    assert i["details"][0]["description"] == "n, number of documents containing term"
    assert i["details"][1]["description"] == "N, total number of documents with field"
    assert tf["description"] == \
        "tf, computed as freq / (freq + k1 * (1 - b + b * dl / avgdl)) from:"
    vals = {d["description"].split(",")[0]: d["value"] for d in tf["details"]}
    assert vals["freq"] == freq and vals["dl"] == dl
    assert close(vals["k1"], 1.2) and close(vals["b"], 0.75) and close(vals["avgdl"], avgdl)
    assert close(tf["value"], freq / (freq + 1.2 * (0.25 + 0.75 * dl / avgdl)))
    assert close(score["value"], bo["value"] * i["value"] * tf["value"])


def test_match_single_term(server, ex):
    hits = search(server, ex, {"query": {"match": {"body": "fox"}}, "explain": True})
    assert sorted(h["_id"] for h in hits) == ["0", "3"]
    for h in hits:
        x = h["_explanation"]
        assert x["value"] == h["_score"]
        check_term_node(x, "body", "fox", int(h["_id"]))


def test_match_boost_is_in_the_breakdown(server, ex):
    q = {"match": {"body": {"query": "fox", "boost": 2.5}}}
    hits = search(server, ex, {"query": q, "explain": True})
    for h in hits:
        assert h["_explanation"]["value"] == h["_score"]
        check_term_node(h["_explanation"], "body", "fox", int(h["_id"]), 2.5)


def test_multi_word_match_sums(server, ex):
    hits = search(server, ex, {"query": {"match": {"title": "quick fox"}}, "explain": True})
    got = by_id(hits)
    assert sorted(got) == ["0", "3"]
    x = got["0"]["_explanation"]
    assert x["value"] == got["0"]["_score"]
    assert x["description"] == "sum of:"
    assert len(x["details"]) == 2
    check_term_node(x["details"][0], "title", "quick", 0)
    check_term_node(x["details"][1], "title", "fox", 0)
    assert close(x["value"], expected_term("title", "quick", 0) + expected_term("title", "fox", 0))
    # a doc matching one of the terms lists only that clause
    x = got["3"]["_explanation"]
    assert x["value"] == got["3"]["_score"]
    assert len(x["details"]) == 1
    check_term_node(x["details"][0], "title", "fox", 3)


def test_bool_with_filter(server, ex):
    q = {"bool": {"must": [{"match": {"body": "fox"}}],
                  "filter": [{"term": {"tag": "animal"}}]}}
    hits = search(server, ex, {"query": q, "explain": True})
    assert [h["_id"] for h in hits] == ["0"]
    x = hits[0]["_explanation"]
    assert x["value"] == hits[0]["_score"]
    assert x["description"] == "sum of:"
    check_term_node(x["details"][0], "body", "fox", 0)
    f = x["details"][1]
    assert f["value"] == 0 and f["description"] == "match on required clause, product of:"
    assert f["details"][0] == {"value": 0, "description": "# clause", "details": []}
    assert f["details"][1]["value"] == 1
    assert f["details"][1]["description"] == "tag:animal"


def test_multi_match_best_fields(server, ex):
    for tie, head in ((None, "max of:"), (0.3, "max plus 0.3 times others of:")):
        mm = {"query": "fox", "fields": ["title", "body"]}
        if tie is not None:
            mm["tie_breaker"] = tie
        hits = search(server, ex, {"query": {"multi_match": mm}, "explain": True})
        got = by_id(hits)
        x = got["0"]["_explanation"]
        assert x["value"] == got["0"]["_score"]
        assert x["description"] == head
        kids = {d["description"].split(":")[0][len("weight("):]: d for d in x["details"]}
        assert sorted(kids) == ["body", "title"]
        check_term_node(kids["title"], "title", "fox", 0)
        check_term_node(kids["body"], "body", "fox", 0)
        t, b = expected_term("title", "fox", 0), expected_term("body", "fox", 0)
        assert close(x["value"], max(t, b) + (tie or 0) * min(t, b))


def test_constant_score_and_other_kinds(server, ex):
    hits = search(server, ex, {"query": {"terms": {"tag": ["media", "thing"]}}, "explain": True})
    assert sorted(h["_id"] for h in hits) == ["2", "3"]
    for h in hits:
        x = h["_explanation"]
        assert x["value"] == h["_score"] == 1.0
        assert x["description"].startswith("ConstantScore(tag:")
    q = {"function_score": {"query": {"match": {"body": "fox"}}, "weight": 3}}
    hits = search(server, ex, {"query": q, "explain": True})
    for h in hits:
        x = h["_explanation"]
        assert x["value"] == h["_score"]
        assert close(x["value"], 3 * expected_term("body", "fox", int(h["_id"])))
        assert x["description"] == "score of function_score query"


def test_no_explanation_unless_asked(server, ex):
    for h in search(server, ex, {"query": {"match": {"body": "fox"}}}):
        assert "_explanation" not in h
    st, h, b = server.request("POST", "/%s/_search?explain=true" % ex,
                              {"query": {"match": {"body": "fox"}}})
    assert st == 200 and all("_explanation" in x for x in b["hits"]["hits"])


def test_explain_endpoint(server, ex):
    q = {"match": {"title": "quick fox"}}
    got = by_id(search(server, ex, {"query": q}))
    for method in ("GET", "POST"):
        st, h, b = server.request(method, "/%s/_explain/0" % ex, {"query": q})
        assert st == 200, b
        assert b["_index"] == ex and b["_id"] == "0" and b["matched"] is True
        assert b["explanation"]["value"] == got["0"]["_score"]
        assert b["explanation"]["description"] == "sum of:"
        check_term_node(b["explanation"]["details"][1], "title", "fox", 0)
    # an existing doc the query does not match
    st, h, b = server.request("POST", "/%s/_explain/1" % ex, {"query": q})
    assert st == 200, b
    assert b["matched"] is False and b["explanation"]["value"] == 0
    assert b["explanation"]["description"].startswith("no match on ")
    # a doc that does not exist
    st, h, b = server.request("POST", "/%s/_explain/nope" % ex, {"query": q})
    assert st == 404, b
    assert b == {"_index": ex, "_id": "nope", "matched": False}
    # ?q= instead of a body
    st, h, b = server.request("GET", "/%s/_explain/3?q=title:fox" % ex)
    assert st == 200 and b["matched"] is True, b
    check_term_node(b["explanation"], "title", "fox", 3)


def test_explain_endpoint_errors(server, ex):
    st, h, b = server.request("POST", "/%s/_explain/0" % ex, {})
    assert_error(b, 400, "action_request_validation_exception")
    assert st == 400
    st, h, b = server.request("POST", "/%s/_explain/0" % ex, {"query": {"nope": {}}})
    assert st == 400, b
    st, h, b = server.request("POST", "/no-such-index/_explain/0", {"query": {"match_all": {}}})
    assert st == 404, b
