/* The _search options of search pages (issue 14) around the query: `version`,
 * `seq_no_primary_term`, `min_score`, `rescore` and `highlight` read from the body and the URL,
 * then, once the query trees exist, min_score applied to them and the per-index rescorers,
 * highlight specs and named queries handed to the coordinator (search_internal.h). */
#include <math.h>
#include <string.h>

#include "api/internal.h"
#include "api/search_internal.h"
#include "api/search_run.h"

static bool get_bool(sc_rest_req *req, sc_rest_resp *resp, const json_t *body, const char *key,
                     bool *out)
{
    const json_t *v = json_object_get(body, key);
    if (v && !json_is_boolean(v) && !json_is_null(v)) {
        sc_rest_errorf(req, resp, 400, "parsing_exception", "[%s] must be a boolean", key);
        return false;
    }
    *out = json_is_true(v);
    return true;
}

/* indices_boost: [{"index": boost}, ...] (or the older {"index": boost}); names or patterns. */
static bool parse_indices_boost(sc_rest_req *req, sc_rest_resp *resp, const json_t *ib,
                                search_parse *sp)
{
    bool ok = json_is_array(ib) || json_is_object(ib);
    size_t i;
    json_t *x;
    if (json_is_array(ib))
        json_array_foreach (ib, i, x) {
            const char *k;
            json_t *v;
            ok &= json_is_object(x) && json_object_size(x) == 1;
            json_object_foreach (x, k, v)
                ok &= json_is_number(v);
        }
    else if (ok) {
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)ib, k, v)
            ok &= json_is_number(v);
    }
    if (!ok) {
        sc_rest_error(req, resp, 400, "parsing_exception",
                      "[indices_boost] must be an array of {\"index\": boost} objects", NULL, 0);
        return false;
    }
    sp->indices_boost = ib;
    return true;
}

/* The indices_boost of index `name` (the first entry that names or matches it), or 1. */
static double index_boost(const json_t *ib, const char *name)
{
    size_t i, n = json_is_array(ib) ? json_array_size(ib) : 1;
    for (i = 0; i < n; i++) {
        const json_t *o = json_is_array(ib) ? json_array_get(ib, i) : ib;
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)o, k, v)
            if (!strcmp(k, name) || (strchr(k, '*') && sc__glob_match(k, name)))
                return json_number_value(v);
    }
    return 1;
}

/* collapse: {"field": f, "inner_hits": {..} or [..], "max_concurrent_group_searches": n}. */
static bool parse_collapse(sc_rest_req *req, sc_rest_resp *resp, const json_t *body,
                           const json_t *c, search_parse *sp)
{
    const char *k;
    json_t *v;
    if (!json_is_object(c)) {
        sc_rest_error(req, resp, 400, "parsing_exception", "[collapse] must be an object", NULL, 0);
        return false;
    }
    json_object_foreach ((json_t *)c, k, v) {
        if (!strcmp(k, "max_concurrent_group_searches") &&
            (!json_is_integer(v) || json_integer_value(v) < 1)) {
            sc_rest_error(req, resp, 400, "illegal_argument_exception",
                          "maxConcurrentGroupRequests must be positive", NULL, 0);
            return false;
        }
        if (strcmp(k, "field") && strcmp(k, "max_concurrent_group_searches") &&
            strcmp(k, "inner_hits")) {
            sc_rest_errorf(req, resp, 400, "parsing_exception", "[collapse] unknown field [%s]", k);
            return false;
        }
    }
    const json_t *f = json_object_get(c, "field");
    if (!json_is_string(f)) {
        sc_rest_error(req, resp, 400, "parsing_exception", "[collapse] requires a [field]", NULL,
                      0);
        return false;
    }
    static const char *const with[] = {"sort", "rescore", "search_after"};
    for (size_t i = 0; i < 3; i++) {
        const json_t *o = json_object_get(body, with[i]);
        if (o && !json_is_null(o) && !(json_is_array(o) && !json_array_size(o))) {
            sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                           "cannot use `collapse` in conjunction with `%s` (not supported yet)",
                           with[i]);
            return false;
        }
    }
    if (sc_rest_param_get(req, "scroll")) {
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "cannot use `collapse` in a scroll context", NULL, 0);
        return false;
    }
    sp->collapse_field = json_string_value(f);
    const json_t *ih = json_object_get(c, "inner_hits");
    return !ih || json_is_null(ih) ||
           sc__search_parse_inner_hits(req, resp, ih, sp->collapse_field, sp);
}

/* stored_fields: a name or a list. `_none_` drops the metadata (_id) and _source from hits;
 * otherwise _source is returned only when `_source` is in the list or asked for in the body,
 * and the listed fields mapped with `store: true` come back in `fields` (scry keeps only
 * _source on disk, so their values are read from it). */
static bool parse_stored_fields(sc_rest_req *req, sc_rest_resp *resp, const json_t *body,
                                search_parse *sp)
{
    const json_t *v = json_object_get(body, "stored_fields");
    if (!v || json_is_null(v))
        return true;
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    sp->stored = sc_arena_alloc(req->arena, (n ? n : 1) * sizeof *sp->stored);
    if (!sp->stored) {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
        return false;
    }
    bool keep_source = false;
    for (size_t i = 0; i < n; i++) {
        const json_t *f = json_is_array(v) ? json_array_get(v, i) : v;
        if (!json_is_string(f)) {
            sc_rest_error(req, resp, 400, "parsing_exception",
                          "[stored_fields] must be a string or an array of strings", NULL, 0);
            return false;
        }
        const char *name = json_string_value(f);
        if (!strcmp(name, "_none_"))
            sp->stored_none = true;
        else if (!strcmp(name, "_source"))
            keep_source = true;
        else
            sp->stored[sp->n_stored++] = name;
    }
    const json_t *src = json_object_get(body, "_source");
    bool source_asked = src && !json_is_false(src) && !json_is_null(src);
    if (sp->stored_none && (source_asked || keep_source)) {
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      "Validation Failed: 1: [stored_fields] cannot be disabled if [_source] is "
                      "requested;",
                      NULL, 0);
        return false;
    }
    if (sp->stored_none || (!source_asked && !keep_source))
        sp->source = false;
    sp->has_stored = true;
    return true;
}

