/* A search body's `runtime_mappings` -> compiled runtime fields (search/runtime.h): types
 * long, double, date, boolean and keyword with a Painless `script` calling emit(..), resolved
 * against one target index's mapping, plus the overlay mapping (the index's with the runtime
 * fields added as doc-valued fields of their types) the aggregations parse with. The fields
 * are usable in aggregations; naming one in the query, sort or fields is a clear 400 until
 * those read runtime columns too. Errors are 4xx in Elasticsearch's shape. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/agg_internal.h"
#include "api/search_internal.h"
#include "search/runtime.h"

static bool fail(sc_rest_req *req, sc_rest_resp *resp, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool fail(sc_rest_req *req, sc_rest_resp *resp, const char *type, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    sc_rest_error(req, resp, 400, type, reason, NULL, 0);
    return false;
}

static bool oom(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_rest_error(req, resp, 429, "circuit_breaking_exception",
                  "[request] Data too large for the request budget", NULL, 0);
    return false;
}

static bool type_of(const char *t, sc_runtime_type *out)
{
    static const struct {
        const char *name;
        sc_runtime_type type;
    } types[] = {{"long", SC_RUNTIME_LONG},
                 {"double", SC_RUNTIME_DOUBLE},
                 {"date", SC_RUNTIME_DATE},
                 {"boolean", SC_RUNTIME_BOOLEAN},
                 {"keyword", SC_RUNTIME_KEYWORD}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(t, types[i].name)) {
            *out = types[i].type;
            return true;
        }
    return false;
}

/* A script parameter's value (numbers, booleans, strings). */
static bool param_value(sc_rest_req *req, sc_rest_resp *resp, const char *field, const char *name,
                        const json_t *v, sc_script_value *out)
{
    *out = sc_script_null();
    if (json_is_integer(v)) {
        *out = sc_script_long(json_integer_value(v));
    } else if (json_is_real(v)) {
        *out = sc_script_double(json_real_value(v));
    } else if (json_is_boolean(v)) {
        *out = sc_script_bool(json_is_true(v));
    } else if (json_is_string(v)) {
        size_t n = json_string_length(v);
        char *s = sc_arena_strndup(req->arena, json_string_value(v), n);
        if (!s)
            return oom(req, resp);
        *out = (sc_script_value){.type = SC_SCRIPT_STRING, .s = sc_slice_make(s, n)};
    } else if (v && !json_is_null(v)) {
        return fail(req, resp, "illegal_argument_exception",
                    "runtime field [%s]: [params.%s] must be a number, a boolean or a string",
                    field, name);
    }
    return true;
}

/* How doc['name'] reads in mapping m. */
static bool resolve_var(sc_rest_req *req, sc_rest_resp *resp, const sc_mapping *m,
                        const char *field, const char *name, sc_runtime_var *rv)
{
    const sc_mapping_field *f = m ? sc_mapping_find(m, sc_slice_cstr(name)) : NULL;
    if (!f)
        return fail(req, resp, "illegal_argument_exception",
                    "runtime field [%s]: No field found for [%s] in mapping (reading another "
                    "runtime field is not supported)",
                    field, name);
    rv->field = sc_slice_cstr(name);
    rv->value = SC_SF_VALUE_LONG;
    rv->scaling = 1;
    switch (f->type) {
    case SC_MAPPING_LONG:
    case SC_MAPPING_INTEGER:
    case SC_MAPPING_SHORT:
    case SC_MAPPING_BYTE:
    case SC_MAPPING_DATE:
    case SC_MAPPING_BOOLEAN: break;
    case SC_MAPPING_DOUBLE:
    case SC_MAPPING_FLOAT:
    case SC_MAPPING_HALF_FLOAT: rv->value = SC_SF_VALUE_DOUBLE; break;
    case SC_MAPPING_SCALED_FLOAT:
        rv->value = SC_SF_VALUE_SCALED;
        rv->scaling = f->scaling_factor;
        break;
    case SC_MAPPING_KEYWORD: rv->keyword = true; break;
    default:
        return fail(req, resp, "illegal_argument_exception",
                    "runtime field [%s]: doc['%s'] of a [%s] field is not supported (numeric, "
                    "date, boolean and keyword fields only)",
                    field, name, sc_mapping_type_name(f->type));
    }
    if (!f->doc_values)
        return fail(req, resp, "illegal_argument_exception",
                    "runtime field [%s]: field [%s] has no doc values", field, name);
    return true;
}

