/* The Elasticsearch query DSL parser: a JSON query object (jansson) -> an sc_query tree
 * (search/query.h) in the request arena. Field knowledge (which analyzer a text field uses,
 * how a term value is encoded) comes from the caller through sc_dsl_env callbacks, so the
 * parser is independent of how mappings are stored. Errors carry Elasticsearch's type
 * ("parsing_exception", "illegal_argument_exception") and a reason naming the query and key. */
#ifndef SC_API_DSL_H
#define SC_API_DSL_H

#include <jansson.h>

#include "base/arena.h"
#include "base/status.h"
#include "index/doc.h"
#include "search/query.h"
#include "text/analyzer.h"

#define SC_DSL_MAX_DEPTH 64 /* nested compound queries; ES uses 30 for bool by default */

typedef struct sc_dsl_token {
    sc_slice term;
    uint32_t position;
    uint32_t position_length; /* positions spanned in the token graph (0 is read as 1) */
} sc_dsl_token;

typedef enum sc_dsl_field_kind {
    SC_DSL_FIELD_UNMAPPED = 0,
    SC_DSL_FIELD_TEXT,    /* analyzed: match analyzes, term does not */
    SC_DSL_FIELD_KEYWORD, /* exact */
    SC_DSL_FIELD_NUMERIC, /* long/double/date/boolean: term values go through encode */
    SC_DSL_FIELD_GEO,     /* geo_point: geo_bounding_box / geo_distance / exists only */
} sc_dsl_field_kind;

typedef struct sc_dsl_env {
    void *ctx;
    /* Analyzes `text` with the search analyzer of `field` (analyzer_name overrides it when not
     * NULL) into tokens allocated in `a`. NULL callback: lowercase and split on whitespace. */
    sc_status (*analyze)(void *ctx, sc_slice field, const char *analyzer_name, sc_slice text,
                         sc_arena *a, sc_dsl_token **toks, size_t *n_toks);
    /* The kind of a field; NULL callback: everything is TEXT. */
    sc_dsl_field_kind (*field_kind)(void *ctx, sc_slice field);
    /* Encodes a term-level value (a JSON scalar) for `field` into the exact indexed term bytes
     * (numbers, booleans, dates). NULL callback or SC_EUNSUPPORTED: the value's text form. */
    sc_status (*encode_term)(void *ctx, sc_slice field, const json_t *value, sc_arena *a,
                             sc_slice *out);
    /* Fields searched when a query names none (query_string default_field "*"). n=0 when the
     * callback is NULL: then "_all"-style queries fall back to the field "*". */
    size_t (*default_fields)(void *ctx, const char ***fields);
    /* The search analyzer of a field (NULL: not analyzed, e.g. keyword) and an analyzer by
     * name (NULL: unknown). When set, query_string over one field and simple_query_string use
     * the search layer's Lucene-exact parsers (search/query_parser.h). */
    const sc_analyzer *(*analyzer_for)(void *ctx, sc_slice field);
    const sc_analyzer *(*analyzer_named)(void *ctx, const char *name);
    /* Encodes a `range` (and a term/terms value, as from = to = value) on a numeric-kind field
     * (numbers, dates, booleans) into inclusive bounds [*lo, *hi] over the int64 values the
     * field indexes (search/range.h); from/to NULL = open; format/time_zone NULL = the
     * field's / UTC. *empty: the range matches nothing. SC_EUNSUPPORTED (or a NULL callback):
     * not a numeric-kind field; SC_EINVAL: a bad value, reason in err. */
    sc_status (*encode_range)(void *ctx, sc_slice field, const json_t *from, const json_t *to,
                              bool include_lower, bool include_upper, const char *format,
                              const char *time_zone, int64_t *lo, int64_t *hi, bool *empty,
                              char *err, size_t err_cap);
    /* Encodes `range` bounds on a term-kind field (keyword: the normalized term; ip: the 16
     * address bytes) into exact term bytes in `a`; from/to NULL = open (the slice is left
     * untouched). SC_EUNSUPPORTED (or a NULL callback): not such a field; SC_EINVAL: a bad
     * value, reason in err. */
    sc_status (*encode_term_range)(void *ctx, sc_slice field, const json_t *from, const json_t *to,
                                   sc_arena *a, sc_slice *lo, sc_slice *hi, char *err,
                                   size_t err_cap);
    /* A term value on an ip field written as a CIDR block ("10.0.0.0/8", "2001:db8::/32") as
     * its first and last address (16 bytes each, in `a`). SC_EUNSUPPORTED (or a NULL
     * callback): not an ip field or no '/' in the value; SC_EINVAL: malformed, reason in err. */
    sc_status (*encode_cidr)(void *ctx, sc_slice field, const json_t *value, sc_arena *a,
                             sc_slice *lo, sc_slice *hi, char *err, size_t err_cap);
    /* The parameters of a dense_vector field and whether it is indexed. SC_ENOTFOUND:
     * unmapped; SC_EINVAL: mapped with another type (or dims not known yet); NULL callback:
     * knn queries fail. */
    sc_status (*vector_field)(void *ctx, sc_slice field, sc_vec_params *out, bool *indexed);
    /* The mapping's index_options.rescore_vector.oversample of a dense_vector field, the
     * default of its knn clauses; < 0 (or a NULL callback): none. */
    float (*vector_oversample)(void *ctx, sc_slice field);
    /* k of a knn query that gives none (the request's size); 0 means 10. */
    uint32_t knn_default_k;
    /* How a numeric or date field's doc values read for function_score: *value / *scaling
     * (search/function_score.h), *date 0 (not a date), 1 (epoch ms) or 2 (date_nanos).
     * SC_ENOTFOUND: unmapped; SC_EUNSUPPORTED (or a NULL callback): not numeric. A
     * rank_feature field, or feature "f.k" of a rank_features field f, reads as
     * SC_SF_VALUE_FEATURE(_NEG), which only the rank_feature query accepts. */
    sc_status (*score_field)(void *ctx, sc_slice field, sc_sf_value *value, double *scaling,
                             int *date);
    /* Called for each query with a `_name` (named queries, hits' matched_queries): the name
     * (borrowed from the request JSON) and its parsed tree. NULL: names are ignored. */
    sc_status (*named)(void *ctx, const char *name, sc_query *q);
    /* Whether `path` is a `nested` field: SC_OK when it is, SC_ENOTFOUND when unmapped,
     * SC_EINVAL when mapped with another type. NULL callback: nested queries fail. */
    sc_status (*nested_path)(void *ctx, sc_slice path);
    /* A nested query's `inner_hits` object (opts, borrowed) for `path` and its inner query.
     * SC_EINVAL with a reason in err (a 400): a bad option. NULL: inner_hits are ignored. */
    sc_status (*inner_hits)(void *ctx, const json_t *opts, sc_slice path, const sc_query *inner,
                            char *err, size_t err_cap);
} sc_dsl_env;

