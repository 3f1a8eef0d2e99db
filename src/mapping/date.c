/* Date formats, parsing, formatting and date math for `date` fields; see date.h. Every parser
 * here is bounds-checked over an sc_slice (text is never NUL-terminated) and fuzzed by
 * tests/fuzz/date_fuzz.c. */
#include "mapping/date.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS_PER_S 1000LL
#define MS_PER_MIN (60 * MS_PER_S)
#define MS_PER_H (60 * MS_PER_MIN)
#define MS_PER_DAY (24 * MS_PER_H)
/* Years beyond this are refused so that every intermediate stays far from int64 overflow. */
#define MAX_ABS_YEAR 292000000LL

enum { ALT_ISO, ALT_ISO_LENIENT, ALT_EPOCH_MS, ALT_EPOCH_S, ALT_PATTERN };

typedef struct ptok {
    char letter; /* 0 = literal */
    uint8_t count;
    const char *lit;
    size_t lit_len;
} ptok;

typedef struct dalt {
    int kind;
    ptok *toks;
    size_t n_toks;
    char *buf; /* owned pattern text the literals point into */
} dalt;

struct sc_date_format {
    char *spec;
    dalt *alts;
    size_t n_alts;
};

/* Broken-down fields filled by the parsers. `finest` is the smallest unit present
 * (0 year, 1 month, 2 day, 3 hour, 4 minute, 5 second, 6 fraction) for round-up parsing. */
typedef struct dfields {
    int64_t y;
    int mo, d, h, mi, s;
    int64_t frac_ns;
    int64_t tz_ms;
    int has_tz;
    int pm; /* -1 none, 0 am, 1 pm */
    int h12;
    int finest;
    int64_t epoch_ms; /* for epoch formats */
    int is_epoch;
} dfields;

int64_t sc_date_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void sc_date_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

/* ---- compiling formats ---- */

static const struct {
    const char *name;
    int kind;
    const char *pattern;
} named_formats[] = {
    {"strict_date_optional_time", ALT_ISO, NULL},
    {"strict_date_optional_time_nanos", ALT_ISO, NULL},
    {"date_optional_time", ALT_ISO_LENIENT, NULL},
    {"epoch_millis", ALT_EPOCH_MS, NULL},
    {"epoch_second", ALT_EPOCH_S, NULL},
    {"date", ALT_PATTERN, "yyyy-MM-dd"},
    {"strict_date", ALT_PATTERN, "yyyy-MM-dd"},
    {"year_month_day", ALT_PATTERN, "yyyy-MM-dd"},
    {"strict_year_month_day", ALT_PATTERN, "yyyy-MM-dd"},
    {"year_month", ALT_PATTERN, "yyyy-MM"},
    {"strict_year_month", ALT_PATTERN, "yyyy-MM"},
    {"year", ALT_PATTERN, "yyyy"},
    {"strict_year", ALT_PATTERN, "yyyy"},
    {"date_time", ALT_PATTERN, "yyyy-MM-dd'T'HH:mm:ss.SSSZ"},
    {"strict_date_time", ALT_PATTERN, "yyyy-MM-dd'T'HH:mm:ss.SSSZ"},
    {"date_time_no_millis", ALT_PATTERN, "yyyy-MM-dd'T'HH:mm:ssZ"},
    {"strict_date_time_no_millis", ALT_PATTERN, "yyyy-MM-dd'T'HH:mm:ssZ"},
    {"date_hour_minute_second", ALT_PATTERN, "yyyy-MM-dd'T'HH:mm:ss"},
    {"strict_date_hour_minute_second", ALT_PATTERN, "yyyy-MM-dd'T'HH:mm:ss"},
    {"date_hour_minute_second_millis", ALT_PATTERN, "yyyy-MM-dd'T'HH:mm:ss.SSS"},
    {"strict_date_hour_minute_second_millis", ALT_PATTERN, "yyyy-MM-dd'T'HH:mm:ss.SSS"},
    {"date_hour_minute", ALT_PATTERN, "yyyy-MM-dd'T'HH:mm"},
    {"strict_date_hour_minute", ALT_PATTERN, "yyyy-MM-dd'T'HH:mm"},
    {"date_hour", ALT_PATTERN, "yyyy-MM-dd'T'HH"},
    {"strict_date_hour", ALT_PATTERN, "yyyy-MM-dd'T'HH"},
    {"basic_date", ALT_PATTERN, "yyyyMMdd"},
    {"basic_date_time", ALT_PATTERN, "yyyyMMdd'T'HHmmss.SSSZ"},
    {"basic_date_time_no_millis", ALT_PATTERN, "yyyyMMdd'T'HHmmssZ"},
};

