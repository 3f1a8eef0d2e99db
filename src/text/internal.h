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
    SC__TOK_NGRAM,      /* Lucene NGramTokenizer (ngram.c) */
    SC__TOK_EDGE_NGRAM, /* Lucene EdgeNGramTokenizer (ngram.c) */
} sc__tokenizer_kind;

/* Classes of characters an n-gram tokenizer keeps (Elasticsearch token_chars); 0 = all. */
enum {
    SC__TC_LETTER = 1,
    SC__TC_DIGIT = 2,
    SC__TC_WHITESPACE = 4,
    SC__TC_PUNCTUATION = 8,
    SC__TC_SYMBOL = 16,
};

/* Tokenizer parameters beyond the kind. */
typedef struct sc__tokenizer_opts {
    uint32_t max_len;            /* standard/letter/whitespace; 0 = 255 */
    uint32_t min_gram, max_gram; /* n-gram tokenizers */
    uint32_t token_chars;        /* SC__TC_* bits; 0 = every character */
} sc__tokenizer_opts;

/* A raw token from a tokenizer: input bytes [start, end), a valid-UTF-8 flag (false when the
 * region holds invalid bytes, which must be re-encoded as U+FFFD). Returns non-OK to stop. */
typedef sc_status (*sc__raw_sink)(void *ctx, size_t start, size_t end, bool valid,
                                  sc_token_type type);

/* Runs a tokenizer over text. max_len is the maximum token length in UTF-16 units (standard,
 * letter, whitespace). Returns the first non-OK status of sink. */
sc_status sc__tokenize(sc__tokenizer_kind kind, uint32_t max_len, sc_slice text, sc__raw_sink sink,
                       void *ctx) SC_MUST_USE;

/* The n-gram tokenizers (kind SC__TOK_NGRAM or SC__TOK_EDGE_NGRAM): grams of min_gram..max_gram
 * code points inside runs of token characters, in Lucene's order (by start, then length). */
sc_status sc__tokenize_ngram(sc__tokenizer_kind kind, const sc__tokenizer_opts *o, sc_slice text,
                             sc__raw_sink sink, void *ctx) SC_MUST_USE;

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
    SC__F_SNOWBALL_EN,    /* Lucene SnowballFilter(EnglishStemmer) = libstemmer "english" */
    SC__F_SNOWBALL,       /* SnowballFilter for another language (sc__filter.lang) */
    SC__F_LENGTH,         /* LengthFilter: keep terms of min..max UTF-16 units */
    SC__F_TRIM,           /* TrimFilter: strip leading/trailing Java whitespace */
    SC__F_TRUNCATE,       /* TruncateTokenFilter: at most n code points */
    SC__F_KEYWORD_MARKER, /* SetKeywordMarkerFilter: stemmers leave the listed terms alone */
    SC__F_LIGHT_STEM,     /* a Lucene light stemmer (lightstem.c), SC__LS_* in a */
    SC__F_GERMAN_NORM,    /* GermanNormalizationFilter */
    SC__F_ELISION,        /* ElisionFilter: articles in stop */
    SC__F_STEM_OVERRIDE,  /* StemmerOverrideFilter: ovr (sorted by key) */
    SC__F_LANG_NORM,      /* a language normalizer or decimal_digit (langnorm.c), SC__N_* in a */
    /* Filters from here on may emit several tokens or keep state across tokens: an analyzer
     * with one of them runs the token-stream path (stream.c). */
    SC__F_UNIQUE,     /* Elasticsearch UniqueTokenFilter */
    SC__F_NGRAM,      /* NGramTokenFilter */
    SC__F_EDGE_NGRAM, /* EdgeNGramTokenFilter */
    SC__F_SHINGLE,    /* ShingleFilter */
    SC__F_SYNONYM,    /* SynonymGraphFilter (`synonym_graph`; `synonym` with flag set: the
                       * legacy SynonymFilter's token order) */
    SC__F_WORD_DELIM, /* WordDelimiterGraphFilter (wdelim.c): SC__WD_* bits in a, protected
                       * words in stop; flag: the legacy WordDelimiterFilter */
} sc__filter_kind;

