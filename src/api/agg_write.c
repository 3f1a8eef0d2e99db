/* A final aggregation result -> the response's "aggregations" in Elasticsearch's shapes
 * (reference/aggregations.md §1): terms with doc_count_error_upper_bound and
 * sum_other_doc_count, key / key_as_string per field type (dates, booleans, ips), histogram
 * and range keys as Java prints doubles, keyed outputs, metrics with nulls when empty,
 * extended_stats' derived values. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/agg_internal.h"

static void write_aggs(sc_jsonw *w, const sc_agg_spec *spec, sc_agg_result *const *subs,
                       bool typed_keys);

/* The date format of a spec (parse attaches it), or NULL: ISO. */
static const sc_date_format *date_fmt(const sc_agg_spec *s)
{
    const sc__agg_render *r = s->user;
    return r ? r->date_format : NULL;
}

/* A date (UTC ms) as key_as_string into buf: the format's first alternative; ISO in the
 * aggregation's time zone (with its offset) by default. */
static void date_text(const sc_agg_spec *s, int64_t ms, char *buf, size_t cap)
{
    const sc_date_format *f = date_fmt(s);
    int64_t off = s->kind == SC_AGG_DATE_HISTOGRAM || s->kind == SC_AGG_AUTO_DATE_HISTOGRAM
                      ? sc_agg_tz_offset(&s->rounding.tz, ms)
                      : 0;
    if (f) {
        sc_date_format_print(f, ms + off, buf, cap);
        return;
    }
    char iso[48];
    size_t n = sc_date_format_iso(ms + off, iso);
    if (off && n && iso[n - 1] == 'Z') {
        int64_t a = off < 0 ? -off : off;
        snprintf(buf, cap, "%.*s%c%02d:%02d", (int)(n - 1), iso, off < 0 ? '-' : '+',
                 (int)(a / 3600000), (int)(a / 60000 % 60));
    } else {
        snprintf(buf, cap, "%s", iso);
    }
}

static void write_date(sc_jsonw *w, const sc_agg_spec *s, int64_t ms)
{
    char buf[96];
    date_text(s, ms, buf, sizeof buf);
    sc_jsonw_str(w, buf);
}

static void fmt_double(char *buf, double v)
{
    sc_json_format_double(buf, v);
}

/* ---- metrics ---- */

static void kv_value(sc_jsonw *w, const char *k, double v, bool present)
{
    sc_jsonw_key(w, k);
    if (present && isfinite(v))
        sc_jsonw_double(w, v);
    else
        sc_jsonw_null(w);
}

static void write_extended(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r)
{
    bool has = r->count > 0;
    double n = (double)r->count, avg = has ? r->sum / n : 0;
    double var = has ? fmax(0, r->sum_sq / n - avg * avg) : 0;
    double var_s = r->count > 1 ? fmax(0, (r->sum_sq - n * avg * avg) / (n - 1)) : NAN;
    double sd = sqrt(var), sd_s = sqrt(var_s);
    kv_value(w, "sum_of_squares", r->sum_sq, has);
    kv_value(w, "variance", var, has);
    kv_value(w, "variance_population", var, has);
    kv_value(w, "variance_sampling", var_s, has);
    kv_value(w, "std_deviation", sd, has);
    kv_value(w, "std_deviation_population", sd, has);
    kv_value(w, "std_deviation_sampling", sd_s, has);
    sc_jsonw_key(w, "std_deviation_bounds");
    sc_jsonw_obj_begin(w);
    kv_value(w, "upper", avg + s->sigma * sd, has);
    kv_value(w, "lower", avg - s->sigma * sd, has);
    kv_value(w, "upper_population", avg + s->sigma * sd, has);
    kv_value(w, "lower_population", avg - s->sigma * sd, has);
    kv_value(w, "upper_sampling", avg + s->sigma * sd_s, has);
    kv_value(w, "lower_sampling", avg - s->sigma * sd_s, has);
    sc_jsonw_obj_end(w);
}

static void write_point(sc_jsonw *w, const char *key, double lat, double lon)
{
    sc_jsonw_key(w, key);
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_double(w, "lat", lat);
    sc_jsonw_kv_double(w, "lon", lon);
    sc_jsonw_obj_end(w);
}

/* geo_bounds as Elasticsearch's InternalGeoBounds: the left and right longitudes from the
 * extremes of the positive and negative longitudes, the narrower box across the dateline when
 * wrap_longitude allows it; no `bounds` without points. */
