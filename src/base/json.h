/* sc_json: parsing request bodies with jansson behind limits (bytes, nesting depth) and with
 * errors that say where (line, column, byte offset) and what, plus typed member getters whose
 * type errors name the key. Responses are written with sc_jsonw (jsonw.h), not with this.
 * Values are jansson json_t trees: release them with json_decref. */
#ifndef SC_BASE_JSON_H
#define SC_BASE_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"

#define SC_JSON_DEFAULT_MAX_DEPTH 512
#define SC_JSON_DEFAULT_MAX_BYTES ((size_t)100 * 1024 * 1024) /* ES http.max_content_length */

typedef struct sc_json_limits {
    size_t max_bytes;       /* 0 = SC_JSON_DEFAULT_MAX_BYTES */
    int max_depth;          /* arrays/objects nested deeper fail; 0 = SC_JSON_DEFAULT_MAX_DEPTH */
    bool reject_duplicates; /* a repeated key in one object is an error (ES strict mode) */
    bool any_value;         /* accept any top-level value, not only an object or array */
} sc_json_limits;

/* Where and why parsing or a getter failed. line and column are 1-based (column counts UTF-8
 * characters); both are 0 when unknown (type errors on a parsed tree). position is the byte
 * offset into the input. message is NUL-terminated; it may quote input bytes or a key name
 * (truncated), so write it out with sc_jsonw, which escapes and repairs UTF-8. */
typedef struct sc_json_error {
    int line;
    int column;
    size_t position;
    char message[200];
} sc_json_error;

/* Parses `text` (need not be NUL-terminated) into *out (owned; json_decref it). limits may be
 * NULL for the defaults; err may be NULL (it is zeroed first, so on success it is empty).
 * SC_EPARSE: malformed JSON (err says where); SC_ELIMIT: larger than max_bytes or nested deeper
 * than max_depth (checked before jansson recurses, so 10,000 levels fail cleanly);
 * SC_ENOMEM. Thread-safe. O(len). */
sc_status sc_json_parse(sc_slice text, const sc_json_limits *limits, json_t **out,
                        sc_json_error *err) SC_MUST_USE;

/* Request-scoped trees. jansson's allocator is process-wide; this module installs one when the
 * program loads that takes memory from the calling thread's open scope (below) while that scope
 * allocates, and from malloc otherwise, so values made outside a scope (and json_dumps' result,
 * which callers free()) are plain malloc memory as before. Inside a scope, sc_json_parse's tree
 * is bump-allocated in slabs of the arena and json_decref's frees of it are no-ops (on the
 * thread that opened the scope, until it ends). Rules for the caller: open a scope only where
 * every value parsed in it is released on this thread before sc_json_arena_end (nothing stores
 * it, increfs it past the handler or hands it to another thread to release); jansson values
 * created while the scope holds (sc_json_arena_hold) come from malloc and may be stored
 * anywhere. The slabs count against the arena's budget; when the budget or the scope's slab
 * table is full, allocations fall back to malloc (never tripping the budget). One scope per
 * thread: a scope begun while another is open on the thread stays closed and changes nothing. */
typedef struct sc_json_arena_scope {
    bool open; /* this scope owns the thread's state */
} sc_json_arena_scope;

/* Opens a scope on this thread in which jansson allocates from `a` (NULL: the scope stays
 * closed). O(1). */
void sc_json_arena_begin(sc_json_arena_scope *s, sc_arena *a);
/* Stops allocating from the arena: later jansson allocations use malloc, while frees of the
 * scope's memory stay no-ops. Idempotent; a no-op for a closed scope. */
void sc_json_arena_hold(sc_json_arena_scope *s);
/* Closes the scope. Every value allocated in it must have been released (and the arena must
 * not be finished before this). A no-op for a closed scope. */
void sc_json_arena_end(sc_json_arena_scope *s);

/* "object", "array", "string", "integer", "real", "boolean", "null" (NULL json gives "missing"). */
const char *sc_json_type_name(const json_t *v);

/* Typed members of an object. Each returns SC_OK and the value; SC_ENOTFOUND when `obj` is not
 * an object or has no member `key` (err: "[key] is missing"); SC_EINVAL when the member has
 * another type (err: "[key] must be a string but was a number"). JSON null counts as missing.
 * Results are borrowed from obj. err may be NULL. */
sc_status sc_json_get_str(const json_t *obj, const char *key, sc_slice *out, sc_json_error *err)
    SC_MUST_USE;
/* Integers only; a real with an integral value (3.0) is accepted. */
sc_status sc_json_get_int(const json_t *obj, const char *key, int64_t *out, sc_json_error *err)
    SC_MUST_USE;
/* Integers or reals. */
sc_status sc_json_get_double(const json_t *obj, const char *key, double *out, sc_json_error *err)
    SC_MUST_USE;
sc_status sc_json_get_bool(const json_t *obj, const char *key, bool *out, sc_json_error *err)
    SC_MUST_USE;
sc_status sc_json_get_obj(const json_t *obj, const char *key, json_t **out, sc_json_error *err)
    SC_MUST_USE;
sc_status sc_json_get_arr(const json_t *obj, const char *key, json_t **out, sc_json_error *err)
    SC_MUST_USE;

/* The bytes of a JSON string value (may contain NUL when escaped as \u0000). */
static inline sc_slice sc_json_str_slice(const json_t *s)
{
    return sc_slice_make(json_string_value(s), json_string_length(s));
}

#endif
