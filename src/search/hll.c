/* HyperLogLog++ sketch (see hll.h): a linear-counting hash set of 32-bit encodings that switches
 * to 2^p byte registers, Ertl's improved raw estimator, merge across modes, and the versioned
 * binary encoding of docs/aggregations-sketches.md. Also MurmurHash3 x64_128 for value hashes. */
#include "search/hll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/varint.h"

SC_ALLOC_POOL_DEFINE(sc_pool_search_hll, "search.hll");

struct sc_hll {
    sc_alloc_pool *pool; /* with arena NULL */
    sc_arena *arena;     /* or NULL */
    uint32_t p;
    bool linear;
    uint32_t set_len; /* distinct encodings in the set (linear mode) */
    uint32_t set_cap; /* slots, a power of two; 0 before the first add */
    uint32_t *set;    /* open addressing, linear probing; 0 = empty (encodings are never 0) */
    uint8_t *regs;    /* 2^p registers (register mode) */
};

/* 31 bits of hash prefix are kept per encoding: the linear estimate uses m = 2^31. */
#define PREFIX_BITS 31
#define MIN_SET_CAP 16u

/* The most encodings the set holds before switching: 3/4 of 2^p / 4 slots (ES's rule), so the
 * full set takes as many bytes (2^p) as the registers that replace it. */
static uint32_t max_set_len(uint32_t p)
{
    return 3u << (p - 4);
}

static uint32_t max_set_cap(uint32_t p)
{
    return 1u << (p - 2);
}

uint32_t sc_hll_precision_for_threshold(int64_t threshold)
{
    if (threshold < 0)
        threshold = 0;
    if (threshold > SC_HLL_MAX_THRESHOLD)
        threshold = SC_HLL_MAX_THRESHOLD;
    /* ceil(t / 0.75) = ceil(4t / 3) */
    uint64_t x = ((uint64_t)threshold * 4 + 2) / 3 * 4;
    uint32_t bits = x ? 64 - (uint32_t)__builtin_clzll(x) : 0;
    if (bits < SC_HLL_MIN_PRECISION)
        bits = SC_HLL_MIN_PRECISION;
    if (bits > SC_HLL_MAX_PRECISION)
        bits = SC_HLL_MAX_PRECISION;
    return bits;
}

/* ---- encodings ------------------------------------------------------------------------------
 * A hash h is kept in the set as a non-zero 32-bit encoding from which its register index and
 * rank can be recovered exactly:
 *   bit 0 = 0: bits 31..1 are the top 31 bits of h; used when the 31 - p bits after the register
 *              index are not all zero, so the rank is among them;
 *   bit 0 = 1: bits 31..7 hold the register index, bits 6..1 the rank (computed from all 64 - p
 *              bits after the index); used when those 31 - p bits are all zero.
 * Distinct encodings are thus (almost exactly) distinct 31-bit prefixes. */

static uint32_t rank_of(uint64_t h, uint32_t p)
{
    uint64_t w = h << p;
    return w ? (uint32_t)__builtin_clzll(w) + 1 : 64 - p + 1;
}

static uint32_t encode_hash(uint64_t h, uint32_t p)
{
    uint32_t top = (uint32_t)(h >> (64 - PREFIX_BITS));
    uint32_t mid = top & ((1u << (PREFIX_BITS - p)) - 1);
    if (mid)
        return top << 1;
    return (uint32_t)(h >> (64 - p)) << 7 | rank_of(h, p) << 1 | 1u;
}

static void decode_enc(uint32_t e, uint32_t p, uint32_t *idx, uint32_t *rank)
{
    if (e & 1) {
        *idx = e >> 7;
        *rank = (e >> 1) & 63;
    } else {
        uint32_t top = e >> 1;
        uint32_t mid = top & ((1u << (PREFIX_BITS - p)) - 1);
        *idx = top >> (PREFIX_BITS - p);
        *rank = (uint32_t)__builtin_clz(mid) - p;
    }
}