static void write_geo_bounds(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r)
{
    if (!r->count)
        return;
    double pos_l = r->sum, pos_r = r->sum_c, neg_l = r->sum_sq, neg_r = r->sum_sq_c;
    double left, right;
    if (isinf(pos_l)) {
        left = neg_l, right = neg_r;
    } else if (isinf(neg_r)) {
        left = pos_l, right = pos_r;
    } else {
        bool unwrapped = !s->wrap_longitude || pos_r - neg_l <= (180 - pos_l) - (-180 - neg_r);
        left = unwrapped ? neg_l : pos_l;
        right = unwrapped ? pos_r : neg_r;
    }
    sc_jsonw_key(w, "bounds");
    sc_jsonw_obj_begin(w);
    write_point(w, "top_left", r->max, left);
    write_point(w, "bottom_right", r->min, right);
    sc_jsonw_obj_end(w);
}

static void write_metric(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r)
{
    bool has = r->count > 0;
    bool date = s->vtype == SC_AGG_V_DATE;
    double v = 0;
    switch (s->kind) {
    case SC_AGG_MIN: v = r->min; break;
    case SC_AGG_MAX: v = r->max; break;
    case SC_AGG_SUM:
        v = r->sum;
        has = true;
        break;
    case SC_AGG_AVG: v = has ? r->sum / (double)r->count : 0; break;
    case SC_AGG_VALUE_COUNT: sc_jsonw_kv_int(w, "value", (int64_t)r->count); return;
    default: break;
    }
    if (s->kind != SC_AGG_STATS && s->kind != SC_AGG_EXTENDED_STATS) {
        kv_value(w, "value", v, has);
        if (date && has && isfinite(v) && s->kind != SC_AGG_SUM) {
            sc_jsonw_key(w, "value_as_string");
            write_date(w, s, (int64_t)v);
        }
        return;
    }
    sc_jsonw_kv_int(w, "count", (int64_t)r->count);
    kv_value(w, "min", r->min, has);
    kv_value(w, "max", r->max, has);
    kv_value(w, "avg", has ? r->sum / (double)r->count : 0, has);
    sc_jsonw_kv_double(w, "sum", r->sum);
    if (s->kind == SC_AGG_EXTENDED_STATS)
        write_extended(w, s, r);
    if (date && has) {
        sc_jsonw_key(w, "min_as_string");
        write_date(w, s, (int64_t)r->min);
        sc_jsonw_key(w, "max_as_string");
        write_date(w, s, (int64_t)r->max);
    }
}

/* percentiles / percentile_ranks: "values" keyed by the Java double string of each percent
 * (ranks: of each value), or a list of {key, value}; null values when nothing was collected. */
static void write_percentiles(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r)
{
    bool ranks = s->kind == SC_AGG_PERCENTILE_RANKS;
    bool date = s->vtype == SC_AGG_V_DATE && !ranks;
    sc_jsonw_key(w, "values");
    if (s->keyed)
        sc_jsonw_obj_begin(w);
    else
        sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < s->n_points; i++) {
        double p = s->points[i];
        double v = !r->td  ? NAN
                   : ranks ? 100 * sc_tdigest_cdf(r->td, p)
                           : sc_tdigest_quantile(r->td, p / 100);
        bool has = isfinite(v);
        if (s->keyed) {
            char key[48];
            fmt_double(key, p);
            kv_value(w, key, v, has);
            if (date && has) {
                char k2[64];
                snprintf(k2, sizeof k2, "%s_as_string", key);
                sc_jsonw_key(w, k2);
                write_date(w, s, (int64_t)v);
            }
        } else {
            sc_jsonw_obj_begin(w);
            sc_jsonw_kv_double(w, "key", p);
            kv_value(w, "value", v, has);
            if (date && has) {
                sc_jsonw_key(w, "value_as_string");
                write_date(w, s, (int64_t)v);
            }
            sc_jsonw_obj_end(w);
        }
    }
    if (s->keyed)
        sc_jsonw_obj_end(w);
    else
        sc_jsonw_arr_end(w);
}

/* ---- buckets ---- */

/* A terms bucket's key (and key_as_string). */
static void write_terms_key(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_bucket *b)
{
    char buf[64];
    sc_jsonw_key(w, "key");
    switch (s->vtype) {
    case SC_AGG_V_KEYWORD:
    case SC_AGG_V_UNMAPPED: sc_jsonw_strn(w, b->bkey); return;
    case SC_AGG_V_IP:
        if (b->bkey.len == 16) {
            sc_mapping_ip_format(b->bkey.ptr, buf);
            sc_jsonw_str(w, buf);
        } else {
            sc_jsonw_strn(w, b->bkey);
        }
        return;
    case SC_AGG_V_DOUBLE: sc_jsonw_double(w, sc_agg_sortable_to_double(b->key)); return;
    case SC_AGG_V_DATE:
        sc_jsonw_int(w, b->key);
        sc_jsonw_key(w, "key_as_string");
        write_date(w, s, b->key);
        return;
    case SC_AGG_V_BOOLEAN:
        sc_jsonw_int(w, b->key);
        sc_jsonw_kv_str(w, "key_as_string", b->key ? "true" : "false");
        return;
    default:
        if (s->scaling_factor > 0)
            sc_jsonw_double(w, (double)b->key / s->scaling_factor);
        else
            sc_jsonw_int(w, b->key);
        return;
    }
}

