/* libFuzzer target: arbitrary bytes opened as a segment (checksum check bypassed so the
 * structural checks are exercised) and, if accepted, read completely through the public API:
 * terms, postings (next/advance/batch/bitset/run_end/positions/impacts), norms, doc values,
 * stored fields, DFA intersection, dense vectors (graph and exact kNN). Must never crash or read
 * out of bounds. The bytes are copied to an aligned buffer first, as a mapped file is (vector
 * sections are read in place and must be 4-byte aligned). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/index/readall.h"
#include "index/segment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    if (size)
        memcpy(copy, data, size);
    for (int verify = 0; verify < 2; verify++) {
        sc_segment *seg;
        sc_index_error err;
        if (sc_segment_open_bytes(sc_slice_make(copy, size), "fuzz", verify != 0, &seg, &err) !=
            SC_OK)
            continue;
        uint64_t acc = 0;
        (void)!t_read_all(seg, &acc);
        sc_segment_unref(seg);
    }
    free(copy);
    return 0;
}
