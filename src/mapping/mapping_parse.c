/* Parsing mappings from JSON: field definitions with their per-type parameters (checked
 * against each type's list), properties, dynamic settings, copy_to, multi-fields and
 * search_as_you_type sub-fields, and the root mapping (sc_mapping_new). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping/internal.h"

static int json_bool_value(const json_t *v, bool *out)
{
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return 1;
    }
    if (json_is_string(v)) {
        if (strcmp(json_string_value(v), "true") == 0) {
            *out = true;
            return 1;
        }
        if (strcmp(json_string_value(v), "false") == 0) {
            *out = false;
            return 1;
        }
    }
    return 0;
}

static int in_list(const char *key, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(*list, key) == 0)
            return 1;
    return 0;
}

static const char *const ignored_params[] = {
    "boost", "similarity", "index_options", "index_phrases", "index_prefixes", "term_vector",
    "fielddata", "fielddata_frequency_filter", "eager_global_ordinals",
    "split_queries_on_whitespace", "time_series_dimension", "time_series_metric", "script",
    "on_script_error", "locale", "subobjects", "dimension", NULL};

static const char *const text_params[] = {"analyzer", "search_analyzer", "search_quote_analyzer",
                                          "index", "norms", "store", "position_increment_gap",
                                          NULL};
static const char *const keyword_params[] = {"ignore_above", "normalizer", "index", "doc_values",
                                             "store", "null_value", "norms", NULL};
static const char *const completion_params[] = {"analyzer", "search_analyzer", "max_input_length",
                                                "preserve_separators",
                                                "preserve_position_increments", NULL};
static const char *const number_params[] = {"index", "doc_values", "store", "null_value",
                                            "coerce", "ignore_malformed", NULL};
static const char *const scaled_params[] = {"index", "doc_values", "store", "null_value",
                                            "coerce", "ignore_malformed", "scaling_factor", NULL};
static const char *const bool_params[] = {"index", "doc_values", "store", "null_value", NULL};
static const char *const date_params[] = {"index", "doc_values", "store", "null_value",
                                          "ignore_malformed", "format", NULL};
static const char *const ip_params[] = {"index", "doc_values", "store", "null_value",
                                        "ignore_malformed", NULL};
static const char *const geo_params[] = {"index", "doc_values", "store", "null_value",
                                         "ignore_malformed", "ignore_z_value", NULL};

static const char *const rank_params[] = {"positive_score_impact", NULL};

static const char *const *params_for(sc_mapping_type t)
{
    switch (t) {
    case SC_MAPPING_RANK_FEATURE:
    case SC_MAPPING_RANK_FEATURES:
        return rank_params;
    case SC_MAPPING_TEXT:
        return text_params;
    case SC_MAPPING_KEYWORD:
        return keyword_params;
    case SC_MAPPING_COMPLETION:
        return completion_params;
    case SC_MAPPING_SCALED_FLOAT:
        return scaled_params;
    case SC_MAPPING_BOOLEAN:
        return bool_params;
    case SC_MAPPING_DATE:
    case SC_MAPPING_DATE_NANOS:
        return date_params;
    case SC_MAPPING_IP:
        return ip_params;
    case SC_MAPPING_GEO_POINT:
        return geo_params;
    default:
        return number_params;
    }
}

static sc_status bad_param(sc_mapping_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static sc_status bad_param(sc_mapping_error *err, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sc__mapping_err(err, "mapper_parsing_exception", "Failed to parse mapping: %s", msg);
    sc__mapping_cause(err, "mapper_parsing_exception", "%s", msg);
    return SC_EINVAL;
}

static sc_status set_str(char **dst, const json_t *v, const char *key, const char *field,
                         sc_mapping_error *err)
{
    if (!json_is_string(v))
        return bad_param(err, "[%s] on mapper [%s] must be a string%s", key, field, "");
    free(*dst);
    *dst = strdup(json_string_value(v));
    return *dst ? SC_OK : SC_ENOMEM;
}

static sc_status parse_properties(const json_t *props, sc_mapping_field *obj,
                                  sc_mapping_error *err)
{
    if (!json_is_object(props))
        return bad_param(err, "[properties] on mapper [%s] must be an object%s%s",
                         obj->path[0] ? obj->path : "_doc", "", "");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)props, k, v)
    {
        if (!k[0])
            return bad_param(err, "field name cannot be an empty string%s%s%s", "", "", "");
        if (!json_is_object(v))
            return bad_param(err, "Expected map for property [fields] on field [%s] but got a %s%s",
                             k, json_is_string(v) ? "class java.lang.String" : "value", "");
        /* A dotted name in properties ("a.b") means object a with property b. */
        const char *dot = strchr(k, '.');
        sc_mapping_field *parent = obj;
        const char *leaf = k;
        while (dot) {
            char comp[256];
            size_t n = (size_t)(dot - leaf);
            if (n == 0 || n >= sizeof(comp))
                return bad_param(err, "invalid field name [%s]%s%s", k, "", "");
            memcpy(comp, leaf, n);
            comp[n] = 0;
            sc_mapping_field *c = sc__mapping_child(parent, comp, n);
            if (!c) {
                c = sc__mapping_field_new(comp, parent, SC_MAPPING_OBJECT);
                if (!c)
                    return SC_ENOMEM;
                SC_TRY(sc__mapping_add_child(parent, c));
            } else if (c->type != SC_MAPPING_OBJECT) {
                return bad_param(err, "field [%s] is not an object%s%s", c->path, "", "");
            }
            parent = c;
            leaf = dot + 1;
            dot = strchr(leaf, '.');
        }
        if (!leaf[0])
            return bad_param(err, "invalid field name [%s]%s%s", k, "", "");
        if (sc__mapping_child(parent, leaf, strlen(leaf)))
            return bad_param(err, "duplicate field [%s]%s%s", k, "", "");
        sc_mapping_field *f;
        SC_TRY(sc__mapping_field_parse(v, leaf, parent, false, &f, err));
        SC_TRY(sc__mapping_add_child(parent, f));
    }
    return SC_OK;
}