/* The doc count and the sub-aggregations of a bucket (inside its object). */
static void write_bucket_body(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_bucket *b,
                              bool typed_keys)
{
    sc_jsonw_kv_int(w, "doc_count", (int64_t)b->doc_count);
    if (s->n_subs && b->n_subs == s->n_subs)
        write_aggs(w, s, b->subs, typed_keys);
}

static void write_part(sc_jsonw *w, const sc_agg_spec *src, const sc_agg_value *v);

static void write_terms(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r, bool tk)
{
    if (s->geotile || s->geohash) { /* buckets only, keys "zoom/x/y" or geohashes */
        sc_jsonw_key(w, "buckets");
        sc_jsonw_arr_begin(w);
        for (size_t i = 0; i < r->n_buckets; i++) {
            sc_jsonw_obj_begin(w);
            sc_jsonw_key(w, "key");
            write_part(w, s, &(sc_agg_value){.i = r->buckets[i].key});
            write_bucket_body(w, s, &r->buckets[i], tk);
            sc_jsonw_obj_end(w);
        }
        sc_jsonw_arr_end(w);
        return;
    }
    sc_jsonw_kv_int(w, "doc_count_error_upper_bound", r->doc_count_error);
    sc_jsonw_kv_int(w, "sum_other_doc_count", (int64_t)r->sum_other);
    sc_jsonw_key(w, "buckets");
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < r->n_buckets; i++) {
        sc_jsonw_obj_begin(w);
        write_terms_key(w, s, &r->buckets[i]);
        sc_jsonw_kv_int(w, "doc_count", (int64_t)r->buckets[i].doc_count);
        if (s->show_term_doc_count_error)
            sc_jsonw_kv_int(w, "doc_count_error_upper_bound", r->buckets[i].doc_count_error);
        if (s->n_subs && r->buckets[i].n_subs == s->n_subs)
            write_aggs(w, s, r->buckets[i].subs, tk);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_arr_end(w);
}

static void write_rare(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r, bool tk)
{
    sc_jsonw_key(w, "buckets");
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < r->n_buckets; i++) {
        sc_jsonw_obj_begin(w);
        write_terms_key(w, s, &r->buckets[i]);
        write_bucket_body(w, s, &r->buckets[i], tk);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_arr_end(w);
}

static void write_histogram(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r, bool tk)
{
    bool date = s->kind == SC_AGG_DATE_HISTOGRAM || s->kind == SC_AGG_AUTO_DATE_HISTOGRAM;
    sc_jsonw_key(w, "buckets");
    if (s->keyed)
        sc_jsonw_obj_begin(w);
    else
        sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < r->n_buckets; i++) {
        const sc_agg_bucket *b = &r->buckets[i];
        if (s->keyed) {
            char buf[96];
            if (date)
                date_text(s, b->key, buf, sizeof buf); /* the key_as_string names it */
            else
                fmt_double(buf, b->dkey);
            sc_jsonw_key(w, buf);
        }
        sc_jsonw_obj_begin(w);
        if (date) {
            sc_jsonw_key(w, "key_as_string");
            write_date(w, s, b->key);
            sc_jsonw_kv_int(w, "key", b->key);
        } else {
            sc_jsonw_kv_double(w, "key", b->dkey);
        }
        write_bucket_body(w, s, b, tk);
        sc_jsonw_obj_end(w);
    }
    if (s->keyed)
        sc_jsonw_obj_end(w);
    else
        sc_jsonw_arr_end(w);
}

/* A range bound as its key part: "*" when open, Java's double, or the date. */
static void bound_text(const sc_agg_spec *s, double v, char *buf, size_t cap)
{
    if (isinf(v)) {
        snprintf(buf, cap, "*");
        return;
    }
    if (s->vtype != SC_AGG_V_DATE) {
        fmt_double(buf, v);
        return;
    }
    date_text(s, (int64_t)v, buf, cap);
}

/* An ip_range bound as text ("*" when open). */
static void ip_text(sc_slice b, char *buf, size_t cap)
{
    if (b.len == 16)
        sc_mapping_ip_format(b.ptr, buf);
    else if (b.len)
        snprintf(buf, cap, "%.*s", (int)b.len, (const char *)b.ptr);
    else
        snprintf(buf, cap, "*");
}

