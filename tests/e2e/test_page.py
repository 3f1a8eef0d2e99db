"""Search-page features over HTTP (issue 14): prefix-as-you-type queries (match_bool_prefix,
multi_match bool_prefix, match_phrase_prefix) and highlighting."""
import pytest

from conftest import assert_error, make_index, search_ok as search

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
    make_index(server, name, {
        "settings": {"number_of_shards": 2, "number_of_replicas": 0},
        "mappings": {"properties": {"title": {"type": "text"}, "body": {"type": "text"},
                                    "tag": {"type": "keyword"}}}}, DOCS)
    yield name
    server.request("DELETE", "/" + name)


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
    # positional: the prefix must follow the phrase ("brown" then "fox..."); "the q" is a
    # phrase start in doc 3 only ("The quick"), "for t" in doc 2 ("for the")
    b = search(server, shop, {"query": {"match_phrase_prefix": {"body": "brown qu"}}})
    assert ids(b) == []
    b = search(server, shop, {"query": {"match_phrase_prefix": {"body": "for t"}}})
    assert ids(b) == ["2"]
    # "l" expands in term order: with 1 expansion only "lamp" ("the lamp" is nowhere)
    b = search(server, shop, {"query": {"match_phrase_prefix": {"body": {
        "query": "the l", "max_expansions": 1}}}})
    assert ids(b) == []
    b = search(server, shop, {"query": {"match_phrase_prefix": {"body": "the l"}}})
    assert ids(b) == ["3"]  # "the lazy"
    got = hl(server, shop, {"match_phrase_prefix": {"body": "quick brown fo"}},
             {"fields": {"body": {}}})
    assert got["3"] == {"body": ["The <em>quick</em> <em>brown</em> <em>fox</em> jumps over the "
                                 "lazy dog. Brown foxes are quick."]}
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


# ---- function_score: scores against Elasticsearch's formulas computed here ----

import math

FS_DOCS = [
    {"t": "red apple", "likes": 10, "price": 2.5, "day": "2024-01-10", "rating": [3, 5]},
    {"t": "red berry", "likes": 0, "price": 10.0, "day": "2024-01-01", "rating": [1]},
    {"t": "red cherry", "price": 0.5, "day": "2023-12-01"},
    {"t": "green apple", "likes": 100, "price": 4.0, "day": "2024-01-20", "rating": [4]},
]


@pytest.fixture(scope="module")
def fs(server):
    name = "page-fs"
    make_index(server, name, {
        "settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": {"properties": {"t": {"type": "text"}, "likes": {"type": "long"},
                                    "price": {"type": "double"}, "day": {"type": "date"},
                                    "rating": {"type": "integer"}, "tag": {"type": "keyword"}}}},
        FS_DOCS)
    yield name
    server.request("DELETE", "/" + name)


def scores(server, index, query):
    b = search(server, index, {"query": query, "size": 10})
    return {h["_id"]: h["_score"] for h in b["hits"]["hits"]}


def const_red(fs_body):
    body = {"query": {"constant_score": {"filter": {"match": {"t": "red"}}, "boost": 2}}}
    body.update(fs_body)
    return {"function_score": body}


def test_function_score_field_value_factor(server, fs):
    mods = {"none": lambda v: v, "log": math.log10, "log1p": lambda v: math.log10(v + 1),
            "log2p": lambda v: math.log10(v + 2), "ln": math.log, "ln1p": math.log1p,
            "ln2p": lambda v: math.log1p(1 + v), "square": lambda v: v * v, "sqrt": math.sqrt,
            "reciprocal": lambda v: 1 / v}
    for mod, fn in mods.items():
        got = scores(server, fs, const_red({"field_value_factor": {
            "field": "price", "factor": 1.5, "modifier": mod, "missing": 7}}))
        # boost_mode multiply: 2 (the constant score) * modifier(factor * value)
        want = {"0": 2 * fn(1.5 * 2.5), "1": 2 * fn(1.5 * 10.0), "2": 2 * fn(1.5 * 0.5)}
        # a negative final score becomes 0 (Elasticsearch fails the shard instead; documented)
        want = {k: max(0.0, v) for k, v in want.items()}
        assert got == {k: pytest.approx(v, rel=1e-6) for k, v in want.items()}, mod
    got = scores(server, fs, const_red({"field_value_factor": {"field": "likes", "missing": 3},
                                        "boost_mode": "replace"}))
    assert got == {"0": 10.0, "1": 0.0, "2": 3.0}


