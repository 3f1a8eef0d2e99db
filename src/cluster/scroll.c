/* Scroll context registry (see scroll.h). */
#include "cluster/scroll.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "cluster/internal.h"

static void scroll_free(sc_scroll *s)
{
    for (size_t i = 0; i < s->n_pinned; i++)
        sc_shard_searcher_release(s->pinned[i]);
    free(s->pinned);
    for (size_t i = 0; i < s->n_indices; i++)
        sc_index_unref(s->indices[i]);
    for (size_t i = 0; s->filters && i < s->n_indices; i++)
        json_decref(s->filters[i]);
    free(s->filters);
    free(s->indices);
    free(s->body);
    free(s->routing);
    free(s->preference);
    free(s->shards);
    free(s->wire_id);
    free(s);
}

/* Unlinks expired idle contexts; caller holds the lock. Returns them as a list to free. */
static sc_scroll *reap(sc__scrolls *r, uint64_t now)
{
    sc_scroll *dead = NULL, **pp = &r->head;
    while (*pp) {
        sc_scroll *s = *pp;
        if (s->refs == 0 && s->expires_ns <= now) {
            *pp = s->next;
            s->next = dead;
            dead = s;
        } else {
            pp = &s->next;
        }
    }
    return dead;
}

static void free_list(sc_scroll *s)
{
    while (s) {
        sc_scroll *next = s->next;
        scroll_free(s);
        s = next;
    }
}

/* Numbers s, links it into the node's registry (acquired, busy) and reaps expired ones. */
static void register_ctx(sc_node *n, sc_scroll *s, int64_t keep_alive_ms)
{
    s->keep_alive_ms = keep_alive_ms;
    uint64_t now = sc_clock_now_ns();
    s->expires_ns = now + (uint64_t)keep_alive_ms * 1000000;
    s->refs = 1;
    s->busy = true;
    sc__scrolls *r = sc__node_scrolls(n);
    pthread_mutex_lock(&r->mu);
    s->seq = ++r->next_id;
    sc_scroll_id_of(n, s->seq, s->id, sizeof s->id);
    sc_scroll *dead = reap(r, now);
    s->next = r->head;
    r->head = s;
    pthread_mutex_unlock(&r->mu);
    free_list(dead);
}

static sc_status open_ctx(sc_node *n, sc_index **indices, size_t n_indices, const char *body,
                          const char *routing, const char *preference, uint32_t size,
                          int64_t keep_alive_ms, bool local, sc_scroll **out)
{
    *out = NULL;
    sc_scroll *s = calloc(1, sizeof *s);
    if (!s)
        return SC_ENOMEM;
    size_t nt = 0;
    for (size_t i = 0; i < n_indices; i++)
        nt += indices[i]->settings.number_of_shards;
    s->indices = calloc(n_indices ? n_indices : 1, sizeof *s->indices);
    s->pinned = calloc(nt ? nt : 1, sizeof *s->pinned);
    s->body = body ? strdup(body) : NULL;
    s->routing = routing ? strdup(routing) : NULL;
    s->preference = preference ? strdup(preference) : NULL;
    if (!s->indices || !s->pinned || (body && !s->body) || (routing && !s->routing) ||
        (preference && !s->preference)) {
        scroll_free(s);
        return SC_ENOMEM;
    }
    /* Clustered: the shards' contexts live on the data nodes (search_ctx.c) */
    bool clustered = !local && sc_node_placement(n) != NULL;
    if (clustered && !(s->shards = calloc(nt ? nt : 1, sizeof *s->shards))) {
        scroll_free(s);
        return SC_ENOMEM;
    }
    for (size_t i = 0; i < n_indices; i++) {
        sc_index_ref(indices[i]);
        s->indices[s->n_indices++] = indices[i];
        if (clustered) {
            s->n_pinned += indices[i]->settings.number_of_shards;
            continue;
        }
        /* One entry per shard: NULL for a shard that is not available (failed to open), which
         * every page then reports in _shards.failures, as the first page did. */
        for (uint32_t sh = 0; sh < indices[i]->settings.number_of_shards; sh++)
            s->pinned[s->n_pinned++] = indices[i]->shards && indices[i]->shards[sh]
                                           ? sc_shard_searcher_acquire(indices[i]->shards[sh])
                                           : NULL;
    }
    if (s->n_pinned != nt) {
        scroll_free(s);
        return SC_EIO;
    }
    s->size = size;
    register_ctx(n, s, keep_alive_ms);
    *out = s;
    return SC_OK;
}

sc_status sc_scroll_open(sc_node *n, sc_index **indices, size_t n_indices, const char *body,
                         const char *routing, const char *preference, uint32_t size,
                         int64_t keep_alive_ms, sc_scroll **out)
{
    return open_ctx(n, indices, n_indices, body, routing, preference, size, keep_alive_ms, false,
                    out);
}

