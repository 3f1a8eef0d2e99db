/* Streaming JSON writer; see jsonw.h. */
#include "base/jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline bool bit_get(const uint64_t *bits, int d)
{
    return (bits[d >> 6] >> (d & 63)) & 1;
}

static inline void bit_put(uint64_t *bits, int d, bool v)
{
    if (v)
        bits[d >> 6] |= (uint64_t)1 << (d & 63);
    else
        bits[d >> 6] &= ~((uint64_t)1 << (d & 63));
}

/* The buffer grows out of line; a response's few hundred small appends mostly fit (a cheap
 * search's page is ~150 of them: the calls into the growth function were most of `put`'s
 * share of a request, h-req18). */
static void grow_put(sc_jsonw *w, const void *p, size_t n)
{
    if (sc_vec_append(w->out, (const unsigned char *)p, n) != SC_OK)
        w->st = SC_ENOMEM;
}

static inline void put(sc_jsonw *w, const void *p, size_t n)
{
    if (w->st != SC_OK || n == 0)
        return;
    sc_buf *o = w->out;
    if (n <= o->cap - o->len) {
        memcpy(o->ptr + o->len, p, n);
        o->len += n;
        return;
    }
    grow_put(w, p, n);
}

static inline void putc1(sc_jsonw *w, char c)
{
    sc_buf *o = w->out;
    if (w->st == SC_OK && o->len < o->cap) {
        o->ptr[o->len++] = (unsigned char)c;
        return;
    }
    put(w, &c, 1);
}

static void newline(sc_jsonw *w)
{
    if (!w->pretty)
        return;
    putc1(w, '\n');
    for (int i = 0; i < w->depth; i++)
        put(w, "  ", 2);
}

void sc_jsonw_init(sc_jsonw *w, sc_buf *out, bool pretty)
{
    memset(w, 0, sizeof(*w));
    w->out = out;
    w->pretty = pretty;
}

/* Called before every value: commas in arrays, key-required check in objects. */
static void before_value(sc_jsonw *w)
{
    if (w->st != SC_OK)
        return;
    if (w->depth == 0)
        return;
    int d = w->depth - 1;
    if (bit_get(w->is_object, d)) {
        if (!w->after_key)
            w->st = SC_EINVAL;
        w->after_key = false;
        return;
    }
    if (bit_get(w->has_items, d))
        putc1(w, ',');
    bit_put(w->has_items, d, true);
    newline(w);
}

static void open_level(sc_jsonw *w, char c, bool obj)
{
    before_value(w);
    if (w->st != SC_OK)
        return;
    if (w->depth >= SC_JSONW_MAX_DEPTH) {
        w->st = SC_ELIMIT;
        return;
    }
    putc1(w, c);
    bit_put(w->has_items, w->depth, false);
    bit_put(w->is_object, w->depth, obj);
    w->depth++;
}

static void close_level(sc_jsonw *w, char c, bool obj)
{
    if (w->st != SC_OK)
        return;
    if (w->depth == 0 || bit_get(w->is_object, w->depth - 1) != obj || w->after_key) {
        w->st = SC_EINVAL;
        return;
    }
    w->depth--;
    if (bit_get(w->has_items, w->depth))
        newline(w);
    putc1(w, c);
}

void sc_jsonw_obj_begin(sc_jsonw *w)
{
    open_level(w, '{', true);
}

void sc_jsonw_obj_end(sc_jsonw *w)
{
    close_level(w, '}', true);
}

void sc_jsonw_arr_begin(sc_jsonw *w)
{
    open_level(w, '[', false);
}

void sc_jsonw_arr_end(sc_jsonw *w)
{
    close_level(w, ']', false);
}

