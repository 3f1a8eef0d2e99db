/* The seed inputs of the hll and tdigest fuzzers (tests/fuzz/corpus/hll/, tests/fuzz/corpus/
 * tdigest/) and the aggregation partials holding sketches (tests/fuzz/corpus/agg_partial/
 * sketches_*, hits_rare_*: top_hits, top_metrics and rare_terms), encoded at the current
 * formats. Partials number kinds by their place in
 * sc_agg_kind, so they go stale when a kind moves.
 *   make_sketch_seeds write CORPUS_DIR   writes them under CORPUS_DIR/{hll,tdigest,agg_partial}
 *   make_sketch_seeds check CORPUS_DIR   exits 1 naming every file that differs or is missing
 * Built with the debug preset; `make fuzz-seeds` rewrites them, and the ctest
 * search_agg_sketch_seeds runs `check` on the repository's corpus. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/agg.h"
#include "search/hll.h"
#include "search/tdigest.h"

static bool checking; /* check: compare with the files instead of writing them */
static int n_stale;

/* Writes b to DIR/SUB/NAME, or (checking) compares it with that file. */
static void put(const char *dir, const char *sub, const char *name, const sc_buf *b)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    if (checking) {
        FILE *f = fopen(path, "rb");
        uint8_t *have = malloc(b->len + 1);
        size_t n = f && have ? fread(have, 1, b->len + 1, f) : 0;
        if (!f || n != b->len || memcmp(have, b->ptr, b->len) != 0) {
            fprintf(stderr, "stale or missing fuzz seed %s (%zu bytes, want %zu)\n", path, n,
                    b->len);
            n_stale++;
        }
        free(have);
        if (f)
            fclose(f);
        return;
    }
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
    put(dir, "hll", name, &b);
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
    put(dir, "tdigest", name, &b);
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
    put(dir, "agg_partial", name, &buf);
    free(bytes);
    sc_arena_fini(&a);
}

/* A partial with a top_hits (hits with sort values, _index/_id/_source), a top_metrics and a
 * rare_terms (candidate buckets and frequent-term hashes): the encoding's flags 32 and 64. */
static void hits_seed(const char *dir, const char *name, uint32_t n)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_agg_result *root = sc_arena_calloc(&a, 1, sizeof *root);
    sc_agg_result **subs = sc_arena_calloc(&a, 3, sizeof *subs);
    sc_agg_bucket *b = sc_arena_calloc(&a, 1, sizeof *b);
    if (!root || !subs || !b)
        exit(1);
    root->kind = SC_AGG_ROOT;
    root->buckets = b;
    root->n_buckets = 1;
    b->subs = subs;
    b->n_subs = 3;
    b->doc_count = n;
    sc_agg_kind kinds[3] = {SC_AGG_TOP_HITS, SC_AGG_TOP_METRICS, SC_AGG_RARE_TERMS};
    for (int i = 0; i < 3; i++) {
        if (!(subs[i] = sc_arena_calloc(&a, 1, sizeof *subs[i])))
            exit(1);
        subs[i]->kind = kinds[i];
        subs[i]->n_reduced = 1;
        subs[i]->count = n;
    }
    for (int k = 0; k < 2; k++) {
        sc_agg_result *r = subs[k];
        r->hits = sc_arena_calloc(&a, n + 1, sizeof *r->hits);
        if (!r->hits)
            exit(1);
        r->n_hits = n;
        for (uint32_t i = 0; i < n; i++) {
            sc_agg_hit *h = &r->hits[i];
            h->score = k ? NAN : 1.5f / (float)(i + 1);
            h->doc = i * 7;
            h->n_values = 2;
            h->values = sc_arena_calloc(&a, 2, sizeof *h->values);
            h->metrics = sc_arena_calloc(&a, 1, sizeof *h->metrics);
            if (!h->values || !h->metrics)
                exit(1);
            h->values[0].i = -(int64_t)i;
            h->values[1].s = sc_slice_cstr("kw");
            h->values[1].missing = i % 2;
            if (k) {
                h->n_metrics = 1;
                h->metrics[0] = i * 0.25;
            } else {
                h->index = sc_slice_cstr("idx");
                h->id = sc_slice_cstr("doc-1");
                h->source = sc_slice_cstr("{\"a\":1}");
            }
        }
    }
    sc_agg_result *rt = subs[2];
    rt->buckets = sc_arena_calloc(&a, n + 1, sizeof *rt->buckets);
    rt->hashes = sc_arena_calloc(&a, n + 1, sizeof *rt->hashes);
    if (!rt->buckets || !rt->hashes)
        exit(1);
    rt->n_buckets = rt->n_hashes = n;
    for (uint32_t i = 0; i < n; i++) {
        rt->buckets[i].bkey = sc_slice_cstr("rare");
        rt->buckets[i].doc_count = 1;
        rt->hashes[i] = 1000003u * (uint64_t)(i + 1);
    }
    uint8_t *bytes;
    size_t len;
    if (sc_agg_encode(root, &bytes, &len) != SC_OK)
        exit(1);
    sc_buf buf = {bytes, len, len};
    put(dir, "agg_partial", name, &buf);
    free(bytes);
    sc_arena_fini(&a);
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "write") != 0 && strcmp(argv[1], "check") != 0)) {
        fprintf(stderr, "usage: make_sketch_seeds write|check CORPUS_DIR\n");
        return 2;
    }
    checking = !strcmp(argv[1], "check");
    const char *d = argv[2];
    hll_seed(d, "empty", 14, 0);
    hll_seed(d, "linear_p4", 4, 3);
    hll_seed(d, "linear_p10", 10, 150);
    hll_seed(d, "registers_p4", 4, 100);
    hll_seed(d, "registers_p8", 8, 5000);
    td_seed(d, "empty", 100, 0);
    td_seed(d, "one", 100, 1);
    td_seed(d, "exact", 100, 60);
    td_seed(d, "exact_c1", 1, 10);
    td_seed(d, "digest_c5", 5, 400);
    td_seed(d, "digest_c20", 20, 3000);
    agg_seed(d, "sketches_empty", 0);
    agg_seed(d, "sketches_small", 30);
    agg_seed(d, "sketches_large", 400);
    hits_seed(d, "hits_rare_empty", 0);
    hits_seed(d, "hits_rare_small", 3);
    if (n_stale)
        fprintf(stderr, "%d fuzz seed(s) stale: regenerate them with `make fuzz-seeds`\n", n_stale);
    return n_stale ? 1 : 0;
}
