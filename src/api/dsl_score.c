/* Query DSL: function_score (dsl_internal.h). The functions (weight, field_value_factor,
 * gauss / exp / linear decay, random_score) with their filters, score_mode, boost_mode,
 * max_boost and min_score become the search layer's sc_score_function specs; fields are
 * resolved to how their doc values read (numbers, scaled floats, dates in ms or ns).
 * script_score (the function, and the script_score query as a function_score with that one
 * function replacing the score) compiles its script against the score-script environment
 * (search/score_script.h) and binds params and doc fields here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dsl_internal.h"
#include "search/score_script.h"

static bool num(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    if (!json_is_string(v))
        return false;
    char *end;
    *out = strtod(json_string_value(v), &end);
    return end != json_string_value(v) && *end == '\0';
}

/* "10d", "1.5h", "30s", "250ms", "7m", "100micros", "5nanos" or a number of ms. */
static bool time_ms(const json_t *v, double *ms)
{
    if (json_is_number(v))
        return num(v, ms);
    if (!json_is_string(v))
        return false;
    const char *s = json_string_value(v);
    char *end;
    double x = strtod(s, &end);
    if (end == s)
        return false;
    static const struct {
        const char *unit;
        double ms;
    } units[] = {{"nanos", 1e-6}, {"micros", 1e-3}, {"ms", 1},     {"s", 1e3},
                 {"m", 6e4},      {"h", 3.6e6},     {"d", 8.64e7}, {"", 1}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].unit)) {
            *ms = x * units[i].ms;
            return true;
        }
    return false;
}

static sc_status field_of(P *p, const char *fname, sc_score_function *f, int *date)
{
    f->field = sc_slice_cstr(fname);
    *date = 0;
    if (!p->env || !p->env->score_field)
        return sc__dsl_fail(p, "query_shard_exception", "unknown field [%s]", fname);
    sc_status st = p->env->score_field(p->env->ctx, f->field, &f->value, &f->scaling, date);
    if (st == SC_ENOTFOUND)
        return sc__dsl_fail(p, "query_shard_exception", "unknown field [%s]", fname);
    if (st != SC_OK || f->value == SC_SF_VALUE_FEATURE || f->value == SC_SF_VALUE_FEATURE_NEG)
        return sc__dsl_fail(p, "query_shard_exception",
                            "field [%s] is of a type that function_score cannot read; numeric and "
                            "date fields only",
                            fname);
    return SC_OK;
}

static sc_status field_value_factor(P *p, const json_t *b, sc_score_function *f)
{
    static const char *const keys[] = {"field", "factor", "modifier", "missing", NULL};
    SC_TRY(sc__dsl_check_keys(p, "field_value_factor", b, keys));
    const json_t *fld = json_object_get(b, "field"), *v;
    if (!json_is_string(fld))
        return sc__dsl_fail(p, "parsing_exception", "[field_value_factor] requires [field]");
    f->kind = SC_SF_FIELD_VALUE;
    f->factor = 1;
    if ((v = json_object_get(b, "factor")) && !num(v, &f->factor))
        return sc__dsl_fail(p, "parsing_exception",
                            "[field_value_factor] [factor] must be a number");
    if ((v = json_object_get(b, "missing"))) {
        if (!num(v, &f->missing))
            return sc__dsl_fail(p, "parsing_exception",
                                "[field_value_factor] [missing] must be a number");
        f->has_missing = true;
    }
    if ((v = json_object_get(b, "modifier"))) {
        static const char *const mods[] = {"none", "log",  "log1p",  "log2p", "ln",
                                           "ln1p", "ln2p", "square", "sqrt",  "reciprocal"};
        const char *m = json_is_string(v) ? json_string_value(v) : "";
        size_t i = 0;
        while (i < sizeof mods / sizeof mods[0] && strcmp(m, mods[i]))
            i++;
        if (i == sizeof mods / sizeof mods[0])
            return sc__dsl_fail(p, "parsing_exception", "Illegal modifier: %s", m);
        f->modifier = (sc_sf_modifier)i;
    }
    int date;
    sc_status st = field_of(p, json_string_value(fld), f, &date);
    if (st != SC_OK && f->has_missing && !strncmp(p->err->reason, "unknown field", 13)) {
        f->field = sc_slice_make(NULL, 0); /* unmapped: every doc reads `missing` */
        return SC_OK;
    }
    return st;
}

