/* libFuzzer target for the cluster-wide statistics transport decoders (cluster/stats_wire.h):
 * the first byte picks the request (even) or the answer (odd). Decoders must return
 * SC_ECORRUPT on bad bytes, never crash or read out of bounds; what they accept has non-empty
 * index names and re-encodes to bytes they accept again, with the same entries. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/stats_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_arena a;
    sc_arena_init(&a, 8u << 20);
    if (data[0] % 2 == 0) {
        sc_stats_copy *c, *c2;
        size_t cnt, cnt2;
        if (sc_stats_req_decode(p, n, &a, &c, &cnt) == SC_OK) {
            for (size_t i = 0; i < cnt; i++)
                if (!c[i].index.len)
                    abort();
            if (sc_stats_req_encode(c, cnt, &b) == SC_OK) {
                sc_status st = sc_stats_req_decode(b.ptr, b.len, &a, &c2, &cnt2);
                if (st == SC_ENOMEM)
                    goto out;
                if (st != SC_OK || cnt2 != cnt)
                    abort();
                for (size_t i = 0; i < cnt; i++)
                    if (c2[i].shard != c[i].shard || c2[i].index.len != c[i].index.len ||
                        memcmp(c2[i].index.ptr, c[i].index.ptr, c[i].index.len))
                        abort();
            }
        }
    } else {
        sc_stats_copy_resp *r, *r2;
        size_t cnt, cnt2;
        if (sc_stats_resp_decode(p, n, &a, &r, &cnt) == SC_OK &&
            sc_stats_resp_encode(r, cnt, &b) == SC_OK) {
            sc_status st = sc_stats_resp_decode(b.ptr, b.len, &a, &r2, &cnt2);
            if (st == SC_ENOMEM)
                goto out;
            if (st != SC_OK || cnt2 != cnt || (cnt && memcmp(r, r2, cnt * sizeof *r)))
                abort();
        }
    }
out:
    sc_arena_fini(&a);
    sc_wire_buf_fini(&b);
    return 0;
}
