"""The completion field type and the completion suggester over HTTP (issue 14): input forms,
prefix and fuzzy matching, weights, skip_duplicates, deleted docs, several shards and segments
(the same options after _forcemerge), and errors."""
import pytest

import json


def search(server, index, body):
    st, h, b = server.request("POST", "/%s/_search" % index, body)
    assert st == 200, b
    return b


def suggest(server, ix, prefix, **opts):
    c = {"field": "s"}
    c.update(opts)
    b = search(server, ix, {"size": 0, "suggest": {"x": {"prefix": prefix, "completion": c}}})
    e = b["suggest"]["x"]
    assert len(e) == 1 and e[0]["text"] == prefix and e[0]["offset"] == 0
    return e[0]["options"]


def texts(opts):
    return [(o["text"], o["_id"], o["_score"]) for o in opts]


DOCS = [
    {"s": "Nirvana"},                                                # 1: weight 1
    {"s": ["Nevermind", "Nirvana Nevermind"]},                      # 2
    {"s": {"input": ["Nickelback", "Nick Cave"], "weight": 7}},     # 3
    {"s": [{"input": "Nine Inch Nails", "weight": 20}, {"input": "NIN", "weight": "3"}]},  # 4
    {"s": {"input": "Nirvana", "weight": 5}, "other": 1},          # 5: duplicate text
    {"s": "The Nightwatchman"},                                      # 6
]


@pytest.fixture
def music(server, fresh_index):
    ix = fresh_index
    st, h, b = server.request("PUT", "/" + ix, {
        "settings": {"number_of_shards": 2, "number_of_replicas": 0},
        "mappings": {"properties": {"s": {"type": "completion"}}}})
    assert st == 200, b
    # two bulks: several segments per shard
    for lo, hi in ((0, 3), (3, 6)):
        body = "".join(json.dumps({"index": {"_index": ix, "_id": str(i + 1)}}) + "\n" +
                       json.dumps(DOCS[i]) + "\n" for i in range(lo, hi))
        st, h, b = server.request("POST", "/_bulk?refresh=true", body)
        assert st == 200 and not b["errors"], b
    return ix


def test_mapping_roundtrip(server, music):
    st, h, b = server.request("GET", "/%s/_mapping" % music)
    assert st == 200
    f = b[music]["mappings"]["properties"]["s"]
    assert f["type"] == "completion" and f["max_input_length"] == 50
    assert f["preserve_separators"] is True and f["preserve_position_increments"] is True


def test_prefix_weights_and_sources(server, music):
    got = texts(suggest(server, music, "ni"))
    # doc 4 once (its best input), doc 3 once (equal weights: the first text)
    assert got == [("Nine Inch Nails", "4", 20.0), ("Nick Cave", "3", 7.0),
                   ("Nirvana", "5", 5.0), ("Nirvana", "1", 1.0), ("Nirvana Nevermind", "2", 1.0)]
    opts = suggest(server, music, "Nir", size=10)
    assert texts(opts) == [("Nirvana", "5", 5.0), ("Nirvana", "1", 1.0),
                           ("Nirvana Nevermind", "2", 1.0)]
    assert opts[0]["_index"] == music and opts[0]["_source"] == DOCS[4]
    # one option per doc: doc 3's best input under "nic"
    assert texts(suggest(server, music, "nic")) == [("Nick Cave", "3", 7.0)]
    assert texts(suggest(server, music, "nicke")) == [("Nickelback", "3", 7.0)]
    # separators are kept: "nick c" matches "Nick Cave", "nickc" does not
    assert texts(suggest(server, music, "nick c")) == [("Nick Cave", "3", 7.0)]
    assert suggest(server, music, "nickc") == []
    # the simple analyzer keeps "the": the input's key starts with it
    assert texts(suggest(server, music, "the ni")) == [("The Nightwatchman", "6", 1.0)]
    assert suggest(server, music, "zz") == []


def test_skip_duplicates_and_size(server, music):
    assert texts(suggest(server, music, "nir", skip_duplicates=True)) == [
        ("Nirvana", "5", 5.0), ("Nirvana Nevermind", "2", 1.0)]
    assert texts(suggest(server, music, "n", size=2)) == [("Nine Inch Nails", "4", 20.0),
                                                         ("Nick Cave", "3", 7.0)]