sc_status sc_json_escape(sc_buf *out, sc_slice s)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = s.ptr, *end = s.ptr + s.len;
    while (p < end) {
        const uint8_t *run = p;
        while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
            p++;
        if (p > run && sc_vec_append(out, run, (size_t)(p - run)) != SC_OK)
            return SC_ENOMEM;
        if (p >= end)
            break;
        uint8_t c = *p;
        char esc[8];
        size_t n = 0;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            n = 2;
            p++;
        } else if (c < 0x20) {
            esc[0] = '\\';
            switch (c) {
            case '\n':
                esc[1] = 'n';
                n = 2;
                break;
            case '\r':
                esc[1] = 'r';
                n = 2;
                break;
            case '\t':
                esc[1] = 't';
                n = 2;
                break;
            case '\b':
                esc[1] = 'b';
                n = 2;
                break;
            case '\f':
                esc[1] = 'f';
                n = 2;
                break;
            default:
                memcpy(esc + 1, "u00", 3);
                esc[4] = hex[c >> 4];
                esc[5] = hex[c & 15];
                n = 6;
            }
            p++;
        } else {
            /* Validate one UTF-8 sequence; copy it if well formed, else emit U+FFFD. */
            size_t len = 0;
            uint32_t cp = 0;
            if (c >= 0xc2 && c <= 0xdf) {
                len = 2;
                cp = c & 0x1f;
            } else if (c >= 0xe0 && c <= 0xef) {
                len = 3;
                cp = c & 0x0f;
            } else if (c >= 0xf0 && c <= 0xf4) {
                len = 4;
                cp = c & 0x07;
            }
            bool ok = len && (size_t)(end - p) >= len;
            for (size_t i = 1; ok && i < len; i++) {
                if ((p[i] & 0xc0) != 0x80)
                    ok = false;
                else
                    cp = (cp << 6) | (p[i] & 0x3f);
            }
            if (ok && ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
                       (len == 4 && (cp < 0x10000 || cp > 0x10ffff))))
                ok = false;
            if (ok) {
                if (sc_vec_append(out, p, len) != SC_OK)
                    return SC_ENOMEM;
                p += len;
                continue;
            }
            memcpy(esc, "\xef\xbf\xbd", 3);
            n = 3;
            p++;
        }
        if (sc_vec_append(out, (unsigned char *)esc, n) != SC_OK)
            return SC_ENOMEM;
    }
    return SC_OK;
}

static void put_string(sc_jsonw *w, sc_slice s)
{
    if (w->st != SC_OK)
        return;
    /* Most strings (keys, ids, index names) need no escape: one copy, no second pass. */
    size_t plain = 0;
    while (plain < s.len && s.ptr[plain] >= 0x20 && s.ptr[plain] < 0x80 && s.ptr[plain] != '"' &&
           s.ptr[plain] != '\\')
        plain++;
    if (sc_vec_reserve(w->out, s.len + 2) != SC_OK) {
        w->st = SC_ENOMEM;
        return;
    }
    putc1(w, '"');
    put(w, s.ptr, plain);
    if (plain < s.len &&
        sc_json_escape(w->out, sc_slice_make(s.ptr + plain, s.len - plain)) != SC_OK)
        w->st = SC_ENOMEM;
    putc1(w, '"');
}

void sc_jsonw_keyn(sc_jsonw *w, sc_slice key)
{
    if (w->st != SC_OK)
        return;
    if (w->depth == 0 || !bit_get(w->is_object, w->depth - 1) || w->after_key) {
        w->st = SC_EINVAL;
        return;
    }
    int d = w->depth - 1;
    if (bit_get(w->has_items, d))
        putc1(w, ',');
    bit_put(w->has_items, d, true);
    newline(w);
    put_string(w, key);
    if (w->pretty)
        put(w, " : ", 3);
    else
        putc1(w, ':');
    w->after_key = true;
}

void sc_jsonw_key(sc_jsonw *w, const char *key)
{
    sc_jsonw_keyn(w, sc_slice_cstr(key));
}

void sc_jsonw_strn(sc_jsonw *w, sc_slice s)
{
    before_value(w);
    put_string(w, s);
}

void sc_jsonw_str(sc_jsonw *w, const char *s)
{
    sc_jsonw_strn(w, sc_slice_cstr(s));
}

/* Decimal digits of v at the end of buf[0..32); returns where they start. */
static char *u64_digits(uint64_t v, char *end)
{
    char *p = end;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

void sc_jsonw_int(sc_jsonw *w, int64_t v)
{
    char buf[32];
    char *end = buf + sizeof buf;
    /* the magnitude as unsigned: -INT64_MIN does not fit an int64_t */
    uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    char *p = u64_digits(mag, end);
    if (v < 0)
        *--p = '-';
    before_value(w);
    put(w, p, (size_t)(end - p));
}

void sc_jsonw_uint(sc_jsonw *w, uint64_t v)
{
    char buf[32];
    char *end = buf + sizeof buf;
    char *p = u64_digits(v, end);
    before_value(w);
    put(w, p, (size_t)(end - p));
}

static size_t add_point_zero(char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '.' || buf[i] == 'e' || buf[i] == 'n' || buf[i] == 'i')
            return n;
    buf[n++] = '.';
    buf[n++] = '0';
    buf[n] = 0;
    return n;
}