def test_function_score_decay(server, fs):
    def gauss(d, s, decay=0.5):
        return math.exp(0.5 * d * d / (0.5 * s * s / math.log(decay)))

    def expo(d, s, decay=0.5):
        return math.exp(math.log(decay) / s * d)

    def linear(d, s, decay=0.5):
        s2 = s / (1 - decay)
        return max(0.0, (s2 - d) / s2)

    for name, fn in (("gauss", gauss), ("exp", expo), ("linear", linear)):
        got = scores(server, fs, const_red({name: {"price": {"origin": 3, "scale": 2,
                                                             "offset": 0.5, "decay": 0.3}},
                                            "boost_mode": "replace"}))
        want = {k: fn(max(0, abs(p - 3) - 0.5), 2, 0.3)
                for k, p in (("0", 2.5), ("1", 10.0), ("2", 0.5))}
        assert got == {k: pytest.approx(v, rel=1e-6, abs=1e-7) for k, v in want.items()}, name
    # dates: ms distances, scale with a unit; a doc without the field scores 1
    day = 86400000.0
    got = scores(server, fs, {"function_score": {"query": {"match_all": {}}, "boost_mode": "replace",
                                                 "exp": {"day": {"origin": "2024-01-10",
                                                                 "scale": "10d"}}}})
    want = {"0": 1.0, "1": expo(9 * day, 10 * day), "2": expo(40 * day, 10 * day),
            "3": expo(10 * day, 10 * day)}
    assert got == {k: pytest.approx(v, rel=1e-6) for k, v in want.items()}
    # multi_value_mode over a multi-valued field; missing -> 1
    got = scores(server, fs, {"function_score": {
        "boost_mode": "replace",
        "linear": {"rating": {"origin": 5, "scale": 4}, "multi_value_mode": "max"}}})
    want = {"0": linear(2, 4), "1": linear(4, 4), "2": 1.0, "3": linear(1, 4)}
    assert got == {k: pytest.approx(v, rel=1e-6) for k, v in want.items()}


def test_function_score_modes_filters_weight(server, fs):
    fns = [{"filter": {"match": {"t": "apple"}}, "weight": 3},
           {"filter": {"range": {"likes": {"gte": 10}}}, "weight": 5},
           {"field_value_factor": {"field": "price"}, "weight": 2}]
    prices = {"0": 2.5, "1": 10.0, "2": 0.5, "3": 4.0}
    matched = {"0": [3, 5, 2 * 2.5], "1": [2 * 10.0], "2": [2 * 0.5], "3": [3, 5, 2 * 4.0]}
    weights = {"0": [3, 5, 2], "1": [2], "2": [2], "3": [3, 5, 2]}
    combine = {"multiply": lambda r, w: math.prod(r), "sum": lambda r, w: sum(r),
               "avg": lambda r, w: sum(r) / sum(w), "first": lambda r, w: r[0],
               "max": lambda r, w: max(r), "min": lambda r, w: min(r)}
    for mode, c in combine.items():
        got = scores(server, fs, {"function_score": {"functions": fns, "score_mode": mode,
                                                     "boost_mode": "replace"}})
        want = {k: c(matched[k], weights[k]) for k in prices}
        assert got == {k: pytest.approx(v, rel=1e-6) for k, v in want.items()}, mode
    # boost modes against the query's score q (constant 2) and max_boost
    q = 2.0
    boost = {"multiply": lambda f: q * f, "replace": lambda f: f, "sum": lambda f: q + f,
             "avg": lambda f: (q + f) / 2, "max": lambda f: max(q, f), "min": lambda f: min(q, f)}
    for mode, b in boost.items():
        got = scores(server, fs, const_red({"functions": fns, "score_mode": "sum",
                                            "boost_mode": mode, "max_boost": 8}))
        want = {k: b(min(8, sum(matched[k]))) for k in ("0", "1", "2")}
        assert got == {k: pytest.approx(v, rel=1e-6) for k, v in want.items()}, mode
    # min_score drops docs, also from the total
    b = search(server, fs, {"query": {"function_score": {
        "field_value_factor": {"field": "price"}, "boost_mode": "replace", "min_score": 3}}})
    assert sorted(h["_id"] for h in b["hits"]["hits"]) == ["1", "3"]
    assert b["hits"]["total"]["value"] == 2
    st, h, c = server.request("POST", "/%s/_count" % fs, {"query": {"function_score": {
        "field_value_factor": {"field": "price"}, "boost_mode": "replace", "min_score": 3}}})
    assert c["count"] == 2
    # weight alone; boost of the function_score reaches the query score (Lucene's boost)
    got = scores(server, fs, {"function_score": {"query": {"match": {"t": "cherry"}},
                                                 "weight": 4, "boost": 2}})
    base = scores(server, fs, {"match": {"t": "cherry"}})
    assert got["2"] == pytest.approx(base["2"] * 2 * 4, rel=1e-6)


