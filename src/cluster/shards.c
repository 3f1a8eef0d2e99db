/* An index's shards: opening them under the index folder, routing documents, batched writes
 * with one translog sync per shard, realtime gets, refresh/flush/merge fan-out and stats. The
 * index-wide mapping is kept in sync across shards through the shard's mapping-update hook. */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "cluster/replication.h"
#include "cluster/internal.h"
#include "cluster/log.h"
#include "cluster/ops.h"
#include "shard/routing.h"
#include "shard/shard.h"

/* Dynamic fields found by one shard: merge into the index mapping and publish to all. */
static sc_status on_mapping_update(void *ctx, sc_shard *shard, const sc_mapping *proposed,
                                   sc_mapping_error *err)
{
    sc_index *ix = ctx;
    json_t *pj = sc_mapping_to_json(proposed);
    if (!pj)
        return SC_ENOMEM;
    pthread_mutex_lock(ix->mapping_mu);
    sc_mapping *merged = NULL;
    sc_status st = sc_mapping_merge(ix->mapping, pj, &merged, err);
    json_decref(pj);
    if (st == SC_OK) {
        sc_mapping_unref(ix->mapping);
        ix->mapping = merged;
        /* While shards are still opening (translog replay) ix->shards[i] may be NULL; the
         * replaying shard itself is `shard`. */
        for (uint32_t i = 0; i < ix->settings.number_of_shards; i++)
            if (ix->shards && ix->shards[i] && ix->shards[i] != shard)
                sc_shard_set_mapping(ix->shards[i], merged);
        if (shard)
            sc_shard_set_mapping(shard, merged);
    }
    pthread_mutex_unlock(ix->mapping_mu);
    if (st == SC_OK)
        sc__index_persist_mapping_meta(ix);
    return st;
}

static sc_status record_failure(sc_index *ix, uint32_t shard, sc_status st, const char *reason)
{
    char buf[768];
    snprintf(buf, sizeof buf, "failed shard on node [local]: shard failed to open: %s (%s)",
             reason && reason[0] ? reason : sc_status_str(st), sc_status_str(st));
    char *copy = strdup(buf);
    if (!copy)
        return SC_ENOMEM;
    ix->shard_failures[shard] = copy;
    return SC_OK;
}

void sc__index_shard_config(sc_node *n, sc_index *ix, uint32_t shard, char *path, size_t cap,
                            sc_shard_config *cfg)
{
    snprintf(path, cap, "%s/%u", ix->dir, shard);
    *cfg = (sc_shard_config){
        .path = path,
        .mapping = sc_index_mapping(ix),
        .analysis = sc_index_analysis(ix),
        .on_mapping_update = on_mapping_update,
        .update_ctx = ix,
        .primary_term = 1,
        .sched = sc__node_sched(n),
        .durability_async = ix->settings.durability_async,
        .flush_threshold_bytes = ix->settings.flush_threshold_bytes,
        .merge_memory_bytes = ix->settings.merge_memory_bytes,
        .ram_buffer_bytes = (size_t)sc_node_config_get(n)->index_buffer_bytes,
        .refresh_interval_ms =
            ix->settings.refresh_interval_ms < 0
                ? -1
                : (int32_t)(ix->settings.refresh_interval_ms ? ix->settings.refresh_interval_ms
                                                             : 1000),
    };
}

sc_status sc__index_open_shards(sc_node *n, sc_index *ix, bool create, sc_cluster_error *err)
{
    uint32_t ns = ix->settings.number_of_shards;
    ix->shards = calloc(ns, sizeof *ix->shards);
    ix->shard_failures = calloc(ns, sizeof *ix->shard_failures);
    if (!ix->shards || !ix->shard_failures)
        return SC_ENOMEM;
    if (sc_node_config_get(n)->allocated_copies_only)
        return sc__index_mark_absent(ix, create); /* the placement opens what it allocates */
    if (!create)
        return SC_OK; /* INITIALIZING: the background recovery opens them (recovery.c) */
    for (uint32_t i = 0; i < ns; i++) {
        char path[4096];
        sc_shard_config cfg;
        sc__index_shard_config(n, ix, i, path, sizeof path, &cfg);
        sc_shard_error serr;
        memset(&serr, 0, sizeof serr);
        sc_shard *shard = NULL;
        sc_status st = sc_shard_open(&cfg, &shard, &serr);
        sc_mapping_unref(cfg.mapping);
        if (st != SC_OK) {
            sc_cluster_error_set(err, 500, "exception", "cannot open shard [%s][%u]: %s", ix->name,
                                 i, serr.reason[0] ? serr.reason : sc_status_str(st));
            return st;
        }
        ix->shards[i] = shard;
    }
    return SC_OK;
}

