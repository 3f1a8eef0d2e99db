"""Analysis over HTTP (issue 14): the _analyze API (named analyzers, ad-hoc chains with inline
definitions, fields, explain, text arrays) and the analysis additions used by search pages:
edge n-grams for search-as-you-type, synonyms (inline and from a file under the data folder),
char filters. Token lists are what Elasticsearch 7/8 returns for the same requests."""
import os

import pytest

from conftest import assert_error, bulk_body


def analyze(server, body, index=None):
    st, h, b = server.request("POST", ("/%s/_analyze" % index) if index else "/_analyze", body)
    assert st == 200, b
    return b


def toks(b):
    return [(t["token"], t["start_offset"], t["end_offset"], t["position"]) for t in b["tokens"]]


def test_analyze_builtin_utf16_offsets(server):
    b = analyze(server, {"analyzer": "standard", "text": "Naïve 😀 ok"})
    assert toks(b) == [("naïve", 0, 5, 0), ("😀", 6, 8, 1), ("ok", 9, 11, 2)]
    assert [t["type"] for t in b["tokens"]] == ["<ALPHANUM>", "<EMOJI>", "<ALPHANUM>"]
    # no analyzer: the standard one
    assert toks(analyze(server, {"text": "A B"})) == [("a", 0, 1, 0), ("b", 2, 3, 1)]


def test_analyze_text_array(server):
    # analyzer (not a field): position gap 0, offset gap 1, as AnalyzeAction
    b = analyze(server, {"analyzer": "whitespace", "text": ["a b", "c"]})
    assert toks(b) == [("a", 0, 1, 0), ("b", 2, 3, 1), ("c", 4, 5, 2)]


def test_analyze_adhoc_chain(server):
    b = analyze(server, {"tokenizer": {"type": "edge_ngram", "min_gram": 2, "max_gram": 3,
                                       "token_chars": ["letter"]},
                         "filter": ["lowercase"], "text": "Quick Fox"})
    assert [t["token"] for t in b["tokens"]] == ["qu", "qui", "fo", "fox"]
    b = analyze(server, {"tokenizer": "standard",
                         "filter": [{"type": "shingle", "max_shingle_size": 2}],
                         "text": "new york city"})
    assert [t["token"] for t in b["tokens"]] == [
        "new", "new york", "york", "york city", "city"]
    b = analyze(server, {"tokenizer": "standard",
                         "char_filter": [{"type": "mapping", "mappings": ["& => and"]}],
                         "filter": ["lowercase", {"type": "synonym_graph",
                                                  "synonyms": ["tv, television"]}],
                         "text": "Rock & TV"})
    assert toks(b) == [("rock", 0, 4, 0), ("and", 5, 6, 1), ("television", 7, 9, 2),
                       ("tv", 7, 9, 2)]
    # filters without a tokenizer: the keyword tokenizer
    b = analyze(server, {"filter": ["lowercase", "trim"], "text": "  MiXed  "})
    assert [t["token"] for t in b["tokens"]] == ["mixed"]


def test_analyze_explain(server):
    b = analyze(server, {"tokenizer": "whitespace", "filter": ["lowercase", "unique"],
                         "char_filter": [{"type": "pattern_replace", "pattern": "-",
                                          "replacement": " "}],
                         "text": "A-b a", "explain": True})
    d = b["detail"]
    assert d["custom_analyzer"] is True
    assert d["charfilters"][0]["filtered_text"] == ["A b a"]
    assert [t["token"] for t in d["tokenizer"]["tokens"]] == ["A", "b", "a"]
    assert d["tokenizer"]["name"] == "whitespace"
    assert [f["name"] for f in d["tokenfilters"]] == ["lowercase", "unique"]
    assert [t["token"] for t in d["tokenfilters"][0]["tokens"]] == ["a", "b", "a"]
    assert [t["token"] for t in d["tokenfilters"][1]["tokens"]] == ["a", "b"]
    assert d["tokenfilters"][1]["tokens"][0]["bytes"] == "[61]"
    b = analyze(server, {"analyzer": "english", "text": "running", "explain": True})
    assert b["detail"]["custom_analyzer"] is False
    assert b["detail"]["analyzer"]["name"] == "english"
    assert b["detail"]["analyzer"]["tokens"][0]["token"] == "run"


