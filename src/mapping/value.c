/* Encoding single values for a field (documents and queries share this so equal values match),
 * numeric range bounds, IP addresses, doc-value output, and the fallback analysis. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping/internal.h"

int64_t sc_mapping_double_to_sortable(double d)
{
    int64_t bits;
    memcpy(&bits, &d, sizeof(bits));
    return bits ^ ((bits >> 63) & INT64_MAX);
}

double sc_mapping_sortable_to_double(int64_t v)
{
    int64_t bits = v ^ ((v >> 63) & INT64_MAX);
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
}

/* Rounds to the nearest IEEE half-precision value (round half to even), as a double. */
static double round_half(double v)
{
    if (!isfinite(v) || v == 0)
        return v;
    double a = fabs(v);
    if (a >= 65520.0)
        return v > 0 ? INFINITY : -INFINITY;
    int e;
    frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    int exp = e - 1;
    if (exp < -14)
        exp = -14; /* subnormals share the smallest exponent */
    double quantum = ldexp(1.0, exp - 10);
    double r = nearbyint(a / quantum) * quantum;
    return v < 0 ? -r : r;
}

static double round_for_type(sc_mapping_type t, double v)
{
    if (t == SC_MAPPING_FLOAT)
        return (double)(float)v;
    if (t == SC_MAPPING_HALF_FLOAT)
        return round_half(v);
    return v;
}