/* Java's Double.toString uses plain notation for 1e-3 <= |v| < 1e7 and scientific notation
 * otherwise; %g switches at other points (50 with one digit is "5e+01"). Rewrites `buf` (the
 * shortest round-trip %g form with `prec` significant digits) into plain notation in that range,
 * then makes sure an integral value carries ".0". */
static size_t java_notation(char *buf, size_t n, double v, int prec)
{
    double a = fabs(v);
    if (memchr(buf, 'e', n) && a >= 1e-3 && a < 1e7) {
        int exp10 = (int)floor(log10(a));
        int decimals = prec - 1 - exp10;
        if (decimals < 0)
            decimals = 0;
        n = (size_t)snprintf(buf, 32, "%.*f", decimals, v);
    }
    return add_point_zero(buf, n);
}

size_t sc_json_format_double(char *buf, double v)
{
    if (!isfinite(v)) {
        memcpy(buf, "null", 5);
        return 4;
    }
    int n = 0, prec = 1;
    for (; prec <= 17; prec++) {
        n = snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return java_notation(buf, (size_t)n, v, prec);
}

/* jsonw.h: the reference form (snprintf/strtof), also what the fast path falls back to. */
size_t sc__json_format_float_slow(char *buf, float v)
{
    if (!isfinite(v)) {
        memcpy(buf, "null", 5);
        return 4;
    }
    /* The fewest significant digits (1..9; 9 always round-trips) that read back as v, found
     * by binary search: a precision that round-trips stays so when digits are added. Checked
     * against the linear scan on every 97th positive finite float (22M values, no difference);
     * 3-4 snprintf/strtof pairs instead of up to 9 (score formatting was ~20% of a cheap
     * search request's API time). */
    int lo = 1, hi = 9;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(buf, 32, "%.*g", mid, (double)v);
        if (strtof(buf, NULL) == v)
            hi = mid;
        else
            lo = mid + 1;
    }
    int n = snprintf(buf, 32, "%.*g", lo, (double)v);
    return java_notation(buf, (size_t)n, (double)v, lo);
}

/* 10^0 .. 10^22: exact doubles */
static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* x * 10^k for |k| <= 22, one correctly rounded operation on exact operands. */
static inline double scale10(double x, int k)
{
    return k >= 0 ? x * POW10[k] : x / POW10[-k];
}

/* The p-digit decimal d * 10^-k nearest a (10^e <= a < 10^(e+1)): 1 when it reads back as
 * the float a, 0 when it does not, -1 when this cannot be decided here (see below). Each step is
 * one correctly rounded double operation on exact operands (d < 10^9, |k| <= 11), so the
 * nearest decimal is known unless a * 10^k lies within its rounding error of a half, and the
 * decimal's value, rounded to double and then to float, is what strtof gives unless the double
 * lands exactly halfway between two floats; -1 as well when rounding carries into a new digit
 * (9.99.. to 10). */
static int nearest_decimal(double a, int e, int p, double *d_out, int *k_out)
{
    int k = p - 1 - e;
    double x = scale10(a, k), fl = floor(x), frac = x - fl;
    if (fabs(frac - 0.5) <= x * 0x1p-50)
        return -1; /* too close to a tie to round here */
    double d = frac > 0.5 ? fl + 1.0 : fl;
    if (d >= POW10[p])
        return -1; /* carried into a new digit */
    double back = scale10(d, -k);
    uint64_t bits;
    memcpy(&bits, &back, sizeof bits);
    if ((bits & ((UINT64_C(1) << 29) - 1)) == (UINT64_C(1) << 28))
        return -1; /* a float midpoint: double rounding could differ from strtof */
    *d_out = d;
    *k_out = k;
    return (float)back == (float)a;
}

/* The shortest form of a float in [1e-3, 1e7) (every score), in plain notation, without
 * snprintf or strtof: the fewest digits p whose nearest decimal reads back as v, found by
 * binary search over p = 1..9 as the reference does (a precision that reads back stays so with
 * more digits; 3-4 steps instead of up to 9: scores mostly need 7-9 digits). 0 when a step
 * cannot decide (nearest_decimal): the caller takes the reference path. Same output as
 * sc__json_format_float_slow (jsonw_test compares them). */
