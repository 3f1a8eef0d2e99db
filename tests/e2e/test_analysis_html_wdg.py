"""Analysis over HTTP (issue 14, last items): the html_strip char filter and the
word_delimiter_graph filter, in _analyze and through a mapping (indexing, search, highlight
offsets mapped back into the HTML). Tokens are Lucene 8.7's (the chain oracle checks the same
chains token for token); offsets are UTF-16 units as Elasticsearch reports them."""
from conftest import assert_error, bulk_body


def analyze(server, body, index=None):
    st, _, b = server.request("POST", ("/%s/_analyze" % index) if index else "/_analyze", body)
    assert st == 200, b
    return b


def toks(b):
    return [(t["token"], t["start_offset"], t["end_offset"], t["position"]) for t in b["tokens"]]


def test_html_strip_analyze(server):
    html = "<p>Caf&eacute; <b>bold</b></p><script>var x = 1;</script>&#x1F600; x&lt;y"
    b = analyze(server, {"tokenizer": "whitespace", "char_filter": ["html_strip"], "text": html})
    # block tags and script leave a newline, inline tags nothing; entities decoded; the
    # offsets of "Café" cover the entity, the end of "bold" the end tag after it (Lucene)
    assert toks(b) == [("Café", 3, 14, 0), ("bold", 18, 26, 1), ("😀", 57, 66, 2),
                       ("x<y", 67, 73, 3)]
    b = analyze(server, {"tokenizer": "whitespace",
                         "char_filter": [{"type": "html_strip", "escaped_tags": ["b"]}],
                         "text": "<div><b>kept</b></div>"})
    assert [t["token"] for t in b["tokens"]] == ["<b>kept</b>"]
    b = analyze(server, {"tokenizer": "standard", "char_filter": ["html_strip"],
                         "explain": True, "text": "<i>a</i><br>b<!-- c -->"})
    assert b["detail"]["charfilters"][0]["filtered_text"] == ["a\nb"]


def test_html_strip_index_search_highlight(server, fresh_index):
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 1, "analysis": {"analyzer": {"html": {
            "tokenizer": "standard", "char_filter": ["html_strip"], "filter": ["lowercase"]}}}},
        "mappings": {"properties": {"body": {"type": "text", "analyzer": "html"}}}})
    assert st == 200, b
    docs = [{"body": "<h1>Fish &amp; Chips</h1><p>The <em>best</em> fish in town</p>"},
            {"body": "<style>p { color: red }</style><p>Red herring</p>"}]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs))
    assert st == 200 and not b["errors"], b
    def search(q):
        st, _, b = server.request("POST", "/%s/_search" % fresh_index, {
            "query": {"match": {"body": q}}, "highlight": {"fields": {"body": {}}}})
        assert st == 200, b
        return b["hits"]["hits"]
    hits = search("best")
    assert [h["_id"] for h in hits] == ["0"]
    # the highlighter's offsets point into the original HTML
    assert hits[0]["highlight"]["body"] == [
        "<h1>Fish &amp; Chips</h1><p>The <em><em>best</em></em> fish in town</p>"]
    assert search("color") == []  # style bodies are not indexed
    assert search("em") == [] and search("amp") == []  # nor tag names or entity names
    assert [h["_id"] for h in search("herring")] == ["1"]


def test_word_delimiter_graph_analyze(server):
    b = analyze(server, {"tokenizer": "whitespace", "filter": ["word_delimiter_graph"],
                         "text": "Wi-Fi PowerShot500 O'Neil's"})
    assert toks(b) == [("Wi", 0, 2, 0), ("Fi", 3, 5, 1), ("Power", 6, 11, 2),
                       ("Shot", 11, 15, 3), ("500", 15, 18, 4), ("O", 19, 20, 5),
                       ("Neil", 21, 25, 6)]
    b = analyze(server, {"tokenizer": "whitespace", "filter": [
        {"type": "word_delimiter_graph", "catenate_words": True, "preserve_original": True,
         "protected_words": ["AT&T"]}], "text": "AT&T wi-fi x"})
    # the original and the concatenation span both parts (positions 1-2)
    assert toks(b) == [("AT&T", 0, 4, 0), ("wi-fi", 5, 10, 1), ("wifi", 5, 10, 1),
                       ("wi", 5, 7, 1), ("fi", 8, 10, 2), ("x", 11, 12, 3)]


def test_word_delimiter_graph_search(server, fresh_index):
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 1, "analysis": {
            "analyzer": {"parts": {"tokenizer": "whitespace", "filter": ["wd", "lowercase"]}},
            "filter": {"wd": {"type": "word_delimiter_graph", "catenate_words": True}}}},
        "mappings": {"properties": {"name": {"type": "text", "analyzer": "parts"}}}})
    assert st == 200, b
    docs = [{"name": "Wi-Fi PowerShot adapter"}, {"name": "wifi-router SD500"}]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs))
    assert st == 200 and not b["errors"], b
    def ids(q):
        st, _, b = server.request("POST", "/%s/_search" % fresh_index, {"query": q})
        assert st == 200, b
        return sorted(h["_id"] for h in b["hits"]["hits"])
    assert ids({"match": {"name": "wifi"}}) == ["0", "1"]
    assert ids({"match": {"name": "shot"}}) == ["0"]
    assert ids({"match": {"name": "sd"}}) == ["1"]
    assert ids({"match_phrase": {"name": "power shot adapter"}}) == ["0"]


