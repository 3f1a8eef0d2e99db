/* libFuzzer target for the cardinality sketch's binary encoding: arbitrary bytes decoded by
 * sc_hll_decode; an accepted sketch must re-encode to exactly the same bytes (the encoding is
 * canonical), estimate, take more hashes, and merge with itself and with a fresh sketch of its
 * precision in both directions. Any crash, sanitizer report or abort is a bug in search/hll. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search/hll.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_hll *h;
    if (sc_hll_decode(sc_slice_make(data, size), NULL, NULL, &h) != SC_OK)
        return 0;
    sc_buf out = {0};
    if (sc_hll_encode(h, &out) == SC_OK && (out.len != size || memcmp(out.ptr, data, size) != 0))
        abort();
    sc_vec_free(&out);
    uint64_t before = sc_hll_estimate(h);
    sc_hll *fresh;
    if (sc_hll_new(sc_hll_precision(h), NULL, NULL, &fresh) == SC_OK) {
        if (sc_hll_merge(fresh, h) != SC_OK || sc_hll_estimate(fresh) != before)
            abort();
        (void)!sc_hll_merge(h, fresh);
        if (sc_hll_estimate(h) != before)
            abort();
        sc_hll_free(fresh);
    }
    uint64_t x = size;
    for (int i = 0; i < 64; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        (void)!sc_hll_add(h, sc_hll_hash_u64(x));
    }
    (void)sc_hll_estimate(h);
    sc_hll_free(h);
    return 0;
}
