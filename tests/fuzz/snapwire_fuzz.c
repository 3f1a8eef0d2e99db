/* libFuzzer target for the clustered snapshot's transport decoders (cluster/snapshot_wire.h):
 * the first byte picks the shard request (even) or the shard answer (odd). Decoders must return
 * SC_ECORRUPT on bad bytes, never crash or read out of bounds; what they accept re-encodes to
 * bytes they accept again, and an accepted answer's names are plain file names and hex blobs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/snapshot_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    if (data[0] % 2 == 0) {
        sc_snap_shard_req q;
        if (sc_snap_shard_req_decode(p, n, &q) == SC_OK) {
            if (!q.repo.len || !q.index.len || !q.snapshot_uuid.len)
                abort();
            if (sc_snap_shard_req_encode(&q, &b) == SC_OK &&
                sc_snap_shard_req_decode(b.ptr, b.len, &q) != SC_OK)
                abort();
        }
    } else {
        sc_arena a;
        sc_arena_init(&a, 8u << 20);
        sc_snap_shard_resp r;
        sc_status st = sc_snap_shard_resp_decode(p, n, &a, &r);
        if (st == SC_OK) {
            for (size_t i = 0; i < r.n_files; i++)
                if (!r.files[i].name.len || memchr(r.files[i].name.ptr, '/', r.files[i].name.len) ||
                    r.files[i].blob.len != 32)
                    abort();
            sc_status again = sc_snap_shard_resp_encode(&r, &b) == SC_OK
                                  ? sc_snap_shard_resp_decode(b.ptr, b.len, &a, &r)
                                  : SC_OK;
            if (again != SC_OK && again != SC_ENOMEM)
                abort();
        }
        sc_arena_fini(&a);
    }
    sc_wire_buf_fini(&b);
    return 0;
}
