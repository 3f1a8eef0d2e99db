/* Each aggregation kind's parameters (agg_internal.h): the field and its value type, sizes,
 * orders, intervals (calendar / fixed, offsets, time zones with daylight saving), bounds,
 * ranges, filters, `missing`. Unknown parameters are 400 parsing_exception, as in
 * Elasticsearch's object parsers. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/agg_internal.h"
#include "api/search_internal.h"
#include "base/clock.h"
#include "mapping/tz.h"

bool sc__agg_fail(sc__agg_pctx *c, int status, const char *type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    c->err->status = status;
    c->err->type = type;
    vsnprintf(c->err->reason, sizeof c->err->reason, fmt, ap);
    va_end(ap);
    return false;
}

bool sc__agg_oom_err(sc__agg_pctx *c)
{
    return sc__agg_fail(c, 429, "circuit_breaking_exception",
                        "[request] Data too large for the request budget");
}

static const char *dup(sc__agg_pctx *c, const char *s)
{
    return sc_arena_strndup(c->req->arena, s, strlen(s));
}

/* ---- fields ---- */

/* Resolves spec->field's value type; the text / unsupported-type errors. */
static bool resolve_field(sc__agg_pctx *c, sc_agg_spec *s, const char *type,
                          const sc_mapping_field **mf)
{
    *mf = c->m ? sc_mapping_find(c->m, sc_slice_cstr(s->field)) : NULL;
    const sc_mapping_field *f = *mf;
    const char *dot = f ? NULL : strrchr(s->field, '.');
    if (dot && c->m) { /* a feature of a rank_features field is a hidden column (mapping.h) */
        const sc_mapping_field *pf =
            sc_mapping_find(c->m, sc_slice_make(s->field, (size_t)(dot - s->field)));
        if (pf && pf->type == SC_MAPPING_RANK_FEATURES)
            *mf = f = pf;
    }
    if (!f) {
        s->vtype = SC_AGG_V_UNMAPPED;
        return true;
    }
    switch (f->type) {
    case SC_MAPPING_TEXT:
        c->err->shard_level = true;
        return sc__agg_fail(
            c, 400, "illegal_argument_exception",
            "Text fields are not optimised for operations that require per-document "
            "field data like aggregations and sorting, so these operations are disabled "
            "by default. Please use a keyword field instead. Alternatively, set "
            "fielddata=true on [%s] in order to load field data by uninverting the "
            "inverted index. Note that this can use significant memory.",
            s->field);
    case SC_MAPPING_KEYWORD: s->vtype = SC_AGG_V_KEYWORD; break;
    case SC_MAPPING_IP: s->vtype = SC_AGG_V_IP; break;
    case SC_MAPPING_BOOLEAN: s->vtype = SC_AGG_V_BOOLEAN; break;
    case SC_MAPPING_DATE: s->vtype = SC_AGG_V_DATE; break;
    case SC_MAPPING_DATE_NANOS:
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "aggregations on date_nanos field [%s] are not supported yet",
                            s->field);
    case SC_MAPPING_DOUBLE:
    case SC_MAPPING_FLOAT:
    case SC_MAPPING_HALF_FLOAT: s->vtype = SC_AGG_V_DOUBLE; break;
    case SC_MAPPING_SCALED_FLOAT:
        s->vtype = SC_AGG_V_LONG;
        s->scaling_factor = f->scaling_factor;
        break;
    case SC_MAPPING_LONG:
    case SC_MAPPING_INTEGER:
    case SC_MAPPING_SHORT:
    case SC_MAPPING_BYTE:
    case SC_MAPPING_UNSIGNED_LONG: s->vtype = SC_AGG_V_LONG; break;
    default:
        c->err->shard_level = true;
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Field [%s] of type [%s] is not supported for aggregation [%s]",
                            s->field, sc_mapping_type_name(f->type), type);
    }
    bool numeric_only = s->kind >= SC_AGG_MIN && s->kind < SC_AGG_VALUE_COUNT;
    numeric_only |= s->kind == SC_AGG_STATS || s->kind == SC_AGG_EXTENDED_STATS;
    numeric_only |= s->kind == SC_AGG_PERCENTILES || s->kind == SC_AGG_PERCENTILE_RANKS ||
                    s->kind == SC_AGG_MEDIAN_ABSOLUTE_DEVIATION;
    numeric_only |= s->kind == SC_AGG_HISTOGRAM || s->kind == SC_AGG_DATE_HISTOGRAM ||
                    s->kind == SC_AGG_AUTO_DATE_HISTOGRAM ||
                    (s->kind == SC_AGG_RANGE && strcmp(type, "ip_range") != 0);
    if (numeric_only && !sc_agg_vtype_numeric(s->vtype)) {
        c->err->shard_level = true;
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Field [%s] of type [%s] is not supported for aggregation [%s]",
                            s->field, sc_mapping_type_name(f->type), type);
    }
    return true;
}

