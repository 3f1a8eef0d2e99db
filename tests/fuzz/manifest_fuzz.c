/* libFuzzer target for the commit point decoder (sc_manifest_decode, src/index/commit.c). When
 * the first byte is even the input gets a valid magic and version in front and a correct
 * checksum at the end, so the entry decoder itself is reached; a decoded manifest must have
 * well-formed segment names (non-empty, no NUL, no '/', not starting with '.'). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "index/commit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size + 24);
    if (!buf)
        return 0;
    size_t len = 0;
    bool fix = size && data[0] % 2 == 0;
    if (fix) {
        data++;
        size--;
        static const uint8_t head[16] = {'S', 'C', 'R', 'Y', 'M', 'A', 'N', 0,
                                         1,   0,   0,   0,   0,   0,   0,   0};
        memcpy(buf, head, sizeof head);
        len = sizeof head;
    }
    memcpy(buf + len, data, size);
    len += size;
    if (fix) {
        uint64_t ck = sc_checksum(buf, len);
        for (int i = 0; i < 8; i++)
            buf[len + i] = (uint8_t)(ck >> (8 * i));
        len += 8;
    }
    sc_manifest m;
    sc_manifest_init(&m);
    uint64_t off = 0;
    const char *why = NULL;
    sc_status st = sc_manifest_decode(buf, len, &m, &off, &why);
    if (st == SC_ECORRUPT && (!why || off > len))
        abort();
    if (st == SC_OK) {
        for (size_t i = 0; i < m.segments.len; i++) {
            const char *name = m.segments.ptr[i].name;
            size_t nl = strnlen(name, sizeof m.segments.ptr[i].name);
            if (nl == 0 || nl > SC_SEGMENT_NAME_MAX || name[0] == '.' || memchr(name, '/', nl))
                abort();
        }
    }
    sc_manifest_fini(&m);
    free(buf);
    return 0;
}
