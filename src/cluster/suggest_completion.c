/* The completion suggester over the local shards (suggest.h): each shard's top options with
 * their _id and _source, merged. */
#include <stdlib.h>
#include <string.h>

#include "cluster/suggest.h"
#include "shard/shard_search.h"

static int cmp_merged(const void *x, const void *y)
{
    const sc_suggest_completion_option *a = x, *b = y;
    if (a->o.weight != b->o.weight)
        return a->o.weight > b->o.weight ? -1 : 1;
    int c = sc_slice_cmp(a->o.text, b->o.text);
    return c ? c : sc_slice_cmp(a->id, b->id);
}

static sc_status one_shard(sc_index *ix, sc_shard *sh, sc_slice field, sc_slice key,
                           const sc_completion_fuzzy *fz, bool skip, size_t size, sc_arena *a,
                           sc_suggest_completion_option **all, size_t *n, size_t *cap)
{
    const sc_shard_snapshot *snap = sc_shard_searcher_acquire(sh);
    sc_searcher_segment *segs = sc_arena_alloc(a, (snap->n_segments + 1) * sizeof *segs);
    sc_status st = segs ? SC_OK : SC_ENOMEM;
    sc_completion_option *c = NULL;
    size_t nc = 0;
    if (st == SC_OK) {
        sc_searcher s;
        sc_shard_searcher_init(snap, segs, &s);
        st = sc_suggest_completion(&s, field, key, fz, skip, size, a, &c, &nc);
    }
    uint32_t *docs = NULL;
    sc_shard_fetched *f = NULL;
    if (st == SC_OK && nc) {
        docs = sc_arena_alloc(a, nc * sizeof *docs);
        f = sc_arena_calloc(a, nc, sizeof *f);
        st = docs && f ? SC_OK : SC_ENOMEM;
    }
    for (size_t i = 0; st == SC_OK && i < nc; i++)
        docs[i] = c[i].doc;
    /* fetch wants ascending docs: fetch one by one in option order (nc <= size) */
    for (size_t i = 0; st == SC_OK && i < nc; i++) {
        sc_shard_fetch_args fa = {.snapshot = snap, .docs = &docs[i], .n_docs = 1, .source = true};
        st = sc_shard_fetch_run(&fa, a, &f[i]);
    }
    sc_shard_searcher_release(snap);
    SC_TRY(st);
    if (*n + nc > *cap) {
        size_t ncap = (*n + nc) * 2;
        sc_suggest_completion_option *v = sc_arena_alloc(a, ncap * sizeof *v);
        if (!v)
            return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
        if (*n)
            memcpy(v, *all, *n * sizeof *v);
        *all = v;
        *cap = ncap;
    }
    for (size_t i = 0; i < nc; i++)
        if (f[i].found)
            (*all)[(*n)++] = (sc_suggest_completion_option){c[i], ix, f[i].id, f[i].source};
    return SC_OK;
}

sc_status sc_suggest_completion_run(sc_index **indices, size_t n_indices, sc_slice field,
                                    sc_slice key, const sc_completion_fuzzy *fuzzy,
                                    bool skip_duplicates, size_t size, sc_arena *a,
                                    sc_suggest_completion_option **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    size_t cap = 0;
    for (size_t i = 0; i < n_indices; i++) {
        sc_index *ix = indices[i];
        for (uint32_t sh = 0; ix->shards && sh < ix->settings.number_of_shards; sh++)
            if (ix->shards[sh])
                SC_TRY(one_shard(ix, ix->shards[sh], field, key, fuzzy, skip_duplicates, size, a,
                                 out, n_out, &cap));
    }
    sc_suggest_completion_option *v = *out;
    if (*n_out > 1)
        qsort(v, *n_out, sizeof *v, cmp_merged);
    size_t k = 0;
    for (size_t i = 0; i < *n_out && k < size; i++) {
        bool dup = false;
        for (size_t j = 0; j < k && skip_duplicates && !dup; j++)
            dup = sc_slice_eq(v[j].o.text, v[i].o.text);
        if (!dup)
            v[k++] = v[i];
    }
    *n_out = k;
    return SC_OK;
}
