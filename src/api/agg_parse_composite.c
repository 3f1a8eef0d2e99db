/* The composite aggregation's parameters (agg_internal.h): `size`, `sources` (an array of
 * single-key objects naming a terms, histogram, date_histogram or geotile_grid source with
 * `field`,
 * `order`, `missing_bucket` and the kind's own parameters) and `after` (one value per source,
 * as the previous page's `after_key` gave it). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/agg_internal.h"

/* A geotile_grid's `field` (geo_point; unmapped: no values) and `precision` (7, 0..29), or
 * with `hash` a geohash_grid's (precision 5, 1..12 characters; distances are refused). */
static bool geotile_field(sc__agg_pctx *c, const json_t *p, sc_agg_spec *s, bool hash)
{
    const char *type = hash ? "geohash_grid" : "geotile_grid";
    const json_t *f = json_object_get(p, "field");
    if (!json_is_string(f))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Required one of fields [field, script], but none were specified.");
    s->field = sc_arena_strndup(c->req->arena, json_string_value(f), json_string_length(f));
    if (!s->field)
        return sc__agg_oom_err(c);
    const json_t *pr = json_object_get(p, "precision");
    json_int_t prec = hash ? 5 : 7;
    if (pr && !json_is_integer(pr))
        return sc__agg_fail(c, 400, "x_content_parse_exception",
                            "[%s] [precision] must be an integer in [%s]", type, s->name);
    if (pr)
        prec = json_integer_value(pr);
    if (hash && (prec < 1 || prec > 12))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Invalid geohash aggregation precision of %lld. Must be between 1 and "
                            "12.",
                            (long long)prec);
    if (!hash && (prec < 0 || prec > 29))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Invalid geotile_grid precision of %lld. Must be between 0 and 29.",
                            (long long)prec);
    s->precision = (uint32_t)prec;
    const sc_mapping_field *mf = c->m ? sc_mapping_find(c->m, sc_slice_cstr(s->field)) : NULL;
    if (mf && mf->type != SC_MAPPING_GEO_POINT) {
        c->err->shard_level = true;
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Field [%s] of type [%s] is not supported for aggregation [%s]",
                            s->field, sc_mapping_type_name(mf->type), type);
    }
    s->vtype = mf ? SC_AGG_V_GEO_POINT : SC_AGG_V_UNMAPPED;
    return true;
}

bool sc__agg_parse_geotile(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"field", "precision", "size", "shard_size", NULL};
    bool hash = !strcmp(type, "geohash_grid");
    if (!sc__agg_known_keys(c, type, p, keys) || !geotile_field(c, p, s, hash))
        return false;
    uint64_t size = 10000, shard_size = 0;
    if (!sc__agg_get_uint(c, p, "size", &size, type) ||
        !sc__agg_get_uint(c, p, "shard_size", &shard_size, type))
        return false;
    if (size == 0 || size > INT32_MAX)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[size] must be greater than 0. Found [%llu] in [%s]",
                            (unsigned long long)size, s->name);
    s->geotile = !hash;
    s->geohash = hash;
    s->size = (uint32_t)size;
    s->shard_size = shard_size > INT32_MAX ? INT32_MAX : (uint32_t)shard_size;
    s->min_doc_count = 1;
    s->order = (sc_agg_order){.kind = SC_AGG_ORDER_COUNT, .desc = true};
    return true;
}

/* A geotile_grid source: `field`, `precision`, `order`, `missing_bucket`. `bounds` and
 * scripts are refused. */
static bool parse_geotile(sc__agg_pctx *c, const char *name, const json_t *p, sc_agg_spec *s,
                          sc_agg_spec **out)
{
    static const char *const keys[] = {"field", "precision", "order", "missing_bucket", NULL};
    s->kind = SC_AGG_GEOTILE_GRID;
    if (!json_is_object(p) || !sc__agg_known_keys(c, "geotile_grid", p, keys) ||
        !sc__agg_get_bool(c, p, "missing_bucket", &s->missing_bucket, "geotile_grid"))
        return json_is_object(p)
                   ? false
                   : sc__agg_fail(c, 400, "x_content_parse_exception",
                                  "[geotile_grid] source [%s] must be an object", name);
    if (!geotile_field(c, p, s, false))
        return false;
    const json_t *o = json_object_get(p, "order");
    const char *d = o ? json_string_value(o) : "asc";
    if (!d || (strcmp(d, "asc") && strcmp(d, "desc")))
        return sc__agg_fail(c, 400, "x_content_parse_exception",
                            "Unknown order direction [%s] in [%s]", d ? d : "?", name);
    s->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY, .desc = !strcmp(d, "desc")};
    *out = s;
    return true;
}

/* A geotile key "zoom/x/y" (as after_key gives it) into its long encoding; false if malformed
 * or outside the zoom's tiles. */