def test_function_score_random(server, fs):
    q = {"function_score": {"random_score": {"seed": 10, "field": "likes"},
                            "boost_mode": "replace"}}
    a, b = scores(server, fs, q), scores(server, fs, q)
    assert a == b and all(0 <= v < 1 for v in a.values())
    q2 = {"function_score": {"random_score": {"seed": 11, "field": "likes"},
                             "boost_mode": "replace"}}
    assert scores(server, fs, q2) != a


@pytest.mark.parametrize("bad", [
    {"script_score": {"script": {"source": "_score *"}}},  # compile error
    {"field_value_factor": {"field": "t"}},
    {"field_value_factor": {"field": "nope"}},
    {"field_value_factor": {"field": "price", "modifier": "cube"}},
    {"gauss": {"price": {"scale": 2}}},
    {"gauss": {"price": {"origin": 1, "scale": 0}}},
    {"exp": {"price": {"origin": 1, "scale": 1, "decay": 1.5}}},
    {"score_mode": "median", "weight": 2},
    {"boost_mode": "pow", "weight": 2},
    {"functions": [{"weight": 2}], "weight": 3},
    {"functions": [{"nope": 1}]},
])
def test_function_score_refusals(server, fs, bad):
    st, h, b = server.request("POST", "/%s/_search" % fs, {"query": {"function_score": bad}})
    assert st == 400, b


def test_top_level_min_score(server, fs):
    q = {"match": {"t": "red apple"}}
    allscores = scores(server, fs, q)
    cut = sorted(allscores.values())[1]
    b = search(server, fs, {"query": q, "min_score": cut})
    got = {h["_id"]: h["_score"] for h in b["hits"]["hits"]}
    assert got == {k: v for k, v in allscores.items() if v >= cut}
    assert b["hits"]["total"]["value"] == len(got)
    st, h, c = server.request("POST", "/%s/_count" % fs, {"query": q, "min_score": cut})
    assert st == 200 and c["count"] == len(got)
    st, h, c = server.request("POST", "/%s/_search" % fs, {"query": q, "min_score": "x"})
    assert st == 400


def test_highlight_inside_function_score(server, shop):
    q = {"function_score": {"query": {"match": {"body": "laptop"}}, "weight": 2}}
    got = hl(server, shop, q, {"fields": {"body": {}}})
    assert got["1"] == {"body": ["Carry your <em>laptop</em> safely."]}


