"""The phrase suggester's simple form over HTTP: corrections of one or more words from the
field's term dictionary, ranked by the noisy channel and the stupid-backoff language model over
a shingle field (bigram doc frequencies) or unigrams; suggest_mode, max_errors, confidence,
size, highlight; bad options as 400s."""
import pytest

from conftest import bulk_body


@pytest.fixture(scope="module")
def idx(server):
    ix = "phrase-suggest"
    server.request("DELETE", "/" + ix)
    st, _, b = server.request("PUT", "/" + ix, {
        "settings": {"number_of_shards": 2, "analysis": {
            "analyzer": {"sh": {"tokenizer": "standard", "filter": ["lowercase", "s2"]}},
            "filter": {"s2": {"type": "shingle", "min_shingle_size": 2, "max_shingle_size": 2}}}},
        "mappings": {"properties": {"title": {
            "type": "text", "fields": {"sh": {"type": "text", "analyzer": "sh"}}}}}})
    assert st == 200, b
    titles = (["nobel prize winners"] * 6 + ["the nobel prize in physics"] * 4 +
              ["a noble gesture"] * 3 + ["noble gases and prize money"] * 1 +
              ["quick brown fox"] * 5 + ["brown bear"] * 2)
    docs = [{"title": t} for t in titles]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(ix, docs))
    assert st == 200 and not b["errors"], b
    yield ix
    server.request("DELETE", "/" + ix)


def suggest(server, ix, text, **phrase):
    body = {"size": 0, "suggest": {"s": {"text": text, "phrase": phrase}}}
    st, _, b = server.request("POST", "/%s/_search" % ix, body)
    assert st == 200, b
    (entry,) = b["suggest"]["s"]
    assert entry["text"] == text and entry["offset"] == 0 and entry["length"] == len(text)
    return entry["options"]


def test_real_word_error_fixed_with_bigrams(server, idx):
    opts = suggest(server, idx, "noble prize", field="title.sh",
                   direct_generator=[{"field": "title.sh", "suggest_mode": "always"}],
                   highlight={"pre_tag": "<em>", "post_tag": "</em>"})
    assert opts and opts[0]["text"] == "nobel prize", opts
    assert opts[0]["highlighted"] == "<em>nobel</em> prize"
    assert all(o["score"] > 0 for o in opts)
    assert [o["score"] for o in opts] == sorted((o["score"] for o in opts), reverse=True)
    # unigrams only: "noble" is a frequent word too, but the bigram model prefers the phrase
    uni = suggest(server, idx, "noble prize", field="title.sh", gram_size=1, confidence=0,
                  direct_generator=[{"field": "title.sh", "suggest_mode": "always"}])
    assert "nobel prize" in [o["text"] for o in uni]


def test_missing_words_and_max_errors(server, idx):
    opts = suggest(server, idx, "nobl prize", field="title.sh")  # default mode: missing
    assert opts[0]["text"] == "nobel prize", opts
    two = suggest(server, idx, "quikc browm fox", field="title.sh", max_errors=2)
    assert two[0]["text"] == "quick brown fox", two
    one = suggest(server, idx, "quikc browm fox", field="title.sh", max_errors=1)
    assert "quick brown fox" not in [o["text"] for o in one]
    assert all(sum(a != b for a, b in zip(o["text"].split(), "quikc browm fox".split())) == 1
               for o in one)
    frac = suggest(server, idx, "quikc browm fox", field="title.sh", max_errors=0.5)
    assert frac[0]["text"] == "quick brown fox"  # ceil(0.5 * 3 words) = 2
    assert len(suggest(server, idx, "quikc browm fox", field="title.sh", max_errors=2,
                       size=1)) == 1


def test_confidence_and_correct_input(server, idx):
    assert suggest(server, idx, "nobel prize", field="title.sh",
                   direct_generator=[{"field": "title.sh", "suggest_mode": "always"}]) == []
    low = suggest(server, idx, "nobel prize", field="title.sh", confidence=0,
                  direct_generator=[{"field": "title.sh", "suggest_mode": "always"}])
    assert low and all(o["text"] != "nobel prize" for o in low)


@pytest.mark.parametrize("phrase", [
    {},
    {"field": "title.sh", "collate": {"query": {"source": {}}}},
    {"field": "title.sh", "smoothing": {"laplace": {"alpha": 0.5}}},
    {"field": "title.sh", "gram_size": 3},
    {"field": "title.sh", "size": 0},
    {"field": "title.sh", "direct_generator": [{"field": "title", "suggest_mode": "always"}]},
    {"field": "title.sh", "direct_generator": [{"field": "title.sh", "suggest_mode": "x"}]},
    {"field": "title.sh", "highlight": {"pre_tag": "<b>"}},
    {"field": "title.sh", "separator": "_"},
])
def test_bad_options(server, idx, phrase):
    st, _, b = server.request("POST", "/%s/_search" % idx, {
        "suggest": {"s": {"text": "noble prize", "phrase": phrase}}})
    assert st == 400, (phrase, b)
