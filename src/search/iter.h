/* The doc-id iterator: one vtable that every kind of matcher and scorer implements fully
 * (DESIGN.md §4, lessons 1 and 3). Bulk operations (into_bitset, run_end, next_batch) are
 * first-class members, and wrappers forward all of them. A kind that has no specialised bulk
 * code uses the named generic fallback (sc_doc_iter_fallback_*), which counts its calls in the
 * iterator's stats, and says so in its ops' `native` mask; tests/unit/search/iter_test.c walks
 * every kind under every wrapper and fails if a wrapper hides a native bulk path.
 *
 * Kinds: term postings, all docs, bitset, conjunction, disjunction (sum, min-should-match,
 * dis_max), exclusion, required+optional, phrase (exact and sloppy), constant score, boosting,
 * term union (a few terms' postings as one constant-score set);
 * wrappers: live docs, cancellation, profiling. Iterators live in a per-query arena and are
 * used by one thread. Doc ids are segment-local. */
#ifndef SC_SEARCH_ITER_H
#define SC_SEARCH_ITER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/bitset.h"
#include "index/docvalues.h"
#include "index/postings.h"
#include "search/bm25.h"
#include "search/function_score.h"
#include "search/query.h"
#include "search/score_script.h"

#define SC_DOC_END UINT32_MAX

typedef struct sc_doc_iter sc_doc_iter;

/* Which bulk ops a kind implements itself (the rest use the counted generic fallback). */
enum {
    SC_ITER_NATIVE_INTO_BITSET = 1u << 0,
    SC_ITER_NATIVE_RUN_END = 1u << 1,
    SC_ITER_NATIVE_NEXT_BATCH = 1u << 2,
    SC_ITER_NATIVE_SCORE_BATCH = 1u << 3,
};

/* Method table. Pre/post-conditions (as Lucene's DocIdSetIterator and Scorer):
 * - next: moves to the first doc after the current one (the first doc when unpositioned);
 *   returns it, or SC_DOC_END. `doc` always holds the current doc.
 * - advance(target): moves to the first doc >= target; target must be > doc (callers never
 *   advance backwards). Returns the new doc or SC_DOC_END.
 * - cost: an upper bound of the number of docs it can match (for planning).
 * - into_bitset(upto, bs, base): sets bit d - base for the current doc (the first doc if
 *   unpositioned) and every later matching doc d < upto; leaves the iterator on the first
 *   doc >= upto (or END). The caller guarantees bits [base, upto) exist and that the current
 *   doc is >= base.
 * - run_end: requires a positioned iterator; returns r > doc such that every doc in [doc, r)
 *   matches (a lower bound of the real run).
 * - next_batch(docs, freqs, max): the next up to `max` docs after the current one (and per-doc
 *   frequencies when freqs is non-NULL: term frequency for terms, phrase frequency rounded
 *   for phrases, 1 otherwise); returns how many (0 at the end); doc becomes the last one.
 * - score: the score of the current doc (positioned, not END).
 * - max_score(upto): an upper bound of score() over docs in [doc, upto].
 * - advance_shallow(target): without moving, returns the last doc of the block (window) that
 *   holds target, so max_score(that) is a block bound; SC_DOC_END when past the end.
 * - set_min_score(min): from now on the caller (a top-k collector) only wants docs scoring
 *   more than `min`; the iterator may skip any doc whose score cannot exceed it (disjunctions
 *   do block-max MaxScore). Called between moves; min only grows. Kinds that cannot use it
 *   ignore it; wrappers forward it. After it, next() no longer returns every match.
 * - score_batch(docs, scores, max): as next_batch, with each doc's score instead of its
 *   frequency (the collectors' window-at-a-time path). */
typedef struct sc_doc_iter_ops {
    const char *name; /* kind name, e.g. "term", "conjunction", "live_docs" */
    uint32_t native;  /* SC_ITER_NATIVE_* */
    uint32_t (*next)(sc_doc_iter *it);
    uint32_t (*advance)(sc_doc_iter *it, uint32_t target);
    uint64_t (*cost)(const sc_doc_iter *it);
    void (*into_bitset)(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base);
    uint32_t (*run_end)(sc_doc_iter *it);
    size_t (*next_batch)(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs, size_t max);
    float (*score)(sc_doc_iter *it);
    float (*max_score)(sc_doc_iter *it, uint32_t upto);
    uint32_t (*advance_shallow)(sc_doc_iter *it, uint32_t target);
    void (*set_min_score)(sc_doc_iter *it, float min_score);
    size_t (*score_batch)(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max);
} sc_doc_iter_ops;