void sc__index_shard_recovered(sc_index *ix, uint32_t i, sc_shard *shard, sc_status st,
                               const sc_shard_error *serr)
{
    if (st == SC_OK) {
        if (sc_shard_files_removed_at_open(shard))
            sc_log(SC_LOG_INFO, "index",
                   "shard [%s][%u]: removed %u unreferenced files left by an interrupted write "
                   "or merge",
                   ix->name, i, sc_shard_files_removed_at_open(shard));
        /* Published under the mapping lock with the index's current mapping: while it
         * recovered, writes to the other shards may have added dynamic fields that
         * on_mapping_update could not hand to it (its entry was NULL). */
        pthread_mutex_lock(ix->mapping_mu);
        sc_shard_set_mapping(shard, ix->mapping);
        ix->shards[i] = shard;
        pthread_mutex_unlock(ix->mapping_mu);
        return;
    }
    /* As Elasticsearch: a shard whose files cannot be opened fails alone. The index stays
     * registered (red), the other shards serve, the files stay for inspection. */
    if (record_failure(ix, i, st, serr->reason) != SC_OK) {
        sc_log(SC_LOG_ERROR, "index", "shard [%s][%u] failed to open: %s", ix->name, i,
               sc_status_str(st));
        return;
    }
    sc_log(SC_LOG_ERROR, "index", "shard [%s][%u] failed to open, left unassigned: %s", ix->name,
           i, ix->shard_failures[i]);
}

void sc__index_close_shards(sc_index *ix)
{
    sc__index_close_retired(ix);
    free((void *)ix->shard_absent);
    free(ix->leaving_since_ns);
    ix->shard_absent = NULL;
    if (!ix->shards)
        return;
    bool deleted = atomic_load(&ix->deleted);
    for (uint32_t i = 0; i < ix->settings.number_of_shards; i++) {
        sc_shard_close(ix->shards[i], !deleted);
        if (ix->shard_failures)
            free(ix->shard_failures[i]);
    }
    free(ix->shards);
    ix->shards = NULL;
    free(ix->shard_failures);
    ix->shard_failures = NULL;
}

void sc__index_flush(sc_index *ix)
{
    (void)sc_index_flush(ix);
}

uint32_t sc_index_route(const sc_index *ix, sc_slice routing)
{
    return sc_routing_shard(routing, ix->settings.number_of_shards,
                            ix->settings.routing_num_shards);
}

void sc_index_shard_stats(sc_index *ix, uint32_t shard, sc_index_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!ix->shards || shard >= ix->settings.number_of_shards || !ix->shards[shard])
        return;
    sc_shard_stats st;
    if (sc_shard_stats_get(ix->shards[shard], false, &st) != SC_OK)
        return;
    out->docs_count = st.n_docs;
    out->docs_deleted = st.n_deleted;
    out->store_bytes = st.store_bytes;
    out->n_segments = st.n_segments;
    out->merges_current = st.merges_current;
    out->merges_total = st.n_merges;
    out->merges_spilled_bytes = st.merge_spilled_bytes;
    out->translog_ops = st.translog_ops;
    out->translog_bytes = st.translog_bytes;
    out->memory_bytes = st.indexing_buffer_bytes;
    out->index_total = st.n_index_ops;
    out->index_time_ns = st.index_time_ns;
    out->delete_total = st.n_delete_ops;
    out->query_total = st.n_queries;
    out->query_time_ns = st.query_time_ns;
    out->refresh_total = st.n_refreshes;
    out->flush_total = st.n_flushes;
    sc_shard_stats_fini(&st);
}

