/* Private to src/search: the shard-level plan a query tree is rewritten into (statistics
 * resolved, multi-term patterns compiled, fuzzy terms selected) and the per-segment iterator
 * builder that consumes it. */
#ifndef SC_SEARCH_INTERNAL_H
#define SC_SEARCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/bitset.h"
#include "index/dfa.h"
#include "index/terms.h"
#include "search/bm25.h"
#include "search/iter.h"
#include "search/query.h"
#include "search/searcher.h"

typedef enum sc__plan_kind {
    SC__PLAN_NONE,    /* matches nothing */
    SC__PLAN_ALL,     /* every doc, constant score */
    SC__PLAN_TERM,    /* BM25 term (bm25 NULL when not scoring) */
    SC__PLAN_PHRASE,  /* BM25 phrase */
    SC__PLAN_TERMSET, /* constant score over a set of terms: a list or an automaton */
    SC__PLAN_EXISTS,  /* constant score: docs with a value in the field */
    SC__PLAN_BOOL,
    SC__PLAN_DISMAX,
    SC__PLAN_BOOSTING,
    SC__PLAN_CONST, /* child's docs, constant score */
    SC__PLAN_RANGE, /* constant score: numeric values in ranges (search/range.h) */
    SC__PLAN_GEO,   /* constant score: geo points in a shape (search/geo.h) */
    SC__PLAN_DOCS,  /* fixed docs with scores per segment (a kNN query's neighbours) */
    SC__PLAN_FUNCTION_SCORE, /* child rescored by fs's functions; filter[i]: function i's
                                filter plan (NULL = all docs) */
    SC__PLAN_NESTED,         /* block join: roots of the child plan's docs (children of one path) */
} sc__plan_kind;

/* A term's entry in one segment, as a plan read it for its statistics. */
typedef struct sc__seg_term {
    bool found;
    sc_term_info ti;
} sc__seg_term;

typedef struct sc__plan sc__plan;
struct sc__plan {
    sc__plan_kind kind;
    bool scoring;
    float score; /* constant score for ALL/TERMSET/EXISTS/CONST */
    sc_slice field;
    /* TERM: term; PHRASE/TERMSET: terms (+ positions for phrases) */
    sc_slice term;
    sc_slice *terms;
    uint32_t *positions;
    size_t n_terms;
    uint32_t slop;
    const sc_dfa *dfa; /* TERMSET by automaton (terms NULL) */
    sc_bm25 *bm25;     /* TERM/PHRASE when scoring */
    uint64_t df;       /* TERM when scoring: the doc freq its idf was computed from */
    /* TERM: the term's entry in each segment of seg_terms_of (the searcher the plan was built
     * on) as its doc freq read them, so that the iterators do not look the term up again;
     * PHRASE: the same for each term, term-major (n_terms x the searcher's segments); NULL
     * when not read here (match-only term plans, dfs statistics) */
    const sc__seg_term *seg_terms;
    const sc_searcher *seg_terms_of;
    sc_bm25_field_stats fstats; /* TERM/PHRASE when scoring: the field statistics used */
    /* BOOL: children by occur; DISMAX: should = children; BOOSTING: must[0], must_not[0] */
    sc__plan **must, **should, **must_not, **filter;
    size_t n_must, n_should, n_must_not, n_filter;
    uint32_t min_should;    /* effective minimum_should_match */
    float tie_breaker;      /* DISMAX; BOOSTING: negative_boost */
    sc__plan *child;        /* CONST */
    const int64_t *lo, *hi; /* RANGE: n_ranges inclusive ranges */
    size_t n_ranges;
    const sc_geo_shape *geo; /* GEO */
    /* DOCS: per segment, seg_n[i] docs ascending (seg_docs[i]) with their scores */
    uint32_t **seg_docs;
    float **seg_scores;
    size_t *seg_n;
    const sc_query *fs;      /* FUNCTION_SCORE: the query node (functions and modes) */
    sc_nested_score_mode nested_mode; /* NESTED: how children's scores combine; score = boost */
    const sc_score_function *fns; /* FUNCTION_SCORE: fs's functions, rank_feature default
                                     pivots computed for this shard */
    struct sc_profile_node *prof; /* profile: true: this node's record (search/profile.h) */
};

/* Per-search context shared by plan building and iterator building. */
typedef struct sc__search_ctx {
    const sc_searcher *s;
    const sc_search_options *o;
    sc_arena *a;
    sc_search_result *res;
    sc_iter_stats *stats;
    uint32_t max_clause_count;
    uint64_t terms_walked; /* for cancellation checks every few terms */
    bool exhaustive;       /* every match will be visited (exact totals): prefer bulk sets */
    uint64_t range_needed; /* execute with bounded totals: matches it needs (0 = all); ranges
                              then may pick a lazy doc-values scan over building a bitset */
    bool profiled;         /* profile: the query's plan has its records */
    sc_status script_st;   /* a score script's run-time error (message in res->error): the
                              drivers return it once the iteration stops */
} sc__search_ctx;

