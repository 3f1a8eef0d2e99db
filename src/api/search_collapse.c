/* collapse inner_hits (search_run.h): once the page of collapsed hits is known, one search
 * per group and inner_hits entry, as Elasticsearch's ExpandSearchPhase does: the request's
 * query (and post_filter) with a filter on the group's value (no value: the docs without
 * the field), the entry's from / size (3) / sort / _source and hit options, through the
 * same search path as any request. Each hit's {"<name>": {"hits": ..}} is kept in
 * sp->inner_out for the page writer. Groups are expanded one after another:
 * max_concurrent_group_searches is validated and otherwise not needed. */
#include <stdio.h>
#include <string.h>

#include "api/search_run.h"

static const char *const entry_keys[] = {"name",
                                         "size",
                                         "from",
                                         "sort",
                                         "_source",
                                         "version",
                                         "seq_no_primary_term",
                                         "explain",
                                         "docvalue_fields",
                                         "fields",
                                         "highlight",
                                         "track_scores",
                                         "stored_fields",
                                         NULL};

static bool is_key(const char *k)
{
    for (size_t i = 0; entry_keys[i]; i++)
        if (!strcmp(k, entry_keys[i]))
            return true;
    return false;
}

static const char *entry_name(const json_t *e, const char *field)
{
    const json_t *n = json_object_get(e, "name");
    return json_is_string(n) ? json_string_value(n) : field;
}

bool sc__search_parse_inner_hits(sc_rest_req *req, sc_rest_resp *resp, const json_t *ih,
                                 const char *field, search_parse *sp)
{
    size_t n = json_is_array(ih) ? json_array_size(ih) : 1;
    if (!json_is_array(ih) && !json_is_object(ih)) {
        sc_rest_error(req, resp, 400, "parsing_exception",
                      "[inner_hits] must be an object or an array of objects", NULL, 0);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_is_array(ih) ? json_array_get(ih, i) : ih;
        if (!json_is_object(e)) {
            sc_rest_error(req, resp, 400, "parsing_exception",
                          "[inner_hits] must be an object or an array of objects", NULL, 0);
            return false;
        }
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)e, k, v) {
            if (!strcmp(k, "collapse")) {
                sc_rest_error(req, resp, 400, "illegal_argument_exception",
                              "[inner_hits] [collapse] (a second level of collapsing) is not "
                              "supported by this server",
                              NULL, 0);
                return false;
            }
            if (!is_key(k)) {
                sc_rest_errorf(req, resp, 400, "parsing_exception",
                               "[inner_hits] unknown field [%s]", k);
                return false;
            }
        }
        const json_t *nm = json_object_get(e, "name");
        if (nm && !json_is_string(nm)) {
            sc_rest_error(req, resp, 400, "parsing_exception",
                          "[inner_hits] [name] must be a string", NULL, 0);
            return false;
        }
        static const char *const ints[] = {"size", "from"};
        for (int j = 0; j < 2; j++) {
            const json_t *x = json_object_get(e, ints[j]);
            if (x &&
                (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > 100)) {
                sc_rest_errorf(
                    req, resp, 400, "illegal_argument_exception",
                    "[inner_hits] [%s] must be an integer from 0 to 100 (Elasticsearch's "
                    "index.max_inner_result_window)",
                    ints[j]);
                return false;
            }
        }
        for (size_t j = 0; j < i; j++) {
            const json_t *o = json_array_get(ih, j);
            if (!strcmp(entry_name(o, field), entry_name(e, field))) {
                sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                               "[inner_hits] already contains an entry for key [%s]",
                               entry_name(e, field));
                return false;
            }
        }
    }
    sp->collapse_inner = ih;
    return true;
}

/* The group filter of hit h: a term on its value, or no value at all. New reference. */
static json_t *group_filter(const search_parse *sp, const sc_sort_key *ck)
{
    const char *f = sp->collapse_field;
    if (ck->missing)
        return json_pack("{s:{s:{s:{s:s}}}}", "bool", "must_not", "exists", "field", f);
    json_t *v = sp->collapse.numeric ? json_integer(ck->i)
                                     : json_stringn((const char *)ck->s.ptr, ck->s.len);
    return json_pack("{s:{s:o}}", "term", f, v);
}

/* The body of one group's search for inner_hits entry e. New reference. */
static json_t *group_body(const search_parse *sp, const json_t *e, const sc_sort_key *ck)
{
    json_t *filter = json_array();
    json_array_append_new(filter, group_filter(sp, ck));
    if (sp->post_filter)
        json_array_append(filter, (json_t *)sp->post_filter);
    json_t *bq = json_object();
    if (sp->query)
        json_object_set(bq, "must", sp->query);
    json_object_set_new(bq, "filter", filter);
    json_t *b = json_pack("{s:{s:o}, s:I, s:b}", "query", "bool", bq, "size", (json_int_t)3,
                          "track_total_hits", 1);
    if (!b)
        return NULL;
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)e, k, v)
        if (strcmp(k, "name"))
            json_object_set(b, k, v);
    return b;
}

/* Runs one group search and returns its response's "hits" object (new reference), or NULL
 * after writing the error into resp. */
static json_t *group_hits(sc_rest_req *req, sc_rest_resp *resp, const char *index_expr,
                          json_t *body)
{
    search_run run;
    if (!sc__search_run_one(req, resp, index_expr, body, false, &run))
        return NULL;
    sc_buf buf = {0};
    sc_jsonw w;
    sc_jsonw_init(&w, &buf, false);
    sc__search_write_response(&w, &run.sr, &run.r, &run.sp, 0, 0);
    json_t *hits = NULL;
    if (sc_jsonw_finish(&w) == SC_OK) {
        json_error_t jerr;
        json_t *all = json_loadb((const char *)buf.ptr, buf.len, 0, &jerr);
        hits = json_incref(json_object_get(all, "hits"));
        json_decref(all);
    }
    sc_vec_free(&buf);
    sc__search_run_fini(&run);
    if (!hits)
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
    return hits;
}

bool sc__search_expand_collapse(sc_rest_req *req, sc_rest_resp *resp, const char *index_expr,
                                search_run *run)
{
    search_parse *sp = &run->sp;
    const json_t *ih = sp->collapse_inner;
    size_t n_hits = run->r.n_hits, n_e = json_is_array(ih) ? json_array_size(ih) : 1;
    if (!ih || !n_hits)
        return true;
    sp->inner_out = calloc(n_hits, sizeof *sp->inner_out);
    if (!sp->inner_out) {
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return false;
    }
    sp->n_inner_out = n_hits;
    for (size_t i = 0; i < n_hits; i++) {
        const sc_sort_key *ck = run->r.hits[i].collapse_key;
        if (!ck)
            continue;
        json_t *out = json_object();
        sp->inner_out[i] = out;
        for (size_t j = 0; j < n_e; j++) {
            const json_t *e = json_is_array(ih) ? json_array_get(ih, j) : ih;
            json_t *body = group_body(sp, e, ck);
            json_t *hits = body ? group_hits(req, resp, index_expr, body) : NULL;
            json_decref(body);
            if (!hits) {
                if (!body)
                    sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
                return false;
            }
            json_object_set_new(out, entry_name(e, sp->collapse_field),
                                json_pack("{s:o}", "hits", hits));
        }
    }
    return true;
}
