/* POST|GET /{index}/_terms_enum: the indexed terms of a keyword field that start with
 * `string`, in term order, deduplicated over every shard and segment of the target indices
 * (Elasticsearch's terms enum API). Per segment at most `size` matches are read (the terms
 * dictionary is sorted, so the union's first `size` are among them). Clustered, the coordinator
 * asks each node holding a target shard's first copy for its shards' first `size` terms (one
 * SC_MSG_TERMS_ENUM per node, cluster/ctx_wire.h) and merges them the same way. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "api/remote_internal.h"
#include "cluster/ctx_wire.h"
#include "cluster/node.h"
#include "cluster/placement.h"
#include "index/terms.h"
#include "mapping/mapping.h"
#include "shard/shard.h"

typedef struct term_set {
    sc_slice *v;
    size_t n, cap;
    sc_arena *a;
} term_set;

static bool add_term(term_set *s, sc_slice t)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        sc_slice *v = sc_arena_alloc(s->a, cap * sizeof *v);
        if (!v)
            return false;
        if (s->n)
            memcpy(v, s->v, s->n * sizeof *v);
        s->v = v;
        s->cap = cap;
    }
    uint8_t *p = sc_arena_alloc(s->a, t.len ? t.len : 1);
    if (!p)
        return false;
    memcpy(p, t.ptr, t.len);
    s->v[s->n++] = sc_slice_make(p, t.len);
    return true;
}

static int cmp_slice(const void *x, const void *y)
{
    const sc_slice *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->ptr, b->ptr, n) : 0;
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* ASCII case folding (documented limit of case_insensitive). */
static bool has_prefix(sc_slice t, const char *p, size_t n, bool ci)
{
    if (t.len < n)
        return false;
    if (!ci)
        return memcmp(t.ptr, p, n) == 0;
    for (size_t i = 0; i < n; i++)
        if (tolower(t.ptr[i]) != tolower((unsigned char)p[i]))
            return false;
    return true;
}

static sc_status segment_terms(const sc_segment *seg, const char *field, const char *prefix,
                               bool ci, size_t size, term_set *out)
{
    const sc_field_info *f = sc_segment_field(seg, sc_slice_cstr(field));
    if (!f)
        return SC_OK;
    sc_terms_iter it;
    SC_TRY(sc_terms_iter_init(&it, seg, f));
    size_t n = strlen(prefix), got = 0;
    bool has;
    sc_status st;
    if (!ci && n)
        st = sc_terms_seek_ceil(&it, sc_slice_make(prefix, n), &has, NULL);
    else
        st = sc_terms_next(&it, &has);
    while (st == SC_OK && has && got < size) {
        sc_slice t = sc_terms_term(&it);
        if (has_prefix(t, prefix, n, ci)) {
            if (!add_term(out, t)) {
                st = SC_ENOMEM;
                break;
            }
            got++;
        } else if (!ci) {
            break; /* past the prefix's range */
        }
        st = sc_terms_next(&it, &has);
    }
    sc_terms_iter_fini(&it);
    return st;
}

static bool keyword_field(sc_index *ix, const char *field)
{
    sc_mapping *m = sc_index_mapping(ix);
    const sc_mapping_field *mf = m ? sc_mapping_find(m, sc_slice_cstr(field)) : NULL;
    bool ok = mf && mf->type == SC_MAPPING_KEYWORD && mf->index;
    sc_mapping_unref(m);
    return ok;
}

static bool parse_args(sc_rest_req *req, sc_rest_resp *resp, const json_t *body, const char **field,
                       const char **prefix, size_t *size, bool *ci)
{
    static const char *const known[] = {"field",   "string", "size", "case_insensitive",
                                        "timeout", NULL};
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)body, k, v) {
        bool ok = false;
        for (const char *const *p = known; *p && !ok; p++)
            ok = !strcmp(*p, k);
        if (!ok) {
            sc_rest_errorf(req, resp, 400, "parsing_exception", "[terms_enum] unknown field [%s]",
                           k);
            return false;
        }
    }
    const json_t *f = json_object_get(body, "field"), *s = json_object_get(body, "string"),
                 *n = json_object_get(body, "size"), *c = json_object_get(body, "case_insensitive");
    if (!json_is_string(f) || (s && !json_is_string(s)) ||
        (n && (!json_is_integer(n) || json_integer_value(n) < 0)) || (c && !json_is_boolean(c))) {
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      "Validation Failed: 1: [field] (a string) is required; [string] must be a "
                      "string, [size] a non-negative integer, [case_insensitive] a boolean;",
                      NULL, 0);
        return false;
    }
    *field = json_string_value(f);
    *prefix = s ? json_string_value(s) : "";
    *size = n ? (size_t)json_integer_value(n) : 10;
    *ci = json_is_true(c);
    return true;
}