const size_t sc_index_stats_fields[SC_INDEX_STATS_N_FIELDS] = {
    offsetof(sc_index_stats, docs_count),     offsetof(sc_index_stats, docs_deleted),
    offsetof(sc_index_stats, store_bytes),    offsetof(sc_index_stats, n_segments),
    offsetof(sc_index_stats, translog_ops),   offsetof(sc_index_stats, translog_bytes),
    offsetof(sc_index_stats, merges_current), offsetof(sc_index_stats, merges_total),
    offsetof(sc_index_stats, merges_spilled_bytes), offsetof(sc_index_stats, memory_bytes),
    offsetof(sc_index_stats, index_total),    offsetof(sc_index_stats, index_time_ns),
    offsetof(sc_index_stats, delete_total),   offsetof(sc_index_stats, query_total),
    offsetof(sc_index_stats, query_time_ns),  offsetof(sc_index_stats, refresh_total),
    offsetof(sc_index_stats, flush_total),
};

_Static_assert(sizeof(sc_index_stats) == SC_INDEX_STATS_N_FIELDS * sizeof(uint64_t),
               "sc_index_stats_fields lists every field");

void sc_index_stats_add(sc_index_stats *dst, const sc_index_stats *src)
{
    for (size_t i = 0; i < SC_INDEX_STATS_N_FIELDS; i++)
        *(uint64_t *)((char *)dst + sc_index_stats_fields[i]) +=
            *(const uint64_t *)((const char *)src + sc_index_stats_fields[i]);
}

const char *sc_index_shard_failure(const sc_index *ix, uint32_t shard)
{
    if (!ix->shard_failures || shard >= ix->settings.number_of_shards)
        return NULL;
    return ix->shard_failures[shard];
}

uint32_t sc_index_n_failed_shards(const sc_index *ix)
{
    uint32_t n = 0;
    for (uint32_t i = 0; ix->shard_failures && i < ix->settings.number_of_shards; i++)
        n += ix->shard_failures[i] != NULL;
    return n;
}

bool sc_index_shard_initializing(const sc_index *ix, uint32_t shard)
{
    /* The failure is read first: a shard is published or failed, never both, and either
     * store happens once; reading in this order never reports a finished shard as neither. */
    if (!ix->shards || shard >= ix->settings.number_of_shards)
        return false;
    if (ix->shard_failures && ix->shard_failures[shard])
        return false;
    if (ix->shard_absent && ix->shard_absent[shard])
        return false;
    return ix->shards[shard] == NULL && !(ix->shard_failures && ix->shard_failures[shard]);
}

uint32_t sc_index_n_initializing_shards(const sc_index *ix)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < ix->settings.number_of_shards; i++)
        n += sc_index_shard_initializing(ix, i);
    return n;
}

void sc_index_set_flush_threshold(sc_index *ix, uint64_t bytes)
{
    for (uint32_t i = 0; ix->shards && i < ix->settings.number_of_shards; i++) {
        sc_shard *s = ix->shards[i];
        if (s)
            sc_shard_set_flush_threshold(s, bytes);
    }
}

void sc_index_collect_stats(sc_index *ix, sc_index_stats *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < ix->settings.number_of_shards; i++) {
        sc_index_stats s;
        sc_index_shard_stats(ix, i, &s);
        sc_index_stats_add(out, &s);
    }
}

static bool shard_ok(sc_index *ix, uint32_t i, const char *what, sc_status st)
{
    if (st != SC_OK)
        sc_log(SC_LOG_WARN, "index", "%s of [%s][%u] failed: %s", what, ix->name, i,
               sc_status_str(st));
    return st == SC_OK;
}

