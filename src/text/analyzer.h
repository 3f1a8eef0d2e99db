/* Text analysis: turns a field value or query string into a stream of terms with positions and
 * byte offsets, exactly as Lucene 8.7 / Elasticsearch analyzers do (oracle-tested against the
 * real Lucene jars, see tests/oracle/analysis). Analyzers are immutable after construction and
 * may be shared by any number of threads; an sc_analyzer_registry holds the named analyzers of
 * one index (built-ins plus the custom ones from the index's `settings.analysis`). */
#ifndef SC_TEXT_ANALYZER_H
#define SC_TEXT_ANALYZER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"
#include "base/status.h"

/* One token handed to a sink.
 * - term: the analyzed bytes (valid UTF-8), valid ONLY during the sink call; copy to keep.
 * - position: absolute position of the token in this value, starting at 0 for the first token
 *   the tokenizer produced. Removed tokens (stop words) leave gaps exactly as Lucene's
 *   position increments do ("the fox" with `english` gives fox at position 1).
 * - start_offset/end_offset: UTF-8 BYTE offsets into the input text handed to analyze
 *   (Lucene reports UTF-16 units; we report bytes), half-open [start, end). Filters never
 *   change offsets: a stemmed token still covers the original word. */
/* Lucene's token types, as Elasticsearch's _analyze API shows them (sc_token_type_name). */
typedef enum sc_token_type {
    SC_TOKEN_WORD,            /* "word": whitespace, letter and keyword tokenizers */
    SC_TOKEN_ALPHANUM,        /* "<ALPHANUM>" */
    SC_TOKEN_NUM,             /* "<NUM>" */
    SC_TOKEN_SOUTHEAST_ASIAN, /* "<SOUTHEAST_ASIAN>" */
    SC_TOKEN_IDEOGRAPHIC,     /* "<IDEOGRAPHIC>" */
    SC_TOKEN_HIRAGANA,        /* "<HIRAGANA>" */
    SC_TOKEN_KATAKANA,        /* "<KATAKANA>" */
    SC_TOKEN_HANGUL,          /* "<HANGUL>" */
    SC_TOKEN_EMOJI,           /* "<EMOJI>" */
    SC_TOKEN_SHINGLE,         /* "shingle": shingle filter */
    SC_TOKEN_SYNONYM,         /* "SYNONYM": synonym filters */
} sc_token_type;

typedef struct sc_token {
    const uint8_t *term;
    uint32_t len;
    uint32_t position;
    uint32_t start_offset, end_offset;
    sc_token_type type; /* set by the tokenizer; filters keep it */
    /* positions the token spans in the token graph (Lucene's positionLength): more than 1 for
     * word_delimiter_graph concatenations and the preserved original, synonym_graph outputs
     * and originals beside a longer or shorter path, shingles; 0 is read as 1 */
    uint32_t position_length;
} sc_token;

/* The Lucene/Elasticsearch name of a token type ("<ALPHANUM>", "word", ...). Never NULL. */
const char *sc_token_type_name(sc_token_type type);

/* Receives each token in order. Return SC_OK to continue; any other status stops the analysis
 * and is returned by sc_analyzer_analyze unchanged. */
typedef sc_status (*sc_token_sink)(void *ctx, const sc_token *tok);

typedef struct sc_analyzer sc_analyzer;

/* Creates one of the built-in analyzers by its Elasticsearch name:
 *   "standard"   StandardTokenizer (UAX#29 words, max token length 255) + lowercase, no stop words
 *   "simple"     letter tokenizer (runs of Unicode letters) + lowercase
 *   "whitespace" split on Java-whitespace, no lowercase
 *   "keyword"    the whole input as one token (also for empty input, as Lucene does)
 *   "stop"       letter tokenizer + lowercase + Lucene's English stop words
 *   "english"    standard tokenizer + possessive 's removal + lowercase + English stop words +
 *                Lucene's Porter stemmer
 * Returns SC_OK and an owned analyzer in *out (free with sc_analyzer_free), SC_ENOTFOUND for an
 * unknown name, SC_ENOMEM. */
sc_status sc_analyzer_builtin(const char *name, sc_analyzer **out) SC_MUST_USE;

/* Frees an analyzer. NULL is a no-op. Do not free analyzers borrowed from a registry. */
void sc_analyzer_free(sc_analyzer *a);

/* The analyzer's name (the built-in or settings name). Never NULL. */
const char *sc_analyzer_name(const sc_analyzer *a);

/* Analyzes `text` and calls sink(ctx, &tok) for every token in order. Thread-safe (the analyzer
 * is read-only; scratch lives on the stack, plus at most one heap buffer per call for long
 * terms (keyword tokenizer, custom max_token_length), and one libstemmer instance per call
 * when the chain has a porter2/snowball filter). O(len(text)). The first call of the process
 * that uses the standard tokenizer builds the character-class tables (~30 ms, once).
 * Input need not be valid UTF-8: every maximal invalid byte sequence (WHATWG/ICU "maximal
 * subpart" rule) is read as U+FFFD REPLACEMENT CHARACTER, which is what a Java UTF-8 decoder
 * would hand Lucene. U+FFFD is not a letter or digit, so standard/simple/stop never put it in a
 * token; whitespace/keyword tokens that contain invalid bytes carry EF BF BD in their term
 * (offsets still point at the original bytes). Terms are therefore always valid UTF-8.
 * Returns SC_OK, SC_ENOMEM, or the first non-OK status returned by the sink. */
