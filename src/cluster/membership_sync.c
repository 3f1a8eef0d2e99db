/* The in-sync set in etcd, changed by a shard's primary (sc_membership_set_in_sync): a
 * read-modify-write of routing/<index> fenced by the shard's primary term and guarded by the
 * value's mod_revision, PacificA-style (the primary writes it directly, one hop fewer than
 * asking the master; the master's own routing writes compare the same mod_revision). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/log.h"
#include "cluster/membership_internal.h"

/* Applies the change to r's shard; SC_OK with *changed, or the status to return. */
static sc_status change(sc_index_routing *r, uint32_t shard, const char *alloc_id, bool in_sync,
                        int64_t term, bool *changed)
{
    *changed = false;
    if (shard >= r->number_of_shards)
        return SC_ENOTFOUND;
    sc_shard_routing *sh = &r->shards[shard];
    if (sh->primary_term != term)
        return SC_ECONFLICT;
    const sc_shard_copy *copy = NULL;
    for (size_t i = 0; i < sh->n_copies; i++)
        if (!strcmp(sh->copies[i].alloc_id, alloc_id))
            copy = &sh->copies[i];
    size_t at = sh->n_in_sync;
    for (size_t i = 0; i < sh->n_in_sync; i++)
        if (!strcmp(sh->in_sync[i].alloc_id, alloc_id))
            at = i;
    if (!in_sync) {
        if (copy && copy->primary)
            return SC_EINVAL;
        if (at < sh->n_in_sync) {
            memmove(&sh->in_sync[at], &sh->in_sync[at + 1],
                    (sh->n_in_sync - at - 1) * sizeof *sh->in_sync);
            sh->n_in_sync--;
            *changed = true;
        }
        return SC_OK;
    }
    if (!copy)
        return SC_ENOTFOUND;
    if (at < sh->n_in_sync)
        return SC_OK;
    sc_in_sync *grown = realloc(sh->in_sync, (sh->n_in_sync + 1) * sizeof *grown);
    if (!grown)
        return SC_ENOMEM;
    sh->in_sync = grown;
    sc_in_sync *is = &sh->in_sync[sh->n_in_sync++];
    memcpy(is->alloc_id, copy->alloc_id, sizeof is->alloc_id);
    memcpy(is->node, copy->node, sizeof is->node);
    *changed = true;
    return SC_OK;
}

/* One read-modify-write; *retry when the value changed under us, *wrote when it was written. */
static sc_status attempt(sc_membership *m, const char *key, const char *index, uint32_t shard,
                         const char *alloc_id, bool in_sync, int64_t term, bool *retry, bool *wrote)
{
    *retry = *wrote = false;
    sc_etcd_kvs kvs;
    sc_etcd_error err;
    sc_status st = sc_etcd_get(m->etcd, key, &kvs, &err);
    if (st != SC_OK)
        return st;
    if (kvs.len != 1) {
        sc_etcd_kvs_fini(&kvs);
        return SC_ENOTFOUND;
    }
    int64_t mod = kvs.kvs[0].mod_revision;
    json_t *j = json_loadb(kvs.kvs[0].value, kvs.kvs[0].value_len, 0, NULL);
    sc_etcd_kvs_fini(&kvs);
    sc_index_routing r;
    st = j ? sc_index_routing_from_json(index, j, &r) : SC_ECORRUPT;
    json_decref(j);
    if (st != SC_OK)
        return st;
    bool changed;
    st = change(&r, shard, alloc_id, in_sync, term, &changed);
    char *text = NULL;
    if (st == SC_OK && changed) {
        json_t *out = sc_index_routing_to_json(&r);
        text = out ? json_dumps(out, JSON_COMPACT) : NULL;
        json_decref(out);
        st = text ? SC_OK : SC_ENOMEM;
    }
    sc_index_routing_fini(&r);
    if (st != SC_OK || !changed)
        return st;
    sc_etcd_cmp cmp = {.key = key, .target = SC_ETCD_MOD, .value = mod};
    sc_etcd_op put = {.kind = SC_ETCD_OP_PUT, .key = key, .value = text, .value_len = strlen(text)};
    sc_etcd_txn_result res;
    st = sc_etcd_txn(m->etcd, &cmp, 1, &put, 1, NULL, 0, &res, &err);
    free(text);
    if (st == SC_OK) {
        *retry = !res.succeeded;
        *wrote = res.succeeded;
        sc_etcd_txn_result_fini(&res);
    }
    return st;
}

sc_status sc_membership_set_in_sync(sc_membership *m, const char *index, uint32_t shard,
                                    const char *alloc_id, bool in_sync, int64_t primary_term)
{
    char key[512];
    sc__ms_key(m, key, sizeof key, "routing", index);
    for (int i = 0; i < 10; i++) {
        bool retry, wrote;
        sc_status st =
            attempt(m, key, index, shard, alloc_id, in_sync, primary_term, &retry, &wrote);
        if (st != SC_OK || !retry) {
            if (wrote)
                sc_log(SC_LOG_INFO, "cluster", "[%s][%u] copy %s %s the in-sync set", index, shard,
                       alloc_id, in_sync ? "joined" : "left");
            return st;
        }
    }
    return SC_ECONFLICT;
}

