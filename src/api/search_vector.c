/* The vector parts of a search body: the top-level `knn` section (one clause or an array),
 * `rank: {rrf: {...}}` and the `retriever` form (standard, knn, rrf), normalized into kNN
 * clauses and RRF sub-searches (search_parse.vec), then built per target index: kNN clauses
 * are ORed with `query` (a doc's score is the sum of its parts, as Elasticsearch's hybrid
 * search), RRF sub-searches become one tree each for the coordinator's fusion
 * (cluster/search.h: rrf_queries). */
#include <string.h>

#include "api/search_internal.h"

#define RRF_DEFAULT_RANK_CONSTANT 60

static bool fail(sc_rest_req *req, sc_rest_resp *resp, const char *type, const char *reason)
{
    sc_rest_error(req, resp, 400, type, reason, NULL, 0);
    return false;
}

/* Appends a clause (object) or each of an array's clauses to knn. */
static bool add_knn(sc_rest_req *req, sc_rest_resp *resp, json_t *knn, const json_t *v)
{
    if (json_is_object(v))
        return json_array_append(knn, (json_t *)v) == 0;
    if (!json_is_array(v))
        return fail(req, resp, "parsing_exception", "[knn] must be an object or an array");
    size_t i;
    json_t *e;
    json_array_foreach (v, i, e) {
        if (!json_is_object(e))
            return fail(req, resp, "parsing_exception", "[knn] entries must be objects");
        json_array_append(knn, e);
    }
    return true;
}

static bool rrf_params(sc_rest_req *req, sc_rest_resp *resp, const json_t *o, search_parse *sp)
{
    const json_t *rc = json_object_get(o, "rank_constant");
    const json_t *ws = json_object_get(o, "rank_window_size");
    if (!ws)
        ws = json_object_get(o, "window_size");
    sp->vec.rank_constant = RRF_DEFAULT_RANK_CONSTANT;
    sp->vec.rank_window = (uint32_t)(sp->size > 10 ? sp->size : 10);
    if (rc && (!json_is_integer(rc) || json_integer_value(rc) < 1))
        return fail(req, resp, "illegal_argument_exception",
                    "[rank_constant] must be greater than or equal to [1] for [rrf]");
    if (ws &&
        (!json_is_integer(ws) || json_integer_value(ws) < 1 || json_integer_value(ws) > 10000))
        return fail(req, resp, "illegal_argument_exception",
                    "[rank_window_size] must be between [1] and [10000] for [rrf]");
    if (rc)
        sp->vec.rank_constant = (uint32_t)json_integer_value(rc);
    if (ws)
        sp->vec.rank_window = (uint32_t)json_integer_value(ws);
    if ((int64_t)sp->vec.rank_window < sp->from + sp->size)
        return fail(req, resp, "illegal_argument_exception",
                    "[rank_window_size] must be greater than or equal to [size] (+ [from])");
    sp->vec.rrf = true;
    return true;
}

/* {"query": q} sub-search, q wrapped with the retriever's filter when there is one. */
static json_t *standard_sub(const json_t *std)
{
    const json_t *q = json_object_get(std, "query");
    const json_t *f = json_object_get(std, "filter");
    json_t *qq = q ? json_incref((json_t *)q) : json_pack("{s:{}}", "match_all");
    if (f && qq)
        qq = json_pack("{s:{s:[o],s:O}}", "bool", "must", qq, "filter", f);
    return qq ? json_pack("{s:o}", "query", qq) : NULL;
}

static bool retriever(sc_rest_req *req, sc_rest_resp *resp, const json_t *r, search_parse *sp)
{
    const char *kind = json_is_object(r) && json_object_size(r) == 1
                           ? json_object_iter_key(json_object_iter((json_t *)r))
                           : NULL;
    const json_t *body = kind ? json_object_get(r, kind) : NULL;
    if (!kind || !json_is_object(body))
        return fail(req, resp, "parsing_exception", "[retriever] must hold one retriever");
    if (!strcmp(kind, "standard")) {
        json_t *sub = standard_sub(body);
        if (!sub)
            return false;
        json_object_set(sp->vec.owned, "query", json_object_get(sub, "query"));
        sp->query = json_object_get(sp->vec.owned, "query");
        json_decref(sub);
        return true;
    }
    if (!strcmp(kind, "knn"))
        return add_knn(req, resp, sp->vec.knn, body);
    if (strcmp(kind, "rrf") != 0)
        return fail(req, resp, "parsing_exception",
                    "unknown retriever; supported: [standard], "
                    "[knn], [rrf]");
    const json_t *rs = json_object_get(body, "retrievers");
    if (!json_is_array(rs) || json_array_size(rs) < 2)
        return fail(req, resp, "illegal_argument_exception",
                    "[rrf] requires at least [2] child [retrievers]");
    size_t i;
    json_t *c;
    json_array_foreach (rs, i, c) {
        const json_t *s = json_object_get(c, "standard"), *k = json_object_get(c, "knn");
        if (!json_is_object(c) || json_object_size(c) != 1 ||
            (!json_is_object(s) && !json_is_object(k)))
            return fail(req, resp, "illegal_argument_exception",
                        "[rrf] child retrievers must be [standard] or [knn]");
        json_t *sub = s ? standard_sub(s) : json_pack("{s:O}", "knn", k);
        if (!sub || json_array_append_new(sp->vec.subs, sub) != 0)
            return false;
    }
    return rrf_params(req, resp, body, sp);
}