static int is_pattern_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static sc_status compile_pattern(dalt *a, const char *pat, size_t len)
{
    a->kind = ALT_PATTERN;
    a->buf = malloc(len + 1);
    a->toks = calloc(len + 1, sizeof(ptok));
    if (!a->buf || !a->toks)
        return SC_ENOMEM;
    memcpy(a->buf, pat, len);
    a->buf[len] = 0;
    size_t i = 0;
    while (i < len) {
        char c = a->buf[i];
        ptok *t = &a->toks[a->n_toks];
        if (c == '\'') {
            size_t j = i + 1;
            while (j < len && a->buf[j] != '\'')
                j++;
            if (j == i + 1) { /* '' is a literal quote */
                t->lit = a->buf + i;
                t->lit_len = 1;
                i = j < len ? j + 1 : j;
            } else {
                t->lit = a->buf + i + 1;
                t->lit_len = j - i - 1;
                i = j < len ? j + 1 : j;
            }
            a->n_toks++;
        } else if (is_pattern_letter(c)) {
            size_t j = i;
            while (j < len && a->buf[j] == c)
                j++;
            if (!strchr("yuMdHhmsSZXxEa", c))
                return SC_EINVAL;
            t->letter = c;
            t->count = (uint8_t)(j - i > 9 ? 9 : j - i);
            a->n_toks++;
            i = j;
        } else if (c == '[' || c == ']') {
            return SC_EINVAL; /* optional sections are not supported in custom patterns */
        } else {
            t->lit = a->buf + i;
            t->lit_len = 1;
            a->n_toks++;
            i++;
        }
    }
    return a->n_toks ? SC_OK : SC_EINVAL;
}

static sc_status compile_alt(dalt *a, const char *s, size_t len)
{
    for (size_t k = 0; k < sizeof(named_formats) / sizeof(named_formats[0]); k++) {
        if (strlen(named_formats[k].name) == len && memcmp(named_formats[k].name, s, len) == 0) {
            if (named_formats[k].pattern)
                return compile_pattern(a, named_formats[k].pattern,
                                       strlen(named_formats[k].pattern));
            a->kind = named_formats[k].kind;
            return SC_OK;
        }
    }
    /* A bare lowercase word with underscores is a named format we do not know. */
    int word = len > 0;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_'))
            word = 0;
    if (word && memchr(s, '_', len))
        return SC_EINVAL;
    return compile_pattern(a, s, len);
}

sc_status sc_date_format_new(sc_slice spec, sc_date_format **out)
{
    *out = NULL;
    if (spec.len == 0)
        return SC_EINVAL;
    sc_date_format *f = calloc(1, sizeof(*f));
    if (!f)
        return SC_ENOMEM;
    f->spec = malloc(spec.len + 1);
    size_t max_alts = spec.len / 2 + 1;
    f->alts = calloc(max_alts, sizeof(dalt));
    if (!f->spec || !f->alts) {
        sc_date_format_free(f);
        return SC_ENOMEM;
    }
    memcpy(f->spec, spec.ptr, spec.len);
    f->spec[spec.len] = 0;
    const char *p = f->spec, *end = f->spec + spec.len;
    while (p <= end) {
        const char *bar = strstr(p, "||");
        const char *stop = bar ? bar : end;
        sc_status st = stop > p ? compile_alt(&f->alts[f->n_alts], p, (size_t)(stop - p))
                                : SC_EINVAL;
        f->n_alts++;
        if (st != SC_OK) {
            sc_date_format_free(f);
            return st;
        }
        if (!bar)
            break;
        p = bar + 2;
    }
    *out = f;
    return SC_OK;
}

