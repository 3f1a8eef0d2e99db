/* Pipeline aggregations' parameters (agg_internal.h): buckets_path ("sales_per_month>sales",
 * "the_stats.avg", "_count", "_key"), gap_policy, and bucket_sort's sort / from / size. Paths
 * are resolved once the whole level is parsed (a pipeline may name a later sibling). */
#include <stdio.h>
#include <string.h>

#include "api/agg_internal.h"

static bool is_multi_bucket(sc_agg_kind k)
{
    return k == SC_AGG_TERMS || k == SC_AGG_RARE_TERMS || k == SC_AGG_HISTOGRAM ||
           k == SC_AGG_DATE_HISTOGRAM || k == SC_AGG_RANGE || k == SC_AGG_FILTERS ||
           k == SC_AGG_MULTI_TERMS || k == SC_AGG_COMPOSITE;
}

/* moving_fn's window / shift / script, serial_diff's lag, percentiles_bucket's percents and
 * keyed, extended_stats_bucket's sigma. */
static bool more_params(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    if (s->kind == SC_AGG_MOVING_FN) {
        const json_t *w = json_object_get(p, "window"), *sh = json_object_get(p, "shift");
        if (!json_is_integer(w) || json_integer_value(w) <= 0 || json_integer_value(w) > INT32_MAX)
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[window] must be a positive, non-zero integer.");
        if (sh && (!json_is_integer(sh) || json_integer_value(sh) < INT32_MIN ||
                   json_integer_value(sh) > INT32_MAX))
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[%s] [shift] must be an "
                                "integer",
                                type);
        if (!json_object_get(p, "script"))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[script] is required for [moving_fn] aggregation [%s]", s->name);
        s->window = (uint32_t)json_integer_value(w);
        s->shift = sh ? (int32_t)json_integer_value(sh) : 0;
    } else if (s->kind == SC_AGG_SERIAL_DIFF) {
        uint64_t lag = 1;
        if (!sc__agg_get_uint(c, p, "lag", &lag, type))
            return false;
        if (lag == 0 || lag > INT32_MAX)
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[lag] must be a positive integer: [%s]", s->name);
        s->window = (uint32_t)lag;
    } else if (s->kind == SC_AGG_PERCENTILES_BUCKET) {
        static const double dflt[] = {1, 5, 25, 50, 75, 95, 99};
        const json_t *pc = json_object_get(p, "percents");
        s->keyed = true;
        if (!sc__agg_get_bool(c, p, "keyed", &s->keyed, type))
            return false;
        if (!pc) {
            s->points = dflt;
            s->n_points = 7;
            return true;
        }
        if (!json_is_array(pc) || json_array_size(pc) == 0 || json_array_size(pc) > 1000)
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[percents] must be a non-empty array of numbers in [%s]", s->name);
        double *pts = sc_arena_alloc(c->req->arena, json_array_size(pc) * sizeof *pts);
        if (!pts)
            return sc__agg_oom_err(c);
        for (size_t i = 0; i < json_array_size(pc); i++) {
            const json_t *x = json_array_get(pc, i);
            double v = json_number_value(x);
            if (!json_is_number(x) || !(v >= 0 && v <= 100))
                return sc__agg_fail(c, 400, "illegal_argument_exception",
                                    "percent must be in [0,100], got [%g]: [%s]", v, s->name);
            pts[i] = v;
        }
        s->points = pts;
        s->n_points = json_array_size(pc);
    } else if (s->kind == SC_AGG_EXTENDED_STATS_BUCKET) {
        s->sigma = 2;
        if (!sc__agg_get_double(c, p, "sigma", &s->sigma, type))
            return false;
        if (!(s->sigma >= 0))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[sigma] must be greater than or equal to 0. Found [%g] in [%s]",
                                s->sigma, s->name);
    }
    return true;
}

