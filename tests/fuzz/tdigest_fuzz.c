/* libFuzzer target for the percentiles sketch's binary encoding: arbitrary bytes decoded by
 * sc_tdigest_decode; an accepted digest must re-encode to exactly the same bytes, answer
 * quantiles within [min, max] and cdfs within [0, 1], take more values (forcing merges), and merge
 * into a fresh digest. Any crash, sanitizer report or abort is a bug in search/tdigest. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search/tdigest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void probe(sc_tdigest *t)
{
    double lo = sc_tdigest_min(t), hi = sc_tdigest_max(t);
    for (int i = 0; i <= 10; i++) {
        double q = sc_tdigest_quantile(t, i / 10.0);
        if (sc_tdigest_count(t) && !(q >= lo && q <= hi))
            abort();
        double c = sc_tdigest_cdf(t, lo + (hi - lo) * i / 10.0);
        if (sc_tdigest_count(t) && !(c >= 0 && c <= 1))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_tdigest *t;
    if (sc_tdigest_decode(sc_slice_make(data, size), NULL, NULL, &t) != SC_OK)
        return 0;
    sc_buf out = {0};
    if (sc_tdigest_encode(t, &out) == SC_OK && (out.len != size || memcmp(out.ptr, data, size)))
        abort();
    sc_vec_free(&out);
    probe(t);
    sc_tdigest *fresh;
    if (sc_tdigest_new(100, NULL, NULL, &fresh) == SC_OK) {
        if (sc_tdigest_merge(fresh, t) == SC_OK)
            probe(fresh);
        sc_tdigest_free(fresh);
    }
    /* moderate compressions reach the digest phase, its radix-sorted merges (buffers of 128
     * points and more) and, below 20, many merges, within a few thousand adds */
    double x = (double)size;
    for (int i = 0; i < 3000 && sc_tdigest_compression(t) < 60; i++) {
        x = fmod(x * 1.618033 + 0.5, 1000.0);
        (void)!sc_tdigest_add(t, x - 500, 1 + (uint64_t)i % 3);
    }
    probe(t);
    sc_tdigest_free(t);
    return 0;
}
