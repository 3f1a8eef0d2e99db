/* `scry gen vectors`: a Gaussian-mixture vector set for kNN tests and benchmarks: `clusters`
 * centres drawn N(0, 3^2) per dimension, each vector a centre plus N(0, 1) noise (so the
 * neighbours of a vector are mostly in its own cluster, like embeddings of topics). Those
 * clusters are isotropic: their intrinsic dimension is `dims`, as hard for graph search as
 * random data. With `intrinsic` = R > 0 each cluster c instead has a dims x R matrix A_c of
 * N(0, 1/R) entries and a vector is centre + A_c z + 0.1 e, z ~ N(0, I_R), e ~ N(0, I_dims):
 * the same spread per dimension (about 1) but concentrated near an R-dimensional subspace,
 * closer to what learned embeddings look like. Written as
 * NDJSON documents ({"v": [...], "cluster": c, "sel": i % 1000}, optionally with _bulk action
 * lines) or as fvecs (per vector: int32 dims, then dims float32, little-endian), the format the
 * benchmark (bench/knn_bench.c, bench/knn_compare.py) reads. Deterministic in the seed. */
#include <stdlib.h>

#include "cmd/gen_internal.h"

int sc__gen_vectors(const gen_opts *g, gen_out *o)
{
    uint32_t dims = g->dims ? g->dims : 128, nc = g->clusters ? g->clusters : 64;
    uint32_t rk = g->intrinsic;
    if (rk > dims) {
        fprintf(stderr, "scry gen vectors: --intrinsic-dims %u is more than --dims %u\n", rk,
                dims);
        return 2;
    }
    gen_rng r;
    gen_rng_seed(&r, g->seed);
    float *centres = malloc((size_t)nc * dims * sizeof(float));
    float *v = malloc((size_t)dims * sizeof(float));
    float *basis = rk ? malloc((size_t)nc * dims * rk * sizeof(float)) : NULL;
    double *z = rk ? malloc((size_t)rk * sizeof(double)) : NULL;
    if (!centres || !v || (rk && (!basis || !z))) {
        free(centres);
        free(v);
        free(basis);
        free(z);
        return 1;
    }
    for (size_t i = 0; i < (size_t)nc * dims; i++)
        centres[i] = (float)(3.0 * gen_normal(&r));
    for (size_t i = 0; rk && i < (size_t)nc * dims * rk; i++)
        basis[i] = (float)(gen_normal(&r) / sqrt((double)rk));
    for (uint64_t i = 0; i < g->docs && !o->failed; i++) {
        uint32_t c = (uint32_t)gen_below(&r, nc);
        if (rk) {
            for (uint32_t j = 0; j < rk; j++)
                z[j] = gen_normal(&r);
            const float *a = basis + (size_t)c * dims * rk;
            for (uint32_t d = 0; d < dims; d++) {
                double x = 0;
                for (uint32_t j = 0; j < rk; j++)
                    x += (double)a[(size_t)d * rk + j] * z[j];
                v[d] = (float)(centres[(size_t)c * dims + d] + x + 0.1 * gen_normal(&r));
            }
        } else {
            for (uint32_t d = 0; d < dims; d++)
                v[d] = centres[(size_t)c * dims + d] + (float)gen_normal(&r);
        }
        if (g->fvecs) {
            int32_t n = (int32_t)dims;
            gen_put(o, (const char *)&n, 4);
            gen_put(o, (const char *)v, (size_t)dims * 4);
            continue;
        }
        gen_action(o, g);
        gen_puts(o, "{\"v\":[");
        for (uint32_t d = 0; d < dims; d++)
            gen_printf(o, d ? ",%.5g" : "%.5g", (double)v[d]);
        gen_printf(o, "],\"cluster\":%u,\"sel\":%u}\n", c, (unsigned)(i % 1000));
    }
    free(centres);
    free(v);
    free(basis);
    free(z);
    return 0;
}