struct sc__filter;

/* word_delimiter_graph options (sc__filter.a). */
enum {
    SC__WD_WORD_PARTS = 1,
    SC__WD_NUMBER_PARTS = 2,
    SC__WD_CATENATE_WORDS = 4,
    SC__WD_CATENATE_NUMBERS = 8,
    SC__WD_CATENATE_ALL = 16,
    SC__WD_PRESERVE = 32,
    SC__WD_SPLIT_CASE = 64,
    SC__WD_SPLIT_NUMERICS = 128,
    SC__WD_POSSESSIVE = 256,
    SC__WD_ADJUST_OFFSETS = 512,
    SC__WD_IGNORE_KEYWORDS = 1024,
};

/* One output of word_delimiter_graph for an input term: graph positions [start_pos, end_pos)
 * relative to the input token, term bytes [start_b, end_b) of the input (or, for a
 * concatenation, cat/cat_len owned by the parts list). */
typedef struct sc__wd_part {
    uint32_t start_pos, end_pos;
    uint32_t start_b, end_b;
    uint8_t *cat;
    size_t cat_len;
    uint32_t so, eo, posinc; /* legacy word_delimiter: offsets and increment as emitted */
} sc__wd_part;
typedef struct sc__wd_parts {
    sc__wd_part *p;
    size_t n, cap;
} sc__wd_parts;
/* Splits term into parts in Lucene's output order. *whole is set when the term is returned
 * as it is (no delimiters, or protected, or only delimiters with preserve_original, which also
 * sets *delims); n == 0 and !*whole means the term is only delimiters (dropped). */
sc_status sc__wdelim_split(const struct sc__filter *f, const uint8_t *term, size_t len,
                           sc__wd_parts *out, bool *whole, bool *delims) SC_MUST_USE;
/* State of the legacy word_delimiter across the tokens of one value. */
typedef struct sc__wdl_state {
    uint32_t accum; /* Lucene's accumPosInc */
    bool started;   /* !first */
} sc__wdl_state;
/* The legacy word_delimiter (Lucene WordDelimiterFilter) on one input token with byte offsets
 * [start, end) and increment posinc: the tokens it emits, in order, with so/eo/posinc set
 * (none when it swallows the token). */
sc_status sc__wdelim_legacy(const struct sc__filter *f, const uint8_t *term, size_t len,
                            uint32_t start, uint32_t end, uint32_t posinc, bool keyword,
                            sc__wdl_state *st, sc__wd_parts *out) SC_MUST_USE;
void sc__wd_parts_clear(sc__wd_parts *ps);
void sc__wd_parts_fini(sc__wd_parts *ps);

#define SC__F_FIRST_STREAM SC__F_UNIQUE

typedef struct sc__synmap sc__synmap;

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
    sc__stopset *stop;  /* SC__F_STOP, SC__F_KEYWORD_MARKER, owned */
    uint32_t a, b;      /* length min/max, truncate n, n-gram min/max, shingle min/max */
    bool flag;          /* preserve_original, output_unigrams, only_on_same_position */
    uint8_t slot;       /* snowball stemmer slot in sc__term.stemmers */
    char *lang;         /* SC__F_SNOWBALL: libstemmer language, owned */
    char *sep, *filler; /* SC__F_SHINGLE: token_separator, filler_token, owned */
    sc__synmap *syn;    /* SC__F_SYNONYM, owned */
    char **ovr;         /* SC__F_STEM_OVERRIDE: key, value, key, value... sorted by key, owned */
    size_t n_ovr;       /* number of pairs */
} sc__filter;

/* Frees what a filter owns (not the filter itself). */
void sc__filter_fini(sc__filter *f);

#define SC__MAX_STEMMERS 8

/* A term being filtered: bytes in buf[0..len), cap bytes of room; u16 scratch for the stemmer
 * of u16_cap units. */
