/* _search `rescore` (Elasticsearch's query rescorer): the request's entries parsed and
 * validated, then their rescore queries built for each target index into the shard layer's
 * sc_shard_rescore (shard/shard_search.h), which runs them after each shard's top hits. */
#include <string.h>

#include "api/internal.h"
#include "api/search_internal.h"

#define FAIL(...) (sc_rest_errorf(req, resp, 400, "parsing_exception", __VA_ARGS__), false)

static bool weight(sc_rest_req *req, sc_rest_resp *resp, const json_t *v, const char *k, float *out)
{
    if (!v)
        return true;
    if (!json_is_number(v))
        return FAIL("[rescore] [%s] must be a number", k);
    *out = (float)json_number_value(v);
    return true;
}

static bool one(sc_rest_req *req, sc_rest_resp *resp, const json_t *e, search_rescore *out)
{
    static const char *const modes[] = {"total", "multiply", "avg", "max", "min"};
    if (!json_is_object(e))
        return FAIL("[rescore] entries must be objects");
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)e, k, v)
        if (strcmp(k, "window_size") && strcmp(k, "query"))
            return FAIL("[rescore] unknown field [%s] (only the query rescorer is supported)", k);
    memset(out, 0, sizeof *out);
    out->r.window_size = 10;
    out->r.query_weight = out->r.rescore_weight = 1;
    const json_t *ws = json_object_get(e, "window_size"), *q = json_object_get(e, "query");
    if (ws &&
        (!json_is_integer(ws) || json_integer_value(ws) < 0 || json_integer_value(ws) > 10000))
        return FAIL("[rescore] [window_size] must be an integer from 0 to 10000");
    if (ws)
        out->r.window_size = (uint32_t)json_integer_value(ws);
    if (!json_is_object(q))
        return FAIL("[rescore] requires a [query] object");
    json_object_foreach ((json_t *)q, k, v) {
        if (!strcmp(k, "rescore_query")) {
            if (!json_is_object(v))
                return FAIL("[rescore] [rescore_query] must be an object");
            out->query = v;
        } else if (!strcmp(k, "query_weight")) {
            if (!weight(req, resp, v, k, &out->r.query_weight))
                return false;
        } else if (!strcmp(k, "rescore_query_weight")) {
            if (!weight(req, resp, v, k, &out->r.rescore_weight))
                return false;
        } else if (!strcmp(k, "score_mode")) {
            const char *m = json_is_string(v) ? json_string_value(v) : "";
            size_t i = 0;
            while (i < 5 && strcmp(m, modes[i]))
                i++;
            if (i == 5)
                return FAIL("[rescore] illegal score_mode [%s]", m);
            out->r.mode = (sc_shard_rescore_mode)i;
        } else {
            return FAIL("[rescore] unknown field [%s]", k);
        }
    }
    if (!out->query)
        return FAIL("[rescore] requires [rescore_query]");
    return true;
}

bool sc__search_parse_rescore(sc_rest_req *req, sc_rest_resp *resp, const json_t *v,
                              search_parse *sp)
{
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    if (json_is_null(v) || (json_is_array(v) && n == 0))
        return true;
    if (sp->n_sort)
        return FAIL("Cannot use [sort] option in conjunction with [rescore].");
    sp->rescore = sc_arena_calloc(req->arena, n, sizeof *sp->rescore);
    if (!sp->rescore)
        return FAIL("out of memory");
    for (size_t i = 0; i < n; i++)
        if (!one(req, resp, json_is_array(v) ? json_array_get(v, i) : v, &sp->rescore[i]))
            return false;
    sp->n_rescore = n;
    return true;
}

bool sc__search_build_rescore(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                              sc_index **list, size_t n, const sc_shard_rescore *const **out)
{
    *out = NULL;
    if (!sp->n_rescore)
        return true;
    const sc_shard_rescore **per = sc_arena_calloc(req->arena, n ? n : 1, sizeof *per);
    if (!per)
        return FAIL("out of memory");
    for (size_t i = 0; i < n; i++) {
        sc_shard_rescore *r = sc_arena_calloc(req->arena, sp->n_rescore, sizeof *r);
        if (!r)
            return FAIL("out of memory");
        for (size_t k = 0; k < sp->n_rescore; k++) {
            sc_query *q = NULL;
            if (!sc__search_build_queries(req, resp, sp->rescore[k].query, &list[i], 1, &q))
                return false;
            r[k] = sp->rescore[k].r;
            r[k].query = q;
        }
        per[i] = r;
    }
    *out = per;
    return true;
}