/* A JSON value as the field's doc value (numbers, dates with date math, booleans, ips). */
bool sc__agg_encode_value(sc__agg_pctx *c, const sc_mapping_field *f, const json_t *v,
                          const char *what, sc_mapping_value *out)
{
    sc_mapping_error merr;
    memset(&merr, 0, sizeof merr);
    sc_status st = sc_mapping_encode_value(f, v, sc_index_analysis(c->ix), sc_clock_wall_ms(),
                                           c->req->arena, out, &merr);
    if (st == SC_ENOMEM || st == SC_ELIMIT)
        return sc__agg_oom_err(c);
    if (st != SC_OK)
        return sc__agg_fail(c, 400, "illegal_argument_exception", "failed to parse [%s]: %s", what,
                            merr.reason);
    return true;
}

/* `missing`: the substitute value, encoded for the field. */
static bool parse_missing(sc__agg_pctx *c, sc_agg_spec *s, const sc_mapping_field *f,
                          const json_t *v)
{
    s->has_missing = true;
    if (!f) {
        /* unmapped: Elasticsearch treats the value by its JSON type */
        if (json_is_number(v)) {
            s->missing_double = json_number_value(v);
            s->missing_num = (int64_t)s->missing_double;
            s->vtype = SC_AGG_V_DOUBLE;
            s->missing_num = sc_agg_double_to_sortable(s->missing_double);
        } else if (json_is_string(v)) {
            s->missing_bytes = sc_slice_make(json_string_value(v), json_string_length(v));
            s->vtype = SC_AGG_V_KEYWORD;
        } else {
            return sc__agg_fail(c, 400, "illegal_argument_exception", "[missing] must be a value");
        }
        return true;
    }
    sc_mapping_value mv;
    if (!sc__agg_encode_value(c, f, v, "missing", &mv))
        return false;
    if (mv.kind == SC_FIELD_KEYWORD) {
        s->missing_bytes = mv.term;
    } else {
        s->missing_num = mv.num;
        double d = sc_agg_value_to_double(s->vtype, mv.num);
        s->missing_double = s->scaling_factor > 0 ? d / s->scaling_factor : d;
    }
    return true;
}

/* ---- generic parameter readers ---- */

/* Whether params has only keys from `allowed` (NULL-terminated); else the parse error. */
bool sc__agg_known_keys(sc__agg_pctx *c, const char *type, const json_t *params,
                        const char *const *allowed)
{
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)params, k, v) {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = !strcmp(*a, k);
        if (!ok)
            return sc__agg_fail(c, 400, "x_content_parse_exception", "[%s] unknown field [%s]",
                                type, k);
    }
    return true;
}

