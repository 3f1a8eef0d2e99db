/* top_hits and top_metrics parameters (search/agg.h SC_AGG_TOP_HITS / SC_AGG_TOP_METRICS):
 * size, from, a sort resolved against the mapping (numeric doc values, keyword terms, _score,
 * _doc), _source filtering (applied when the response is written) and top_metrics' metric
 * fields. Limits as Elasticsearch's defaults: from + size <= 100
 * (index.max_inner_result_window), top_metrics size <= 10 (index.top_metrics_max_size). */
#include <stdio.h>
#include <string.h>

#include "api/agg_internal.h"

#define MAX_INNER_WINDOW 100
#define TOP_METRICS_MAX_SIZE 10

/* One sort entry: "f" / "_score" / {"f": "desc"} / {"f": {"order", "mode", "missing",
 * "unmapped_type"}}. */
static bool sort_entry(sc__agg_pctx *c, const char *type, const char *name, const json_t *opts,
                       sc_sort_spec *f)
{
    memset(f, 0, sizeof *f);
    const char *order = NULL;
    bool unmapped_ok = false;
    if (json_is_string(opts)) {
        order = json_string_value(opts);
    } else if (json_is_object(opts)) {
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)opts, k, v) {
            if (!strcmp(k, "order") && json_is_string(v)) {
                order = json_string_value(v);
            } else if (!strcmp(k, "missing") && json_is_string(v)) {
                f->missing_first = !strcmp(json_string_value(v), "_first");
            } else if (!strcmp(k, "unmapped_type") && json_is_string(v)) {
                unmapped_ok = true;
            } else if (!strcmp(k, "mode") && json_is_string(v)) {
                const char *m = json_string_value(v);
                f->mode = !strcmp(m, "min")   ? SC_SORT_MODE_MIN
                          : !strcmp(m, "max") ? SC_SORT_MODE_MAX
                          : !strcmp(m, "avg") ? SC_SORT_MODE_AVG
                          : !strcmp(m, "sum") ? SC_SORT_MODE_SUM
                                              : (sc_sort_mode)-1;
                if ((int)f->mode < 0)
                    return sc__agg_fail(c, 400, "x_content_parse_exception",
                                        "[%s] unknown sort mode [%s] for [%s]", type, m, name);
            } else if (strcmp(k, "format") && strcmp(k, "numeric_type")) {
                return sc__agg_fail(c, 400, "x_content_parse_exception",
                                    "[%s] sort option [%s] is not supported", type, k);
            }
        }
    } else if (opts) {
        return sc__agg_fail(c, 400, "x_content_parse_exception",
                            "[%s] malformed sort entry for [%s]", type, name);
    }
    if (!strcmp(name, "_score")) {
        f->kind = SC_SORT_BY_SCORE;
        f->desc = true;
    } else if (!strcmp(name, "_doc")) {
        f->kind = SC_SORT_BY_DOC;
    } else {
        char *copy = sc_arena_strndup(c->req->arena, name, strlen(name));
        if (!copy)
            return sc__agg_oom_err(c);
        f->field = sc_slice_cstr(copy);
        f->kind = SC_SORT_BY_NUMERIC;
        const sc_mapping_field *mf = c->m ? sc_mapping_find(c->m, f->field) : NULL;
        if (!mf && !unmapped_ok) {
            c->err->shard_level = true;
            return sc__agg_fail(c, 400, "query_shard_exception",
                                "No mapping found for [%s] in order to sort on", name);
        }
        switch (mf ? mf->type : SC_MAPPING_LONG) {
        case SC_MAPPING_KEYWORD: f->kind = SC_SORT_BY_KEYWORD; break;
        case SC_MAPPING_DOUBLE:
        case SC_MAPPING_FLOAT:
        case SC_MAPPING_HALF_FLOAT: f->is_double = true; break;
        case SC_MAPPING_LONG:
        case SC_MAPPING_INTEGER:
        case SC_MAPPING_SHORT:
        case SC_MAPPING_BYTE:
        case SC_MAPPING_UNSIGNED_LONG:
        case SC_MAPPING_SCALED_FLOAT:
        case SC_MAPPING_DATE:
        case SC_MAPPING_BOOLEAN: break;
        default:
            c->err->shard_level = true;
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "sorting [%s] on field [%s] of type [%s] is not supported", type,
                                name, sc_mapping_type_name(mf->type));
        }
        if (f->kind == SC_SORT_BY_KEYWORD &&
            (f->mode == SC_SORT_MODE_AVG || f->mode == SC_SORT_MODE_SUM))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "only sort modes min and max apply to keyword field [%s]", name);
    }
    if (order) {
        if (!strcmp(order, "desc"))
            f->desc = true;
        else if (!strcmp(order, "asc"))
            f->desc = false;
        else
            return sc__agg_fail(c, 400, "x_content_parse_exception", "[%s] unknown order [%s]",
                                type, order);
    }
    return true;
}

/* `sort`: an entry or an array of them into s->hit_sort. A lone _score descending is left as
 * the default (n_hit_sort 0), as the search's own sort. */