bool sc__agg_parse_pipeline(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s)
{
    static const char *const keys[] = {"buckets_path", "gap_policy", "format", "sort",
                                       "from",         "size",       "unit",   NULL};
    static const char *const script_keys[] = {"buckets_path", "gap_policy", "format", "script",
                                              NULL};
    static const char *const moving_keys[] = {"buckets_path", "gap_policy", "format", "script",
                                              "window",       "shift",      NULL};
    static const char *const diff_keys[] = {"buckets_path", "gap_policy", "format", "lag", NULL};
    static const char *const pct_keys[] = {"buckets_path", "gap_policy", "format",
                                           "percents",     "keyed",      NULL};
    static const char *const ext_keys[] = {"buckets_path", "gap_policy", "format", "sigma", NULL};
    bool scripted = s->kind == SC_AGG_BUCKET_SCRIPT || s->kind == SC_AGG_BUCKET_SELECTOR;
    const char *const *allowed = scripted                                  ? script_keys
                                 : s->kind == SC_AGG_MOVING_FN             ? moving_keys
                                 : s->kind == SC_AGG_SERIAL_DIFF           ? diff_keys
                                 : s->kind == SC_AGG_PERCENTILES_BUCKET    ? pct_keys
                                 : s->kind == SC_AGG_EXTENDED_STATS_BUCKET ? ext_keys
                                                                           : keys;
    if (!sc__agg_known_keys(c, type, p, allowed) || !more_params(c, type, p, s))
        return false;
    const json_t *bp = json_object_get(p, "buckets_path");
    if (scripted && !json_is_object(bp) && !json_is_string(bp))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Required parameter [buckets_path] is missing in [%s]", s->name);
    if (scripted && !json_object_get(p, "script"))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Required parameter [script] is missing in [%s]", s->name);
    if (s->kind != SC_AGG_BUCKET_SORT && !scripted && !json_is_string(bp))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "Required parameter [buckets_path] is missing or not a string in "
                            "[%s]",
                            s->name);
    const json_t *gp = json_object_get(p, "gap_policy");
    if (gp) {
        const char *g = json_string_value(gp);
        if (!g || (strcmp(g, "skip") && strcmp(g, "insert_zeros")))
            return sc__agg_fail(c, 400, "x_content_parse_exception", "[%s] unknown gap_policy [%s]",
                                type, g ? g : "?");
        s->gap_insert_zeros = !strcmp(g, "insert_zeros");
    }
    uint64_t from = 0, size = 0;
    if (!sc__agg_get_uint(c, p, "from", &from, type) ||
        !sc__agg_get_uint(c, p, "size", &size, type))
        return false;
    s->from = from > INT32_MAX ? INT32_MAX : (uint32_t)from;
    s->size = size > INT32_MAX ? INT32_MAX : (uint32_t)size;
    sc__agg_render *r = sc__agg_render_of(c->req, s);
    if (!r)
        return sc__agg_oom_err(c);
    r->pipeline = p;
    return true;
}

static bool single_bucket(sc_agg_kind k)
{
    return k == SC_AGG_FILTER || k == SC_AGG_MISSING || k == SC_AGG_GLOBAL || k == SC_AGG_NESTED ||
           k == SC_AGG_REVERSE_NESTED || k == SC_AGG_SAMPLER || k == SC_AGG_DIVERSIFIED_SAMPLER;
}

/* "[single>...>]name[.stat]", "_count" or "_key" relative to the buckets of `owner` into *out
 * (the steps through single-bucket aggregations in out->via). */