bool sc__agg_get_uint(sc__agg_pctx *c, const json_t *params, const char *key, uint64_t *out,
                      const char *type)
{
    const json_t *v = json_object_get(params, key);
    if (!v)
        return true;
    if (json_is_string(v)) {
        char *end;
        long long x = strtoll(json_string_value(v), &end, 10);
        if (*end || x < 0)
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[%s] failed to parse field [%s]", type, key);
        *out = (uint64_t)x;
        return true;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return sc__agg_fail(c, 400, "x_content_parse_exception", "[%s] failed to parse field [%s]",
                            type, key);
    *out = (uint64_t)json_integer_value(v);
    return true;
}

bool sc__agg_get_double(sc__agg_pctx *c, const json_t *params, const char *key, double *out,
                        const char *type)
{
    const json_t *v = json_object_get(params, key);
    if (!v)
        return true;
    if (json_is_string(v)) {
        char *end;
        double x = strtod(json_string_value(v), &end);
        if (*end || end == json_string_value(v))
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[%s] failed to parse field [%s]", type, key);
        *out = x;
        return true;
    }
    if (!json_is_number(v))
        return sc__agg_fail(c, 400, "x_content_parse_exception", "[%s] failed to parse field [%s]",
                            type, key);
    *out = json_number_value(v);
    return true;
}

bool sc__agg_get_bool(sc__agg_pctx *c, const json_t *params, const char *key, bool *out,
                      const char *type)
{
    const json_t *v = json_object_get(params, key);
    if (!v)
        return true;
    if (!json_is_boolean(v))
        return sc__agg_fail(c, 400, "x_content_parse_exception", "[%s] failed to parse field [%s]",
                            type, key);
    *out = json_is_true(v);
    return true;
}

sc__agg_render *sc__agg_render_of(sc_rest_req *req, sc_agg_spec *s)
{
    if (!s->user)
        s->user = sc_arena_calloc(req->arena, 1, sizeof(sc__agg_render));
    return s->user;
}

/* key_as_string's format: the request's `format`, else the field's (NULL = ISO). */
static bool attach_date_format(sc__agg_pctx *c, sc_agg_spec *s, const sc_mapping_field *f)
{
    const char *spec = s->format ? s->format : f && f->format ? f->format : NULL;
    if (!spec)
        return true;
    sc__agg_render *r = sc__agg_render_of(c->req, s);
    if (!r)
        return sc__agg_oom_err(c);
    if (r->date_format)
        return true;
    if (sc_date_format_new(sc_slice_cstr(spec), &r->date_format) != SC_OK)
        return sc__agg_fail(c, 400, "illegal_argument_exception", "Invalid format: [%s]", spec);
    return true;
}

/* `field` (required for field kinds) and its type; `missing`; `format`. */
bool sc__agg_field_common(sc__agg_pctx *c, const char *type, const json_t *params, sc_agg_spec *s,
                          const sc_mapping_field **mf)
{
    const json_t *f = json_object_get(params, "field");
    if (json_object_get(params, "script"))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "scripts in aggregations are not supported yet [%s]", s->name);
    if (!json_is_string(f))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Required one of fields [field, script], but none were specified.");
    s->field = dup(c, json_string_value(f));
    if (!s->field)
        return sc__agg_oom_err(c);
    if (!resolve_field(c, s, type, mf))
        return false;
    const json_t *fmt = json_object_get(params, "format");
    if (fmt && !json_is_string(fmt))
        return sc__agg_fail(c, 400, "x_content_parse_exception", "[%s] [format] must be a string",
                            type);
    if (fmt)
        s->format = dup(c, json_string_value(fmt));
    if (s->vtype == SC_AGG_V_DATE && !attach_date_format(c, s, *mf))
        return false;
    const json_t *miss = json_object_get(params, "missing");
    if (miss && !json_is_null(miss) && !parse_missing(c, s, *mf, miss))
        return false;
    return true;
}

/* A value for date bounds / ranges: a number (ms) or a date string (the format, else the
 * field's; date math allowed). */
bool sc__agg_date_value(sc__agg_pctx *c, const sc_mapping_field *f, const sc_agg_spec *s,
                        const json_t *v, const char *what, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    if (!json_is_string(v))
        return sc__agg_fail(c, 400, "x_content_parse_exception", "[%s] must be a date", what);
    sc_date_format *fmt = NULL;
    if (s->format && sc_date_format_new(sc_slice_cstr(s->format), &fmt) != SC_OK)
        return sc__agg_fail(c, 400, "illegal_argument_exception", "Invalid format: [%s]",
                            s->format);
    const sc_date_format *use = fmt ? fmt : f && f->date_format ? f->date_format : NULL;
    sc_date_format *dflt = NULL;
    if (!use) {
        if (sc_date_format_new(sc_slice_cstr(SC_DATE_DEFAULT_FORMAT), &dflt) != SC_OK)
            return sc__agg_oom_err(c);
        use = dflt;
    }
    int64_t ms;
    sc_status st =
        sc_date_math_parse(use, sc_slice_make(json_string_value(v), json_string_length(v)),
                           sc_clock_wall_ms(), false, 0, &ms);
    sc_date_format_free(fmt);
    sc_date_format_free(dflt);
    if (st != SC_OK)
        return sc__agg_fail(c, 400, "parse_exception", "failed to parse date field [%s]",
                            json_string_value(v));
    *out = (double)ms;
    return true;
}

