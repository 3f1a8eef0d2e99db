/* Shard-level query execution: one query tree over one shard snapshot through the search
 * layer's searcher (search/searcher.h), returning the top k (score, shard-global doc) and the
 * hit count in the coordinator's terms. */
#include "cluster/shard_exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/searcher.h"

sc_status sc__shard_exec(const sc__shard_exec_args *a, sc__shard_exec_result *r)
{
    const sc_shard_snapshot *snap = a->snapshot;
    sc_searcher_segment stack[32];
    sc_searcher_segment *segs =
        snap->n_segments <= 32 ? stack : malloc(snap->n_segments * sizeof *segs);
    if (!segs)
        return SC_ENOMEM;
    for (size_t i = 0; i < snap->n_segments; i++) {
        segs[i].seg = snap->segments[i].seg;
        segs[i].live = snap->segments[i].live;
        segs[i].n_deleted = snap->segments[i].live ? snap->segments[i].n_deleted : 0;
    }
    sc_searcher s = {.segs = segs, .n_segs = snap->n_segments};
    sc_search_options o;
    sc_search_options_init(&o);
    o.size = a->k;
    o.from = 0;
    o.track_total_hits = a->track_total_hits < 0 ? SC_TRACK_TOTAL_HITS_ALL : a->track_total_hits;
    o.cancel = a->token;
    sc_arena arena;
    sc_arena_init(&arena, 0);
    sc_search_result res;
    memset(&res, 0, sizeof res);
    sc_status st = a->k == 0 && a->track_total_hits != 0
                       ? sc_search_count(&s, a->query, &o, &arena, &res)
                       : sc_search_execute(&s, a->query, &o, &arena, &res);
    if (st == SC_OK) {
        r->total = res.total;
        r->total_is_lower_bound = res.total_gte;
        r->timed_out = res.timed_out;
        if (res.cancelled)
            st = SC_ECANCELLED;
        else if (res.n_hits) {
            r->docs = malloc(res.n_hits * sizeof *r->docs);
            if (!r->docs) {
                st = SC_ENOMEM;
            } else {
                for (size_t i = 0; i < res.n_hits; i++) {
                    const sc_search_hit *h = &res.hits[i];
                    r->docs[i].score = h->score;
                    r->docs[i].shard_ix = a->shard_ix;
                    r->docs[i].doc = snap->segments[h->segment].doc_base + h->doc;
                }
                r->n_docs = res.n_hits;
            }
        }
    } else {
        snprintf(r->error, sizeof r->error, "%s", res.error[0] ? res.error : sc_status_str(st));
    }
    sc_arena_fini(&arena);
    if (segs != stack)
        free(segs);
    return st;
}