static sc_status parse_dynamic(const json_t *v, sc_mapping_dynamic *out, const char *field,
                               sc_mapping_error *err)
{
    bool b;
    if (json_is_string(v) && strcmp(json_string_value(v), "strict") == 0)
        *out = SC_MAPPING_DYNAMIC_STRICT;
    else if (json_bool_value(v, &b))
        *out = b ? SC_MAPPING_DYNAMIC_TRUE : SC_MAPPING_DYNAMIC_FALSE;
    else if (json_is_string(v) && strcmp(json_string_value(v), "runtime") == 0)
        *out = SC_MAPPING_DYNAMIC_FALSE; /* runtime fields are not supported: keep in _source */
    else
        return bad_param(err, "Could not convert [%s.dynamic] to boolean or \"strict\"%s%s",
                         field[0] ? field : "_doc", "", "");
    return SC_OK;
}

static sc_status parse_object_def(const json_t *def, sc_mapping_field *f, sc_mapping_error *err)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)def, k, v)
    {
        bool b;
        if (strcmp(k, "type") == 0)
            continue;
        if (f->nested &&
            (strcmp(k, "include_in_parent") == 0 || strcmp(k, "include_in_root") == 0)) {
            bool on = false;
            if (json_bool_value(v, &on) && !on)
                continue; /* false is the default */
            return bad_param(err, "[%s] on nested mapper [%s] is not supported%s", k, f->path, "");
        }
        if (strcmp(k, "properties") == 0) {
            SC_TRY(parse_properties(v, f, err));
        } else if (strcmp(k, "dynamic") == 0) {
            SC_TRY(parse_dynamic(v, &f->dynamic, f->path, err));
        } else if (strcmp(k, "enabled") == 0) {
            if (!json_bool_value(v, &b))
                return bad_param(err, "[enabled] on mapper [%s] must be a boolean%s%s", f->path,
                                 "", "");
            f->enabled = b;
        } else if (in_list(k, ignored_params)) {
            if (!f->extra && !(f->extra = json_object()))
                return SC_ENOMEM;
            json_object_set_new(f->extra, k, json_deep_copy(v));
        } else {
            return bad_param(err, "unknown parameter [%s] on mapper [%s] of type [%s]", k, f->path,
                             f->nested ? "nested" : "object");
        }
    }
    return SC_OK;
}