/* profile: true (search/profile.h): a record per node of plan, linked from each node (prof)
 * and set as ctx->o->profile->query. */
sc_status sc__profile_attach(sc__search_ctx *ctx, sc__plan *plan) SC_MUST_USE;
/* The plan node as explanations describe it (search/explain.c), in arena a; NULL on OOM. */
const char *sc__plan_describe(sc_arena *a, const sc__plan *p);

/* Rewrites q into a plan (allocated in ctx->a); *out is never NULL on SC_OK. `scoring` false
 * builds a match-only plan (counts). With o->profile, the first plan a search context builds
 * (its query's) gets its profile records and the planning time. */
sc_status sc__plan_build(sc__search_ctx *ctx, const sc_query *q, bool scoring, sc__plan **out)
    SC_MUST_USE;

/* A kNN query's plan (knn.c): the shard's nearest neighbours found now, over every segment
 * (filter applied during the graph search, deletes respected), as a DOCS plan. */
sc_status sc__knn_plan(sc__search_ctx *ctx, const sc_query *q, float boost, bool scoring,
                       sc__plan **out) SC_MUST_USE;

/* Builds the iterator of plan p over segment seg_i (NULL when it can match nothing there). */
sc_status sc__plan_iter(sc__search_ctx *ctx, const sc__plan *p, size_t seg_i, sc_doc_iter **out)
    SC_MUST_USE;

/* When `it` is an unpositioned sum disjunction (min_match <= 1) whose children all score in
 * bulk natively, sets its children and returns true (the collector may then drive them
 * itself, window by window, as Lucene's BooleanScorer does for exhaustive disjunctions). */
bool sc__iter_disjunction_batch_children(sc_doc_iter *it, sc_doc_iter ***children, size_t *n);
/* Two-phase phrases (Lucene's TwoPhaseIterator): a conjunction turns an unpositioned phrase
 * child into its approximation (next/advance stop on the docs of the phrase's cheapest term;
 * false if `it` is not such a phrase) and calls confirm on a doc all its clauses agree on: the
 * other terms move and positions are read (and the phrase frequency set for score) only
 * there. */
bool sc__iter_phrase_make_approximate(sc_doc_iter *it);
bool sc__iter_phrase_confirm(sc_doc_iter *it);
/* If `it` is an unpositioned conjunction of >= 2 unpositioned children that all score in
 * bulk: its children (by cost, the lead first) and their scoring flags, for the exhaustive
 * batch-merge collector. The conjunction scores as the (float) double sum in that order. */
bool sc__iter_conjunction_batch_children(sc_doc_iter *it, sc_doc_iter ***children,
                                         const bool **scoring, size_t *n);

/* The cursor, BM25 (NULL: not scoring) and norms (may be NULL) of an unpositioned term
 * iterator, or NULL for other kinds and positioned terms. bm25/norms may be NULL. The caller
 * may then move the cursor itself (the iterator is not used any more). */
sc_postings *sc__iter_term_cursor(sc_doc_iter *it, const sc_bm25 **bm25, const uint8_t **norms);

/* A conjunction of terms driven block by block (conj_terms.c): the rarest term's docs, 128 at
 * a time, probed in bulk in the others (sc_postings_filter), the survivors scored in one loop
 * with the conjunction's sums (double, in its child order). */
typedef struct sc__conj_terms sc__conj_terms;
/* NULL unless `it` is an unpositioned conjunction of >= 2 unpositioned term iterators (or on
 * arena exhaustion). Takes over their cursors: `it` must not be used afterwards. Scores are
 * computed only when `scores`. Term leaves' cancel checks are bypassed: the caller checks its
 * token between batches. */
sc__conj_terms *sc__conj_terms_new(sc_arena *a, sc_doc_iter *it, bool scores);
/* doc_freq of clause i in cost order (0 = the lead), 0 past the last. */
uint64_t sc__conj_terms_cost(const sc__conj_terms *ct, size_t i);
/* The matches among the lead's next (up to) 128 docs into docs (and their scores when the
 * conjunction scores and `scores` is non-NULL), *n_out of them (possibly 0); false once the
 * conjunction is exhausted (*n_out then 0). Live docs are the caller's. */
bool sc__conj_terms_next(sc__conj_terms *ct, uint32_t *docs, float *scores, size_t *n_out);

/* Counts the conjunction (unused, as from sc__conj_terms_new(.., false)) in 4,096-doc windows
 * instead: each clause's docs of the window into a bitset in bulk (sc_postings_into_bitset),
 * ANDed, ANDed with `live` (NULL: no deletes), popcounted; the next window starts at the
 * furthest cursor. For clauses of similar frequency (the lead's batches probe one doc in a
 * few). acc and tmp: scratch of 65 words each. The token is checked per window. */
uint64_t sc__conj_terms_count_windows(sc__conj_terms *ct, uint32_t n_docs, const sc_bitset *live,
                                      uint64_t *acc, uint64_t *tmp, sc_cancel_token *cancel);