/* True when e is an encoding encode_hash can produce at precision p. */
static bool enc_valid(uint32_t e, uint32_t p)
{
    if (e & 1) {
        uint32_t rank = (e >> 1) & 63;
        return (e >> 7) < (1u << p) && rank >= PREFIX_BITS - p + 1 && rank <= 64 - p + 1;
    }
    return ((e >> 1) & ((1u << (PREFIX_BITS - p)) - 1)) != 0;
}

static uint32_t slot_of(uint32_t e, uint32_t mask)
{
    /* encodings are hash bits already; one multiply spreads the flagged ones too */
    return (e * 0x9E3779B1u) >> 7 & mask;
}

/* ---- lifecycle ------------------------------------------------------------------------------
 * Memory comes from the arena when there is one (freeing is a no-op: replaced blocks stay in the
 * arena, whose budget counts them), else from the accounting pool. */

static void *mem_calloc(sc_alloc_pool *pool, sc_arena *arena, size_t n, size_t size)
{
    return arena ? sc_arena_calloc(arena, n, size) : sc_alloc_calloc(pool, n, size);
}

static void mem_free(const sc_hll *h, void *p)
{
    if (!h->arena)
        sc_alloc_free(h->pool, p);
}

static sc_status oom(const sc_arena *arena)
{
    return arena && arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
}

sc_status sc_hll_new(uint32_t precision, sc_alloc_pool *pool, sc_arena *arena, sc_hll **out)
{
    *out = NULL;
    if (precision < SC_HLL_MIN_PRECISION || precision > SC_HLL_MAX_PRECISION)
        return SC_EINVAL;
    if (!pool)
        pool = &sc_pool_search_hll;
    sc_hll *h = mem_calloc(pool, arena, 1, sizeof *h);
    if (!h)
        return oom(arena);
    h->pool = pool;
    h->arena = arena;
    h->p = precision;
    h->linear = true;
    *out = h;
    return SC_OK;
}

void sc_hll_free(sc_hll *h)
{
    if (!h)
        return;
    mem_free(h, h->set);
    mem_free(h, h->regs);
    mem_free(h, h);
}

uint32_t sc_hll_precision(const sc_hll *h)
{
    return h->p;
}

bool sc_hll_is_linear(const sc_hll *h)
{
    return h->linear;
}

size_t sc_hll_mem_bytes(const sc_hll *h)
{
    size_t n = sizeof *h;
    if (h->set)
        n += (size_t)h->set_cap * sizeof(uint32_t);
    if (h->regs)
        n += (size_t)1 << h->p;
    return n;
}

/* ---- modes ---------------------------------------------------------------------------------- */

static void reg_update(uint8_t *regs, uint32_t idx, uint32_t rank)
{
    if (regs[idx] < rank)
        regs[idx] = (uint8_t)rank;
}

/* Replays the set into fresh registers and drops the set. */
static sc_status to_registers(sc_hll *h)
{
    uint8_t *regs = mem_calloc(h->pool, h->arena, (size_t)1 << h->p, 1);
    if (!regs)
        return oom(h->arena);
    for (uint32_t i = 0; i < h->set_cap; i++) {
        if (h->set[i]) {
            uint32_t idx, rank;
            decode_enc(h->set[i], h->p, &idx, &rank);
            reg_update(regs, idx, rank);
        }
    }
    mem_free(h, h->set);
    h->set = NULL;
    h->set_cap = h->set_len = 0;
    h->regs = regs;
    h->linear = false;
    return SC_OK;
}

static void set_put(uint32_t *set, uint32_t mask, uint32_t e)
{
    uint32_t i = slot_of(e, mask);
    while (set[i])
        i = (i + 1) & mask;
    set[i] = e;
}

