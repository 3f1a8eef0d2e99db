/* libFuzzer target for the transport's decoders (cluster/wire.h, cluster/search_wire.h): the
 * frame header, the error body, a generic walk of body primitives driven by the input itself,
 * the node query/fetch requests and responses (with their extensions: track_scores, the
 * fetch-phase extras), the dfs term statistics and the cancel message. The
 * the node query/fetch requests and responses (with their query-phase features, search_wire_fx.c),
 * the dfs term statistics and the cancel message. The
 * first byte picks the decoder; the rest is the input. Decoders must return SC_ECORRUPT/SC_ELIMIT
 * on bad bytes, never crash or read out of bounds; a header that decodes re-encodes to the same
 * bytes, and what a phase decoder accepts re-encodes to bytes it accepts again. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/search_wire.h"
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

/* Decodes with phase decoder `which`; on success re-encodes and decodes again. */
static void phase(int which, const uint8_t *p, size_t n)
{
    sc_arena a;
    sc_arena_init(&a, 8u << 20);
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_status st, again = SC_OK;
    union {
        sc_wire_node_query q;
        sc_wire_node_query_resp qr;
        sc_wire_node_fetch f;
        sc_wire_node_fetch_resp fr;
        sc_term_stats ts;
    } u;
    switch (which) {
    case 0:
        st = sc_wire_node_query_decode(p, n, &a, &u.q);
        if (st == SC_OK && sc_wire_node_query_encode(&u.q, &b) == SC_OK)
            again = sc_wire_node_query_decode(b.ptr, b.len, &a, &u.q);
        break;
    case 1:
        st = sc_wire_node_query_resp_decode(p, n, &a, &u.qr);
        if (st == SC_OK && sc_wire_node_query_resp_encode(&u.qr, &b) == SC_OK)
            again = sc_wire_node_query_resp_decode(b.ptr, b.len, &a, &u.qr);
        break;
    case 2:
        st = sc_wire_node_fetch_decode(p, n, &a, &u.f);
        if (st == SC_OK && sc_wire_node_fetch_encode(&u.f, &b) == SC_OK)
            again = sc_wire_node_fetch_decode(b.ptr, b.len, &a, &u.f);
        break;
    case 3:
        st = sc_wire_node_fetch_resp_decode(p, n, &a, &u.fr);
        if (st == SC_OK && sc_wire_node_fetch_resp_encode(&u.fr, &b) == SC_OK)
            again = sc_wire_node_fetch_resp_decode(b.ptr, b.len, &a, &u.fr);
        break;
    case 4:
        st = sc_wire_term_stats_decode(p, n, &a, &u.ts);
        if (st == SC_OK && sc_wire_term_stats_encode(&u.ts, &b) == SC_OK)
            again = sc_wire_term_stats_decode(b.ptr, b.len, &a, &u.ts);
        break;
    default: {
        sc_slice parent;
        st = sc_wire_node_cancel_decode(p, n, &parent);
        if (st == SC_OK && (parent.len == 0 || parent.len > SC_WIRE_MAX_TASK_ID))
            abort();
        if (st == SC_OK && sc_wire_node_cancel_encode(parent, &b) == SC_OK) {
            /* the id survives a round trip (the length varint may have had an overlong form,
             * which decoders accept, so the bytes need not be the input's) */
            sc_slice back;
            if (sc_wire_node_cancel_decode(b.ptr, b.len, &back) != SC_OK ||
                back.len != parent.len || memcmp(back.ptr, parent.ptr, parent.len) != 0)
                abort();
        }
        break;
    }
    }
    /* the arena's budget may run out on the second decode; anything else is a bug */
    if (st == SC_OK && again != SC_OK && again != SC_ENOMEM && again != SC_ELIMIT)
        abort();
    sc_wire_buf_fini(&b);
    sc_arena_fini(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    switch (data[0] % 9) {
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
    case 2: walk(p, n); break;
    default: phase(data[0] % 9 - 3, p, n); break;
    }
    return 0;
}