uint32_t sc_index_broadcast(sc_index *ix, sc_index_bcast op, int64_t max_segments, const bool *only)
{
    static const char *const what[] = {"refresh", "flush", "force merge"};
    uint32_t ok = 0;
    for (uint32_t i = 0; i < ix->settings.number_of_shards; i++) {
        if (!ix->shards || !ix->shards[i] || (only && !only[i]))
            continue;
        sc_shard *sd = ix->shards[i];
        sc_status st = op == SC_BCAST_REFRESH ? sc_shard_refresh(sd)
                       : op == SC_BCAST_FLUSH ? sc_shard_flush(sd)
                       : max_segments > 0     ? sc_shard_force_merge(sd, (uint32_t)max_segments)
                                              : sc_shard_maybe_merge(sd);
        ok += shard_ok(ix, i, what[op], st);
    }
    return ok;
}

uint32_t sc_index_refresh(sc_index *ix)
{
    return sc_index_broadcast(ix, SC_BCAST_REFRESH, 0, NULL);
}

uint32_t sc_index_flush(sc_index *ix)
{
    return sc_index_broadcast(ix, SC_BCAST_FLUSH, 0, NULL);
}

uint32_t sc_index_forcemerge(sc_index *ix, int64_t max_segments)
{
    return sc_index_broadcast(ix, SC_BCAST_FORCEMERGE, max_segments, NULL);
}

void sc_index_refresh_after_write(sc_index *ix, sc_refresh_policy p)
{
    /* wait_for is served by refreshing now: the write becomes visible before we answer, which
     * is what the caller waits for (at the cost of an extra refresh). */
    if (p != SC_REFRESH_NONE)
        (void)sc_index_refresh(ix);
}

static void set_result_error(sc_doc_result *r, sc_status st, const sc_shard_error *e,
                             const sc_index *ix, uint32_t shard)
{
    r->result = NULL;
    r->shard = shard;
    int status = 400;
    if (st == SC_ECONFLICT && e->type && !strcmp(e->type, "version_conflict_engine_exception"))
        status = 409;
    else if (st == SC_EIO || st == SC_ENOMEM)
        status = 500;
    else if (st == SC_ELIMIT)
        status = 429;
    r->status = status;
    sc_cluster_error_set(&r->err, status, e->type ? e->type : "exception", "%s",
                         e->reason[0] ? e->reason : sc_status_str(st));
    if (e->cause_type) {
        r->err.cause_type = e->cause_type;
        snprintf(r->err.cause_reason, sizeof r->err.cause_reason, "%s", e->cause_reason);
    }
    snprintf(r->err.index, sizeof r->err.index, "%s", ix->name);
    snprintf(r->err.index_uuid, sizeof r->err.index_uuid, "%s", ix->uuid);
}

bool sc_wait_active_parse(const char *s, int32_t *out)
{
    if (!strcmp(s, "all")) {
        *out = SC_WAIT_ACTIVE_ALL;
        return true;
    }
    if (!*s || strlen(s) > 4)
        return false;
    int32_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
    }
    if (v > 1024)
        return false;
    *out = v;
    return true;
}

/* Elasticsearch's wait_for_active_shards before a write: each touched shard waits (up to the
 * request's timeout) until enough of its copies are active; every item of a shard that does
 * not get them fails with 503 unavailable_shards_exception (results[] filled, inactive[shard]
 * set so that the write loop skips them). */