/* The parts of an unpositioned exclusion (include minus exclude) / required + optional
 * iterator (false for other kinds and positioned ones). */
bool sc__iter_exclusion_parts(sc_doc_iter *it, sc_doc_iter **include, sc_doc_iter **exclude);
bool sc__iter_req_opt_parts(sc_doc_iter *it, sc_doc_iter **required, sc_doc_iter **optional);

/* Required term(s) + optional terms, minus excluded terms, driven block by block
 * (reqopt_terms.c): the required side's next 128 docs (a term's batch, or a conjunction of
 * terms through sc__conj_terms) with their scores; the excluded terms' cursors probed for
 * them in bulk (sc_postings_filter) and their docs dropped; each optional term's cursor probed
 * for the rest, its frequencies scored and summed in double in the disjunction's child order,
 * cast, and added to the required score in float (ro_score's order), so scores equal the
 * iterator tree's bit for bit. */
typedef struct sc__reqopt_terms sc__reqopt_terms;
/* NULL unless `it` is exclusion(X, E) or X, where X is req_opt(R, O) or (with E) R; R is an
 * unpositioned scoring term or a conjunction of terms whose lead matches under a third of
 * the segment's n_docs; O and E are terms or sum disjunctions (min_match 1) of terms. Takes
 * over their cursors: `it` must not be used afterwards (unless NULL was returned). With
 * `bounded` (totals counted only so far), NULL for a conjunction minus exclusions. Term
 * leaves' cancel checks are bypassed: the caller checks its token between batches. */
sc__reqopt_terms *sc__reqopt_terms_new(sc_arena *a, sc_doc_iter *it, uint32_t n_docs, bool bounded);
/* Once the total is counted far enough (bounded totals): the required term's blocks whose
 * score bound plus the optional terms' cannot beat min_score are skipped from the next batch
 * on (docs scoring exactly min_score can be dropped: ties go to lower docs, visited first).
 * No effect when the required side is a conjunction. */
void sc__reqopt_terms_set_min_score(sc__reqopt_terms *r, float min_score);
/* The matches among the required side's next (up to) 128 docs, scored, into docs / scores
 * (room for 128), *n_out of them (possibly 0); false once exhausted. Live docs are the
 * caller's. */
bool sc__reqopt_terms_next(sc__reqopt_terms *r, uint32_t *docs, float *scores, size_t *n_out);

/* A sum disjunction of terms for top-k without exact totals (disj_terms.c): block-max
 * MaxScore over windows that end at the clauses' block boundaries; the clauses that cannot
 * beat the threshold together are only probed for the others' docs, windows where none can
 * are skipped. Scores equal the iterator tree's (double sums in child order, cast). */
typedef struct sc__disj_terms sc__disj_terms;
#define SC__DISJ_TERMS_MAX_CLAUSES 16
/* NULL unless `it` is an unpositioned sum disjunction (min_match 1) of 2 to
 * SC__DISJ_TERMS_MAX_CLAUSES unpositioned scoring term iterators (or on arena exhaustion).
 * Takes over their cursors: `it` must not be used afterwards (unless NULL was returned). Term
 * leaves' cancel checks are bypassed: the caller checks its token between calls. `reuse`
 * (NULL, or the state of an earlier segment of the same search, no longer used) lends its
 * buffers when they are large enough, so a search over many segments allocates them once. */
sc__disj_terms *sc__disj_terms_new(sc_arena *a, sc_doc_iter *it, sc__disj_terms *reuse);
/* From the next call on, docs scoring at most min_score may be left out (ties go to lower
 * docs, visited first). Only grows. */
void sc__disj_terms_set_min_score(sc__disj_terms *dt, float min_score);
/* The next window's matches that may beat the minimum score (all of them before one is set),
 * in doc order with their scores, in arrays owned by dt (valid until the next call); *n_out of
 * them, possibly 0. False once exhausted. Live docs are the caller's. */
bool sc__disj_terms_next(sc__disj_terms *dt, const uint32_t **docs, const float **scores,
                         size_t *n_out);

/* Writes an error message into ctx->res->error and returns st. */
/* Shared by the searcher's drivers (searcher.c, count.c): context setup, the out-of-memory
 * and corrupt-field errors, live-docs + cancel wrapping of a segment's iterator, and the
 * cancelled / timed_out flags of the result. */
void sc__search_ctx_init(sc__search_ctx *ctx, const sc_searcher *s, const sc_search_options *o,
                         sc_arena *a, sc_search_result *res);
sc_status sc__search_oom(sc__search_ctx *ctx);
sc_status sc__search_corrupt(sc__search_ctx *ctx, sc_status st, sc_slice field);
sc_doc_iter *sc__search_wrap_segment(sc__search_ctx *ctx, sc_doc_iter *it, size_t seg_i);
void sc__search_finish_flags(sc__search_ctx *ctx);
sc_status sc__search_fail(sc__search_ctx *ctx, sc_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Whether the cancel token (if any) fired; checked between windows and every few terms. */
bool sc__search_cancelled(sc__search_ctx *ctx, bool check_clock);

#endif