void sc__mapping_preview(const json_t *v, char *buf, size_t cap)
{
    if (json_is_string(v)) {
        snprintf(buf, cap, "%.*s", (int)(cap - 1), json_string_value(v));
        return;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(buf, cap, "%s", s ? s : "?");
    free(s);
}

void sc__scalar_preview(const sc__scalar *v, char *buf, size_t cap)
{
    size_t n = v->text.len < cap - 1 ? v->text.len : cap - 1;
    if (n)
        memcpy(buf, v->text.ptr, n);
    buf[n] = 0;
}

int sc__scalar_from_json(const json_t *v, sc__scalar *s, char *buf, size_t cap)
{
    memset(s, 0, sizeof(*s));
    if (json_is_string(v)) {
        s->kind = SC__S_STRING;
        s->text = sc_slice_make(json_string_value(v), json_string_length(v));
    } else if (json_is_integer(v)) {
        s->kind = SC__S_INT;
        s->i = json_integer_value(v);
        s->d = (double)s->i;
        int n = snprintf(buf, cap, "%" PRId64, s->i);
        s->text = sc_slice_make(buf, n > 0 ? (size_t)n : 0);
    } else if (json_is_real(v)) {
        s->kind = SC__S_REAL;
        s->d = json_real_value(v);
        size_t n = cap >= 32 ? sc_json_format_double(buf, s->d) : 0;
        s->text = sc_slice_make(buf, n);
    } else if (json_is_boolean(v)) {
        s->kind = SC__S_BOOL;
        s->b = json_is_true(v);
        s->text = sc_slice_cstr(s->b ? "true" : "false");
    } else {
        return 0;
    }
    return 1;
}

/* A number from a scalar: integers, reals, or (coerce) numeric strings. is_int when it fits an
 * int64 exactly (*ival). */
static int scalar_to_double(const sc__scalar *v, bool coerce, double *out, int *is_int,
                            int64_t *ival)
{
    *is_int = 0;
    if (v->kind == SC__S_INT) {
        *ival = v->i;
        *is_int = 1;
        *out = (double)v->i;
        return 1;
    }
    if (v->kind == SC__S_REAL) {
        *out = v->d;
        return 1;
    }
    if (v->kind == SC__S_STRING && coerce) {
        char buf[72];
        size_t n = v->text.len;
        if (n == 0 || n > 64 || memchr(v->text.ptr, 0, n))
            return 0;
        memcpy(buf, v->text.ptr, n);
        buf[n] = 0;
        if (buf[0] == ' ' || buf[0] == '+')
            return 0;
        char *end;
        errno = 0;
        long long ll = strtoll(buf, &end, 10);
        if (*end == 0 && errno == 0) {
            *ival = ll;
            *is_int = 1;
            *out = (double)ll;
            return 1;
        }
        errno = 0;
        double d = strtod(buf, &end);
        if (*end != 0 || isnan(d) || end == buf)
            return 0;
        *out = d;
        return 1;
    }
    return 0;
}

static int json_to_double(const json_t *v, bool coerce, double *out, int *is_int, int64_t *ival)
{
    sc__scalar s;
    char buf[64];
    return sc__scalar_from_json(v, &s, buf, sizeof(buf)) &&
           scalar_to_double(&s, coerce, out, is_int, ival);
}

static sc_status num_error_s(sc_mapping_error *err, const sc__scalar *v)
{
    char prev[128];
    sc__scalar_preview(v, prev, sizeof(prev));
    if (v->kind == SC__S_BOOL)
        sc__mapping_cause(err, "illegal_argument_exception",
                          "Current token (VALUE_%s) not numeric, can not use numeric value accessors",
                          v->b ? "TRUE" : "FALSE");
    else
        sc__mapping_cause(err, "number_format_exception", "For input string: \"%s\"", prev);
    return SC_EINVAL;
}

static sc_status num_error(sc_mapping_error *err, const json_t *v)
{
    sc__scalar s;
    char buf[64];
    if (!sc__scalar_from_json(v, &s, buf, sizeof(buf))) {
        char prev[128];
        sc__mapping_preview(v, prev, sizeof(prev));
        sc__mapping_cause(err, "number_format_exception", "For input string: \"%s\"", prev);
        return SC_EINVAL;
    }
    return num_error_s(err, &s);
}

static sc_status encode_integer(const sc_mapping_field *f, const sc__scalar *v, int64_t *num,
                                sc_mapping_error *err)
{
    double d;
    int is_int;
    int64_t iv = 0;
    if (!scalar_to_double(v, f->coerce, &d, &is_int, &iv))
        return num_error_s(err, v);
    if (!is_int) {
        if (!isfinite(d))
            return num_error_s(err, v);
        if (!f->coerce && d != trunc(d)) {
            sc__mapping_cause(err, "illegal_argument_exception", "Value [%g] has a decimal part",
                              d);
            return SC_EINVAL;
        }
        if (d >= 9223372036854775808.0 || d < -9223372036854775808.0) {
            char prev[128];
            sc__scalar_preview(v, prev, sizeof(prev));
            sc__mapping_cause(err, "illegal_argument_exception",
                              "Value [%s] is out of range for a long", prev);
            return SC_EINVAL;
        }
        iv = (int64_t)trunc(d);
    }
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    const char *what = "a long";
    switch (f->type) {
    case SC_MAPPING_INTEGER:
        lo = INT32_MIN, hi = INT32_MAX, what = "an integer";
        break;
    case SC_MAPPING_SHORT:
        lo = INT16_MIN, hi = INT16_MAX, what = "a short";
        break;
    case SC_MAPPING_BYTE:
        lo = INT8_MIN, hi = INT8_MAX, what = "a byte";
        break;
    default:
        break;
    }
    if (iv < lo || iv > hi) {
        sc__mapping_cause(err, "illegal_argument_exception",
                          "Value [%" PRId64 "] is out of range for %s", iv, what);
        return SC_EINVAL;
    }
    *num = iv;
    return SC_OK;
}

static sc_status encode_unsigned(const sc__scalar *v, int64_t *num, sc_mapping_error *err)
{
    uint64_t u;
    char buf[72];
    char prev[128];
    if (v->kind == SC__S_INT) {
        if (v->i < 0)
            goto range;
        u = (uint64_t)v->i;
    } else if (v->kind == SC__S_STRING || v->kind == SC__S_REAL) {
        /* a JSON integer beyond int64 arrives as a real with its digits in text */
        size_t n = v->text.len;
        if (n == 0 || n > 64 || memchr(v->text.ptr, 0, n))
            return num_error_s(err, v);
        memcpy(buf, v->text.ptr, n);
        buf[n] = 0;
        char *end;
        errno = 0;
        if (buf[0] == '-')
            goto range;
        if (buf[0] == ' ' || buf[0] == '+')
            return num_error_s(err, v);
        u = strtoull(buf, &end, 10);
        if (*end || errno) {
            /* a fractional value is truncated (coerce), within range */
            double d = strtod(buf, &end);
            if (*end || !(d >= 0))
                return num_error_s(err, v);
            if (!(d < 18446744073709551616.0))
                goto range;
            u = (uint64_t)d;
        }
    } else {
        return num_error_s(err, v);
    }
    *num = (int64_t)(u ^ (1ULL << 63));
    return SC_OK;
range:
    sc__scalar_preview(v, prev, sizeof(prev));
    sc__mapping_cause(err, "illegal_argument_exception",
                      "Value \"%s\" is out of range for an unsigned long", prev);
    return SC_EINVAL;
}

static sc_status encode_bool(const sc__scalar *v, int64_t *num, sc_mapping_error *err)
{
    if (v->kind == SC__S_BOOL) {
        *num = v->b;
        return SC_OK;
    }
    if (v->kind == SC__S_STRING) {
        if (sc_slice_eq_cstr(v->text, "true")) {
            *num = 1;
            return SC_OK;
        }
        if (sc_slice_eq_cstr(v->text, "false") || v->text.len == 0) {
            *num = 0;
            return SC_OK;
        }
    }
    char prev[128];
    sc__scalar_preview(v, prev, sizeof(prev));
    sc__mapping_cause(err, "illegal_argument_exception",
                      "Failed to parse value [%s] as only [true] or [false] are allowed.", prev);
    return SC_EINVAL;
}

static sc_status encode_date(const sc_date_format *fmt, bool nanos, const sc__scalar *v,
                             int64_t *num, sc_mapping_error *err)
{
    if (v->kind != SC__S_BOOL && v->text.len) {
        sc_status st = nanos ? sc_date_parse_nanos(fmt, v->text, num)
                             : sc_date_parse(fmt, v->text, num);
        if (st == SC_OK)
            return SC_OK;
    }
    char prev[128];
    sc__scalar_preview(v, prev, sizeof(prev));
    sc__mapping_cause(err, "illegal_argument_exception",
                      "failed to parse date field [%s] with format [%s]", prev,
                      sc_date_format_spec(fmt));
    return SC_EINVAL;
}

#define LAT_DECODE (180.0 / 4294967296.0)
#define LON_DECODE (360.0 / 4294967296.0)

int64_t sc_mapping_geo_encode(double lat, double lon)
{
    int32_t la = lat >= 90.0 ? INT32_MAX : (int32_t)floor(lat / LAT_DECODE);
    int32_t lo = lon >= 180.0 ? INT32_MAX : (int32_t)floor(lon / LON_DECODE);
    return (int64_t)(((uint64_t)(uint32_t)la << 32) | (uint32_t)lo);
}

void sc_mapping_geo_decode(int64_t v, double *lat, double *lon)
{
    *lat = (int32_t)(uint32_t)((uint64_t)v >> 32) * LAT_DECODE;
    *lon = (int32_t)(uint32_t)(uint64_t)v * LON_DECODE;
}

sc_status sc__mapping_geo_latlon(double lat, double lon, int64_t *num, sc_mapping_error *err)
{
    if (!isfinite(lat) || lat < -90 || lat > 90) {
        sc__mapping_cause(err, "illegal_argument_exception",
                          "illegal latitude value [%g] for geo_point", lat);
        return SC_EINVAL;
    }
    if (!isfinite(lon) || lon < -180 || lon > 180) {
        sc__mapping_cause(err, "illegal_argument_exception",
                          "illegal longitude value [%g] for geo_point", lon);
        return SC_EINVAL;
    }
    *num = sc_mapping_geo_encode(lat, lon);
    return SC_OK;
}

static sc_status geo_error(const char *preview, sc_mapping_error *err)
{
    sc__mapping_cause(err, "parse_exception", "unsupported geo_point value [%s]", preview);
    return SC_EINVAL;
}

/* "lat,lon" or "POINT (lon lat)". */
static sc_status encode_geo_string(const sc__scalar *v, int64_t *num, sc_mapping_error *err)
{
    char buf[128];
    sc__scalar_preview(v, buf, sizeof(buf));
    if (v->kind != SC__S_STRING || v->text.len >= sizeof(buf) - 1 ||
        memchr(v->text.ptr, 0, v->text.len))
        return geo_error(buf, err);
    double lat, lon;
    char tail;
    int ok;
    if (strncasecmp(buf, "POINT", 5) == 0)
        ok = sscanf(buf + 5, " ( %lf %lf )%c", &lon, &lat, &tail) == 2;
    else
        ok = sscanf(buf, " %lf , %lf %c", &lat, &lon, &tail) == 2;
    if (!ok)
        return geo_error(buf, err);
    return sc__mapping_geo_latlon(lat, lon, num, err);
}

static int geo_coord(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return isfinite(*out);
    }
    if (json_is_string(v)) {
        char *end;
        const char *s = json_string_value(v);
        *out = strtod(s, &end);
        return end != s && *end == 0 && isfinite(*out);
    }
    return 0;
}