static bool resolve_value(sc__agg_pctx *c, const sc_agg_spec *owner, const char *full,
                          const char *whole, sc_agg_path *out)
{
    memset(out, 0, sizeof *out);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", full);
    const char *path = buf;
    uint32_t via[8], n_via = 0;
    for (char *gt; (gt = strchr(buf + (path - buf), '>'));) {
        *gt = '\0';
        size_t i = 0;
        while (i < owner->n_subs && strcmp(owner->subs[i]->name, path))
            i++;
        if (i == owner->n_subs)
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "No aggregation found for path [%s]", whole);
        if (!single_bucket(owner->subs[i]->kind) || n_via == 8)
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "[%s] in buckets_path [%s] must be a single-bucket aggregation "
                                "(filter, missing)",
                                path, whole);
        via[n_via++] = (uint32_t)i;
        owner = owner->subs[i];
        path = gt + 1;
    }
    if (n_via) {
        uint32_t *v = sc_arena_alloc(c->req->arena, n_via * sizeof *v);
        if (!v)
            return sc__agg_oom_err(c);
        memcpy(v, via, n_via * sizeof *v);
        out->via = v;
        out->n_via = n_via;
    }
    if (!strcmp(path, "_count")) {
        out->kind = SC_AGG_PATH_COUNT;
        return true;
    }
    if (!strcmp(path, "_key")) {
        out->kind = SC_AGG_PATH_KEY;
        return true;
    }
    char name[256];
    snprintf(name, sizeof name, "%s", path);
    char *dot = strchr(name, '.');
    const char *stat = NULL;
    if (dot) {
        *dot = '\0';
        stat = dot + 1;
    }
    for (size_t i = 0; i < owner->n_subs; i++) {
        const sc_agg_spec *sub = owner->subs[i];
        if (strcmp(sub->name, name))
            continue;
        bool multi = sub->kind == SC_AGG_STATS || sub->kind == SC_AGG_EXTENDED_STATS ||
                     sub->kind == SC_AGG_STATS_BUCKET;
        bool single = (sub->kind >= SC_AGG_MIN && sub->kind <= SC_AGG_VALUE_COUNT) ||
                      sub->kind == SC_AGG_WEIGHTED_AVG || sub->kind == SC_AGG_CARDINALITY ||
                      sub->kind == SC_AGG_MEDIAN_ABSOLUTE_DEVIATION ||
                      (sc_agg_kind_pipeline(sub->kind) && !multi &&
                       sub->kind != SC_AGG_BUCKET_SORT && sub->kind != SC_AGG_BUCKET_SELECTOR);
        out->kind = SC_AGG_PATH_SUB;
        out->sub = (uint32_t)i;
        out->stat = SC_AGG_STAT_VALUE;
        if (single && (!stat || !strcmp(stat, "value")))
            return true;
        static const struct {
            const char *n;
            sc_agg_stat s;
        } stats[] = {{"count", SC_AGG_STAT_COUNT},
                     {"min", SC_AGG_STAT_MIN},
                     {"max", SC_AGG_STAT_MAX},
                     {"avg", SC_AGG_STAT_AVG},
                     {"sum", SC_AGG_STAT_SUM}};
        for (size_t k = 0; multi && stat && k < 5; k++)
            if (!strcmp(stats[k].n, stat)) {
                out->stat = stats[k].s;
                return true;
            }
        break;
    }
    return sc__agg_fail(c, 400, "illegal_argument_exception", "No aggregation found for path [%s]",
                        whole);
}

/* A `script`: a string, or {"source" | "inline", "lang": painless, "params"}. */
static bool script_source(sc__agg_pctx *c, const sc_agg_spec *s, const json_t *sj, const char **src,
                          const json_t **params)
{
    *src = json_string_value(sj);
    *params = NULL;
    if (json_is_object(sj)) {
        static const char *const keys[] = {"source", "inline", "lang", "params", NULL};
        if (!sc__agg_known_keys(c, "script", sj, keys))
            return false;
        const json_t *lang = json_object_get(sj, "lang");
        if (lang && (!json_is_string(lang) || (strcmp(json_string_value(lang), "painless") &&
                                               strcmp(json_string_value(lang), "expression"))))
            return sc__agg_fail(c, 400, "illegal_argument_exception",
                                "script_lang not supported [%s]",
                                json_is_string(lang) ? json_string_value(lang) : "?");
        *src = json_string_value(json_object_get(sj, "source"));
        if (!*src)
            *src = json_string_value(json_object_get(sj, "inline"));
        *params = json_object_get(sj, "params");
        if (*params && !json_is_object(*params))
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[script] params must be an object");
    }
    if (!*src)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[script] of [%s] must be a string or an object with [source] (stored "
                            "scripts are not supported)",
                            s->name);
    return true;
}

static bool compile_script(sc__agg_pctx *c, const sc_agg_spec *s, const sc_script_env *env,
                           const char *src, sc_script **out)
{
    sc_script_error serr;
    sc_status st = sc_script_compile(env, sc_slice_cstr(src), c->req->arena, out, &serr);
    if (st == SC_ENOMEM || (st == SC_ELIMIT && c->req->arena->over_budget))
        return sc__agg_oom_err(c);
    if (st != SC_OK)
        return sc__agg_fail(c, 400, "script_exception",
                            "compile error in [%s]: %s at position %lld in [%s]", s->name,
                            serr.reason, (long long)serr.pos, src);
    return true;
}

