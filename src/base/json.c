/* Limited jansson parsing and typed getters; see json.h. jansson's parser recurses once per
 * nesting level (its own cap is JSON_PARSER_MAX_DEPTH, 2048 in Debian's build), so a cheap
 * pre-scan enforces our smaller depth limit first and reports exactly where it was exceeded. */
#include "base/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void set_err(sc_json_error *err, int line, int column, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void set_err(sc_json_error *err, int line, int column, size_t pos, const char *fmt, ...)
{
    if (!err)
        return;
    err->line = line;
    err->column = column;
    err->position = pos;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
}

/* 1-based line and character column of byte `pos`. */
static void locate(sc_slice text, size_t pos, int *line, int *column)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < pos && i < text.len; i++) {
        uint8_t b = text.ptr[i];
        if (b == '\n') {
            l++;
            c = 1;
        } else if ((b & 0xc0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *column = c;
}

/* Byte offset of the first bracket that opens level max_depth+1, or SIZE_MAX if none. Brackets
 * inside strings do not count. Malformed input is left for jansson to report. */
static size_t depth_exceeded_at(sc_slice text, int max_depth)
{
    const uint8_t *p = text.ptr;
    size_t n = text.len;
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '"') {
            for (i++; i < n && p[i] != '"'; i++)
                if (p[i] == '\\')
                    i++;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth)
                return i;
        } else if (c == ']' || c == '}') {
            if (depth > 0)
                depth--;
        }
    }
    return SIZE_MAX;
}

sc_status sc_json_parse(sc_slice text, const sc_json_limits *limits, json_t **out,
                        sc_json_error *err)
{
    *out = NULL;
    if (err)
        memset(err, 0, sizeof(*err));
    size_t max_bytes = limits && limits->max_bytes ? limits->max_bytes : SC_JSON_DEFAULT_MAX_BYTES;
    int max_depth = limits && limits->max_depth > 0 ? limits->max_depth : SC_JSON_DEFAULT_MAX_DEPTH;
    if (max_depth > JSON_PARSER_MAX_DEPTH)
        max_depth = JSON_PARSER_MAX_DEPTH;
    if (text.len > max_bytes) {
        set_err(err, 0, 0, max_bytes, "request body of %zu bytes exceeds the limit of %zu bytes",
                text.len, max_bytes);
        return SC_ELIMIT;
    }
    /* Each level needs at least one byte, so short inputs cannot be too deep. */
    if (text.len > (size_t)max_depth) {
        size_t at = depth_exceeded_at(text, max_depth);
        if (at != SIZE_MAX) {
            int line, column;
            locate(text, at, &line, &column);
            set_err(err, line, column, at, "nesting depth exceeds the limit of %d", max_depth);
            return SC_ELIMIT;
        }
    }
    size_t flags = JSON_ALLOW_NUL;
    if (limits && limits->reject_duplicates)
        flags |= JSON_REJECT_DUPLICATES;
    if (limits && limits->any_value)
        flags |= JSON_DECODE_ANY;
    json_error_t je;
    /* jansson wants a non-NULL buffer even for length 0. */
    json_t *v = json_loadb(text.len ? (const char *)text.ptr : "", text.len, flags, &je);
    if (!v) {
        sc_status st = SC_EPARSE;
        if (json_error_code(&je) == json_error_out_of_memory)
            st = SC_ENOMEM;
        else if (json_error_code(&je) == json_error_stack_overflow)
            st = SC_ELIMIT;
        set_err(err, je.line > 0 ? je.line : 0, je.column > 0 ? je.column : 0,
                je.position > 0 ? (size_t)je.position : 0, "%s", je.text);
        return st;
    }
    *out = v;
    return SC_OK;
}

const char *sc_json_type_name(const json_t *v)
{
    if (!v)
        return "missing";
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "real";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    }
    return "unknown";
}

/* The member or NULL (also for JSON null), with the missing-key error filled in. */
static json_t *member(const json_t *obj, const char *key, sc_json_error *err)
{
    json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    if (!v || json_is_null(v)) {
        set_err(err, 0, 0, 0, "[%.64s] is missing", key);
        return NULL;
    }
    return v;
}

static sc_status type_error(const json_t *v, const char *key, const char *want, sc_json_error *err)
{
    set_err(err, 0, 0, 0, "[%.64s] must be %s but was %s", key, want, sc_json_type_name(v));
    return SC_EINVAL;
}

sc_status sc_json_get_str(const json_t *obj, const char *key, sc_slice *out, sc_json_error *err)
{
    json_t *v = member(obj, key, err);
    if (!v)
        return SC_ENOTFOUND;
    if (!json_is_string(v))
        return type_error(v, key, "a string", err);
    *out = sc_json_str_slice(v);
    return SC_OK;
}

sc_status sc_json_get_int(const json_t *obj, const char *key, int64_t *out, sc_json_error *err)
{
    json_t *v = member(obj, key, err);
    if (!v)
        return SC_ENOTFOUND;
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return SC_OK;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        /* 2^63 is exactly representable; anything below it that is integral fits. */
        if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
            *out = (int64_t)d;
            return SC_OK;
        }
    }
    return type_error(v, key, "an integer", err);
}

sc_status sc_json_get_double(const json_t *obj, const char *key, double *out, sc_json_error *err)
{
    json_t *v = member(obj, key, err);
    if (!v)
        return SC_ENOTFOUND;
    if (!json_is_number(v))
        return type_error(v, key, "a number", err);
    *out = json_number_value(v);
    return SC_OK;
}

sc_status sc_json_get_bool(const json_t *obj, const char *key, bool *out, sc_json_error *err)
{
    json_t *v = member(obj, key, err);
    if (!v)
        return SC_ENOTFOUND;
    if (!json_is_boolean(v))
        return type_error(v, key, "a boolean", err);
    *out = json_is_true(v);
    return SC_OK;
}

sc_status sc_json_get_obj(const json_t *obj, const char *key, json_t **out, sc_json_error *err)
{
    json_t *v = member(obj, key, err);
    if (!v)
        return SC_ENOTFOUND;
    if (!json_is_object(v))
        return type_error(v, key, "an object", err);
    *out = v;
    return SC_OK;
}

sc_status sc_json_get_arr(const json_t *obj, const char *key, json_t **out, sc_json_error *err)
{
    json_t *v = member(obj, key, err);
    if (!v)
        return SC_ENOTFOUND;
    if (!json_is_array(v))
        return type_error(v, key, "an array", err);
    *out = v;
    return SC_OK;
}