/* The terms of the listed shards of one index held here (its first `size` per segment). */
static sc_status index_terms(sc_index *ix, const uint32_t *shards, size_t n_shards,
                             const char *field, const char *prefix, bool ci, size_t size,
                             term_set *set)
{
    sc_status st = SC_OK;
    if (!keyword_field(ix, field))
        return SC_OK;
    for (size_t i = 0; i < n_shards && st == SC_OK; i++) {
        uint32_t sh = shards[i];
        if (!ix->shards || sh >= ix->settings.number_of_shards || !ix->shards[sh])
            continue;
        const sc_shard_snapshot *snap = sc_shard_searcher_acquire(ix->shards[sh]);
        for (size_t g = 0; g < snap->n_segments && st == SC_OK; g++)
            st = segment_terms(snap->segments[g].seg, field, prefix, ci, size, set);
        sc_shard_searcher_release(snap); /* the terms were copied */
    }
    return st;
}

/* Sorts and dedupes the set in place, keeping the first `size`. */
static void finish_set(term_set *set, size_t size)
{
    if (set->n)
        qsort(set->v, set->n, sizeof *set->v, cmp_slice);
    size_t out = 0;
    for (size_t i = 0; i < set->n && out < size; i++)
        if (!out || cmp_slice(&set->v[out - 1], &set->v[i]) != 0)
            set->v[out++] = set->v[i];
    set->n = out;
}

sc_status sc__terms_enum_node(sc_node *n, sc_slice body, sc_wire_buf *out, char *errmsg, size_t cap)
{
    sc_arena a;
    sc_arena_init(&a, sc_node_config_get(n)->memory_limit_bytes / 4);
    sc_terms_req q;
    sc_status st = sc_terms_req_decode(body.ptr, body.len, &a, &q);
    char *field = st == SC_OK ? sc_arena_strndup(&a, (const char *)q.field.ptr, q.field.len) : NULL;
    char *prefix =
        st == SC_OK ? sc_arena_strndup(&a, (const char *)q.prefix.ptr, q.prefix.len) : NULL;
    if (st == SC_OK && (!field || !prefix))
        st = SC_ENOMEM;
    term_set set = {.a = &a};
    sc_terms_resp r = {0};
    for (size_t i = 0; st == SC_OK && i < q.n_indices; i++) {
        char *name =
            sc_arena_strndup(&a, (const char *)q.indices[i].name.ptr, q.indices[i].name.len);
        sc_index *ix = name ? sc_node_index(n, name) : NULL;
        if (!ix) {
            r.failed += (uint32_t)q.indices[i].n_shards;
            continue;
        }
        st = index_terms(ix, q.indices[i].shards, q.indices[i].n_shards, field, prefix,
                         q.case_insensitive, q.size, &set);
        r.successful += (uint32_t)q.indices[i].n_shards;
        sc_index_unref(ix);
    }
    if (st == SC_OK) {
        finish_set(&set, q.size);
        r.terms = set.v;
        r.n_terms = set.n;
        st = sc_terms_resp_encode(&r, out);
    }
    if (st != SC_OK)
        snprintf(errmsg, cap, "%s", sc_status_str(st));
    sc_arena_fini(&a);
    return st;
}

/* Clustered: one request per node holding the first copy of some target shards (this node's
 * directly); a node that cannot answer fails its shards. */