def test_highlight_multi_valued(server, fresh_index):
    ix = fresh_index
    server.request("PUT", "/%s/_doc/1?refresh=true" % ix,
                   {"tags": ["red fox", "no match here", "the fox again"], "title": "x"})
    b = search(server, ix, {"query": {"match": {"tags": "fox"}},
                            "highlight": {"fields": {"tags": {}}}})
    assert b["hits"]["hits"][0]["highlight"] == {"tags": ["red <em>fox</em>",
                                                          "the <em>fox</em> again"]}
    b = search(server, ix, {"query": {"match": {"tags": "fox"}},
                            "highlight": {"fields": {"tags": {"number_of_fragments": 0}}}})
    assert b["hits"]["hits"][0]["highlight"] == {"tags": ["red <em>fox</em>",
                                                          "the <em>fox</em> again"]}
    # the keyword sub-field made by dynamic mapping reads its parent's values
    b = search(server, ix, {"query": {"term": {"tags.keyword": "red fox"}},
                            "highlight": {"fields": {"tags.keyword": {}}}})
    assert b["hits"]["hits"][0]["highlight"] == {"tags.keyword": ["<em>red fox</em>"]}


def test_version_and_seq_no_in_hits(server, fresh_index):
    ix = fresh_index
    server.request("PUT", "/%s/_doc/a" % ix, {"t": "one"})
    st, h, w = server.request("PUT", "/%s/_doc/a?refresh=true" % ix, {"t": "two"})
    b = search(server, ix, {"query": {"match_all": {}}, "version": True,
                            "seq_no_primary_term": True})
    hit = b["hits"]["hits"][0]
    assert hit["_version"] == 2 == w["_version"]
    assert hit["_seq_no"] == w["_seq_no"] and hit["_primary_term"] == w["_primary_term"]
    b = search(server, ix, {"query": {"match_all": {}}})
    assert "_version" not in b["hits"]["hits"][0] and "_seq_no" not in b["hits"]["hits"][0]
    st, h, b = server.request("GET", "/%s/_search?version=true" % ix)
    assert b["hits"]["hits"][0]["_version"] == 2
    st, h, b = server.request("POST", "/%s/_search" % ix, {"version": "yes"})
    assert st == 400


def test_named_queries(server, shop):
    q = {"bool": {"should": [{"match": {"title": {"query": "laptop", "_name": "in_title"}}},
                             {"match": {"body": {"query": "laptop", "_name": "in_body"}}},
                             {"term": {"tag": {"value": "Lamps", "_name": "lamps"}}}]}}
    b = search(server, shop, {"query": q})
    got = {h["_id"]: sorted(h.get("matched_queries", [])) for h in b["hits"]["hits"]}
    assert got == {"0": ["in_body", "in_title"], "1": ["in_body", "in_title"], "2": ["lamps"]}
    b = search(server, shop, {"query": {"bool": {"_name": "all", "must": {"match_all": {}}}}})
    assert all(h["matched_queries"] == ["all"] for h in b["hits"]["hits"])
    b = search(server, shop, {"query": {"match": {"body": "laptop"}}})
    assert all("matched_queries" not in h for h in b["hits"]["hits"])


def test_rescore_query(server, fs):
    base = scores(server, fs, {"match": {"t": "red"}})
    resc = scores(server, fs, {"match": {"t": "apple"}})
    for mode, comb in (("total", lambda a, b: a + b), ("multiply", lambda a, b: a * b),
                       ("avg", lambda a, b: (a + b) / 2), ("max", max), ("min", min)):
        b = search(server, fs, {"query": {"match": {"t": "red"}}, "rescore": {
            "window_size": 2, "query": {"rescore_query": {"match": {"t": "apple"}},
                                        "query_weight": 0.7, "rescore_query_weight": 1.2,
                                        "score_mode": mode}}})
        got = {h["_id"]: h["_score"] for h in b["hits"]["hits"]}
        # the first pass's top 2 (one shard) are rescored; the rest only weighted
        top2 = sorted(base, key=lambda k: (-base[k], int(k)))[:2]
        want = {}
        for k, s in base.items():
            if k in top2 and k in resc:
                want[k] = comb(0.7 * s, 1.2 * resc[k])
            else:
                want[k] = 0.7 * s
        assert got == {k: pytest.approx(v, rel=1e-5) for k, v in want.items()}, mode
        order = [h["_id"] for h in b["hits"]["hits"]]
        assert order == sorted(want, key=lambda k: (-want[k], int(k))), mode
    st, h, b = server.request("POST", "/%s/_search" % fs, {
        "query": {"match": {"t": "red"}}, "sort": ["likes"],
        "rescore": {"query": {"rescore_query": {"match_all": {}}}}})
    assert st == 400, b
    st, h, b = server.request("POST", "/%s/_search" % fs, {
        "rescore": {"query": {"rescore_query": {"match_all": {}}, "score_mode": "pow"}}})
    assert st == 400, b