sc_status sc_scroll_open_local(sc_node *n, sc_index **indices, size_t n_indices,
                               int64_t keep_alive_ms, sc_scroll **out)
{
    return open_ctx(n, indices, n_indices, NULL, NULL, NULL, 0, keep_alive_ms, true, out);
}

sc_status sc_scroll_open_shards(sc_node *n, sc_index **indices, size_t n_indices,
                                const uint32_t *index_i, const uint32_t *shard,
                                const uint32_t *pin_ix, size_t n_targets, bool pit,
                                int64_t keep_alive_ms, sc_scroll **out)
{
    *out = NULL;
    sc_scroll *s = calloc(1, sizeof *s);
    if (!s)
        return SC_ENOMEM;
    size_t nt = 0;
    for (size_t i = 0; i < n_indices; i++)
        nt += indices[i]->settings.number_of_shards;
    s->indices = calloc(n_indices ? n_indices : 1, sizeof *s->indices);
    s->pinned = calloc(nt ? nt : 1, sizeof *s->pinned);
    if (!s->indices || !s->pinned) {
        scroll_free(s);
        return SC_ENOMEM;
    }
    for (size_t i = 0; i < n_indices; i++) {
        sc_index_ref(indices[i]);
        s->indices[s->n_indices++] = indices[i];
    }
    s->n_pinned = nt;
    for (size_t t = 0; t < n_targets; t++) {
        if (index_i[t] >= n_indices || pin_ix[t] >= nt || s->pinned[pin_ix[t]]) {
            scroll_free(s);
            return SC_EINVAL;
        }
        sc_index *ix = indices[index_i[t]];
        if (shard[t] < ix->settings.number_of_shards && ix->shards && ix->shards[shard[t]]) {
            s->pinned[pin_ix[t]] = sc_shard_searcher_acquire(ix->shards[shard[t]]);
            s->n_shards++;
        }
    }
    s->pit = pit;
    register_ctx(n, s, keep_alive_ms);
    *out = s;
    return SC_OK;
}

void sc_scroll_id_of(sc_node *n, uint64_t seq, char *buf, size_t cap)
{
    snprintf(buf, cap, "scry-scroll-%s-%llu", sc_node_id(n), (unsigned long long)seq);
}

sc_scroll *sc_scroll_acquire(sc_node *n, const char *id, int64_t keep_alive_ms, bool shared)
{
    sc__scrolls *r = sc__node_scrolls(n);
    uint64_t now = sc_clock_now_ns();
    pthread_mutex_lock(&r->mu);
    sc_scroll *dead = reap(r, now);
    sc_scroll *found = NULL;
    for (sc_scroll *s = r->head; s; s = s->next)
        if (strcmp(s->id, id) == 0) {
            if (shared ? s->pit : (!s->busy && !s->pit)) {
                s->busy = !shared;
                s->refs++;
                if (keep_alive_ms > 0)
                    s->keep_alive_ms = keep_alive_ms;
                s->expires_ns = now + (uint64_t)s->keep_alive_ms * 1000000;
                found = s;
            }
            break;
        }
    pthread_mutex_unlock(&r->mu);
    free_list(dead);
    return found;
}

void sc_scroll_release(sc_node *n, sc_scroll *s)
{
    sc__scrolls *r = sc__node_scrolls(n);
    pthread_mutex_lock(&r->mu);
    if (!s->pit)
        s->busy = false;
    bool orphan = --s->refs == 0 && s->expires_ns == 0;
    pthread_mutex_unlock(&r->mu);
    if (orphan)
        scroll_free(s);
}

size_t sc_scroll_clear(sc_node *n, const char *id)
{
    return sc_scroll_clear_ex(n, id, false, NULL);
}

size_t sc_scroll_clear_ex(sc_node *n, const char *id, bool scrolls_only, size_t *n_shards)
{
    sc__scrolls *r = sc__node_scrolls(n);
    size_t k = 0, shards = 0;
    sc_scroll *dead = NULL;
    pthread_mutex_lock(&r->mu);
    sc_scroll **pp = &r->head;
    while (*pp) {
        sc_scroll *s = *pp;
        if (id ? strcmp(s->id, id) == 0 : !(scrolls_only && s->pit)) {
            *pp = s->next;
            k++;
            shards += s->n_shards;
            if (s->refs == 0) {
                s->next = dead;
                dead = s;
            } else {
                s->expires_ns = 0; /* freed by the last release */
            }
        } else {
            pp = &s->next;
        }
    }
    pthread_mutex_unlock(&r->mu);
    free_list(dead);
    if (n_shards)
        *n_shards = shards;
    return k;
}

size_t sc_scroll_count(sc_node *n)
{
    sc__scrolls *r = sc__node_scrolls(n);
    size_t k = 0;
    uint64_t now = sc_clock_now_ns();
    pthread_mutex_lock(&r->mu);
    for (sc_scroll *s = r->head; s; s = s->next)
        k += s->refs > 0 || s->expires_ns > now; /* expired ones are reaped at the next use */
    pthread_mutex_unlock(&r->mu);
    return k;
}