static sc_status parse_copy_to(const json_t *v, sc_mapping_field *f, sc_mapping_error *err)
{
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    for (size_t i = 0; i < f->n_copy_to; i++)
        free(f->copy_to[i]);
    free(f->copy_to);
    f->n_copy_to = 0;
    f->copy_to = calloc(n ? n : 1, sizeof(char *));
    if (!f->copy_to)
        return SC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_is_array(v) ? json_array_get(v, i) : v;
        if (!json_is_string(e))
            return bad_param(err, "[copy_to] on mapper [%s] must be a string or strings%s%s",
                             f->path, "", "");
        if (!(f->copy_to[f->n_copy_to] = strdup(json_string_value(e))))
            return SC_ENOMEM;
        f->n_copy_to++;
    }
    return SC_OK;
}

static sc_status parse_leaf_param(const char *k, const json_t *v, sc_mapping_field *f,
                                  sc_mapping_error *err)
{
    bool b;
    const char *tn = sc_mapping_type_name(f->type);
    if (strcmp(k, "copy_to") == 0)
        return parse_copy_to(v, f, err);
    if (f->type == SC_MAPPING_DENSE_VECTOR && strcmp(k, "meta") != 0)
        return sc__mapping_vector_param(k, v, f, err);
    if (strcmp(k, "meta") == 0) {
        if (!json_is_object(v))
            return bad_param(err, "[meta] on mapper [%s] must be an object%s%s", f->path, "", "");
        json_decref(f->meta);
        f->meta = json_deep_copy(v);
        return SC_OK;
    }
    if (in_list(k, ignored_params) && !in_list(k, params_for(f->type))) {
        if (!f->extra && !(f->extra = json_object()))
            return SC_ENOMEM;
        json_object_set_new(f->extra, k, json_deep_copy(v));
        return SC_OK;
    }
    if (!in_list(k, params_for(f->type)))
        return bad_param(err, "unknown parameter [%s] on mapper [%s] of type [%s]", k, f->name,
                         tn);
    if (strcmp(k, "index") == 0 || strcmp(k, "doc_values") == 0 || strcmp(k, "store") == 0 ||
        strcmp(k, "norms") == 0 || strcmp(k, "coerce") == 0 ||
        strcmp(k, "ignore_malformed") == 0) {
        if (!json_bool_value(v, &b))
            return bad_param(err, "Failed to parse value [%s] as only [true] or [false] are allowed. "
                                  "(parameter [%s] on mapper [%s])",
                             json_is_string(v) ? json_string_value(v) : "?", k, f->path);
        if (strcmp(k, "index") == 0)
            f->index = b;
        else if (strcmp(k, "doc_values") == 0)
            f->doc_values = b;
        else if (strcmp(k, "store") == 0)
            f->store = b;
        else if (strcmp(k, "norms") == 0)
            f->norms = f->type == SC_MAPPING_TEXT ? b : false;
        else if (strcmp(k, "coerce") == 0)
            f->coerce = b;
        else
            f->ignore_malformed = b;
        return SC_OK;
    }
    if (strcmp(k, "positive_score_impact") == 0) {
        if (!json_bool_value(v, &b))
            return bad_param(err, "[%s] on mapper [%s] must be a boolean%s", k, f->path, "");
        f->positive_score_impact = b;
        return SC_OK;
    }
    if (strcmp(k, "preserve_separators") == 0 || strcmp(k, "preserve_position_increments") == 0) {
        if (!json_bool_value(v, &b))
            return bad_param(err, "[%s] on mapper [%s] must be a boolean%s", k, f->path, "");
        if (k[9] == 's')
            f->preserve_separators = b;
        else
            f->preserve_position_increments = b;
        return SC_OK;
    }
    if (strcmp(k, "max_input_length") == 0) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > INT32_MAX)
            return bad_param(err, "[max_input_length] on mapper [%s] must be a positive %s%s",
                             f->path, "integer", "");
        f->max_input_length = (int32_t)json_integer_value(v);
        return SC_OK;
    }
    if (strcmp(k, "analyzer") == 0)
        return set_str(&f->analyzer, v, k, f->path, err);
    if (strcmp(k, "search_analyzer") == 0)
        return set_str(&f->search_analyzer, v, k, f->path, err);
    if (strcmp(k, "search_quote_analyzer") == 0)
        return set_str(&f->search_quote_analyzer, v, k, f->path, err);
    if (strcmp(k, "normalizer") == 0)
        return set_str(&f->normalizer, v, k, f->path, err);
    if (strcmp(k, "ignore_above") == 0 || strcmp(k, "position_increment_gap") == 0) {
        json_int_t n;
        if (json_is_integer(v))
            n = json_integer_value(v);
        else if (json_is_string(v) && sscanf(json_string_value(v), "%lld", &n) == 1)
            ;
        else
            return bad_param(err, "[%s] on mapper [%s] must be an integer%s", k, f->path, "");
        if (n < 0 || n > INT32_MAX)
            return bad_param(err, "[%s] on mapper [%s] must be a positive integer%s", k, f->path,
                             "");
        if (k[0] == 'i')
            f->ignore_above = (int32_t)n;
        else
            f->position_increment_gap = (int32_t)n;
        return SC_OK;
    }
    if (strcmp(k, "scaling_factor") == 0) {
        if (!json_is_number(v) || !(json_number_value(v) > 0))
            return bad_param(err, "[scaling_factor] must be a positive number, got [%s]%s%s",
                             json_is_string(v) ? json_string_value(v) : "?", "", "");
        f->scaling_factor = json_number_value(v);
        return SC_OK;
    }
    if (strcmp(k, "format") == 0) {
        if (!json_is_string(v))
            return bad_param(err, "[format] on mapper [%s] must be a string%s%s", f->path, "", "");
        sc_date_format *df;
        sc_status st = sc_date_format_new(sc_slice_make(json_string_value(v), json_string_length(v)), &df);
        if (st == SC_ENOMEM)
            return st;
        if (st != SC_OK)
            return bad_param(err, "Invalid format: [%s]: Unknown pattern letter or format name%s%s",
                             json_string_value(v), "", "");
        sc_date_format_free(f->date_format);
        f->date_format = df;
        return set_str(&f->format, v, k, f->path, err);
    }
    if (strcmp(k, "ignore_z_value") == 0) {
        if (!json_bool_value(v, &b))
            return bad_param(err, "[ignore_z_value] on mapper [%s] must be a boolean", f->path);
        if (!f->extra && !(f->extra = json_object()))
            return SC_ENOMEM;
        json_object_set_new(f->extra, k, json_boolean(b));
        return SC_OK;
    }
    if (strcmp(k, "null_value") == 0) {
        json_decref(f->null_value);
        f->null_value = json_is_null(v) ? NULL : json_deep_copy(v);
        return SC_OK;
    }
    return bad_param(err, "unknown parameter [%s] on mapper [%s] of type [%s]", k, f->name, tn);
}