static sc_status set_resize(sc_hll *h, uint32_t cap)
{
    uint32_t *set = mem_calloc(h->pool, h->arena, cap, sizeof(uint32_t));
    if (!set)
        return oom(h->arena);
    for (uint32_t i = 0; i < h->set_cap; i++)
        if (h->set[i])
            set_put(set, cap - 1, h->set[i]);
    mem_free(h, h->set);
    h->set = set;
    h->set_cap = cap;
    return SC_OK;
}

/* Adds one encoding in linear mode, growing the set or switching to registers as needed. */
static sc_status add_enc(sc_hll *h, uint32_t e)
{
    if (h->set_cap) {
        uint32_t mask = h->set_cap - 1;
        for (uint32_t i = slot_of(e, mask); h->set[i]; i = (i + 1) & mask)
            if (h->set[i] == e)
                return SC_OK;
    }
    if (h->set_len + 1 > max_set_len(h->p)) {
        SC_TRY(to_registers(h));
        uint32_t idx, rank;
        decode_enc(e, h->p, &idx, &rank);
        reg_update(h->regs, idx, rank);
        return SC_OK;
    }
    if ((uint64_t)(h->set_len + 1) * 4 > (uint64_t)h->set_cap * 3) {
        uint32_t cap = h->set_cap ? h->set_cap * 2 : MIN_SET_CAP;
        if (cap > max_set_cap(h->p))
            cap = max_set_cap(h->p);
        SC_TRY(set_resize(h, cap));
    }
    set_put(h->set, h->set_cap - 1, e);
    h->set_len++;
    return SC_OK;
}

sc_status sc_hll_add(sc_hll *h, uint64_t hash)
{
    if (!h->linear) {
        reg_update(h->regs, (uint32_t)(hash >> (64 - h->p)), rank_of(hash, h->p));
        return SC_OK;
    }
    return add_enc(h, encode_hash(hash, h->p));
}

sc_status sc_hll_add_batch(sc_hll *h, const uint64_t *hashes, size_t n)
{
    size_t i = 0;
    for (; i < n && h->linear; i++)
        SC_TRY(add_enc(h, encode_hash(hashes[i], h->p)));
    uint8_t *regs = h->regs;
    uint32_t p = h->p, shift = 64 - p;
    for (; i < n; i++)
        reg_update(regs, (uint32_t)(hashes[i] >> shift), rank_of(hashes[i], p));
    return SC_OK;
}

sc_status sc_hll_merge(sc_hll *dst, const sc_hll *src)
{
    if (dst->p != src->p)
        return SC_EINVAL;
    if (src->linear) {
        for (uint32_t i = 0; i < src->set_cap; i++) {
            uint32_t e = src->set[i];
            if (!e)
                continue;
            if (dst->linear) {
                SC_TRY(add_enc(dst, e));
            } else {
                uint32_t idx, rank;
                decode_enc(e, dst->p, &idx, &rank);
                reg_update(dst->regs, idx, rank);
            }
        }
        return SC_OK;
    }
    if (dst->linear)
        SC_TRY(to_registers(dst));
    size_t m = (size_t)1 << dst->p;
    for (size_t i = 0; i < m; i++)
        if (dst->regs[i] < src->regs[i])
            dst->regs[i] = src->regs[i];
    return SC_OK;
}

/* ---- estimate ------------------------------------------------------------------------------
 * Ertl, "New cardinality estimation algorithms for HyperLogLog sketches" (2017), section on the
 * improved raw estimator: with C_k registers of value k (0..q+1, q = 64 - p),
 *   E = m^2 / (2 ln 2) / (m sigma(C_0/m) + sum_{k=1..q} C_k 2^-k + m tau(1 - C_{q+1}/m) 2^-q),
 *   sigma(x) = x + sum_{k>=1} x^(2^k) 2^(k-1),  tau(x) = (1 - x - sum_{k>=1} (1 - x^(2^-k))^2
 * 2^-k)/3. sigma corrects the small range (it degenerates to linear counting) and tau the saturated
 * range, so no empirical bias tables and no switching thresholds are needed. */