static void wait_active(sc_index *ix, const sc_doc_write *w, size_t n, sc_doc_result *results,
                        bool *inactive)
{
    uint32_t ns = ix->settings.number_of_shards, copies = 1 + ix->settings.number_of_replicas;
    uint64_t t0 = sc_clock_now_ns();
    for (size_t i = 0; i < n; i++) {
        int32_t want = w[i].wait_active_set ? w[i].wait_active : ix->settings.write_wait_active;
        uint32_t need = want == SC_WAIT_ACTIVE_ALL ? copies : (uint32_t)want;
        uint32_t shard = sc_index_route(ix, w[i].routing.len ? w[i].routing : w[i].id);
        if (need <= 1 || shard >= ns)
            continue; /* the primary itself is the one active copy a write needs */
        uint32_t have = 0;
        uint64_t tmo = w[i].timeout_ms ? w[i].timeout_ms : 60000;
        if (inactive[shard] || sc__repl_wait_active(ix, shard, need, t0 + tmo * 1000000, &have))
            continue;
        inactive[shard] = true;
        char count[16];
        if (want == SC_WAIT_ACTIVE_ALL)
            snprintf(count, sizeof count, "ALL");
        else
            snprintf(count, sizeof count, "%u", need);
        for (size_t k = i; k < n; k++) { /* this item and the shard's later ones */
            if (sc_index_route(ix, w[k].routing.len ? w[k].routing : w[k].id) != shard)
                continue;
            memset(&results[k], 0, sizeof results[k]);
            results[k].shard = shard;
            results[k].status = 503;
            sc_cluster_error_set(&results[k].err, 503, "unavailable_shards_exception",
                                 "[%s][%u] Not enough active copies to meet shard count of [%s] "
                                 "(have %u, needed %u). Timeout: [%llums]",
                                 ix->name, shard, count, have, need, (unsigned long long)tmo);
        }
    }
}

sc_status sc_index_write(sc_index *ix, const sc_doc_write *writes, size_t n, sc_doc_result *results,
                         sc_arena *arena)
{
    (void)arena;
    uint32_t ns = ix->settings.number_of_shards;
    /* per shard: touched (fsync before the ack), primary here, refused (not primary here) */
    bool flags_stack[5 * 64] = {0};
    bool *flags = ns <= 64 ? flags_stack : calloc(5 * (size_t)ns, sizeof *flags);
    if (!flags)
        return SC_ENOMEM;
    bool *touched = flags, *primary = flags + ns, *refused = flags + 2 * (size_t)ns;
    bool *inactive = flags + 3 * (size_t)ns, *held = flags + 4 * (size_t)ns;
    /* wait_for_active_shards, before the permit */
    wait_active(ix, writes, n, results, inactive);
    /* a primary hand-over in progress on a shard written here: hold the writes until the new
     * primary takes over (the items then fail as not primary and the coordinator retries them
     * there), at most 30 s: the coordinator's forwarding times out after 60 s */
    uint64_t hold_ms = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t shard =
            sc_index_route(ix, writes[i].routing.len ? writes[i].routing : writes[i].id);
        uint64_t t = writes[i].timeout_ms ? writes[i].timeout_ms : 60000;
        if (shard < ns && !inactive[shard]) {
            held[shard] = true;
            hold_ms = t > hold_ms ? t : hold_ms;
        }
    }
    hold_ms = hold_ms < 30000 ? hold_ms : 30000;
    sc__repl_wait_handoff(ix, held, sc_clock_now_ns() + hold_ms * 1000000);
    /* clustered: an operation permit, which shards this node is primary of (and their terms) */
    uint64_t permit = sc__repl_begin(ix, primary);
    for (size_t i = 0; i < n; i++) {
        const sc_doc_write *w = &writes[i];
        sc_doc_result *r = &results[i];
        uint32_t shard = sc_index_route(ix, w->routing.len ? w->routing : w->id);
        if (inactive[shard])
            continue; /* failed by wait_active */
        memset(r, 0, sizeof *r);
        r->shard = shard;
        sc_shard *s = ix->shards ? ix->shards[shard] : NULL;
        if (!s && ix->shard_absent && !primary[shard] && !refused[shard]) {
            /* clustered: the routing may name this node primary before our placement opened
             * the copy; the wait returns once it has (copies open before a snapshot shows) */
            if (!(primary[shard] = sc__repl_wait_primary(ix, shard)))
                refused[shard] = true;
            s = ix->shards[shard];
        }
        if (atomic_load(&ix->closed)) {
            r->status = 400;
            sc_cluster_error_closed(&r->err, ix);
            continue;
        }
        if (!s) {
            r->status = 503;
            sc_cluster_error_set(&r->err, 503, "unavailable_shards_exception",
                                 "[%s][%u] primary shard is not active", ix->name, shard);
            continue;
        }
        if (!primary[shard] && !refused[shard] &&
            !(primary[shard] = sc__repl_wait_primary(ix, shard)))
            refused[shard] = true; /* waited once: the other items of the shard fail at once */
        if (!primary[shard]) {
            r->status = 503;
            sc_cluster_error_set(&r->err, 503, "unavailable_shards_exception",
                                 "[%s][%u] this node does not hold the primary (routing changed)",
                                 ix->name, shard);
            continue;
        }
        sc_shard_write_opts o = sc_shard_write_defaults();
        o.if_seq_no = w->if_seq_no == -2 ? SC_SHARD_NO_SEQ_NO : w->if_seq_no;
        o.if_primary_term = w->if_primary_term;
        o.defer_sync = true;
        sc_shard_result sr;
        sc_shard_error err;
        memset(&err, 0, sizeof err);
        sc_status st;
        if (w->op == SC_DOC_DELETE) {
            st = sc_shard_delete(s, w->id, &o, &sr, &err);
            if (st == SC_OK) {
                r->result = sr.found ? "deleted" : "not_found";
                r->status = sr.found ? 200 : 404;
            }
        } else {
            o.op_type = w->op == SC_DOC_CREATE ? SC_SHARD_OP_CREATE : SC_SHARD_OP_INDEX;
            o.append_only = w->new_id && w->op == SC_DOC_CREATE;
            st = sc_shard_index(s, w->id, w->source, &o, &sr, &err);
            if (st == SC_OK) {
                r->result = sr.created ? "created" : "updated";
                r->status = sr.created ? 201 : 200;
            }
        }
        if (st != SC_OK) {
            set_result_error(r, st, &err, ix, shard);
            continue;
        }
        touched[shard] = true;
        r->version = sr.version;
        r->seq_no = sr.seq_no;
        r->primary_term = sr.primary_term;
    }
    /* One fsync per touched shard before anything is acknowledged. */
    sc_status result = SC_OK;
    for (uint32_t s = 0; s < ns; s++) {
        if (!touched[s])
            continue;
        if (sc_shard_sync(ix->shards[s]) != SC_OK) {
            for (size_t i = 0; i < n; i++)
                if (results[i].shard == s && results[i].result) {
                    results[i].result = NULL;
                    results[i].status = 500;
                    sc_cluster_error_set(&results[i].err, 500, "translog_exception",
                                         "failed to sync translog of [%s][%u]", ix->name, s);
                }
            sc_log(SC_LOG_ERROR, "index", "translog sync failed for [%s][%u]", ix->name, s);
        }
    }
    /* clustered: the other copies get the operations before anything is acknowledged */
    sc__repl_end(ix, permit, writes, n, results);
    if (flags != flags_stack)
        free(flags);
    return result;
}

