/* Encoders and decoders of the cluster-wide statistics message (stats_wire.h). */
#include "cluster/stats_wire.h"

#include <string.h>

sc_status sc_stats_req_encode(const sc_stats_copy *c, size_t n, sc_wire_buf *b)
{
    sc_wire_put_uvar(b, n);
    for (size_t i = 0; i < n; i++) {
        sc_wire_put_bytes(b, c[i].index.ptr, c[i].index.len);
        sc_wire_put_uvar(b, c[i].shard);
    }
    return b->st;
}

sc_status sc_stats_req_decode(const uint8_t *p, size_t len, sc_arena *a, sc_stats_copy **out,
                              size_t *n)
{
    *out = NULL;
    *n = 0;
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, len);
    /* every copy takes at least 3 bytes (a name of one byte and a shard number) */
    size_t cnt = (size_t)sc_wire_get_uvar_max(&r, (uint64_t)(r.end - r.p) / 3);
    if (r.st != SC_OK)
        return r.st;
    sc_stats_copy *c = sc_arena_calloc(a, cnt ? cnt : 1, sizeof *c);
    if (!c)
        return SC_ENOMEM;
    for (size_t i = 0; i < cnt && r.st == SC_OK; i++) {
        c[i].index = sc_wire_get_bytes(&r);
        c[i].shard = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
        if (r.st == SC_OK && !c[i].index.len)
            return SC_ECORRUPT;
    }
    sc_status st = sc_wire_reader_finish(&r);
    if (st == SC_OK) {
        *out = c;
        *n = cnt;
    }
    return st;
}

sc_status sc_stats_resp_encode(const sc_stats_copy_resp *r, size_t n, sc_wire_buf *b)
{
    sc_wire_put_uvar(b, n);
    for (size_t i = 0; i < n; i++) {
        sc_wire_put_bool(b, r[i].open);
        if (!r[i].open)
            continue;
        for (size_t f = 0; f < SC_INDEX_STATS_N_FIELDS; f++)
            sc_wire_put_uvar(b, *(const uint64_t *)((const char *)&r[i].s + sc_index_stats_fields[f]));
    }
    return b->st;
}

sc_status sc_stats_resp_decode(const uint8_t *p, size_t len, sc_arena *a, sc_stats_copy_resp **out,
                               size_t *n)
{
    *out = NULL;
    *n = 0;
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, len);
    size_t cnt = (size_t)sc_wire_get_uvar_max(&r, (uint64_t)(r.end - r.p)); /* >= 1 byte each */
    if (r.st != SC_OK)
        return r.st;
    sc_stats_copy_resp *c = sc_arena_calloc(a, cnt ? cnt : 1, sizeof *c);
    if (!c)
        return SC_ENOMEM;
    for (size_t i = 0; i < cnt && r.st == SC_OK; i++) {
        c[i].open = sc_wire_get_bool(&r);
        if (!c[i].open)
            continue;
        for (size_t f = 0; f < SC_INDEX_STATS_N_FIELDS; f++)
            *(uint64_t *)((char *)&c[i].s + sc_index_stats_fields[f]) = sc_wire_get_uvar(&r);
    }
    sc_status st = sc_wire_reader_finish(&r);
    if (st == SC_OK) {
        *out = c;
        *n = cnt;
    }
    return st;
}
