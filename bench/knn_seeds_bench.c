/* Recall over many seeds (not a test): the small vector sets of tests/unit/index/hnsw_test.c
 * (same generator: 20 Gaussian centres in 32 dims, 3,000 docs, 50 queries; the
 * max_inner_product case 36,000 docs with queries from the same centres), rebuilt for each
 * seed, searched with num_candidates 100 and k 10 by each level-1 beam width given
 * (sc_vec_knn_opts.upper_beam: -1 the greedy descent, 0 the default), unfiltered and with a 50 %
 * filter, recall@10 against the exact scan. A unit test asserts a recall at one fixed seed;
 * this shows whether a change moves the recall or only that seed's 50 queries.
 * Usage: knn_seeds_bench CASE FIRST_SEED N_SEEDS [WIDTH,...]
 *   CASE: l2 (hnsw l2), cos (int8_hnsw cosine), skewcos (int8_hnsw cosine, dim 0 20x wider),
 *         skewcosf (the same with float hnsw), skewl2 (int8_hnsw l2, dim 0 50x wider),
 *         mip (hnsw max_inner_product),
 *         mip8 (int8_hnsw max_inner_product)
 * Output: one TSV line per seed and width: case seed width recall recall_50% exact_50%, then
 * one line per width with the means over the seeds. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/vec.h"
#include "index/vecfield.h"

#define DIMS 32
#define NQ 50
#define MAXW 16

static uint64_t rng;

/* the unit tests' generator (tests/unit/index/common.h), so a seed here is that test's seed */
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static float gauss(void)
{
    double u = ((double)(rnd() >> 11) + 1) / 9007199254740993.0;
    double v = (double)(rnd() >> 11) / 9007199254740992.0;
    return (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
}

static void make_vectors(float *out, uint32_t n, bool normalize, const float *scale)
{
    static float centres[20][DIMS];
    for (int c = 0; c < 20; c++)
        for (int d = 0; d < DIMS; d++)
            centres[c][d] = gauss() * 3;
    for (uint32_t i = 0; i < n; i++) {
        const float *c = centres[rnd() % 20];
        double norm = 0;
        for (int d = 0; d < DIMS; d++) {
            out[i * DIMS + d] = (c[d] + gauss()) * scale[d];
            norm += (double)out[i * DIMS + d] * out[i * DIMS + d];
        }
        if (normalize)
            for (int d = 0; d < DIMS; d++)
                out[i * DIMS + d] = (float)(out[i * DIMS + d] / sqrt(norm));
    }
}

/* recall@10 of the graph search with level-1 width w against the exact scan; *n_exact counts
 * the queries the search answered by a scan */
static double recall(const sc_vec_field *vf, const float *q, const uint64_t *acc, uint64_t n_acc,
                     int32_t w, int *n_exact)
{
    sc_hnsw_hit hits[300], truth[10];
    double found = 0, wanted = 0;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_arena_mark m0 = sc_arena_mark_get(&a);
    for (int i = 0; i < NQ; i++) {
        sc_vec_knn_opts o = {.query = q + (size_t)i * DIMS,
                             .k = 10,
                             .num_candidates = 100,
                             .accept = acc,
                             .n_accept = n_acc,
                             .upper_beam = w};
        size_t n = 0, nt = 0;
        bool ex;
        if (sc_vec_knn(vf, &o, &a, hits, &n, &ex) != SC_OK)
            exit(1);
        *n_exact += ex;
        o.force_exact = true;
        if (sc_vec_knn(vf, &o, &a, truth, &nt, &ex) != SC_OK)
            exit(1);
        for (size_t x = 0; x < n; x++)
            for (size_t y = 0; y < nt; y++)
                found += hits[x].ord == truth[y].ord;
        wanted += (double)nt;
        sc_arena_rewind(&a, m0);
    }
    sc_arena_fini(&a);
    return wanted ? found / wanted : 1.0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: knn_seeds_bench l2|cos|skewcos|skewl2|mip|mip8 FIRST_SEED "
                        "N_SEEDS [WIDTH,...]\n");
        return 2;
    }
    const char *c = argv[1];
    uint64_t first = strtoull(argv[2], NULL, 10);
    int n_seeds = atoi(argv[3]);
    int32_t widths[MAXW];
    int n_w = 0;
    for (const char *s = argc > 4 ? argv[4] : "-1,0"; *s && n_w < MAXW;) {
        widths[n_w++] = (int32_t)strtol(s, (char **)&s, 10);
        if (*s == ',')
            s++;
    }
    bool mip = !strncmp(c, "mip", 3);
    bool cosine = !strcmp(c, "cos") || !strncmp(c, "skewcos", 7);
    sc_vec_params p = {DIMS,
                       mip      ? SC_VEC_SIM_MIP
                       : cosine ? SC_VEC_SIM_COSINE
                                : SC_VEC_SIM_L2,
                       SC_VEC_ELEM_FLOAT,
                       !strcmp(c, "l2") || !strcmp(c, "mip") || !strcmp(c, "skewcosf")
                           ? SC_VEC_INDEX_HNSW
                           : SC_VEC_INDEX_INT8_HNSW,
                       16,
                       100};
    float scale[DIMS];
    for (int d = 0; d < DIMS; d++)
        scale[d] = 1.0f;
    if (!strncmp(c, "skewcos", 7))
        scale[0] = 20.0f;
    if (!strcmp(c, "skewl2"))
        scale[0] = 50.0f;
    uint32_t n = mip ? 36000 : 3000;
    float *v = malloc(((size_t)n + NQ) * DIMS * sizeof(float)), *q = v + (size_t)n * DIMS;
    uint32_t *docs = malloc((size_t)n * sizeof(uint32_t));
    size_t words = (n + 63) / 64;
    uint64_t *half = calloc(words, sizeof(uint64_t));
    for (uint32_t i = 0; i < n; i++) {
        docs[i] = i;
        if (i % 2 == 0)
            half[i >> 6] |= 1ull << (i & 63);
    }
    double sum[MAXW][2] = {{0}};
    for (int si = 0; si < n_seeds; si++) {
        uint64_t seed = first + (uint64_t)si;
        rng = seed;
        if (mip) {
            make_vectors(v, n + NQ, false, scale); /* queries from the docs' centres */
        } else {
            make_vectors(v, n, cosine, scale);
            make_vectors(q, NQ, cosine, scale);
        }
        sc_buf sec = {0};
        if (sc_vec_section_write(&p, docs, v, n, NULL, 0, &sec) != SC_OK)
            return 1;
        uint8_t *mem = aligned_alloc(4096, (sec.len + 4095) / 4096 * 4096);
        memcpy(mem, sec.ptr, sec.len);
        sc_vec_field vf;
        const char *why = "";
        if (sc_vec_section_open(sc_slice_make(mem, sec.len), n, &vf, &why) != SC_OK) {
            fprintf(stderr, "open failed: %s\n", why);
            return 1;
        }
        for (int w = 0; w < n_w; w++) {
            int ex_all = 0, ex_half = 0;
            double r = recall(&vf, q, NULL, 0, widths[w], &ex_all);
            double rh = recall(&vf, q, half, (n + 1) / 2, widths[w], &ex_half);
            printf("%s\t%llu\t%d\t%.3f\t%.3f\t%d\n", c, (unsigned long long)seed, widths[w], r, rh,
                   ex_half);
            sum[w][0] += r;
            sum[w][1] += rh;
        }
        fflush(stdout);
        free(mem);
        sc_vec_free(&sec);
    }
    for (int w = 0; w < n_w; w++)
        printf("# %s width %d seeds %llu..%llu mean recall %.4f mean recall 50%% %.4f\n", c,
               widths[w], (unsigned long long)first, (unsigned long long)(first + n_seeds - 1),
               sum[w][0] / n_seeds, sum[w][1] / n_seeds);
    free(v);
    free(docs);
    free(half);
    return 0;
}