def test_collapse(server, fresh_index):
    ix = fresh_index
    docs = []
    for i in range(60):  # 60 docs, 7 brands, scores fall with i (longer texts)
        docs.append({"t": "phone " + "x " * i, "brand": "b%d" % (i % 7), "shop": i % 5})
    docs.append({"t": "phone"})  # no brand: its own group
    make_index(server, ix, {
        "settings": {"number_of_shards": 3, "number_of_replicas": 0},
        "mappings": {"properties": {"t": {"type": "text"}, "brand": {"type": "keyword"},
                                    "shop": {"type": "integer"}}}}, docs)
    q = {"match": {"t": "phone"}}
    full = search(server, ix, {"query": q, "size": 100})
    ranked = [(h["_id"], h["_score"]) for h in full["hits"]["hits"]]

    def brand(i):
        i = int(i)
        return "b%d" % (i % 7) if i < 60 else None

    def expect(key, size, frm=0):
        seen, out = set(), []
        for i, s in ranked:
            k = key(i)
            if k in seen:
                continue
            seen.add(k)
            out.append((i, s, k))
        return out[frm:frm + size]

    for size, frm in ((3, 0), (10, 0), (4, 2)):
        b = search(server, ix, {"query": q, "size": size, "from": frm,
                                "collapse": {"field": "brand"}})
        got = [(h["_id"], h["_score"], h["fields"]["brand"][0]) for h in b["hits"]["hits"]]
        assert got == expect(brand, size, frm), (size, frm)
        assert b["hits"]["total"]["value"] == 61  # totals count docs, not groups
    b = search(server, ix, {"query": q, "size": 10, "collapse": {"field": "shop"}})
    got = [(h["_id"], h["fields"]["shop"][0]) for h in b["hits"]["hits"]]
    want = [(i, k) for i, s, k in expect(lambda i: int(i) % 5 if int(i) < 60 else None, 10)]
    assert got == want
    for bad in ({"collapse": {"field": "t"}}, {"collapse": {"field": "brand", "inner_hits": {"nope": 1}}},
                {"collapse": {"field": "brand"}, "sort": ["shop"]},
                {"collapse": {"field": "brand"}, "rescore": {"query": {"rescore_query": q}}},
                {"collapse": {}}):
        body = {"query": q}
        body.update(bad)
        st, h, r = server.request("POST", "/%s/_search" % ix, body)
        assert st == 400, (bad, r)