static sc_status date_origin(P *p, const json_t *origin, sc_score_function *f, int date)
{
    json_t *now = json_string("now");
    const json_t *o = origin ? origin : now;
    int64_t lo, hi;
    bool empty;
    char msg[256] = "";
    sc_status st = now && p->env->encode_range
                       ? p->env->encode_range(p->env->ctx, f->field, o, o, true, true, NULL, NULL,
                                              &lo, &hi, &empty, msg, sizeof msg)
                       : SC_ENOMEM;
    json_decref(now);
    if (st != SC_OK)
        return sc__dsl_fail(p, "parsing_exception", "[decay] bad [origin]: %s", msg);
    (void)date;
    f->origin = (double)lo;
    return SC_OK;
}

/* gauss / exp / linear: {"<field>": {origin, scale, offset, decay}, "multi_value_mode": m}. */
static sc_status decay_fn(P *p, const char *name, const json_t *b, sc_score_function *f)
{
    f->kind = SC_SF_DECAY;
    f->decay = !strcmp(name, "gauss") ? SC_SF_GAUSS
               : !strcmp(name, "exp") ? SC_SF_EXP
                                      : SC_SF_LINEAR;
    f->decay_value = 0.5;
    const char *k, *fname = NULL;
    json_t *v, *spec = NULL;
    json_object_foreach ((json_t *)b, k, v) {
        if (!strcmp(k, "multi_value_mode")) {
            const char *m = json_is_string(v) ? json_string_value(v) : "";
            f->multi = !strcmp(m, "min")   ? SC_SF_MULTI_MIN
                       : !strcmp(m, "max") ? SC_SF_MULTI_MAX
                       : !strcmp(m, "avg") ? SC_SF_MULTI_AVG
                       : !strcmp(m, "sum") ? SC_SF_MULTI_SUM
                                           : (sc_sf_multi)-1;
            if ((int)f->multi < 0)
                return sc__dsl_fail(p, "parsing_exception", "Unknown multi_value_mode [%s]", m);
        } else if (fname) {
            return sc__dsl_fail(p, "parsing_exception", "[%s] takes one field, found [%s]", name,
                                k);
        } else {
            fname = k;
            spec = v;
        }
    }
    if (!fname || !json_is_object(spec))
        return sc__dsl_fail(p, "parsing_exception", "[%s] requires a field with its parameters",
                            name);
    static const char *const keys[] = {"origin", "scale", "offset", "decay", NULL};
    SC_TRY(sc__dsl_check_keys(p, name, spec, keys));
    int date;
    SC_TRY(field_of(p, fname, f, &date));
    const json_t *origin = json_object_get(spec, "origin"), *scale = json_object_get(spec, "scale"),
                 *offset = json_object_get(spec, "offset"), *dv = json_object_get(spec, "decay");
    double unit = date == 2 ? 1e6 : 1; /* date_nanos values are ns */
    bool ok = scale && (date ? time_ms(scale, &f->scale) : num(scale, &f->scale));
    if (ok && offset)
        ok = date ? time_ms(offset, &f->offset) : num(offset, &f->offset);
    if (!ok)
        return sc__dsl_fail(p, "parsing_exception", "[%s] needs a valid [scale] (and [offset])",
                            name);
    f->scale *= unit;
    f->offset *= unit;
    if (dv && !num(dv, &f->decay_value))
        return sc__dsl_fail(p, "parsing_exception", "[%s] [decay] must be a number", name);
    if (!(f->scale > 0) || f->offset < 0 || !(f->decay_value > 0 && f->decay_value < 1))
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "[%s] needs scale > 0, offset >= 0 and 0 < decay < 1", name);
    if (date)
        return date_origin(p, origin, f, date);
    if (!origin || !num(origin, &f->origin))
        return sc__dsl_fail(p, "parsing_exception", "[%s] requires a numeric [origin]", name);
    return SC_OK;
}

static sc_status random_fn(P *p, const json_t *b, sc_score_function *f)
{
    static const char *const keys[] = {"seed", "field", NULL};
    SC_TRY(sc__dsl_check_keys(p, "random_score", b, keys));
    f->kind = SC_SF_RANDOM;
    const json_t *seed = json_object_get(b, "seed"), *fld = json_object_get(b, "field");
    double s = 0;
    if (seed && !num(seed, &s))
        return sc__dsl_fail(p, "parsing_exception", "[random_score] [seed] must be a number");
    f->seed = (uint64_t)(int64_t)s;
    if (fld) {
        int date;
        if (!json_is_string(fld))
            return sc__dsl_fail(p, "parsing_exception", "[random_score] [field] must be a string");
        SC_TRY(field_of(p, json_string_value(fld), f, &date));
    }
    return SC_OK;
}