/* ---- JSON documents under the cluster prefix (cluster settings) ---- */

/* Reads key: *doc (object; {} when absent) and its *mod (0 when absent). */
static sc_status doc_read(sc_membership *m, const char *key, json_t **doc, int64_t *mod)
{
    *doc = NULL;
    *mod = 0;
    sc_etcd_kvs kvs;
    sc_status st = sc_etcd_get(m->etcd, key, &kvs, NULL);
    if (st != SC_OK)
        return st;
    if (kvs.len == 1) {
        *mod = kvs.kvs[0].mod_revision;
        *doc = json_loadb(kvs.kvs[0].value, kvs.kvs[0].value_len, 0, NULL);
        if (!json_is_object(*doc)) {
            json_decref(*doc);
            *doc = NULL;
            st = SC_ECORRUPT;
        }
    } else {
        *doc = json_object();
    }
    sc_etcd_kvs_fini(&kvs);
    return st;
}

sc_status sc_membership_doc_get(sc_membership *m, const char *name, json_t **out)
{
    char key[512];
    sc__ms_key(m, key, sizeof key, name, NULL);
    int64_t mod;
    return doc_read(m, key, out, &mod);
}

/* The read-modify-write of sc_membership_doc_update; *written (may be NULL) gets the stored
 * document and *rev its revision. */
static sc_status doc_update(sc_membership *m, const char *name, sc_membership_doc_fn fn, void *ctx,
                            json_t **written, int64_t *rev)
{
    char key[512];
    sc__ms_key(m, key, sizeof key, name, NULL);
    for (int i = 0; i < 10; i++) {
        json_t *doc;
        int64_t mod;
        sc_status st = doc_read(m, key, &doc, &mod);
        if (st == SC_OK)
            st = fn(ctx, doc);
        char *text = st == SC_OK ? json_dumps(doc, JSON_COMPACT) : NULL;
        if (st != SC_OK || !text) {
            json_decref(doc);
            return st != SC_OK ? st : SC_ENOMEM;
        }
        sc_etcd_cmp cmp = {.key = key, .target = SC_ETCD_MOD, .value = mod};
        sc_etcd_op put = {
            .kind = SC_ETCD_OP_PUT, .key = key, .value = text, .value_len = strlen(text)};
        sc_etcd_txn_result res;
        st = sc_etcd_txn(m->etcd, &cmp, 1, &put, 1, NULL, 0, &res, NULL);
        free(text);
        if (st != SC_OK) {
            json_decref(doc);
            return st;
        }
        bool ok = res.succeeded;
        *rev = res.revision;
        sc_etcd_txn_result_fini(&res);
        if (ok) {
            if (written)
                *written = doc;
            else
                json_decref(doc);
            return SC_OK;
        }
        json_decref(doc);
    }
    return SC_ECONFLICT;
}

sc_status sc_membership_doc_update(sc_membership *m, const char *name, sc_membership_doc_fn fn,
                                   void *ctx)
{
    int64_t rev;
    return doc_update(m, name, fn, ctx, NULL, &rev);
}

void sc_membership_meta_read(sc_membership *m, void (*fn)(void *ctx, const json_t *doc), void *ctx)
{
    pthread_mutex_lock(&m->mu);
    if (m->synced) {
        fn(ctx, m->meta);
        pthread_mutex_unlock(&m->mu);
        return;
    }
    pthread_mutex_unlock(&m->mu);
    /* before the watch's first listing (just started): straight from etcd */
    char key[512];
    sc__ms_key(m, key, sizeof key, "meta", NULL);
    json_t *doc = NULL;
    int64_t mod;
    if (doc_read(m, key, &doc, &mod) != SC_OK)
        sc_log(SC_LOG_WARN, "cluster", "cannot read the cluster metadata from etcd");
    fn(ctx, doc);
    json_decref(doc);
}

sc_status sc_membership_meta_update(sc_membership *m, sc_membership_doc_fn fn, void *ctx)
{
    json_t *doc = NULL;
    int64_t rev = 0;
    sc_status st = doc_update(m, "meta", fn, ctx, &doc, &rev);
    if (st != SC_OK)
        return st;
    /* read your own writes: the watch brings the same document a moment later */
    pthread_mutex_lock(&m->mu);
    if (rev > m->meta_rev) {
        json_decref(m->meta);
        m->meta = doc;
        m->meta_rev = rev;
        doc = NULL;
    }
    pthread_mutex_unlock(&m->mu);
    json_decref(doc);
    return SC_OK;
}