typedef struct sc__term {
    uint8_t *buf;
    size_t len, cap;
    uint16_t *u16;
    size_t u16_cap;
    struct sb_stemmer *snowball;  /* per-call libstemmer instance (not thread-safe), or NULL */
    struct sb_stemmer **stemmers; /* per-call instances of the SC__F_SNOWBALL filters by slot */
    bool keyword; /* set by keyword_marker; the stream path skips stemmers for such terms (the
                   * fast path never has a keyword_marker, so the hot filters need no check) */
} sc__term;

/* Applies one filter in place. Returns false when the token is to be dropped. The term buffer
 * must have cap >= 2 * len + 8 (lowercasing can grow a term by half). */
bool sc__filter_apply(const sc__filter *f, sc__term *t);
/* Applies fs[0..n) in order; false as soon as one drops the token (the fast path's loop). */
bool sc__filters_run(const sc__filter *fs, size_t n, sc__term *t);

/* Lucene's light stemmers (lightstem.c). */
enum {
    SC__LS_GERMAN = 1,
    SC__LS_FRENCH,
    SC__LS_SPANISH,
    SC__LS_ITALIAN,
    SC__LS_PORTUGUESE,
    SC__LS_ARABIC, /* the stemmers of langnorm.c */
    SC__LS_HINDI,
    SC__LS_INDONESIAN,
    SC__LS_GREEK, /* greek.c */
    SC__LS_BULGARIAN,
    SC__LS_CZECH,
    SC__LS_LATVIAN
};
void sc__light_stem(uint32_t lang, sc__term *t);
/* The stemmers of langnorm.c on code points s[0..len) (SC__LS_ARABIC and after); returns the
 * new length (never longer). */
int32_t sc__lang_stem(uint32_t lang, uint32_t *s, int32_t len);
/* The normalizers of langnorm.c (SC__F_LANG_NORM): in place, never longer in bytes. */
enum {
    SC__N_ARABIC = 1,
    SC__N_PERSIAN,
    SC__N_INDIC,
    SC__N_HINDI, /* keyword-aware, as Lucene's HindiNormalizationFilter */
    SC__N_SERBIAN,
    SC__N_DECIMAL_DIGIT,
    SC__N_GREEK_LOWER /* greek.c; may need the term's spare half, as lowercase */
};
void sc__lang_normalize(uint32_t which, sc__term *t);
/* Lucene's GreekLowerCaseFilter and GreekStemmer (greek.c). */
void sc__greek_lowercase(sc__term *t);
int32_t sc__greek_stem(uint32_t *s, int32_t len);
void sc__german_normalize(sc__term *t);
/* Removes "<article>'" from the front of t when the part before the first apostrophe is in
 * articles. */
void sc__elision(const sc__stopset *articles, sc__term *t);

/* Sets the override rules of a stemmer_override filter from "a, b => c" rules; err gets a
 * message naming path on a bad rule. */
sc_status sc__stem_override_init(sc__filter *f, const char *const *rules, size_t n,
                                 const char *path, char *err, size_t err_size) SC_MUST_USE;
/* StemmerOverrideFilter: replaces a listed term and marks it keyword. */
void sc__stem_override(const sc__filter *f, sc__term *t);

/* Lowercases src into dst (Java Character.toLowerCase per code point); returns bytes written
 * (at most 3 * n / 2 + 4). src must be valid UTF-8. */
size_t sc__lowercase(uint8_t *dst, const uint8_t *src, size_t n);

/* Lucene's PorterStemmer on a term (UTF-8 in, UTF-8 out, in place). */
void sc__porter_stem(sc__term *t);

/* Builds an analyzer; takes ownership of the filters' stop sets even on failure (the filter
 * array itself is copied). max_token_len 0 means 255. */
sc_status sc__analyzer_new(const char *name, sc__tokenizer_kind tok, uint32_t max_token_len,
                           sc__filter *filters, size_t n_filters, sc_analyzer **out) SC_MUST_USE;

/* ---- char filters (charfilter.c) ----------------------------------------------------------- */

typedef struct sc__charfilter sc__charfilter;

/* A `mapping` char filter from "key => value" rules (Lucene MappingCharFilter: greedy longest
 * match, offsets corrected as Lucene does, in UTF-16 units). err gets a message naming path. */