static double sigma(double x)
{
    if (x >= 1.0)
        return INFINITY;
    double y = 1.0, z = x, prev;
    do {
        x *= x;
        prev = z;
        z += x * y;
        y += y;
    } while (z != prev);
    return z;
}

static double tau(double x)
{
    if (x <= 0.0 || x >= 1.0)
        return 0.0;
    double y = 1.0, z = 1.0 - x, prev;
    do {
        x = sqrt(x);
        prev = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
    } while (z != prev);
    return z / 3.0;
}

static uint64_t estimate_registers(const sc_hll *h)
{
    uint32_t counts[66] = {0};
    size_t m = (size_t)1 << h->p;
    for (size_t i = 0; i < m; i++)
        counts[h->regs[i]]++;
    uint32_t q = 64 - h->p;
    double dm = (double)m;
    double z = dm * tau(1.0 - counts[q + 1] / dm);
    for (uint32_t k = q; k >= 1; k--)
        z = 0.5 * (z + counts[k]);
    z += dm * sigma(counts[0] / dm);
    if (isinf(z))
        return 0;
    double e = dm * dm / (2.0 * M_LN2) / z;
    if (!(e < 1.8e19))
        return UINT64_MAX;
    return (uint64_t)llround(e);
}

uint64_t sc_hll_estimate(const sc_hll *h)
{
    if (!h->linear)
        return estimate_registers(h);
    if (h->set_len == 0)
        return 0;
    double m = (double)(1u << PREFIX_BITS);
    return (uint64_t)llround(-m * log1p(-(double)h->set_len / m));
}

/* ---- encoding (grammar in docs/aggregations-sketches.md) ------------------------------------ */

enum {
    MODE_LINEAR = 0,
    MODE_REGISTERS = 1
};

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

sc_status sc_hll_encode(const sc_hll *h, sc_buf *out)
{
    uint8_t head[4] = {'H', 'L', SC_HLL_ENCODING_VERSION, (uint8_t)h->p};
    SC_TRY(sc_vec_append(out, head, 4));
    if (!h->linear) {
        SC_TRY(sc_vec_push(out, (uint8_t)MODE_REGISTERS));
        return sc_vec_append(out, h->regs, (size_t)1 << h->p);
    }
    SC_TRY(sc_vec_push(out, (uint8_t)MODE_LINEAR));
    uint32_t *sorted = malloc(((size_t)h->set_len + 1) * sizeof(uint32_t));
    if (!sorted)
        return SC_ENOMEM;
    uint32_t n = 0;
    for (uint32_t i = 0; i < h->set_cap; i++)
        if (h->set[i])
            sorted[n++] = h->set[i];
    qsort(sorted, n, sizeof(uint32_t), cmp_u32);
    sc_status st = sc_vec_reserve(out, SC_VARINT_MAX_BYTES * ((size_t)n + 1));
    if (st == SC_OK) {
        out->len += sc_varint_put(out->ptr + out->len, n);
        uint32_t prev = 0;
        for (uint32_t i = 0; i < n; i++) {
            out->len += sc_varint_put(out->ptr + out->len, sorted[i] - prev);
            prev = sorted[i];
        }
    }
    free(sorted);
    return st;
}

/* One varint in its shortest form (so accepted bytes are canonical), else SC_ECORRUPT. */
static sc_status get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *start = *p;
    if (sc_varint_get(p, end, v) != SC_OK || (size_t)(*p - start) != sc_varint_len(*v))
        return SC_ECORRUPT;
    return SC_OK;
}

