/* _search `highlight`: the request object parsed and validated (Elasticsearch's options, global
 * with per-field overrides), then resolved per target index into the search layer's sc_hl_spec
 * (field patterns against the mapping, analyzers, the query or highlight_query compiled per
 * field); and the hits' "highlight" member written. */
#include <stdio.h>
#include <string.h>

#include "api/internal.h"
#include "api/search_internal.h"

#define STYLED_PRE "<em class=\"hlt1\">"

/* ---- parsing ---- */

/* Writes a 400 parsing_exception; evaluates to false. Needs req and resp in scope. */
#define FAIL(...) (sc_rest_errorf(req, resp, 400, "parsing_exception", __VA_ARGS__), false)

static bool get_count(sc_rest_req *req, sc_rest_resp *resp, const json_t *v, const char *key,
                      uint32_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX)
        return FAIL("[highlight] [%s] must be a non-negative integer", key);
    *out = (uint32_t)json_integer_value(v);
    return true;
}

static bool first_tag(sc_rest_req *req, sc_rest_resp *resp, const json_t *v, const char *key,
                      sc_slice *out)
{
    const json_t *t = json_is_array(v) ? json_array_get(v, 0) : v;
    if (!json_is_string(t))
        return FAIL("[highlight] [%s] must be an array of strings", key);
    *out = sc_slice_make(json_string_value(t), json_string_length(t));
    return true;
}

/* One option key into o (the global object and each field share them). false: 400 written;
 * *known false when key is not an option. */
static bool option(sc_rest_req *req, sc_rest_resp *resp, const char *k, const json_t *v,
                   search_hl_field *o, bool *known)
{
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    *known = true;
    if (!strcmp(k, "type")) {
        if (strcmp(s, "unified") && strcmp(s, "plain") && strcmp(s, "fvh"))
            return FAIL("unknown highlighter type [%s]", s);
    } else if (!strcmp(k, "pre_tags")) {
        return first_tag(req, resp, v, k, &o->opts.pre_tag);
    } else if (!strcmp(k, "post_tags")) {
        return first_tag(req, resp, v, k, &o->opts.post_tag);
    } else if (!strcmp(k, "tags_schema")) {
        if (strcmp(s, "styled"))
            return FAIL("Unknown tag schema [%s]", s);
        o->opts.pre_tag = sc_slice_cstr(STYLED_PRE);
        o->opts.post_tag = sc_slice_cstr("</em>");
    } else if (!strcmp(k, "fragment_size")) {
        return get_count(req, resp, v, k, &o->opts.fragment_size);
    } else if (!strcmp(k, "number_of_fragments")) {
        return get_count(req, resp, v, k, &o->opts.number_of_fragments);
    } else if (!strcmp(k, "no_match_size")) {
        return get_count(req, resp, v, k, &o->opts.no_match_size);
    } else if (!strcmp(k, "order")) {
        if (strcmp(s, "score") && strcmp(s, "none"))
            return FAIL("[highlight] unknown order [%s]", s);
        o->opts.order_score = !strcmp(s, "score");
    } else if (!strcmp(k, "encoder")) {
        if (strcmp(s, "html") && strcmp(s, "default"))
            return FAIL("[highlight] unknown encoder [%s]", s);
        o->opts.encoder_html = !strcmp(s, "html");
    } else if (!strcmp(k, "boundary_scanner")) {
        if (!strcmp(s, "sentence"))
            o->opts.boundary = SC_HL_BOUNDARY_SENTENCE;
        else if (!strcmp(s, "word"))
            o->opts.boundary = SC_HL_BOUNDARY_WORD;
        else if (!strcmp(s, "chars"))
            o->opts.boundary = SC_HL_BOUNDARY_CHARS;
        else
            return FAIL("Invalid boundary_scanner [%s]", s);
    } else if (!strcmp(k, "boundary_chars")) {
        if (!json_is_string(v))
            return FAIL("[highlight] [%s] must be a string", k);
        o->opts.boundary_chars = sc_slice_make(s, json_string_length(v));
    } else if (!strcmp(k, "max_analyzed_offset")) {
        if (!json_is_integer(v) || (json_integer_value(v) < 1 && json_integer_value(v) != -1))
            return FAIL("[%s] must be a positive integer, or -1", k);
        o->opts.max_analyzed_offset = json_integer_value(v);
    } else if (!strcmp(k, "require_field_match")) {
        if (!json_is_boolean(v))
            return FAIL("[highlight] [%s] must be a boolean", k);
        o->require_field_match = json_is_true(v);
    } else if (!strcmp(k, "highlight_query")) {
        if (!json_is_object(v))
            return FAIL("[highlight] [%s] must be an object", k);
        o->query = v;
    } else if (!strcmp(k, "matched_fields")) {
        return FAIL("[highlight] [%s] is not supported (the fvh runs as unified)", k);
    } else if (!strcmp(k, "boundary_max_scan") || !strcmp(k, "fragmenter") ||
               !strcmp(k, "force_source") || !strcmp(k, "phrase_limit") ||
               !strcmp(k, "fragment_offset") || !strcmp(k, "highlight_filter") ||
               !strcmp(k, "boundary_scanner_locale")) {
        /* accepted: options of the plain / fvh highlighters that the unified one has no use
         * for (documented in docs/api.md) */
    } else {
        *known = false;
    }
    return true;
}