/* The subfields of search_as_you_type field f: _2gram.._<max>gram (shingles) and
 * _index_prefix (edge n-grams of shingles), analyzed with the text analysis registry's
 * variants of f's analyzers ("standard#2gram", "standard#prefix3"). */
static sc_status sayt_subfields(sc_mapping_field *f, sc_mapping_error *err)
{
    if (f->is_multi_field)
        return bad_param(err, "[search_as_you_type] cannot be a multi field [%s]%s%s", f->path,
                         "", "");
    if (!f->max_shingle_size)
        f->max_shingle_size = 3;
    const char *an = f->analyzer ? f->analyzer : "standard";
    const char *sa = f->search_analyzer ? f->search_analyzer : an;
    for (int32_t n = 2; n <= f->max_shingle_size + 1; n++) {
        bool prefix = n > f->max_shingle_size;
        char name[32], a[300], s[300];
        snprintf(name, sizeof name, prefix ? "_index_prefix" : "_%dgram", n);
        if (sc__mapping_child(f, name, strlen(name)))
            return bad_param(err, "[%s] of [%s] is reserved for search_as_you_type%s", name,
                             f->path, "");
        snprintf(a, sizeof a, prefix ? "%s#prefix%d" : "%s#%dgram", an,
                 prefix ? f->max_shingle_size : n);
        snprintf(s, sizeof s, prefix ? "%s" : "%s#%dgram", sa, n);
        sc_mapping_field *c = sc__mapping_field_new(name, f, SC_MAPPING_TEXT);
        if (!c)
            return SC_ENOMEM;
        c->is_multi_field = c->sayt_sub = true;
        c->analyzer = strdup(a);
        c->search_analyzer = strdup(s);
        sc_status st = c->analyzer && c->search_analyzer ? sc__mapping_add_child(f, c) : SC_ENOMEM;
        if (st != SC_OK) {
            sc__mapping_field_free(c);
            return st;
        }
    }
    return SC_OK;
}