static bool geotile_parse(const char *txt, int64_t *out)
{
    unsigned long z, x, y;
    int used = 0;
    if (sscanf(txt, "%lu/%lu/%lu%n", &z, &x, &y, &used) != 3 || txt[used] || z > 29 ||
        x >= (1ul << z) || y >= (1ul << z) || txt[0] < '0' || txt[0] > '9')
        return false;
    *out = (int64_t)((uint64_t)z << 58 | (uint64_t)x << 29 | (uint64_t)y);
    return true;
}

static bool parse_source(sc__agg_pctx *c, const char *name, const json_t *body, sc_agg_spec **out)
{
    if (!json_is_object(body) || json_object_size(body) != 1)
        return sc__agg_fail(c, 400, "x_content_parse_exception",
                            "[composite] source [%s] must name one source type", name);
    void *it = json_object_iter((json_t *)body);
    const char *type = json_object_iter_key(it);
    const json_t *p = json_object_iter_value(it);
    sc_agg_spec *s = sc_arena_calloc(c->req->arena, 1, sizeof *s);
    if (!s)
        return sc__agg_oom_err(c);
    s->name = sc_arena_strndup(c->req->arena, name, strlen(name));
    if (!strcmp(type, "terms"))
        s->kind = SC_AGG_TERMS;
    else if (!strcmp(type, "histogram"))
        s->kind = SC_AGG_HISTOGRAM;
    else if (!strcmp(type, "date_histogram"))
        s->kind = SC_AGG_DATE_HISTOGRAM;
    else if (!strcmp(type, "geotile_grid"))
        return parse_geotile(c, name, p, s, out);
    else
        return sc__agg_fail(c, 400, "x_content_parse_exception",
                            "[composite] source type [%s] of [%s] is not supported (terms, "
                            "histogram, date_histogram, geotile_grid)",
                            type, name);
    static const char *const keys[] = {"field",
                                       "order",
                                       "missing_bucket",
                                       "missing_order",
                                       "format",
                                       "interval",
                                       "offset",
                                       "calendar_interval",
                                       "fixed_interval",
                                       "time_zone",
                                       "value_type",
                                       "script",
                                       NULL};
    const sc_mapping_field *mf;
    if (!json_is_object(p) || !sc__agg_known_keys(c, type, p, keys) ||
        !sc__agg_field_common(c, type, p, s, &mf) ||
        !sc__agg_get_bool(c, p, "missing_bucket", &s->missing_bucket, type))
        return false;
    const json_t *o = json_object_get(p, "order");
    const char *d = o ? json_string_value(o) : "asc";
    if (!d || (strcmp(d, "asc") && strcmp(d, "desc")))
        return sc__agg_fail(c, 400, "x_content_parse_exception",
                            "Unknown order direction [%s] in [%s]", d ? d : "?", name);
    s->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY, .desc = !strcmp(d, "desc")};
    if (s->kind == SC_AGG_HISTOGRAM) {
        if (!sc__agg_get_double(c, p, "interval", &s->interval, type) ||
            !sc__agg_get_double(c, p, "offset", &s->offset, type))
            return false;
        if (!(s->interval > 0) || !isfinite(s->interval))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[interval] must be >0 for histogram aggregation [%s]", name);
    } else if (s->kind == SC_AGG_DATE_HISTOGRAM) {
        if (!sc__agg_date_rounding(c, p, s))
            return false;
        if (s->vtype != SC_AGG_V_UNMAPPED)
            s->vtype = SC_AGG_V_DATE;
    }
    *out = s;
    return true;
}

/* One `after` value for source s. */
static bool after_value(sc__agg_pctx *c, const sc_agg_spec *s, const json_t *v, sc_agg_value *out)
{
    memset(out, 0, sizeof *out);
    if (!v || json_is_null(v)) {
        out->null = true;
        return true;
    }
    const sc_mapping_field *mf = c->m ? sc_mapping_find(c->m, sc_slice_cstr(s->field)) : NULL;
    if (s->kind == SC_AGG_GEOTILE_GRID) {
        if (!json_is_string(v) || !geotile_parse(json_string_value(v), &out->i))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "invalid value for [after] source [%s]: a geotile key "
                                "\"zoom/x/y\" is expected",
                                s->name);
        return true;
    }
    if (s->kind == SC_AGG_HISTOGRAM) {
        if (!json_is_number(v))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "invalid value for [after] source [%s]", s->name);
        out->d = json_number_value(v);
        return true;
    }
    if (s->kind == SC_AGG_DATE_HISTOGRAM) {
        double ms;
        if (!sc__agg_date_value(c, mf, s, v, "after", &ms))
            return false;
        out->i = (int64_t)ms;
        return true;
    }
    if (!sc_agg_vtype_numeric(s->vtype) && json_is_string(v) && !mf) {
        out->s = sc_slice_make(json_string_value(v), json_string_length(v));
        return true;
    }
    if (!mf)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "invalid value for [after] source [%s]", s->name);
    sc_mapping_value mv;
    if (!sc__agg_encode_value(c, mf, v, "after", &mv))
        return false;
    if (mv.kind == SC_FIELD_KEYWORD)
        out->s = mv.term;
    else
        out->i = mv.num;
    return true;
}