sc_status sc__charfilter_mapping(const char *const *rules, size_t n, const char *path,
                                 sc__charfilter **out, char *err, size_t err_size) SC_MUST_USE;
/* A `pattern_replace` char filter (Lucene PatternReplaceCharFilter over an ICU regex, which
 * shares Java's syntax for everyday patterns; `$1` group references). */
sc_status sc__charfilter_pattern(const char *pattern, const char *replacement, const char *path,
                                 sc__charfilter **out, char *err, size_t err_size) SC_MUST_USE;
/* An `html_strip` char filter (Lucene HTMLStripCharFilter, htmlstrip.c); escaped lists the tag
 * names (any case) left in the text. */
sc_status sc__charfilter_html(const char *const *escaped, size_t n, sc__charfilter **out)
    SC_MUST_USE;
void sc__charfilter_free(sc__charfilter *cf);

/* A growing UTF-16 buffer and a Lucene BaseCharFilter correction table, shared by the char
 * filters. Both return false on allocation failure. */
typedef struct sc__ubuf {
    uint16_t *p;
    int32_t len, cap;
} sc__ubuf;
bool sc__ubuf_put(sc__ubuf *b, const uint16_t *s, int32_t n);
struct sc__corr;
/* Records that output offsets from off on map back by adding cumulative. */
bool sc__corr_add(struct sc__corr *c, int32_t off, int32_t cumulative);

/* html_strip options: escaped tag names (lowercased UTF-16) and the three special ones. */
typedef struct sc__html_opts {
    uint16_t **tags;
    int32_t *tag_lens;
    size_t n_tags;
    bool br, script, style;
} sc__html_opts;
sc_status sc__html_opts_init(sc__html_opts *o, const char *const *escaped, size_t n) SC_MUST_USE;
void sc__html_opts_fini(sc__html_opts *o);
/* Strips HTML from in[0..n) into out, recording offset corrections in c (htmlstrip.c). */
sc_status sc__html_strip(const sc__html_opts *o, const uint16_t *in, int32_t n, sc__ubuf *out,
                         struct sc__corr *c) SC_MUST_USE;

/* The result of running the char filters over a value: the filtered text (UTF-8) and what is
 * needed to map a byte offset in it back to a byte offset in the original. */
typedef struct sc__filtered {
    uint8_t *text;
    size_t len;
    uint32_t *byte_to_u16; /* filtered byte offset -> filtered UTF-16 offset (len + 1 entries) */
    uint32_t *u16_to_byte; /* original UTF-16 offset -> original byte offset */
    size_t n_u16;          /* UTF-16 length of the original */
    struct sc__corr *corr; /* one correction table per char filter */
    size_t n_corr;
} sc__filtered;

/* Runs the char filters in order. Returns SC_OK, SC_ENOMEM, SC_ELIMIT. Free with
 * sc__filtered_fini. */
sc_status sc__charfilters_run(sc__charfilter *const *cfs, size_t n, sc_slice text,
                              sc__filtered *out) SC_MUST_USE;
void sc__filtered_fini(sc__filtered *f);
/* Maps a byte offset of the filtered text to a byte offset of the original (Lucene
 * correctOffset through every char filter, last first). */
uint32_t sc__filtered_correct(const sc__filtered *f, size_t filtered_byte);

/* ---- analyzers ----------------------------------------------------------------------------- */

struct sc_analyzer {
    char *name;
    sc__tokenizer_kind tokenizer;
    uint32_t max_token_len;
    sc__tokenizer_opts topts;
    bool lower_fused; /* the first filter is lowercase: done while copying the raw token */
    bool stream;      /* needs the token-stream path (stream.c) */
    sc__filter *filters;
    size_t n_filters;
    sc__charfilter **charfilters;
    size_t n_charfilters;
    size_t n_stemmers; /* SC__F_SNOWBALL slots */
    /* search_as_you_type variants (sayt.c): the base analyzer's tokens turned into shingles of
     * sayt_n tokens, or (sayt_prefix) edge n-grams of the shingles of 1..sayt_n tokens */
    const sc_analyzer *sayt_base;
    uint32_t sayt_n;
    bool sayt_prefix;
};

