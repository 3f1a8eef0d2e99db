/* Private pieces shared by the files of src/text: UTF-8 decoding with U+FFFD replacement, the
 * character classes of the standard tokenizer, the tokenizers' raw-token callback, and the
 * token filters. Nothing here is part of the layer's interface (that is analyzer.h). */
#ifndef SC_TEXT_INTERNAL_H
#define SC_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "base/status.h"
#include "base/utf8.h"
#include "text/analyzer.h"

/* Memory of analyzers, registries and stop sets (and per-call scratch for long terms). */
extern sc_alloc_pool sc__text_pool;

/* Lucene's default maximum token length, in UTF-16 code units. */
#define SC__TEXT_MAX_TOKEN_LEN 255

/* Decodes one code point at s[*i] (i < len) and advances *i. Invalid input follows the
 * "maximal subpart" rule (ICU, WHATWG, Java's decoder): each maximal prefix of a valid sequence,
 * or a single bad byte, decodes to U+FFFD. */
static inline uint32_t sc__utf8_next(const uint8_t *s, size_t len, size_t *i)
{
    uint8_t b = s[*i];
    if (b < 0x80) {
        (*i)++;
        return b;
    }
    size_t n;
    uint32_t cp;
    uint8_t lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
        n = 1;
        cp = b & 0x1Fu;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 2;
        cp = b & 0x0Fu;
        if (b == 0xE0)
            lo = 0xA0;
        else if (b == 0xED)
            hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 3;
        cp = b & 0x07u;
        if (b == 0xF0)
            lo = 0x90;
        else if (b == 0xF4)
            hi = 0x8F;
    } else {
        (*i)++;
        return 0xFFFD;
    }
    size_t j = *i + 1;
    for (size_t k = 0; k < n; k++) {
        if (j >= len || s[j] < lo || s[j] > hi) {
            *i = j;
            return 0xFFFD;
        }
        cp = (cp << 6) | (s[j] & 0x3Fu);
        lo = 0x80;
        hi = 0xBF;
        j++;
    }
    *i = j;
    return cp;
}

/* True when all len bytes are < 0x80. Word-at-a-time. */
bool sc__text_is_ascii(const uint8_t *s, size_t len);

/* ---- tokenizers -------------------------------------------------------------------------- */

typedef enum sc__tokenizer_kind {
    SC__TOK_STANDARD,
    SC__TOK_LETTER,     /* Lucene LetterTokenizer: runs of Character.isLetter */
    SC__TOK_WHITESPACE, /* Lucene WhitespaceTokenizer: runs of !Character.isWhitespace */
    SC__TOK_KEYWORD,    /* the whole input */
} sc__tokenizer_kind;

/* A raw token from a tokenizer: input bytes [start, end), a valid-UTF-8 flag (false when the
 * region holds invalid bytes, which must be re-encoded as U+FFFD). Returns non-OK to stop. */
typedef sc_status (*sc__raw_sink)(void *ctx, size_t start, size_t end, bool valid,
                                  sc_token_type type);

/* Runs a tokenizer over text. max_len is the maximum token length in UTF-16 units (standard,
 * letter, whitespace). Returns the first non-OK status of sink. */
sc_status sc__tokenize(sc__tokenizer_kind kind, uint32_t max_len, sc_slice text, sc__raw_sink sink,
                       void *ctx) SC_MUST_USE;

/* The standard tokenizer with a forced path, for the fast-path equivalence test:
 * ascii_path true requires pure-ASCII text. */
sc_status sc__tokenize_standard(uint32_t max_len, sc_slice text, bool ascii_path, sc__raw_sink sink,
                                void *ctx) SC_MUST_USE;

/* ---- filters ----------------------------------------------------------------------------- */

typedef enum sc__filter_kind {
    SC__F_LOWERCASE,
    SC__F_POSSESSIVE, /* EnglishPossessiveFilter: strip trailing 's, ’s, ＇s */
    SC__F_STOP,
    SC__F_PORTER,     /* Lucene PorterStemFilter */
    SC__F_MINIMAL_EN, /* Lucene EnglishMinimalStemFilter */
    SC__F_ASCIIFOLD,
    SC__F_SNOWBALL_EN, /* Lucene SnowballFilter(EnglishStemmer) = libstemmer "english" */
} sc__filter_kind;

/* An immutable set of byte strings (stop words). */
typedef struct sc__stopset sc__stopset;

sc_status sc__stopset_new(const char *const *words, size_t n, bool ignore_case, sc__stopset **out)
    SC_MUST_USE;
/* Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (= Elasticsearch _english_). */
sc_status sc__stopset_english(sc__stopset **out) SC_MUST_USE;
void sc__stopset_free(sc__stopset *s);
bool sc__stopset_has(const sc__stopset *s, const uint8_t *term, size_t len);

typedef struct sc__filter {
    sc__filter_kind kind;
    sc__stopset *stop; /* SC__F_STOP, owned */
} sc__filter;

/* A term being filtered: bytes in buf[0..len), cap bytes of room; u16 scratch for the stemmer
 * of u16_cap units. */
typedef struct sc__term {
    uint8_t *buf;
    size_t len, cap;
    uint16_t *u16;
    size_t u16_cap;
    struct sb_stemmer *snowball; /* per-call libstemmer instance (not thread-safe), or NULL */
} sc__term;

/* Applies one filter in place. Returns false when the token is to be dropped. The term buffer
 * must have cap >= 2 * len + 8 (lowercasing can grow a term by half). */
bool sc__filter_apply(const sc__filter *f, sc__term *t);

/* Lowercases src into dst (Java Character.toLowerCase per code point); returns bytes written
 * (at most 3 * n / 2 + 4). src must be valid UTF-8. */
size_t sc__lowercase(uint8_t *dst, const uint8_t *src, size_t n);

/* Lucene's PorterStemmer on a term (UTF-8 in, UTF-8 out, in place). */
void sc__porter_stem(sc__term *t);

/* Builds an analyzer; takes ownership of the filters' stop sets even on failure (the filter
 * array itself is copied). max_token_len 0 means 255. */
sc_status sc__analyzer_new(const char *name, sc__tokenizer_kind tok, uint32_t max_token_len,
                           sc__filter *filters, size_t n_filters, sc_analyzer **out) SC_MUST_USE;

#endif