static void write_ip_range(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r, bool tk)
{
    sc_jsonw_key(w, "buckets");
    if (s->keyed)
        sc_jsonw_obj_begin(w);
    else
        sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < r->n_buckets && i < s->n_ranges; i++) {
        const sc_agg_range_spec *g = &s->ranges[i];
        char from[64], to[64], key[160];
        ip_text(g->from_ip, from, sizeof from);
        ip_text(g->to_ip, to, sizeof to);
        if (g->key)
            snprintf(key, sizeof key, "%s", g->key);
        else if (g->mask)
            snprintf(key, sizeof key, "%s", g->mask);
        else
            snprintf(key, sizeof key, "%s-%s", from, to);
        if (s->keyed)
            sc_jsonw_key(w, key);
        sc_jsonw_obj_begin(w);
        if (!s->keyed)
            sc_jsonw_kv_str(w, "key", key);
        if (g->from_ip.len)
            sc_jsonw_kv_str(w, "from", from);
        if (g->to_ip.len)
            sc_jsonw_kv_str(w, "to", to);
        write_bucket_body(w, s, &r->buckets[i], tk);
        sc_jsonw_obj_end(w);
    }
    if (s->keyed)
        sc_jsonw_obj_end(w);
    else
        sc_jsonw_arr_end(w);
}

static void write_range(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r, bool tk)
{
    if (s->vtype == SC_AGG_V_IP) {
        write_ip_range(w, s, r, tk);
        return;
    }
    sc_jsonw_key(w, "buckets");
    if (s->keyed)
        sc_jsonw_obj_begin(w);
    else
        sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < r->n_buckets && i < s->n_ranges; i++) {
        const sc_agg_range_spec *g = &s->ranges[i];
        char from[64], to[64], key[160];
        bound_text(s, g->from, from, sizeof from);
        bound_text(s, g->to, to, sizeof to);
        if (g->key)
            snprintf(key, sizeof key, "%s", g->key);
        else
            snprintf(key, sizeof key, "%s-%s", from, to);
        if (s->keyed)
            sc_jsonw_key(w, key);
        sc_jsonw_obj_begin(w);
        if (!s->keyed)
            sc_jsonw_kv_str(w, "key", key);
        if (!isinf(g->from)) {
            sc_jsonw_kv_double(w, "from", g->from);
            if (s->vtype == SC_AGG_V_DATE)
                sc_jsonw_kv_str(w, "from_as_string", from);
        }
        if (!isinf(g->to)) {
            sc_jsonw_kv_double(w, "to", g->to);
            if (s->vtype == SC_AGG_V_DATE)
                sc_jsonw_kv_str(w, "to_as_string", to);
        }
        write_bucket_body(w, s, &r->buckets[i], tk);
        sc_jsonw_obj_end(w);
    }
    if (s->keyed)
        sc_jsonw_obj_end(w);
    else
        sc_jsonw_arr_end(w);
}

static void write_filters(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r, bool tk)
{
    bool named = s->filter_names && s->n_filters && s->filter_names[0];
    sc_jsonw_key(w, "buckets");
    if (s->keyed)
        sc_jsonw_obj_begin(w);
    else
        sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < r->n_buckets; i++) {
        bool other = i == s->n_filters;
        const char *name = other ? s->other_bucket_key : named ? s->filter_names[i] : NULL;
        if (s->keyed) {
            char idx[24];
            snprintf(idx, sizeof idx, "%zu", i);
            sc_jsonw_key(w, name ? name : idx);
        }
        sc_jsonw_obj_begin(w);
        if (!s->keyed && name && named)
            sc_jsonw_kv_str(w, "key", name);
        write_bucket_body(w, s, &r->buckets[i], tk);
        sc_jsonw_obj_end(w);
    }
    if (s->keyed)
        sc_jsonw_obj_end(w);
    else
        sc_jsonw_arr_end(w);
}

