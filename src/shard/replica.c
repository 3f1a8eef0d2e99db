/* The shard's replica side (shard.h "replication"): applying a primary's operations with their
 * seq_no, term and version (seq-no dedup makes replay and reordering harmless), the primary
 * term of new writes, and paging through the id table for a peer recovery. The op goes through
 * the same locked index/delete as translog replay (fixed seq_no/term/version), with
 * log_replayed set so that it is also appended to this copy's translog. */
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
    uint32_t at;
    /* Newer means a higher primary term, then a higher seq_no within it: a new primary's
     * operations supersede whatever an old primary left on this copy. */
    const sc__id_entry *ent = sc__entry_find(s, op->id, &at) ? &s->entries.ptr[at] : NULL;
    sc__versions v = {0}, *e = NULL;
    if (ent) {
        sc_status vst = sc__entry_versions(s, ent, &v);
        if (vst != SC_OK) {
            pthread_mutex_unlock(&s->wlock);
            return vst;
        }
        e = &v;
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
        st = sc__shard_delete_locked(s, op->id, NULL, &t, NULL, err);
    else if (st == SC_OK)
        st = sc__shard_index_locked(s, op->id, op->source, NULL, &t, NULL, err);
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

void sc_shard_list_ids(sc_shard *s, uint64_t from, size_t max, sc_shard_id_fn fn, void *ctx,
                       uint64_t *next)
{
    pthread_mutex_lock(&s->wlock);
    uint64_t i = from;
    for (; i < s->ids.len && i - from < max; i++) {
        const sc__id_entry *e = &s->entries.ptr[i];
        sc__versions v;
        if (sc__entry_versions(s, e, &v) != SC_OK)
            continue; /* cannot happen: every entry's place has its versions */
        fn(ctx, sc__entry_key(s, (uint32_t)i), e->seg == SC__SEG_NONE, v.seq_no, v.primary_term,
           v.version);
    }
    pthread_mutex_unlock(&s->wlock);
    *next = i;
}