/* A geo point from a JSON object or [lon, lat] array (strings go through the scalar path). */
static sc_status encode_geo_json(const json_t *v, int64_t *num, sc_mapping_error *err)
{
    double lat = 0, lon = 0;
    int ok = 0;
    const json_t *coords = json_is_object(v) ? json_object_get(v, "coordinates") : NULL;
    if (coords) { /* GeoJSON {"type": "Point", "coordinates": [lon, lat]} */
        const json_t *t = json_object_get(v, "type");
        size_t n = json_array_size(coords);
        ok = json_is_string(t) && strcasecmp(json_string_value(t), "point") == 0 &&
             (n == 2 || n == 3) && geo_coord(json_array_get(coords, 0), &lon) &&
             geo_coord(json_array_get(coords, 1), &lat);
    } else if (json_is_object(v)) {
        ok = geo_coord(json_object_get(v, "lat"), &lat) &&
             geo_coord(json_object_get(v, "lon"), &lon);
    } else if (json_is_array(v)) {
        size_t n = json_array_size(v);
        ok = (n == 2 || n == 3) && geo_coord(json_array_get(v, 0), &lon) &&
             geo_coord(json_array_get(v, 1), &lat) &&
             (n == 2 || json_is_number(json_array_get(v, 2)));
    }
    if (!ok) {
        char prev[128];
        sc__mapping_preview(v, prev, sizeof(prev));
        return geo_error(prev, err);
    }
    return sc__mapping_geo_latlon(lat, lon, num, err);
}

