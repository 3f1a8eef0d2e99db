/* Streaming JSON writer: appends JSON text straight into an sc_buf with no intermediate tree.
 * Commas and colons are placed automatically; strings are escaped (control characters, quotes,
 * backslashes; invalid UTF-8 bytes become U+FFFD); doubles are written in the shortest form that
 * round-trips (integral values get a trailing ".0" as Java prints them); NaN and infinities are
 * written as null. The status is sticky: after the first failure (out of memory, nesting deeper
 * than SC_JSONW_MAX_DEPTH, a value where a key is required) every call is a no-op and
 * sc_jsonw_finish reports it. */
#ifndef SC_BASE_JSONW_H
#define SC_BASE_JSONW_H

#include <stdbool.h>
#include <stdint.h>

#include "base/slice.h"
#include "base/status.h"
#include "base/vec.h"

#define SC_JSONW_MAX_DEPTH 128

typedef struct sc_jsonw {
    sc_buf *out;
    sc_status st;
    int depth;
    bool pretty;
    bool after_key;
    uint64_t has_items[SC_JSONW_MAX_DEPTH / 64]; /* bit d: level d already has an item */
    uint64_t is_object[SC_JSONW_MAX_DEPTH / 64]; /* bit d: level d is an object */
} sc_jsonw;

/* Starts writing at the end of `out` (which is borrowed and must outlive the writer). pretty
 * indents with two spaces as Elasticsearch's ?pretty does. */
void sc_jsonw_init(sc_jsonw *w, sc_buf *out, bool pretty);

void sc_jsonw_obj_begin(sc_jsonw *w);
void sc_jsonw_obj_end(sc_jsonw *w);
void sc_jsonw_arr_begin(sc_jsonw *w);
void sc_jsonw_arr_end(sc_jsonw *w);

/* Writes an object key; the next call must write its value. */
void sc_jsonw_key(sc_jsonw *w, const char *key);
void sc_jsonw_keyn(sc_jsonw *w, sc_slice key);

void sc_jsonw_str(sc_jsonw *w, const char *s);
void sc_jsonw_strn(sc_jsonw *w, sc_slice s);
void sc_jsonw_int(sc_jsonw *w, int64_t v);
void sc_jsonw_uint(sc_jsonw *w, uint64_t v);
void sc_jsonw_double(sc_jsonw *w, double v);
/* A float (e.g. a score) in the shortest form that round-trips as a float. */
void sc_jsonw_float(sc_jsonw *w, float v);
void sc_jsonw_bool(sc_jsonw *w, bool v);
void sc_jsonw_null(sc_jsonw *w);
/* Inserts already-encoded JSON (e.g. a document's original _source) as one value. The bytes
 * are trusted to be valid JSON. */
void sc_jsonw_raw(sc_jsonw *w, sc_slice json);

/* Key-value shorthands. */
void sc_jsonw_kv_str(sc_jsonw *w, const char *key, const char *s);
void sc_jsonw_kv_int(sc_jsonw *w, const char *key, int64_t v);
void sc_jsonw_kv_bool(sc_jsonw *w, const char *key, bool v);
void sc_jsonw_kv_double(sc_jsonw *w, const char *key, double v);

/* Returns the sticky status; also SC_EINVAL if objects/arrays are left open. */
sc_status sc_jsonw_finish(sc_jsonw *w) SC_MUST_USE;

/* Appends s to out as a JSON string body (no quotes) with escaping. */
sc_status sc_json_escape(sc_buf *out, sc_slice s) SC_MUST_USE;

/* Formats a double in the shortest round-trip form into buf (>= 32 bytes); returns length.
 * Non-finite values give "null". */
size_t sc_json_format_double(char *buf, double v);
size_t sc_json_format_float(char *buf, float v);
/* The same by snprintf/strtof alone (sc_json_format_float's reference; for its tests). */
size_t sc__json_format_float_slow(char *buf, float v);

#endif
