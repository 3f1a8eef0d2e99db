/* Query execution over one shard's open segments: the entry points the shard and server
 * layers call. A search rewrites the query tree (search/query.h) once per shard into a plan
 * with shard-level statistics (BM25 idf and average length summed over segments, as Lucene's
 * IndexSearcher does), then per segment builds doc-id iterators (search/iter.h) wrapped in the
 * live-docs filter and the cancellation check, and collects top hits by score (ties by
 * shard-global doc id) and/or the total hit count.
 *
 * Thread-safety: an sc_searcher is a read-only view; any number of threads may run searches
 * over the same searcher (and the same segments) at once, each with its own arena, options and
 * result. The query tree is only read. The segments and live-docs bitsets must stay valid
 * (referenced) for the duration of a call. */
#ifndef SC_SEARCH_SEARCHER_H
#define SC_SEARCH_SEARCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/bitset.h"
#include "base/status.h"
#include "index/segment.h"
#include "search/iter.h"
#include "search/query.h"

/* One segment of the shard as the searcher sees it. */
typedef struct sc_searcher_segment {
    const sc_segment *seg;
    const sc_bitset *live; /* live docs (bit set = live), or NULL when nothing is deleted */
    uint32_t n_deleted;    /* docs cleared in `live` (0 when live is NULL) */
} sc_searcher_segment;

/* The shard: its segments in order; segment i's docs have shard-global ids base_i + doc,
 * base_i = sum of n_docs of the segments before it. Borrowed by every call. */
typedef struct sc_searcher {
    const sc_searcher_segment *segs;
    size_t n_segs;
} sc_searcher;

/* track_total_hits: exact count, no count, or exact up to N (Elasticsearch's true/false/N). */
#define SC_TRACK_TOTAL_HITS_ALL INT64_MAX
#define SC_TRACK_TOTAL_HITS_NONE 0
#define SC_TRACK_TOTAL_HITS_DEFAULT 10000

/* The track_total_hits rule, the one place it is written: `*total` docs counted (*gte: at least
 * that many match) reported under `track`. With a cap N, a total of N or more that is larger or
 * a lower bound becomes N with relation "gte"; SC_TRACK_TOTAL_HITS_ALL and _NONE leave it as
 * is. Applied by the collectors to what they counted, by the shard query phase to the shard's
 * total (shard/shard_search.h) and by the coordinator to the sum over shards. */
static inline void sc_search_total_cap(int64_t track, uint64_t *total, bool *gte)
{
    if (track <= 0 || track == SC_TRACK_TOTAL_HITS_ALL)
        return;
    if (*total >= (uint64_t)track && (*total > (uint64_t)track || *gte)) {
        *total = (uint64_t)track;
        *gte = true;
    }
}

typedef struct sc_search_options {
    size_t size;              /* hits to return (10) */
    size_t from;              /* hits to skip (0) */
    int64_t track_total_hits; /* SC_TRACK_TOTAL_HITS_* or N > 0 (default 10,000) */
    sc_cancel_token *cancel;  /* may be NULL; checked per window, per few terms, per leaf */
    /* Testing/profiling: when non-NULL, bulk-fallback counters are accumulated here. */
    sc_iter_stats *stats;
    /* Expansion limit for multi-term queries that score per term (fuzzy keeps its own
     * max_expansions); default SC_QUERY_MAX_CLAUSE_COUNT. */
    uint32_t max_clause_count;
    /* dfs_query_then_fetch: BM25 statistics of the query's terms and fields over every shard
     * of the search (search/term_stats.h; borrowed), used instead of the searcher's own where
     * they have the field / term. NULL: the searcher's own. */
    const struct sc_term_stats *dfs;
    /* Field sorts (search/sort.h): score every hit anyway and track the best score of every
     * match (Elasticsearch's track_scores). Ignored by the score-ordered searches. */
    bool track_scores;
    /* profile: true (search/profile.h): where the query's plan records and times go; NULL
     * (the default) profiles nothing */
    struct sc_search_profile *profile;
} sc_search_options;

typedef struct sc_search_hit {
    uint32_t segment; /* index into searcher->segs */
    uint32_t doc;     /* segment-local */
    uint64_t global_doc;
    float score;
} sc_search_hit;

