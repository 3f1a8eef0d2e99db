/* The `aggs` / `aggregations` of a _search body -> the aggregation spec tree (search/agg.h),
 * with one target index's mapping: field value types resolved, `missing` values and date
 * bounds encoded as the field's doc values, date intervals, offsets and time zones compiled,
 * filter queries parsed with the query DSL. Errors are Elasticsearch's (types and reasons),
 * always 4xx. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/agg_internal.h"

/* ---- kinds ---- */

typedef struct kind_name {
    const char *name;
    sc_agg_kind kind;
} kind_name;

static const kind_name kinds[] = {
    {"terms", SC_AGG_TERMS},
    {"histogram", SC_AGG_HISTOGRAM},
    {"date_histogram", SC_AGG_DATE_HISTOGRAM},
    {"range", SC_AGG_RANGE},
    {"date_range", SC_AGG_RANGE},
    {"ip_range", SC_AGG_RANGE},
    {"filter", SC_AGG_FILTER},
    {"filters", SC_AGG_FILTERS},
    {"missing", SC_AGG_MISSING},
    {"global", SC_AGG_GLOBAL},
    {"sampler", SC_AGG_SAMPLER},
    {"diversified_sampler", SC_AGG_DIVERSIFIED_SAMPLER},
    {"geotile_grid", SC_AGG_TERMS}, /* spec->geotile */
    {"geohash_grid", SC_AGG_TERMS}, /* spec->geohash */
    {"min", SC_AGG_MIN},
    {"max", SC_AGG_MAX},
    {"sum", SC_AGG_SUM},
    {"avg", SC_AGG_AVG},
    {"value_count", SC_AGG_VALUE_COUNT},
    {"stats", SC_AGG_STATS},
    {"extended_stats", SC_AGG_EXTENDED_STATS},
    {"composite", SC_AGG_COMPOSITE},
    {"multi_terms", SC_AGG_MULTI_TERMS},
    {"avg_bucket", SC_AGG_AVG_BUCKET},
    {"max_bucket", SC_AGG_MAX_BUCKET},
    {"min_bucket", SC_AGG_MIN_BUCKET},
    {"sum_bucket", SC_AGG_SUM_BUCKET},
    {"stats_bucket", SC_AGG_STATS_BUCKET},
    {"cumulative_sum", SC_AGG_CUMULATIVE_SUM},
    {"derivative", SC_AGG_DERIVATIVE},
    {"bucket_sort", SC_AGG_BUCKET_SORT},
    {"auto_date_histogram", SC_AGG_AUTO_DATE_HISTOGRAM},
    {"weighted_avg", SC_AGG_WEIGHTED_AVG},
    {"significant_terms", SC_AGG_SIGNIFICANT_TERMS},
    {"cardinality", SC_AGG_CARDINALITY},
    {"percentiles", SC_AGG_PERCENTILES},
    {"percentile_ranks", SC_AGG_PERCENTILE_RANKS},
    {"median_absolute_deviation", SC_AGG_MEDIAN_ABSOLUTE_DEVIATION},
    {"geo_bounds", SC_AGG_GEO_BOUNDS},
    {"geo_centroid", SC_AGG_GEO_CENTROID},
    {"top_hits", SC_AGG_TOP_HITS},
    {"top_metrics", SC_AGG_TOP_METRICS},
    {"bucket_script", SC_AGG_BUCKET_SCRIPT},
    {"bucket_selector", SC_AGG_BUCKET_SELECTOR},
    {"moving_fn", SC_AGG_MOVING_FN},
    {"serial_diff", SC_AGG_SERIAL_DIFF},
    {"percentiles_bucket", SC_AGG_PERCENTILES_BUCKET},
    {"extended_stats_bucket", SC_AGG_EXTENDED_STATS_BUCKET},
    {"rare_terms", SC_AGG_RARE_TERMS},
    {"nested", SC_AGG_NESTED},
    {"reverse_nested", SC_AGG_REVERSE_NESTED},
};

/* Elasticsearch aggregation types scry does not build yet (a clear 400 instead of "unknown"). */
static const char *const later[] = {"significant_text",
                                    "diversified_sampler",
                                    "adjacency_matrix",
                                    "variable_width_histogram",
                                    "scripted_metric",
                                    "string_stats",
                                    "boxplot",
                                    "rate",
                                    "t_test",
                                    "matrix_stats",
                                    "children",
                                    "parent",
                                    "random_sampler",
                                    "frequent_item_sets",
                                    "categorize_text",
                                    "geo_distance",
                                    NULL};

