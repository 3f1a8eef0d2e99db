/* libFuzzer target for everything the cluster layer reads from etcd: the JSON-gateway response
 * decoders (range, put, delete, txn, lease, watch line, error body), base64, and a routing-table
 * value (sc_index_routing_from_json, then a re-encode round trip). The first input byte picks
 * the decoder; the rest is the response body. Any crash, leak or sanitizer report is a bug. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "cluster/allocation.h"
#include "cluster/etcd_resp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void routing(const char *p, size_t n)
{
    json_t *j = json_loadb(p, n, 0, NULL);
    sc_index_routing r;
    if (j && sc_index_routing_from_json("fuzz", j, &r) == SC_OK) {
        json_t *again = sc_index_routing_to_json(&r);
        sc_index_routing r2;
        if (sc_index_routing_from_json("fuzz", again, &r2) != SC_OK ||
            !sc_index_routing_equal(&r, &r2))
            abort();
        sc_index_routing_fini(&r2);
        json_decref(again);
        sc_index_routing_fini(&r);
    }
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    int64_t a, b;
    switch (data[0] % 9) {
    case 0: {
        sc_etcd_kvs r;
        if (sc_etcd_decode_range(p, n, &r) == SC_OK)
            sc_etcd_kvs_fini(&r);
        break;
    }
    case 1: (void)!sc_etcd_decode_put(p, n, &a); break;
    case 2: (void)!sc_etcd_decode_delete(p, n, &a); break;
    case 3: {
        sc_etcd_txn_result t;
        if (sc_etcd_decode_txn(p, n, &t) == SC_OK)
            sc_etcd_txn_result_fini(&t);
        break;
    }
    case 4: (void)!sc_etcd_decode_lease(p, n, &a, &b); break;
    case 5: {
        sc_etcd_watch_msg m;
        if (sc_etcd_decode_watch(p, n, &m) == SC_OK)
            sc_etcd_watch_msg_fini(&m);
        break;
    }
    case 6: {
        sc_etcd_error err;
        (void)sc_etcd_decode_error(400, p, n, &err);
        break;
    }
    case 7: {
        uint8_t *out = malloc(sc_base64_decoded_cap(n) + 1);
        size_t len;
        if (out && sc_base64_decode(p, n, out, &len) == SC_OK) {
            char *enc = malloc(sc_base64_encoded_len(len) + 1);
            /* a strict decoder's output re-encodes to the input */
            if (enc && (sc_base64_encode(out, len, enc) != n || memcmp(enc, p, n) != 0))
                abort();
            free(enc);
        }
        free(out);
        break;
    }
    default: routing(p, n); break;
    }
    return 0;
}
