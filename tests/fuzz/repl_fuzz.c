/* libFuzzer target for the replication messages (cluster/replication.h): the first byte picks
 * the decoder (0: a batch of operations, 1: a recovery request), the rest is the body. Bad
 * bytes must be refused (SC_ECORRUPT), never crash or read out of bounds; a batch that decodes
 * re-encodes to the same bytes. Seeds in tests/fuzz/corpus/repl/ (written by
 * SCRY_REPL_SEEDS_DIR=... cluster_replication_wire_test). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/replication.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    if (data[0] % 2 == 0) {
        sc_repl_ops m;
        if (sc_repl_ops_decode(p, n, &m) == SC_OK) {
            sc_wire_buf b;
            sc_wire_buf_init(&b);
            char index[256];
            memcpy(index, m.index.ptr, m.index.len);
            index[m.index.len] = 0;
            if (memchr(m.index.ptr, 0, m.index.len) == NULL) {
                sc_repl_ops_put_header(&b, index, m.shard, m.term, m.refresh, m.n_ops);
                for (size_t i = 0; i < m.n_ops; i++)
                    sc_repl_ops_put_op(&b, &m.ops[i]);
                /* varints may be written longer than needed by a hostile encoder: compare
                 * only what the decoder then accepts again */
                sc_repl_ops again;
                if (b.st == SC_OK && sc_repl_ops_decode(b.ptr, b.len, &again) != SC_OK)
                    abort();
                if (b.st == SC_OK && again.n_ops != m.n_ops)
                    abort();
                sc_repl_ops_fini(&again);
            }
            sc_wire_buf_fini(&b);
        }
        sc_repl_ops_fini(&m);
    } else {
        sc_slice index, alloc;
        uint32_t shard;
        (void)!sc_repl_recover_decode(p, n, &index, &shard, &alloc);
    }
    return 0;
}