sc_status sc_mapping_ip_parse(sc_slice text, uint8_t out[16])
{
    char buf[64];
    if (text.len == 0 || text.len >= sizeof(buf) || memchr(text.ptr, 0, text.len))
        return SC_EINVAL;
    memcpy(buf, text.ptr, text.len);
    buf[text.len] = 0;
    struct in_addr a4;
    if (inet_pton(AF_INET, buf, &a4) == 1) {
        memset(out, 0, 10);
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &a4, 4);
        return SC_OK;
    }
    struct in6_addr a6;
    if (inet_pton(AF_INET6, buf, &a6) == 1) {
        memcpy(out, &a6, 16);
        return SC_OK;
    }
    return SC_EINVAL;
}

sc_status sc_mapping_ip_cidr(sc_slice text, uint8_t lo[16], uint8_t hi[16])
{
    const uint8_t *slash = text.len ? memchr(text.ptr, '/', text.len) : NULL;
    if (!slash)
        return SC_ENOTFOUND;
    size_t alen = (size_t)(slash - text.ptr), plen = text.len - alen - 1;
    if (plen == 0 || plen > 3)
        return SC_EINVAL;
    unsigned bits = 0;
    for (size_t i = 0; i < plen; i++) {
        if (slash[1 + i] < '0' || slash[1 + i] > '9')
            return SC_EINVAL;
        bits = bits * 10 + (unsigned)(slash[1 + i] - '0');
    }
    SC_TRY(sc_mapping_ip_parse(sc_slice_make(text.ptr, alen), lo));
    bool v4 = memchr(text.ptr, ':', alen) == NULL;
    if (bits > (v4 ? 32u : 128u))
        return SC_EINVAL;
    if (v4)
        bits += 96; /* IPv4 is stored IPv4-mapped: ::ffff:a.b.c.d */
    for (unsigned i = 0; i < 16; i++) {
        unsigned keep = bits >= 8 * (i + 1) ? 8 : bits > 8 * i ? bits - 8 * i : 0;
        uint8_t mask = (uint8_t)(keep ? 0xffu << (8 - keep) : 0);
        lo[i] &= mask;
        hi[i] = (uint8_t)(lo[i] | (uint8_t)~mask);
    }
    return SC_OK;
}

size_t sc_mapping_ip_format(const uint8_t in[16], char *buf)
{
    static const uint8_t v4prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(in, v4prefix, 12) == 0) {
        inet_ntop(AF_INET, in + 12, buf, 46);
    } else {
        inet_ntop(AF_INET6, in, buf, 46);
    }
    return strlen(buf);
}

