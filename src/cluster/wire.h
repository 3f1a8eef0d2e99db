/* The transport's binary framing and body codec: what two scry nodes exchange on the transport
 * port (cluster/transport.h), never on HTTP. A frame is a fixed 20-byte header and a body:
 *
 *   frame   = header body
 *   header  = magic:"SCTP" version:u8(=1) flags:u8 type:u16le request_id:u64le body_len:u32le
 *   flags   = bit0 RESPONSE | bit1 ERROR; other bits zero
 *   body    = body_len bytes; an ERROR response's body is  status:u8 message:bytes
 *
 * Bodies are built from the primitives below (LEB128 varints, zigzag for signed, IEEE-754 bits
 * little-endian for floats, bytes = varint length + bytes). Writers keep a sticky status; readers
 * never read past the end and report any malformed, truncated or oversize input as SC_ECORRUPT
 * (SC_ELIMIT for a frame larger than the receiver's limit). */
#ifndef SC_CLUSTER_WIRE_H
#define SC_CLUSTER_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"
#include "base/status.h"

#define SC_WIRE_MAGIC "SCTP"
#define SC_WIRE_VERSION 1
#define SC_WIRE_HEADER_BYTES 20
#define SC_WIRE_FLAG_RESPONSE 0x01u
#define SC_WIRE_FLAG_ERROR 0x02u
/* Default largest body a node accepts: a node's query-phase response with large aggregation
 * partials stays well under this; anything bigger is refused rather than buffered. */
#define SC_WIRE_DEFAULT_MAX_BODY_BYTES (64u << 20)

typedef struct sc_wire_header {
    uint8_t version;
    uint8_t flags;
    uint16_t type;
    uint64_t request_id;
    uint32_t body_len;
} sc_wire_header;

/* Writes the 20-byte header for h (version forced to SC_WIRE_VERSION) into out. */
void sc_wire_header_put(const sc_wire_header *h, uint8_t out[SC_WIRE_HEADER_BYTES]);

/* Decodes and validates a header: SC_ECORRUPT for a wrong magic, unknown flag bits or a version
 * other than SC_WIRE_VERSION; SC_ELIMIT when body_len > max_body_bytes. */
sc_status sc_wire_header_get(const uint8_t in[SC_WIRE_HEADER_BYTES], uint32_t max_body_bytes,
                             sc_wire_header *out) SC_MUST_USE;

/* ---- body writer: a growable heap buffer with a sticky status ---- */

typedef struct sc_wire_buf {
    uint8_t *ptr; /* owned; free with sc_wire_buf_fini or take with sc_wire_buf_take */
    size_t len, cap;
    size_t limit; /* largest size allowed (SC_ELIMIT beyond); 0 = SC_WIRE_DEFAULT_MAX_BODY_BYTES */
    sc_status st; /* first failure; later calls are no-ops */
} sc_wire_buf;

void sc_wire_buf_init(sc_wire_buf *b);
void sc_wire_buf_fini(sc_wire_buf *b);
/* Hands the buffer to the caller (free with free()); *len gets its length. Returns the sticky
 * status: on failure nothing is handed over and the buffer is released. */
sc_status sc_wire_buf_take(sc_wire_buf *b, uint8_t **out, size_t *len) SC_MUST_USE;
void sc_wire_put_u8(sc_wire_buf *b, uint8_t v);
void sc_wire_put_u32le(sc_wire_buf *b, uint32_t v);
void sc_wire_put_uvar(sc_wire_buf *b, uint64_t v);
void sc_wire_put_svar(sc_wire_buf *b, int64_t v);
void sc_wire_put_f32(sc_wire_buf *b, float v);
void sc_wire_put_f64(sc_wire_buf *b, double v);
void sc_wire_put_bool(sc_wire_buf *b, bool v);
/* varint length + bytes. */
void sc_wire_put_bytes(sc_wire_buf *b, const void *p, size_t n);
void sc_wire_put_str(sc_wire_buf *b, const char *s); /* NULL is written as "" */
void sc_wire_put_raw(sc_wire_buf *b, const void *p, size_t n);

/* ---- body reader: bounds-checked, sticky SC_ECORRUPT ---- */

typedef struct sc_wire_reader {
    const uint8_t *p, *end;
    sc_status st;
} sc_wire_reader;

static inline void sc_wire_reader_init(sc_wire_reader *r, const void *p, size_t n)
{
    r->p = (const uint8_t *)p;
    r->end = r->p + n;
    r->st = SC_OK;
}
uint8_t sc_wire_get_u8(sc_wire_reader *r);
uint64_t sc_wire_get_uvar(sc_wire_reader *r);
/* A varint that must be <= max (else SC_ECORRUPT). */
uint64_t sc_wire_get_uvar_max(sc_wire_reader *r, uint64_t max);
int64_t sc_wire_get_svar(sc_wire_reader *r);
float sc_wire_get_f32(sc_wire_reader *r);
double sc_wire_get_f64(sc_wire_reader *r);
/* A byte 0 or 1 (anything else is corrupt). */
bool sc_wire_get_bool(sc_wire_reader *r);
/* varint length + bytes, borrowed from the input. */
sc_slice sc_wire_get_bytes(sc_wire_reader *r);
/* Returns the reader's status, and SC_ECORRUPT if bytes are left over. */
sc_status sc_wire_reader_finish(const sc_wire_reader *r) SC_MUST_USE;

/* ---- error bodies ---- */

/* Encodes an ERROR response body: status and message. */
sc_status sc_wire_error_encode(sc_status st, const char *msg, sc_wire_buf *out) SC_MUST_USE;
/* Decodes an ERROR body: *remote gets the sender's status (a known non-OK value), msg up to
 * cap-1 bytes (NUL-terminated, non-printable bytes replaced by '?'). SC_ECORRUPT on bad bytes. */
sc_status sc_wire_error_decode(const uint8_t *p, size_t n, sc_status *remote, char *msg, size_t cap)
    SC_MUST_USE;

#endif