static bool compile_one(sc_rest_req *req, sc_rest_resp *resp, const sc_mapping *m, const char *name,
                        const json_t *def, sc_runtime_field *rf)
{
    if (!json_is_object(def))
        return fail(req, resp, "mapper_parsing_exception",
                    "Expected map for runtime field [%s] definition but got a %s", name,
                    json_is_string(def) ? "String" : "non-object");
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)def, k, v) {
        if (strcmp(k, "type") && strcmp(k, "script") && strcmp(k, "on_script_error"))
            return fail(req, resp, "mapper_parsing_exception",
                        "unknown parameter [%s] on runtime field [%s] (supported: type, script, "
                        "on_script_error: fail)",
                        k, name);
    }
    const json_t *t = json_object_get(def, "type");
    if (!json_is_string(t))
        return fail(req, resp, "mapper_parsing_exception", "No type specified for field [%s]",
                    name);
    if (!type_of(json_string_value(t), &rf->type))
        return fail(req, resp, "mapper_parsing_exception",
                    "runtime field [%s]: type [%s] is not supported (long, double, date, boolean "
                    "and keyword are)",
                    name, json_string_value(t));
    const json_t *ose = json_object_get(def, "on_script_error");
    if (ose && !(json_is_string(ose) && !strcmp(json_string_value(ose), "fail")))
        return fail(req, resp, "mapper_parsing_exception",
                    "runtime field [%s]: [on_script_error] supports only [fail]", name);
    const json_t *script = json_object_get(def, "script"), *src = script, *params = NULL;
    if (!script)
        return fail(req, resp, "illegal_argument_exception",
                    "runtime field [%s] has no [script]: values read from _source are not "
                    "supported",
                    name);
    if (json_is_object(script)) {
        json_object_foreach ((json_t *)script, k, v) {
            if (strcmp(k, "source") && strcmp(k, "params") && strcmp(k, "lang"))
                return fail(req, resp, "parsing_exception",
                            "runtime field [%s]: unknown key [%s] in [script]", name, k);
        }
        const json_t *lang = json_object_get(script, "lang");
        if (lang && !(json_is_string(lang) && !strcmp(json_string_value(lang), "painless")))
            return fail(req, resp, "illegal_argument_exception",
                        "runtime field [%s]: only painless scripts are supported", name);
        src = json_object_get(script, "source");
        params = json_object_get(script, "params");
        if (params && !json_is_object(params))
            return fail(req, resp, "parsing_exception",
                        "runtime field [%s]: [params] must be an object", name);
    }
    if (!json_is_string(src))
        return fail(req, resp, "parsing_exception",
                    "runtime field [%s]: [script] needs a [source] string", name);
    const sc_script_env *env = sc_runtime_env();
    if (!env)
        return oom(req, resp);
    sc_script *s;
    sc_script_error serr = {0};
    /* the source in the request's arena: compiled strings may point into it, and the JSON it
     * came from (an index mapping's runtime section) may go before the search ends */
    char *text = sc_arena_strndup(req->arena, json_string_value(src), json_string_length(src));
    if (!text)
        return oom(req, resp);
    sc_status st =
        sc_script_compile(env, sc_slice_make(text, json_string_length(src)), req->arena, &s, &serr);
    if (st == SC_ENOMEM)
        return oom(req, resp);
    if (st != SC_OK)
        return fail(req, resp, "script_exception",
                    "compile error in the script of runtime field [%s]: %s at position %lld "
                    "(scry runs a subset of Painless: one expression calling emit(..))",
                    name, serr.reason, (long long)serr.pos);
    size_t n = sc_script_n_vars(s);
    sc_runtime_var *vars = sc_arena_calloc(req->arena, n ? n : 1, sizeof *vars);
    if (!vars)
        return oom(req, resp);
    for (size_t i = 0; i < n; i++) {
        const sc_script_var *var = sc_script_var_get(s, i);
        if (var->kind == SC_SCRIPT_VAR_PARAM) {
            const json_t *pv = params ? json_object_get(params, var->name) : NULL;
            if (!param_value(req, resp, name, var->name, pv, &vars[i].param))
                return false;
        } else if (!resolve_var(req, resp, m, name, var->name, &vars[i])) {
            return false;
        }
    }
    rf->name = name;
    rf->script = s;
    rf->vars = vars;
    return true;
}

/* Whether s names field `name` (a `fields` entry may carry a boost: "name^2"). */
static bool field_is(const char *s, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(s, name, n) && (s[n] == '\0' || s[n] == '^');
}

/* Whether any key, "field" / "path" / "default_field" value or "fields" entry inside j names
 * one of the runtime fields (*which). */
static bool names_runtime(const json_t *j, const sc_runtime_field *rf, size_t n, const char **which)
{
    if (json_is_object(j)) {
        const char *k;
        json_t *v;
        json_object_foreach ((json_t *)j, k, v) {
            for (size_t i = 0; i < n; i++) {
                if (!strcmp(k, rf[i].name) ||
                    (json_is_string(v) && field_is(json_string_value(v), rf[i].name) &&
                     (!strcmp(k, "field") || !strcmp(k, "path") || !strcmp(k, "default_field")))) {
                    *which = rf[i].name;
                    return true;
                }
                for (size_t x = 0; !strcmp(k, "fields") && x < json_array_size(v); x++) {
                    const json_t *e = json_array_get(v, x);
                    if (json_is_string(e) && field_is(json_string_value(e), rf[i].name)) {
                        *which = rf[i].name;
                        return true;
                    }
                }
            }
            if (names_runtime(v, rf, n, which))
                return true;
        }
    } else if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++)
            if (names_runtime(json_array_get(j, i), rf, n, which))
                return true;
    }
    return false;
}