sc_status sc__mapping_encode(const sc_mapping_field *f, const sc__scalar *v,
                             const sc_mapping_analysis *an, sc_arena *arena, sc_slice *term,
                             int64_t *num, sc_mapping_error *err)
{
    double d;
    int is_int;
    int64_t iv;
    switch (f->type) {
    case SC_MAPPING_KEYWORD: {
        /* numbers and booleans are indexed as their JSON text, as Elasticsearch does */
        sc_slice s = v->text;
        if (f->normalizer)
            SC_TRY(sc__mapping_normalize(an, f->normalizer, s, arena, &s));
        *term = s;
        return SC_OK;
    }
    case SC_MAPPING_IP: {
        uint8_t *b = sc_arena_alloc(arena, 16);
        if (!b)
            return SC_ELIMIT;
        if (v->kind != SC__S_STRING || sc_mapping_ip_parse(v->text, b) != SC_OK) {
            char prev[128];
            sc__scalar_preview(v, prev, sizeof(prev));
            sc__mapping_cause(err, "illegal_argument_exception",
                              "'%s' is not an IP string literal.", prev);
            return SC_EINVAL;
        }
        *term = sc_slice_make(b, 16);
        return SC_OK;
    }
    case SC_MAPPING_LONG:
    case SC_MAPPING_INTEGER:
    case SC_MAPPING_SHORT:
    case SC_MAPPING_BYTE:
        return encode_integer(f, v, num, err);
    case SC_MAPPING_UNSIGNED_LONG:
        return encode_unsigned(v, num, err);
    case SC_MAPPING_DOUBLE:
    case SC_MAPPING_FLOAT:
    case SC_MAPPING_HALF_FLOAT:
    case SC_MAPPING_SCALED_FLOAT:
        if (!scalar_to_double(v, f->coerce, &d, &is_int, &iv) || !isfinite(d))
            return num_error_s(err, v);
        if (f->type == SC_MAPPING_SCALED_FLOAT) {
            /* Elasticsearch: Math.round(value * scaling_factor), halves toward +infinity
             * (0.125 * 100 -> 13, -0.125 * 100 -> -12); x - floor(x) is exact here */
            double x = d * f->scaling_factor, fl = floor(x);
            double s = x - fl >= 0.5 ? fl + 1 : fl;
            if (!(s < 9223372036854775808.0 && s >= -9223372036854775808.0))
                return num_error_s(err, v);
            *num = (int64_t)s;
            return SC_OK;
        }
        d = round_for_type(f->type, d);
        if (!isfinite(d)) {
            sc__mapping_cause(err, "illegal_argument_exception",
                              "[%s] supports only finite values", sc_mapping_type_name(f->type));
            return SC_EINVAL;
        }
        *num = sc_mapping_double_to_sortable(d);
        return SC_OK;
    case SC_MAPPING_BOOLEAN:
        return encode_bool(v, num, err);
    case SC_MAPPING_DATE:
        return encode_date(f->date_format, false, v, num, err);
    case SC_MAPPING_DATE_NANOS:
        return encode_date(f->date_format, true, v, num, err);
    case SC_MAPPING_GEO_POINT:
        return encode_geo_string(v, num, err);
    default:
        sc__mapping_cause(err, "illegal_argument_exception", "field [%s] of type [%s] has no terms",
                          f->path, sc_mapping_type_name(f->type));
        return SC_EINVAL;
    }
}

sc_status sc__mapping_encode_scalar(const sc_mapping_field *f, const json_t *v,
                                    const sc_mapping_analysis *an, sc_arena *arena,
                                    sc_slice *term, int64_t *num, sc_mapping_error *err)
{
    if (f->type == SC_MAPPING_GEO_POINT && (json_is_object(v) || json_is_array(v)))
        return encode_geo_json(v, num, err);
    sc__scalar s;
    char buf[64];
    if (!sc__scalar_from_json(v, &s, buf, sizeof(buf))) {
        char prev[128];
        sc__mapping_preview(v, prev, sizeof(prev));
        sc__mapping_cause(err, "illegal_argument_exception", "unexpected value [%s]", prev);
        return SC_EINVAL;
    }
    SC_TRY(sc__mapping_encode(f, &s, an, arena, term, num, err));
    if (f->type == SC_MAPPING_KEYWORD && !f->normalizer) {
        /* copied: the JSON value (or buf) does not live as long as the result */
        char *c = sc_arena_alloc(arena, term->len ? term->len : 1);
        if (!c)
            return SC_ELIMIT;
        memcpy(c, term->ptr, term->len);
        *term = sc_slice_make(c, term->len);
    }
    return SC_OK;
}

sc_status sc_mapping_encode_value(const sc_mapping_field *f, const json_t *value,
                                  const sc_mapping_analysis *analysis, int64_t now_ms,
                                  sc_arena *arena, sc_mapping_value *out, sc_mapping_error *err)
{
    memset(out, 0, sizeof(*out));
    out->kind = sc_mapping_field_kind(f);
    if (f->type == SC_MAPPING_TEXT || f->type == SC_MAPPING_OBJECT ||
        f->type == SC_MAPPING_GEO_POINT || !value ||
        json_is_null(value) || json_is_object(value) || json_is_array(value)) {
        sc__mapping_err(err, "illegal_argument_exception",
                        "cannot encode a term for field [%s] of type [%s]", f->path,
                        sc_mapping_type_name(f->type));
        return SC_EINVAL;
    }
    sc_status st;
    if ((f->type == SC_MAPPING_DATE || f->type == SC_MAPPING_DATE_NANOS) &&
        json_is_string(value)) {
        sc_slice text = sc_slice_make(json_string_value(value), json_string_length(value));
        if (f->type == SC_MAPPING_DATE_NANOS && sc_date_parse_nanos(f->date_format, text,
                                                                    &out->num) == SC_OK)
            return SC_OK;
        st = sc_date_math_parse(f->date_format, text, now_ms, false, 0, &out->num);
        if (st == SC_OK) {
            if (f->type == SC_MAPPING_DATE_NANOS)
                out->num *= 1000000;
            return SC_OK;
        }
    }
    st = sc__mapping_encode_scalar(f, value, analysis, arena, &out->term, &out->num, err);
    if (st == SC_EINVAL) {
        char prev[128];
        sc__mapping_preview(value, prev, sizeof(prev));
        if (err) {
            const char *ct = err->cause_type;
            char cr[256];
            snprintf(cr, sizeof(cr), "%s", err->cause_reason);
            sc__mapping_err(err, ct ? ct : "illegal_argument_exception", "%s", cr);
        }
    }
    return st;
}

