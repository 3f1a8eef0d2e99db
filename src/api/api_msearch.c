/* _msearch (NDJSON header/body pairs, one search each) and _explain (one document's score
 * explanation): both run searches through api_search.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "api/search_run.h"
#include "base/clock.h"
#include "cluster/node.h"

/* Runs `query` on the explain target's shard of the doc, restricted to the doc by a post_filter
 * (which leaves scores and the query tree alone); *hit is the doc's hit or NULL. false after an
 * error. */
static bool explain_run(sc_rest_req *req, sc_rest_resp *resp, const json_t *query, bool explain,
                        search_run *run, const sc_result_hit **hit)
{
    json_t *ids =
        json_pack("{s:{s:[s#]}}", "ids", "values", (const char *)req->id.ptr, (int)req->id.len);
    json_t *body = json_pack("{s:O,s:o,s:b,s:i,s:b}", "query", query, "post_filter", ids, "explain",
                             explain, "size", 1, "_source", 0);
    if (!body) {
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return false;
    }
    /* only the doc's shard: its ?routing value, else its id */
    const char *routing = sc_rest_param_get(req, "routing");
    sc_slice route = routing && *routing ? sc_slice_cstr(routing) : req->id;
    bool ok = sc__search_run_doc(req, resp, req->index, body, route, run);
    json_decref(body);
    *hit = ok && run->r.n_hits ? &run->r.hits[0] : NULL;
    return ok;
}

/* GET|POST /{index}/_explain/{id}: the doc's score explanation under the body's query
 * (search/explain.h), or matched false; 404 when the doc does not exist. */
void sc_api_explain(sc_rest_req *req, sc_rest_resp *resp)
{
    json_t *body;
    if (!sc__api_body_json(req, resp, false, &body))
        return;
    const json_t *q = body ? json_object_get(body, "query") : NULL;
    json_t *owned = NULL;
    const char *qs = sc_rest_param_get(req, "q");
    if (!q && qs)
        q = owned = json_pack("{s:{s:s}}", "query_string", "query", qs);
    if (!q || !json_is_object(q)) {
        sc_rest_error(req, resp, 400, "action_request_validation_exception",
                      "Validation Failed: 1: query is missing;", NULL, 0);
        json_decref(body);
        return;
    }
    search_run run;
    const sc_result_hit *hit;
    if (!explain_run(req, resp, q, true, &run, &hit)) {
        json_decref(owned), json_decref(body);
        return;
    }
    bool exists = hit != NULL;
    char *qstr = NULL;
    if (!hit) { /* does the doc exist at all? */
        if (run.sr.n_indices && run.sr.queries && run.sr.queries[0]) {
            size_t n = sc_query_to_string(run.sr.queries[0], NULL, 0) + 1;
            if ((qstr = sc_arena_alloc(req->arena, n)))
                sc_query_to_string(run.sr.queries[0], qstr, n);
        }
        sc__search_run_fini(&run);
        json_t *all = json_pack("{s:{}}", "match_all");
        bool ok = explain_run(req, resp, all, false, &run, &hit);
        json_decref(all);
        if (!ok) {
            json_decref(owned), json_decref(body);
            return;
        }
        exists = hit != NULL;
    }
    const char *name = run.n ? run.list[0]->name : req->index;
    sc_jsonw w;
    sc_rest_json_begin(req, resp, exists ? 200 : 404, &w);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_str(&w, "_index", name);
    sc_jsonw_key(&w, "_id");
    sc_jsonw_strn(&w, req->id);
    bool matched = exists && run.sr.explain;
    sc_jsonw_kv_bool(&w, "matched", matched);
    if (matched && hit->explanation) {
        sc_jsonw_key(&w, "explanation");
        sc__search_write_explanation(&w, hit->explanation);
    } else if (exists) {
        char desc[1024];
        snprintf(desc, sizeof desc, "no match on %s", qstr ? qstr : "the query");
        sc_explanation x = {.description = desc};
        sc_jsonw_key(&w, "explanation");
        sc__search_write_explanation(&w, &x);
    }
    sc_jsonw_obj_end(&w);
    sc_rest_json_end(req, resp, &w);
    sc__search_run_fini(&run);
    json_decref(owned), json_decref(body);
}