def test_term_suggester(server, fresh_index):
    ix = fresh_index
    docs = [{"t": "laptop bag"}, {"t": "laptop stand"}, {"t": "laptops"}, {"t": "lapdog"},
            {"t": "desk lamp"}, {"t": "lamp shade"}, {"t": "lamb stew"}]
    make_index(server, ix, {
        "settings": {"number_of_shards": 2, "number_of_replicas": 0},
        "mappings": {"properties": {"t": {"type": "text"}}}}, docs)
    b = search(server, ix, {"size": 0, "suggest": {"s": {"text": "Laptpo lamp",
                                                         "term": {"field": "t"}}}})
    s = b["suggest"]["s"]
    assert [(e["text"], e["offset"], e["length"]) for e in s] == [("laptpo", 0, 6),
                                                                  ("lamp", 7, 4)]
    # laptpo: laptop (1 transposition: 1 - 1/6), laptops (2 edits: 1 - 2/6); lamp exists: none
    opts = [(o["text"], o["freq"]) for o in s[0]["options"]]
    assert opts == [("laptop", 2), ("laptops", 1)]
    assert s[0]["options"][0]["score"] == pytest.approx(1 - 1 / 6, rel=1e-6)
    assert s[1]["options"] == []
    b = search(server, ix, {"size": 0, "suggest": {"text": "lamp", "s": {
        "term": {"field": "t", "suggest_mode": "always", "sort": "frequency"}}}})
    assert [o["text"] for o in b["suggest"]["s"][0]["options"]] == ["lamb"]
    b = search(server, ix, {"size": 0, "suggest": {"s": {"text": "lapdgo", "term": {
        "field": "t", "max_edits": 1, "prefix_length": 3}}}})
    assert [o["text"] for o in b["suggest"]["s"][0]["options"]] == ["lapdog"]
    for bad in ({"s": {"text": "x", "phrase": {"field": "t", "collate": {}}}},
                {"s": {"text": "x", "completion": {"field": "t"}}},
                {"s": {"term": {"field": "t"}}},
                {"s": {"text": "x", "term": {"field": "t", "max_edits": 3}}},
                {"s": {"text": "x", "term": {"field": "t", "suggest_mode": "often"}}}):
        st, h, r = server.request("POST", "/%s/_search" % ix, {"suggest": bad})
        assert st == 400, (bad, r)


def test_indices_boost(server, shop, fs):
    q = {"match": {"t": "red"}}
    base = scores(server, fs, q)
    b = search(server, "%s,%s" % (shop, fs), {"query": q, "indices_boost": [{"page-f*": 3}]})
    got = {h["_id"]: h["_score"] for h in b["hits"]["hits"] if h["_index"] == fs}
    assert got == {k: pytest.approx(v * 3, rel=1e-6) for k, v in base.items()}
    b = search(server, fs, {"query": q, "indices_boost": {fs: 0.5}})
    assert {h["_id"]: h["_score"] for h in b["hits"]["hits"]} == {
        k: pytest.approx(v * 0.5, rel=1e-6) for k, v in base.items()}
    st, h, b = server.request("POST", "/%s/_search" % fs, {"query": q, "indices_boost": [1]})
    assert st == 400


def test_highlight_and_version_on_scroll_pages(server, shop):
    st, h, b = server.request("POST", "/%s/_search?scroll=1m" % shop, {
        "size": 1, "query": {"match": {"body": "laptop"}}, "version": True,
        "highlight": {"fields": {"body": {}}}})
    assert st == 200, b
    seen = [b["hits"]["hits"][0]]
    st, h, b2 = server.request("POST", "/_search/scroll", {"scroll": "1m",
                                                          "scroll_id": b["_scroll_id"]})
    assert st == 200, b2
    seen += b2["hits"]["hits"]
    assert len(seen) == 2
    assert all("<em>laptop</em>" in x["highlight"]["body"][0] and x["_version"] == 1
               for x in seen)


def test_function_score_weight_before_function(server, fs):
    # key order must not matter: weight first, then the function
    body = '{"query": {"function_score": {"functions": [{"weight": 2, "field_value_factor": ' \
           '{"field": "price"}}], "boost_mode": "replace"}}}'
    st, h, b = server.request("POST", "/%s/_search" % fs, body)
    assert st == 200, b
    got = {x["_id"]: x["_score"] for x in b["hits"]["hits"]}
    assert got == {"0": 5.0, "1": 20.0, "2": 1.0, "3": 8.0}
    body = '{"query": {"function_score": {"functions": [{"gauss": {"price": {"origin": 1, ' \
           '"scale": 1}}, "field_value_factor": {"field": "price"}}]}}}'
    st, h, b = server.request("POST", "/%s/_search" % fs, body)
    assert st == 400, b
