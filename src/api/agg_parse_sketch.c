/* The parameters of the sketch metrics (agg_internal.h): cardinality (`precision_threshold` ->
 * the HyperLogLog++ precision), percentiles / percentile_ranks (`percents` / `values`, `keyed`,
 * `tdigest.compression`, `tdigest.execution_hint`) and median_absolute_deviation
 * (`compression`, `execution_hint`), with Elasticsearch's errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/agg_internal.h"

/* cardinality: precision_threshold -> the HyperLogLog++ precision (search/hll.h). */
static bool parse_cardinality(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"field",  "missing",    "format", "precision_threshold",
                                       "script", "value_type", "rehash", "execution_hint",
                                       NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    const sc_mapping_field *mf;
    uint64_t t = SC_HLL_DEFAULT_THRESHOLD;
    if (!sc__agg_field_common(c, type, p, s, &mf) ||
        !sc__agg_get_uint(c, p, "precision_threshold", &t, type))
        return false;
    s->hll_precision = sc_hll_precision_for_threshold(t > INT64_MAX ? INT64_MAX : (int64_t)t);
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* percents (percentiles, default 1 5 25 50 75 95 99) or values (percentile_ranks): numbers,
 * kept ascending and distinct. */
static bool parse_points(sc__agg_pctx *c, const json_t *p, sc_agg_spec *s)
{
    static const double def[] = {1, 5, 25, 50, 75, 95, 99};
    bool ranks = s->kind == SC_AGG_PERCENTILE_RANKS;
    const char *key = ranks ? "values" : "percents";
    const json_t *v = json_object_get(p, key);
    if (!v && ranks)
        return sc__agg_fail(c, 400, "illegal_argument_exception", "[values] must not be null: [%s]",
                            s->name);
    size_t n = v ? json_array_size(v) : sizeof def / sizeof def[0];
    if (v && (!json_is_array(v) || n == 0))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[%s] must not be an empty array: [%s]", key, s->name);
    double *pts = sc_arena_alloc(c->req->arena, n * sizeof *pts);
    if (!pts)
        return sc__agg_oom_err(c);
    for (size_t i = 0; i < n; i++) {
        if (!v) {
            pts[i] = def[i];
            continue;
        }
        const json_t *x = json_array_get(v, i);
        if (!json_is_number(x))
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[%s] failed to parse field [%s]", sc__agg_kind_name(s), key);
        pts[i] = json_number_value(x);
        if (!ranks && !(pts[i] >= 0 && pts[i] <= 100))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "percent must be in [0,100], got [%g]: [%s]", pts[i], s->name);
    }
    qsort(pts, n, sizeof *pts, cmp_double);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!m || pts[i] != pts[m - 1])
            pts[m++] = pts[i];
    s->points = pts;
    s->n_points = m;
    return true;
}

/* percentiles / percentile_ranks: the points, keyed (default true), tdigest.compression. */
static bool parse_percentiles(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"field",  "missing",    "format",  "percents",
                                       "values", "keyed",      "tdigest", "hdr",
                                       "script", "value_type", "method",  NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    if (json_object_get(p, s->kind == SC_AGG_PERCENTILES ? "values" : "percents"))
        return sc__agg_fail(c, 400, "x_content_parse_exception", "[%s] unknown field [%s]", type,
                            s->kind == SC_AGG_PERCENTILES ? "values" : "percents");
    if (json_object_get(p, "hdr"))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "the hdr method of [%s] is not supported yet [%s]", type, s->name);
    const sc_mapping_field *mf;
    s->keyed = true;
    s->compression = SC_TDIGEST_DEFAULT_COMPRESSION;
    if (!sc__agg_field_common(c, type, p, s, &mf) ||
        !sc__agg_get_bool(c, p, "keyed", &s->keyed, type) || !parse_points(c, p, s))
        return false;
    const json_t *td = json_object_get(p, "tdigest");
    if (td) {
        static const char *const tkeys[] = {"compression", "execution_hint", NULL};
        if (!json_is_object(td) || !sc__agg_known_keys(c, "tdigest", td, tkeys) ||
            !sc__agg_get_double(c, td, "compression", &s->compression, "tdigest"))
            return json_is_object(td) ? false
                                      : sc__agg_fail(c, 400, "x_content_parse_exception",
                                                     "[%s] [tdigest] must be an object", type);
        const json_t *h = json_object_get(td, "execution_hint");
        const char *hs = json_is_string(h) ? json_string_value(h) : "";
        if (h && strcmp(hs, "default") && strcmp(hs, "high_accuracy"))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "Invalid execution_hint [%s], valid values are [default, "
                                "high_accuracy]",
                                hs);
    }
    if (!(s->compression >= 0))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[compression] must be greater than or equal to 0. Found [%g] in [%s]",
                            s->compression, s->name);
    /* the digest's range; Elasticsearch has no upper bound, larger values only cost memory */
    if (s->compression < SC_TDIGEST_MIN_COMPRESSION)
        s->compression = SC_TDIGEST_MIN_COMPRESSION;
    if (s->compression > SC_TDIGEST_MAX_COMPRESSION)
        s->compression = SC_TDIGEST_MAX_COMPRESSION;
    return true;
}

/* median_absolute_deviation: compression (1000, Elasticsearch's default), execution_hint. */
static bool parse_mad(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"field",  "missing",        "format",     "compression",
                                       "script", "execution_hint", "value_type", NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    const sc_mapping_field *mf;
    s->compression = 1000;
    if (!sc__agg_field_common(c, type, p, s, &mf) ||
        !sc__agg_get_double(c, p, "compression", &s->compression, type))
        return false;
    const json_t *h = json_object_get(p, "execution_hint");
    const char *hs = json_is_string(h) ? json_string_value(h) : "";
    if (h && strcmp(hs, "default") && strcmp(hs, "high_accuracy"))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Invalid execution_hint [%s], valid values are [default, "
                            "high_accuracy]",
                            hs);
    if (!(s->compression >= 0))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[compression] must be greater than or equal to 0. Found [%g] in [%s]",
                            s->compression, s->name);
    if (s->compression < SC_TDIGEST_MIN_COMPRESSION)
        s->compression = SC_TDIGEST_MIN_COMPRESSION;
    if (s->compression > SC_TDIGEST_MAX_COMPRESSION)
        s->compression = SC_TDIGEST_MAX_COMPRESSION;
    return true;
}

bool sc__agg_parse_sketch(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    switch (s->kind) {
    case SC_AGG_CARDINALITY: return parse_cardinality(c, type, p, s);
    case SC_AGG_MEDIAN_ABSOLUTE_DEVIATION: return parse_mad(c, type, p, s);
    default: return parse_percentiles(c, type, p, s);
    }
}