typedef struct sc_dsl_error {
    const char *type; /* static string */
    char reason[512];
    int status; /* 400 */
} sc_dsl_error;

/* Parses one query object ({"match":{...}}) into *out (allocated in `a`). On failure returns
 * SC_EPARSE (err filled), SC_ENOMEM / SC_ELIMIT (arena). Thread-safe given distinct arenas. */
sc_status sc_dsl_parse(const sc_dsl_env *env, sc_arena *a, const json_t *query, sc_query **out,
                       sc_dsl_error *err) SC_MUST_USE;

/* Parses one kNN clause (a top-level `knn` entry, a knn retriever, or the body of the knn
 * query: field, query_vector (numbers, or hex for byte vectors), k (default
 * env->knn_default_k), num_candidates (default min(1.5 k, 10000)), filter (a query or an
 * array of queries), similarity, boost) into an SC_QUERY_KNN with the query vector checked
 * against the field's mapping (dims, byte range, non-zero for cosine; normalized for cosine).
 * Errors as sc_dsl_parse. */
sc_status sc_dsl_parse_knn(const sc_dsl_env *env, sc_arena *a, const json_t *clause,
                           sc_query **out, sc_dsl_error *err) SC_MUST_USE;

/* Parses an ES minimum_should_match spec ("2", "-1", "75%", "-25%", integer) for n optional
 * clauses. Returns the number of clauses required (clamped to [0, n]); false on garbage. */
bool sc_dsl_minimum_should_match(const json_t *spec, size_t n, int32_t *out);

#endif