static bool options(sc_rest_req *req, sc_rest_resp *resp, const json_t *obj, search_hl_field *o,
                    bool global)
{
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)obj, k, v) {
        bool known;
        if (!option(req, resp, k, v, o, &known))
            return false;
        if (!known && !(global && !strcmp(k, "fields")))
            return FAIL("[highlight] unknown field [%s]", k);
    }
    return true;
}

static bool add_field(sc_rest_req *req, sc_rest_resp *resp, search_highlight *h,
                      const search_hl_field *global, const char *name, const json_t *spec)
{
    if (!json_is_object(spec))
        return FAIL("[highlight] field [%s] must be an object", name);
    search_hl_field *f = &h->fields[h->n_fields++];
    *f = *global;
    f->pattern = name;
    return options(req, resp, spec, f, false);
}

bool sc__search_parse_highlight(sc_rest_req *req, sc_rest_resp *resp, const json_t *hl,
                                search_parse *sp)
{
    if (!json_is_object(hl))
        return FAIL("[highlight] must be an object");
    search_highlight *h = sc_arena_calloc(req->arena, 1, sizeof *h);
    search_hl_field global = {0};
    sc_hl_options_init(&global.opts);
    if (!h || !options(req, resp, hl, &global, true))
        return h ? false : FAIL("out of memory");
    const json_t *fields = json_object_get(hl, "fields");
    size_t cap = json_is_object(fields)  ? json_object_size(fields)
                 : json_is_array(fields) ? json_array_size(fields)
                                         : 0;
    if (fields && !json_is_object(fields) && !json_is_array(fields))
        return FAIL("[highlight] [fields] must be an object or an array");
    h->fields = sc_arena_alloc(req->arena, (cap ? cap : 1) * sizeof *h->fields);
    if (!h->fields)
        return FAIL("out of memory");
    const char *k;
    json_t *v;
    if (json_is_object(fields)) {
        json_object_foreach ((json_t *)fields, k, v)
            if (!add_field(req, resp, h, &global, k, v))
                return false;
    } else {
        size_t i;
        json_array_foreach (fields, i, v) {
            if (!json_is_object(v) || json_object_size(v) != 1)
                return FAIL("[highlight] [fields] entries must name one field");
            void *it = json_object_iter(v);
            if (!add_field(req, resp, h, &global, json_object_iter_key(it),
                           json_object_iter_value(it)))
                return false;
        }
    }
    sp->highlight = h;
    return true;
}

/* ---- resolving per index ---- */

bool sc__glob_match(const char *p, const char *s)
{
    if (*p == '\0')
        return *s == '\0';
    if (*p == '*') {
        for (;; s++) {
            if (sc__glob_match(p + 1, s))
                return true;
            if (*s == '\0')
                return false;
        }
    }
    return *p == *s && sc__glob_match(p + 1, s + 1);
}

static const sc_analyzer *field_analyzer(const sc_analyzer_registry *r, const sc_mapping_field *mf)
{
    const sc_analyzer *an = NULL;
    if (mf->type == SC_MAPPING_TEXT)
        an = mf->analyzer ? sc_analyzer_registry_get(r, sc_slice_cstr(mf->analyzer))
                          : sc_analyzer_registry_default(r);
    else if (mf->normalizer)
        an = sc_analyzer_registry_normalizer(r, sc_slice_cstr(mf->normalizer));
    else
        an = sc_analyzer_registry_get(r, sc_slice_cstr("keyword"));
    return an;
}