bool sc__search_runtime_parse(sc_rest_req *req, sc_rest_resp *resp, const search_parse *sp,
                              sc_index *ix, sc_runtime_field **out, size_t *n_out,
                              sc_mapping **overlay)
{
    *out = NULL;
    *n_out = 0;
    *overlay = NULL;
    const json_t *body_rm = sp->runtime_mappings;
    if (body_rm && !json_is_null(body_rm) && !json_is_object(body_rm))
        return fail(req, resp, "parsing_exception", "[runtime_mappings] must be an object");
    bool asked = json_is_object(body_rm) && json_object_size(body_rm);
    /* the index mapping's `runtime` section, then the body's (which wins on a name); on a
     * cluster the coordinator and every data node do the same with the index's mapping */
    sc_mapping *im = ix ? sc_index_mapping(ix) : NULL;
    const json_t *ix_rm = sc_mapping_runtime(im);
    if (!asked && !(json_is_object(ix_rm) && json_object_size(ix_rm))) {
        /* No runtime fields (every cheap search): no merge object to build and free. */
        sc_mapping_unref(im);
        return true;
    }
    json_t *rm = json_object();
    if (!rm) {
        sc_mapping_unref(im);
        return oom(req, resp);
    }
    if (json_is_object(ix_rm))
        json_object_update(rm, (json_t *)ix_rm);
    if (asked)
        json_object_update(rm, (json_t *)body_rm);
    sc_mapping_unref(im);
    size_t n = json_object_size(rm);
    if (!n) {
        json_decref(rm);
        return true;
    }
    sc_runtime_field *rf = sc_arena_calloc(req->arena, n, sizeof *rf);
    json_t *props = json_object();
    json_t *upd = json_pack("{s:o}", "properties", props);
    if (!rf || !props || !upd) {
        json_decref(upd);
        json_decref(rm);
        return oom(req, resp);
    }
    sc_mapping *m = ix ? sc_index_mapping(ix) : NULL;
    bool ok = true;
    size_t k = 0;
    const char *name;
    json_t *def;
    json_object_foreach (rm, name, def) {
        if (!*name) {
            ok = fail(req, resp, "mapper_parsing_exception",
                      "runtime field name cannot be an empty string");
            break;
        }
        if (m && sc_mapping_find(m, sc_slice_cstr(name))) {
            ok = fail(req, resp, "illegal_argument_exception",
                      "runtime field [%s] shadows a mapped field: not supported yet", name);
            break;
        }
        const char *aname = sc_arena_strndup(req->arena, name, strlen(name));
        if (!aname) {
            ok = oom(req, resp);
            break;
        }
        if (!(ok = compile_one(req, resp, m, aname, def, &rf[k])))
            break;
        json_t *fm = json_pack("{s:s}", "type", sc_runtime_type_name(rf[k].type));
        if (!fm || json_object_set_new(props, name, fm)) {
            ok = oom(req, resp);
            break;
        }
        k++;
    }
    const char *which = NULL;
    if (ok &&
        (names_runtime(sp->query, rf, k, &which) || names_runtime(sp->post_filter, rf, k, &which)))
        ok = fail(req, resp, "illegal_argument_exception",
                  "runtime field [%s] in a query is not supported yet (aggregations only)", which);
    for (size_t i = 0; ok && i < sp->n_sort; i++)
        for (size_t j = 0; ok && j < k; j++)
            if (sc_slice_eq(sp->sort[i].field, sc_slice_cstr(rf[j].name)))
                ok = fail(req, resp, "illegal_argument_exception",
                          "runtime field [%s] in [sort] is not supported yet (aggregations only)",
                          rf[j].name);
    for (size_t i = 0; ok && i < sp->n_dv_fields; i++)
        for (size_t j = 0; ok && j < k; j++)
            if (!strcmp(sp->dv_fields[i], rf[j].name))
                ok = fail(req, resp, "illegal_argument_exception",
                          "runtime field [%s] in [fields] / [docvalue_fields] is not supported "
                          "yet (aggregations only)",
                          rf[j].name);
    if (ok && m) {
        sc_mapping_error merr;
        if (sc_mapping_merge(m, upd, overlay, &merr) != SC_OK)
            ok = fail(req, resp, "illegal_argument_exception", "runtime_mappings: %s", merr.reason);
    }
    json_decref(upd);
    json_decref(rm);
    sc_mapping_unref(m);
    if (ok) {
        *out = rf;
        *n_out = k;
    }
    return ok;
}