static size_t format_float_plain(char *buf, float v)
{
    double a = fabs((double)v);
    if (!(a >= 1e-3 && a < 1e7))
        return 0;
    int e = 0; /* 10^e <= a < 10^(e+1), e in [-3, 6] */
    if (a >= 1.0)
        while (e < 6 && a >= POW10[e + 1])
            e++;
    else
        while (a < 1.0 / POW10[-e])
            e--;
    int lo = 1, hi = 9, k = 0;
    double d = 0;
    bool have_hi = false; /* d, k hold hi's decimal */
    while (lo < hi) {
        int mid = (lo + hi) / 2, km;
        double dm;
        int r = nearest_decimal(a, e, mid, &dm, &km);
        if (r < 0)
            return 0;
        if (r) {
            hi = mid;
            d = dm;
            k = km;
            have_hi = true;
        } else {
            lo = mid + 1;
        }
    }
    if (!have_hi && nearest_decimal(a, e, lo, &d, &k) != 1)
        return 0;
    /* d's lo digits (the last is not 0: else lo - 1 digits would have read back), the point k
     * digits from the right */
    char dig[16];
    uint32_t u = (uint32_t)d;
    int nd = 0;
    do {
        dig[15 - nd++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    const char *ds = dig + 16 - nd;
    size_t n = 0;
    if (v < 0)
        buf[n++] = '-';
    if (k <= 0) {
        memcpy(buf + n, ds, (size_t)nd);
        n += (size_t)nd;
        for (int z = 0; z < -k; z++)
            buf[n++] = '0';
        buf[n++] = '.';
        buf[n++] = '0';
    } else if (k < nd) {
        memcpy(buf + n, ds, (size_t)(nd - k));
        n += (size_t)(nd - k);
        buf[n++] = '.';
        memcpy(buf + n, ds + nd - k, (size_t)k);
        n += (size_t)k;
    } else {
        buf[n++] = '0';
        buf[n++] = '.';
        for (int z = 0; z < k - nd; z++)
            buf[n++] = '0';
        memcpy(buf + n, ds, (size_t)nd);
        n += (size_t)nd;
    }
    buf[n] = 0;
    return n;
}

size_t sc_json_format_float(char *buf, float v)
{
    /* scores, the common case, without snprintf/strtof: they were ~15% of a cheap search
     * request's API time (ten hits' scores and max_score) */
    size_t n = format_float_plain(buf, v);
    return n ? n : sc__json_format_float_slow(buf, v);
}

void sc_jsonw_double(sc_jsonw *w, double v)
{
    char buf[40];
    size_t n = sc_json_format_double(buf, v);
    before_value(w);
    put(w, buf, n);
}

void sc_jsonw_float(sc_jsonw *w, float v)
{
    char buf[40];
    size_t n = sc_json_format_float(buf, v);
    before_value(w);
    put(w, buf, n);
}

void sc_jsonw_bool(sc_jsonw *w, bool v)
{
    before_value(w);
    put(w, v ? "true" : "false", v ? 4 : 5);
}

void sc_jsonw_null(sc_jsonw *w)
{
    before_value(w);
    put(w, "null", 4);
}

void sc_jsonw_raw(sc_jsonw *w, sc_slice json)
{
    before_value(w);
    put(w, json.ptr, json.len);
}

void sc_jsonw_kv_str(sc_jsonw *w, const char *key, const char *s)
{
    sc_jsonw_key(w, key);
    sc_jsonw_str(w, s);
}

void sc_jsonw_kv_int(sc_jsonw *w, const char *key, int64_t v)
{
    sc_jsonw_key(w, key);
    sc_jsonw_int(w, v);
}

void sc_jsonw_kv_bool(sc_jsonw *w, const char *key, bool v)
{
    sc_jsonw_key(w, key);
    sc_jsonw_bool(w, v);
}

void sc_jsonw_kv_double(sc_jsonw *w, const char *key, double v)
{
    sc_jsonw_key(w, key);
    sc_jsonw_double(w, v);
}

sc_status sc_jsonw_finish(sc_jsonw *w)
{
    if (w->st != SC_OK)
        return w->st;
    if (w->depth != 0 || w->after_key)
        return SC_EINVAL;
    return SC_OK;
}
