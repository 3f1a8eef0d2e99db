/* Incremental partial reduce (search_internal.h, sc__partial): Elasticsearch's
 * batched_reduce_size. A data node over its shards and the coordinator over its units fold every
 * batched_reduce_size results into one accumulated top k and aggregation partial, so that what
 * they hold is bounded by the batch and not by the number of shards. */
#include <stdlib.h>
#include <string.h>

#include "cluster/log.h"
#include "cluster/search_internal.h"

typedef struct tagged {
    sc_node_hit h; /* first: the comparators take sc_node_hit */
    uint32_t tag;
} tagged;

static sc_status copy_key(sc_arena *a, const sc_sort_key *in, const sc_sort_key **out)
{
    *out = NULL;
    if (!in)
        return SC_OK;
    sc_sort_key *k = sc_arena_alloc(a, sizeof *k);
    if (!k)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    *k = *in;
    if (in->s.len) {
        uint8_t *p = sc_arena_alloc(a, in->s.len);
        if (!p)
            return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
        memcpy(p, in->s.ptr, in->s.len);
        k->s = sc_slice_make(p, in->s.len);
    }
    *out = k;
    return SC_OK;
}

static bool same_group(const sc_shard_collapse *c, const sc_sort_key *a, const sc_sort_key *b)
{
    if (!a || !b || a->missing || b->missing)
        return (!a || a->missing) == (!b || b->missing);
    return c->numeric ? a->i == b->i : sc_slice_eq(a->s, b->s);
}

/* The top k of m (sorted here), collapse groups deduplicated as the node's reduce does. */
static size_t keep_top(const sc_search_request *sr, uint32_t k, tagged *m, size_t n)
{
    if (sr->n_sort)
        qsort_r(m, n, sizeof *m, sc__search_cmp_sorted, (void *)sr);
    else
        qsort(m, n, sizeof *m, sc__search_cmp_score);
    if (!sr->collapse)
        return n < k ? n : k;
    size_t kept = 0;
    for (size_t i = 0; i < n && kept < k; i++) {
        bool seen = false;
        for (size_t j = 0; j < kept && !seen; j++)
            seen = same_group(sr->collapse, m[j].h.collapse_key, m[i].h.collapse_key);
        if (!seen)
            m[kept++] = m[i];
    }
    return kept;
}

sc_status sc__partial_fold(sc__partial *acc, const sc_search_request *sr, uint32_t k,
                           const sc_shard_collect_hook *h, const sc_node_hit *hits,
                           const uint32_t *tags, size_t n_hits, void *const *partials,
                           size_t n_partials)
{
    sc_arena *mem = malloc(sizeof *mem);
    size_t all = acc->n_top + n_hits;
    tagged *m = malloc((all ? all : 1) * sizeof *m);
    void **in = malloc((n_partials + 1) * sizeof *in);
    sc_status st = mem && m && in ? SC_OK : SC_ENOMEM;
    if (mem)
        sc_arena_init(mem, 0);
    size_t nm = 0, np = 0;
    for (size_t i = 0; st == SC_OK && i < acc->n_top; i++)
        m[nm++] = (tagged){acc->top[i], acc->tags[i]};
    for (size_t i = 0; st == SC_OK && i < n_hits; i++)
        m[nm++] = (tagged){hits[i], tags ? tags[i] : 0};
    size_t kept = st == SC_OK ? keep_top(sr, k, m, nm) : 0;
    sc_node_hit *top = st == SC_OK ? sc_arena_alloc(mem, (kept ? kept : 1) * sizeof *top) : NULL;
    uint32_t *tg = st == SC_OK ? sc_arena_alloc(mem, (kept ? kept : 1) * sizeof *tg) : NULL;
    if (st == SC_OK && (!top || !tg))
        st = SC_ENOMEM;
    /* the kept hits leave self-contained: their sources' memory goes after the fold */
    for (size_t i = 0; st == SC_OK && i < kept; i++) {
        top[i] = m[i].h;
        tg[i] = m[i].tag;
        st = sc__search_copy_keys(sr, m[i].h.keys, mem, &top[i].keys);
        if (st == SC_OK)
            st = copy_key(mem, m[i].h.collapse_key, &top[i].collapse_key);
    }
    void *agg = NULL;
    if (st == SC_OK && h && h->reduce) {
        if (acc->agg)
            in[np++] = acc->agg;
        for (size_t i = 0; i < n_partials; i++)
            if (partials[i])
                in[np++] = partials[i];
        sc_shard_search_error err;
        memset(&err, 0, sizeof err);
        /* the hook's reduction is self-contained (it does not borrow its inputs) */
        if (np)
            st = h->reduce(h->ctx, in, np, mem, &agg, &err);
        if (st != SC_OK)
            sc_log(SC_LOG_WARN, "search", "partial aggregation reduce failed: %s",
                   err.reason[0] ? err.reason : sc_status_str(st));
    }
    free(m);
    free(in);
    if (st != SC_OK) {
        if (mem)
            sc_arena_fini(mem);
        free(mem);
        return st;
    }
    sc__partial_fini(acc);
    acc->mem = mem;
    acc->top = top;
    acc->tags = tg;
    acc->n_top = kept;
    acc->agg = agg;
    acc->n_phases++;
    return SC_OK;
}

size_t sc__partial_bytes(const sc__partial *acc)
{
    return acc->mem ? acc->mem->used_bytes : 0;
}

void sc__partial_fini(sc__partial *acc)
{
    if (acc->mem) {
        sc_arena_fini(acc->mem);
        free(acc->mem);
    }
    uint32_t phases = acc->n_phases;
    memset(acc, 0, sizeof *acc);
    acc->n_phases = phases;
}

sc_status sc__partial_copy_top(const sc__partial *acc, const sc_search_request *sr, sc_arena *arena,
                               sc_node_hit **out)
{
    sc_node_hit *h = sc_arena_alloc(arena, (acc->n_top ? acc->n_top : 1) * sizeof *h);
    if (!h)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    for (size_t i = 0; i < acc->n_top; i++) {
        h[i] = acc->top[i];
        SC_TRY(sc__search_copy_keys(sr, acc->top[i].keys, arena, &h[i].keys));
        SC_TRY(copy_key(arena, acc->top[i].collapse_key, &h[i].collapse_key));
    }
    *out = h;
    return SC_OK;
}