/* Integer-kind bound: rounds fractional bounds inward. Returns 0 if the bound is not a number. */
static int int_bound(const sc_mapping_field *f, const json_t *v, bool lower, bool inclusive,
                     int64_t *out, sc_mapping_error *err)
{
    double d;
    int is_int;
    int64_t iv;
    if (!json_to_double(v, true, &d, &is_int, &iv) || isnan(d))
        return num_error(err, v) == SC_OK;
    if (!is_int) {
        double r = lower ? ceil(d) : floor(d);
        if (r == d && !inclusive)
            r += lower ? 1 : -1;
        inclusive = true;
        if (r >= 9.2e18)
            iv = INT64_MAX, inclusive = true;
        else if (r <= -9.2e18)
            iv = INT64_MIN, inclusive = true;
        else
            iv = (int64_t)r;
    }
    if (!inclusive) {
        if (lower) {
            if (iv == INT64_MAX)
                return -1;
            iv++;
        } else {
            if (iv == INT64_MIN)
                return -1;
            iv--;
        }
    }
    *out = iv;
    return 1;
}

static int64_t next_sortable(int64_t s, int up)
{
    return up ? (s == INT64_MAX ? s : s + 1) : (s == INT64_MIN ? s : s - 1);
}

/* Encodes one bound; returns SC_OK and sets *empty when the bound excludes everything. */
static sc_status encode_bound(const sc_mapping_field *f, const json_t *v, bool lower,
                              bool inclusive, const sc_date_format *format, int64_t tz,
                              int64_t now_ms, int64_t *out, bool *empty, sc_mapping_error *err)
{
    double d;
    int is_int;
    int64_t iv;
    switch (f->type) {
    case SC_MAPPING_DATE: {
        const sc_date_format *fmt = format ? format : f->date_format;
        char buf[64];
        sc_slice text;
        if (json_is_string(v)) {
            text = sc_slice_make(json_string_value(v), json_string_length(v));
        } else if (json_is_integer(v)) {
            text = sc_slice_make(buf, (size_t)snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
                                                       json_integer_value(v)));
        } else {
            sc__mapping_err(err, "parse_exception", "failed to parse date field [%s]", f->path);
            return SC_EINVAL;
        }
        /* gt and lte round up; gte and lt round down (Elasticsearch's rules). */
        bool round_up = lower ? !inclusive : inclusive;
        int64_t ms;
        if (sc_date_math_parse(fmt, text, now_ms, round_up, tz, &ms) != SC_OK) {
            sc__mapping_err(err, "parse_exception",
                            "failed to parse date field [%.*s] with format [%s]", (int)text.len,
                            (const char *)text.ptr, sc_date_format_spec(fmt));
            sc__mapping_cause(err, "illegal_argument_exception",
                              "failed to parse date field [%.*s] with format [%s]",
                              (int)text.len, (const char *)text.ptr, sc_date_format_spec(fmt));
            return SC_EINVAL;
        }
        if (!inclusive) {
            if ((lower && ms == INT64_MAX) || (!lower && ms == INT64_MIN)) {
                *empty = true;
                return SC_OK;
            }
            ms += lower ? 1 : -1;
        }
        *out = ms;
        return SC_OK;
    }
    case SC_MAPPING_LONG:
    case SC_MAPPING_INTEGER:
    case SC_MAPPING_SHORT:
    case SC_MAPPING_BYTE:
    case SC_MAPPING_BOOLEAN: {
        if (f->type == SC_MAPPING_BOOLEAN) {
            sc__scalar sb;
            char bb[64];
            if (!sc__scalar_from_json(v, &sb, bb, sizeof(bb)) || encode_bool(&sb, &iv, err) != SC_OK) {
                sc__mapping_err(err, "illegal_argument_exception", "%s", err->cause_reason);
                return SC_EINVAL;
            }
            if (!inclusive) {
                iv += lower ? 1 : -1;
            }
            *out = iv;
            return SC_OK;
        }
        int r = int_bound(f, v, lower, inclusive, out, err);
        if (r == 0) {
            sc__mapping_err(err, err && err->cause_type ? err->cause_type
                                                        : "number_format_exception",
                            "%s", err ? err->cause_reason : "");
            return SC_EINVAL;
        }
        if (r < 0)
            *empty = true;
        return SC_OK;
    }
    case SC_MAPPING_UNSIGNED_LONG: {
        sc__scalar su;
        char ub[64];
        if (!sc__scalar_from_json(v, &su, ub, sizeof(ub)) || encode_unsigned(&su, &iv, err) != SC_OK) {
            sc__mapping_err(err, "number_format_exception", "%s", err->cause_reason);
            return SC_EINVAL;
        }
        if (!inclusive) {
            if ((lower && iv == INT64_MAX) || (!lower && iv == INT64_MIN)) {
                *empty = true;
                return SC_OK;
            }
            iv += lower ? 1 : -1;
        }
        *out = iv;
        return SC_OK;
    }
    case SC_MAPPING_SCALED_FLOAT:
        if (!json_to_double(v, true, &d, &is_int, &iv) || isnan(d)) {
            num_error(err, v);
            sc__mapping_err(err, "number_format_exception", "%s", err ? err->cause_reason : "");
            return SC_EINVAL;
        }
        {
            double s = d * f->scaling_factor;
            double r = lower ? ceil(s) : floor(s);
            if (r == s && !inclusive)
                r += lower ? 1 : -1;
            if (r > 9.2e18)
                r = 9.2e18;
            if (r < -9.2e18)
                r = -9.2e18;
            *out = (int64_t)r;
        }
        return SC_OK;
    case SC_MAPPING_DOUBLE:
    case SC_MAPPING_FLOAT:
    case SC_MAPPING_HALF_FLOAT: {
        if (!json_to_double(v, true, &d, &is_int, &iv) || isnan(d)) {
            num_error(err, v);
            sc__mapping_err(err, "number_format_exception", "%s", err ? err->cause_reason : "");
            return SC_EINVAL;
        }
        /* Round the bound to the type's precision in the direction that keeps the range
         * exact, then step past it for an exclusive bound. */
        double r = round_for_type(f->type, d);
        int64_t s = sc_mapping_double_to_sortable(r);
        if (lower && r < d)
            s = next_sortable(s, 1), inclusive = true;
        else if (!lower && r > d)
            s = next_sortable(s, 0), inclusive = true;
        if (!inclusive)
            s = next_sortable(s, lower);
        *out = s;
        return SC_OK;
    }
    default:
        sc__mapping_err(err, "illegal_argument_exception",
                        "range queries on field [%s] of type [%s] are not numeric", f->path,
                        sc_mapping_type_name(f->type));
        return SC_EINVAL;
    }
}