/* A params value as a script value: numbers, strings, booleans, null, arrays of numbers (a
 * query vector). Strings are copied into the query's arena. */
static sc_status param_value(P *p, const char *name, const json_t *v, sc_script_value *out)
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
        char *s = sc_arena_alloc(p->a, n + 1);
        if (!s)
            return sc__dsl_oom(p);
        memcpy(s, json_string_value(v), n + 1);
        *out = (sc_script_value){.type = SC_SCRIPT_STRING, .s = sc_slice_make(s, n)};
    } else if (json_is_array(v)) {
        size_t n = json_array_size(v);
        if (n == 0 || n > SC_VEC_MAX_BIT_DIMS)
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "[params.%s]: a query vector needs 1 to %u numbers", name,
                                (unsigned)SC_VEC_MAX_BIT_DIMS);
        sc_score_script_vec *vec = sc_arena_calloc(p->a, 1, sizeof *vec);
        float *x = sc_arena_alloc(p->a, n * sizeof *x);
        if (!vec || !x)
            return sc__dsl_oom(p);
        for (size_t i = 0; i < n; i++) {
            const json_t *e = json_array_get(v, i);
            if (!json_is_number(e))
                return sc__dsl_fail(p, "illegal_argument_exception",
                                    "[params.%s]: only arrays of numbers are supported", name);
            x[i] = (float)json_number_value(e);
        }
        vec->v = x;
        vec->dims = (uint32_t)n;
        *out = (sc_script_value){
            .type = SC_SCRIPT_OBJECT, .obj = vec, .obj_kind = SC_SCORE_SCRIPT_VEC};
    } else if (v && !json_is_null(v)) {
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "[params.%s]: objects are not supported as script parameters", name);
    }
    return SC_OK;
}

/* The variables of a compiled score script: params, `_score`, doc fields. */
static sc_status bind_vars(P *p, const json_t *params, sc_score_script *ss)
{
    size_t n = sc_script_n_vars(ss->script), cap = n ? n : 1;
    ss->vals = sc_arena_calloc(p->a, cap, sizeof *ss->vals);
    ss->fields = sc_arena_calloc(p->a, cap, sizeof *ss->fields);
    ss->dv_value = sc_arena_calloc(p->a, cap, sizeof *ss->dv_value);
    ss->dv_scaling = sc_arena_calloc(p->a, cap, sizeof *ss->dv_scaling);
    if (!ss->vals || !ss->fields || !ss->dv_value || !ss->dv_scaling)
        return sc__dsl_oom(p);
    ss->score_var = -1;
    for (size_t i = 0; i < n; i++) {
        const sc_script_var *var = sc_script_var_get(ss->script, i);
        if (var->kind == SC_SCRIPT_VAR_PARAM) {
            const json_t *v = params ? json_object_get(params, var->name) : NULL;
            if (!v && !strcmp(var->name, "_score"))
                ss->score_var = (int64_t)i;
            else
                SC_TRY(param_value(p, var->name, v, &ss->vals[i]));
            continue;
        }
        ss->fields[i] = sc_slice_cstr(var->name);
        int date;
        sc_status st = p->env && p->env->score_field
                           ? p->env->score_field(p->env->ctx, ss->fields[i], &ss->dv_value[i],
                                                 &ss->dv_scaling[i], &date)
                           : SC_ENOTFOUND;
        if (st == SC_ENOTFOUND)
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "No field found for [%s] in mapping", var->name);
        if (st != SC_OK || ss->dv_value[i] == SC_SF_VALUE_FEATURE ||
            ss->dv_value[i] == SC_SF_VALUE_FEATURE_NEG)
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "doc['%s'] is not supported in score scripts: numeric and date "
                                "fields only",
                                var->name);
    }
    return SC_OK;
}