bool sc__search_parse_page(sc_rest_req *req, sc_rest_resp *resp, const json_t *body,
                           search_parse *sp)
{
    if (!parse_stored_fields(req, resp, body, sp))
        return false;
    if (!get_bool(req, resp, body, "version", &sp->version) ||
        !get_bool(req, resp, body, "seq_no_primary_term", &sp->seq_no_primary_term) ||
        !get_bool(req, resp, body, "explain", &sp->explain) ||
        !get_bool(req, resp, body, "profile", &sp->profile) ||
        !get_bool(req, resp, body, "track_scores", &sp->track_scores))
        return false;
    const json_t *ms = json_object_get(body, "min_score");
    if (ms && !json_is_null(ms)) {
        float x;
        if (!json_is_number(ms) || !isfinite(x = (float)json_number_value(ms))) {
            sc_rest_error(req, resp, 400, "parsing_exception", "[min_score] must be a number", NULL,
                          0);
            return false;
        }
        sp->has_min_score = true;
        sp->min_score = x;
    }
    const json_t *ib = json_object_get(body, "indices_boost");
    if (ib && !json_is_null(ib) && !parse_indices_boost(req, resp, ib, sp))
        return false;
    const json_t *sg = json_object_get(body, "suggest");
    if (sg && !json_is_null(sg) && !sc__search_parse_suggest(req, resp, sg, sp))
        return false;
    const json_t *c = json_object_get(body, "collapse");
    if (c && !json_is_null(c) && !parse_collapse(req, resp, body, c, sp))
        return false;
    const json_t *rs = json_object_get(body, "rescore"), *hl = json_object_get(body, "highlight");
    if (rs && !sc__search_parse_rescore(req, resp, rs, sp))
        return false;
    return !hl || sc__search_parse_highlight(req, resp, hl, sp);
}

void sc__search_page_params(sc_rest_req *req, search_parse *sp)
{
    const char *v;
    if ((v = sc_rest_param_get(req, "version")))
        sp->version = !strcmp(v, "true") || !*v;
    if ((v = sc_rest_param_get(req, "seq_no_primary_term")))
        sp->seq_no_primary_term = !strcmp(v, "true") || !*v;
    if ((v = sc_rest_param_get(req, "explain")))
        sp->explain = !strcmp(v, "true") || !*v;
}

/* The collapse field's kind from the first index that maps it: keyword or numeric. */
static bool resolve_collapse(sc_rest_req *req, sc_rest_resp *resp, search_parse *sp,
                             sc_index **list, size_t n)
{
    sp->collapse.field = sp->collapse_field;
    const sc_mapping_field *mf = NULL;
    sc_mapping *m = NULL;
    for (size_t i = 0; i < n && !mf; i++) {
        sc_mapping_unref(m);
        m = sc_index_mapping(list[i]);
        mf = m ? sc_mapping_find(m, sc_slice_cstr(sp->collapse_field)) : NULL;
    }
    bool ok = mf && (mf->type == SC_MAPPING_KEYWORD || mf->type == SC_MAPPING_LONG ||
                     mf->type == SC_MAPPING_INTEGER || mf->type == SC_MAPPING_SHORT ||
                     mf->type == SC_MAPPING_BYTE);
    sp->collapse.numeric = mf && mf->type != SC_MAPPING_KEYWORD;
    sc_mapping_unref(m);
    if (!ok)
        sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                       "collapse field [%s] must be a keyword or integer field with doc values",
                       sp->collapse_field);
    return ok;
}

bool sc__search_page_build(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                           sc_index **list, size_t n, bool count, sc_query **queries,
                           sc_search_named *named, search_page *out)
{
    memset(out, 0, sizeof *out);
    if (sp->collapse_field && !count && !resolve_collapse(req, resp, (search_parse *)sp, list, n))
        return false;
    out->collapse = sp->collapse_field && !count ? &sp->collapse : NULL;
    for (size_t i = 0; named && !count && i < n; i++)
        if (named[i].n || named[i].n_inner)
            out->named = named;
    float *boosts = sp->indices_boost ? sc_arena_calloc(req->arena, n + 1, sizeof *boosts) : NULL;
    if (sp->indices_boost && !boosts) {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
        return false;
    }
    for (size_t i = 0; boosts && i < n; i++) { /* boosts multiply the scores */
        boosts[i] = (float)index_boost(sp->indices_boost, list[i]->name);
        queries[i]->boost *= boosts[i];
    }
    out->index_boosts = boosts;
    /* min_score: the query under a function_score without functions (score unchanged) that
     * drops docs below it, in hits and totals alike. */
    for (size_t i = 0; sp->has_min_score && i < n; i++) {
        sc_query *fs = sc_query_function_score(req->arena, queries[i]);
        if (!fs) {
            sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                          "[request] Data too large for the request budget", NULL, 0);
            return false;
        }
        fs->u.function_score.has_min_score = true;
        fs->u.function_score.min_score = sp->min_score;
        queries[i] = fs;
    }
    if (count)
        return true;
    return sc__search_build_rescore(req, resp, sp, list, n, &out->rescore) &&
           sc__search_build_highlight(req, resp, sp, list, n, queries, &out->highlight);
}
