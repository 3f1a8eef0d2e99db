/* sc_search_collect (search/searcher.h): every matching live doc of a shard, fed to a
 * collector in windows of ascending doc ids — the driver of aggregations. match_all feeds
 * whole ranges, and so does a lone range that every doc but a few matches (those few taken
 * out); other queries fill 4,096-doc bitset windows in bulk and read them back. */
#include <string.h>

#include "base/bitset.h"
#include "search/internal.h"
#include "search/range.h"

/* The set bits of words[0..n_words) as doc ids base + i into docs; returns how many. */
static size_t extract(const uint64_t *words, size_t n_words, uint32_t base, uint32_t *docs)
{
    size_t n = 0;
    for (size_t w = 0; w < n_words; w++) {
        uint64_t x = words[w];
        uint32_t b = base + (uint32_t)(w * 64);
        while (x) {
            docs[n++] = b + (uint32_t)__builtin_ctzll(x);
            x &= x - 1;
        }
    }
    return n;
}

/* Every live doc of the segment but the excluded ones (ex[0..n_ex), ascending; a range that
 * matches all but a few docs, see sc_range_segment_excluded), window by window. */
static sc_status collect_all(const sc_searcher_segment *ss, const sc_search_collector *c,
                             uint32_t *docs, const uint32_t *ex, size_t n_ex,
                             sc_cancel_token *cancel, uint64_t *total)
{
    uint32_t n_docs = sc_segment_n_docs(ss->seg);
    bool deletes = ss->live && ss->n_deleted;
    size_t xi = 0;
    for (uint32_t base = 0; base < n_docs; base += SC_SEARCH_COLLECT_WINDOW) {
        uint32_t end =
            n_docs - base > SC_SEARCH_COLLECT_WINDOW ? base + SC_SEARCH_COLLECT_WINDOW : n_docs;
        bool excl = xi < n_ex && ex[xi] < end;
        size_t n;
        if (deletes || excl) {
            /* window bases are multiples of 64: whole words of the live set, the tail masked */
            size_t nw = (end - base + 63) / 64;
            uint64_t words[SC_SEARCH_COLLECT_WINDOW / 64];
            if (deletes)
                memcpy(words, ss->live->words + base / 64, nw * sizeof *words);
            else
                memset(words, 0xff, nw * sizeof *words);
            if ((end - base) % 64)
                words[nw - 1] &= (UINT64_C(1) << ((end - base) % 64)) - 1;
            for (; xi < n_ex && ex[xi] < end; xi++)
                words[(ex[xi] - base) / 64] &= ~(UINT64_C(1) << ((ex[xi] - base) % 64));
            n = extract(words, nw, base, docs);
        } else {
            n = end - base;
            for (uint32_t i = 0; i < n; i++)
                docs[i] = base + i;
        }
        *total += n;
        if (n)
            SC_TRY(c->collect(c->ctx, docs, n));
        if (cancel && sc_cancel_token_check(cancel, (base / SC_SEARCH_COLLECT_WINDOW & 7) == 7))
            break;
    }
    return SC_OK;
}

/* The iterator's docs in 4,096-doc windows: into_bitset, then the set bits. */
static sc_status collect_iter(sc_doc_iter *it, uint32_t n_docs, const sc_search_collector *c,
                              uint64_t *win, uint32_t *docs, sc_cancel_token *cancel,
                              uint64_t *total)
{
    sc_bitset bs = {.words = win, .n_bits = SC_SEARCH_COLLECT_WINDOW};
    uint32_t n_windows = 0;
    uint32_t d = sc_doc_iter_next(it);
    while (d != SC_DOC_END) {
        uint32_t wbase = d & ~(uint32_t)(SC_SEARCH_COLLECT_WINDOW - 1);
        uint32_t wend =
            n_docs - wbase > SC_SEARCH_COLLECT_WINDOW ? wbase + SC_SEARCH_COLLECT_WINDOW : n_docs;
        memset(win, 0, (SC_SEARCH_COLLECT_WINDOW / 64 + 1) * sizeof *win);
        sc_doc_iter_into_bitset(it, wend, &bs, wbase);
        size_t n = extract(win, (wend - wbase + 63) / 64, wbase, docs);
        *total += n;
        if (n)
            SC_TRY(c->collect(c->ctx, docs, n));
        d = it->doc;
        if (cancel && sc_cancel_token_check(cancel, (++n_windows & 7) == 0))
            break;
    }
    return SC_OK;
}