sc_status sc_index_get(sc_index *ix, sc_slice id, sc_slice routing, sc_arena *arena,
                       sc_doc_get *out)
{
    memset(out, 0, sizeof *out);
    uint32_t shard = sc_index_route(ix, routing.len ? routing : id);
    if (atomic_load(&ix->closed))
        return SC_ECLOSED;
    if (!ix->shards || !ix->shards[shard])
        return SC_EIO;
    sc_shard_doc d;
    SC_TRY(sc_shard_get(ix->shards[shard], id, &d));
    if (d.found) {
        uint8_t *copy = sc_arena_alloc(arena, d.source_len ? d.source_len : 1);
        if (!copy) {
            sc_shard_doc_fini(&d);
            return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
        }
        memcpy(copy, d.source, d.source_len);
        out->found = true;
        out->source = sc_slice_make(copy, d.source_len);
        out->version = d.version;
        out->seq_no = d.seq_no;
        out->primary_term = d.primary_term;
    }
    sc_shard_doc_fini(&d);
    return SC_OK;
}

void sc__index_publish_mapping(sc_index *ix, sc_mapping *m)
{
    for (uint32_t i = 0; ix->shards && i < ix->settings.number_of_shards; i++)
        if (ix->shards[i])
            sc_shard_set_mapping(ix->shards[i], m);
}