def test_fuzzy(server, music):
    assert suggest(server, music, "nrv") == []
    got = texts(suggest(server, music, "nrvana", fuzzy={"fuzziness": 1}))
    assert got == [("Nirvana", "5", 5.0), ("Nirvana", "1", 1.0), ("Nirvana Nevermind", "2", 1.0)]
    # AUTO: 6 letters allow 2 edits; prefix_length 1 keeps the first letter exact
    assert [t for t, _, _ in texts(suggest(server, music, "nivrana", fuzzy=True))][:1] == [
        "Nirvana"]
    assert suggest(server, music, "mirvana", fuzzy={"fuzziness": 1}) == []
    assert texts(suggest(server, music, "mirvana", fuzzy={"fuzziness": 1, "prefix_length": 0},
                         size=1)) == [("Nirvana", "5", 5.0)]
    # "nrivana" is one transposition (two edits without transpositions) from "nirvana"
    assert suggest(server, music, "nrivana",
                   fuzzy={"fuzziness": 1, "transpositions": False}) == []
    assert suggest(server, music, "nrivana", fuzzy={"fuzziness": 1}, size=1) != []
    # shorter than min_length: exact prefix only
    assert suggest(server, music, "nx", fuzzy={"fuzziness": 1, "min_length": 3}) == []


def test_deletes_and_forcemerge(server, music):
    before = texts(suggest(server, music, "n", size=10))
    st, h, b = server.request("POST", "/%s/_forcemerge?max_num_segments=1" % music)
    assert st == 200, b
    assert texts(suggest(server, music, "n", size=10)) == before
    st, h, b = server.request("DELETE", "/%s/_doc/5?refresh=true" % music)
    assert st == 200, b
    assert texts(suggest(server, music, "nir")) == [("Nirvana", "1", 1.0),
                                                    ("Nirvana Nevermind", "2", 1.0)]
    st, h, b = server.request("POST", "/%s/_forcemerge?max_num_segments=1" % music)
    assert st == 200, b
    assert texts(suggest(server, music, "nir")) == [("Nirvana", "1", 1.0),
                                                    ("Nirvana Nevermind", "2", 1.0)]


def test_max_input_length_and_options(server, fresh_index):
    ix = fresh_index
    st, h, b = server.request("PUT", "/" + ix, {"mappings": {"properties": {"s": {
        "type": "completion", "max_input_length": 5, "preserve_separators": False,
        "analyzer": "standard"}}}})
    assert st == 200, b
    st, h, b = server.request("PUT", "/%s/_doc/1?refresh=true" % ix, {"s": "Foo Barbecue"})
    assert st == 201, b
    # cut to "Foo B"; without separators "foob" matches
    assert texts(suggest(server, ix, "foob")) == [("Foo B", "1", 1.0)]
    assert suggest(server, ix, "foo ba") == []


def test_errors(server, music):
    ix = music
    st, h, b = server.request("PUT", "/%s/_mapping" % ix,
                              {"properties": {"t": {"type": "text"}}})
    assert st == 200, b
    bad_suggest = [
        {"x": {"prefix": "n", "completion": {"field": "t"}}},        # not a completion field
        {"x": {"prefix": "n", "completion": {"field": "nope"}}},     # unmapped
        {"x": {"regex": "n.*", "completion": {"field": "s"}}},
        {"x": {"prefix": "n", "completion": {"field": "s", "contexts": {}}}},
        {"x": {"prefix": "n", "completion": {"field": "s", "size": 0}}},
        {"x": {"prefix": "n", "completion": {"field": "s", "fuzzy": {"fuzziness": 3}}}},
        {"x": {"prefix": "n", "completion": {"field": "s", "skip_duplicates": "yes"}}},
        {"x": {"prefix": 3, "completion": {"field": "s"}}},
        {"x": {"prefix": "n", "completion": {}}},
    ]
    for bad in bad_suggest:
        st, h, r = server.request("POST", "/%s/_search" % ix, {"suggest": bad})
        assert st == 400, (bad, r)
        assert r["error"]["type"] == "illegal_argument_exception", r
    for doc in ({"s": {"weight": 3}}, {"s": {"input": "a", "weight": -1}},
                {"s": {"input": "a", "weight": "x"}}, {"s": {"input": "a", "weight": ""}},
                {"s": {"input": 5}},
                {"s": {"input": "a", "contexts": {"c": "x"}}}, {"s": 7}):
        st, h, r = server.request("PUT", "/%s/_doc/bad?refresh=true" % ix, doc)
        assert st == 400, (doc, r)
        assert r["error"]["type"] == "mapper_parsing_exception", r
    for m in ({"type": "completion", "max_input_length": 0},
              {"type": "completion", "preserve_separators": "x"},
              {"type": "completion", "contexts": []}):
        st, h, r = server.request("PUT", "/%s-m" % ix, {"mappings": {"properties": {"s": m}}})
        assert st == 400, (m, r)
