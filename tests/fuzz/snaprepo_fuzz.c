/* libFuzzer target for the snapshot repository decoders (sc_snaprepo_manifest_decode and
 * sc_snaprepo_root_decode, src/cluster/snaprepo.c). The first byte picks the decoder (bit 0)
 * and whether the rest gets a correct checksum line appended (bit 1), so the structural checks
 * are reached and not only the checksum. A decoded document must encode and decode again. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "cluster/snaprepo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef sc_status (*decode_fn)(const uint8_t *, size_t, json_t **, const char **);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20))
        return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    decode_fn decode = mode & 1 ? sc_snaprepo_root_decode : sc_snaprepo_manifest_decode;
    uint8_t *buf = malloc(size + 64);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    size_t len = size;
    if (mode & 2)
        len += (size_t)snprintf((char *)buf + size, 64, "\nscry-checksum %016" PRIx64 "\n",
                                sc_checksum(data, size));
    json_t *v = NULL;
    const char *why = NULL;
    sc_status st = decode(buf, len, &v, &why);
    if (st == SC_OK) {
        char *enc;
        size_t enc_len;
        if (sc_snaprepo_encode(v, &enc, &enc_len) != SC_OK)
            abort();
        json_t *again = NULL;
        if (decode((const uint8_t *)enc, enc_len, &again, &why) != SC_OK)
            abort();
        json_decref(again);
        free(enc);
        json_decref(v);
    } else if (st == SC_ECORRUPT && !why) {
        abort(); /* a corrupt file always says why */
    }
    free(buf);
    return 0;
}