/* Counters shared by the iterators of one query (single-threaded use). */
typedef struct sc_iter_stats {
    uint64_t fallback_into_bitset;
    uint64_t fallback_run_end;
    uint64_t fallback_next_batch;
    uint64_t fallback_score_batch;
    uint64_t phrase_position_checks; /* docs whose positions a phrase read */
} sc_iter_stats;

/* The common head of every iterator. */
struct sc_doc_iter {
    const sc_doc_iter_ops *ops;
    uint32_t doc;         /* current doc; SC_DOC_END when exhausted; unpositioned: see below */
    bool positioned;      /* next/advance has been called */
    sc_iter_stats *stats; /* may be NULL */
};

/* Dispatch helpers. */
static inline uint32_t sc_doc_iter_next(sc_doc_iter *it)
{
    return it->ops->next(it);
}
static inline uint32_t sc_doc_iter_advance(sc_doc_iter *it, uint32_t target)
{
    return it->ops->advance(it, target);
}
static inline uint64_t sc_doc_iter_cost(const sc_doc_iter *it)
{
    return it->ops->cost(it);
}
static inline void sc_doc_iter_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs,
                                           uint32_t base)
{
    it->ops->into_bitset(it, upto, bs, base);
}
static inline uint32_t sc_doc_iter_run_end(sc_doc_iter *it)
{
    return it->ops->run_end(it);
}
static inline size_t sc_doc_iter_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs,
                                            size_t max)
{
    return it->ops->next_batch(it, docs, freqs, max);
}
static inline float sc_doc_iter_score(sc_doc_iter *it)
{
    return it->ops->score(it);
}
static inline float sc_doc_iter_max_score(sc_doc_iter *it, uint32_t upto)
{
    return it->ops->max_score(it, upto);
}
static inline uint32_t sc_doc_iter_advance_shallow(sc_doc_iter *it, uint32_t target)
{
    return it->ops->advance_shallow(it, target);
}
static inline void sc_doc_iter_set_min_score(sc_doc_iter *it, float min_score)
{
    it->ops->set_min_score(it, min_score);
}
static inline size_t sc_doc_iter_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores,
                                             size_t max)
{
    return it->ops->score_batch(it, docs, scores, max);
}

/* The set_min_score of kinds that cannot skip by score. */
void sc_doc_iter_ignore_min_score(sc_doc_iter *it, float min_score);

/* The generic fallbacks, built from next/advance; each counts a call in it->stats. */
void sc_doc_iter_fallback_into_bitset(sc_doc_iter *it, uint32_t upto, sc_bitset *bs, uint32_t base);
uint32_t sc_doc_iter_fallback_run_end(sc_doc_iter *it);
size_t sc_doc_iter_fallback_next_batch(sc_doc_iter *it, uint32_t *docs, uint32_t *freqs,
                                       size_t max);
size_t sc_doc_iter_fallback_score_batch(sc_doc_iter *it, uint32_t *docs, float *scores, size_t max);

/* ---- cancellation ----------------------------------------------------------------------- */

/* A per-request cancel token: a flag any thread may set (relaxed atomic) and a deadline on the
 * monotonic clock (sc_clock_now_ns; 0 = none). */
typedef struct sc_cancel_token {
    _Atomic uint32_t cancelled;
    uint64_t deadline_ns;
    _Atomic uint32_t fired; /* set by checks: 1 cancelled, 2 timed out */
} sc_cancel_token;

/* Initializes a token with a deadline (0 = none). */
void sc_cancel_token_init(sc_cancel_token *t, uint64_t deadline_ns);

/* Requests cancellation. Thread-safe, async-signal-safe. */
static inline void sc_cancel_token_cancel(sc_cancel_token *t)
{
    atomic_store_explicit(&t->cancelled, 1, memory_order_relaxed);
}

