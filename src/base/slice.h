/* sc_slice: a borrowed byte string (pointer + length). Never assumed NUL-terminated or valid
 * UTF-8. Comparison helpers order slices as unsigned bytes, shorter prefix first. */
#ifndef SC_BASE_SLICE_H
#define SC_BASE_SLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct sc_slice {
    const uint8_t *ptr;
    size_t len;
} sc_slice;

static inline sc_slice sc_slice_make(const void *ptr, size_t len)
{
    sc_slice s = {(const uint8_t *)ptr, len};
    return s;
}

/* A slice over a NUL-terminated C string (NULL gives the empty slice). */
static inline sc_slice sc_slice_cstr(const char *s)
{
    return sc_slice_make(s, s ? strlen(s) : 0);
}

static inline bool sc_slice_eq(sc_slice a, sc_slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static inline bool sc_slice_eq_cstr(sc_slice a, const char *s)
{
    return sc_slice_eq(a, sc_slice_cstr(s));
}

/* <0, 0, >0 as memcmp, with a proper prefix ordering before the longer slice. */
static inline int sc_slice_cmp(sc_slice a, sc_slice b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (c != 0)
        return c;
    return (a.len > b.len) - (a.len < b.len);
}

static inline bool sc_slice_starts_with(sc_slice s, sc_slice prefix)
{
    return s.len >= prefix.len && (prefix.len == 0 || memcmp(s.ptr, prefix.ptr, prefix.len) == 0);
}

static inline sc_slice sc_slice_sub(sc_slice s, size_t off, size_t len)
{
    if (off > s.len)
        off = s.len;
    if (len > s.len - off)
        len = s.len - off;
    return sc_slice_make(s.ptr + off, len);
}

#endif