sc_status sc_mapping_encode_range(const sc_mapping_field *f, const json_t *from, const json_t *to,
                                  bool include_lower, bool include_upper,
                                  const sc_date_format *format, int64_t tz_offset_ms,
                                  int64_t now_ms, int64_t *lo, int64_t *hi, bool *empty,
                                  sc_mapping_error *err)
{
    *lo = INT64_MIN;
    *hi = INT64_MAX;
    *empty = false;
    if (!sc_mapping_type_is_numeric(f->type) || f->type == SC_MAPPING_GEO_POINT) {
        sc__mapping_err(err, "illegal_argument_exception",
                        "field [%s] of type [%s] does not support range queries", f->path,
                        sc_mapping_type_name(f->type));
        return SC_EINVAL;
    }
    if (f->type == SC_MAPPING_DATE_NANOS) {
        /* bounds in milliseconds, widened to whole milliseconds of nanoseconds */
        sc_mapping_field ms_field = *f;
        ms_field.type = SC_MAPPING_DATE;
        SC_TRY(sc_mapping_encode_range(&ms_field, from, to, include_lower, include_upper, format,
                                       tz_offset_ms, now_ms, lo, hi, empty, err));
        const int64_t lim = 9223372036853LL;
        *lo = *lo <= -lim ? INT64_MIN : (*lo >= lim ? INT64_MAX : *lo * 1000000);
        *hi = *hi >= lim ? INT64_MAX : (*hi <= -lim ? INT64_MIN : *hi * 1000000 + 999999);
        return SC_OK;
    }
    if (from && !json_is_null(from))
        SC_TRY(encode_bound(f, from, true, include_lower, format, tz_offset_ms, now_ms, lo, empty,
                            err));
    if (to && !json_is_null(to))
        SC_TRY(encode_bound(f, to, false, include_upper, format, tz_offset_ms, now_ms, hi, empty,
                            err));
    if (*lo > *hi)
        *empty = true;
    return SC_OK;
}