/* `script`: {"source": .., "params": {..}, "lang": "painless"} or the source alone. */
static sc_status script_of(P *p, const json_t *v, const sc_score_script **out)
{
    const json_t *src = v, *params = NULL;
    if (json_is_object(v)) {
        static const char *const keys[] = {"source", "params", "lang", NULL};
        SC_TRY(sc__dsl_check_keys(p, "script", v, keys));
        const json_t *lang = json_object_get(v, "lang");
        if (lang && !(json_is_string(lang) && (!strcmp(json_string_value(lang), "painless") ||
                                               !strcmp(json_string_value(lang), "expression"))))
            return sc__dsl_fail(p, "illegal_argument_exception", "script_lang not supported [%s]",
                                json_is_string(lang) ? json_string_value(lang) : "?");
        src = json_object_get(v, "source");
        params = json_object_get(v, "params");
        if (params && !json_is_object(params))
            return sc__dsl_fail(p, "parsing_exception", "[script] [params] must be an object");
    }
    if (!json_is_string(src))
        return sc__dsl_fail(p, "parsing_exception", "[script] requires [source]");
    const sc_script_env *env = sc_score_script_env();
    sc_score_script *ss = sc_arena_calloc(p->a, 1, sizeof *ss);
    if (!env || !ss)
        return sc__dsl_oom(p);
    sc_script *s;
    sc_script_error err;
    sc_status st = sc_script_compile(
        env, sc_slice_make(json_string_value(src), json_string_length(src)), p->a, &s, &err);
    if (st == SC_ENOMEM)
        return sc__dsl_oom(p);
    if (st != SC_OK)
        return sc__dsl_fail(p, "script_exception", "compile error: %s at position %lld", err.reason,
                            (long long)err.pos);
    ss->script = s;
    SC_TRY(bind_vars(p, params, ss));
    *out = ss;
    return SC_OK;
}

/* One function object ({"filter": .., "weight": .., "<kind>": {..}}) or the query body itself
 * for the single-function form. *any: a function was given. */
static sc_status function(P *p, const json_t *obj, bool top, sc_score_function *f, bool *any)
{
    memset(f, 0, sizeof *f);
    f->weight = 1;
    f->kind = SC_SF_WEIGHT;
    *any = false;
    bool have_fn = false; /* a function other than the weight */
    const char *k;
    json_t *v;
    json_object_foreach ((json_t *)obj, k, v) {
        sc_status st = SC_OK;
        bool fn = true;
        if (!strcmp(k, "weight")) {
            if (!num(v, &f->weight))
                return sc__dsl_fail(p, "parsing_exception", "[weight] must be a number");
            *any = true;
            fn = false;
        } else if (!strcmp(k, "filter") && !top) {
            sc_query *flt;
            SC_TRY(sc__dsl_parse_query(p, v, &flt));
            f->filter = flt;
            fn = false;
        } else if (!strcmp(k, "field_value_factor")) {
            st = field_value_factor(p, v, f);
        } else if (!strcmp(k, "gauss") || !strcmp(k, "exp") || !strcmp(k, "linear")) {
            st = json_is_object(v)
                     ? decay_fn(p, k, v, f)
                     : sc__dsl_fail(p, "parsing_exception", "[%s] must be an object", k);
        } else if (!strcmp(k, "random_score")) {
            st = random_fn(p, v, f);
        } else if (!strcmp(k, "script_score")) {
            static const char *const skeys[] = {"script", NULL};
            if (!json_is_object(v))
                return sc__dsl_fail(p, "parsing_exception", "[script_score] must be an object");
            SC_TRY(sc__dsl_check_keys(p, "script_score", v, skeys));
            f->kind = SC_SF_SCRIPT;
            st = script_of(p, json_object_get(v, "script"), &f->script);
        } else if (top) {
            fn = false; /* the query's own keys, checked by the caller */
        } else {
            return sc__dsl_fail(p, "parsing_exception", "[function_score] unknown field [%s]", k);
        }
        SC_TRY(st);
        if (fn && have_fn)
            return sc__dsl_fail(p, "parsing_exception",
                                "failed to parse [function_score]: one function per object");
        have_fn |= fn;
        *any |= fn;
    }
    return SC_OK;
}

static sc_status modes(P *p, const json_t *body, sc_query *q)
{
    const json_t *v;
    if ((v = json_object_get(body, "score_mode"))) {
        static const char *const m[] = {"multiply", "sum", "avg", "first", "max", "min"};
        const char *s = json_is_string(v) ? json_string_value(v) : "";
        size_t i = 0;
        while (i < 6 && strcmp(s, m[i]))
            i++;
        if (i == 6)
            return sc__dsl_fail(p, "parsing_exception", "illegal score_mode [%s]", s);
        q->u.function_score.score_mode = (sc_sf_score_mode)i;
    }
    if ((v = json_object_get(body, "boost_mode"))) {
        static const char *const m[] = {"multiply", "replace", "sum", "avg", "max", "min"};
        const char *s = json_is_string(v) ? json_string_value(v) : "";
        size_t i = 0;
        while (i < 6 && strcmp(s, m[i]))
            i++;
        if (i == 6)
            return sc__dsl_fail(p, "parsing_exception", "illegal boost_mode [%s]", s);
        q->u.function_score.boost_mode = (sc_sf_boost_mode)i;
    }
    float x;
    if ((v = json_object_get(body, "max_boost"))) {
        if (!sc__dsl_get_float(v, &x))
            return sc__dsl_fail(p, "parsing_exception", "[max_boost] must be a number");
        q->u.function_score.max_boost = x;
    }
    if ((v = json_object_get(body, "min_score"))) {
        if (!sc__dsl_get_float(v, &x))
            return sc__dsl_fail(p, "parsing_exception", "[min_score] must be a number");
        q->u.function_score.has_min_score = true;
        q->u.function_score.min_score = x;
    }
    return SC_OK;
}

