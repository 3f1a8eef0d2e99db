/* terminate_after for the shard query phase (shard_search.h): a first pass feeds the query's
 * matches in index order (segment by segment, ascending doc ids) until one more than asked has
 * been seen; the searcher view is then cut after the last wanted doc by live-docs masks (the
 * cut segment keeps its docs up to it, later segments none), so that the top docs, the sort,
 * the count and the aggregations of the query phase all see exactly those docs, scored with
 * the shard's unchanged term statistics, as Elasticsearch's early-terminating collector. */
#include "shard/internal.h"

#include <stdio.h>
#include <string.h>

typedef struct cut {
    uint64_t want, seen;
    size_t cur, seg; /* segment being fed; segment of the last wanted doc */
    uint32_t last;   /* the last wanted doc (segment-local) */
    bool more;       /* a doc past the wanted ones matched */
} cut;

static sc_status cut_begin(void *ctx, size_t seg_i, const sc_segment *seg)
{
    (void)seg;
    ((cut *)ctx)->cur = seg_i;
    return SC_OK;
}

/* Stops the pass (SC_ELIMIT, recognized by c->more) at the first doc past the wanted ones. */
static sc_status cut_collect(void *ctx, const uint32_t *docs, size_t n)
{
    cut *c = ctx;
    if (c->seen + n > c->want) {
        size_t take = (size_t)(c->want - c->seen);
        if (take) {
            c->last = docs[take - 1];
            c->seg = c->cur;
        }
        c->seen = c->want;
        c->more = true;
        return SC_ELIMIT;
    }
    c->seen += n;
    c->last = docs[n - 1];
    c->seg = c->cur;
    return SC_OK;
}

static sc_status cut_end(void *ctx)
{
    (void)ctx;
    return SC_OK;
}

/* A live-docs set of n_docs bits for segs[i] keeping only its live docs below `upto`. */
static sc_status mask_segment(sc_searcher_segment *ss, uint32_t upto, sc_arena *a)
{
    uint32_t n_docs = sc_segment_n_docs(ss->seg);
    size_t nw = sc_bitset_words_for(n_docs);
    sc_bitset *b = sc_arena_calloc(a, 1, sizeof *b);
    uint64_t *w = sc_arena_calloc(a, nw ? nw : 1, sizeof *w);
    if (!b || !w)
        return SC_ENOMEM;
    b->words = w;
    b->n_bits = n_docs;
    if (upto > n_docs)
        upto = n_docs;
    if (ss->live) {
        memcpy(w, ss->live->words, nw * sizeof *w);
        if (upto < n_docs) {
            uint64_t *keep = w + upto / 64;
            *keep &= upto % 64 ? (~(uint64_t)0 >> (64 - upto % 64)) : 0;
            memset(keep + 1, 0, (nw - upto / 64 - 1) * sizeof *w);
        }
    } else if (upto) {
        sc_bitset_set_range(b, 0, upto);
    }
    ss->live = b;
    ss->n_deleted = n_docs - (uint32_t)sc_bitset_count(b);
    return SC_OK;
}

sc_status sc__shard_terminate_after(const sc_query *q, uint64_t n, sc_cancel_token *token,
                                    sc_searcher_segment *segs, const sc_searcher *s,
                                    sc_arena *scratch, bool *terminated, char *why, size_t why_size)
{
    *terminated = false;
    cut c = {.want = n};
    sc_search_collector col = {
        .ctx = &c, .segment_begin = cut_begin, .collect = cut_collect, .segment_end = cut_end};
    sc_search_options o;
    sc_search_options_init(&o);
    o.cancel = token;
    o.track_total_hits = SC_TRACK_TOTAL_HITS_NONE;
    sc_search_result sr;
    memset(&sr, 0, sizeof sr);
    sc_status st = sc_search_collect(s, q, &o, &col, scratch, &sr);
    if (st == SC_ELIMIT && c.more)
        st = SC_OK;
    if (st != SC_OK) {
        snprintf(why, why_size, "%s", sr.error);
        return st;
    }
    if (!c.more || sr.cancelled || sr.timed_out)
        return SC_OK; /* everything matching is wanted (or the query phase will stop anyway) */
    *terminated = true;
    for (size_t i = c.seg; i < s->n_segs; i++)
        SC_TRY(mask_segment(&segs[i], i == c.seg ? c.last + 1 : 0, scratch));
    return SC_OK;
}