static sc_status decode_linear(sc_hll *h, const uint8_t *p, const uint8_t *end)
{
    uint64_t n;
    if (get_varint(&p, end, &n) != SC_OK || n > max_set_len(h->p) || n > (uint64_t)(end - p))
        return SC_ECORRUPT;
    if (n) {
        uint32_t cap = MIN_SET_CAP;
        while ((uint64_t)n * 4 > (uint64_t)cap * 3)
            cap *= 2;
        if (cap > max_set_cap(h->p))
            cap = max_set_cap(h->p);
        SC_TRY(set_resize(h, cap));
    }
    uint64_t prev = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t d;
        if (get_varint(&p, end, &d) != SC_OK || d == 0 || d > UINT32_MAX - prev)
            return SC_ECORRUPT;
        prev += d;
        if (!enc_valid((uint32_t)prev, h->p))
            return SC_ECORRUPT;
        set_put(h->set, h->set_cap - 1, (uint32_t)prev);
        h->set_len++;
    }
    return p == end ? SC_OK : SC_ECORRUPT;
}

sc_status sc_hll_decode(sc_slice in, sc_alloc_pool *pool, sc_arena *arena, sc_hll **out)
{
    *out = NULL;
    if (in.len < 5 || in.ptr[0] != 'H' || in.ptr[1] != 'L' ||
        in.ptr[2] != SC_HLL_ENCODING_VERSION || in.ptr[3] < SC_HLL_MIN_PRECISION ||
        in.ptr[3] > SC_HLL_MAX_PRECISION || in.ptr[4] > MODE_REGISTERS)
        return SC_ECORRUPT;
    uint32_t p = in.ptr[3];
    const uint8_t *body = in.ptr + 5, *end = in.ptr + in.len;
    if (in.ptr[4] == MODE_REGISTERS) {
        size_t m = (size_t)1 << p;
        if ((size_t)(end - body) != m)
            return SC_ECORRUPT;
        for (size_t i = 0; i < m; i++)
            if (body[i] > 64 - p + 1)
                return SC_ECORRUPT;
    }
    sc_hll *h;
    SC_TRY(sc_hll_new(p, pool, arena, &h));
    sc_status st;
    if (in.ptr[4] == MODE_REGISTERS) {
        h->regs = mem_calloc(h->pool, h->arena, (size_t)1 << p, 1);
        st = h->regs ? SC_OK : oom(h->arena);
        if (h->regs) {
            memcpy(h->regs, body, (size_t)1 << p);
            h->linear = false;
            st = SC_OK;
        }
    } else {
        st = decode_linear(h, body, end);
    }
    if (st != SC_OK) {
        sc_hll_free(h);
        return st;
    }
    *out = h;
    return SC_OK;
}

/* ---- hashing: MurmurHash3 x64_128 (public domain algorithm by Austin Appleby) --------------- */

static uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void sc_murmur3_x64_128(const void *key, size_t len, uint32_t seed, uint64_t out[2])
{
    const uint8_t *data = key;
    const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
    uint64_t h1 = seed, h2 = seed;
    size_t nblocks = len / 16;
    for (size_t i = 0; i < nblocks; i++) {
        uint64_t k1 = load_le64(data + i * 16), k2 = load_le64(data + i * 16 + 8);
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        h1 = rotl64(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52dce729;
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        h2 = rotl64(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495ab5;
    }
    const uint8_t *tail = data + nblocks * 16;
    size_t rest = len & 15;
    uint64_t k1 = 0, k2 = 0;
    for (size_t i = rest; i > 8; i--)
        k2 = k2 << 8 | tail[i - 1];
    for (size_t i = rest < 8 ? rest : 8; i > 0; i--)
        k1 = k1 << 8 | tail[i - 1];
    if (rest > 8) {
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
    }
    if (rest > 0) {
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
    }
    h1 ^= (uint64_t)len;
    h2 ^= (uint64_t)len;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 += h2;
    h2 += h1;
    out[0] = h1;
    out[1] = h2;
}

uint64_t sc_hll_hash_bytes(sc_slice s)
{
    uint64_t out[2];
    sc_murmur3_x64_128(s.ptr ? s.ptr : (const uint8_t *)"", s.len, 0, out);
    return out[0];
}

uint64_t sc_hll_hash_u64(uint64_t v)
{
    return fmix64(v);
}