/* ---- histograms ---- */

static bool bounds(sc__agg_pctx *c, const sc_mapping_field *mf, sc_agg_spec *s, const json_t *p,
                   const char *key, bool *has, double *lo, double *hi)
{
    const json_t *b = json_object_get(p, key);
    if (!b)
        return true;
    const json_t *mn = json_object_get(b, "min"), *mx = json_object_get(b, "max");
    if (!json_is_object(b))
        return sc__agg_fail(c, 400, "x_content_parse_exception", "[%s] must be an object", key);
    *lo = -INFINITY;
    *hi = INFINITY;
    bool date = s->kind == SC_AGG_DATE_HISTOGRAM;
    if (mn && !(date ? sc__agg_date_value(c, mf, s, mn, key, lo)
                     : sc__agg_get_double(c, b, "min", lo, key)))
        return false;
    if (mx && !(date ? sc__agg_date_value(c, mf, s, mx, key, hi)
                     : sc__agg_get_double(c, b, "max", hi, key)))
        return false;
    *has = true;
    return true;
}

/* "1d", "90m", "10s", "500ms": a fixed interval in ms; false when not one. */
static bool fixed_ms(const char *t, int64_t *out)
{
    char *end;
    long long n = strtoll(t, &end, 10);
    if (end == t || n <= 0)
        return false;
    static const struct {
        const char *u;
        int64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    for (size_t i = 0; i < 5; i++)
        if (!strcmp(end, units[i].u)) {
            if (n > (INT64_C(1) << 50) / units[i].ms)
                return false; /* beyond any date */
            *out = (int64_t)n * units[i].ms;
            return true;
        }
    return false;
}

static sc_agg_cal_unit calendar_unit(const char *t)
{
    static const struct {
        const char *n;
        sc_agg_cal_unit u;
    } cal[] = {
        {"minute", SC_AGG_CAL_MINUTE}, {"1m", SC_AGG_CAL_MINUTE},       {"hour", SC_AGG_CAL_HOUR},
        {"1h", SC_AGG_CAL_HOUR},       {"day", SC_AGG_CAL_DAY},         {"1d", SC_AGG_CAL_DAY},
        {"week", SC_AGG_CAL_WEEK},     {"1w", SC_AGG_CAL_WEEK},         {"month", SC_AGG_CAL_MONTH},
        {"1M", SC_AGG_CAL_MONTH},      {"quarter", SC_AGG_CAL_QUARTER}, {"1q", SC_AGG_CAL_QUARTER},
        {"year", SC_AGG_CAL_YEAR},     {"1y", SC_AGG_CAL_YEAR}};
    for (size_t i = 0; i < sizeof cal / sizeof cal[0]; i++)
        if (!strcmp(cal[i].n, t))
            return cal[i].u;
    return SC_AGG_CAL_NONE;
}

/* date_histogram: calendar_interval / fixed_interval / (deprecated) interval, time_zone,
 * offset. */
bool sc__agg_date_rounding(sc__agg_pctx *c, const json_t *p, sc_agg_spec *s)
{
    const json_t *ci = json_object_get(p, "calendar_interval");
    const json_t *fi = json_object_get(p, "fixed_interval");
    const json_t *iv = json_object_get(p, "interval");
    sc_agg_rounding *r = &s->rounding;
    if ((ci && fi) || (iv && (ci || fi)))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Cannot use [fixed_interval] with [calendar_interval] configuration "
                            "option.");
    if (ci) {
        const char *t = json_string_value(ci);
        r->unit = t ? calendar_unit(t) : SC_AGG_CAL_NONE;
        if (r->unit == SC_AGG_CAL_NONE)
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "The supplied interval [%s] could not be parsed as a calendar "
                                "interval.",
                                t ? t : "?");
    } else if (fi) {
        const char *t = json_string_value(fi);
        if (!t || !fixed_ms(t, &r->fixed_ms))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "failed to parse setting [date_histogram.fixedInterval] with "
                                "value [%s] as a time value: unit is missing or unrecognized",
                                t ? t : "?");
    } else if (iv) {
        const char *t = json_string_value(iv);
        if (t && calendar_unit(t) != SC_AGG_CAL_NONE)
            r->unit = calendar_unit(t);
        else if (!t || !fixed_ms(t, &r->fixed_ms))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "Unable to parse interval [%s]", t ? t : "?");
    } else {
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Invalid interval specified, must be non-null and non-empty");
    }
    const json_t *tz = json_object_get(p, "time_zone");
    if (tz) {
        sc_tz_rules rules;
        const char *t = json_string_value(tz);
        sc_status st = t ? sc_tz_load(t, c->req->arena, &rules) : SC_ENOTFOUND;
        if (st == SC_ENOMEM || st == SC_ELIMIT)
            return sc__agg_oom_err(c);
        if (st != SC_OK)
            return sc__agg_fail(c, 400, "illegal_argument_exception", "Unknown time-zone ID: %s",
                                t ? t : "?");
        r->tz = (sc_agg_tz){.base_offset_ms = rules.base_offset_ms,
                            .at_ms = rules.at_ms,
                            .offset_s = rules.offset_s,
                            .n_trans = rules.n_trans};
    }
    const json_t *off = json_object_get(p, "offset");
    if (off) {
        const char *t = json_string_value(off);
        int64_t ms = 0;
        bool neg = t && *t == '-';
        const char *body = t && (*t == '-' || *t == '+') ? t + 1 : t;
        if (json_is_integer(off))
            ms = json_integer_value(off);
        else if (!body || !fixed_ms(body, &ms))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "failed to parse setting [date_histogram.offset] with value [%s]",
                                t ? t : "?");
        r->offset_ms = neg ? -ms : ms;
    }
    return true;
}