/* The check: one relaxed load, plus a clock read when `check_clock` (callers read the clock
 * once per bulk window or every few thousand docs). Returns true (and records why in `fired`)
 * when the query must stop. No allocation, no lock.
 * Compile-time switch for the overhead benchmark (bench/query_bench.sh): with
 * SC_SEARCH_NO_CANCEL_CHECKS defined for the whole build, every check is the constant false
 * and neither the wrapper nor the leaf checks are installed, so the compiler removes them all.
 * Never defined in real builds (a query could then not be cancelled). */
#ifdef SC_SEARCH_NO_CANCEL_CHECKS
static inline bool sc_cancel_token_check(sc_cancel_token *t, bool check_clock)
{
    (void)t;
    (void)check_clock;
    return false;
}
#else
bool sc_cancel_token_check(sc_cancel_token *t, bool check_clock);
#endif

/* ---- constructors (all allocate in `a`; NULL on exhaustion) ------------------------------ */

/* Term postings over a cursor the caller reset (the iterator takes the cursor by value into
 * the arena). bm25 may be NULL (not scoring: score() returns 0); norms may be NULL (norm 1). */
sc_doc_iter *sc_iter_term(sc_arena *a, const sc_postings *cursor, const sc_bm25 *bm25,
                          const uint8_t *norms);
/* Constant-score union of the postings of `n` terms of field f of seg (iter_union.c): windows
 * of docs ORed term by term into a bitset and read back in order, for multi-term queries of a
 * few terms that stop early (a top-k). The cursors live in `a`. SC_ENOMEM, or a postings
 * reset error (SC_ECORRUPT). */
sc_status sc_iter_term_union(sc_arena *a, const sc_segment *seg, const sc_field_info *f,
                             const sc_term_info *terms, size_t n, float score, sc_doc_iter **out)
    SC_MUST_USE;
/* Makes a term or phrase iterator check `token` itself (per postings block / every 256
 * candidates), so one next() over a long list without matches (a sparse conjunction, a rare
 * phrase) still stops within milliseconds. It then behaves as exhausted. No-op on other
 * kinds. */
void sc_iter_leaf_set_cancel(sc_doc_iter *it, sc_cancel_token *token);

/* Every doc in [0, n_docs), score `score`. */
sc_doc_iter *sc_iter_all(sc_arena *a, uint32_t n_docs, float score);
/* The set bits of bs (doc ids < n_docs), score `score`. bs is borrowed. */
/* The docs[0, n) (strictly increasing) with scores[i] each (arrays borrowed; kNN results). */
sc_doc_iter *sc_iter_docs(sc_arena *a, const uint32_t *docs, const float *scores, size_t n);
sc_doc_iter *sc_iter_bitset(sc_arena *a, const sc_bitset *bs, uint32_t n_docs, float score);
/* The child's docs with a constant score. */
sc_doc_iter *sc_iter_constant(sc_arena *a, sc_doc_iter *child, float score);
/* All children match; score = (float) double sum of the `n_scoring` first children's scores
 * (the rest are filters). n >= 1. */
sc_doc_iter *sc_iter_conjunction(sc_arena *a, sc_doc_iter **children, size_t n, size_t n_scoring);
/* Chooses the conjunction's into_bitset strategy: dense (per-child 4,096-doc windows ANDed,
 * for children that match a large share of the segment) or leapfrog (the default). A no-op on
 * other kinds; allocation failure keeps leapfrog. */
void sc_iter_conjunction_set_dense(sc_doc_iter *conj, sc_arena *a, bool dense);

/* Disjunction modes. */
typedef enum sc_disj_mode {
    SC_DISJ_SUM, /* (float) double sum of matching children's scores */
    SC_DISJ_MAX, /* dis_max: max + tie_breaker * sum of the others (Lucene's order) */
} sc_disj_mode;
/* At least `min_match` (>= 1) children match. */
sc_doc_iter *sc_iter_disjunction(sc_arena *a, sc_doc_iter **children, size_t n, uint32_t min_match,
                                 sc_disj_mode mode, float tie_breaker);
/* include's docs that `exclude` does not match; score from include. */
sc_doc_iter *sc_iter_exclusion(sc_arena *a, sc_doc_iter *include, sc_doc_iter *exclude);
/* required's docs; score = required + optional (float add, Lucene's ReqOptSumScorer) when
 * optional also matches. */