/* One key part of a composite / multi_terms key, as its source's field type reads. */
static void write_part(sc_jsonw *w, const sc_agg_spec *src, const sc_agg_value *v)
{
    char buf[64];
    if (v->null) {
        sc_jsonw_null(w);
    } else if (src->geohash) {
        sc_agg_geohash_text(v->i, buf);
        sc_jsonw_str(w, buf);
    } else if (src->kind == SC_AGG_GEOTILE_GRID || src->geotile) {
        uint64_t k = (uint64_t)v->i;
        snprintf(buf, sizeof buf, "%u/%u/%u", (unsigned)(k >> 58),
                 (unsigned)((k >> 29) & 0x1fffffff), (unsigned)(k & 0x1fffffff));
        sc_jsonw_str(w, buf);
    } else if (src->kind == SC_AGG_HISTOGRAM) {
        sc_jsonw_double(w, v->d);
    } else if (src->vtype == SC_AGG_V_IP && v->s.len == 16) {
        sc_mapping_ip_format(v->s.ptr, buf);
        sc_jsonw_str(w, buf);
    } else if (!sc_agg_vtype_numeric(src->vtype) && src->kind != SC_AGG_DATE_HISTOGRAM) {
        sc_jsonw_strn(w, v->s);
    } else if (src->vtype == SC_AGG_V_BOOLEAN) {
        sc_jsonw_bool(w, v->i != 0);
    } else if (src->vtype == SC_AGG_V_DOUBLE) {
        sc_jsonw_double(w, sc_agg_sortable_to_double(v->i));
    } else if (src->vtype == SC_AGG_V_DATE && src->format) {
        write_date(w, src, v->i);
    } else if (src->scaling_factor > 0) {
        sc_jsonw_double(w, (double)v->i / src->scaling_factor);
    } else {
        sc_jsonw_int(w, v->i);
    }
}

/* One composite key as {"source": value, ...}. */
static void write_composite_key(sc_jsonw *w, const sc_agg_spec *s, sc_slice key)
{
    sc_agg_value v[8];
    sc_jsonw_obj_begin(w);
    if (s->n_sources <= 8 && sc_agg_composite_parse(s, key, v)) {
        for (size_t i = 0; i < s->n_sources; i++) {
            sc_jsonw_key(w, s->sources[i]->name);
            write_part(w, s->sources[i], &v[i]);
        }
    }
    sc_jsonw_obj_end(w);
}

/* multi_terms: "key": [values], "key_as_string": "a|b" (dates formatted, booleans as words). */
static void write_multi_key(sc_jsonw *w, const sc_agg_spec *s, sc_slice key)
{
    sc_agg_value v[8];
    bool ok = s->n_sources <= 8 && sc_agg_composite_parse(s, key, v);
    sc_jsonw_key(w, "key");
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; ok && i < s->n_sources; i++)
        write_part(w, s->sources[i], &v[i]);
    sc_jsonw_arr_end(w);
    char text[1024];
    size_t n = 0;
    for (size_t i = 0; ok && i < s->n_sources && n < sizeof text - 1; i++) {
        const sc_agg_spec *src = s->sources[i];
        char part[128];
        if (!sc_agg_vtype_numeric(src->vtype) && src->vtype != SC_AGG_V_IP)
            snprintf(part, sizeof part, "%.*s", (int)v[i].s.len, (const char *)v[i].s.ptr);
        else if (src->vtype == SC_AGG_V_IP && v[i].s.len == 16)
            sc_mapping_ip_format(v[i].s.ptr, part);
        else if (src->vtype == SC_AGG_V_DATE)
            date_text(src, v[i].i, part, sizeof part);
        else if (src->vtype == SC_AGG_V_BOOLEAN)
            snprintf(part, sizeof part, "%s", v[i].i ? "true" : "false");
        else if (src->vtype == SC_AGG_V_DOUBLE)
            fmt_double(part, sc_agg_sortable_to_double(v[i].i));
        else
            snprintf(part, sizeof part, "%lld", (long long)v[i].i);
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%s", i ? "|" : "", part);
    }
    sc_jsonw_kv_str(w, "key_as_string", text);
}

static void write_significant(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r, bool tk)
{
    sc_jsonw_kv_int(w, "doc_count", (int64_t)r->sum_other);
    sc_jsonw_kv_int(w, "bg_count", r->doc_count_error);
    sc_jsonw_key(w, "buckets");
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < r->n_buckets; i++) {
        const sc_agg_bucket *b = &r->buckets[i];
        sc_jsonw_obj_begin(w);
        sc_jsonw_key(w, "key");
        sc_jsonw_strn(w, b->bkey);
        sc_jsonw_kv_int(w, "doc_count", (int64_t)b->doc_count);
        sc_jsonw_kv_double(w, "score", b->dkey);
        sc_jsonw_kv_int(w, "bg_count", b->key);
        if (s->n_subs && b->n_subs == s->n_subs)
            write_aggs(w, s, b->subs, tk);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_arr_end(w);
}

static void write_multi_terms(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r, bool tk)
{
    sc_jsonw_kv_int(w, "doc_count_error_upper_bound", r->doc_count_error);
    sc_jsonw_kv_int(w, "sum_other_doc_count", (int64_t)r->sum_other);
    sc_jsonw_key(w, "buckets");
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < r->n_buckets; i++) {
        sc_jsonw_obj_begin(w);
        write_multi_key(w, s, r->buckets[i].bkey);
        sc_jsonw_kv_int(w, "doc_count", (int64_t)r->buckets[i].doc_count);
        if (s->show_term_doc_count_error)
            sc_jsonw_kv_int(w, "doc_count_error_upper_bound", r->buckets[i].doc_count_error);
        if (s->n_subs && r->buckets[i].n_subs == s->n_subs)
            write_aggs(w, s, r->buckets[i].subs, tk);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_arr_end(w);
}