void sc_date_format_free(sc_date_format *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_alts; i++) {
        free(f->alts[i].toks);
        free(f->alts[i].buf);
    }
    free(f->alts);
    free(f->spec);
    free(f);
}

const char *sc_date_format_spec(const sc_date_format *f)
{
    return f->spec;
}

/* ---- parsing ---- */

typedef struct cur {
    const uint8_t *p, *end;
} cur;

/* Reads between min and max digits; returns the count read (0 on failure). */
static int read_digits(cur *c, int min, int max, int64_t *v)
{
    int n = 0;
    int64_t x = 0;
    while (n < max && c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        x = x * 10 + (*c->p - '0');
        c->p++;
        n++;
    }
    if (n < min)
        return 0;
    *v = x;
    return n;
}

static int eat(cur *c, char ch)
{
    if (c->p < c->end && *c->p == (uint8_t)ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* Zone: Z | +HH | +HHmm | +HH:mm (also -). */
static int read_zone(cur *c, dfields *f)
{
    if (eat(c, 'Z') || eat(c, 'z')) {
        f->has_tz = 1;
        f->tz_ms = 0;
        return 1;
    }
    if (c->p >= c->end || (*c->p != '+' && *c->p != '-'))
        return 0;
    int neg = *c->p == '-';
    c->p++;
    int64_t hh, mm = 0;
    if (!read_digits(c, 2, 2, &hh))
        return 0;
    if (eat(c, ':')) {
        if (!read_digits(c, 2, 2, &mm))
            return 0;
    } else if (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (!read_digits(c, 2, 2, &mm))
            return 0;
    }
    if (hh > 18 || mm > 59)
        return 0;
    f->has_tz = 1;
    f->tz_ms = (neg ? -1 : 1) * (hh * MS_PER_H + mm * MS_PER_MIN);
    return 1;
}

static int read_fraction(cur *c, dfields *f, int min, int max)
{
    int64_t v;
    int n = read_digits(c, min, max, &v);
    if (!n)
        return 0;
    for (int k = n; k < 9; k++)
        v *= 10;
    f->frac_ns = v;
    f->finest = 6;
    return 1;
}

/* strict_date_optional_time: yyyy[-MM[-dd[('T'|' ')HH[:mm[:ss[(.|,)S{1,9}]]]]]][zone]. The
 * lenient form accepts 1..9-digit years and 1..2-digit other fields. */
static int parse_iso(cur *c, dfields *f, int strict)
{
    int64_t v;
    int neg = 0;
    if (!strict && (eat(c, '-') || eat(c, '+')))
        neg = c->p[-1] == '-';
    if (!read_digits(c, strict ? 4 : 1, 9, &v))
        return 0;
    f->y = neg ? -v : v;
    f->finest = 0;
    int dmin = strict ? 2 : 1;
    if (eat(c, '-')) {
        if (!read_digits(c, dmin, 2, &v))
            return 0;
        f->mo = (int)v;
        f->finest = 1;
        if (eat(c, '-')) {
            if (!read_digits(c, dmin, 2, &v))
                return 0;
            f->d = (int)v;
            f->finest = 2;
            if (eat(c, 'T')) {
                if (!read_digits(c, dmin, 2, &v))
                    return 0;
                f->h = (int)v;
                f->finest = 3;
                if (eat(c, ':')) {
                    if (!read_digits(c, dmin, 2, &v))
                        return 0;
                    f->mi = (int)v;
                    f->finest = 4;
                    if (eat(c, ':')) {
                        if (!read_digits(c, dmin, 2, &v))
                            return 0;
                        f->s = (int)v;
                        f->finest = 5;
                        if (eat(c, '.') || eat(c, ',')) {
                            if (!read_fraction(c, f, 1, 9))
                                return 0;
                        }
                    }
                }
            }
        }
    }
    if (c->p < c->end && f->finest >= 3 && !read_zone(c, f))
        return 0;
    return c->p == c->end;
}

static const char *const month_names[12] = {"january", "february", "march",     "april",
                                            "may",     "june",     "july",      "august",
                                            "september", "october", "november", "december"};

static int read_month_name(cur *c, int full, int64_t *out)
{
    for (int m = 0; m < 12; m++) {
        size_t n = full ? strlen(month_names[m]) : 3;
        if ((size_t)(c->end - c->p) >= n && strncasecmp((const char *)c->p, month_names[m], n) == 0) {
            c->p += n;
            *out = m + 1;
            return 1;
        }
    }
    return 0;
}

static int parse_pattern(const dalt *a, cur *c, dfields *f)
{
    for (size_t i = 0; i < a->n_toks; i++) {
        const ptok *t = &a->toks[i];
        int64_t v;
        if (!t->letter) {
            if ((size_t)(c->end - c->p) < t->lit_len || memcmp(c->p, t->lit, t->lit_len) != 0)
                return 0;
            c->p += t->lit_len;
            continue;
        }
        int n = t->count;
        switch (t->letter) {
        case 'y':
        case 'u':
            if (n == 2) {
                if (!read_digits(c, 2, 2, &v))
                    return 0;
                f->y = 2000 + v;
            } else {
                /* adjacent numeric fields (yyyyMMdd) fix the year's width */
                int adjacent = i + 1 < a->n_toks && a->toks[i + 1].letter;
                if (!read_digits(c, n < 4 ? 1 : 4, adjacent ? (n < 4 ? 4 : n) : 9, &v))
                    return 0;
                f->y = v;
            }
            break;
        case 'M':
            if (n >= 3) {
                if (!read_month_name(c, n >= 4, &v))
                    return 0;
            } else if (!read_digits(c, n == 1 ? 1 : 2, 2, &v)) {
                return 0;
            }
            f->mo = (int)v;
            if (f->finest < 1)
                f->finest = 1;
            break;
        case 'd':
            if (!read_digits(c, n == 1 ? 1 : 2, 2, &v))
                return 0;
            f->d = (int)v;
            if (f->finest < 2)
                f->finest = 2;
            break;
        case 'H':
        case 'h':
            if (!read_digits(c, n == 1 ? 1 : 2, 2, &v))
                return 0;
            f->h = (int)v;
            f->h12 = t->letter == 'h';
            if (f->finest < 3)
                f->finest = 3;
            break;
        case 'm':
            if (!read_digits(c, n == 1 ? 1 : 2, 2, &v))
                return 0;
            f->mi = (int)v;
            if (f->finest < 4)
                f->finest = 4;
            break;
        case 's':
            if (!read_digits(c, n == 1 ? 1 : 2, 2, &v))
                return 0;
            f->s = (int)v;
            if (f->finest < 5)
                f->finest = 5;
            break;
        case 'S':
            if (!read_fraction(c, f, n, n))
                return 0;
            break;
        case 'Z':
        case 'X':
        case 'x':
            if (!read_zone(c, f))
                return 0;
            break;
        case 'E': {
            const uint8_t *s0 = c->p;
            while (c->p < c->end && isalpha(*c->p))
                c->p++;
            if (c->p == s0)
                return 0;
            break;
        }
        case 'a':
            if (c->end - c->p < 2)
                return 0;
            if (strncasecmp((const char *)c->p, "am", 2) == 0)
                f->pm = 0;
            else if (strncasecmp((const char *)c->p, "pm", 2) == 0)
                f->pm = 1;
            else
                return 0;
            c->p += 2;
            break;
        default:
            return 0;
        }
    }
    return c->p == c->end;
}

/* epoch_millis / epoch_second: -?digits(.digits)? */
static int parse_epoch(cur *c, dfields *f, int64_t unit_ms)
{
    int neg = eat(c, '-');
    int64_t whole;
    if (!read_digits(c, 1, 18, &whole))
        return 0;
    int64_t frac_ms = 0;
    if (eat(c, '.')) {
        /* fraction of the unit, kept to millisecond precision */
        int64_t digits = 0;
        int n = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (n < 9) {
                digits = digits * 10 + (*c->p - '0');
                n++;
            }
            c->p++;
        }
        int64_t scale = 1;
        for (int k = 0; k < n; k++)
            scale *= 10;
        frac_ms = n ? digits * unit_ms / scale : 0;
    }
    if (c->p != c->end)
        return 0;
    if (whole > INT64_MAX / unit_ms - 1)
        return 0;
    int64_t ms = whole * unit_ms + frac_ms;
    /* a negative fractional epoch truncates toward negative infinity as Elasticsearch does */
    f->epoch_ms = neg ? -ms : ms;
    f->is_epoch = 1;
    return 1;
}

static int fields_to_ms(dfields *f, int64_t default_tz_ms, int64_t *out)
{
    if (f->is_epoch) {
        *out = f->epoch_ms;
        return 1;
    }
    if (f->y > MAX_ABS_YEAR || f->y < -MAX_ABS_YEAR)
        return 0;
    if (f->mo < 1 || f->mo > 12 || f->d < 1 || f->d > days_in_month(f->y, f->mo))
        return 0;
    int h = f->h;
    if (f->h12) {
        if (h < 1 || h > 12)
            return 0;
        h = h % 12 + (f->pm == 1 ? 12 : 0);
    }
    if (h > 23 || f->mi > 59 || f->s > 59)
        return 0;
    int64_t days = sc_date_days_from_civil(f->y, (unsigned)f->mo, (unsigned)f->d);
    int64_t ms = days * MS_PER_DAY + h * MS_PER_H + f->mi * MS_PER_MIN + f->s * MS_PER_S +
                 f->frac_ns / 1000000;
    ms -= f->has_tz ? f->tz_ms : default_tz_ms;
    *out = ms;
    return 1;
}

static int parse_alt(const dalt *a, sc_slice text, dfields *f)
{
    memset(f, 0, sizeof(*f));
    f->mo = 1;
    f->d = 1;
    f->pm = -1;
    f->finest = 0;
    cur c = {text.ptr, text.ptr + text.len};
    switch (a->kind) {
    case ALT_ISO:
        return parse_iso(&c, f, 1);
    case ALT_ISO_LENIENT:
        return parse_iso(&c, f, 0);
    case ALT_EPOCH_MS:
        return parse_epoch(&c, f, 1);
    case ALT_EPOCH_S:
        return parse_epoch(&c, f, MS_PER_S);
    default:
        return parse_pattern(a, &c, f);
    }
}

/* Adds the length of the finest present unit minus 1 ms (round-up parsing of `lte` dates). */
static int64_t round_up_fields(const dfields *f, int64_t ms)
{
    if (f->is_epoch)
        return ms;
    switch (f->finest) {
    case 0:
        return ms + (is_leap(f->y) ? 366 : 365) * MS_PER_DAY - 1;
    case 1:
        return ms + days_in_month(f->y, f->mo) * MS_PER_DAY - 1;
    case 2:
        return ms + MS_PER_DAY - 1;
    case 3:
        return ms + MS_PER_H - 1;
    case 4:
        return ms + MS_PER_MIN - 1;
    case 5:
        return ms + MS_PER_S - 1;
    default:
        return ms;
    }
}

static sc_status parse_tz(const sc_date_format *f, sc_slice text, int64_t tz_ms, int round_up,
                          int64_t *out_ms)
{
    for (size_t i = 0; i < f->n_alts; i++) {
        dfields fl;
        int64_t ms;
        if (parse_alt(&f->alts[i], text, &fl) && fields_to_ms(&fl, tz_ms, &ms)) {
            *out_ms = round_up ? round_up_fields(&fl, ms) : ms;
            return SC_OK;
        }
    }
    return SC_EPARSE;
}

sc_status sc_date_parse(const sc_date_format *f, sc_slice text, int64_t *out_ms)
{
    return parse_tz(f, text, 0, 0, out_ms);
}

sc_status sc_date_parse_nanos(const sc_date_format *f, sc_slice text, int64_t *out_ns)
{
    for (size_t i = 0; i < f->n_alts; i++) {
        dfields fl;
        int64_t ms;
        if (parse_alt(&f->alts[i], text, &fl) && fields_to_ms(&fl, 0, &ms)) {
            /* int64 nanoseconds span +-9.2e18 ns = +-9.2e12 ms */
            if (ms > 9223372036853LL || ms < -9223372036853LL)
                return SC_EPARSE;
            *out_ns = ms * 1000000 + (fl.is_epoch ? 0 : fl.frac_ns % 1000000);
            return SC_OK;
        }
    }
    return SC_EPARSE;
}

/* ---- date math ---- */

static int64_t add_months(int64_t ms, int64_t months, int64_t tz)
{
    int64_t local = ms + tz;
    int64_t days = floor_div(local, MS_PER_DAY);
    int64_t rem = local - days * MS_PER_DAY;
    int64_t y;
    unsigned m, d;
    sc_date_civil_from_days(days, &y, &m, &d);
    int64_t total = y * 12 + (m - 1) + months;
    /* Far outside any representable date: saturate so the caller's range check refuses it. */
    if (total > 12LL * 100000000 || total < -12LL * 100000000)
        return months > 0 ? INT64_MAX : INT64_MIN;
    y = floor_div(total, 12);
    m = (unsigned)(total - y * 12) + 1;
    if ((int)d > days_in_month(y, (int)m))
        d = (unsigned)days_in_month(y, (int)m);
    return sc_date_days_from_civil(y, m, d) * MS_PER_DAY + rem - tz;
}

static int64_t round_down(int64_t ms, char unit, int64_t tz)
{
    int64_t local = ms + tz;
    int64_t days = floor_div(local, MS_PER_DAY);
    int64_t y;
    unsigned m, d;
    switch (unit) {
    case 'y':
        sc_date_civil_from_days(days, &y, &m, &d);
        return sc_date_days_from_civil(y, 1, 1) * MS_PER_DAY - tz;
    case 'M':
        sc_date_civil_from_days(days, &y, &m, &d);
        return sc_date_days_from_civil(y, m, 1) * MS_PER_DAY - tz;
    case 'w': {
        int64_t dow = floor_div(days + 3, 7) * 7 - 3; /* Monday on or before */
        return dow * MS_PER_DAY - tz;
    }
    case 'd':
        return days * MS_PER_DAY - tz;
    case 'h':
    case 'H':
        return floor_div(local, MS_PER_H) * MS_PER_H - tz;
    case 'm':
        return floor_div(local, MS_PER_MIN) * MS_PER_MIN - tz;
    case 's':
        return floor_div(local, MS_PER_S) * MS_PER_S - tz;
    default:
        return ms;
    }
}

static int64_t add_unit(int64_t ms, int64_t n, char unit, int64_t tz)
{
    if (ms == INT64_MAX || ms == INT64_MIN)
        return ms;
    switch (unit) {
    case 'y':
        return add_months(ms, n * 12, tz);
    case 'M':
        return add_months(ms, n, tz);
    case 'w':
        return ms + n * 7 * MS_PER_DAY;
    case 'd':
        return ms + n * MS_PER_DAY;
    case 'h':
    case 'H':
        return ms + n * MS_PER_H;
    case 'm':
        return ms + n * MS_PER_MIN;
    default:
        return ms + n * MS_PER_S;
    }
}

static int is_unit(uint8_t c)
{
    return c == 'y' || c == 'M' || c == 'w' || c == 'd' || c == 'h' || c == 'H' || c == 'm' ||
           c == 's';
}

sc_status sc_date_math_parse(const sc_date_format *f, sc_slice expr, int64_t now_ms, bool round_up,
                             int64_t tz_offset_ms, int64_t *out_ms)
{
    int64_t ms;
    sc_slice ops;
    if (expr.len >= 3 && memcmp(expr.ptr, "now", 3) == 0) {
        ms = now_ms;
        ops = sc_slice_sub(expr, 3, expr.len);
    } else {
        size_t k = 0;
        while (k + 1 < expr.len && !(expr.ptr[k] == '|' && expr.ptr[k + 1] == '|'))
            k++;
        if (k + 1 >= expr.len) /* plain date: round-up parsing fills missing fields */
            return parse_tz(f, expr, tz_offset_ms, round_up, out_ms);
        SC_TRY(parse_tz(f, sc_slice_sub(expr, 0, k), tz_offset_ms, 0, &ms));
        ops = sc_slice_sub(expr, k + 2, expr.len);
    }
    const uint8_t *p = ops.ptr, *end = ops.ptr + ops.len;
    const int64_t limit = 1000000000LL; /* keeps every step far from overflow */
    while (p < end) {
        uint8_t op = *p++;
        if (op == '/') {
            if (p >= end || !is_unit(*p))
                return SC_EPARSE;
            char u = (char)*p++;
            int64_t down = round_down(ms, u, tz_offset_ms);
            ms = round_up ? add_unit(down, 1, u, tz_offset_ms) - 1 : down;
        } else if (op == '+' || op == '-') {
            int64_t n = 1;
            if (p < end && *p >= '0' && *p <= '9') {
                n = 0;
                while (p < end && *p >= '0' && *p <= '9') {
                    n = n * 10 + (*p++ - '0');
                    if (n > limit)
                        return SC_EPARSE;
                }
            }
            if (p >= end || !is_unit(*p))
                return SC_EPARSE;
            ms = add_unit(ms, op == '-' ? -n : n, (char)*p++, tz_offset_ms);
        } else {
            return SC_EPARSE;
        }
        if (ms > limit * 1000000LL || ms < -limit * 1000000LL)
            return SC_EPARSE;
    }
    *out_ms = ms;
    return SC_OK;
}

sc_status sc_date_parse_tz(sc_slice tz, int64_t *out_offset_ms)
{
    if (sc_slice_eq_cstr(tz, "Z") || sc_slice_eq_cstr(tz, "UTC") || sc_slice_eq_cstr(tz, "GMT") ||
        sc_slice_eq_cstr(tz, "Etc/UTC")) {
        *out_offset_ms = 0;
        return SC_OK;
    }
    if (tz.len && (tz.ptr[0] == '+' || tz.ptr[0] == '-')) {
        cur c = {tz.ptr, tz.ptr + tz.len};
        dfields f;
        memset(&f, 0, sizeof(f));
        if (read_zone(&c, &f) && c.p == c.end) {
            *out_offset_ms = f.tz_ms;
            return SC_OK;
        }
        return SC_EPARSE;
    }
    return tz.len && memchr(tz.ptr, '/', tz.len) ? SC_EUNSUPPORTED : SC_EPARSE;
}

/* ---- formatting ---- */

typedef struct civil {
    int64_t y;
    unsigned mo, d, h, mi, s, ms;
} civil;

static civil to_civil(int64_t ms)
{
    civil c;
    int64_t days = floor_div(ms, MS_PER_DAY);
    int64_t rem = ms - days * MS_PER_DAY;
    sc_date_civil_from_days(days, &c.y, &c.mo, &c.d);
    c.h = (unsigned)(rem / MS_PER_H);
    c.mi = (unsigned)(rem / MS_PER_MIN % 60);
    c.s = (unsigned)(rem / MS_PER_S % 60);
    c.ms = (unsigned)(rem % 1000);
    return c;
}

size_t sc_date_format_iso(int64_t ms, char *buf)
{
    civil c = to_civil(ms);
    int n = snprintf(buf, 40, "%04" PRId64 "-%02u-%02uT%02u:%02u:%02u.%03uZ", c.y, c.mo, c.d, c.h,
                     c.mi, c.s, c.ms);
    return n < 0 ? 0 : (size_t)n;
}

static void put(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
    for (size_t i = 0; i < n && *len + 1 < cap; i++)
        buf[(*len)++] = s[i];
}

size_t sc_date_format_print(const sc_date_format *f, int64_t ms, char *buf, size_t cap)
{
    if (cap == 0)
        return 0;
    const dalt *a = &f->alts[0];
    char tmp[64];
    size_t len = 0;
    if (a->kind == ALT_EPOCH_MS || a->kind == ALT_EPOCH_S) {
        int n = a->kind == ALT_EPOCH_MS ? snprintf(tmp, sizeof(tmp), "%" PRId64, ms)
                                        : snprintf(tmp, sizeof(tmp), "%" PRId64,
                                                   floor_div(ms, MS_PER_S));
        put(buf, cap, &len, tmp, (size_t)n);
    } else if (a->kind != ALT_PATTERN) {
        size_t n = sc_date_format_iso(ms, tmp);
        put(buf, cap, &len, tmp, n);
    } else {
        civil c = to_civil(ms);
        for (size_t i = 0; i < a->n_toks; i++) {
            const ptok *t = &a->toks[i];
            int n = 0;
            switch (t->letter) {
            case 0:
                put(buf, cap, &len, t->lit, t->lit_len);
                continue;
            case 'y':
            case 'u':
                n = t->count == 2 ? snprintf(tmp, sizeof(tmp), "%02d", (int)(c.y % 100))
                                  : snprintf(tmp, sizeof(tmp), "%0*" PRId64, t->count, c.y);
                break;
            case 'M':
                if (t->count >= 3) {
                    n = snprintf(tmp, sizeof(tmp), "%.*s", t->count >= 4 ? 9 : 3,
                                 month_names[c.mo - 1]);
                    tmp[0] = (char)toupper((unsigned char)tmp[0]);
                } else {
                    n = snprintf(tmp, sizeof(tmp), "%0*u", t->count, c.mo);
                }
                break;
            case 'd':
                n = snprintf(tmp, sizeof(tmp), "%0*u", t->count, c.d);
                break;
            case 'H':
                n = snprintf(tmp, sizeof(tmp), "%0*u", t->count, c.h);
                break;
            case 'h':
                n = snprintf(tmp, sizeof(tmp), "%0*u", t->count, c.h % 12 == 0 ? 12 : c.h % 12);
                break;
            case 'a':
                n = snprintf(tmp, sizeof(tmp), "%s", c.h < 12 ? "AM" : "PM");
                break;
            case 'm':
                n = snprintf(tmp, sizeof(tmp), "%0*u", t->count, c.mi);
                break;
            case 's':
                n = snprintf(tmp, sizeof(tmp), "%0*u", t->count, c.s);
                break;
            case 'S': {
                char fr[16];
                snprintf(fr, sizeof(fr), "%03u000000", c.ms);
                n = snprintf(tmp, sizeof(tmp), "%.*s", t->count, fr);
                break;
            }
            case 'Z':
            case 'X':
            case 'x':
                n = snprintf(tmp, sizeof(tmp), "Z");
                break;
            default:
                n = 0;
                break;
            }
            if (n > 0)
                put(buf, cap, &len, tmp, (size_t)n);
        }
    }
    buf[len] = 0;
    return len;
}
