/* Elasticsearch-compatible routing (murmur3 over UTF-16LE); see routing.h. */
#include "shard/routing.h"

#include <stdlib.h>
#include <string.h>

static uint32_t rotl32(uint32_t x, int r)
{
    return (x << r) | (x >> (32 - r));
}

static uint32_t fmix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    h ^= h >> 16;
    return h;
}

uint32_t sc_murmur3_32(const void *data, size_t len, uint32_t seed)
{
    const uint8_t *p = data;
    const uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
    uint32_t h = seed;
    size_t nblocks = len / 4;
    for (size_t i = 0; i < nblocks; i++) {
        uint32_t k;
        memcpy(&k, p + 4 * i, 4); /* little-endian hosts only (x86-64, aarch64) */
        k *= c1;
        k = rotl32(k, 15);
        k *= c2;
        h ^= k;
        h = rotl32(h, 13);
        h = h * 5 + 0xe6546b64;
    }
    const uint8_t *tail = p + nblocks * 4;
    uint32_t k1 = 0;
    switch (len & 3) {
    case 3:
        k1 ^= (uint32_t)tail[2] << 16;
        __attribute__((fallthrough));
    case 2:
        k1 ^= (uint32_t)tail[1] << 8;
        __attribute__((fallthrough));
    case 1:
        k1 ^= tail[0];
        k1 *= c1;
        k1 = rotl32(k1, 15);
        k1 *= c2;
        h ^= k1;
        break;
    default:
        break;
    }
    h ^= (uint32_t)len;
    return fmix32(h);
}

/* Decodes one UTF-8 code point at s[*i]; invalid sequences give U+FFFD and advance one byte. */
static uint32_t utf8_next(sc_slice s, size_t *i)
{
    const uint8_t *p = s.ptr + *i;
    size_t left = s.len - *i;
    uint8_t c = p[0];
    uint32_t cp;
    size_t n;
    if (c < 0x80) {
        *i += 1;
        return c;
    } else if ((c & 0xE0) == 0xC0 && c >= 0xC2) {
        cp = c & 0x1F;
        n = 2;
    } else if ((c & 0xF0) == 0xE0) {
        cp = c & 0x0F;
        n = 3;
    } else if ((c & 0xF8) == 0xF0 && c <= 0xF4) {
        cp = c & 0x07;
        n = 4;
    } else {
        *i += 1;
        return 0xFFFD;
    }
    if (left < n) {
        *i += 1;
        return 0xFFFD;
    }
    for (size_t k = 1; k < n; k++) {
        if ((p[k] & 0xC0) != 0x80) {
            *i += 1;
            return 0xFFFD;
        }
        cp = (cp << 6) | (p[k] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
        *i += 1;
        return 0xFFFD;
    }
    *i += n;
    return cp;
}

int32_t sc_routing_hash(sc_slice routing)
{
    uint8_t stackbuf[512];
    uint8_t *buf = stackbuf;
    size_t cap = sizeof(stackbuf), len = 0;
    uint8_t *heap = NULL;
    if (routing.len * 4 > cap) {
        heap = malloc(routing.len * 4);
        if (heap) {
            buf = heap;
            cap = routing.len * 4;
        }
    }
    size_t i = 0;
    uint32_t h;
    /* Fallback when the heap buffer could not be allocated: hash incrementally is not possible
     * with this murmur implementation, so truncate (never happens in practice for ids). */
    while (i < routing.len && len + 4 <= cap) {
        uint32_t cp = utf8_next(routing, &i);
        if (cp >= 0x10000) {
            cp -= 0x10000;
            uint16_t hi = (uint16_t)(0xD800 + (cp >> 10)), lo = (uint16_t)(0xDC00 + (cp & 0x3FF));
            buf[len++] = (uint8_t)hi;
            buf[len++] = (uint8_t)(hi >> 8);
            buf[len++] = (uint8_t)lo;
            buf[len++] = (uint8_t)(lo >> 8);
        } else {
            buf[len++] = (uint8_t)cp;
            buf[len++] = (uint8_t)(cp >> 8);
        }
    }
    h = sc_murmur3_32(buf, len, 0);
    free(heap);
    return (int32_t)h;
}

uint32_t sc_routing_shard(sc_slice routing, uint32_t num_shards, uint32_t routing_num_shards)
{
    if (num_shards == 0)
        return 0;
    if (routing_num_shards == 0 || routing_num_shards % num_shards != 0)
        routing_num_shards = num_shards;
    int64_t h = sc_routing_hash(routing);
    int64_t m = h % (int64_t)routing_num_shards;
    if (m < 0)
        m += routing_num_shards;
    return (uint32_t)(m / (routing_num_shards / num_shards));
}

uint32_t sc_routing_default_num_routing_shards(uint32_t num_shards)
{
    /* MetadataCreateIndexService.calculateNumRoutingShards (7.0+): the largest
     * num_shards * 2^k <= 1024, but at least one split. */
    if (num_shards == 0)
        return 1;
    int log2_shards = 0;
    while ((1u << log2_shards) < num_shards)
        log2_shards++;
    int splits = 10 - log2_shards;
    if (splits < 1)
        splits = 1;
    return num_shards << splits;
}
