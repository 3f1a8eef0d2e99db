/* Growable vectors. SC_VEC(T) declares an anonymous struct {T *ptr; size_t len, cap;}; the
 * macros grow it geometrically with realloc. Growth failure leaves the vector unchanged and
 * returns SC_ENOMEM. The vector owns its buffer: free it with sc_vec_free. */
#ifndef SC_BASE_VEC_H
#define SC_BASE_VEC_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/status.h"

#define SC_VEC(T)                                                                                  \
    struct {                                                                                       \
        T *ptr;                                                                                    \
        size_t len, cap;                                                                           \
    }

/* Ensures room for `extra` more elements of size `elem_size`. Internal; use the macros. */
sc_status sc__vec_reserve(void **ptr, size_t *cap, size_t len, size_t extra, size_t elem_size)
    SC_MUST_USE;

#define sc_vec_reserve(v, extra)                                                                   \
    sc__vec_reserve((void **)&(v)->ptr, &(v)->cap, (v)->len, (extra), sizeof(*(v)->ptr))

/* Appends one element; evaluates to an sc_status. */
#define sc_vec_push(v, value)                                                                      \
    (sc_vec_reserve((v), 1) == SC_OK ? ((v)->ptr[(v)->len++] = (value), SC_OK) : SC_ENOMEM)

/* Appends n elements copied from src; evaluates to an sc_status. */
#define sc_vec_append(v, src, n)                                                                   \
    (sc_vec_reserve((v), (n)) == SC_OK                                                             \
         ? ((n) ? memcpy((v)->ptr + (v)->len, (src), (n) * sizeof(*(v)->ptr)) : NULL,              \
            (v)->len += (n), SC_OK)                                                                \
         : SC_ENOMEM)

#define sc_vec_clear(v) ((v)->len = 0)

#define sc_vec_free(v)                                                                             \
    do {                                                                                           \
        free((v)->ptr);                                                                            \
        (v)->ptr = NULL;                                                                           \
        (v)->len = (v)->cap = 0;                                                                   \
    } while (0)

/* A growable byte buffer, the most common vector. */
typedef SC_VEC(unsigned char) sc_buf;

#endif
