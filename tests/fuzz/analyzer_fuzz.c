/* libFuzzer target for src/text: feeds arbitrary bytes (invalid UTF-8 included) to every
 * built-in analyzer and to a custom chain using every filter, and checks the invariants the
 * index relies on: offsets inside the input and ordered, positions non-decreasing, terms valid
 * UTF-8 and non-empty except for keyword, and the ASCII fast path equal to the general path.
 * Inputs that parse as a JSON object are also tried as `analysis` settings: building the
 * registry must succeed or fail cleanly, and every analyzer it names must run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/analyzer.h"
#include "text/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sc_analyzer_registry *registry;

typedef struct check {
    size_t len;
    uint32_t last_pos;
    size_t n;
    bool keyword;
} check;

static bool valid_utf8(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t p = i;
        uint32_t cp = sc__utf8_next(s, n, &i);
        if (cp == 0xFFFD && !(i - p == 3 && s[p] == 0xEF && s[p + 1] == 0xBF && s[p + 2] == 0xBD))
            return false;
    }
    return true;
}

static sc_status sink(void *ctx, const sc_token *t)
{
    check *c = ctx;
    if (t->start_offset > t->end_offset || t->end_offset > c->len)
        abort();
    if (c->n > 0 && t->position < c->last_pos)
        abort();
    if (!valid_utf8(t->term, t->len))
        abort();
    if (t->len == 0 && !c->keyword)
        abort();
    c->last_pos = t->position;
    c->n++;
    return SC_OK;
}

typedef struct raw {
    size_t n;
    size_t h;
} raw;

static sc_status raw_sink(void *ctx, size_t start, size_t end, bool valid, sc_token_type type)
{
    raw *r = ctx;
    (void)valid;
    r->n++;
    r->h = r->h * 31 + start * 7 + end + (size_t)type * 1000003u;
    return SC_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!registry) {
        const char *settings =
            "{\"analyzer\": {\"all\": {\"tokenizer\": \"standard\", \"filter\": [\"asciifolding\","
            " \"lowercase\", \"s\", \"porter_stem\", \"m\", \"p\"]},"
            " \"lw\": {\"tokenizer\": \"lowercase\", \"filter\": [\"porter_stem\"]},"
            " \"short\": {\"type\": \"standard\", \"max_token_length\": 2},"
            " \"cf\": {\"tokenizer\": \"standard\", \"char_filter\": [\"mp\", \"pr\"],"
            " \"filter\": [\"lowercase\", \"stop\", \"shingle\", \"unique\"]},"
            " \"grams\": {\"tokenizer\": \"eg\", \"filter\": [\"ng\", \"trim\"]},"
            " \"grams2\": {\"tokenizer\": \"ng\", \"filter\": [\"eng\", \"len\", \"tr\"]},"
            " \"syn\": {\"tokenizer\": \"whitespace\", \"filter\": [\"lowercase\", \"km\", "
            "\"sg\", \"sy\", \"sb\", \"porter_stem\"]},"
            " \"html\": {\"tokenizer\": \"standard\", \"char_filter\": [\"html_strip\", \"he\", "
            "\"mp\"], \"filter\": [\"wdg\"]},"
            " \"wd\": {\"tokenizer\": \"whitespace\", \"filter\": [\"wdg\", \"wdn\", "
            "\"shingle\"]},"
            " \"wdl\": {\"tokenizer\": \"whitespace\", \"filter\": [\"wdo\", \"el\", "
            "\"german_normalization\", \"so\", \"lf\"]},"
            " \"lang\": {\"tokenizer\": \"whitespace\", \"filter\": [\"decimal_digit\", "
            "\"arabic_normalization\", \"persian_normalization\", \"indic_normalization\", "
            "\"hindi_normalization\", \"serbian_normalization\", \"arabic_stem\", \"sh\", "
            "\"si\", \"km\", \"sr\"]}},"
            " \"char_filter\": {\"mp\": {\"type\": \"mapping\", \"mappings\": [\"a => xyz\", "
            "\"bc => \", \"\\\\u00e9 => e\", \"\xf0\x9f\x98\x80 => smile\"]},"
            " \"pr\": {\"type\": \"pattern_replace\", \"pattern\": \"(\\\\d)(\\\\d)\", "
            "\"replacement\": \"$2-$1$1\"},"
            " \"he\": {\"type\": \"html_strip\", \"escaped_tags\": [\"b\", \"script\", "
            "\"br\"]}},"
            " \"tokenizer\": {\"eg\": {\"type\": \"edge_ngram\", \"min_gram\": 1, "
            "\"max_gram\": 5, \"token_chars\": [\"letter\", \"digit\"]},"
            " \"ng\": {\"type\": \"ngram\", \"min_gram\": 1, \"max_gram\": 3}},"
            " \"filter\": {\"s\": {\"type\": \"stop\", \"stopwords\": [\"a\", "
            "\"\xc3\xa9t\xc3\xa9\"],"
            " \"ignore_case\": true}, \"m\": {\"type\": \"stemmer\", \"language\": "
            "\"minimal_english\"}, \"p\": {\"type\": \"stemmer\", \"language\": "
            "\"possessive_english\"},"
            " \"ng\": {\"type\": \"ngram\", \"min_gram\": 2, \"max_gram\": 3, "
            "\"preserve_original\": true},"
            " \"eng\": {\"type\": \"edge_ngram\", \"min_gram\": 1, \"max_gram\": 2},"
            " \"len\": {\"type\": \"length\", \"min\": 2},"
            " \"tr\": {\"type\": \"truncate\", \"length\": 1},"
            " \"km\": {\"type\": \"keyword_marker\", \"keywords\": [\"running\"]},"
            " \"sb\": {\"type\": \"snowball\", \"language\": \"German\"},"
            " \"sg\": {\"type\": \"synonym_graph\", \"synonyms\": [\"a, b c d\", "
            "\"x y => z\", \"q => r s, t\"]},"
            " \"sy\": {\"type\": \"synonym\", \"synonyms\": [\"r, s t\"]},"
            " \"wdg\": {\"type\": \"word_delimiter_graph\", \"catenate_all\": true, "
            "\"catenate_words\": true, \"catenate_numbers\": true, \"preserve_original\": true, "
            "\"protected_words\": [\"a-b\"]},"
            " \"wdn\": {\"type\": \"word_delimiter_graph\", \"generate_word_parts\": false, "
            "\"split_on_numerics\": false, \"adjust_offsets\": false},"
            " \"wdo\": {\"type\": \"word_delimiter\", \"catenate_all\": true, "
            "\"catenate_words\": true, \"preserve_original\": true},"
            " \"el\": {\"type\": \"elision\", \"articles\": [\"l\", \"qu\"]},"
            " \"so\": {\"type\": \"stemmer_override\", \"rules\": [\"a, bb => \\u00dfxyz\"]},"
            " \"lf\": {\"type\": \"stemmer\", \"language\": \"light_french\"},"
            " \"sh\": {\"type\": \"stemmer\", \"language\": \"hindi\"},"
            " \"si\": {\"type\": \"stemmer\", \"language\": \"indonesian\"},"
            " \"sr\": {\"type\": \"stemmer\", \"language\": \"serbian\"}}}";
        json_error_t jerr;
        json_t *j = json_loads(settings, 0, &jerr);
        if (!j || sc_analyzer_registry_new(j, &registry, NULL) != SC_OK)
            abort();
        json_decref(j);
    }
    static const char *const names[] = {"standard",    "simple",
                                        "whitespace",  "keyword",
                                        "stop",        "english",
                                        "all",         "lw",
                                        "short",       "cf",
                                        "grams",       "grams2",
                                        "syn",         "standard#3gram",
                                        "all#prefix4", "english#2gram",
                                        "html",        "wd",
                                        "wdl",         "german",
                                        "french",      "spanish",
                                        "italian",     "portuguese",
                                        "dutch",       "lang",
                                        "arabic",      "hindi",
                                        "indonesian",  "persian",
                                        "greek",       "bulgarian",
                                        "czech",       "latvian"};
    sc_slice text = sc_slice_make(data, size);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const sc_analyzer *a = sc_analyzer_registry_get(registry, sc_slice_cstr(names[i]));
        check c = {size, 0, 0, strcmp(names[i], "keyword") == 0 || i >= 9};
        if (sc_analyzer_analyze(a, text, sink, &c) != SC_OK)
            abort();
    }
    if (size > 0 && data[0] == '{') {
        json_error_t jerr;
        json_t *j = json_loadb((const char *)data, size, 0, &jerr);
        sc_analyzer_registry *r = NULL;
        sc_analysis_error err;
        if (j && sc_analyzer_registry_new(j, &r, &err) == SC_OK) {
            const json_t *defs = json_object_get(j, "analyzer");
            const char *name;
            json_t *def;
            json_object_foreach ((json_t *)defs, name, def) {
                const sc_analyzer *a = sc_analyzer_registry_get(r, sc_slice_cstr(name));
                if (!a)
                    abort();
                check c = {size, 0, 0, true};
                if (sc_analyzer_analyze(a, text, sink, &c) != SC_OK)
                    abort();
            }
            defs = json_object_get(j, "normalizer");
            json_object_foreach ((json_t *)defs, name, def) {
                const sc_analyzer *a = sc_analyzer_registry_normalizer(r, sc_slice_cstr(name));
                if (!a)
                    abort();
                check c = {size, 0, 0, true};
                if (sc_analyzer_analyze(a, text, sink, &c) != SC_OK || c.n != 1)
                    abort();
            }
        }
        sc_analyzer_registry_free(r);
        json_decref(j);
    }
    if (sc__text_is_ascii(data, size)) {
        raw a = {0, 0}, b = {0, 0};
        if (sc__tokenize_standard(255, text, true, raw_sink, &a) != SC_OK ||
            sc__tokenize_standard(255, text, false, raw_sink, &b) != SC_OK)
            abort();
        if (a.n != b.n || a.h != b.h)
            abort();
    }
    return 0;
}