void sc_mapping_write_value(const sc_mapping_field *f, int64_t v, bool for_sort, sc_jsonw *w)
{
    switch (f->type) {
    case SC_MAPPING_DOUBLE:
    case SC_MAPPING_FLOAT:
    case SC_MAPPING_HALF_FLOAT:
        sc_jsonw_double(w, sc_mapping_sortable_to_double(v));
        break;
    case SC_MAPPING_SCALED_FLOAT:
        sc_jsonw_double(w, (double)v / f->scaling_factor);
        break;
    case SC_MAPPING_RANK_FEATURE: { /* the stored 9-bit value, as indexed (mapping.h) */
        uint32_t bits = (uint32_t)(v & 0xFFFF) << 15;
        float x;
        memcpy(&x, &bits, sizeof x);
        sc_jsonw_double(w, (double)(f->positive_score_impact ? x : 1.0f / x));
        break;
    }
    case SC_MAPPING_UNSIGNED_LONG:
        sc_jsonw_uint(w, (uint64_t)v ^ (1ULL << 63));
        break;
    case SC_MAPPING_BOOLEAN:
        if (for_sort)
            sc_jsonw_int(w, v);
        else
            sc_jsonw_bool(w, v != 0);
        break;
    case SC_MAPPING_DATE:
        if (for_sort) {
            sc_jsonw_int(w, v);
        } else {
            char buf[128];
            sc_date_format_print(f->date_format, v, buf, sizeof(buf));
            sc_jsonw_str(w, buf);
        }
        break;
    case SC_MAPPING_DATE_NANOS:
        if (for_sort) {
            sc_jsonw_int(w, v);
        } else {
            int64_t ms = v >= 0 ? v / 1000000 : -((-v + 999999) / 1000000);
            char buf[64];
            size_t n = sc_date_format_iso(ms, buf); /* ...ss.mmmZ */
            if (n > 1) {
                snprintf(buf + n - 1, sizeof(buf) - (n - 1), "%06dZ", (int)(v - ms * 1000000));
            }
            sc_jsonw_str(w, buf);
        }
        break;
    case SC_MAPPING_GEO_POINT: {
        double lat, lon;
        sc_mapping_geo_decode(v, &lat, &lon);
        sc_jsonw_obj_begin(w);
        sc_jsonw_kv_double(w, "lat", lat);
        sc_jsonw_kv_double(w, "lon", lon);
        sc_jsonw_obj_end(w);
        break;
    }
    default:
        sc_jsonw_int(w, v);
        break;
    }
}

/* ---- fallback analysis ---- */

static int is_word_byte(uint8_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

sc_status sc__mapping_analyze(const sc_mapping_analysis *an, const char *analyzer, sc_slice text,
                              sc_arena *arena, sc_index_token **toks, size_t *n)
{
    if (an && an->analyze)
        return an->analyze(an->ctx, analyzer ? analyzer : "standard", text, arena, toks, n);
    size_t cap = text.len / 2 + 1, k = 0;
    sc_index_token *out = sc_arena_alloc(arena, cap * sizeof(*out));
    if (!out)
        return SC_ELIMIT;
    size_t i = 0;
    while (i < text.len) {
        while (i < text.len && !is_word_byte(text.ptr[i]))
            i++;
        size_t s = i;
        while (i < text.len && is_word_byte(text.ptr[i]))
            i++;
        if (i > s) {
            char *t = sc_arena_alloc(arena, i - s);
            if (!t)
                return SC_ELIMIT;
            for (size_t j = s; j < i; j++) {
                uint8_t c = text.ptr[j];
                t[j - s] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
            }
            out[k].term = sc_slice_make(t, i - s);
            out[k].position = (uint32_t)k;
            k++;
        }
    }
    *toks = out;
    *n = k;
    return SC_OK;
}

sc_status sc__mapping_normalize(const sc_mapping_analysis *an, const char *normalizer,
                                sc_slice text, sc_arena *arena, sc_slice *out)
{
    if (an && an->normalize)
        return an->normalize(an->ctx, normalizer, text, arena, out);
    char *t = sc_arena_alloc(arena, text.len ? text.len : 1);
    if (!t)
        return SC_ELIMIT;
    for (size_t j = 0; j < text.len; j++) {
        uint8_t c = text.ptr[j];
        t[j] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    *out = sc_slice_make(t, text.len);
    return SC_OK;
}
