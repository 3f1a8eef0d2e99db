/* libFuzzer target for the transport's decoders (cluster/wire.h): the frame header, the error
 * body, and a generic walk of body primitives driven by the input itself. The first byte picks
 * the decoder; the rest is the input. Decoders must return SC_ECORRUPT/SC_ELIMIT on bad bytes,
 * never crash or read out of bounds; a header that decodes re-encodes to the same bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads primitives in an order chosen by the input's own bytes until it fails or ends. */
static void walk(const uint8_t *p, size_t n)
{
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    for (int i = 0; i < 64 && r.st == SC_OK && r.p < r.end; i++) {
        switch (sc_wire_get_u8(&r) % 7) {
        case 0: (void)sc_wire_get_uvar(&r); break;
        case 1: (void)sc_wire_get_svar(&r); break;
        case 2: (void)sc_wire_get_f32(&r); break;
        case 3: (void)sc_wire_get_f64(&r); break;
        case 4: (void)sc_wire_get_bool(&r); break;
        case 5: {
            sc_slice s = sc_wire_get_bytes(&r);
            if (s.len && (s.ptr < p || s.ptr + s.len > p + n))
                abort();
            break;
        }
        default: (void)sc_wire_get_uvar_max(&r, 1000); break;
        }
    }
    (void)!sc_wire_reader_finish(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    switch (data[0] % 3) {
    case 0: {
        if (n < SC_WIRE_HEADER_BYTES)
            break;
        sc_wire_header h;
        if (sc_wire_header_get(p, UINT32_MAX, &h) == SC_OK) {
            uint8_t again[SC_WIRE_HEADER_BYTES];
            sc_wire_header_put(&h, again);
            if (memcmp(again, p, SC_WIRE_HEADER_BYTES) != 0)
                abort();
        }
        break;
    }
    case 1: {
        sc_status st;
        char msg[64];
        (void)!sc_wire_error_decode(p, n, &st, msg, sizeof msg);
        break;
    }
    default: walk(p, n); break;
    }
    return 0;
}