/* A params constant for script variable `name` (null when absent). */
static bool bind_param(sc__agg_pctx *c, const json_t *params, const char *name,
                       sc_agg_script_bind *b)
{
    const json_t *pv = json_object_get(params, name);
    b->value = sc_script_null();
    if (json_is_integer(pv))
        b->value = sc_script_long(json_integer_value(pv));
    else if (json_is_real(pv))
        b->value = sc_script_double(json_real_value(pv));
    else if (json_is_boolean(pv))
        b->value = sc_script_bool(json_is_true(pv));
    else if (json_is_string(pv))
        b->value =
            (sc_script_value){.type = SC_SCRIPT_STRING,
                              .s = sc_slice_make(json_string_value(pv), json_string_length(pv))};
    else if (pv && !json_is_null(pv))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "[script] params [%s] must be a number, boolean or string", name);
    return true;
}

/* moving_fn's script: MovingFunctions over `values` (the window), params constants. */
static bool moving_script(sc__agg_pctx *c, sc_agg_spec *s, const json_t *p)
{
    const char *src;
    const json_t *params;
    if (!script_source(c, s, json_object_get(p, "script"), &src, &params))
        return false;
    sc__agg_render *r = sc__agg_render_of(c->req, s);
    if (!r)
        return sc__agg_oom_err(c);
    if (!r->env) {
        r->env = sc_script_env_new();
        if (!r->env || sc_agg_moving_functions_add(r->env) != SC_OK)
            return sc__agg_oom_err(c);
    }
    sc_script *script;
    if (!compile_script(c, s, r->env, src, &script))
        return false;
    size_t nv = sc_script_n_vars(script);
    sc_agg_script_bind *binds = sc_arena_calloc(c->req->arena, nv ? nv : 1, sizeof *binds);
    if (!binds)
        return sc__agg_oom_err(c);
    for (size_t i = 0; i < nv; i++) {
        const sc_script_var *v = sc_script_var_get(script, i);
        if (v->kind != SC_SCRIPT_VAR_PARAM)
            return sc__agg_fail(c, 400, "script_exception",
                                "compile error: doc values are not available in [moving_fn] [%s]",
                                s->name);
        if (!strcmp(v->name, "values"))
            binds[i].window = true;
        else if (!bind_param(c, params, v->name, &binds[i]))
            return false;
    }
    s->script = script;
    s->binds = binds;
    return true;
}

/* bucket_script / bucket_selector: the buckets_path map ({"var": path}, or one path bound to
 * `_value`), the script ({"source" | "inline", "lang", "params"} or a string) compiled, and
 * each script variable bound to a path or a params constant (else null, as Painless reads a
 * missing params entry). */
static bool resolve_script(sc__agg_pctx *c, sc_agg_spec *parent, sc_agg_spec *s, const json_t *p)
{
    if (!is_multi_bucket(parent->kind))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "%s aggregation [%s] must be declared inside of another aggregation",
                            sc__agg_kind_name(s), s->name);
    sc_arena *a = c->req->arena;
    const json_t *bp = json_object_get(p, "buckets_path");
    size_t n = json_is_object(bp) ? json_object_size(bp) : 1;
    sc_agg_path *paths = sc_arena_calloc(a, n ? n : 1, sizeof *paths);
    const char **names = sc_arena_calloc(a, n ? n : 1, sizeof *names);
    if (!paths || !names)
        return sc__agg_oom_err(c);
    if (json_is_string(bp)) {
        names[0] = "_value";
        if (!resolve_value(c, parent, json_string_value(bp), json_string_value(bp), &paths[0]))
            return false;
    } else {
        size_t i = 0;
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)bp, k, v) {
            if (!json_is_string(v))
                return sc__agg_fail(c, 400, "x_content_parse_exception",
                                    "[%s] buckets_path entry [%s] must be a string",
                                    sc__agg_kind_name(s), k);
            names[i] = k;
            if (!resolve_value(c, parent, json_string_value(v), json_string_value(v), &paths[i]))
                return false;
            i++;
        }
    }
    const char *src;
    const json_t *params;
    if (!script_source(c, s, json_object_get(p, "script"), &src, &params))
        return false;
    sc_script *script;
    if (!compile_script(c, s, sc_script_env_builtin(), src, &script))
        return false;
    size_t nv = sc_script_n_vars(script);
    sc_agg_script_bind *binds = sc_arena_calloc(a, nv ? nv : 1, sizeof *binds);
    if (!binds)
        return sc__agg_oom_err(c);
    for (size_t i = 0; i < nv; i++) {
        const sc_script_var *v = sc_script_var_get(script, i);
        if (v->kind != SC_SCRIPT_VAR_PARAM)
            return sc__agg_fail(c, 400, "script_exception",
                                "compile error: doc values are not available in [%s] [%s]",
                                sc__agg_kind_name(s), s->name);
        for (size_t k = 0; k < n; k++)
            if (!strcmp(names[k], v->name)) {
                binds[i].from_path = true;
                binds[i].path = (uint32_t)k;
            }
        if (!binds[i].from_path && !bind_param(c, params, v->name, &binds[i]))
            return false;
    }
    s->paths = paths;
    s->n_paths = n;
    s->script = script;
    s->binds = binds;
    return true;
}