bool sc__agg_parse_multi_terms(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"terms",
                                       "size",
                                       "shard_size",
                                       "min_doc_count",
                                       "shard_min_doc_count",
                                       "order",
                                       "collect_mode",
                                       "show_term_doc_count_error",
                                       NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    const json_t *terms = json_object_get(p, "terms");
    size_t n = json_array_size(terms);
    if (!json_is_array(terms) || n < 2 || n > 8)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "The [terms] parameter in the aggregation [%s] must be present and "
                            "have at least 2 (and at most 8) fields.",
                            s->name);
    s->sources = sc_arena_calloc(c->req->arena, n, sizeof *s->sources);
    if (!s->sources)
        return sc__agg_oom_err(c);
    for (size_t i = 0; i < n; i++) {
        static const char *const tkeys[] = {"field", "missing", "format", "value_type", NULL};
        const json_t *t = json_array_get(terms, i);
        sc_agg_spec *src = sc_arena_calloc(c->req->arena, 1, sizeof *src);
        const sc_mapping_field *mf;
        if (!src)
            return sc__agg_oom_err(c);
        src->kind = SC_AGG_TERMS;
        src->order = (sc_agg_order){.kind = SC_AGG_ORDER_KEY};
        if (!json_is_object(t) || !sc__agg_known_keys(c, type, t, tkeys) ||
            !sc__agg_field_common(c, "multi_terms", t, src, &mf))
            return json_is_object(t) ? false
                                     : sc__agg_fail(c, 400, "x_content_parse_exception",
                                                    "[multi_terms] terms must be objects");
        src->name = src->field;
        s->sources[i] = src;
    }
    s->n_sources = n;
    uint64_t size = 10, shard_size = 0, mdc = 1;
    if (!sc__agg_get_uint(c, p, "size", &size, type) ||
        !sc__agg_get_uint(c, p, "shard_size", &shard_size, type) ||
        !sc__agg_get_uint(c, p, "min_doc_count", &mdc, type) ||
        !sc__agg_get_bool(c, p, "show_term_doc_count_error", &s->show_term_doc_count_error, type))
        return false;
    if (size == 0 || size > INT32_MAX)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[size] must be greater than 0. Found [%llu] in [%s]",
                            (unsigned long long)size, s->name);
    s->size = (uint32_t)size;
    s->shard_size = shard_size > INT32_MAX ? INT32_MAX : (uint32_t)shard_size;
    s->min_doc_count = mdc;
    s->order = (sc_agg_order){.kind = SC_AGG_ORDER_COUNT, .desc = true};
    const json_t *o = json_object_get(p, "order");
    return !o || sc__agg_terms_order(c, o, s);
}

bool sc__agg_parse_composite(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"size", "sources", "after", NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    uint64_t size = 10;
    if (!sc__agg_get_uint(c, p, "size", &size, type))
        return false;
    if (size == 0 || size > INT32_MAX)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[size] must be greater than 0. Found [%llu] in [%s]",
                            (unsigned long long)size, s->name);
    s->size = (uint32_t)size;
    const json_t *src = json_object_get(p, "sources");
    size_t n = json_array_size(src);
    if (!json_is_array(src) || n == 0)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Composite [sources] cannot be null or empty");
    if (n > 8)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "composite aggregation [%s] has more than 8 sources", s->name);
    s->sources = sc_arena_calloc(c->req->arena, n, sizeof *s->sources);
    if (!s->sources)
        return sc__agg_oom_err(c);
    for (size_t i = 0; i < n; i++) {
        const json_t *one = json_array_get(src, i);
        if (!json_is_object(one) || json_object_size(one) != 1)
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[composite] each source must be an object with one name");
        void *it = json_object_iter((json_t *)one);
        if (!parse_source(c, json_object_iter_key(it), json_object_iter_value(it), &s->sources[i]))
            return false;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(s->sources[j]->name, s->sources[i]->name))
                return sc__agg_fail(c, 400, "illegal_argument_exception",
                                    "Composite source names must be unique, found duplicates: "
                                    "[%s]",
                                    s->sources[i]->name);
    }
    s->n_sources = n;
    const json_t *after = json_object_get(p, "after");
    if (after) {
        if (!json_is_object(after) || json_object_size(after) != n)
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[after] has %zu value(s) but [sources] has %zu",
                                json_is_object(after) ? json_object_size(after) : 0, n);
        sc_agg_value *vals = sc_arena_calloc(c->req->arena, n, sizeof *vals);
        if (!vals)
            return sc__agg_oom_err(c);
        for (size_t i = 0; i < n; i++) {
            const json_t *v = json_object_get(after, s->sources[i]->name);
            if (!v)
                return sc__agg_fail(c, 400, "illegal_argument_exception",
                                    "Missing value for [after.%s]", s->sources[i]->name);
            if (!after_value(c, s->sources[i], v, &vals[i]))
                return false;
        }
        s->after = vals;
    }
    return true;
}