/* script_score: the inner query's docs scored by the script (times boost); with min_score only
 * those scoring at least that. */
sc_status sc__dsl_q_script_score(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"query", "script", "min_score", "boost", "_name", NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[script_score] malformed query");
    SC_TRY(sc__dsl_check_keys(p, "script_score", body, keys));
    const json_t *qv = json_object_get(body, "query"), *v;
    if (!qv)
        return sc__dsl_fail(p, "parsing_exception", "[script_score] requires [query]");
    sc_query *inner;
    SC_TRY(sc__dsl_parse_query(p, qv, &inner));
    sc_query *q = NEW(p, sc_query_function_score(p->a, inner));
    sc_score_function f;
    memset(&f, 0, sizeof f);
    f.kind = SC_SF_SCRIPT;
    f.weight = 1;
    SC_TRY(script_of(p, json_object_get(body, "script"), &f.script));
    float x;
    if ((v = json_object_get(body, "boost"))) {
        if (!sc__dsl_get_float(v, &x))
            return sc__dsl_fail(p, "parsing_exception", "[script_score] [boost] must be a number");
        if (x < 0)
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "negative [boost] are not allowed.");
        f.weight = x; /* Elasticsearch multiplies the script's score by the boost */
    }
    if (sc_query_function_score_add(p->a, q, &f) != SC_OK)
        return sc__dsl_oom(p);
    q->u.function_score.score_mode = SC_SF_SCORE_FIRST;
    q->u.function_score.boost_mode = SC_SF_BOOST_REPLACE;
    if ((v = json_object_get(body, "min_score"))) {
        if (!sc__dsl_get_float(v, &x))
            return sc__dsl_fail(p, "parsing_exception", "[min_score] must be a number");
        q->u.function_score.has_min_score = true;
        q->u.function_score.min_score = x;
    }
    *out = q;
    return SC_OK;
}

sc_status sc__dsl_q_function_score(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {
        "query",     "functions",          "score_mode",   "boost_mode",
        "max_boost", "min_score",          "boost",        "_name",
        "weight",    "field_value_factor", "gauss",        "exp",
        "linear",    "random_score",       "script_score", NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[function_score] malformed query");
    SC_TRY(sc__dsl_check_keys(p, "function_score", body, keys));
    sc_query *inner;
    const json_t *qv = json_object_get(body, "query");
    if (qv)
        SC_TRY(sc__dsl_parse_query(p, qv, &inner));
    else
        inner = NEW(p, sc_query_match_all(p->a));
    sc_query *q = NEW(p, sc_query_function_score(p->a, inner));
    sc_score_function f;
    bool any;
    SC_TRY(function(p, body, true, &f, &any));
    const json_t *fns = json_object_get(body, "functions");
    if (any && fns)
        return sc__dsl_fail(p, "parsing_exception",
                            "failed to parse [function_score]: already found [functions] array, "
                            "now encountering a function outside it");
    if (any && sc_query_function_score_add(p->a, q, &f) != SC_OK)
        return sc__dsl_oom(p);
    if (fns && !json_is_array(fns))
        return sc__dsl_fail(p, "parsing_exception", "[functions] must be an array");
    size_t i;
    json_t *x;
    json_array_foreach (fns, i, x) {
        if (!json_is_object(x))
            return sc__dsl_fail(p, "parsing_exception", "[functions] entries must be objects");
        SC_TRY(function(p, x, false, &f, &any));
        if (sc_query_function_score_add(p->a, q, &f) != SC_OK)
            return sc__dsl_oom(p);
    }
    SC_TRY(modes(p, body, q));
    *out = q;
    return sc__dsl_apply_boost(p, "function_score", body, q);
}