/* Offers the segment whole to the collector when the query is match_all or one range on a
 * field whose points count it exactly (single-valued) and nothing is deleted; *n = the
 * matches when consumed. */
static sc_status try_whole(const sc__plan *plan, const sc_searcher_segment *ss,
                           const sc_search_collector *c, bool *consumed, uint64_t *n)
{
    *consumed = false;
    if (!c->segment_whole || (ss->live && ss->n_deleted))
        return SC_OK;
    if (plan->kind == SC__PLAN_ALL) {
        SC_TRY(c->segment_whole(c->ctx, NULL, INT64_MIN, INT64_MAX, consumed));
        *n = sc_segment_n_docs(ss->seg);
        return SC_OK;
    }
    if (plan->kind != SC__PLAN_RANGE || plan->n_ranges != 1)
        return SC_OK;
    bool done = false;
    SC_TRY(sc_range_segment_count(ss->seg, plan->field, plan->lo[0], plan->hi[0], n, &done));
    if (done)
        SC_TRY(c->segment_whole(c->ctx, &plan->field, plan->lo[0], plan->hi[0], consumed));
    return SC_OK;
}

sc_status sc_search_collect(const sc_searcher *s, const sc_query *q, const sc_search_options *o,
                            const sc_search_collector *c, sc_arena *a, sc_search_result *res)
{
    sc__search_ctx ctx;
    sc__search_ctx_init(&ctx, s, o, a, res);
    ctx.exhaustive = true;
    sc__plan *plan;
    SC_TRY(sc__plan_build(&ctx, q, false, &plan));
    res->total_tracked = true;
    uint64_t *win = sc_arena_alloc(a, (SC_SEARCH_COLLECT_WINDOW / 64 + 1) * sizeof *win);
    uint32_t *docs = sc_arena_alloc(a, SC_SEARCH_COLLECT_WINDOW * sizeof *docs);
    if (!win || !docs)
        return sc__search_oom(&ctx);
    uint64_t total = 0;
    sc_status st = SC_OK;
    if (c->query_whole && plan->kind == SC__PLAN_ALL)
        SC_TRY(c->query_whole(c->ctx, NULL, INT64_MIN, INT64_MAX));
    else if (c->query_whole && plan->kind == SC__PLAN_RANGE && plan->n_ranges == 1)
        SC_TRY(c->query_whole(c->ctx, &plan->field, plan->lo[0], plan->hi[0]));
    for (size_t si = 0; si < s->n_segs && st == SC_OK && ctx.script_st == SC_OK; si++) {
        const sc_searcher_segment *ss = &s->segs[si];
        if (o->cancel && sc_cancel_token_check(o->cancel, true))
            break;
        SC_TRY(c->segment_begin(c->ctx, si, ss->seg));
        bool consumed = false;
        uint64_t whole = 0;
        SC_TRY(try_whole(plan, ss, c, &consumed, &whole));
        if (consumed) {
            total += whole;
        } else if (plan->kind == SC__PLAN_ALL) {
            st = collect_all(ss, c, docs, NULL, 0, o->cancel, &total);
        } else {
            /* a range matching (nearly) every doc: whole windows minus the few outside it, no
             * bitset of the matches (Lucene's PointRangeQuery does the same) */
            bool dense = false;
            uint32_t *ex = NULL;
            size_t n_ex = 0;
            if (plan->kind == SC__PLAN_RANGE && plan->n_ranges == 1) {
                st = sc_range_segment_excluded(a, ss->seg, plan->field, plan->lo[0], plan->hi[0],
                                               &ex, &n_ex, &dense);
                if (st == SC_ENOMEM)
                    return sc__search_oom(&ctx);
                SC_TRY(st);
            }
            if (dense) {
                st = collect_all(ss, c, docs, ex, n_ex, o->cancel, &total);
            } else {
                sc_doc_iter *it;
                SC_TRY(sc__plan_iter(&ctx, plan, si, &it));
                it = sc__search_wrap_segment(&ctx, it, si);
                if (it)
                    st = collect_iter(it, sc_segment_n_docs(ss->seg), c, win, docs, o->cancel,
                                      &total);
            }
        }
        if (st == SC_OK)
            st = c->segment_end(c->ctx);
    }
    res->total = total;
    sc__search_finish_flags(&ctx);
    return st != SC_OK ? st : ctx.script_st;
}