sc_status sc_analyzer_analyze(const sc_analyzer *a, sc_slice text, sc_token_sink sink, void *ctx)
    SC_MUST_USE;

/* The text after the analyzer's char filters (the input itself when it has none), as
 * Elasticsearch's _analyze explain shows it. Returns SC_OK and a buffer owned by the caller
 * (free with sc_analyzer_text_free) in *out / *out_len, SC_ENOMEM, SC_ELIMIT. */
sc_status sc_analyzer_char_filter(const sc_analyzer *a, sc_slice text, uint8_t **out,
                                  size_t *out_len) SC_MUST_USE;
void sc_analyzer_text_free(uint8_t *p);

/* ---- registry: the analyzers of one index ---------------------------------------------- */

typedef struct sc_analyzer_registry sc_analyzer_registry;

/* An error about analysis settings: a message naming the offending key, e.g.
 * "analysis.filter.my_stop.stopwords: expected a string or an array of strings". */
typedef struct sc_analysis_error {
    char message[256];
} sc_analysis_error;

/* Builds a registry from the Elasticsearch `analysis` settings object (the value of
 * settings.index.analysis / settings.analysis; may be NULL for built-ins only). Supported:
 *   analyzer.<name>: {"type": "custom", "tokenizer": T, "filter": [F...]}
 *                    {"type": "standard", "stopwords": S, "max_token_length": N}
 *                    {"type": "stop"|"english", "stopwords": S}
 *                    {"type": "simple"|"whitespace"|"keyword"}
 *   tokenizer.<name>: {"type": "standard", "max_token_length": N} | whitespace | keyword |
 *                     letter | lowercase    (built-in tokenizer names usable directly)
 *   filter.<name>:   {"type": "lowercase"} | asciifolding | {"type":"stop","stopwords":S,
 *                    "ignore_case":bool} | {"type":"stemmer","language":L} | porter_stem |
 *                    {"type":"snowball","language":"English"}
 *                    (built-in filter names usable directly; S is "_english_", "_none_" or an
 *                    array of strings; L is english/porter (Lucene PorterStemFilter),
 *                    porter2 (Snowball English, via libstemmer, = Lucene SnowballFilter),
 *                    minimal_english, possessive_english, light_english — we have no KStem:
 *                    light_english maps to the Porter stemmer, a documented divergence)
 *   normalizer.<name>: {"type": "custom", "filter": [lowercase | asciifolding ...]}
 * The registry always holds the built-ins (standard, simple, whitespace, keyword, stop,
 * english; normalizer "lowercase"); a custom analyzer named "default" replaces standard as the
 * index default. asciifolding follows Lucene's ASCIIFoldingFilter (oracle-checked on Latin-1,
 * Latin Extended-A/B/Additional, General Punctuation, super/subscripts and full-width forms;
 * other blocks use canonical decomposition minus marks, which can differ from Lucene).
 * Returns SC_OK and an owned registry (free with sc_analyzer_registry_free); SC_EINVAL with
 * err->message filled for bad settings (err may be NULL); SC_ENOMEM. Does not keep `analysis`. */
sc_status sc_analyzer_registry_new(const json_t *analysis, sc_analyzer_registry **out,
                                   sc_analysis_error *err) SC_MUST_USE;

/* As sc_analyzer_registry_new, with a folder for files named by the settings
 * (`synonyms_path`, relative to config_dir, never outside it). config_dir NULL: files are
 * refused with SC_EINVAL. */
sc_status sc_analyzer_registry_new_dir(const json_t *analysis, const char *config_dir,
                                       sc_analyzer_registry **out, sc_analysis_error *err)
    SC_MUST_USE;

/* Frees the registry and every analyzer in it. NULL is a no-op. */
void sc_analyzer_registry_free(sc_analyzer_registry *r);

/* Looks up an analyzer by name (custom first, then built-in). Returns a borrowed pointer valid
 * as long as the registry lives, or NULL if unknown. Thread-safe. O(number of analyzers). */
const sc_analyzer *sc_analyzer_registry_get(const sc_analyzer_registry *r, sc_slice name);

/* The index default analyzer: the custom "default" if defined, else "standard". Never NULL. */
const sc_analyzer *sc_analyzer_registry_default(const sc_analyzer_registry *r);

/* Looks up a normalizer for keyword fields: analysis.normalizer.<name> ({"type": "custom",
 * "filter": [...]} with the filters lowercase and asciifolding, or named custom filters of
 * those types) or the built-in "lowercase". A normalizer is an analyzer that always emits
 * exactly one token: the whole value, normalized (offsets 0..len, position 0). Returns a
 * borrowed pointer valid as long as the registry lives, or NULL if unknown. Thread-safe. */
const sc_analyzer *sc_analyzer_registry_normalizer(const sc_analyzer_registry *r, sc_slice name);

#endif
