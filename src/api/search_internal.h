/* Private to the _search family of handlers: the parsed search request (body + URL parameters)
 * shared by request parsing (search_parse.c), response writing (search_write.c) and the handlers
 * (api_search.c). */
#ifndef SC_API_SEARCH_INTERNAL_H
#define SC_API_SEARCH_INTERNAL_H

#include <jansson.h>

#include "api/dsl.h"
#include "api/rest.h"
#include "cluster/node.h"
#include "cluster/search.h"
#include "search/agg.h"

/* One `highlight.fields` entry: its name or pattern and its options (the global ones with
 * its own overrides). */
typedef struct search_hl_field {
    const char *pattern;
    sc_hl_options opts;
    bool require_field_match;
    const json_t *query; /* highlight_query (borrowed from the body) or NULL */
} search_hl_field;

/* One `rescore` entry as parsed (its query built per index later). */
typedef struct search_rescore {
    const json_t *query; /* rescore_query (borrowed) */
    sc_shard_rescore r;  /* everything but the query */
} search_rescore;

typedef struct search_highlight {
    search_hl_field *fields;
    size_t n_fields;
} search_highlight;

/* A search request's options after parsing the body and the URL parameters. */

typedef struct search_parse {
    json_t *body;    /* owned */
    json_t *query;   /* borrowed from body or built from q= */
    json_t *owned_q; /* a query built from URL params */
    int64_t from, size;
    int64_t track_total_hits; /* SC_TRACK_TOTAL_HITS_ALL / _NONE / N (search/searcher.h) */
    int64_t terminate_after;  /* docs to collect per shard at most; 0 = no limit */
    bool rest_total_int;
    int64_t timeout_ms;
    /* URL parameters of the shard phases (0 = default): pre_filter_shard_size (>= 1),
     * max_concurrent_shard_requests (>= 1), batched_reduce_size (>= 2) */
    uint32_t pre_filter_shard_size, max_concurrent_shard_requests, batched_reduce_size;
    bool dfs; /* search_type=dfs_query_then_fetch */
    /* slice {id, max} of a scroll or point in time (max 0: none): whole shards (api_search.c) */
    uint32_t slice_id, slice_max;
    bool source;
    json_t *source_filter;  /* borrowed: includes/excludes spec, or NULL */
    const char **dv_fields; /* docvalue_fields + fields names (arena) */
    size_t n_dv_fields;
    const char **src_fields; /* the `fields` names (arena): text ones are read from _source */
    size_t n_src_fields;
    sc_sort_spec *sort; /* field sort (arena); n_sort 0 = relevance order; field kinds are
                           resolved with the targets' mappings (sc__search_resolve_sort) */
    size_t n_sort;
    bool *sort_unmapped_ok;            /* per sort entry: `unmapped_type` given (arena) */
    const json_t *search_after;        /* borrowed from the body */
    const json_t *aggs;                /* borrowed: the body's aggs / aggregations, or NULL */
    const json_t *post_filter;         /* borrowed, or NULL */
    const json_t *runtime_mappings;    /* borrowed, or NULL (search_runtime.c) */
    bool typed_keys;                   /* ?typed_keys */
    sc_agg_spec *agg_spec;             /* parsed aggs (arena; date formats freed by run_fini) */
    sc_agg_result *agg_result;         /* the final aggregation result to write (arena) */
    search_highlight *highlight;       /* arena; NULL = none */
    bool version, seq_no_primary_term; /* hits carry _version / _seq_no and _primary_term */
    bool explain;                      /* hits carry _explanation */
    bool profile;                      /* profile: true (the response's "profile") */
    const char *node_id;               /* profile: this node's id (for the shards' ids) */
    bool track_scores;                 /* field sorts: hits keep _score, max_score is set */
    /* stored_fields (search_page.c): given at all; `_none_` (no _id, no _source); the other
     * names (arena array of borrowed strings) */
    bool has_stored, stored_none;
    const char **stored;
    size_t n_stored;
    search_rescore *rescore;           /* arena; n_rescore entries */
    size_t n_rescore;
    const json_t *suggest;       /* the body's suggest (borrowed), or NULL */
    const json_t *indices_boost; /* borrowed, or NULL */
    json_t *suggest_out;         /* its result (owned, freed with the run), or NULL */
    const char *collapse_field;  /* collapse.field (borrowed), or NULL */
    sc_shard_collapse collapse;  /* resolved with the first index's mapping */
    const json_t *collapse_inner; /* collapse.inner_hits: an object or an array (borrowed) */
    json_t **inner_out;           /* per page hit: its "inner_hits" object (owned), or NULL */
    size_t n_inner_out;
    bool has_min_score;          /* min_score: hits (and totals) only at or above it */
    float min_score;
    /* vector search (search_vector.c): kNN clauses and RRF sub-searches ({"query": q} or
     * {"knn": clause}), held by `owned` (json_decref it with owned_q) */
    struct {
        json_t *owned, *knn, *subs;
        bool rrf;
        uint32_t rank_constant, rank_window;
    } vec;
} search_parse;