bool sc__search_parse_vector(sc_rest_req *req, sc_rest_resp *resp, const json_t *body,
                             search_parse *sp)
{
    const json_t *knn = json_object_get(body, "knn"), *rank = json_object_get(body, "rank");
    const json_t *ret = json_object_get(body, "retriever");
    if (!knn && !rank && !ret)
        return true;
    sp->vec.owned = json_object();
    sp->vec.knn = json_array();
    sp->vec.subs = json_array();
    if (!sp->vec.owned || !sp->vec.knn || !sp->vec.subs) {
        json_decref(sp->vec.knn), json_decref(sp->vec.subs);
        return fail(req, resp, "exception", "out of memory");
    }
    json_object_set_new(sp->vec.owned, "knn", sp->vec.knn);
    json_object_set_new(sp->vec.owned, "subs", sp->vec.subs);
    bool ok = true;
    if (ret && (knn || rank || sp->query))
        ok = fail(req, resp, "illegal_argument_exception",
                  "cannot specify [retriever] and [query], [knn] or [rank]");
    else if (ret)
        ok = retriever(req, resp, ret, sp);
    else if (knn)
        ok = add_knn(req, resp, sp->vec.knn, knn);
    if (ok && rank) {
        const json_t *rrf = json_object_get(rank, "rrf");
        if (!json_is_object(rank) || json_object_size(rank) != 1 || !json_is_object(rrf))
            ok = fail(req, resp, "parsing_exception", "[rank] supports only [rrf]");
        else
            ok = rrf_params(req, resp, rrf, sp);
        /* the sub-searches of `rank`: the query, then each kNN clause */
        if (ok && sp->query)
            json_array_append_new(sp->vec.subs, json_pack("{s:O}", "query", sp->query));
        size_t i;
        json_t *c;
        json_array_foreach (sp->vec.knn, i, c)
            if (ok)
                json_array_append_new(sp->vec.subs, json_pack("{s:O}", "knn", c));
        json_array_clear(sp->vec.knn);
        if (ok && json_array_size(sp->vec.subs) < 2)
            ok = fail(req, resp, "illegal_argument_exception",
                      "[rank] requires a minimum of [2] result sets using a combination of "
                      "sub searches and/or knn searches");
    }
    if (!ok) {
        json_decref(sp->vec.owned);
        memset(&sp->vec, 0, sizeof sp->vec);
    }
    return ok;
}

/* queries[i] |= every kNN clause (a bool of should clauses sums the scores); with a query,
 * clause k's node goes to knn_global[k * n + i]. */
static bool hybrid(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp, sc_index *ix,
                   sc_query **q, size_t i, size_t n, sc_query **knn_global)
{
    size_t nk = json_array_size(sp->vec.knn);
    sc_query *b = nk > 1 || sp->query ? sc_query_bool(req->arena) : NULL;
    if ((nk > 1 || sp->query) && !b)
        return fail(req, resp, "exception", "out of memory");
    if (b && sp->query && sc_query_bool_add(req->arena, b, SC_OCCUR_SHOULD, *q) != SC_OK)
        return fail(req, resp, "exception", "out of memory");
    for (size_t k = 0; k < nk; k++) {
        sc_query *kq;
        if (!sc__search_parse_for_index(req, resp, ix, json_array_get(sp->vec.knn, k), true,
                                        (uint32_t)sp->size, &kq))
            return false;
        if (knn_global)
            knn_global[k * n + i] = kq;
        if (!b) {
            *q = kq;
            return true;
        }
        if (sc_query_bool_add(req->arena, b, SC_OCCUR_SHOULD, kq) != SC_OK)
            return fail(req, resp, "illegal_argument_exception", "too many knn clauses");
    }
    *q = b;
    return true;
}

uint32_t sc__search_knn_cap(const search_parse *sp)
{
    if (!sp->vec.owned || sp->vec.rrf || sp->query || !json_array_size(sp->vec.knn))
        return 0;
    uint64_t cap = 0;
    size_t i;
    json_t *c;
    json_array_foreach (sp->vec.knn, i, c) {
        const json_t *k = json_object_get(c, "k");
        cap += json_is_integer(k) && json_integer_value(k) > 0 ? (uint64_t)json_integer_value(k)
               : sp->size > 0                                  ? (uint64_t)sp->size
                                                               : 10;
    }
    return cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
}

bool sc__search_build_vector(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                             sc_index **list, size_t n, sc_query **queries, sc_query ***rrf_queries,
                             size_t *n_rrf, sc_query ***knn_global, size_t *n_knn_global)
{
    *rrf_queries = NULL;
    *n_rrf = 0;
    *knn_global = NULL;
    *n_knn_global = 0;
    if (!sp->vec.owned)
        return true;
    if (!sp->vec.rrf) {
        size_t nk = json_array_size(sp->vec.knn);
        sc_query **g = NULL;
        if (nk && sp->query && n) {
            g = sc_arena_calloc(req->arena, nk * n, sizeof *g);
            if (!g)
                return fail(req, resp, "exception", "out of memory");
        }
        for (size_t i = 0; i < n; i++)
            if (nk && !hybrid(req, resp, sp, list[i], &queries[i], i, n, g))
                return false;
        *knn_global = g;
        *n_knn_global = g ? nk * n : 0;
        return true;
    }
    size_t ns = json_array_size(sp->vec.subs);
    sc_query **t = sc_arena_calloc(req->arena, ns * n + 1, sizeof *t);
    if (!t)
        return fail(req, resp, "exception", "out of memory");
    for (size_t j = 0; j < ns; j++) {
        const json_t *sub = json_array_get(sp->vec.subs, j);
        const json_t *kc = json_object_get(sub, "knn");
        const json_t *qj = kc ? kc : json_object_get(sub, "query");
        for (size_t i = 0; i < n; i++)
            if (!sc__search_parse_for_index(req, resp, list[i], qj, kc != NULL, (uint32_t)sp->size,
                                            &t[j * n + i]))
                return false;
    }
    *rrf_queries = t;
    *n_rrf = ns;
    return true;
}