const char *sc__agg_kind_name(const sc_agg_spec *s)
{
    if (s->kind == SC_AGG_RANGE && s->vtype == SC_AGG_V_DATE)
        return "date_range";
    if (s->kind == SC_AGG_RANGE && s->vtype == SC_AGG_V_IP)
        return "ip_range";
    if (s->kind == SC_AGG_TERMS && (s->geotile || s->geohash))
        return s->geotile ? "geotile_grid" : "geohash_grid";
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].kind == s->kind)
            return kinds[i].name;
    return "unknown";
}

static bool is_metric(sc_agg_kind k)
{
    return (k >= SC_AGG_MIN && k <= SC_AGG_EXTENDED_STATS) || k == SC_AGG_WEIGHTED_AVG ||
           k == SC_AGG_CARDINALITY || k == SC_AGG_PERCENTILES || k == SC_AGG_PERCENTILE_RANKS ||
           k == SC_AGG_MEDIAN_ABSOLUTE_DEVIATION || k == SC_AGG_GEO_BOUNDS ||
           k == SC_AGG_GEO_CENTROID || k == SC_AGG_TOP_HITS || k == SC_AGG_TOP_METRICS;
}

/* ---- the tree ---- */

static bool parse_aggs(sc__agg_pctx *c, const json_t *aggs, sc_agg_spec *parent, int depth);

static bool find_kind(sc__agg_pctx *c, const char *name, const json_t *body, const char **type,
                      const json_t **params, const json_t **subs, const json_t **meta)
{
    *type = NULL;
    *subs = NULL;
    *meta = NULL;
    if (!json_is_object(body))
        return sc__agg_fail(c, 400, "parsing_exception",
                            "Expected [START_OBJECT] under [%s], but got a [VALUE] in [%s]", name,
                            name);
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)body, k, v) {
        if (!strcmp(k, "aggs") || !strcmp(k, "aggregations")) {
            if (*subs)
                return sc__agg_fail(c, 400, "parsing_exception",
                                    "Found two sub aggregation definitions under [%s]", name);
            *subs = v;
        } else if (!strcmp(k, "meta")) {
            *meta = v;
        } else if (*type) {
            return sc__agg_fail(c, 400, "parsing_exception",
                                "Found two aggregation type definitions in [%s]: [%s] and [%s]",
                                name, *type, k);
        } else {
            *type = k;
            *params = v;
        }
    }
    if (!*type)
        return sc__agg_fail(c, 400, "parsing_exception", "Missing definition for aggregation [%s]",
                            name);
    return true;
}