static void write_composite(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r, bool tk)
{
    if (r->n_buckets) {
        sc_jsonw_key(w, "after_key");
        write_composite_key(w, s, r->buckets[r->n_buckets - 1].bkey);
    }
    sc_jsonw_key(w, "buckets");
    sc_jsonw_arr_begin(w);
    for (size_t i = 0; i < r->n_buckets; i++) {
        sc_jsonw_obj_begin(w);
        sc_jsonw_key(w, "key");
        write_composite_key(w, s, r->buckets[i].bkey);
        write_bucket_body(w, s, &r->buckets[i], tk);
        sc_jsonw_obj_end(w);
    }
    sc_jsonw_arr_end(w);
}

/* A bucket's key as text (max_bucket / min_bucket `keys`). */
static void key_text(const sc_agg_spec *t, const sc_agg_bucket *b, char *buf, size_t cap)
{
    switch (t->kind) {
    case SC_AGG_HISTOGRAM: fmt_double(buf, b->dkey); return;
    case SC_AGG_DATE_HISTOGRAM: date_text(t, b->key, buf, cap); return;
    case SC_AGG_TERMS:
    case SC_AGG_RARE_TERMS:
        if (t->vtype == SC_AGG_V_IP && b->bkey.len == 16)
            sc_mapping_ip_format(b->bkey.ptr, buf);
        else if (!sc_agg_vtype_numeric(t->vtype))
            snprintf(buf, cap, "%.*s", (int)b->bkey.len, (const char *)b->bkey.ptr);
        else if (t->vtype == SC_AGG_V_DATE)
            date_text(t, b->key, buf, cap);
        else if (t->vtype == SC_AGG_V_DOUBLE)
            fmt_double(buf, sc_agg_sortable_to_double(b->key));
        else
            snprintf(buf, cap, "%lld", (long long)b->key);
        return;
    case SC_AGG_FILTERS:
        if (b->key >= 0 && (size_t)b->key < t->n_filters && t->filter_names &&
            t->filter_names[b->key])
            snprintf(buf, cap, "%s", t->filter_names[b->key]);
        else
            snprintf(buf, cap, "%s", (size_t)b->key == t->n_filters ? t->other_bucket_key : "");
        return;
    case SC_AGG_RANGE:
        if (b->key >= 0 && (size_t)b->key < t->n_ranges) {
            const sc_agg_range_spec *g = &t->ranges[b->key];
            char from[64], to[64];
            bound_text(t, g->from, from, sizeof from);
            bound_text(t, g->to, to, sizeof to);
            if (g->key)
                snprintf(buf, cap, "%s", g->key);
            else
                snprintf(buf, cap, "%s-%s", from, to);
            return;
        }
        break;
    default: break;
    }
    snprintf(buf, cap, "%lld", (long long)b->key);
}

static void write_pipeline(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r)
{
    if (s->kind == SC_AGG_PERCENTILES_BUCKET) {
        sc_jsonw_key(w, "values");
        if (s->keyed)
            sc_jsonw_obj_begin(w);
        else
            sc_jsonw_arr_begin(w);
        for (size_t i = 0; i < s->n_points && i < r->n_buckets; i++) {
            double v = r->buckets[i].dkey;
            char key[48];
            fmt_double(key, s->points[i]);
            if (s->keyed) {
                kv_value(w, key, v, true);
            } else {
                sc_jsonw_obj_begin(w);
                sc_jsonw_kv_double(w, "key", s->points[i]);
                kv_value(w, "value", v, true);
                sc_jsonw_obj_end(w);
            }
        }
        if (s->keyed)
            sc_jsonw_obj_end(w);
        else
            sc_jsonw_arr_end(w);
        return;
    }
    if (s->kind == SC_AGG_STATS_BUCKET || s->kind == SC_AGG_EXTENDED_STATS_BUCKET) {
        bool has = r->count > 0;
        sc_jsonw_kv_int(w, "count", (int64_t)r->count);
        kv_value(w, "min", r->min, has);
        kv_value(w, "max", r->max, has);
        kv_value(w, "avg", has ? r->sum / (double)r->count : 0, has);
        sc_jsonw_kv_double(w, "sum", r->sum);
        if (s->kind == SC_AGG_EXTENDED_STATS_BUCKET)
            write_extended(w, s, r);
        return;
    }
    kv_value(w, "value", r->sum, r->count > 0);
    if (s->kind == SC_AGG_MIN_BUCKET || s->kind == SC_AGG_MAX_BUCKET) {
        sc_jsonw_key(w, "keys");
        sc_jsonw_arr_begin(w);
        for (size_t i = 0; s->target && i < r->n_buckets; i++) {
            char buf[160];
            key_text(s->target, &r->buckets[i], buf, sizeof buf);
            sc_jsonw_str(w, buf);
        }
        sc_jsonw_arr_end(w);
    }
}