typedef struct sc_search_result {
    uint64_t total;      /* hits counted (see total_gte) */
    bool total_gte;      /* relation "gte": more hits exist than `total` says */
    bool total_tracked;  /* false when track_total_hits was false */
    sc_search_hit *hits; /* n_hits entries in the caller's arena, best first */
    size_t n_hits;
    float max_score; /* of all hits seen (0 when none) */
    bool timed_out;  /* the deadline passed: results are partial */
    bool cancelled;  /* the token was cancelled: results are partial */
    char error[256]; /* on failure: what went wrong, naming the limit or field */
} sc_search_result;

/* Fills *o with defaults: size 10, from 0, track_total_hits 10,000, no cancel token. */
void sc_search_options_init(sc_search_options *o);

/* Runs `q` over the shard: top from+size hits by score (descending; ties by global doc id
 * ascending), of which the `size` after `from` are returned, and the total as the options ask.
 * Allocations come from `a` (the plan, iterators, bitsets and the hits); the caller frees the
 * arena after reading the result. A cancelled or timed-out query returns SC_OK with
 * timed_out/cancelled set and the hits found so far.
 * Errors: SC_ELIMIT (a multi-term expansion past max_clause_count, max_determinized_states,
 * the arena budget; res->error names the limit), SC_EPARSE / SC_EUNSUPPORTED (a bad regexp),
 * SC_EINVAL (a phrase on a field without positions), SC_ECORRUPT, SC_ENOMEM.
 * Complexity: proportional to the postings visited. */
sc_status sc_search_execute(const sc_searcher *s, const sc_query *q, const sc_search_options *o,
                            sc_arena *a, sc_search_result *res) SC_MUST_USE;

/* Counts matching live docs exactly, without scoring: doc freq for a single term when
 * nothing is deleted; a conjunction of terms by probing the rarest term's docs in the others
 * in bulk (when the next is 5x as frequent) or by ANDed 4,096-doc windows; 4,096-doc bitset
 * windows with popcount otherwise (and leapfrog for sparse conjunctions). res->total holds the
 * count (total_gte false); hits are not filled. Same errors as sc_search_execute. */
sc_status sc_search_count(const sc_searcher *s, const sc_query *q, const sc_search_options *o,
                          sc_arena *a, sc_search_result *res) SC_MUST_USE;

/* Receives every matching live doc of a search, a window at a time (sc_search_collect). */
typedef struct sc_search_collector {
    void *ctx;
    /* Called before the docs of segment seg_i (every segment, even without matches). */
    sc_status (*segment_begin)(void *ctx, size_t seg_i, const sc_segment *seg);
    /* Segment-local doc ids, ascending, 1 <= n <= SC_SEARCH_COLLECT_WINDOW. */
    sc_status (*collect)(void *ctx, const uint32_t *docs, size_t n);
    sc_status (*segment_end)(void *ctx);
    /* Optional (may be NULL): called after segment_begin, on a segment without deletes, when
     * the query is match_all (field NULL: every doc matches) or a single range [lo, hi] on
     * `field` whose points count it exactly (the matches are the docs with a value there).
     * Setting *consumed = true means the collector answered the segment itself (e.g. from
     * points) and no windows are fed for it. */
    sc_status (*segment_whole)(void *ctx, const sc_slice *field, int64_t lo, int64_t hi,
                               bool *consumed);
    /* Optional (may be NULL): called once before the first segment when the query is
     * match_all (field NULL) or a single range [lo, hi] on `field` (deletes not considered:
     * the collector checks the segments itself). */
    sc_status (*query_whole)(void *ctx, const sc_slice *field, int64_t lo, int64_t hi);
} sc_search_collector;

#define SC_SEARCH_COLLECT_WINDOW 4096

/* Feeds every live doc of s matching q to c, segment by segment, in windows of up to 4,096
 * ascending doc ids: match_all as whole ranges (minus deletes), and so a lone range on a field
 * with one value per doc that all but a few docs match (minus those few: Lucene's inverse
 * point-range intersection, see sc_range_segment_excluded); other queries as 4,096-doc bitset
 * windows filled in bulk (into_bitset) and read back. The cancel token is checked per
 * window (a cancelled or timed-out search stops early: SC_OK with res->cancelled/timed_out).
 * res->total is the exact number of docs fed. A callback's non-OK status stops the search
 * and is returned. Same errors as sc_search_execute otherwise. */
sc_status sc_search_collect(const sc_searcher *s, const sc_query *q, const sc_search_options *o,
                            const sc_search_collector *c, sc_arena *a, sc_search_result *res)
    SC_MUST_USE;

#endif
