/* gzip coding of HTTP bodies with zlib: request bodies sent with `Content-Encoding: gzip` or
 * `deflate` (Beats and Logstash compress _bulk), and gzip responses when http.compression is on
 * and the client accepts them. */
#include <stdlib.h>
#include <zlib.h>

#include "http/internal.h"

sc_status sc__http_inflate(const uint8_t *in, size_t len, size_t max, uint8_t **out,
                           size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    z_stream z = {0};
    /* 15 + 32: zlib or gzip header, detected. */
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        return SC_ENOMEM;
    sc_buf b = {0};
    sc_status st = SC_OK;
    z.next_in = (Bytef *)in;
    size_t left = len;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        if (b.len == max) {
            st = SC_ELIMIT;
            break;
        }
        size_t want = len * 4 + 4096;
        if (want > max - b.len)
            want = max - b.len;
        if (sc_vec_reserve(&b, want) != SC_OK) {
            st = SC_ENOMEM;
            break;
        }
        size_t room = b.cap - b.len;
        if (room > max - b.len)
            room = max - b.len;
        if (room > UINT32_MAX)
            room = UINT32_MAX;
        uInt chunk_in = left > UINT32_MAX ? UINT32_MAX : (uInt)left;
        z.avail_in = chunk_in;
        z.next_out = b.ptr + b.len;
        z.avail_out = (uInt)room;
        rc = inflate(&z, Z_NO_FLUSH);
        b.len += room - z.avail_out;
        left -= chunk_in - z.avail_in;
        if (rc == Z_STREAM_END)
            break;
        if (rc != Z_OK && !(rc == Z_BUF_ERROR && z.avail_out == 0)) {
            st = SC_EPARSE;
            break;
        }
        if (left == 0 && z.avail_out != 0) {
            st = SC_EPARSE; /* truncated stream */
            break;
        }
    }
    inflateEnd(&z);
    if (st == SC_OK && left != 0)
        st = SC_EPARSE; /* bytes after the end of the stream */
    if (st != SC_OK) {
        sc_vec_free(&b);
        return st;
    }
    *out = b.ptr;
    *out_len = b.len;
    return SC_OK;
}

sc_status sc__http_gzip(const uint8_t *in, size_t len, sc_buf *out)
{
    z_stream z = {0};
    /* Level 1: responses are made per request; speed matters more than the last percent. */
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return SC_ENOMEM;
    size_t bound = deflateBound(&z, (uLong)len);
    if (sc_vec_reserve(out, bound) != SC_OK) {
        deflateEnd(&z);
        return SC_ENOMEM;
    }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = out->ptr + out->len;
    z.avail_out = (uInt)bound;
    int rc = deflate(&z, Z_FINISH);
    out->len += bound - z.avail_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? SC_OK : SC_ENOMEM;
}
