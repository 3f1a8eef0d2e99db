/* The defaults every aggregation test and benchmark spec starts from (agg_fixture.h,
 * bench/agg_bench_util.h): size 10, min_doc_count 1, ordered by count descending. */
#ifndef SC_TESTS_SEARCH_AGG_SPEC_INIT_H
#define SC_TESTS_SEARCH_AGG_SPEC_INIT_H

#include "search/agg.h"

/* Sets kind, name, field, vtype and the defaults on the zeroed spec s; returns s. */
static inline sc_agg_spec *fx_agg_spec_init(sc_agg_spec *s, sc_agg_kind kind, const char *name,
                                            const char *field, sc_agg_vtype vt)
{
    s->kind = kind;
    s->name = name;
    s->field = field;
    s->vtype = vt;
    s->size = 10;
    s->min_doc_count = 1;
    s->order = (sc_agg_order){.kind = SC_AGG_ORDER_COUNT, .desc = true};
    return s;
}

#endif