static bool resolve_one(sc__agg_pctx *c, sc_agg_spec *parent, sc_agg_spec *s)
{
    const sc__agg_render *r = s->user;
    const json_t *p = r->pipeline;
    const char *path = json_string_value(json_object_get(p, "buckets_path"));
    if (sc_agg_kind_sibling(s->kind)) {
        char target[256];
        snprintf(target, sizeof target, "%s", path);
        char *gt = strchr(target, '>');
        const char *rest = gt ? gt + 1 : "_count";
        if (gt)
            *gt = '\0';
        for (size_t i = 0; i < parent->n_subs; i++) {
            if (strcmp(parent->subs[i]->name, target))
                continue;
            if (!is_multi_bucket(parent->subs[i]->kind))
                return sc__agg_fail(c, 400, "illegal_argument_exception",
                                    "The first aggregation in buckets_path must be a "
                                    "multi-bucket aggregation for aggregation [%s] found :%s "
                                    "for buckets path: %s",
                                    s->name, sc__agg_kind_name(parent->subs[i]), path);
            s->target = parent->subs[i];
            s->target_sub = (uint32_t)i;
            return resolve_value(c, s->target, rest, path, &s->value);
        }
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "No aggregation found for path [%s]", path);
    }
    if (s->kind == SC_AGG_BUCKET_SCRIPT || s->kind == SC_AGG_BUCKET_SELECTOR)
        return resolve_script(c, parent, s, p);
    bool histo = parent->kind == SC_AGG_HISTOGRAM || parent->kind == SC_AGG_DATE_HISTOGRAM;
    if (s->kind != SC_AGG_BUCKET_SORT && !histo)
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "%s aggregation [%s] must have a histogram, date_histogram or "
                            "auto_date_histogram as parent",
                            sc__agg_kind_name(s), s->name);
    if (s->kind == SC_AGG_BUCKET_SORT && !is_multi_bucket(parent->kind))
        return sc__agg_fail(c, 400, "illegal_argument_exception",
                            "bucket_sort aggregation [%s] must be declared inside of another "
                            "aggregation",
                            s->name);
    if (s->kind == SC_AGG_MOVING_FN)
        return resolve_value(c, parent, path, path, &s->value) && moving_script(c, s, p);
    if (s->kind != SC_AGG_BUCKET_SORT)
        return resolve_value(c, parent, path, path, &s->value);
    const json_t *sort = json_object_get(p, "sort");
    size_t n = sort ? (json_is_array(sort) ? json_array_size(sort) : 1) : 0;
    sc_agg_path *keys = sc_arena_calloc(c->req->arena, n + 1, sizeof *keys);
    if (!keys)
        return sc__agg_oom_err(c);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_is_array(sort) ? json_array_get(sort, i) : sort;
        const char *name = json_string_value(e), *order = "asc";
        if (json_is_object(e) && json_object_size(e) == 1) {
            void *it = json_object_iter((json_t *)e);
            name = json_object_iter_key(it);
            const json_t *v = json_object_iter_value(it);
            const json_t *o = json_is_object(v) ? json_object_get(v, "order") : v;
            order = json_string_value(o) ? json_string_value(o) : "asc";
        }
        if (!name)
            return sc__agg_fail(c, 400, "x_content_parse_exception",
                                "[bucket_sort] malformed sort entry");
        if (!resolve_value(c, parent, name, name, &keys[i]))
            return false;
        keys[i].desc = !strcmp(order, "desc");
    }
    s->sort = keys;
    s->n_sort = n;
    return true;
}

bool sc__agg_resolve_pipelines(sc__agg_pctx *c, sc_agg_spec *parent)
{
    for (size_t i = 0; i < parent->n_subs; i++)
        if (sc_agg_kind_pipeline(parent->subs[i]->kind) && !resolve_one(c, parent, parent->subs[i]))
            return false;
    return true;
}
