"""Analysis over HTTP (issue 14): the language analyzers Lucene 8.7 builds with its own
normalizers and stemmers (arabic, hindi, indonesian, persian) and their filters by
Elasticsearch's names (arabic_normalization, persian_normalization, indic_normalization,
hindi_normalization, serbian_normalization, decimal_digit, arabic_stem, stemmer
arabic/hindi/indonesian/serbian), in _analyze and through a mapping. The expected tokens are
Lucene's (tests/oracle/analysis checks the same chains token for token)."""
from conftest import assert_error, bulk_body


def terms(server, body, index=None):
    st, _, b = server.request("POST", ("/%s/_analyze" % index) if index else "/_analyze", body)
    assert st == 200, b
    return [t["token"] for t in b["tokens"]]


def test_arabic_analyzer(server):
    # prefixes al/wal/bal; suffixes; hamza alef and teh marbuta normalized; Arabic-Indic digits
    # folded; "في" is a stop word; diacritics and tatweel removed
    got = terms(server, {"analyzer": "arabic",
                         "text": "الكتاب والكتب بالقلم المعلمات مدرسة أحمد في ٢٠٢٤ مُدَرِّسَةٌ ـكتـاب"})
    assert got == ["كتاب", "كتب", "قلم", "معلم", "مدرس", "احمد", "2024", "مدرس", "كتاب"]


def test_hindi_indonesian_persian_analyzers(server):
    assert terms(server, {"analyzer": "hindi", "text": "लड़कियाँ किताबें २०२४ में"}) == [
        "लडक", "किताब", "2024"]
    assert terms(server, {"analyzer": "indonesian",
                          "text": "Pembangunan itu dilakukan, menyapu bukunya"}) == [
        "bangun", "laku", "sapu", "buku"]
    # the zero-width non-joiner splits words (PersianCharFilter) and "ها" is then a stop word;
    # keheh -> kaf, farsi yeh -> yeh; offsets stay those of the original text
    st, _, b = server.request("POST", "/_analyze", {"analyzer": "persian",
                                                    "text": "کتاب‌ها کیک ۱۳۹۹"})
    assert st == 200, b
    assert [(t["token"], t["start_offset"], t["end_offset"], t["position"])
            for t in b["tokens"]] == [("كتاب", 0, 4, 0), ("كيك", 8, 11, 2), ("1399", 12, 16, 3)]


def test_filters_by_name(server):
    assert terms(server, {"tokenizer": "standard",
                          "filter": ["lowercase", "serbian_normalization"],
                          "text": "Љубав Ђорђе Џон čovek đak"}) == [
        "ljubav", "djordje", "dzon", "covek", "djak"]
    assert terms(server, {"tokenizer": "whitespace",
                          "filter": ["decimal_digit", "arabic_normalization", "arabic_stem"],
                          "text": "١٢٣ والكتب"}) == ["123", "كتب"]
    assert terms(server, {"tokenizer": "standard",
                          "filter": ["indic_normalization", "hindi_normalization",
                                     {"type": "stemmer", "language": "hindi"}],
                          "text": "किताबें क़लम"}) == ["किताब", "कलम"]
    assert terms(server, {"tokenizer": "standard",
                          "filter": ["persian_normalization"], "text": "کیک"}) == ["كيك"]
    assert terms(server, {"tokenizer": "standard",
                          "filter": [{"type": "stemmer", "language": "indonesian"}],
                          "text": "pengetahuan pentahuan"}) == ["etahu", "tahu"]
    # Serbian Snowball (libstemmer; Lucene 8.7 has no Serbian stemmer to compare with)
    got = terms(server, {"tokenizer": "standard",
                         "filter": ["lowercase", {"type": "stemmer", "language": "serbian"}],
                         "text": "knjigama"})
    assert len(got) == 1 and got[0] != "knjigama" and "knjig".startswith(got[0][:4])
    st, _, b = server.request("POST", "/_analyze", {
        "tokenizer": "standard", "filter": [{"type": "stemmer", "language": "klingon"}],
        "text": "x"})
    assert_error(b, 400, "illegal_argument_exception")
    assert st == 400


