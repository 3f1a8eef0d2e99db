/* The query_string parser: Lucene's classic QueryParser syntax (as Elasticsearch's
 * query_string query accepts it) turned into a query tree (search/query.h). It mirrors Lucene
 * 8.7's lexer (longest match, JavaCC token priorities) and QueryParserBase's clause rules, and
 * analyzes terms with the text layer's analyzers the way QueryBuilder does, so the trees equal
 * what Lucene builds (checked by the oracle in tests/oracle/search).
 *
 * Syntax: `a b` (default operator), `+a -b`, `a AND b`, `a OR b`, `NOT a`, `&&`, `||`, `!`,
 * `(...)` grouping, `field:value`, `"a phrase"~slop`, `wild*card?`, `prefix*`, `/regexp/`,
 * `fuzzy~`, `fuzzy~1`, `term^2.5`, `(group)^2`, `\` escapes (and `\uXXXX`), `_exists_:field`,
 * `*:*`, ranges `field:[a TO b]`, `{a TO b}`, `[a TO *]`, and Elasticsearch's `field:>=a` (see
 * range_query below). */
#ifndef SC_SEARCH_QUERY_PARSER_H
#define SC_SEARCH_QUERY_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "search/query.h"
#include "text/analyzer.h"

typedef struct sc_query_parser_options {
    /* Field for clauses without `field:` (ES default_field; "*" is not supported). */
    sc_slice default_field;
    /* SC_OCCUR_SHOULD (OR, the default) or SC_OCCUR_MUST (AND). */
    sc_query_occur default_operator;
    /* Analyzer for text; analyzer_for(ctx, field), when set, picks one per field and may
     * return NULL for a field that is not analyzed (keyword: the text is the term). */
    const sc_analyzer *analyzer;
    const sc_analyzer *(*analyzer_for)(void *ctx, sc_slice field);
    void *ctx;
    /* Lowercase the text of prefix, wildcard, regexp and fuzzy terms (what Lucene's
     * Analyzer.normalize does for the standard analyzer). Default true; applies only to
     * analyzed fields. */
    bool lowercase_expanded_terms;
    /* Allow `*foo` / `?foo` (ES default true; Lucene's QueryParser default false). */
    bool allow_leading_wildcard;
    /* Elasticsearch: a bool of only must_not clauses also gets a match_all clause so it
     * matches everything else (Lucene alone would match nothing). Default true. */
    bool fix_negative;
    uint32_t phrase_slop;             /* default slop of quoted phrases (0) */
    uint32_t fuzzy_prefix_length;     /* 0 */
    uint32_t fuzzy_max_expansions;    /* 50 */
    bool fuzzy_transpositions;        /* true */
    uint32_t max_determinized_states; /* for regexp and wildcard nodes, 10,000 */
    /* Ranges: `field:[lo TO hi]`, `{lo TO hi}` (mixed brackets allowed, `*` = open), and with
     * es_range_syntax (Elasticsearch; default true) `field:>x`, `>=x`, `<x`, `<=x`. When
     * range_query is set it is asked first (ctx is the ctx above; lo / hi NULL = open; the
     * values are unescaped, not analyzed): SC_OK with *out set uses that query (a numeric or
     * date range from the mapping), SC_OK with *out NULL falls back to a term range over the
     * field's terms, another status fails the parse with msg (room for msg_cap bytes). Without
     * the hook every range is a term range (Lucene's TermRangeQuery: bounds normalized as
     * expanded terms, byte order, constant score). */
    sc_status (*range_query)(void *ctx, sc_slice field, const sc_slice *lo, const sc_slice *hi,
                             bool incl_lo, bool incl_hi, sc_arena *a, sc_query **out, char *msg,
                             size_t msg_cap);
    bool es_range_syntax;
    /* simple_query_string only: the fields to search (ES `fields`, with per-field boosts,
     * NULL boosts = 1); when n_fields is 0 the default_field is used. */
    const sc_slice *fields;
    const float *field_boosts;
    size_t n_fields;
} sc_query_parser_options;

/* Where and why parsing failed. */
typedef struct sc_query_parse_error {
    char msg[192];
    size_t offset; /* byte offset in the query text */
} sc_query_parse_error;

/* Fills *o with the defaults above (default_field "_all"-less: empty; set it). */
void sc_query_parser_options_init(sc_query_parser_options *o);

/* Parses `text` (borrowed) into a tree allocated in `a` (*out). An empty or whitespace-only
 * text, or one whose every term analyzes away, gives match_none (as Elasticsearch).
 * Errors: SC_EPARSE with err->msg and err->offset (bad syntax, a term ending in `\`,
 * fractional edit distances >= 1), SC_EUNSUPPORTED (the `*` field), SC_ELIMIT (more
 * than 1,024 clauses in one bool or nesting past 256 levels), SC_ENOMEM, or an analyzer's
 * error. err may be NULL. Thread-safe (analyzers are shared read-only). O(len(text)). */
sc_status sc_query_string_parse(sc_slice text, const sc_query_parser_options *o, sc_arena *a,
                                sc_query **out, sc_query_parse_error *err) SC_MUST_USE;

/* Parses Elasticsearch's simple_query_string syntax (Lucene's SimpleQueryParser, all flags):
 * `+` AND, `|` OR, `-` NOT (a negated clause becomes `-x *:*` as Lucene builds it), `"phrase"`
 * with `~slop`, `prefix*`, `fuzzy~N` (default 2), `(`...`)`, `\` escapes, whitespace = the
 * default operator. It never fails on syntax (unbalanced quotes and parentheses are read as
 * Lucene does); errors are SC_ENOMEM, SC_ELIMIT (clause count) or the analyzer's. Terms are
 * searched in every field of o->fields (OR of the per-field queries, boosted), or
 * o->default_field. The result is match_none when nothing remains. Thread-safe. O(len). */
sc_status sc_simple_query_string_parse(sc_slice text, const sc_query_parser_options *o, sc_arena *a,
                                       sc_query **out, sc_query_parse_error *err) SC_MUST_USE;

#endif
