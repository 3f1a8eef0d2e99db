/* libFuzzer target for the replication messages (cluster/replication.h): the first byte picks
 * the decoder (modulo 7: 0 a batch of operations, 1 a recovery request, 2 a file recovery start,
 * 3 its plan, 4 a chunk request, 5 a chunk, 6 a finish), the rest is the body. Bad
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
    switch (data[0] % 7) {
    case 0: {
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
        break;
    }
    case 1: {
        sc_slice index, alloc;
        uint32_t shard;
        (void)!sc_repl_recover_decode(p, n, &index, &shard, &alloc);
        break;
    }
    case 2: {
        sc_slice index, alloc;
        uint32_t shard;
        uint64_t ids;
        (void)!sc_repl_files_start_decode(p, n, &index, &shard, &alloc, &ids);
        break;
    }
    case 3: {
        sc_repl_files_plan pl;
        if (sc_repl_files_plan_decode(p, n, &pl) == SC_OK) {
            /* names are safe to join to a folder; the plan re-encodes to a decodable one */
            for (size_t i = 0; i < pl.n_files; i++)
                if (strchr(pl.files[i].name, '/') || pl.files[i].name[0] == '.' ||
                    !pl.files[i].name[0])
                    abort();
            sc_wire_buf b;
            sc_wire_buf_init(&b);
            sc_repl_files_plan_encode(&b, &pl);
            sc_repl_files_plan again;
            if (b.st == SC_OK && sc_repl_files_plan_decode(b.ptr, b.len, &again) != SC_OK)
                abort();
            if (b.st == SC_OK && again.n_files != pl.n_files)
                abort();
            sc_repl_files_plan_fini(&again);
            sc_wire_buf_fini(&b);
        }
        sc_repl_files_plan_fini(&pl);
        break;
    }
    case 4: {
        uint64_t id, off;
        uint32_t file, max;
        (void)!sc_repl_chunk_req_decode(p, n, &id, &file, &off, &max);
        break;
    }
    case 5: {
        sc_slice d;
        uint64_t sum;
        if (sc_repl_chunk_decode(p, n, &d, &sum) == SC_OK && d.len > SC_REPL_CHUNK_MAX)
            abort();
        break;
    }
    default: {
        sc_slice index, alloc;
        uint32_t shard;
        uint64_t id;
        int64_t after;
        if (sc_repl_finish_decode(p, n, &index, &shard, &alloc, &id, &after) == SC_OK && after < -1)
            abort();
        break;
    }
    }
    return 0;
}