/* Elasticsearch's typed_keys prefix of an aggregation. */
static const char *typed_prefix(const sc_agg_spec *s)
{
    switch (s->kind) {
    case SC_AGG_TERMS:
        if (s->geotile || s->geohash)
            return s->geotile ? "geotile_grid" : "geohash_grid";
        return s->vtype == SC_AGG_V_DOUBLE      ? "dterms"
               : sc_agg_vtype_numeric(s->vtype) ? "lterms"
               : s->vtype == SC_AGG_V_UNMAPPED  ? "umterms"
                                                : "sterms";
    case SC_AGG_SIGNIFICANT_TERMS: return "sigsterms";
    case SC_AGG_RARE_TERMS:
        return sc_agg_vtype_numeric(s->vtype)  ? "lrareterms"
               : s->vtype == SC_AGG_V_UNMAPPED ? "umrareterms"
                                               : "srareterms";
    case SC_AGG_RANGE:
        return s->vtype == SC_AGG_V_DATE ? "date_range"
               : s->vtype == SC_AGG_V_IP ? "ip_range"
                                         : "range";
    case SC_AGG_DIVERSIFIED_SAMPLER: return "sampler"; /* an InternalSampler, as sampler's */
    case SC_AGG_PERCENTILES: return "tdigest_percentiles";
    case SC_AGG_PERCENTILE_RANKS: return "tdigest_percentile_ranks";
    default: return sc__agg_kind_name(s);
    }
}

static void write_one(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r, bool tk)
{
    if (tk) {
        char name[512];
        snprintf(name, sizeof name, "%s#%s", typed_prefix(s), s->name);
        sc_jsonw_key(w, name);
    } else {
        sc_jsonw_key(w, s->name);
    }
    sc_jsonw_obj_begin(w);
    const sc__agg_render *rd = s->user;
    if (rd && rd->meta) {
        sc_jsonw_key(w, "meta");
        sc__api_json_write(w, rd->meta);
    }
    switch (s->kind) {
    case SC_AGG_TERMS: write_terms(w, s, r, tk); break;
    case SC_AGG_RARE_TERMS: write_rare(w, s, r, tk); break;
    case SC_AGG_HISTOGRAM:
    case SC_AGG_DATE_HISTOGRAM: write_histogram(w, s, r, tk); break;
    case SC_AGG_AUTO_DATE_HISTOGRAM: {
        const char *label;
        sc_agg_rounding rr;
        write_histogram(w, s, r, tk);
        sc_agg_auto_rung(r->rung, &s->rounding.tz, &rr, &label);
        sc_jsonw_kv_str(w, "interval", label);
        break;
    }
    case SC_AGG_RANGE: write_range(w, s, r, tk); break;
    case SC_AGG_FILTERS: write_filters(w, s, r, tk); break;
    case SC_AGG_COMPOSITE: write_composite(w, s, r, tk); break;
    case SC_AGG_MULTI_TERMS: write_multi_terms(w, s, r, tk); break;
    case SC_AGG_SIGNIFICANT_TERMS: write_significant(w, s, r, tk); break;
    case SC_AGG_AVG_BUCKET:
    case SC_AGG_MAX_BUCKET:
    case SC_AGG_MIN_BUCKET:
    case SC_AGG_SUM_BUCKET:
    case SC_AGG_STATS_BUCKET:
    case SC_AGG_CUMULATIVE_SUM:
    case SC_AGG_DERIVATIVE:
    case SC_AGG_BUCKET_SCRIPT:
    case SC_AGG_MOVING_FN:
    case SC_AGG_SERIAL_DIFF:
    case SC_AGG_PERCENTILES_BUCKET:
    case SC_AGG_EXTENDED_STATS_BUCKET: write_pipeline(w, s, r); break;
    case SC_AGG_WEIGHTED_AVG:
        kv_value(w, "value", r->sum_sq != 0 ? r->sum / r->sum_sq : 0,
                 r->count > 0 && r->sum_sq != 0);
        break;
    case SC_AGG_CARDINALITY:
        sc_jsonw_kv_int(w, "value", r->hll ? (int64_t)sc_hll_estimate(r->hll) : 0);
        break;
    case SC_AGG_PERCENTILES:
    case SC_AGG_PERCENTILE_RANKS: write_percentiles(w, s, r); break;
    case SC_AGG_MEDIAN_ABSOLUTE_DEVIATION: {
        double mad = NAN;
        if (r->td && sc_tdigest_mad(r->td, &mad) != SC_OK)
            mad = NAN;
        kv_value(w, "value", mad, true);
        break;
    }
    case SC_AGG_GEO_BOUNDS: write_geo_bounds(w, s, r); break;
    case SC_AGG_TOP_HITS:
    case SC_AGG_TOP_METRICS: sc__agg_write_hits(w, s, r); break;
    case SC_AGG_GEO_CENTROID:
        if (r->count)
            write_point(w, "location", r->sum / (double)r->count, r->sum_sq / (double)r->count);
        sc_jsonw_kv_int(w, "count", (int64_t)r->count);
        break;
    case SC_AGG_FILTER:
    case SC_AGG_MISSING:
    case SC_AGG_GLOBAL:
    case SC_AGG_NESTED:
    case SC_AGG_REVERSE_NESTED:
    case SC_AGG_SAMPLER:
    case SC_AGG_DIVERSIFIED_SAMPLER:
        if (r->n_buckets == 1)
            write_bucket_body(w, s, &r->buckets[0], tk);
        break;
    default: write_metric(w, s, r); break;
    }
    sc_jsonw_obj_end(w);
}