sc_status sc__mapping_field_parse(const json_t *def, const char *name, sc_mapping_field *parent,
                                  bool multi, sc_mapping_field **out, sc_mapping_error *err)
{
    *out = NULL;
    const json_t *tv = json_object_get(def, "type");
    sc_mapping_type type = SC_MAPPING_OBJECT;
    bool nested = false;
    const char *alias = NULL;
    if (tv) {
        if (!json_is_string(tv))
            return bad_param(err, "type must be a string for field [%s]%s%s", name, "", "");
        const char *ts = json_string_value(tv);
        if (strcmp(ts, "match_only_text") == 0) {
            type = SC_MAPPING_TEXT;
            alias = ts;
        } else if (strcmp(ts, "search_as_you_type") == 0) {
            type = SC_MAPPING_TEXT;
            alias = ts;
        } else if (strcmp(ts, "nested") == 0) {
            type = SC_MAPPING_OBJECT;
            nested = true;
        } else if (strcmp(ts, "constant_keyword") == 0 || strcmp(ts, "wildcard") == 0) {
            type = SC_MAPPING_KEYWORD;
            alias = ts;
        } else if (!sc__mapping_type_from_name(ts, &type))
            return bad_param(err, "No handler for type [%s] declared on field [%s]%s", ts, name,
                             "");
    } else if (multi) {
        return bad_param(err, "No type specified for field [%s]%s%s", name, "", "");
    }
    if (multi && type == SC_MAPPING_OBJECT)
        return bad_param(err, "Type [%s] cannot be used in multi field [%s]%s",
                         nested ? "nested" : "object", name, "");
    if (nested) {
        for (const sc_mapping_field *a = parent; a; a = a->parent)
            if (a->nested)
                return bad_param(err,
                                 "nested field [%s] inside nested field [%s]: multi-level nesting "
                                 "is not supported%s",
                                 name, a->path, "");
    }
    sc_mapping_field *f = sc__mapping_field_new(name, parent, type);
    if (!f)
        return SC_ENOMEM;
    f->nested = nested;
    f->is_multi_field = multi;
    sc_status st = SC_OK;
    if (alias && !(f->type_alias = strdup(alias)))
        st = SC_ENOMEM;
    if (st != SC_OK) {
        /* out of memory: fall through to the cleanup below */
    } else if (type == SC_MAPPING_OBJECT) {
        st = parse_object_def(def, f, err);
    } else {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)def, k, v)
        {
            if (strcmp(k, "type") == 0)
                continue;
            if (alias && !strcmp(alias, "search_as_you_type") && !strcmp(k, "max_shingle_size")) {
                if (!json_is_integer(v) || json_integer_value(v) < 2 ||
                    json_integer_value(v) > 4) {
                    st = bad_param(err, "[max_shingle_size] on mapper [%s] must be 2, 3 or 4%s%s",
                                   name, "", "");
                    break;
                }
                f->max_shingle_size = (int32_t)json_integer_value(v);
                continue;
            }
            if (strcmp(k, "fields") == 0) {
                if (multi || !json_is_object(v) || type == SC_MAPPING_RANK_FEATURE ||
                    type == SC_MAPPING_RANK_FEATURES) {
                    st = bad_param(err, "[fields] on mapper [%s] must be an object%s%s", name,
                                   "", "");
                    break;
                }
                const char *sk;
                json_t *sv;
                json_object_foreach(v, sk, sv)
                {
                    sc_mapping_field *sub;
                    if (!json_is_object(sv) || !sk[0] || strchr(sk, '.')) {
                        st = bad_param(err, "invalid multi field [%s] on mapper [%s]%s", sk, name,
                                       "");
                        break;
                    }
                    st = sc__mapping_field_parse(sv, sk, f, true, &sub, err);
                    if (st == SC_OK)
                        st = sc__mapping_add_child(f, sub);
                    if (st != SC_OK)
                        break;
                }
            } else {
                st = parse_leaf_param(k, v, f, err);
            }
            if (st != SC_OK)
                break;
        }
        if (st == SC_OK && type == SC_MAPPING_DENSE_VECTOR)
            st = sc__mapping_vector_finish(f, err);
        if (st == SC_OK && alias && !strcmp(alias, "search_as_you_type"))
            st = sayt_subfields(f, err);
        if (st == SC_OK && type == SC_MAPPING_SCALED_FLOAT && !(f->scaling_factor > 0))
            st = bad_param(err, "Field [scaling_factor] is required%s%s%s", "", "", "");
        if (st == SC_OK && f->null_value) {
            sc_arena a;
            sc_arena_init(&a, 0);
            sc_slice term;
            int64_t num;
            sc_mapping_error e2;
            if (type != SC_MAPPING_TEXT &&
                sc__mapping_encode_scalar(f, f->null_value, NULL, &a, &term, &num, &e2) != SC_OK)
                st = bad_param(err, "Failed to parse [null_value] for field [%s]%s%s", name, "",
                               "");
            sc_arena_fini(&a);
        }
    }
    if (st != SC_OK) {
        sc__mapping_field_free(f);
        return st;
    }
    *out = f;
    return SC_OK;
}