static bool parse_one(sc__agg_pctx *c, const char *name, const json_t *body, sc_agg_spec *parent,
                      int depth, sc_agg_spec **out)
{
    const char *type;
    const json_t *params = NULL, *subs, *meta;
    if (!find_kind(c, name, body, &type, &params, &subs, &meta))
        return false;
    sc_agg_spec *s = sc_arena_calloc(c->req->arena, 1, sizeof *s);
    if (!s)
        return sc__agg_oom_err(c);
    s->name = sc_arena_strndup(c->req->arena, name, strlen(name));
    s->kind = SC_AGG_KIND_COUNT_;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kinds[i].name, type))
            s->kind = kinds[i].kind;
    if (s->kind == SC_AGG_KIND_COUNT_) {
        for (const char *const *l = later; *l; l++)
            if (!strcmp(*l, type))
                return sc__agg_fail(c, 400, "illegal_argument_exception",
                                    "aggregation type [%s] of [%s] is not supported yet", type,
                                    name);
        c->err->caused_by = "named_object_not_found_exception";
        return sc__agg_fail(c, 400, "parsing_exception", "Unknown aggregation type [%s]", type);
    }
    if (s->kind == SC_AGG_COMPOSITE && parent->kind != SC_AGG_ROOT)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[composite] aggregation cannot be used with a parent aggregation "
                            "of type: [%s]",
                            sc__agg_kind_name(parent));
    if (s->kind == SC_AGG_GLOBAL && parent->kind != SC_AGG_ROOT)
        return sc__agg_fail(c, 400, "aggregation_initialization_exception",
                            "Aggregator [%s] of type [global] cannot be a sub-aggregation", name);
    if (subs && (is_metric(s->kind) || sc_agg_kind_pipeline(s->kind)))
        return sc__agg_fail(c, 400, "aggregation_initialization_exception",
                            "Aggregator [%s] of type [%s] cannot accept sub-aggregations", name,
                            type);
    if (!json_is_object(params))
        return sc__agg_fail(c, 400, "parsing_exception", "[%s] expected an object for [%s]", type,
                            name);
    if (meta) {
        if (!json_is_object(meta))
            return sc__agg_fail(c, 400, "parsing_exception", "[meta] of [%s] must be an object",
                                name);
        sc__agg_render *r = sc__agg_render_of(c->req, s);
        if (!r)
            return sc__agg_oom_err(c);
        r->meta = meta;
    }
    if (s->kind == SC_AGG_NESTED && c->in_nested)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[nested] aggregation [%s] inside another [nested] aggregation: "
                            "multi-level nesting is not supported",
                            name);
    if (s->kind == SC_AGG_TOP_HITS && c->in_nested)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[top_hits] aggregation [%s] over nested documents is not supported "
                            "yet (put it under a [reverse_nested] aggregation)",
                            name);
    if (s->kind == SC_AGG_REVERSE_NESTED && !c->in_nested)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Reverse nested aggregation [%s] can only be used inside a [nested] "
                            "aggregation",
                            name);
    bool was_nested = c->in_nested;
    if (s->kind == SC_AGG_NESTED || s->kind == SC_AGG_REVERSE_NESTED)
        c->in_nested = s->kind == SC_AGG_NESTED;
    /* subs first: a terms order may name one; a spec that fails frees what it attached
     * (date formats, script environments), its parent never sees it */
    bool subs_ok = !subs || parse_aggs(c, subs, s, depth + 1);
    c->in_nested = was_nested;
    if (!subs_ok || !sc__agg_parse_params(c, type, params, s)) {
        sc__agg_spec_free(s);
        return false;
    }
    *out = s;
    return true;
}

static bool parse_aggs(sc__agg_pctx *c, const json_t *aggs, sc_agg_spec *parent, int depth)
{
    if (depth > 16)
        return sc__agg_fail(c, 400, "parsing_exception", "aggregations are nested too deeply");
    if (!json_is_object(aggs))
        return sc__agg_fail(c, 400, "parsing_exception", "[aggs] must be an object");
    size_t n = json_object_size(aggs);
    parent->subs = sc_arena_calloc(c->req->arena, n ? n : 1, sizeof *parent->subs);
    if (!parent->subs)
        return sc__agg_oom_err(c);
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)aggs, k, v) {
        if (!*k || strpbrk(k, "[]>"))
            return sc__agg_fail(c, 400, "parsing_exception",
                                "Invalid aggregation name [%s]. Aggregation names can contain any "
                                "character except '[', ']', and '>'",
                                k);
        if (!parse_one(c, k, v, parent, depth, &parent->subs[parent->n_subs]))
            return false;
        parent->n_subs++;
    }
    return sc__agg_resolve_pipelines(c, parent);
}

bool sc__agg_parse(sc_rest_req *req, sc_index *ix, const json_t *aggs, sc_agg_spec **out,
                   sc_agg_parse_error *err)
{
    return sc__agg_parse_mapped(req, ix, NULL, aggs, out, err);
}

bool sc__agg_parse_mapped(sc_rest_req *req, sc_index *ix, sc_mapping *m, const json_t *aggs,
                          sc_agg_spec **out, sc_agg_parse_error *err)
{
    memset(err, 0, sizeof *err);
    sc__agg_pctx c = {.req = req,
                      .ix = ix,
                      .m = m    ? sc_mapping_ref(m)
                           : ix ? sc_index_mapping(ix)
                                : NULL,
                      .err = err};
    sc_agg_spec *root = sc_arena_calloc(req->arena, 1, sizeof *root);
    bool ok = root ? parse_aggs(&c, aggs, root, 0) : sc__agg_oom_err(&c);
    if (root) {
        root->kind = SC_AGG_ROOT;
        root->name = "";
    }
    sc_mapping_unref(c.m);
    if (!ok && root)
        sc__agg_spec_free(root);
    *out = ok ? root : NULL;
    return ok;
}