def test_analyze_errors(server):
    st, _, b = server.request("POST", "/_analyze", {"analyzer": "nope", "text": "x"})
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    assert "nope" in b["error"]["reason"]
    st, _, b = server.request("POST", "/_analyze", {"tokenizer": "standard",
                                                   "filter": [{"type": "stemmer",
                                                               "language": "klingon"}],
                                                   "text": "x"})
    assert_error(b, 400, "illegal_argument_exception")
    assert "klingon" in b["error"]["reason"]
    st, _, b = server.request("POST", "/_analyze", {"analyzer": "standard"})
    assert_error(b, 400, "action_request_validation_exception")
    st, _, b = server.request("POST", "/_analyze", {"text": "x", "bogus": 1})
    assert_error(b, 400, "x_content_parse_exception")
    st, _, b = server.request("POST", "/_analyze", {"text": "x", "field": "f"})
    assert_error(b, 400, "illegal_argument_exception")
    st, _, b = server.request("POST", "/no-such-index-xyz/_analyze", {"text": "x"})
    assert_error(b, 404, "index_not_found_exception")
    st, _, b = server.request("PUT", "/bad-analysis", {"settings": {"analysis": {
        "analyzer": {"a": {"tokenizer": "t"}},
        "tokenizer": {"t": {"type": "ngram", "min_gram": 4, "max_gram": 2}}}}})
    assert_error(b, 400, "illegal_argument_exception")
    assert "analysis.tokenizer.t" in b["error"]["reason"]


@pytest.fixture(scope="module")
def pages(server):
    """An index like a shop's search page: autocomplete on edge n-grams, synonyms at search
    time, a char filter, and a field analyzed with a French stemmer."""
    name = "analysis-pages"
    server.request("DELETE", "/" + name)
    syn_dir = os.path.join(server.data_dir, "analysis")
    os.makedirs(syn_dir, exist_ok=True)
    with open(os.path.join(syn_dir, "shop_synonyms.txt"), "w") as f:
        f.write("# shop synonyms\nnotebook, laptop\nsofa => couch\n")
    st, _, b = server.request("PUT", "/" + name, {
        "settings": {"number_of_shards": 1, "analysis": {
            "analyzer": {
                "autocomplete": {"tokenizer": "ac", "filter": ["lowercase"]},
                "syn_search": {"tokenizer": "standard", "filter": ["lowercase", "shop_syn"]},
                "fr": {"tokenizer": "standard", "filter": ["lowercase", "fr_stem"],
                       "char_filter": ["amp"]}},
            "tokenizer": {"ac": {"type": "edge_ngram", "min_gram": 1, "max_gram": 10,
                                 "token_chars": ["letter", "digit"]}},
            "filter": {"shop_syn": {"type": "synonym_graph",
                                    "synonyms_path": "analysis/shop_synonyms.txt",
                                    "updateable": True},
                       "fr_stem": {"type": "stemmer", "language": "french"}},
            "char_filter": {"amp": {"type": "mapping", "mappings": ["& => et"]}}}},
        "mappings": {"properties": {
            "title": {"type": "text", "analyzer": "autocomplete",
                      "search_analyzer": "standard"},
            "body": {"type": "text", "search_analyzer": "syn_search"},
            "fr": {"type": "text", "analyzer": "fr"}}}})
    assert st == 200, b
    docs = [{"title": "Gaming Laptop 15", "body": "a fast laptop", "fr": "les chevaux"},
            {"title": "Couch cover", "body": "covers a couch", "fr": "un cheval & une pomme"},
            {"title": "Lamp", "body": "a notebook lamp", "fr": "des pommes"}]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(name, docs))
    assert st == 200 and not b["errors"], b
    yield name
    server.request("DELETE", "/" + name)


def hit_titles(server, index, query):
    st, _, b = server.request("POST", "/%s/_search" % index, {"query": query})
    assert st == 200, b
    return sorted(h["_source"]["title"] for h in b["hits"]["hits"])


def test_search_as_you_type_edge_ngram(server, pages):
    assert hit_titles(server, pages, {"match": {"title": "lap"}}) == ["Gaming Laptop 15"]
    assert hit_titles(server, pages, {"match": {"title": "co"}}) == ["Couch cover"]
    assert hit_titles(server, pages, {"match": {"title": "1"}}) == ["Gaming Laptop 15"]
    b = analyze(server, {"field": "title", "text": "Lamp"}, pages)
    assert [t["token"] for t in b["tokens"]] == ["l", "la", "lam", "lamp"]


