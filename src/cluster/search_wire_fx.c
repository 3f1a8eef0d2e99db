/* The query-phase features of the cross-node search encodings (search_wire.h; issues 13/14/16):
 * appended after the original fields of node_query and node_query_resp, behind a flag word, so
 * an encoding without features is byte-for-byte the older one. Grammar (search_wire.c's
 * primitives):
 *
 *   node_query      += [uv:features                      (absent = 0; only when non-zero)
 *                       (QF_RESCORE)  uv:n (bytes:query uv:window f32:query_weight
 *                                           f32:rescore_weight u8:mode)*
 *                       (QF_COLLAPSE) bytes:field bool:numeric
 *                       (QF_KNN)      bytes:clauses uv:default_k uv:n_floor f32:floor*
 *                       (QF_RRF)      uv:default_k uv:n (bytes:json bool:knn)*]
 *   node_query_resp += [uv:flags                         (absent = 0; only when non-zero)
 *                       (RF_COLLAPSE) sort_key:collapse_key * n_top
 *                       (RF_PROFILE)  (bool:has [profile]) * n_results
 *                       (RF_RRF)      uv:n (uv:total bool:total_gte uv:n_top
 *                                           (f32:score uv:shard_ix uv:doc)*)*]
 *   profile         = bytes:collector uv:collector_ns uv:aggs_ns uv:rewrite_ns
 *                     bool:has_query [pnode]
 *   pnode           = bytes:type bytes:description (uv:count uv:time_ns) * SC_PROF_COUNT_
 *                     uv:build_ns uv:n_builds uv:n_children pnode*   (nesting <= 64)
 */
#include <string.h>

#include "cluster/search_wire_internal.h"
#include "search/profile.h"

enum {
    RF_COLLAPSE = 1u << 0,
    RF_PROFILE = 1u << 1,
    RF_RRF = 1u << 2,
    RF_KNOWN_ = (1u << 3) - 1
};

/* Deepest profile tree a decoder accepts (query trees are far shallower). */
#define MAX_PROFILE_DEPTH 64

static void corrupt(sc_wire_reader *r)
{
    if (r->st == SC_OK)
        r->st = SC_ECORRUPT;
}

static size_t get_count(sc_wire_reader *r)
{
    return (size_t)sc_wire_get_uvar_max(r, (uint64_t)(r->end - r->p));
}

static void *alloc_n(sc_arena *a, sc_wire_reader *r, size_t n, size_t size)
{
    if (r->st != SC_OK)
        return NULL;
    void *p = sc_arena_calloc(a, n ? n : 1, size);
    if (!p)
        r->st = a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    return p;
}

/* A NUL-terminated arena copy of a byte string (NULL for an empty one when empty_null). */
static const char *get_str(sc_wire_reader *r, sc_arena *a, bool empty_null)
{
    sc_slice s = sc_wire_get_bytes(r);
    if (r->st != SC_OK || (empty_null && !s.len))
        return empty_null ? NULL : "";
    char *c = sc_arena_strndup(a, (const char *)s.ptr, s.len);
    if (!c)
        r->st = a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    return c;
}

static void put_cstr(sc_wire_buf *b, const char *s)
{
    sc_wire_put_bytes(b, s, s ? strlen(s) : 0);
}

/* ---- node query request ---- */

void sc__wire_put_features(sc_wire_buf *b, const sc_wire_query_features *fx)
{
    uint64_t f = (fx->profile ? SC_WIRE_QF_PROFILE : 0) | (fx->n_rescore ? SC_WIRE_QF_RESCORE : 0) |
                 (fx->collapse_field.len ? SC_WIRE_QF_COLLAPSE : 0) |
                 (fx->knn_json.len ? SC_WIRE_QF_KNN : 0) | (fx->n_rrf ? SC_WIRE_QF_RRF : 0);
    if (!f)
        return;
    sc_wire_put_uvar(b, f);
    if (f & SC_WIRE_QF_RESCORE) {
        sc_wire_put_uvar(b, fx->n_rescore);
        for (size_t i = 0; i < fx->n_rescore; i++) {
            const sc_wire_rescore *e = &fx->rescore[i];
            sc_wire_put_bytes(b, e->query_json.ptr, e->query_json.len);
            sc_wire_put_uvar(b, e->window_size);
            sc_wire_put_f32(b, e->query_weight);
            sc_wire_put_f32(b, e->rescore_weight);
            sc_wire_put_u8(b, e->mode);
        }
    }
    if (f & SC_WIRE_QF_COLLAPSE) {
        sc_wire_put_bytes(b, fx->collapse_field.ptr, fx->collapse_field.len);
        sc_wire_put_bool(b, fx->collapse_numeric);
    }
    if (f & SC_WIRE_QF_KNN) {
        sc_wire_put_bytes(b, fx->knn_json.ptr, fx->knn_json.len);
        sc_wire_put_uvar(b, fx->knn_default_k);
        sc_wire_put_uvar(b, fx->knn_floor ? fx->n_knn_floor : 0);
        for (size_t i = 0; fx->knn_floor && i < fx->n_knn_floor; i++)
            sc_wire_put_f32(b, fx->knn_floor[i]);
    }
    if (f & SC_WIRE_QF_RRF) {
        sc_wire_put_uvar(b, fx->rrf_default_k);
        sc_wire_put_uvar(b, fx->n_rrf);
        for (size_t i = 0; i < fx->n_rrf; i++) {
            sc_wire_put_bytes(b, fx->rrf[i].json.ptr, fx->rrf[i].json.len);
            sc_wire_put_bool(b, fx->rrf[i].knn);
        }
    }
}