void sc_api_msearch(sc_rest_req *req, sc_rest_resp *resp)
{
    uint64_t t0 = sc_clock_now_ns();
    sc_buf out = {0};
    sc_jsonw w;
    sc_jsonw_init(&w, &out, req->pretty);
    sc_jsonw_obj_begin(&w);
    sc_jsonw_kv_int(&w, "took", 0);
    sc_jsonw_key(&w, "responses");
    sc_jsonw_arr_begin(&w);
    const uint8_t *p = req->body.ptr, *end = p ? p + req->body.len : p;
    size_t lineno = 0;
    bool bad = false;
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *le = nl ? nl : end;
        sc_slice header = sc_slice_make(p, (size_t)(le - p));
        p = nl ? nl + 1 : end;
        lineno++;
        bool blank = true;
        for (size_t i = 0; i < header.len; i++)
            blank &= header.ptr[i] == ' ' || header.ptr[i] == '\r' || header.ptr[i] == '\t';
        if (blank)
            continue;
        if (p >= end) {
            bad = true;
            break;
        }
        nl = memchr(p, '\n', (size_t)(end - p));
        le = nl ? nl : end;
        sc_slice bodyl = sc_slice_make(p, (size_t)(le - p));
        p = nl ? nl + 1 : end;
        lineno++;
        json_error_t jerr;
        json_t *h = sc__api_json_loadb(header, &jerr);
        json_t *b = sc__api_json_loadb(bodyl, &jerr);
        sc_rest_resp item;
        sc_rest_resp_init(&item);
        char nul_path[256];
        if (!json_is_object(h) || !json_is_object(b)) {
            sc_rest_errorf(req, &item, 400, "x_content_parse_exception",
                           "[%zu:1] malformed _msearch line", lineno);
        } else if (sc__api_json_find_nul(h, NULL, nul_path, sizeof nul_path) ||
                   sc__api_json_find_nul(b, NULL, nul_path, sizeof nul_path)) {
            sc__api_error_nul(req, &item, nul_path);
        } else {
            const char *ixs = req->index;
            json_t *hi = json_object_get(h, "index");
            char *joined = NULL;
            if (json_is_string(hi))
                ixs = json_string_value(hi);
            else if (json_is_array(hi)) {
                size_t cap = 1, i;
                json_t *x;
                json_array_foreach (hi, i, x)
                    cap += json_string_length(x) + 1;
                joined = sc_arena_alloc(req->arena, cap);
                if (joined) {
                    joined[0] = '\0';
                    json_array_foreach (hi, i, x) {
                        if (i)
                            strcat(joined, ",");
                        if (json_is_string(x))
                            strcat(joined, json_string_value(x));
                    }
                    ixs = joined;
                }
            }
            search_run run;
            if (sc__search_run_one(req, &item, ixs, b, false, &run)) {
                uint64_t took_ms = (sc_clock_now_ns() - run.t0) / 1000000;
                sc_jsonw iw;
                sc_jsonw_init(&iw, &item.body, false);
                sc__search_write_response(&iw, &run.sr, &run.r, &run.sp, took_ms, 200);
                if (sc_jsonw_finish(&iw) != SC_OK)
                    sc_rest_error(req, &item, 500, "exception", "out of memory", NULL, 0);
                sc__search_run_fini(&run);
            } else {
                /* Error items carry "status" inside: rewrite {"error":..,"status":N} as is. */
            }
        }
        json_decref(h);
        json_decref(b);
        sc_jsonw_raw(&w, sc_slice_make(item.body.ptr, item.body.len));
        sc_rest_resp_fini(&item);
    }
    sc_jsonw_arr_end(&w);
    sc_jsonw_obj_end(&w);
    if (bad) {
        sc_vec_free(&out);
        sc_rest_error(req, resp, 400, "illegal_argument_exception",
                      "The msearch request must be terminated by a newline [\\n]", NULL, 0);
        return;
    }
    if (sc_jsonw_finish(&w) != SC_OK) {
        sc_vec_free(&out);
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    /* Patch the total took into the fixed-width slot: rewrite the prefix. */
    char took[64];
    int tl = snprintf(took, sizeof took, "{\"took\":%llu",
                      (unsigned long long)((sc_clock_now_ns() - t0) / 1000000));
    sc_vec_clear(&resp->body);
    const char *prefix = req->pretty ? NULL : "{\"took\":0";
    if (prefix && out.len > 9 && memcmp(out.ptr, prefix, 9) == 0) {
        (void)sc_vec_append(&resp->body, (const unsigned char *)took, (size_t)tl);
        (void)sc_vec_append(&resp->body, out.ptr + 9, out.len - 9);
    } else {
        (void)sc_vec_append(&resp->body, out.ptr, out.len);
    }
    sc_vec_free(&out);
    resp->status = 200;
    resp->content_type = "application/json";
}