/* Parses a search body (may be NULL) and the URL parameters into sp. `count` restricts the
 * body keys to those of _count. On failure writes a 4xx into resp and returns false; on
 * success the caller json_decref()s sp->owned_q. */
bool sc__search_parse(sc_rest_req *req, sc_rest_resp *resp, const json_t *body, search_parse *sp,
                      bool count);
/* Resolves each field sort's kind from the mappings of list[0..n) (the first index mapping
 * the field decides): numeric types sort by numeric doc values, other mapped types by keyword
 * terms; an unmapped field stays numeric (missing in every doc). */
void sc__search_resolve_sort(search_parse *sp, sc_index *const *list, size_t n);
/* Checks the field sorts against ix's mapping as Elasticsearch does: a text field cannot be
 * sorted on, nor a field ix does not map unless the entry gives `unmapped_type` (its values
 * are then missing). Writes a 400 and returns false on failure. */
bool sc__search_check_sort(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                           sc_index *ix);
/* search_after values -> typed sort keys, encoded with ix's mapping (arena). *out = NULL when
 * there is no search_after. Writes a 400 and returns false on mismatched values. */
bool sc__search_convert_after(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                              sc_index *ix, sc_sort_key **out);
/* Parses one query object with index ix's mapping (the DSL environment of _search) into *out
 * (arena). SC_EPARSE with err filled, SC_ENOMEM / SC_ELIMIT. */
sc_status sc__search_parse_query(sc_arena *arena, sc_index *ix, const json_t *query, sc_query **out,
                                 sc_dsl_error *err) SC_MUST_USE;
/* As sc__search_parse_query, also collecting the tree's `_name`d queries and nested queries'
 * inner_hits into *named (zeroed by the caller; arena). */
sc_status sc__search_parse_query_named(sc_arena *arena, sc_index *ix, const json_t *query,
                                       sc_query **out, sc_dsl_error *err, sc_search_named *named)
    SC_MUST_USE;
/* Builds the query tree of each of the n indices into out[0..n) (arena). With n == 0 the query
 * is still validated. Writes the DSL error into resp and returns false on failure. */
bool sc__search_build_queries(sc_rest_req *req, sc_rest_resp *resp, const json_t *query,
                              sc_index **list, size_t n, sc_query **out);
/* Parses `json` (a query, or a kNN clause when knn; knn k defaults to default_k) with ix's
 * mapping into *out (arena); on failure writes the error into resp and returns false. */
bool sc__search_parse_for_index(sc_rest_req *req, sc_rest_resp *resp, sc_index *ix,
                                const json_t *json, bool knn, uint32_t default_k, sc_query **out);

/* Reads `knn`, `rank` and `retriever` of a search body into sp->vec (a retriever may also set
 * sp->query). Writes a 400 into resp and returns false on a bad shape (sp->vec then empty). */
bool sc__search_parse_vector(sc_rest_req *req, sc_rest_resp *resp, const json_t *body,
                             search_parse *sp);
/* With kNN clauses: ORs them into queries[i] (built from sp->query, or replacing the match_all
 * a missing query gave); with a query too (hybrid), clause j's kNN node of index i goes to
 * (*knn_global)[j * n + i] (arena; *n_knn_global entries, cluster/search.h knn_global);
 * with RRF: builds every sub-search per index into *rrf_queries (sub j of index i at
 * [j * n + i], arena) and *n_rrf. 400 into resp and false on error. */