void sc__wire_get_features(sc_wire_reader *r, sc_arena *a, sc_wire_query_features *fx)
{
    memset(fx, 0, sizeof *fx);
    if (r->st != SC_OK || r->p == r->end)
        return; /* an older coordinator's request: no features */
    uint64_t f = sc_wire_get_uvar(r);
    if (!f || (f & ~(uint64_t)SC_WIRE_QF_KNOWN_))
        corrupt(r);
    fx->profile = f & SC_WIRE_QF_PROFILE;
    if (f & SC_WIRE_QF_RESCORE) {
        fx->n_rescore = (size_t)sc_wire_get_uvar_max(r, SC_WIRE_MAX_RESCORE);
        if (!fx->n_rescore)
            corrupt(r);
        sc_wire_rescore *e = alloc_n(a, r, fx->n_rescore, sizeof *e);
        for (size_t i = 0; e && i < fx->n_rescore && r->st == SC_OK; i++) {
            e[i].query_json = sc_wire_get_bytes(r);
            e[i].window_size = (uint32_t)sc_wire_get_uvar_max(r, UINT32_MAX);
            e[i].query_weight = sc_wire_get_f32(r);
            e[i].rescore_weight = sc_wire_get_f32(r);
            e[i].mode = sc_wire_get_u8(r);
            if (!e[i].query_json.len || e[i].mode > SC_RESCORE_MIN)
                corrupt(r);
        }
        fx->rescore = e;
    }
    if (f & SC_WIRE_QF_COLLAPSE) {
        fx->collapse_field = sc_wire_get_bytes(r);
        fx->collapse_numeric = sc_wire_get_bool(r);
        if (!fx->collapse_field.len)
            corrupt(r);
    }
    if (f & SC_WIRE_QF_KNN) {
        fx->knn_json = sc_wire_get_bytes(r);
        fx->knn_default_k = (uint32_t)sc_wire_get_uvar_max(r, UINT32_MAX);
        fx->n_knn_floor = (size_t)sc_wire_get_uvar_max(r, SC_WIRE_MAX_KNN);
        if (!fx->knn_json.len)
            corrupt(r);
        if (fx->n_knn_floor) {
            float *fl = alloc_n(a, r, fx->n_knn_floor, sizeof *fl);
            for (size_t i = 0; fl && i < fx->n_knn_floor; i++)
                fl[i] = sc_wire_get_f32(r);
            fx->knn_floor = fl;
        }
    }
    if (f & SC_WIRE_QF_RRF) {
        fx->rrf_default_k = (uint32_t)sc_wire_get_uvar_max(r, UINT32_MAX);
        fx->n_rrf = (size_t)sc_wire_get_uvar_max(r, SC_WIRE_MAX_RRF);
        if (!fx->n_rrf)
            corrupt(r);
        sc_wire_rrf_sub *e = alloc_n(a, r, fx->n_rrf, sizeof *e);
        for (size_t i = 0; e && i < fx->n_rrf && r->st == SC_OK; i++) {
            e[i].json = sc_wire_get_bytes(r);
            e[i].knn = sc_wire_get_bool(r);
            if (!e[i].json.len)
                corrupt(r);
        }
        fx->rrf = e;
    }
}

/* ---- profiles ---- */

static void put_pnode(sc_wire_buf *b, const sc_profile_node *n)
{
    put_cstr(b, n->type);
    put_cstr(b, n->description);
    for (int i = 0; i < SC_PROF_COUNT_; i++) {
        sc_wire_put_uvar(b, n->counts[i]);
        sc_wire_put_uvar(b, n->times_ns[i]);
    }
    sc_wire_put_uvar(b, n->build_ns);
    sc_wire_put_uvar(b, n->n_builds);
    sc_wire_put_uvar(b, n->n_children);
    for (size_t i = 0; i < n->n_children; i++)
        put_pnode(b, &n->children[i]);
}

static void get_pnode(sc_wire_reader *r, sc_arena *a, sc_profile_node *n, int depth)
{
    if (depth > MAX_PROFILE_DEPTH) {
        corrupt(r);
        return;
    }
    n->type = get_str(r, a, false);
    n->description = get_str(r, a, false);
    for (int i = 0; i < SC_PROF_COUNT_; i++) {
        n->counts[i] = sc_wire_get_uvar(r);
        n->times_ns[i] = sc_wire_get_uvar(r);
    }
    n->build_ns = sc_wire_get_uvar(r);
    n->n_builds = sc_wire_get_uvar(r);
    n->n_children = get_count(r);
    n->children = n->n_children ? alloc_n(a, r, n->n_children, sizeof *n->children) : NULL;
    for (size_t i = 0; n->children && i < n->n_children && r->st == SC_OK; i++)
        get_pnode(r, a, &n->children[i], depth + 1);
    if (r->st != SC_OK)
        n->n_children = 0;
}

