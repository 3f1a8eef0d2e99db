/* POST|GET /{index}/_terms_enum: the indexed terms of a keyword field that start with
 * `string`, in term order, deduplicated over every shard and segment of the target indices
 * (Elasticsearch's terms enum API). Per segment at most `size` matches are read (the terms
 * dictionary is sorted, so the union's first `size` are among them). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "cluster/node.h"
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

void sc_api_terms_enum(sc_rest_req *req, sc_rest_resp *resp)
{
    if (sc_node_placement(req->node)) { /* shards on other nodes are not read yet */
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "[_terms_enum] is not supported in a cluster yet", NULL, 0);
        return;
    }
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
    uint32_t shards = 0;
    for (size_t i = 0; i < n && st == SC_OK; i++) {
        sc_index *ix = list[i];
        shards += ix->settings.number_of_shards;
        if (!keyword_field(ix, field))
            continue;
        for (uint32_t sh = 0; ix->shards && sh < ix->settings.number_of_shards; sh++) {
            if (!ix->shards[sh])
                continue;
            const sc_shard_snapshot *snap = sc_shard_searcher_acquire(ix->shards[sh]);
            for (size_t g = 0; g < snap->n_segments && st == SC_OK; g++)
                st = segment_terms(snap->segments[g].seg, field, prefix, ci, size, &set);
            sc_shard_searcher_release(snap); /* the terms were copied */
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
    if (set.n)
        qsort(set.v, set.n, sizeof *set.v, cmp_slice);
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_key(&w, "_shards");
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "total", shards);
    sc_jsonw_kv_int(&w, "successful", shards);
    sc_jsonw_kv_int(&w, "failed", 0);
    sc_jsonw_obj_end(&w);
    sc_jsonw_key(&w, "terms");
    sc_jsonw_arr_begin(&w);
    size_t out = 0;
    for (size_t i = 0; i < set.n && out < size; i++) {
        if (i && cmp_slice(&set.v[i - 1], &set.v[i]) == 0)
            continue;
        sc_jsonw_strn(&w, set.v[i]);
        out++;
    }
    sc_jsonw_arr_end(&w);
    sc_jsonw_kv_bool(&w, "complete", true);
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    sc_node_release(list, n);
    json_decref(body);
}