/* A search_as_you_type variant of base named "<base>#<n>gram" or "<base>#prefix<n>" (2 <= n <=
 * 4); borrows base. Free with sc_analyzer_free. */
sc_status sc__sayt_new(const sc_analyzer *base, bool prefix, uint32_t n, sc_analyzer **out)
    SC_MUST_USE;
sc_status sc__sayt_analyze(const sc_analyzer *a, sc_slice text, sc_token_sink sink, void *ctx)
    SC_MUST_USE;

/* Builds an analyzer with tokenizer options and char filters. Takes ownership of the filters'
 * resources and of the char filters even on failure (both arrays are copied). */
sc_status sc__analyzer_new_ex(const char *name, sc__tokenizer_kind tok,
                              const sc__tokenizer_opts *topts, sc__filter *filters,
                              size_t n_filters, sc__charfilter **cfs, size_t n_cfs,
                              sc_analyzer **out) SC_MUST_USE;

/* The token-stream path: char filters, any tokenizer, filters that emit several tokens or keep
 * state. Same contract as sc_analyzer_analyze. */
sc_status sc__analyze_stream(const sc_analyzer *a, sc_slice text, sc_token_sink sink, void *ctx)
    SC_MUST_USE;

/* Grows t so that it can hold a term of len bytes (cap >= 2 * len + 16, u16_cap >= len).
 * For terms whose buf/u16 are heap-owned by the stream path. */
sc_status sc__term_reserve(sc__term *t, size_t len) SC_MUST_USE;

/* ---- synonyms (synonym.c) ------------------------------------------------------------------ */

/* Parses Solr-format synonym rules, one per string: "a, b, c" (equivalent: with expand each
 * maps to the others and keeps itself, without expand each maps to the first), "a, b => c, d"
 * (explicit), multi-word items allowed, `#` comments, `\` escapes. Each item is analyzed by
 * `an` (the chain before the synonym filter) as Elasticsearch does. lenient skips rules that
 * fail to analyze. err names path on bad rules. */
sc_status sc__synmap_new(const char *const *rules, size_t n, bool expand, bool lenient,
                         const sc_analyzer *an, const char *path, sc__synmap **out, char *err,
                         size_t err_size) SC_MUST_USE;
void sc__synmap_free(sc__synmap *m);
/* Number of rules (after merging rules with the same left side). */
size_t sc__synmap_size(const sc__synmap *m);

/* The synonym filter stage of the stream path (stream.c hands it tokens through these). */
typedef struct sc__syn_tok {
    uint8_t *term;
    size_t len;
    uint32_t posinc, start, end;
    sc_token_type type;
} sc__syn_tok;
/* Emits one output token downstream (poslen: the positions it spans in the graph); returns
 * non-OK to stop. */
typedef sc_status (*sc__syn_emit)(void *ctx, const uint8_t *term, size_t len, uint32_t posinc,
                                  uint32_t start, uint32_t end, sc_token_type type,
                                  uint32_t poslen);
typedef struct sc__syn_state {
    sc__syn_tok *q;
    size_t n, cap;
} sc__syn_state;
/* Adds one input token (copied) and emits whatever is decided. */
sc_status sc__syn_push(const sc__filter *f, sc__syn_state *s, const uint8_t *term, size_t len,
                       uint32_t posinc, uint32_t start, uint32_t end, sc_token_type type,
                       sc__syn_emit emit, void *ctx) SC_MUST_USE;
/* End of input: emits the rest. */
sc_status sc__syn_flush(const sc__filter *f, sc__syn_state *s, sc__syn_emit emit, void *ctx)
    SC_MUST_USE;
void sc__syn_state_fini(sc__syn_state *s);

/* Fills a caller-owned analyzer that borrows `filters` (no copy, nothing to free): used to
 * analyze synonym rules with the chain built so far. */
void sc__analyzer_view(sc_analyzer *a, sc__tokenizer_kind tok, const sc__tokenizer_opts *topts,
                       sc__filter *filters, size_t n_filters);

#endif