def test_arabic_index_and_search(server, fresh_index):
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 1, "analysis": {"analyzer": {"ar": {
            "type": "arabic", "stem_exclusion": ["المعلمات"]}}}},
        "mappings": {"properties": {"body": {"type": "text", "analyzer": "ar"},
                                    "hi": {"type": "text", "analyzer": "hindi"}}}})
    assert st == 200, b
    docs = [{"body": "والكتب الجديدة", "hi": "लड़कियाँ पढ़ रही हैं"},
            {"body": "المعلمات في المدرسة", "hi": "किताबें"}]
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(fresh_index, docs))
    assert st == 200 and not b["errors"], b

    def ids(field, q):
        st, _, b = server.request("POST", "/%s/_search" % fresh_index,
                                  {"query": {"match": {field: q}}})
        assert st == 200, b
        return sorted(h["_id"] for h in b["hits"]["hits"])
    assert ids("body", "بالكتب") == ["0"]      # bi-al- + kutub: the doc's wa-al-kutub
    assert ids("body", "كتب") == ["0"]
    assert ids("body", "الكتاب") == []         # kitab (singular) is another stem
    assert ids("body", "مدرسة") == ["1"]
    assert ids("body", "المعلمات") == ["1"]   # excluded from stemming on both sides
    assert ids("body", "معلم") == []
    assert ids("hi", "लड़की") == ["0"]
    assert ids("hi", "किताब") == ["1"]


def test_bulgarian(server, fresh_index):
    # Savoy's light stemmer: articles (-те, -ът), plurals (-ове), final vowels; "в", "на" stop
    got = terms(server, {"analyzer": "bulgarian",
                         "text": "Учителите в градовете четат книгите, човекът"})
    assert got == ["учитял", "град", "четат", "книг", "човек"]
    assert terms(server, {"tokenizer": "standard",
                          "filter": ["lowercase", {"type": "stemmer", "language": "bulgarian"}],
                          "text": "Приятелите"}) == ["приятял"]
    st, _, b = server.request("PUT", "/" + fresh_index, {"settings": {"analysis": {"analyzer": {
        "bg": {"type": "bulgarian", "stem_exclusion": ["градовете"]}}}}})
    assert st == 200, b
    assert terms(server, {"analyzer": "bg", "text": "градовете книгите"}, fresh_index) == [
        "градовете", "книг"]


def test_czech(server):
    # case endings, then the final consonant normalization (muži -> muž -> muh, stůl -> stol)
    assert terms(server, {"analyzer": "czech",
                          "text": "Ve městech žijí lidé se ženami a muži; stůl v domě"}) == [
        "měst", "žij", "lid", "žn", "muh", "stol", "dom"]
    assert terms(server, {"tokenizer": "standard",
                          "filter": ["lowercase", {"type": "stemmer", "language": "czech"}],
                          "text": "Pánové"}) == ["pán"]


def test_latvian(server):
    # noun and adjective endings; palatalization undone after -u (suņu -> sun), -i, -a ...
    assert terms(server, {"analyzer": "latvian",
                          "text": "Mājās pie galdiem sēž lieli zirgi un lāči; suņu akmeņu"}) == [
        "māj", "gald", "sēž", "liel", "zirg", "lāc", "sun", "akmen"]
    assert terms(server, {"tokenizer": "standard",
                          "filter": ["lowercase", {"type": "stemmer", "language": "latvian"}],
                          "text": "Dziesmas"}) == ["dziesm"]


def test_greek(server, fresh_index):
    # GreekLowerCaseFilter (accents and final sigma folded), Greek stop words, Ntais' stemmer
    text = "Οι άνθρωποι της πόλης, ΆΝΘΡΩΠΟΣ, μαμάδες, ψαράδες, ωραιότερος"
    assert terms(server, {"analyzer": "greek", "text": text}) == [
        "ανθρωπ", "πολ", "ανθρωπ", "μαμ", "ψαραδ", "ωραι"]
    assert terms(server, {"tokenizer": "standard",
                          "filter": [{"type": "lowercase", "language": "greek"},
                                     {"type": "stemmer", "language": "greek"}],
                          "text": "Της ΠΌΛΗΣ"}) == ["τησ", "πολ"]
    st, _, b = server.request("POST", "/_analyze", {
        "tokenizer": "standard", "filter": [{"type": "lowercase", "language": "turkish"}],
        "text": "x"})
    assert st == 400
    assert_error(b, 400, "illegal_argument_exception")
    st, _, b = server.request("PUT", "/" + fresh_index, {
        "settings": {"number_of_shards": 1},
        "mappings": {"properties": {"body": {"type": "text", "analyzer": "greek"}}}})
    assert st == 200, b
    st, _, b = server.request("POST", "/_bulk?refresh=true", bulk_body(
        fresh_index, [{"body": "Οι άνθρωποι της πόλης"}, {"body": "η θάλασσα"}]))
    assert st == 200 and not b["errors"], b
    st, _, b = server.request("POST", "/%s/_search" % fresh_index,
                              {"query": {"match": {"body": "ΑΝΘΡΩΠΟΣ"}}})
    assert st == 200 and [h["_id"] for h in b["hits"]["hits"]] == ["0"], b
