/* Standard base64 (RFC 4648, alphabet A-Z a-z 0-9 + /, '=' padding), as etcd's JSON gateway
 * carries keys and values. Strict decoder: rejects bad characters, bad padding and non-zero
 * trailing bits, so arbitrary bytes never decode to something unexpected. */
#ifndef SC_BASE_BASE64_H
#define SC_BASE_BASE64_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

/* Length of the encoding of n bytes, without the terminating NUL. */
static inline size_t sc_base64_encoded_len(size_t n)
{
    return (n + 2) / 3 * 4;
}

/* Upper bound of the decoded length of n encoded characters. */
static inline size_t sc_base64_decoded_cap(size_t n)
{
    return n / 4 * 3 + 3;
}

/* Encodes in[0..n) into out, which must hold sc_base64_encoded_len(n) + 1 bytes; writes a
 * terminating NUL. Returns the encoded length. O(n). */
size_t sc_base64_encode(const void *in, size_t n, char *out);

/* Decodes in[0..n) into out (capacity sc_base64_decoded_cap(n)); *out_len gets the byte count.
 * SC_EPARSE on any malformed input (length not a multiple of 4, a character outside the
 * alphabet, misplaced '=', non-zero padding bits). O(n). */
sc_status sc_base64_decode(const char *in, size_t n, uint8_t *out, size_t *out_len) SC_MUST_USE;

#endif