static bool histo_order(sc__agg_pctx *c, const json_t *o, sc_agg_spec *s)
{
    s->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
    return !o || sc__agg_terms_order(c, o, s);
}

static bool parse_histogram(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {
        "field",     "interval", "offset",  "min_doc_count", "extended_bounds",   "hard_bounds",
        "keyed",     "order",    "missing", "format",        "calendar_interval", "fixed_interval",
        "time_zone", "script",   NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    const sc_mapping_field *mf;
    if (!sc__agg_field_common(c, type, p, s, &mf))
        return false;
    uint64_t mdc = 0;
    if (!sc__agg_get_uint(c, p, "min_doc_count", &mdc, type) ||
        !sc__agg_get_bool(c, p, "keyed", &s->keyed, type))
        return false;
    s->min_doc_count = mdc;
    if (s->kind == SC_AGG_DATE_HISTOGRAM) {
        if (!sc__agg_date_rounding(c, p, s))
            return false;
        if (s->vtype != SC_AGG_V_DATE && s->vtype != SC_AGG_V_UNMAPPED)
            s->vtype = SC_AGG_V_DATE; /* numbers taken as epoch millis */
    } else {
        if (!json_object_get(p, "interval"))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "Missing required field [interval] for histogram aggregation "
                                "[%s]",
                                s->name);
        if (!sc__agg_get_double(c, p, "interval", &s->interval, type) ||
            !sc__agg_get_double(c, p, "offset", &s->offset, type))
            return false;
        if (!(s->interval > 0) || !isfinite(s->interval))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[interval] must be >0 for histogram aggregation [%s]", s->name);
        if (json_object_get(p, "calendar_interval") || json_object_get(p, "fixed_interval") ||
            json_object_get(p, "time_zone"))
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[histogram] unknown field [calendar_interval]");
    }
    if (!bounds(c, mf, s, p, "extended_bounds", &s->has_ext_bounds, &s->ext_min, &s->ext_max) ||
        !bounds(c, mf, s, p, "hard_bounds", &s->has_hard_bounds, &s->hard_min, &s->hard_max))
        return false;
    return histo_order(c, json_object_get(p, "order"), s);
}

/* ---- ranges ---- */

