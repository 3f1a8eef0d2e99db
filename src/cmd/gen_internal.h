/* Shared pieces of the corpus generators (gen*.c): a seeded xoshiro256** generator, random
 * variates, and a buffered stdout writer. Private to src/cmd. Everything is deterministic: the
 * same seed gives the same sequence on every run. */
#ifndef SC_CMD_GEN_INTERNAL_H
#define SC_CMD_GEN_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct gen_rng {
    uint64_t s[4];
} gen_rng;

static inline uint64_t gen_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline void gen_rng_seed(gen_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = gen_splitmix(&seed);
}

static inline uint64_t gen_next(gen_rng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5;
    uint64_t res = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return res;
}

/* Uniform in [0, 1). */
static inline double gen_unit(gen_rng *r)
{
    return (double)(gen_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n). */
static inline uint64_t gen_below(gen_rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)gen_next(r) * n) >> 64);
}

static inline double gen_normal(gen_rng *r)
{
    double u = gen_unit(r), v = gen_unit(r);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

static inline double gen_lognormal(gen_rng *r, double median, double sigma)
{
    return median * exp(sigma * gen_normal(r));
}

/* Number of failures before the first success with success probability p (p in (0,1]). */
static inline uint64_t gen_geometric(gen_rng *r, double p)
{
    if (p >= 1.0)
        return 0;
    double g = floor(log(1.0 - gen_unit(r)) / log(1.0 - p));
    return g > 1e15 ? (uint64_t)1e15 : (uint64_t)g;
}

/* Buffered writer to stdout. */
typedef struct gen_out {
    char buf[1 << 20];
    size_t len;
    bool failed;
} gen_out;

static inline void gen_flush(gen_out *o)
{
    if (o->len && fwrite(o->buf, 1, o->len, stdout) != o->len)
        o->failed = true;
    o->len = 0;
}

static inline void gen_put(gen_out *o, const char *s, size_t n)
{
    if (o->len + n > sizeof(o->buf))
        gen_flush(o);
    if (n > sizeof(o->buf)) {
        if (fwrite(s, 1, n, stdout) != n)
            o->failed = true;
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static inline void gen_puts(gen_out *o, const char *s)
{
    gen_put(o, s, strlen(s));
}

/* printf-style append (short pieces only). */
__attribute__((format(printf, 2, 3))) void gen_printf(gen_out *o, const char *fmt, ...);

/* Appends s as a JSON string body (no quotes), escaping quotes, backslashes and controls. */
void gen_put_escaped(gen_out *o, const char *s, size_t n);

/* Options shared by the generators. */
typedef struct gen_opts {
    uint64_t seed;
    uint64_t docs;
    const char *data_dir; /* folder holding vocab.txt.gz and terms.txt (wiki) */
    bool bulk;            /* emit _bulk action lines before each document */
    const char *index;    /* index name in bulk action lines */
    uint32_t dims;        /* vectors: dimensions (default 128) */
    uint32_t clusters;    /* vectors: mixture components (default 64) */
    uint32_t intrinsic;   /* vectors: 0 = isotropic clusters, else each cluster spans this
                             many dimensions (centre + A_c z, z in R^intrinsic, + noise) */
    bool fvecs;           /* vectors: binary fvecs instead of NDJSON */
} gen_opts;

/* Writes the bulk action line if requested. */
void gen_action(gen_out *o, const gen_opts *g);

int sc__gen_wiki(const gen_opts *g, gen_out *o);
int sc__gen_taxis(const gen_opts *g, gen_out *o);
int sc__gen_logs(const gen_opts *g, gen_out *o);
int sc__gen_vectors(const gen_opts *g, gen_out *o);

#endif
