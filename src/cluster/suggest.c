/* The term suggester over the local shards (suggest.h): one snapshot per shard, candidates
 * merged by term. */
#include <string.h>

#include "cluster/suggest.h"
#include "shard/shard_search.h"

static sc_status merge(sc_arena *a, sc_suggest_candidate **all, size_t *n, size_t *cap,
                       const sc_suggest_candidate *c, size_t nc)
{
    for (size_t i = 0; i < nc; i++) {
        size_t j = 0;
        while (j < *n && !sc_slice_eq((*all)[j].term, c[i].term))
            j++;
        if (j < *n) {
            (*all)[j].freq += c[i].freq;
            continue;
        }
        if (*n == *cap) {
            size_t nc2 = *cap ? *cap * 2 : 16;
            sc_suggest_candidate *v = sc_arena_alloc(a, nc2 * sizeof *v);
            if (!v)
                return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
            if (*n)
                memcpy(v, *all, *n * sizeof *v);
            *all = v;
            *cap = nc2;
        }
        (*all)[(*n)++] = c[i];
    }
    return SC_OK;
}

sc_status sc_suggest_run(const sc_suggest_term_request *req, sc_slice term, sc_arena *a,
                         sc_suggest_candidate **out, size_t *n_out, uint64_t *term_freq)
{
    *out = NULL;
    *n_out = 0;
    *term_freq = 0;
    size_t cap = 0;
    for (size_t i = 0; i < req->n_indices; i++) {
        sc_index *ix = req->indices[i];
        for (uint32_t sh = 0; ix->shards && sh < ix->settings.number_of_shards; sh++) {
            if (!ix->shards[sh])
                continue;
            const sc_shard_snapshot *snap = sc_shard_searcher_acquire(ix->shards[sh]);
            sc_searcher_segment *segs = sc_arena_alloc(a, (snap->n_segments + 1) * sizeof *segs);
            sc_status st = segs ? SC_OK : SC_ENOMEM;
            sc_suggest_candidate *c = NULL;
            size_t nc = 0;
            uint64_t tf = 0;
            if (st == SC_OK) {
                sc_searcher s;
                sc_shard_searcher_init(snap, segs, &s);
                st = sc_suggest_term(&s, req->field, term, req->max_edits, req->prefix_length,
                                     req->accuracy, 0, a, &c, &nc, &tf);
            }
            /* candidate terms were copied into the arena: the snapshot can go */
            sc_shard_searcher_release(snap);
            SC_TRY(st);
            *term_freq += tf;
            SC_TRY(merge(a, out, n_out, &cap, c, nc));
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < *n_out; i++)
        if ((*out)[i].freq >= req->min_doc_freq)
            (*out)[k++] = (*out)[i];
    *n_out = k;
    return SC_OK;
}