sc_doc_iter *sc_iter_req_opt(sc_arena *a, sc_doc_iter *required, sc_doc_iter *optional);
/* positive's docs; score multiplied by factor where negative matches (ES boosting). */
sc_doc_iter *sc_iter_boosting(sc_arena *a, sc_doc_iter *positive, sc_doc_iter *negative,
                              float factor);
/* What the function_score iterator needs for one segment (arrays of n_fns, borrowed). */
typedef struct sc_iter_function_score_args {
    const sc_score_function *fns;
    size_t n_fns;
    sc_doc_iter **filters;   /* NULL entry: the function applies to every doc */
    const bool *no_match;    /* the function's filter matches nothing in this segment */
    const sc_dv_numeric *dv; /* the function's field's doc values, when has_dv */
    const bool *has_dv;
    uint32_t doc_base; /* shard-global id of the segment's doc 0 (random_score by doc) */
    sc_sf_score_mode score_mode;
    sc_sf_boost_mode boost_mode;
    float max_boost;
    bool has_min_score;
    float min_score;
    sc_score_script_seg **scripts; /* per SC_SF_SCRIPT function: its segment state */
    sc_status *err_st;             /* a script's run-time error: set, and the iterator ends */
    char *err_msg;                 /* err_cap bytes */
    size_t err_cap;
} sc_iter_function_score_args;
/* child's docs scored by function_score (search/function_score.h); with has_min_score only
 * those scoring at least min_score. max_score is unbounded, so no block-max pruning below it. */
sc_doc_iter *sc_iter_function_score(sc_arena *a, sc_doc_iter *child,
                                    const sc_iter_function_score_args *args);
/* Block join (iter_nested.c, Lucene's ToParentBlockJoinScorer): the roots (set bits of
 * `parents`, n_docs bits, borrowed) of the docs `child` matches, each root being the first set
 * bit at or after a child doc; score = `mode` over the root's matching children's scores
 * (double accumulation, avg = sum / count, NONE = 0), cast to float, times `boost`. child must
 * match only non-root docs. */
sc_doc_iter *sc_iter_nested(sc_arena *a, sc_doc_iter *child, const sc_bitset *parents,
                            uint32_t n_docs, sc_nested_score_mode mode, float boost);
/* A phrase over n >= 2 term cursors (already reset with SC_POSTINGS_POSITIONS) at query
 * positions offsets[i]; slop 0 = exact (Lucene's ExactPhraseMatcher), else sloppy
 * (SloppyPhraseMatcher, repeated terms included). bm25 may be NULL. */
sc_doc_iter *sc_iter_phrase(sc_arena *a, const sc_postings *cursors, const uint32_t *offsets,
                            size_t n, uint32_t slop, const sc_bm25 *bm25, const uint8_t *norms);

/* Wrappers: forward every operation, bulk ones included. */
/* Skips docs whose bit is clear in `live` (segment live docs, borrowed). */
sc_doc_iter *sc_iter_live_docs(sc_arena *a, sc_doc_iter *child, const sc_bitset *live);
/* Stops (returns END) once the token fires: the flag on every bulk call and every 4,096
 * single-doc calls; the clock as often, except into_bitset (a count's 4,096-doc window) and
 * score_batch, which read it every 8 and 32 calls. */
sc_doc_iter *sc_iter_cancel(sc_arena *a, sc_doc_iter *child, sc_cancel_token *token);
/* Counts calls per operation into *counts (indexed by SC_PROF_*). */
enum {
    SC_PROF_NEXT,
    SC_PROF_ADVANCE,
    SC_PROF_INTO_BITSET,
    SC_PROF_RUN_END,
    SC_PROF_NEXT_BATCH,
    SC_PROF_SCORE,
    SC_PROF_COUNT_
};
sc_doc_iter *sc_iter_profile(sc_arena *a, sc_doc_iter *child, uint64_t *counts);
/* The same, also adding each call's wall time (monotonic clock, ns, the child's work included)
 * into times_ns[op] (profile: true). */
sc_doc_iter *sc_iter_profile_timed(sc_arena *a, sc_doc_iter *child, uint64_t *counts,
                                   uint64_t *times_ns);

/* Sets the stats pointer of it (not of its children: constructors of composite kinds copy
 * their first child's stats). */
static inline void sc_doc_iter_set_stats(sc_doc_iter *it, sc_iter_stats *stats)
{
    it->stats = stats;
}

#endif
