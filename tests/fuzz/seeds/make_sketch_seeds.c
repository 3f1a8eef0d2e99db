/* Writes the seed inputs of the hll and tdigest fuzzers (hll_*, td_*: tests/fuzz/corpus/hll/,
 * tests/fuzz/corpus/tdigest/ without the prefix) and aggregation partials holding sketches
 * (agg_*: tests/fuzz/corpus/agg_partial/) into the directory argv[1], encoded at the current
 * format versions. Build (after the debug build) and run by hand:
 *   cc -std=c11 -D_GNU_SOURCE -Isrc tests/fuzz/seeds/make_sketch_seeds.c \
 *      build/debug/libscry_search.a build/debug/libscry_index.a build/debug/libscry_text.a \
 *      build/debug/libscry_base.a $(pkg-config --libs libzstd libxxhash icu-uc icu-i18n) \
 *      -lstemmer -lpthread -lm -o /tmp/mss && /tmp/mss DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "search/agg.h"
#include "search/hll.h"
#include "search/tdigest.h"

static void put(const char *dir, const char *name, const sc_buf *b)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->ptr, 1, b->len, f) != b->len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static void hll_seed(const char *dir, const char *name, uint32_t p, uint32_t n)
{
    sc_hll *h;
    sc_buf b = {0};
    if (sc_hll_new(p, NULL, NULL, &h) != SC_OK)
        exit(1);
    for (uint32_t i = 0; i < n; i++)
        if (sc_hll_add(h, sc_hll_hash_u64(i)) != SC_OK)
            exit(1);
    if (sc_hll_encode(h, &b) != SC_OK)
        exit(1);
    put(dir, name, &b);
    sc_vec_free(&b);
    sc_hll_free(h);
}

static void td_seed(const char *dir, const char *name, double compression, uint32_t n)
{
    sc_tdigest *t;
    sc_buf b = {0};
    if (sc_tdigest_new(compression, NULL, NULL, &t) != SC_OK)
        exit(1);
    for (uint32_t i = 0; i < n; i++)
        if (sc_tdigest_add(t, sin(i) * 100 + i % 7, 1 + i % 2) != SC_OK)
            exit(1);
    if (sc_tdigest_encode(t, &b) != SC_OK)
        exit(1);
    put(dir, name, &b);
    sc_vec_free(&b);
    sc_tdigest_free(t);
}

/* A root partial with a cardinality (n distinct values), a percentiles (n values), an empty
 * percentile_ranks and a median_absolute_deviation (n values) sub. */
static void agg_seed(const char *dir, const char *name, uint32_t n)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_result *root = sc_arena_calloc(&a, 1, sizeof *root);
    sc_agg_result **subs = sc_arena_calloc(&a, 4, sizeof *subs);
    sc_agg_bucket *b = sc_arena_calloc(&a, 1, sizeof *b);
    if (!root || !subs || !b)
        exit(1);
    root->kind = SC_AGG_ROOT;
    root->buckets = b;
    root->n_buckets = 1;
    b->subs = subs;
    b->n_subs = 4;
    b->doc_count = n;
    sc_agg_kind kinds[4] = {SC_AGG_CARDINALITY, SC_AGG_PERCENTILES, SC_AGG_PERCENTILE_RANKS,
                            SC_AGG_MEDIAN_ABSOLUTE_DEVIATION};
    for (int i = 0; i < 4; i++) {
        if (!(subs[i] = sc_arena_calloc(&a, 1, sizeof *subs[i])))
            exit(1);
        subs[i]->kind = kinds[i];
        subs[i]->n_reduced = 1;
    }
    if (n && (sc_hll_new(8, NULL, &a, &subs[0]->hll) != SC_OK ||
              sc_tdigest_new(10, NULL, &a, &subs[1]->td) != SC_OK ||
              sc_tdigest_new(1000, NULL, &a, &subs[3]->td) != SC_OK))
        exit(1);
    for (uint32_t i = 0; i < n; i++)
        if (sc_hll_add(subs[0]->hll, sc_hll_hash_u64(i)) != SC_OK ||
            sc_tdigest_add(subs[1]->td, cos(i), 1) != SC_OK ||
            sc_tdigest_add(subs[3]->td, i % 17, 1) != SC_OK)
            exit(1);
    uint8_t *bytes;
    size_t len;
    if (sc_agg_encode(root, &bytes, &len) != SC_OK)
        exit(1);
    sc_buf buf = {bytes, len, len};
    put(dir, name, &buf);
    free(bytes);
    sc_arena_fini(&a);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_sketch_seeds DIR\n");
        return 2;
    }
    hll_seed(argv[1], "hll_empty", 14, 0);
    hll_seed(argv[1], "hll_linear_p4", 4, 3);
    hll_seed(argv[1], "hll_linear_p10", 10, 150);
    hll_seed(argv[1], "hll_registers_p4", 4, 100);
    hll_seed(argv[1], "hll_registers_p8", 8, 5000);
    td_seed(argv[1], "td_empty", 100, 0);
    td_seed(argv[1], "td_one", 100, 1);
    td_seed(argv[1], "td_exact", 100, 60);
    td_seed(argv[1], "td_exact_c1", 1, 10);
    td_seed(argv[1], "td_digest_c5", 5, 400);
    td_seed(argv[1], "td_digest_c20", 20, 3000);
    agg_seed(argv[1], "agg_sketches_empty", 0);
    agg_seed(argv[1], "agg_sketches_small", 30);
    agg_seed(argv[1], "agg_sketches_large", 400);
    return 0;
}