/* Appends the resolved field mf for request field rf to out (the query compiled for it). */
static bool add_resolved(sc_rest_req *req, sc_rest_resp *resp, sc_index *ix, const sc_query *q,
                         const search_hl_field *rf, const sc_mapping_field *mf, sc_hl_field *out,
                         size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(out[i].name, mf->path))
            return true; /* named twice (a pattern and a name): the first wins */
    const sc_analyzer *an = field_analyzer(ix->analysis, mf);
    if (!an)
        return true;
    sc_hl_field *f = &out[*n];
    const sc_mapping_field *src = mf->is_multi_field && mf->parent ? mf->parent : mf;
    size_t nl = strlen(mf->path), sl = strlen(src->path);
    char *name = sc_arena_alloc(req->arena, nl + 1), *path = sc_arena_alloc(req->arena, sl + 1);
    sc_query *hq = NULL;
    if (rf->query && name && !sc__search_build_queries(req, resp, rf->query, &ix, 1, &hq))
        return false;
    sc_hl_query *compiled;
    if (!name || !path ||
        sc_hl_query_build(hq ? hq : q, sc_slice_make(mf->path, nl), rf->require_field_match,
                          req->arena, &compiled) != SC_OK) {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
        return false;
    }
    memcpy(name, mf->path, nl + 1);
    memcpy(path, src->path, sl + 1);
    *f = (sc_hl_field){.name = name,
                       .source_path = sc_slice_make(path, sl),
                       .analyzer = an,
                       .query = compiled,
                       .opts = rf->opts};
    (*n)++;
    return true;
}

static bool highlightable(const sc_mapping_field *mf)
{
    return mf->type == SC_MAPPING_TEXT || mf->type == SC_MAPPING_KEYWORD;
}

static bool resolve_index(sc_rest_req *req, sc_rest_resp *resp, const search_highlight *h,
                          sc_index *ix, const sc_query *q, sc_hl_spec *spec)
{
    sc_mapping *m = sc_index_mapping(ix);
    size_t nmf = m ? sc_mapping_n_fields(m) : 0, cap = h->n_fields * (nmf + 1), n = 0;
    sc_hl_field *out = sc_arena_alloc(req->arena, (cap ? cap : 1) * sizeof *out);
    bool ok = out != NULL;
    for (size_t r = 0; ok && m && r < h->n_fields; r++) {
        const search_hl_field *rf = &h->fields[r];
        if (!strchr(rf->pattern, '*')) {
            const sc_mapping_field *mf = sc_mapping_find(m, sc_slice_cstr(rf->pattern));
            if (mf && highlightable(mf))
                ok = add_resolved(req, resp, ix, q, rf, mf, out, &n);
            continue;
        }
        for (uint32_t i = 0; ok && i < nmf; i++) {
            const sc_mapping_field *mf = sc_mapping_field_at(m, i);
            if (highlightable(mf) && sc__glob_match(rf->pattern, mf->path))
                ok = add_resolved(req, resp, ix, q, rf, mf, out, &n);
        }
    }
    sc_mapping_unref(m);
    if (!out)
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
    spec->fields = out;
    spec->n_fields = n;
    return ok;
}

bool sc__search_build_highlight(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                                sc_index **list, size_t n, sc_query *const *queries,
                                const sc_hl_spec *const **out)
{
    *out = NULL;
    if (!sp->highlight)
        return true;
    const sc_hl_spec **specs = sc_arena_calloc(req->arena, n ? n : 1, sizeof *specs);
    sc_hl_spec *all = sc_arena_calloc(req->arena, n ? n : 1, sizeof *all);
    if (!specs || !all) {
        sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                      "[request] Data too large for the request budget", NULL, 0);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!resolve_index(req, resp, sp->highlight, list[i], queries[i], &all[i]))
            return false;
        specs[i] = &all[i];
    }
    *out = specs;
    return true;
}

/* ---- writing ---- */

void sc__search_write_highlight(sc_jsonw *w, const sc_search_request *sr, const sc_result_hit *h)
{
    if (!h->n_highlights || !sr->highlight || !sr->highlight[h->index_i])
        return;
    const sc_hl_spec *spec = sr->highlight[h->index_i];
    sc_jsonw_key(w, "highlight");
    sc_jsonw_obj_begin(w);
    for (size_t i = 0; i < h->n_highlights; i++) {
        const sc_shard_highlight *sh = &h->highlights[i];
        sc_jsonw_key(w, spec->fields[sh->field].name);
        sc_jsonw_arr_begin(w);
        for (size_t k = 0; k < sh->n_frags; k++)
            sc_jsonw_strn(w, sh->frags[k]);
        sc_jsonw_arr_end(w);
    }
    sc_jsonw_obj_end(w);
}
