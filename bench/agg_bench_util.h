/* Helpers shared by the aggregation benchmarks over one real segment (agg_bench,
 * agg_sketch_bench): a spec with the common defaults, a parent with one sub, the keyword and
 * numeric fields of a generated doc, adding the doc, and one timed shard collect. Header-only;
 * include after bench_util.h. */
#ifndef SC_BENCH_AGG_BENCH_UTIL_H
#define SC_BENCH_AGG_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "index/builder.h"
#include "search/agg.h"
#include "search/searcher.h"

#include "../tests/unit/search/agg_spec_init.h"

/* A spec named "a" (calloc; a benchmark's specs live until exit): size 10, min_doc_count 1,
 * ordered by count descending. */
static inline sc_agg_spec *bench_agg_spec(sc_agg_kind kind, const char *field, sc_agg_vtype vt)
{
    sc_agg_spec *s = calloc(1, sizeof *s);
    return fx_agg_spec_init(s, kind, "a", field, vt);
}

/* parent with sub as its one sub-aggregation; returns parent. */
static inline sc_agg_spec *bench_agg_with_sub(sc_agg_spec *parent, sc_agg_spec *sub)
{
    parent->subs = calloc(1, sizeof *parent->subs);
    parent->subs[0] = sub;
    parent->n_subs = 1;
    return parent;
}

/* A single-valued keyword field (indexed, with doc values). */
static inline sc_index_field bench_keyword(const char *name, const sc_index_token *tok)
{
    return (sc_index_field){.name = sc_slice_cstr(name),
                            .kind = SC_FIELD_KEYWORD,
                            .flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES,
                            .tokens = tok,
                            .n_tokens = 1};
}

/* A single-valued numeric field with the given flags. */
static inline sc_index_field bench_numeric(const char *name, uint32_t flags, const int64_t *v)
{
    return (sc_index_field){.name = sc_slice_cstr(name),
                            .kind = SC_FIELD_NUMERIC,
                            .flags = flags,
                            .values = v,
                            .n_values = 1};
}

/* Adds a doc "x" with an empty source and the n fields f. 0 or -1. */
static inline int bench_add_doc(sc_segment_builder *b, const sc_index_field *f, size_t n)
{
    sc_index_doc doc = {
        .id = sc_slice_cstr("x"), .source = sc_slice_cstr(""), .fields = f, .n_fields = n};
    return sc_segment_builder_add(b, &doc, NULL) == SC_OK ? 0 : -1;
}

/* The result of the last bench_agg_collect_so_ms (in its arena: valid until that is freed). */
static sc_agg_result *bench_agg_last;

/* One collect of root over s with q and the shard options *sop, timed in milliseconds of the CPU
 * clock clk (CLOCK_PROCESS_CPUTIME_ID or CLOCK_THREAD_CPUTIME_ID: the machine is shared, wall time
 * overstates); the number of matching docs in *total. Exits with a message on an error. */
static inline double bench_agg_collect_so_ms(const char *name, const sc_agg_spec *root,
                                             const sc_searcher *s, const sc_query *q,
                                             const sc_agg_shard_options *sop, sc_arena *a,
                                             clockid_t clk, uint64_t *total)
{
    sc_search_options o;
    sc_search_options_init(&o);
    sc_agg_shard_options so = *sop;
    sc_search_result res;
    sc_agg_error err;
    sc_agg_result *out;
    struct timespec t0, t1;
    clock_gettime(clk, &t0);
    sc_status st = sc_agg_collect_shard(root, s, q, &o, &so, a, &out, &res, &err);
    clock_gettime(clk, &t1);
    if (st != SC_OK) {
        fprintf(stderr, "%s: %s %s\n", name, sc_status_str(st), err.reason);
        exit(1);
    }
    *total = res.total;
    bench_agg_last = out;
    return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

/* As bench_agg_collect_so_ms with the default shard options (one shard). */
static inline double bench_agg_collect_ms(const char *name, const sc_agg_spec *root,
                                          const sc_searcher *s, const sc_query *q, sc_arena *a,
                                          clockid_t clk, uint64_t *total)
{
    sc_agg_shard_options so = {.n_shards = 1};
    return bench_agg_collect_so_ms(name, root, s, q, &so, a, clk, total);
}

#endif