static sc_status cluster_terms(sc_rest_req *req, sc_index **list, size_t n, const char *field,
                               const char *prefix, bool ci, size_t size, term_set *set,
                               uint32_t *failed)
{
    sc_placement *p = sc_node_placement(req->node);
    sc_placement_snapshot *snap = sc_placement_acquire(p);
    sc_status st = SC_OK;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += list[i]->settings.number_of_shards;
    /* each shard's node, then one request per distinct node */
    char(*node_of)[SC_ALLOC_NODE_MAX] = sc_arena_calloc(req->arena, total + 1, sizeof *node_of);
    bool *done = sc_arena_calloc(req->arena, total + 1, sizeof *done);
    sc_terms_req_index *ix = sc_arena_calloc(req->arena, n + 1, sizeof *ix);
    uint32_t *shards = sc_arena_calloc(req->arena, total + 1, sizeof *shards);
    if (!node_of || !done || !ix || !shards)
        st = SC_ENOMEM;
    for (size_t i = 0, t = 0; st == SC_OK && i < n; i++)
        for (uint32_t s = 0; s < list[i]->settings.number_of_shards; s++, t++) {
            sc_shard_location loc;
            if (sc_placement_copy(snap, list[i]->name, s, 0, &loc))
                snprintf(node_of[t], sizeof node_of[t], "%s", loc.node_id);
            else
                done[t] = true, ++*failed; /* no live copy */
        }
    for (size_t first = 0; st == SC_OK && first < total; first++) {
        if (done[first])
            continue;
        const char *node = node_of[first];
        size_t used = 0, n_ix = 0, n_shards = 0;
        for (size_t i = 0, t = 0; i < n; i++) {
            ix[n_ix] =
                (sc_terms_req_index){.name = sc_slice_cstr(list[i]->name), .shards = shards + used};
            for (uint32_t s = 0; s < list[i]->settings.number_of_shards; s++, t++)
                if (!done[t] && !strcmp(node_of[t], node)) {
                    shards[used++] = s;
                    ix[n_ix].n_shards++;
                    done[t] = true;
                }
            n_shards += ix[n_ix].n_shards;
            n_ix += ix[n_ix].n_shards > 0;
        }
        if (!strcmp(node, sc_node_id(req->node))) {
            for (size_t i = 0, j = 0; st == SC_OK && i < n && j < n_ix; i++)
                if (!strcmp(list[i]->name, (const char *)ix[j].name.ptr))
                    st = index_terms(list[i], ix[j].shards, ix[j].n_shards, field, prefix, ci, size,
                                     set),
                    j++;
            continue;
        }
        sc_terms_req q = {.field = sc_slice_cstr(field),
                          .prefix = sc_slice_cstr(prefix),
                          .case_insensitive = ci,
                          .size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
                          .indices = ix,
                          .n_indices = n_ix};
        char host[128];
        uint16_t port;
        sc_wire_buf b;
        sc_wire_buf_init(&b);
        uint8_t *resp = NULL;
        size_t len = 0;
        sc_terms_resp r;
        sc_status rs = sc_placement_addr(snap, node, host, sizeof host, &port) ? SC_OK : SC_EIO;
        if (rs == SC_OK)
            rs = sc_terms_req_encode(&q, &b);
        if (rs == SC_OK)
            rs = sc_transport_request(sc_placement_transport(p), host, port, SC_MSG_TERMS_ENUM,
                                      sc_slice_make(b.ptr, b.len), 30000, &resp, &len, NULL);
        if (rs == SC_OK)
            rs = sc_terms_resp_decode(resp, len, req->arena, &r);
        if (rs == SC_OK) {
            *failed += r.failed;
            for (size_t i = 0; i < r.n_terms && st == SC_OK; i++)
                if (!add_term(set, r.terms[i])) /* copied: resp is freed below */
                    st = SC_ENOMEM;
        } else {
            *failed += (uint32_t)n_shards;
        }
        free(resp);
        sc_wire_buf_fini(&b);
    }
    sc_placement_release(snap);
    return st;
}

void sc_api_terms_enum(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, true, &body))
        return;
    const char *field, *prefix;
    size_t size;
    bool ci;
    if (!json_is_object(body) || !parse_args(req, resp, body, &field, &prefix, &size, &ci)) {
        if (!json_is_object(body))
            sc_rest_error(req, resp, 400, "parsing_exception", "the body must be an object", NULL,
                          0);
        json_decref(body);
        return;
    }
    sc_index **list = NULL;
    size_t n = 0;
    sc_cluster_error cerr;
    sc_status st = sc_node_resolve(req->node, req->index, &list, &n, &cerr);
    if (st != SC_OK) {
        if (st == SC_ENOTFOUND)
            sc_rest_error_index_not_found(req, resp, cerr.index);
        else
            sc__api_cluster_error(req, resp, &cerr);
        json_decref(body);
        return;
    }
    term_set set = {.a = req->arena};
    uint32_t shards = 0, failed = 0;
    for (size_t i = 0; i < n; i++)
        shards += list[i]->settings.number_of_shards;
    if (sc_node_placement(req->node) && !req->forwarded) {
        st = cluster_terms(req, list, n, field, prefix, ci, size, &set, &failed);
    } else {
        for (size_t i = 0; i < n && st == SC_OK; i++) {
            uint32_t *all =
                sc_arena_calloc(req->arena, list[i]->settings.number_of_shards + 1, sizeof *all);
            if (!all) {
                st = SC_ENOMEM;
                break;
            }
            for (uint32_t sh = 0; sh < list[i]->settings.number_of_shards; sh++)
                all[sh] = sh;
            st = index_terms(list[i], all, list[i]->settings.number_of_shards, field, prefix, ci,
                             size, &set);
        }
    }
    if (st != SC_OK) {
        sc_rest_error(req, resp, st == SC_ENOMEM ? 429 : 500,
                      st == SC_ENOMEM ? "circuit_breaking_exception" : "exception",
                      st == SC_ENOMEM ? "[request] Data too large" : sc_status_str(st), NULL, 0);
        sc_node_release(list, n);
        json_decref(body);
        return;
    }
    finish_set(&set, size);
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "_shards");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "total", shards);
    sc_jsonw_kv_int(&w, "successful", shards - failed);
    sc_jsonw_kv_int(&w, "failed", failed);
    sc_jsonw_obj_end(&w);
    sc_jsonw_key(&w, "terms");
    sc_jsonw_arr_begin(&w);
    for (size_t i = 0; i < set.n; i++)
        sc_jsonw_strn(&w, set.v[i]);
    sc_jsonw_arr_end(&w);
    sc_jsonw_kv_bool(&w, "complete", failed == 0);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    sc_node_release(list, n);
    json_decref(body);
}