static bool parse_range(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"field",  "ranges",    "keyed",  "missing",
                                       "format", "time_zone", "script", NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    const sc_mapping_field *mf;
    if (!sc__agg_field_common(c, type, p, s, &mf) ||
        !sc__agg_get_bool(c, p, "keyed", &s->keyed, type))
        return false;
    bool date = !strcmp(type, "date_range");
    if (date && s->vtype != SC_AGG_V_UNMAPPED)
        s->vtype = SC_AGG_V_DATE;
    if (date && s->vtype == SC_AGG_V_UNMAPPED)
        s->vtype = SC_AGG_V_DATE;
    const json_t *rs = json_object_get(p, "ranges");
    if (!json_is_array(rs) || json_array_size(rs) == 0)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "No [ranges] specified for the [%s] aggregation", s->name);
    size_t n = json_array_size(rs);
    s->ranges = sc_arena_calloc(c->req->arena, n, sizeof *s->ranges);
    if (!s->ranges)
        return sc__agg_oom_err(c);
    for (size_t i = 0; i < n; i++) {
        const json_t *r = json_array_get(rs, i);
        sc_agg_range_spec *g = &s->ranges[i];
        g->from = -INFINITY;
        g->to = INFINITY;
        if (!json_is_object(r))
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[ranges] entries must be objects");
        const json_t *from = json_object_get(r, "from"), *to = json_object_get(r, "to");
        const json_t *key = json_object_get(r, "key");
        if (from && !json_is_null(from)) {
            if (date ? !sc__agg_date_value(c, mf, s, from, "from", &g->from)
                     : !sc__agg_get_double(c, r, "from", &g->from, type))
                return false;
            if (date && json_is_string(from))
                g->from_str = dup(c, json_string_value(from));
        }
        if (to && !json_is_null(to)) {
            if (date ? !sc__agg_date_value(c, mf, s, to, "to", &g->to)
                     : !sc__agg_get_double(c, r, "to", &g->to, type))
                return false;
            if (date && json_is_string(to))
                g->to_str = dup(c, json_string_value(to));
        }
        if (key && json_is_string(key))
            g->key = dup(c, json_string_value(key));
    }
    s->n_ranges = n;
    return true;
}

/* ---- filter / filters / missing / global ---- */

static bool parse_query(sc__agg_pctx *c, const json_t *q, const sc_query **out)
{
    sc_dsl_error derr;
    sc_query *x = NULL;
    sc_status st;
    if (c->ix) {
        st = sc__search_parse_query(c->req->arena, c->ix, q, &x, &derr);
    } else {
        st = sc_dsl_parse(NULL, c->req->arena, q, &x, &derr);
    }
    if (st == SC_ENOMEM || st == SC_ELIMIT)
        return sc__agg_oom_err(c);
    if (st != SC_OK)
        return sc__agg_fail(c, derr.status ? derr.status : 400,
                            derr.type ? derr.type : "parsing_exception", "%s", derr.reason);
    *out = x;
    return true;
}

static bool parse_filters(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"filters", "other_bucket", "other_bucket_key", "keyed",
                                       NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    const json_t *fs = json_object_get(p, "filters");
    bool named = json_is_object(fs);
    if (!named && !json_is_array(fs))
        return sc__agg_fail(c, 400, "illegal_argument_exception", "[filters] cannot be empty.");
    size_t n = named ? json_object_size(fs) : json_array_size(fs);
    s->filters = sc_arena_calloc(c->req->arena, n + 1, sizeof *s->filters);
    s->filter_names = sc_arena_calloc(c->req->arena, n + 1, sizeof *s->filter_names);
    if (!s->filters || !s->filter_names)
        return sc__agg_oom_err(c);
    s->keyed = named;
    if (!sc__agg_get_bool(c, p, "keyed", &s->keyed, type) ||
        !sc__agg_get_bool(c, p, "other_bucket", &s->other_bucket, type))
        return false;
    const json_t *obk = json_object_get(p, "other_bucket_key");
    s->other_bucket_key = "_other_";
    if (obk) {
        if (!json_is_string(obk))
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[other_bucket_key] must be a string");
        s->other_bucket_key = dup(c, json_string_value(obk));
        s->other_bucket = true;
    }
    if (named) {
        /* Elasticsearch sorts named filters by name */
        const char **names = s->filter_names;
        size_t k = 0;
        const char *key;
        json_t *v;
        json_object_foreach ((json_t *)fs, key, v)
            names[k++] = key;
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
                const char *t = names[j];
                names[j] = names[j - 1];
                names[j - 1] = t;
            }
        for (size_t i = 0; i < n; i++) {
            if (!parse_query(c, json_object_get(fs, names[i]), &s->filters[i]))
                return false;
            names[i] = dup(c, names[i]);
        }
    } else {
        for (size_t i = 0; i < n; i++)
            if (!parse_query(c, json_array_get(fs, i), &s->filters[i]))
                return false;
    }
    s->n_filters = n;
    return true;
}