static const char *const root_kept[] = {"_source", "_routing", "_meta", "dynamic_templates",
                                        "_field_names", "runtime", NULL};

sc_status sc_mapping_new(const json_t *json, sc_mapping **out, sc_mapping_error *err)
{
    *out = NULL;
    sc_mapping *m = sc__mapping_alloc();
    if (!m)
        return SC_ENOMEM;
    if (json && !json_is_object(json)) {
        sc_mapping_unref(m);
        return bad_param(err, "Expected map for property [mappings] but got %s%s%s",
                         "a non-object value", "", "");
    }
    sc_status st = SC_OK;
    /* Mappings wrapped in a type name ({"_doc": {...}}) as ES 6 clients send are unwrapped. */
    const json_t *body = json;
    if (json && json_object_size(json) == 1 && json_object_get(json, "_doc") &&
        json_is_object(json_object_get(json, "_doc")))
        body = json_object_get(json, "_doc");
    const char *k;
    json_t *v;
    if (body) {
        json_object_foreach((json_t *)body, k, v)
        {
            bool b;
            if (strcmp(k, "properties") == 0) {
                st = parse_properties(v, m->root, err);
            } else if (strcmp(k, "dynamic") == 0) {
                st = parse_dynamic(v, &m->root->dynamic, "", err);
            } else if (strcmp(k, "date_detection") == 0 || strcmp(k, "numeric_detection") == 0) {
                if (!json_bool_value(v, &b)) {
                    st = bad_param(err, "[%s] must be a boolean%s%s", k, "", "");
                } else if (k[0] == 'd') {
                    m->date_detection = b;
                    m->set_date_detection = true;
                } else {
                    m->numeric_detection = b;
                    m->set_numeric_detection = true;
                }
            } else if (in_list(k, root_kept)) {
                if (!m->root_extra && !(m->root_extra = json_object()))
                    st = SC_ENOMEM;
                else
                    json_object_set_new(m->root_extra, k, json_deep_copy(v));
            } else if (strcmp(k, "enabled") == 0 || strcmp(k, "subobjects") == 0) {
                continue;
            } else {
                st = bad_param(err, "Root mapping definition has unsupported parameters:  [%s : %s]%s",
                               k, json_is_string(v) ? json_string_value(v) : "...", "");
            }
            if (st != SC_OK)
                break;
        }
    }
    if (st == SC_OK)
        st = sc__mapping_reindex(m);
    if (st != SC_OK) {
        sc_mapping_unref(m);
        return st;
    }
    *out = m;
    return SC_OK;
}
