/* libFuzzer target: arbitrary bytes as an encoded aggregation partial (sc_agg_decode). When
 * accepted, its re-encoding must decode to an equal result, and a spec mirroring its shape
 * (kinds from the nodes, subs from the first bucket) drives a partial and a final reduce of
 * two copies (mismatched shapes give SC_ECORRUPT). Must never crash, leak or read out of
 * bounds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search/agg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A spec with the shape of r (depth-limited by the decoder). */
static sc_agg_spec *mirror(const sc_agg_result *r, sc_arena *a)
{
    sc_agg_spec *s = sc_arena_calloc(a, 1, sizeof *s);
    if (!s)
        return NULL;
    s->kind = r->kind;
    s->name = "x";
    s->vtype = SC_AGG_V_KEYWORD;
    s->size = 3;
    s->order = (sc_agg_order){.kind = SC_AGG_ORDER_COUNT, .desc = true};
    s->interval = 1;
    s->rounding.fixed_ms = 1000;
    s->n_ranges = r->kind == SC_AGG_RANGE ? r->n_buckets : 0;
    s->n_filters = r->kind == SC_AGG_FILTERS ? r->n_buckets : 0;
    if (s->n_ranges) {
        s->ranges = sc_arena_calloc(a, s->n_ranges, sizeof *s->ranges);
        if (!s->ranges)
            return NULL;
    }
    if (r->n_buckets && r->buckets[0].n_subs) {
        s->n_subs = r->buckets[0].n_subs;
        s->subs = sc_arena_calloc(a, s->n_subs, sizeof *s->subs);
        if (!s->subs)
            return NULL;
        for (size_t i = 0; i < s->n_subs; i++)
            if (!(s->subs[i] = mirror(r->buckets[0].subs[i], a)))
                return NULL;
    }
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_arena a;
    sc_arena_init(&a, 64u << 20);
    sc_agg_result *r;
    if (sc_agg_decode(data, size, &a, &r) == SC_OK) {
        uint8_t *enc;
        size_t len;
        if (sc_agg_encode(r, &enc, &len) == SC_OK) {
            sc_agg_result *again;
            if (sc_agg_decode(enc, len, &a, &again) != SC_OK || !sc_agg_result_equal(r, again))
                abort();
            free(enc);
        }
        sc_agg_spec *spec = mirror(r, &a);
        if (spec) {
            sc_agg_result *in[2] = {r, r}, *out, *fin;
            sc_agg_error err;
            if (sc_agg_reduce(spec, in, 2, false, 1000, &a, &out, &err) == SC_OK)
                (void)!sc_agg_reduce(spec, &out, 1, true, 1000, &a, &fin, &err);
        }
    }
    sc_arena_fini(&a);
    return 0;
}