bool sc__search_build_vector(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                             sc_index **list, size_t n, sc_query **queries, sc_query ***rrf_queries,
                             size_t *n_rrf, sc_query ***knn_global, size_t *n_knn_global);

/* For a search of top-level kNN clauses without a query (and no RRF): the sum of the
 * clauses' k (cluster/search.h knn_cap); 0 otherwise. */
uint32_t sc__search_knn_cap(const search_parse *sp);

/* What search_page.c hands the coordinator for one request (arena; NULL = none). */
typedef struct search_page {
    const sc_shard_collapse *collapse;
    const sc_search_named *named;
    const sc_shard_rescore *const *rescore;
    const sc_hl_spec *const *highlight;
    const float *index_boosts; /* per index, with indices_boost (for the data nodes); or NULL */
} search_page;

/* Reads version, seq_no_primary_term, min_score, rescore and highlight from a search body
 * into sp. Writes a 400 and returns false on bad input. */
bool sc__search_parse_page(sc_rest_req *req, sc_rest_resp *resp, const json_t *body,
                           search_parse *sp);
/* The URL's version / seq_no_primary_term (they override the body). */
void sc__search_page_params(sc_rest_req *req, search_parse *sp);
/* After the query trees of list[0..n) are built (named: their `_name`d queries): applies
 * min_score to queries[] and, unless count, builds the rescorers and highlight specs into
 * *out. Writes the error and returns false on failure. */
bool sc__search_page_build(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                           sc_index **list, size_t n, bool count, sc_query **queries,
                           sc_search_named *named, search_page *out);

/* Validates the body's `suggest` (term suggesters only) into sp->suggest (search_suggest.c).
 * Writes a 400 and returns false on bad input. */
bool sc__search_parse_suggest(sc_rest_req *req, sc_rest_resp *resp, const json_t *v,
                              search_parse *sp);
/* Runs sp->suggest over list[0..n) into sp->suggest_out. Writes an error and returns false on
 * failure. */
/* Candidate generation shared by the term suggester and the phrase suggester's
 * `direct_generator` (search_suggest.c): the options both take and which candidates to keep. */
typedef struct sc__suggest_gen {
    int64_t size, max_edits, prefix_length, min_word_length, min_doc_freq;
    double accuracy;
    int mode; /* suggest_mode: 0 missing, 1 popular, 2 always */
} sc__suggest_gen;
/* Reads the integer o[k] into *out when present; false when it is not an integer in lo..hi. */
bool sc__suggest_int(const json_t *o, const char *k, int64_t lo, int64_t hi, int64_t *out);
/* Elasticsearch's defaults: size 5, max_edits 2, prefix_length 1, min_word_length 4,
 * accuracy 0.5, suggest_mode missing. */
sc__suggest_gen sc__suggest_gen_defaults(void);
/* Reads size (1..max_size), max_edits, prefix_length, min_word_length, min_doc_freq, accuracy,
 * suggest_mode and string_distance of `o` into g (absent ones keep g's values). Unknown keys are
 * the caller's check. Writes a 400 naming `what` and returns false on a bad value. */
bool sc__suggest_gen_parse(sc_rest_req *req, sc_rest_resp *resp, const char *what, const json_t *o,
                           int64_t max_size, sc__suggest_gen *g);
/* Whether a candidate of frequency cand_freq is kept for a word of frequency tf. */
static inline bool sc__suggest_gen_keep(const sc__suggest_gen *g, uint64_t tf, uint64_t cand_freq)
{
    return g->mode == 2 || (g->mode == 0 && tf == 0) || (g->mode == 1 && cand_freq > tf);
}
/* The phrase suggester (search_suggest_phrase.c): checks a `{"text", "phrase": {..}}` entry
 * (400 and false on bad options); runs one into out[name] with the field's analyzer `an`. */
bool sc__suggest_phrase_check(sc_rest_req *req, sc_rest_resp *resp, const json_t *e,
                              const json_t *global_text);
