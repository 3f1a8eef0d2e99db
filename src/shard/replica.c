/* The shard's replica side (shard.h "replication"): applying a primary's operations with their
 * seq_no, term and version (seq-no dedup makes replay and reordering harmless), the primary
 * term of new writes, and paging through the ids for a peer recovery (the buffer's, the
 * segments' live docs', the tombstones). The op goes through
 * the same locked index/delete as translog replay (fixed seq_no/term/version), with
 * log_replayed set so that it is also appended to this copy's translog. */
#include <stdlib.h>
#include <string.h>

#include "shard/internal.h"

sc_status sc_shard_apply(sc_shard *s, const sc_shard_op *op, bool *applied, sc_shard_error *err)
{
    *applied = false;
    sc_translog_op t = {op->is_delete ? SC_TRANSLOG_DELETE : SC_TRANSLOG_INDEX,
                        op->seq_no,
                        op->primary_term,
                        op->version,
                        op->id,
                        op->is_delete ? (sc_slice){0} : op->source};
    pthread_mutex_lock(&s->wlock);
    /* Newer means a higher primary term, then a higher seq_no within it: a new primary's
     * operations supersede whatever an old primary left on this copy. */
    sc__id_loc loc;
    sc__versions v = {0}, *e = NULL;
    sc_status lst = sc__id_locate(s, op->id, &loc);
    if (lst == SC_OK && loc.known) {
        lst = sc__loc_versions(s, &loc, &v);
        e = &v;
    }
    if (lst != SC_OK) {
        pthread_mutex_unlock(&s->wlock);
        return lst;
    }
    if (e && (e->primary_term > op->primary_term ||
              (e->primary_term == op->primary_term && e->seq_no >= op->seq_no))) {
        pthread_mutex_unlock(&s->wlock);
        return SC_OK; /* a newer (or the same) op for this id is already here */
    }
    sc_status st = SC_OK;
    if (op->id.len == 0 || op->id.len > 512)
        st = SC_EINVAL;
    /* Parsed and buffered first, then appended to the translog (as a primary's write): an op
     * that fails to parse leaves nothing behind that a replay would trip on. */
    s->log_replayed = true;
    if (st == SC_OK && op->is_delete)
        st = sc__shard_delete_locked(s, op->id, NULL, &t, &loc, NULL, err);
    else if (st == SC_OK)
        st = sc__shard_index_locked(s, op->id, op->source, NULL, &t, &loc, NULL, err);
    s->log_replayed = false;
    bool over = st == SC_OK && sc__shard_buffer_full(s);
    if (over && sc__shard_buffer_way_over(s)) /* a failure is sticky: the next refresh sees it */
        sc__shard_ignore(sc__shard_refresh_locked(s));
    pthread_mutex_unlock(&s->wlock);
    if (st != SC_OK && err && !err->type) {
        err->type = "illegal_argument_exception";
        strcpy(err->reason, "cannot apply a replicated operation");
    }
    if (st == SC_OK) {
        *applied = true;
        if (over)
            sc__sched_wake(s);
        atomic_fetch_add(op->is_delete ? &s->n_delete_ops : &s->n_index_ops, 1);
    }
    return st;
}

void sc_shard_set_primary_term(sc_shard *s, int64_t term)
{
    pthread_mutex_lock(&s->wlock);
    if (term > s->cfg.primary_term)
        s->cfg.primary_term = term;
    pthread_mutex_unlock(&s->wlock);
}

int64_t sc_shard_primary_term(sc_shard *s)
{
    pthread_mutex_lock(&s->wlock);
    int64_t t = s->cfg.primary_term;
    pthread_mutex_unlock(&s->wlock);
    return t;
}

/* The listing's cursor (sc_shard_list_ids): the phase in the top 2 bits, then the buffer doc
 * (phase 0), the segment's number and doc (phase 1: number in bits 32..61, doc in 0..31) or the
 * tomb (phase 2). */
#define PHASE_SHIFT 62
#define SEGNO_MAX ((1ull << 30) - 1)

/* A slot's segment number (its name is "seg" and the number; segments get increasing numbers,
 * a merge's when it starts). */
static uint64_t slot_number(const sc__slot *sl)
{
    uint64_t n = strtoull(sl->name + 3, NULL, 10);
    return n > SEGNO_MAX ? SEGNO_MAX : n;
}

