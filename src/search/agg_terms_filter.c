/* terms include / exclude (search/agg.h): regular expressions run as DFAs over the term bytes,
 * exact values, and hash partitions computed as Elasticsearch does so partition n holds the
 * same terms here and there (murmur3 x86_32, seed 31, of the bytes; BitMixer.mix64 of
 * numbers; floorMod by the number of partitions). */
#include <string.h>

#include "search/agg.h"
#include "search/automaton.h"

/* MurmurHash3 x86 32-bit (Austin Appleby's public-domain algorithm), little-endian blocks. */
static uint32_t murmur3_32(const uint8_t *p, size_t len, uint32_t seed)
{
    const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    uint32_t h = seed;
    size_t nb = len / 4;
    for (size_t i = 0; i < nb; i++) {
        uint32_t k = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                     (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
        k *= c1;
        k = (k << 15) | (k >> 17);
        k *= c2;
        h ^= k;
        h = (h << 13) | (h >> 19);
        h = h * 5 + 0xe6546b64u;
    }
    const uint8_t *tail = p + 4 * nb;
    uint32_t k = 0;
    switch (len & 3) {
    case 3:
        k ^= (uint32_t)tail[2] << 16;
        __attribute__((fallthrough));
    case 2:
        k ^= (uint32_t)tail[1] << 8;
        __attribute__((fallthrough));
    case 1:
        k ^= tail[0];
        k *= c1;
        k = (k << 15) | (k >> 17);
        k *= c2;
        h ^= k;
        break;
    default: break;
    }
    h ^= (uint32_t)len;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* HPPC's BitMixer.mix64. */
static uint64_t mix64(uint64_t k)
{
    k = (k ^ (k >> 32)) * UINT64_C(0x4cd6944c5cc20b6d);
    k = (k ^ (k >> 29)) * UINT64_C(0xfc12c5b19d3259e9);
    return k ^ (k >> 32);
}

static bool in_part(int64_t h, const sc_agg_term_filter *f)
{
    int64_t m = (int64_t)f->num_partitions;
    int64_t r = h % m;
    if (r < 0)
        r += m;
    return (uint32_t)r == f->partition;
}

bool sc_agg_term_filter_bytes(const sc_agg_term_filter *f, sc_slice term)
{
    if (!f)
        return true;
    if (f->num_partitions)
        return in_part((int32_t)murmur3_32(term.ptr, term.len, 31), f);
    if (f->include_re && !sc_automaton_run(f->include_re, term))
        return false;
    if (f->exclude_re && sc_automaton_run(f->exclude_re, term))
        return false;
    if (f->include) {
        bool found = false;
        for (size_t i = 0; i < f->n_include && !found; i++)
            found = sc_slice_eq(f->include[i], term);
        if (!found)
            return false;
    }
    for (size_t i = 0; i < f->n_exclude; i++)
        if (sc_slice_eq(f->exclude[i], term))
            return false;
    return true;
}

bool sc_agg_term_filter_num(const sc_agg_term_filter *f, int64_t v)
{
    if (!f)
        return true;
    if (f->num_partitions)
        return in_part((int64_t)mix64((uint64_t)v), f);
    if (f->include_num) {
        bool found = false;
        for (size_t i = 0; i < f->n_include_num && !found; i++)
            found = f->include_num[i] == v;
        if (!found)
            return false;
    }
    for (size_t i = 0; i < f->n_exclude_num; i++)
        if (f->exclude_num[i] == v)
            return false;
    return true;
}