def test_search_synonyms_from_file(server, pages):
    assert hit_titles(server, pages, {"match": {"body": "notebook"}}) == [
        "Gaming Laptop 15", "Lamp"]
    assert hit_titles(server, pages, {"match": {"body": "sofa"}}) == ["Couch cover"]
    b = analyze(server, {"analyzer": "syn_search", "text": "laptop"}, pages)
    assert [(t["token"], t["type"]) for t in b["tokens"]] == [
        ("notebook", "SYNONYM"), ("laptop", "<ALPHANUM>")]


def test_french_stemmer_and_char_filter(server, pages):
    assert hit_titles(server, pages, {"match": {"fr": "pomme"}}) == ["Couch cover", "Lamp"]
    b = analyze(server, {"field": "fr", "text": "cheval & pommes"}, pages)
    assert [t["token"] for t in b["tokens"]] == ["cheval", "et", "pomm"]


def test_reload_search_analyzers(server, pages):
    path = os.path.join(server.data_dir, "analysis", "shop_synonyms.txt")
    assert hit_titles(server, pages, {"match": {"body": "lamp"}}) == ["Lamp"]
    assert hit_titles(server, pages, {"match": {"body": "light"}}) == []
    with open(path, "w") as f:
        f.write("notebook, laptop\nsofa => couch\nlight => lamp\n")
    # not re-read until the reload
    assert hit_titles(server, pages, {"match": {"body": "light"}}) == []
    st, _, b = server.request("POST", "/%s/_reload_search_analyzers" % pages)
    assert st == 200, b
    assert b["_shards"]["failed"] == 0
    assert b["reload_details"][0]["index"] == pages
    assert b["reload_details"][0]["reloaded_analyzers"] == ["syn_search"]
    assert hit_titles(server, pages, {"match": {"body": "light"}}) == ["Lamp"]
    # a file that no longer parses: 400, and the analyzers in use stay
    with open(path, "w") as f:
        f.write("light =>\n")
    st, _, b = server.request("POST", "/%s/_reload_search_analyzers" % pages)
    assert_error(b, 400, "illegal_argument_exception")
    assert hit_titles(server, pages, {"match": {"body": "light"}}) == ["Lamp"]
    st, _, b = server.request("POST", "/no-such-index-xyz/_reload_search_analyzers")
    assert_error(b, 404, "index_not_found_exception")


def test_language_analyzers(server, fresh_index):
    """The Snowball-stemmed language analyzers (stop words read from Lucene's jar at build
    time), by name in _analyze and in a mapping, with stopwords / stem_exclusion."""
    def terms(b):
        return [t[0] for t in toks(b)]

    b = analyze(server, {"analyzer": "russian", "text": "Мы читали интересные книги"})
    assert toks(b)[0][1:] == (3, 9, 1)  # "мы" is a Russian stop word: a hole at position 0
    assert terms(b) == ["чита", "интересн", "книг"]
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"analysis": {"analyzer": {
            "sv_keep": {"type": "swedish", "stem_exclusion": ["tidningarna"]},
            "sv_nostop": {"type": "swedish", "stopwords": "_none_"}},
            "filter": {"de_stop": {"type": "stop", "stopwords": "_german_"}}}},
        "mappings": {"properties": {"t": {"type": "text", "analyzer": "swedish"}}}})
    assert st == 200, b
    assert terms(analyze(server, {"analyzer": "sv_keep", "text": "läste tidningarna och"},
                        fresh_index)) == ["läst", "tidningarna"]
    assert terms(analyze(server, {"analyzer": "sv_nostop", "text": "läste tidningarna och"},
                        fresh_index)) == ["läst", "tidning", "och"]
    assert terms(analyze(server, {"tokenizer": "standard", "filter": ["lowercase", "de_stop"],
                                 "text": "Die Kinder und die Eltern"}, fresh_index)) == [
        "kinder", "eltern"]
    st, _, b = server.request("PUT", "/%s/_doc/1?refresh=true" % fresh_index,
                              {"t": "Barnen lekte i trädgårdarna"})
    assert st in (200, 201), b
    st, _, b = server.request("POST", "/%s/_search" % fresh_index,
                              {"query": {"match": {"t": "trädgården"}}})
    assert st == 200 and b["hits"]["total"]["value"] == 1, b
    for bad in ({"type": "swedish", "stopwords": "_klingon_"},
                {"type": "swedish", "stem_exclusion": [1]}, {"type": "cjk"}):
        st, _, b = server.request("PUT", "/x-" + fresh_index, {
            "settings": {"analysis": {"analyzer": {"a": bad}}}})
        assert st == 400, (bad, b)
