/* Private to src/mapping: a small JSON reader for document sources. It builds an immutable
 * tree in an arena (no per-node malloc, strings without escapes borrowed from the input) and
 * keeps each value's raw bytes, so a number keeps its original text (as Jackson's text() gives
 * Elasticsearch) and errors can quote values. Integers beyond int64 are kept as reals with their
 * raw text (unsigned_long needs them). Rejects what JSON rejects (control characters in strings,
 * invalid UTF-8, bad escapes, trailing data) and nesting deeper than SC__JDOC_MAX_DEPTH. */
#ifndef SC_MAPPING_JDOC_H
#define SC_MAPPING_JDOC_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"

#define SC__JDOC_MAX_DEPTH 512

typedef enum sc__jd_type {
    SC__JD_NULL,
    SC__JD_FALSE,
    SC__JD_TRUE,
    SC__JD_INT,
    SC__JD_REAL,
    SC__JD_STRING,
    SC__JD_ARRAY,
    SC__JD_OBJECT,
} sc__jd_type;

typedef struct sc__jd sc__jd;
struct sc__jd {
    sc__jd_type type;
    uint32_t n;     /* array elements / object members */
    sc_slice key;   /* member name (decoded) when inside an object */
    sc_slice str;   /* SC__JD_STRING: decoded bytes */
    sc_slice raw;   /* the value's bytes in the input */
    int64_t i;      /* SC__JD_INT */
    double d;       /* SC__JD_INT and SC__JD_REAL */
    sc__jd *child;  /* first element / member */
    sc__jd *next;   /* next sibling */
};

/* Parses text (one JSON value, surrounding whitespace allowed). On SC_EPARSE, msg (cap bytes)
 * says what and where ("Unexpected character ('x') at line 1 column 5"). SC_ELIMIT when the
 * arena budget is exceeded. The tree borrows text and lives in the arena. */
sc_status sc__jdoc_parse(sc_slice text, sc_arena *arena, sc__jd **out, char *msg, size_t cap);

#endif