/* The buffered docs from doc d on: each live root doc's id (phase 0). */
static uint64_t list_buffer(sc_shard *s, uint64_t d, size_t *left, sc_shard_id_fn fn, void *ctx)
{
    for (; d < s->buf_entry.len && *left; d++) {
        if (s->buf_deleted.ptr[d] || s->buf_child.ptr[d] || s->buf_entry.ptr[d] == SC__NO_ENTRY)
            continue;
        const sc__buf_src *bs = &s->buf_src.ptr[d];
        const sc__versions *v = &s->buf_ver.ptr[d];
        fn(ctx, sc_slice_make(s->buf_sources.ptr + bs->off, bs->id_len), false, v->seq_no,
           v->primary_term, v->version);
        (*left)--;
    }
    return d;
}

/* The slot with the smallest (number, doc) at or after (no, doc), or NULL; *from: where in it. */
static sc__slot *next_slot(sc_shard *s, uint64_t no, uint32_t doc, uint32_t *from)
{
    sc__slot *best = NULL;
    uint64_t best_no = 0;
    for (size_t i = 0; i < s->slots.len; i++) {
        sc__slot *sl = s->slots.ptr[i];
        uint64_t n = slot_number(sl);
        if (n < no || (n == no && doc >= sl->n_docs))
            continue;
        if (!best || n < best_no) {
            best = sl;
            best_no = n;
        }
    }
    if (best)
        *from = best_no == no ? doc : 0;
    return best;
}

/* The segments' live root docs from (no, doc) on (phase 1); returns the cursor after them, or
 * phase 2's first when every segment was listed. At most 64 docs scanned a listed one. */
static uint64_t list_segments(sc_shard *s, uint64_t no, uint32_t doc, size_t *left,
                              sc_shard_id_fn fn, void *ctx)
{
    size_t budget = *left * 64;
    for (;;) {
        uint32_t d;
        sc__slot *sl = next_slot(s, no, doc, &d);
        if (!sl)
            return 2ull << PHASE_SHIFT;
        no = slot_number(sl);
        const sc_bitset *roots = sc_segment_parents(sl->seg);
        for (; d < sl->n_docs; d++) {
            if (!*left || !budget)
                return 1ull << PHASE_SHIFT | no << 32 | d;
            budget--;
            if ((sl->pending.words && !sc_bitset_test(&sl->pending, d)) ||
                (roots && !sc_bitset_test(roots, d)))
                continue;
            sc_slice key = sc__slot_key(sl, d);
            sc__versions v;
            if (!key.ptr || sc__slot_versions(sl, d, &v) != SC_OK)
                continue; /* cannot happen: every live root doc has its id and versions */
            fn(ctx, key, false, v.seq_no, v.primary_term, v.version);
            (*left)--;
        }
        if (no == SEGNO_MAX)
            return 2ull << PHASE_SHIFT;
        no++;
        doc = 0;
    }
}

void sc_shard_list_ids(sc_shard *s, uint64_t from, size_t max, sc_shard_id_fn fn, void *ctx,
                       uint64_t *next)
{
    pthread_mutex_lock(&s->wlock);
    uint64_t phase = from >> PHASE_SHIFT, at = from & ((1ull << PHASE_SHIFT) - 1);
    uint64_t cur = from;
    size_t left = max;
    if (phase == 0) {
        uint64_t d = list_buffer(s, at, &left, fn, ctx);
        cur = d < s->buf_entry.len ? d : 1ull << PHASE_SHIFT;
        phase = cur >> PHASE_SHIFT;
        at = 0;
    }
    if (phase == 1 && left) {
        cur = list_segments(s, at >> 32, (uint32_t)at, &left, fn, ctx);
        phase = cur >> PHASE_SHIFT;
        at = 0;
    }
    if (phase == 2) {
        uint64_t t = at;
        for (; t < s->tombs.len && left; t++) {
            sc_slice key = sc__tomb_key(s, (uint32_t)t);
            if (!key.ptr)
                continue; /* a free tomb */
            const sc__versions *v = &s->tombs.ptr[t];
            fn(ctx, key, true, v->seq_no, v->primary_term, v->version);
            left--;
        }
        cur = 2ull << PHASE_SHIFT | t;
    }
    pthread_mutex_unlock(&s->wlock);
    *next = cur;
}