static bool parse_metric(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"field",  "missing",    "format", "sigma",
                                       "script", "value_type", NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    const sc_mapping_field *mf;
    s->sigma = 2;
    if (!sc__agg_field_common(c, type, p, s, &mf) ||
        !sc__agg_get_double(c, p, "sigma", &s->sigma, type))
        return false;
    if (s->sigma < 0)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[sigma] must be greater than or equal to 0. Found [%g] in [%s]",
                            s->sigma, s->name);
    return true;
}

bool sc__agg_parse_params(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    switch (s->kind) {
    case SC_AGG_CARDINALITY:
    case SC_AGG_PERCENTILES:
    case SC_AGG_PERCENTILE_RANKS:
    case SC_AGG_MEDIAN_ABSOLUTE_DEVIATION: return sc__agg_parse_sketch(c, type, p, s);
    case SC_AGG_TERMS:
        return strcmp(type, "geotile_grid") && strcmp(type, "geohash_grid")
                   ? sc__agg_parse_terms(c, type, p, s)
                   : sc__agg_parse_geotile(c, type, p, s);
    case SC_AGG_RARE_TERMS: return sc__agg_parse_rare(c, type, p, s);
    case SC_AGG_HISTOGRAM:
    case SC_AGG_DATE_HISTOGRAM: return parse_histogram(c, type, p, s);
    case SC_AGG_RANGE:
        return strcmp(type, "ip_range") ? parse_range(c, type, p, s)
                                        : sc__agg_parse_ip_range(c, type, p, s);
    case SC_AGG_FILTER: {
        s->filters = sc_arena_calloc(c->req->arena, 1, sizeof *s->filters);
        if (!s->filters)
            return sc__agg_oom_err(c);
        s->n_filters = 1;
        return parse_query(c, p, &s->filters[0]);
    }
    case SC_AGG_FILTERS: return parse_filters(c, type, p, s);
    case SC_AGG_COMPOSITE: return sc__agg_parse_composite(c, type, p, s);
    case SC_AGG_MULTI_TERMS: return sc__agg_parse_multi_terms(c, type, p, s);
    case SC_AGG_AUTO_DATE_HISTOGRAM: return sc__agg_parse_auto(c, type, p, s);
    case SC_AGG_WEIGHTED_AVG: return sc__agg_parse_weighted_avg(c, type, p, s);
    case SC_AGG_GEO_BOUNDS:
    case SC_AGG_GEO_CENTROID: return sc__agg_parse_geo(c, type, p, s);
    case SC_AGG_SIGNIFICANT_TERMS: return sc__agg_parse_significant(c, type, p, s);
    case SC_AGG_TOP_HITS:
    case SC_AGG_TOP_METRICS: return sc__agg_parse_hits(c, type, p, s);
    case SC_AGG_AVG_BUCKET:
    case SC_AGG_MAX_BUCKET:
    case SC_AGG_MIN_BUCKET:
    case SC_AGG_SUM_BUCKET:
    case SC_AGG_STATS_BUCKET:
    case SC_AGG_CUMULATIVE_SUM:
    case SC_AGG_DERIVATIVE:
    case SC_AGG_BUCKET_SORT:
    case SC_AGG_BUCKET_SCRIPT:
    case SC_AGG_BUCKET_SELECTOR:
    case SC_AGG_MOVING_FN:
    case SC_AGG_SERIAL_DIFF:
    case SC_AGG_PERCENTILES_BUCKET:
    case SC_AGG_EXTENDED_STATS_BUCKET: return sc__agg_parse_pipeline(c, type, p, s);
    case SC_AGG_MISSING: {
        static const char *const keys[] = {"field", NULL};
        const sc_mapping_field *mf;
        const json_t *f = json_object_get(p, "field");
        if (!sc__agg_known_keys(c, type, p, keys))
            return false;
        if (!json_is_string(f))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "Required one of fields [field, script], but none were "
                                "specified.");
        s->field = dup(c, json_string_value(f));
        mf = c->m ? sc_mapping_find(c->m, sc_slice_cstr(s->field)) : NULL;
        s->vtype = mf ? SC_AGG_V_LONG : SC_AGG_V_UNMAPPED;
        return true;
    }
    case SC_AGG_NESTED: {
        static const char *const keys[] = {"path", NULL};
        const json_t *path = json_object_get(p, "path");
        if (!sc__agg_known_keys(c, type, p, keys))
            return false;
        if (!json_is_string(path))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[path] must not be null: [%s]", s->name);
        const sc_mapping_field *mf =
            c->m ? sc_mapping_find(c->m, sc_slice_cstr(json_string_value(path))) : NULL;
        if (mf && !(mf->type == SC_MAPPING_OBJECT && mf->nested))
            return sc__agg_fail(c, 400, "aggregation_execution_exception",
                                "[nested] nested path [%s] is not nested", json_string_value(path));
        s->field = dup(c, json_string_value(path)); /* unmapped: no docs (doc_count 0) */
        return s->field != NULL || sc__agg_oom_err(c);
    }
    case SC_AGG_REVERSE_NESTED: {
        static const char *const keys[] = {"path", NULL};
        if (!sc__agg_known_keys(c, type, p, keys))
            return false;
        if (json_object_get(p, "path"))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[reverse_nested] [path] is not supported (nested fields have one "
                                "level: the parent is always the root document): [%s]",
                                s->name);
        return true;
    }
    case SC_AGG_SAMPLER: {
        static const char *const keys[] = {"shard_size", NULL};
        uint64_t shard_size = 100;
        if (!sc__agg_known_keys(c, type, p, keys) ||
            !sc__agg_get_uint(c, p, "shard_size", &shard_size, type))
            return false;
        if (shard_size == 0 || shard_size > INT32_MAX)
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[shard_size] must be greater than 0. Found [%llu] in [%s]",
                                (unsigned long long)shard_size, s->name);
        s->shard_size = (uint32_t)shard_size;
        return true;
    }
    case SC_AGG_DIVERSIFIED_SAMPLER: {
        static const char *const keys[] = {"field", "shard_size", "max_docs_per_value",
                                           "execution_hint", NULL};
        uint64_t shard_size = 100, per_value = 1;
        const sc_mapping_field *mf;
        if (!sc__agg_known_keys(c, type, p, keys) ||
            !sc__agg_get_uint(c, p, "shard_size", &shard_size, type) ||
            !sc__agg_get_uint(c, p, "max_docs_per_value", &per_value, type))
            return false;
        if (shard_size == 0 || shard_size > INT32_MAX)
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[shard_size] must be greater than 0. Found [%llu] in [%s]",
                                (unsigned long long)shard_size, s->name);
        if (per_value == 0 || per_value > INT32_MAX)
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[max_docs_per_value] must be greater than 0. Found [%llu] in [%s]",
                                (unsigned long long)per_value, s->name);
        const json_t *hint = json_object_get(p, "execution_hint");
        if (hint &&
            !(json_is_string(hint) && (!strcmp(json_string_value(hint), "map") ||
                                       !strcmp(json_string_value(hint), "global_ordinals") ||
                                       !strcmp(json_string_value(hint), "bytes_hash"))))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "Unknown `execution_hint`: [%s], expected any of [map, "
                                "global_ordinals, bytes_hash]",
                                json_is_string(hint) ? json_string_value(hint) : "?");
        if (!sc__agg_field_common(c, type, p, s, &mf))
            return false;
        if (s->vtype == SC_AGG_V_GEO_POINT)
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "Field [%s] of type [geo_point] is not supported for aggregation "
                                "[%s]",
                                s->field, type);
        s->shard_size = (uint32_t)shard_size;
        s->max_docs_per_value = (uint32_t)per_value;
        return true;
    }
    case SC_AGG_GLOBAL:
        if (json_object_size(p))
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[global] takes no "
                                "parameters");
        return true;
    default: return parse_metric(c, type, p, s);
    }
}