static void put_profile(sc_wire_buf *b, const sc_search_profile *p)
{
    put_cstr(b, p->collector);
    sc_wire_put_uvar(b, p->collector_ns);
    sc_wire_put_uvar(b, p->aggs_ns);
    sc_wire_put_uvar(b, p->rewrite_ns);
    sc_wire_put_bool(b, p->query != NULL);
    if (p->query)
        put_pnode(b, p->query);
}

static const sc_search_profile *get_profile(sc_wire_reader *r, sc_arena *a)
{
    sc_search_profile *p = alloc_n(a, r, 1, sizeof *p);
    if (!p)
        return NULL;
    p->collector = get_str(r, a, true);
    p->collector_ns = sc_wire_get_uvar(r);
    p->aggs_ns = sc_wire_get_uvar(r);
    p->rewrite_ns = sc_wire_get_uvar(r);
    if (sc_wire_get_bool(r)) {
        sc_profile_node *q = alloc_n(a, r, 1, sizeof *q);
        if (q)
            get_pnode(r, a, q, 0);
        p->query = q;
    }
    return p;
}

/* ---- node query response ---- */

void sc__wire_put_resp_features(sc_wire_buf *b, const sc_wire_node_query_resp *q,
                                void (*put_key)(sc_wire_buf *, const sc_sort_key *))
{
    uint64_t f = (q->collapse ? RF_COLLAPSE : 0) | (q->n_rrf ? RF_RRF : 0);
    for (size_t i = 0; i < q->n_results; i++)
        f |= q->results[i].profile ? RF_PROFILE : 0;
    if (!f)
        return;
    sc_wire_put_uvar(b, f);
    static const sc_sort_key none = {.missing = true};
    for (size_t i = 0; (f & RF_COLLAPSE) && i < q->n_top; i++)
        put_key(b, q->top[i].collapse_key ? q->top[i].collapse_key : &none);
    for (size_t i = 0; (f & RF_PROFILE) && i < q->n_results; i++) {
        sc_wire_put_bool(b, q->results[i].profile != NULL);
        if (q->results[i].profile)
            put_profile(b, q->results[i].profile);
    }
    if (f & RF_RRF) {
        sc_wire_put_uvar(b, q->n_rrf);
        for (size_t j = 0; j < q->n_rrf; j++) {
            const sc_wire_rrf_top *t = &q->rrf[j];
            sc_wire_put_uvar(b, t->total);
            sc_wire_put_bool(b, t->total_gte);
            sc_wire_put_uvar(b, t->n_top);
            for (size_t i = 0; i < t->n_top; i++) {
                sc_wire_put_f32(b, t->top[i].score);
                sc_wire_put_uvar(b, t->top[i].shard_ix);
                sc_wire_put_uvar(b, t->top[i].doc);
            }
        }
    }
}

void sc__wire_get_resp_features(sc_wire_reader *r, sc_arena *a, sc_wire_node_query_resp *q,
                                void (*get_key)(sc_wire_reader *, sc_sort_key *))
{
    if (r->st != SC_OK || r->p == r->end)
        return;
    uint64_t f = sc_wire_get_uvar(r);
    if (!f || (f & ~(uint64_t)RF_KNOWN_))
        corrupt(r);
    q->collapse = f & RF_COLLAPSE;
    for (size_t i = 0; (f & RF_COLLAPSE) && q->top && i < q->n_top && r->st == SC_OK; i++) {
        sc_sort_key *k = alloc_n(a, r, 1, sizeof *k);
        if (k)
            get_key(r, k);
        q->top[i].collapse_key = k;
    }
    for (size_t i = 0; (f & RF_PROFILE) && q->results && i < q->n_results && r->st == SC_OK; i++)
        if (sc_wire_get_bool(r))
            q->results[i].profile = get_profile(r, a);
    if (!(f & RF_RRF))
        return;
    q->n_rrf = (size_t)sc_wire_get_uvar_max(r, SC_WIRE_MAX_RRF);
    if (!q->n_rrf)
        corrupt(r);
    sc_wire_rrf_top *t = alloc_n(a, r, q->n_rrf, sizeof *t);
    for (size_t j = 0; t && j < q->n_rrf && r->st == SC_OK; j++) {
        t[j].total = sc_wire_get_uvar(r);
        t[j].total_gte = sc_wire_get_bool(r);
        t[j].n_top = get_count(r);
        t[j].top = alloc_n(a, r, t[j].n_top, sizeof *t[j].top);
        for (size_t i = 0; t[j].top && i < t[j].n_top && r->st == SC_OK; i++) {
            t[j].top[i].score = sc_wire_get_f32(r);
            t[j].top[i].shard_ix = (uint32_t)sc_wire_get_uvar_max(r, UINT32_MAX);
            t[j].top[i].doc = (uint32_t)sc_wire_get_uvar_max(r, UINT32_MAX);
        }
    }
    q->rrf = t;
}