bool sc__suggest_phrase_run(sc_rest_req *req, sc_rest_resp *resp, const char *name, const json_t *e,
                            const json_t *global_text, sc_index **list, size_t n,
                            const sc_analyzer *an, json_t *out);
bool sc__search_run_suggest(sc_rest_req *req, sc_rest_resp *resp, search_parse *sp, sc_index **list,
                            size_t n);

/* Parses the body's `rescore` (an object or an array of them) into sp->rescore. Writes a 400
 * and returns false on bad input (sort + rescore included). */
bool sc__search_parse_rescore(sc_rest_req *req, sc_rest_resp *resp, const json_t *v,
                              search_parse *sp);
/* Builds each index's rescore queries into *out (arena; per index n_rescore entries; NULL
 * without rescore). Writes the error and returns false on failure. */
bool sc__search_build_rescore(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                              sc_index **list, size_t n, const sc_shard_rescore *const **out);

/* Parses the body's `highlight` object into sp->highlight (search_highlight.c). Writes a 400
 * and returns false on bad input. */
bool sc__search_parse_highlight(sc_rest_req *req, sc_rest_resp *resp, const json_t *hl,
                                search_parse *sp);
/* Resolves sp->highlight for each index (field patterns against its mapping, analyzers, the
 * query queries[i] or the highlight_query compiled per field) into *out (arena; NULL when
 * nothing is to be highlighted). Writes an error and returns false on failure. */
bool sc__search_build_highlight(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                                sc_index **list, size_t n, sc_query *const *queries,
                                const sc_hl_spec *const **out);
/* Elasticsearch's simple glob (`*` any run of characters) of pattern p over s. Recursive; for
 * short names. */
bool sc__glob_match(const char *p, const char *s);
/* Writes a hit's "highlight" member when it has snippets. */
void sc__search_write_highlight(sc_jsonw *w, const sc_search_request *sr, const sc_result_hit *h);

/* As sc__search_build_queries, also collecting each index's `_name`d queries into
 * named[0..n) (zeroed by the caller; arena) when named is not NULL; a knn query without `k`
 * takes knn_default_k (the request's size; 0 = 10). */
bool sc__search_build_queries_named(sc_rest_req *req, sc_rest_resp *resp, const json_t *query,
                                    sc_index **list, size_t n, sc_query **out,
                                    sc_search_named *named, uint32_t knn_default_k);

/* Writes a hit's _source bytes, filtered by a `_source` includes/excludes spec (a string, an
 * array or {includes, excludes}; NULL: as stored). */
void sc__search_write_source(sc_jsonw *w, sc_slice src, const json_t *filter);
/* Writes the "_shards" member of a search or count response. */
void sc__search_write_shards(sc_jsonw *w, const sc_search_request *sr, const sc_search_response *r);
/* Writes the body of one search response (used by _search and each _msearch item; a non-zero
 * status_for_msearch adds "status"). */
/* One explanation (search/explain.h) as Elasticsearch writes it: value, description, details. */
void sc__search_write_explanation(sc_jsonw *w, const sc_explanation *x);

/* The response's "profile" member (search_profile.c): r's shard profiles. */
void sc__search_write_profile(sc_jsonw *w, const sc_search_request *sr, const sc_search_response *r,
                              const search_parse *sp);
void sc__search_write_response(sc_jsonw *w, const sc_search_request *sr,
                               const sc_search_response *r, const search_parse *sp,
                               uint64_t took_ms, int status_for_msearch);
/* Writes Elasticsearch's "all shards failed" search_phase_execution_exception into resp. */
void sc__search_write_all_failed(sc_rest_req *req, sc_rest_resp *resp, const sc_search_request *sr,
                                 const sc_search_response *r);

/* sp's runtime_mappings (search_runtime.c): compiled with ix's mapping into *out (n_out of
 * them, req's arena) and *overlay (owned, NULL when there are none): ix's mapping with them
 * added, for parsing the aggregations. A runtime field named in sp's query, post_filter, sort or
 * fields is refused (aggregations only), as is runtime_mappings on a cluster. false after
 * writing a 4xx. */
struct sc_runtime_field;
bool sc__search_runtime_parse(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                              sc_index *ix, struct sc_runtime_field **out, size_t *n_out,
                              sc_mapping **overlay);

#endif
