/* Private to the query DSL parser (dsl.h), which is split by responsibility: dsl.c (shared
 * helpers, compound queries, the name -> handler table), dsl_fulltext.c (match family,
 * multi_match, query_string), dsl_term.c (term-level queries and range) and dsl_geo.c
 * (geo_bounding_box, geo_distance). Each handler
 * turns one query body into an sc_query in the parser's arena, or fails with an ES error. */
#ifndef SC_API_DSL_INTERNAL_H
#define SC_API_DSL_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/dsl.h"

/* The state of one sc_dsl_parse call. */
typedef struct sc__dsl_parser {
    const sc_dsl_env *env;
    sc_arena *a;
    sc_dsl_error *err;
    int depth;
    bool in_nested; /* parsing the inner query of a nested query */
} sc__dsl_parser;

/* The files of the parser use the short name. */
typedef sc__dsl_parser P;

/* Evaluates a constructor; returns the out-of-memory error from the enclosing function when it
 * yields NULL. */
#define NEW(p, expr)                                                                               \
    ({                                                                                             \
        sc_query *q__ = (expr);                                                                    \
        if (!q__)                                                                                  \
            return sc__dsl_oom(p);                                                                 \
        q__;                                                                                       \
    })

/* Parses a nested query object (depth-limited). */
sc_status sc__dsl_parse_query(P *p, const json_t *q, sc_query **out);

/* Fills p->err (status 400, ES `type`, formatted reason) and returns SC_EPARSE. */
sc_status sc__dsl_fail(P *p, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The arena error: 429 circuit_breaking_exception when over budget (SC_ELIMIT), else a 500
 * (SC_ENOMEM). */
sc_status sc__dsl_oom(P *p);

/* A JSON string as a slice (borrowed from the value). */
sc_slice sc__dsl_jstr(const json_t *s);
/* Text form of a JSON scalar (numbers as Java prints integers), in the arena; false for
 * non-scalars or no memory. */
bool sc__dsl_scalar_text(P *p, const json_t *v, sc_slice *out);
/* The env's kind of a field (TEXT when there is no callback). */
sc_dsl_field_kind sc__dsl_field_kind(P *p, sc_slice field);
/* A term-level value as the exact indexed term bytes (through the env, else its text). */
/* Exact-term queries cannot target geo_point fields: a 400 with Elasticsearch's message. */
sc_status sc__dsl_no_geo(P *p, sc_slice field);
sc_status sc__dsl_encode_term(P *p, sc_slice field, const json_t *v, sc_slice *out);
/* Analyzes text with the field's search analyzer (or `analyzer` by name). */
/* match_phrase over a token graph (dsl_graph.c): when a token of toks[0..n) spans several
 * positions, *out is the disjunction of the phrases of the graph's paths; otherwise (or past
 * 64 paths) *out is NULL and the caller builds the flat phrase. */
sc_status sc__dsl_graph_phrase(P *p, sc_slice field, const sc_dsl_token *toks, size_t n,
                               uint32_t slop, sc_query **out) SC_MUST_USE;
sc_status sc__dsl_analyze(P *p, sc_slice field, const char *analyzer, sc_slice text,
                          sc_dsl_token **toks, size_t *n);
/* A number or numeric string as float / integer. */
bool sc__dsl_get_float(const json_t *v, float *out);
bool sc__dsl_get_int(const json_t *v, int64_t *out);
/* Splits {"field": value} (exactly one key besides boost/_name). */
sc_status sc__dsl_single_field(P *p, const char *qname, const json_t *body, sc_slice *field,
                               json_t **value);
/* Rejects keys of obj not in the NULL-terminated `allowed` list with ES's message. */
sc_status sc__dsl_check_keys(P *p, const char *qname, const json_t *obj,
                             const char *const *allowed);
/* Elasticsearch's pure-negative rule: a bool of only must_not clauses gets a match_all filter. */
sc_status sc__dsl_fix_negative(P *p, sc_query *q);
/* Multiplies q's boost by obj's "boost" when present. */
sc_status sc__dsl_apply_boost(P *p, const char *qname, const json_t *obj, sc_query *q);
/* A single exact term, or a fuzzy term when `fuzz` asks for edits (opts: prefix_length,
 * max_expansions, transpositions). */
sc_status sc__dsl_term_or_fuzzy(P *p, sc_slice field, sc_slice term, const json_t *fuzz,
                                const json_t *opts, sc_query **out);

/* Query handlers: body of {"<name>": body} -> *out. */
sc_status sc__dsl_q_match(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_match_phrase(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_match_phrase_prefix(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_match_bool_prefix(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_function_score(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_script_score(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_rank_feature(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_multi_match(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_query_string(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_simple_query_string(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_term(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_terms(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_ids(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_exists(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_prefix(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_wildcard(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_regexp(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_fuzzy(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_range(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_geo_bounding_box(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_geo_distance(P *p, const json_t *body, sc_query **out);
sc_status sc__dsl_q_knn(P *p, const json_t *body, sc_query **out);

#endif