static bool parse_sort(sc__agg_pctx *c, const char *type, const json_t *sort, sc_agg_spec *s)
{
    size_t n = json_is_array(sort) ? json_array_size(sort) : 1;
    if (n > 16)
        return sc__agg_fail(c, 400, "illegal_argument_exception", "[%s] too many sort fields",
                            type);
    sc_sort_spec *f = sc_arena_calloc(c->req->arena, n ? n : 1, sizeof *f);
    if (!f)
        return sc__agg_oom_err(c);
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_is_array(sort) ? json_array_get(sort, i) : sort;
        bool ok;
        if (json_is_string(x)) {
            ok = sort_entry(c, type, json_string_value(x), NULL, &f[i]);
        } else if (json_is_object(x) && json_object_size(x) == 1) {
            void *it = json_object_iter((json_t *)x);
            ok = sort_entry(c, type, json_object_iter_key(it), json_object_iter_value(it), &f[i]);
        } else {
            ok = sc__agg_fail(c, 400, "x_content_parse_exception",
                              "[%s] sort entries must be strings or single-key objects", type);
        }
        if (!ok)
            return false;
    }
    if (n == 1 && f[0].kind == SC_SORT_BY_SCORE && f[0].desc)
        n = 0;
    s->hit_sort = f;
    s->n_hit_sort = n;
    return true;
}

static bool parse_top_hits(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"size", "from", "sort", "_source", "track_scores", NULL};
    static const char *const later[] = {"highlight",
                                        "explain",
                                        "version",
                                        "stored_fields",
                                        "script_fields",
                                        "docvalue_fields",
                                        "fields",
                                        "seq_no_primary_term",
                                        NULL};
    for (const char *const *l = later; *l; l++)
        if (json_object_get(p, *l))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[top_hits] option [%s] of [%s] is not supported yet", *l, s->name);
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    uint64_t size = 3, from = 0;
    if (!sc__agg_get_uint(c, p, "size", &size, type) ||
        !sc__agg_get_uint(c, p, "from", &from, type))
        return false;
    if (from + size > MAX_INNER_WINDOW)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Top hits result window is too large, the top hits aggregator [%s]'s "
                            "from + size must be less than or equal to: [%d] but was [%llu]. "
                            "This limit can be set by changing the "
                            "[index.max_inner_result_window] index level setting.",
                            s->name, MAX_INNER_WINDOW, (unsigned long long)(from + size));
    s->size = (uint32_t)size;
    s->from = (uint32_t)from;
    const json_t *sort = json_object_get(p, "sort");
    if (sort && !parse_sort(c, type, sort, s))
        return false;
    const json_t *src = json_object_get(p, "_source");
    s->hit_source = !json_is_false(src);
    if (src && !json_is_boolean(src)) {
        if (!json_is_string(src) && !json_is_array(src) && !json_is_object(src))
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[%s] [_source] must be a boolean, string, array or object", type);
        sc__agg_render *r = sc__agg_render_of(c->req, s);
        if (!r)
            return sc__agg_oom_err(c);
        r->source_filter = src;
    }
    return true;
}

/* One top_metrics metric: {"field": f} (numeric fields). */
static bool metric_field(sc__agg_pctx *c, const char *type, const json_t *m, sc_agg_spec **out)
{
    if (!json_is_object(m) || !json_is_string(json_object_get(m, "field")) ||
        json_object_size(m) != 1)
        return sc__agg_fail(c, 400, "x_content_parse_exception",
                            "[%s] each of [metrics] must be an object with a [field]", type);
    sc_agg_spec *ms = sc_arena_calloc(c->req->arena, 1, sizeof *ms);
    if (!ms)
        return sc__agg_oom_err(c);
    ms->kind = SC_AGG_MAX; /* a numeric field kind for the type checks */
    ms->name = json_string_value(json_object_get(m, "field"));
    const sc_mapping_field *mf;
    if (!sc__agg_field_common(c, type, m, ms, &mf))
        return false;
    *out = ms;
    return true;
}

static bool parse_top_metrics(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"metrics", "sort", "size", NULL};
    if (!sc__agg_known_keys(c, type, p, keys))
        return false;
    uint64_t size = 1;
    if (!sc__agg_get_uint(c, p, "size", &size, type))
        return false;
    if (size > TOP_METRICS_MAX_SIZE)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[top_metrics.size] must not be more than [%d] but was [%llu]. This "
                            "limit can be set by changing the [index.top_metrics_max_size] index "
                            "level setting.",
                            TOP_METRICS_MAX_SIZE, (unsigned long long)size);
    if (size == 0)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[size] must be more than 0 but was [0]");
    s->size = (uint32_t)size;
    const json_t *sort = json_object_get(p, "sort");
    if (!sort)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[sort] is required for [top_metrics] aggregation [%s]", s->name);
    if (json_is_array(sort) && json_array_size(sort) != 1)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "only one sort is supported for [top_metrics] aggregation [%s]",
                            s->name);
    if (!parse_sort(c, type, sort, s))
        return false;
    const json_t *m = json_object_get(p, "metrics");
    size_t n = json_is_array(m) ? json_array_size(m) : m ? 1 : 0;
    if (n == 0)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[metrics] is required for [top_metrics] aggregation [%s]", s->name);
    if (n > 64)
        return sc__agg_fail(c, 400, "illegal_argument_exception", "[%s] too many metrics", type);
    sc_agg_spec **ms = sc_arena_calloc(c->req->arena, n, sizeof *ms);
    if (!ms)
        return sc__agg_oom_err(c);
    for (size_t i = 0; i < n; i++)
        if (!metric_field(c, type, json_is_array(m) ? json_array_get(m, i) : m, &ms[i]))
            return false;
    s->metrics = ms;
    s->n_metrics = n;
    return true;
}

bool sc__agg_parse_hits(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    return s->kind == SC_AGG_TOP_HITS ? parse_top_hits(c, type, p, s)
                                      : parse_top_metrics(c, type, p, s);
}