def test_analysis_errors(server, fresh_index):
    st, _, b = server.request("POST", "/_analyze", {
        "tokenizer": "whitespace", "text": "x",
        "filter": [{"type": "word_delimiter_graph", "type_table": ["$ => DIGIT"]}]})
    assert_error(b, 400, "illegal_argument_exception")
    assert "type_table" in b["error"]["reason"]
    st, _, b = server.request("POST", "/_analyze", {
        "tokenizer": "whitespace", "text": "x",
        "filter": [{"type": "word_delimiter_graph", "catenate_words": "yes"}]})
    assert_error(b, 400, "illegal_argument_exception")
    st, _, b = server.request("PUT", "/" + fresh_index, {"settings": {"analysis": {
        "analyzer": {"a": {"tokenizer": "standard", "char_filter": ["h"]}},
        "char_filter": {"h": {"type": "html_strip", "escaped_tags": [1]}}}}})
    assert_error(b, 400, "illegal_argument_exception")
    assert "escaped_tags" in b["error"]["reason"]


def test_light_stemmer_language_analyzers(server, fresh_index):
    """german, french, spanish, italian, portuguese: Lucene's analyzers with their light
    stemmers, German normalization and elision (the oracle checks 10,000 dictionary words)."""
    def terms(body, index=None):
        return [t["token"] for t in analyze(server, body, index)["tokens"]]
    assert terms({"analyzer": "german", "text": "Die Häuser der Straße"}) == ["haus", "strass"]
    assert terms({"analyzer": "french", "text": "L'école et les nationalisations"}) == [
        "ecol", "national"]
    assert terms({"analyzer": "italian", "text": "Dell'arte e gl'interessi"}) == [
        "arte", "interess"]
    assert terms({"analyzer": "spanish", "text": "Las luces de las ciudades"}) == [
        "luz", "ciudad"]
    assert terms({"analyzer": "portuguese", "text": "As canções nacionais"}) == [
        "canca", "nacional"]
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 1, "analysis": {
            "analyzer": {"de_keep": {"type": "german", "stem_exclusion": ["häuser"]},
                         "fr_none": {"type": "french", "stopwords": "_none_"},
                         "chain": {"tokenizer": "standard",
                                   "filter": ["el", "lowercase", "german_normalization", "lf"]}},
            "filter": {"el": {"type": "elision", "articles": ["l", "d"], "articles_case": True},
                       "lf": {"type": "stemmer", "language": "light_french"}}}},
        "mappings": {"properties": {"de": {"type": "text", "analyzer": "german"},
                                    "fr": {"type": "text", "analyzer": "french"}}}})
    assert st == 200, b
    # stem_exclusion keeps the word from the stemmer, not from German normalization (Lucene)
    assert terms({"analyzer": "de_keep", "text": "Häuser Straßen"}, fresh_index) == [
        "hauser", "strass"]
    assert terms({"analyzer": "fr_none", "text": "les chevaux"}, fresh_index) == [
        "les", "cheval"]
    assert terms({"analyzer": "chain", "text": "L'Éducation D'œufs"}, fresh_index) == [
        "éduc", "œuf"]
    docs = [{"de": "Die schönen Häuser am See", "fr": "L'histoire des chevaux"},
            {"de": "Ein Haus", "fr": "Un cheval blanc"}]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs))
    assert st == 200 and not b["errors"], b
    def ids(q):
        st, _, b = server.request("POST", "/%s/_search" % fresh_index, {"query": q})
        assert st == 200, b
        return sorted(h["_id"] for h in b["hits"]["hits"])
    assert ids({"match": {"de": "haus"}}) == ["0", "1"]
    assert ids({"match": {"fr": "cheval"}}) == ["0", "1"]
    assert ids({"match": {"fr": "histoires"}}) == ["0"]
    st, _, b = server.request("POST", "/_analyze", {"tokenizer": "standard", "text": "x",
                                                   "filter": [{"type": "elision",
                                                               "articles_path": "a.txt"}]})
    assert_error(b, 400, "illegal_argument_exception")
    assert "articles_path" in b["error"]["reason"]


def test_dutch_and_stemmer_override(server):
    def terms(body):
        return [t["token"] for t in analyze(server, body)["tokens"]]
    # DutchAnalyzer's own overrides (fiets, bromfiets, ei -> eier, kind -> kinder) before
    # the Snowball stemmer
    assert terms({"analyzer": "dutch", "text": "De fiets van het kind en een ei"}) == [
        "fiets", "kinder", "eier"]
    assert terms({"tokenizer": "whitespace", "filter": [
        "lowercase", {"type": "stemmer_override", "rules": ["running, runs => run", "mice => mouse"]},
        "porter_stem"], "text": "Running runs mice jumping"}) == ["run", "run", "mouse", "jump"]
    st, _, b = server.request("POST", "/_analyze", {"tokenizer": "standard", "text": "x",
                                                   "filter": [{"type": "stemmer_override",
                                                               "rules": ["no arrow"]}]})
    assert_error(b, 400, "illegal_argument_exception")
    assert "rules[0]" in b["error"]["reason"]


def test_legacy_word_delimiter(server):
    # the legacy filter stacks a concatenation on its first part and keeps the parts'
    # positions (Lucene WordDelimiterFilter), where the graph filter spans them
    b = analyze(server, {"tokenizer": "whitespace", "filter": [
        {"type": "word_delimiter", "catenate_words": True}], "text": "Wi-Fi x"})
    assert toks(b) == [("Wi", 0, 2, 0), ("WiFi", 0, 5, 0), ("Fi", 3, 5, 1), ("x", 6, 7, 2)]
