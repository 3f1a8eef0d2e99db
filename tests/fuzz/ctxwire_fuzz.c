/* libFuzzer target for the clustered scroll / point-in-time / _terms_enum encodings
 * (cluster/ctx_wire.h): the context query and its answer, the free message, the terms request
 * and answer, the binary context id and the client's id text. The first byte picks the decoder;
 * the rest is the input. Decoders must answer SC_ECORRUPT / SC_ELIMIT / SC_EINVAL on bad bytes,
 * never crash or read out of bounds, and what one accepts re-encodes to bytes it accepts again.
 * Seeds: tests/fuzz/corpus/ctxwire/ (written by SCRY_WIRE_SEEDS_DIR=... cluster_ctx_wire_test). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/ctx_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    sc_arena a;
    sc_arena_init(&a, 8u << 20);
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    sc_status again = SC_OK;
    union {
        sc_ctx_query q;
        sc_ctx_query_resp qr;
        sc_ctx_free f;
        sc_terms_req tq;
        sc_terms_resp tr;
        sc_ctx_id id;
    } u;
    switch (data[0] % 7) {
    case 0:
        if (sc_ctx_query_decode(p, n, &a, &u.q) == SC_OK && sc_ctx_query_encode(&u.q, &b) == SC_OK)
            again = sc_ctx_query_decode(b.ptr, b.len, &a, &u.q);
        break;
    case 1:
        if (sc_ctx_query_resp_decode(p, n, &u.qr) == SC_OK &&
            sc_ctx_query_resp_encode(&u.qr, &b) == SC_OK)
            again = sc_ctx_query_resp_decode(b.ptr, b.len, &u.qr);
        break;
    case 2:
        if (sc_ctx_free_decode(p, n, &a, &u.f) == SC_OK && sc_ctx_free_encode(&u.f, &b) == SC_OK)
            again = sc_ctx_free_decode(b.ptr, b.len, &a, &u.f);
        break;
    case 3:
        if (sc_terms_req_decode(p, n, &a, &u.tq) == SC_OK &&
            sc_terms_req_encode(&u.tq, &b) == SC_OK)
            again = sc_terms_req_decode(b.ptr, b.len, &a, &u.tq);
        break;
    case 4:
        if (sc_terms_resp_decode(p, n, &a, &u.tr) == SC_OK &&
            sc_terms_resp_encode(&u.tr, &b) == SC_OK)
            again = sc_terms_resp_decode(b.ptr, b.len, &a, &u.tr);
        break;
    case 5:
        if (sc_ctx_id_decode(p, n, &a, &u.id) == SC_OK) {
            char *text = sc_ctx_id_text(&u.id);
            if (text)
                again = sc_ctx_id_parse(text, &a, &u.id);
            free(text);
        }
        break;
    default: {
        /* the id as text, as a client sends it */
        char *text = malloc(n + 1);
        if (!text)
            break;
        memcpy(text, p, n);
        text[n] = '\0';
        (void)!sc_ctx_id_parse(text, &a, &u.id);
        free(text);
        break;
    }
    }
    if (again != SC_OK)
        abort(); /* accepted input must re-encode to accepted bytes */
    sc_wire_buf_fini(&b);
    sc_arena_fini(&a);
    return 0;
}