/* The sub-aggregations of spec as members of the current object. */
static void write_aggs(sc_jsonw *w, const sc_agg_spec *spec, sc_agg_result *const *subs,
                       bool typed_keys)
{
    for (size_t i = 0; i < spec->n_subs; i++) {
        const sc_agg_spec *s = spec->subs[i];
        /* bucket_sort shows only in its parent's buckets; a derivative has no value in the
         * first bucket and is left out there, as in Elasticsearch */
        if (!subs[i] || s->kind == SC_AGG_BUCKET_SORT || s->kind == SC_AGG_BUCKET_SELECTOR ||
            ((s->kind == SC_AGG_DERIVATIVE || s->kind == SC_AGG_BUCKET_SCRIPT ||
              s->kind == SC_AGG_MOVING_FN || s->kind == SC_AGG_SERIAL_DIFF) &&
             subs[i]->count == 0))
            continue;
        write_one(w, s, subs[i], typed_keys);
    }
}

void sc__agg_write(sc_jsonw *w, const sc_agg_spec *root, const sc_agg_result *r, bool typed_keys)
{
    sc_jsonw_key(w, "aggregations");
    sc_jsonw_obj_begin(w);
    if (r && r->n_buckets == 1 && r->buckets[0].n_subs == root->n_subs)
        write_aggs(w, root, r->buckets[0].subs, typed_keys);
    sc_jsonw_obj_end(w);
}

void sc__agg_write_error(sc_rest_req *req, sc_rest_resp *resp, const sc_agg_parse_error *err)
{
    if (!err->shard_level && !err->caused_by) {
        sc_rest_error(req, resp, err->status ? err->status : 400,
                      err->type ? err->type : "parsing_exception", err->reason, NULL, 0);
        return;
    }
    int status = err->status ? err->status : 400;
    sc_jsonw w;
    sc_rest_json_begin(req, resp, status, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "error");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "root_cause");
    sc_jsonw_arr_begin(&w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "type", err->type);
    sc_jsonw_kv_str(&w, "reason", err->reason);
    sc_jsonw_obj_end(&w);
    sc_jsonw_arr_end(&w);
    if (err->shard_level) {
        sc_jsonw_kv_str(&w, "type", "search_phase_execution_exception");
        sc_jsonw_kv_str(&w, "reason", "all shards failed");
        sc_jsonw_kv_str(&w, "phase", "query");
        sc_jsonw_kv_bool(&w, "grouped", true);
    } else {
        sc_jsonw_kv_str(&w, "type", err->type);
        sc_jsonw_kv_str(&w, "reason", err->reason);
    }
    sc_jsonw_key(&w, "caused_by");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "type", err->shard_level ? err->type : err->caused_by);
    sc_jsonw_kv_str(&w, "reason", err->reason);
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    sc_jsonw_kv_int(&w, "status", status);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
}

static void free_tree(sc_agg_spec *s)
{
    if (!s)
        return; /* a slot a failed parse left empty */
    sc__agg_render *r = s->user;
    if (r) {
        sc_date_format_free(r->date_format);
        r->date_format = NULL;
        sc_script_env_free(r->env);
        r->env = NULL;
    }
    for (size_t i = 0; i < s->n_subs; i++)
        free_tree(s->subs[i]);
    for (size_t i = 0; i < s->n_sources; i++)
        free_tree(s->sources[i]);
}

void sc__agg_spec_free(sc_agg_spec *root)
{
    if (root)
        free_tree(root);
}
