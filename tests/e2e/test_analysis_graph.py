"""Token graphs (issue 14): positionLength of synonym_graph multi-word outputs,
word_delimiter_graph concatenations and shingles in _analyze (reported only when it is not 1,
as Elasticsearch does; the chain oracle checks the lengths against Lucene 8.7), and
match_phrase over a graph-producing search analyzer: one phrase per path through the graph,
so "ny city" finds both "ny city" and "new york city" as Lucene's graph phrase does."""
from conftest import bulk_body


def analyze(server, body, index=None):
    st, _, b = server.request("POST", ("/%s/_analyze" % index) if index else "/_analyze", body)
    assert st == 200, b
    return [(t["token"], t["position"], t.get("positionLength")) for t in b["tokens"]]


def test_position_length_in_analyze(server):
    syn = {"type": "synonym_graph", "synonyms": ["ny, new york"]}
    assert analyze(server, {"tokenizer": "standard", "filter": ["lowercase", syn],
                            "text": "NY city"}) == [
        ("new", 0, None), ("ny", 0, 2), ("york", 1, None), ("city", 2, None)]
    assert analyze(server, {"tokenizer": "standard", "filter": ["lowercase", syn],
                            "text": "new york city"}) == [
        ("ny", 0, 2), ("new", 0, None), ("york", 1, None), ("city", 2, None)]
    wdg = {"type": "word_delimiter_graph", "catenate_words": True}
    got = analyze(server, {"tokenizer": "whitespace", "filter": [wdg], "text": "wi-fi"})
    assert sorted(got) == [("fi", 1, None), ("wi", 0, None), ("wifi", 0, 2)]
    got = analyze(server, {"tokenizer": "whitespace", "filter": ["shingle"], "text": "a b c"})
    assert ("a b", 0, 2) in got and ("a", 0, None) in got
    # explain reports every token's length
    st, _, b = server.request("POST", "/_analyze", {
        "tokenizer": "whitespace", "filter": [wdg], "text": "wi-fi", "explain": True})
    assert st == 200, b
    lens = {t["token"]: t["positionLength"] for t in b["detail"]["tokenfilters"][0]["tokens"]}
    assert lens == {"wifi": 2, "wi": 1, "fi": 1}


def test_phrase_over_graph(server, fresh_index):
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 1, "analysis": {
            "filter": {"syn": {"type": "synonym_graph", "synonyms": ["ny, new york"]},
                       "wdg": {"type": "word_delimiter_graph", "catenate_words": True}},
            "analyzer": {"syn": {"tokenizer": "standard", "filter": ["lowercase", "syn"]},
                         "wd": {"tokenizer": "whitespace", "filter": ["wdg", "lowercase"]}}}},
        "mappings": {"properties": {
            "t": {"type": "text", "analyzer": "standard", "search_analyzer": "syn"},
            "w": {"type": "text", "analyzer": "whitespace", "search_analyzer": "wd"}}}})
    assert st == 200, b
    docs = [{"t": "I love ny city", "w": "fast wifi router"},
            {"t": "I love new york city", "w": "fast wi fi router"},
            {"t": "york city new", "w": "wi router fi"}]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs))
    assert st == 200 and not b["errors"], b

    def ids(field, text, slop=0):
        st, _, b = server.request("POST", "/%s/_search" % fresh_index, {
            "query": {"match_phrase": {field: {"query": text, "slop": slop}}}})
        assert st == 200, b
        return sorted(h["_id"] for h in b["hits"]["hits"])
    assert ids("t", "ny city") == ["0", "1"]
    assert ids("t", "new york city") == ["0", "1"]
    assert ids("t", "love ny") == ["0", "1"]
    assert ids("t", "york city") == ["1", "2"]  # no graph: a plain phrase
    assert ids("w", "wi-fi router") == ["0", "1"]
    assert ids("w", "wi-fi") == ["0", "1"]
