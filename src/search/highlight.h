/* Highlighting: the fetch phase's snippets with the query's matches marked, as Elasticsearch's
 * `unified` highlighter makes them (Lucene's UnifiedHighlighter with Elasticsearch's passage
 * sizing and formatting). A query tree is compiled once per highlighted field into matchers
 * (sc_hl_query_build); each hit's field values are re-analysed with the field's analyzer
 * (offsets from src/text), matched, cut into passages at sentence / word boundaries (ICU
 * break iterators), scored like Lucene's PassageScorer (BM25 over passages) and formatted.
 * Oracle: tests/oracle/highlight (Lucene 8.7's UnifiedHighlighter). */
#ifndef SC_SEARCH_HIGHLIGHT_H
#define SC_SEARCH_HIGHLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "search/query.h"
#include "text/analyzer.h"

/* How passages are bounded (Elasticsearch's boundary_scanner). */
typedef enum sc_hl_boundary {
    SC_HL_BOUNDARY_SENTENCE, /* sentences, merged up to fragment_size; longer ones cut at words */
    SC_HL_BOUNDARY_WORD,     /* words */
    SC_HL_BOUNDARY_CHARS,    /* runs between boundary_chars, merged up to fragment_size */
} sc_hl_boundary;

/* Options of one highlighted field (Elasticsearch's defaults in sc_hl_options_init). */
typedef struct sc_hl_options {
    sc_slice pre_tag, post_tag;   /* the unified highlighter uses the first of each list */
    uint32_t fragment_size;       /* 100; bound of a sentence passage, in characters */
    uint32_t number_of_fragments; /* 5; 0 = every value holding a match, whole */
    uint32_t no_match_size;       /* 0; without a match, the first value's start this long */
    bool order_score;             /* order: score (else by position) */
    bool encoder_html;            /* escape the text (not the tags) as HTML */
    sc_hl_boundary boundary;
    sc_slice boundary_chars;     /* for SC_HL_BOUNDARY_CHARS; default ".,!? \t\n" */
    int64_t max_analyzed_offset; /* -1 = all; else only tokens ending before this byte */
} sc_hl_options;

/* Fills *o with Elasticsearch's defaults (<em>, </em>, 100, 5, 0, by position, no encoder,
 * sentence, no offset limit). */
void sc_hl_options_init(sc_hl_options *o);

/* A query tree compiled into matchers for one field. */
typedef struct sc_hl_query sc_hl_query;

/* Compiles the terms of `q` that can mark text in `field`: term, terms, phrase (only whole
 * phrases are marked; slop > 0 accepts each term within slop positions of its place), prefix,
 * wildcard, regexp, fuzzy, inside bool (not must_not), dis_max, constant_score, boosting
 * (positive) and function_score (its query). With require_field_match only clauses on `field` count, else clauses on any
 * field (Elasticsearch's default). Everything lives in `a`. Returns SC_OK with *out (never
 * NULL; may match nothing), SC_ENOMEM / SC_ELIMIT (arena). A wildcard or regexp too big to
 * compile is skipped. Not thread-safe (the arena); the result is read-only and may be shared. */
sc_status sc_hl_query_build(const sc_query *q, sc_slice field, bool require_field_match,
                            sc_arena *a, sc_hl_query **out) SC_MUST_USE;

/* True when the compiled query can mark nothing. */
bool sc_hl_query_empty(const sc_hl_query *hq);

/* Reusable break iterators (ICU) for highlighting many docs on one thread: opening them costs
 * more than highlighting a short field. */
typedef struct sc_hl_scratch sc_hl_scratch;

/* Creates a scratch (owned; free with sc_hl_scratch_free). SC_ENOMEM. */
sc_status sc_hl_scratch_new(sc_hl_scratch **out) SC_MUST_USE;

/* Frees a scratch. NULL is a no-op. */
void sc_hl_scratch_free(sc_hl_scratch *s);

/* Highlights one field of one doc: values[0..n_values) (the field's strings from _source in
 * order; joined with U+2029 between values) analysed with `an`, matched against hq, cut into
 * passages and formatted by o. *frags receives the snippets (arena, in position order or by
 * score with order_score), *n_frags their number (0 = nothing to show). `scratch` (may be NULL:
 * a temporary one) is used by one thread at a time. Returns SC_OK, SC_ENOMEM / SC_ELIMIT
 * (arena), or an analyzer error. Thread-safe for distinct arenas and scratches.
 * O(text length + matches * number_of_fragments). */
sc_status sc_highlight_field(const sc_hl_query *hq, const sc_analyzer *an, const sc_hl_options *o,
                             const sc_slice *values, size_t n_values, sc_hl_scratch *scratch,
                             sc_arena *a, sc_slice **frags, size_t *n_frags) SC_MUST_USE;

/* One field to highlight, resolved by the API layer for one index: where its text is in
 * _source (a multi-field reads its parent's values), the analyzer that indexed it (keyword
 * fields: their normalizer or "keyword"), its compiled query and options. All borrowed. */
typedef struct sc_hl_field {
    const char *name;     /* as the response names it ("title", "title.en") */
    sc_slice source_path; /* dotted path of its values in _source */
    const sc_analyzer *analyzer;
    const sc_hl_query *query;
    sc_hl_options opts;
} sc_hl_field;

/* What to highlight in each hit of one index. */
typedef struct sc_hl_spec {
    const sc_hl_field *fields;
    size_t n_fields;
} sc_hl_spec;

#endif
