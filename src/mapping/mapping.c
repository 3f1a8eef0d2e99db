/* Building mappings from JSON, field lookup, cloning and refcounting; see mapping.h.
 * Serialization lives in mapping_json.c, merging in merge.c, documents in parse_doc.c and value
 * encoding in value.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapping/internal.h"

void sc__mapping_err(sc_mapping_error *err, const char *type, const char *fmt, ...)
{
    if (!err)
        return;
    err->type = type;
    err->cause_type = NULL;
    err->cause_reason[0] = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
    va_end(ap);
}

void sc__mapping_cause(sc_mapping_error *err, const char *type, const char *fmt, ...)
{
    if (!err)
        return;
    err->cause_type = type;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->cause_reason, sizeof(err->cause_reason), fmt, ap);
    va_end(ap);
}

void sc_mapping_error_write(const sc_mapping_error *err, sc_jsonw *w)
{
    sc_jsonw_kv_str(w, "type", err->type ? err->type : "mapper_parsing_exception");
    sc_jsonw_kv_str(w, "reason", err->reason);
    if (err->cause_type) {
        sc_jsonw_key(w, "caused_by");
        sc_jsonw_obj_begin(w);
        sc_jsonw_kv_str(w, "type", err->cause_type);
        sc_jsonw_kv_str(w, "reason", err->cause_reason);
        sc_jsonw_obj_end(w);
    }
}

static const char *const type_names[] = {
    [SC_MAPPING_OBJECT] = "object",         [SC_MAPPING_TEXT] = "text",
    [SC_MAPPING_KEYWORD] = "keyword",       [SC_MAPPING_LONG] = "long",
    [SC_MAPPING_INTEGER] = "integer",       [SC_MAPPING_SHORT] = "short",
    [SC_MAPPING_BYTE] = "byte",             [SC_MAPPING_DOUBLE] = "double",
    [SC_MAPPING_FLOAT] = "float",           [SC_MAPPING_HALF_FLOAT] = "half_float",
    [SC_MAPPING_SCALED_FLOAT] = "scaled_float", [SC_MAPPING_UNSIGNED_LONG] = "unsigned_long",
    [SC_MAPPING_BOOLEAN] = "boolean",       [SC_MAPPING_DATE] = "date",
    [SC_MAPPING_IP] = "ip",                 [SC_MAPPING_GEO_POINT] = "geo_point",
    [SC_MAPPING_DATE_NANOS] = "date_nanos", [SC_MAPPING_DENSE_VECTOR] = "dense_vector",
    [SC_MAPPING_COMPLETION] = "completion",
};

const char *sc_mapping_type_name(sc_mapping_type t)
{
    return (unsigned)t < sizeof(type_names) / sizeof(type_names[0]) ? type_names[t] : "unknown";
}

static int type_from_name(const char *s, sc_mapping_type *out)
{
    for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
        if (strcmp(type_names[i], s) == 0) {
            *out = (sc_mapping_type)i;
            return 1;
        }
    }
    return 0;
}

bool sc_mapping_type_is_numeric(sc_mapping_type t)
{
    switch (t) {
    case SC_MAPPING_LONG:
    case SC_MAPPING_INTEGER:
    case SC_MAPPING_SHORT:
    case SC_MAPPING_BYTE:
    case SC_MAPPING_DOUBLE:
    case SC_MAPPING_FLOAT:
    case SC_MAPPING_HALF_FLOAT:
    case SC_MAPPING_SCALED_FLOAT:
    case SC_MAPPING_UNSIGNED_LONG:
    case SC_MAPPING_BOOLEAN:
    case SC_MAPPING_DATE:
    case SC_MAPPING_DATE_NANOS:
    case SC_MAPPING_GEO_POINT:
        return true;
    default:
        return false;
    }
}

sc_field_kind sc_mapping_field_kind(const sc_mapping_field *f)
{
    if (f->type == SC_MAPPING_TEXT)
        return SC_FIELD_TEXT;
    if (f->type == SC_MAPPING_DENSE_VECTOR)
        return SC_FIELD_VECTOR;
    return sc_mapping_type_is_numeric(f->type) ? SC_FIELD_NUMERIC : SC_FIELD_KEYWORD;
}

const char *sc_mapping_search_analyzer(const sc_mapping_field *f, bool quoted)
{
    if (quoted && f->search_quote_analyzer)
        return f->search_quote_analyzer;
    if (f->search_analyzer)
        return f->search_analyzer;
    return f->analyzer ? f->analyzer : "standard";
}

const sc_mapping_field *sc_mapping_keyword_subfield(const sc_mapping_field *f)
{
    if (f->type == SC_MAPPING_OBJECT)
        return NULL;
    for (size_t i = 0; i < f->n_children; i++)
        if (f->children[i]->type == SC_MAPPING_KEYWORD)
            return f->children[i];
    return NULL;
}

/* ---- fields ---- */

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static char *join_path(const sc_mapping_field *parent, const char *name)
{
    if (!parent || !parent->path || !parent->path[0])
        return strdup(name);
    size_t a = strlen(parent->path), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p)
        return NULL;
    memcpy(p, parent->path, a);
    p[a] = '.';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

sc_mapping_field *sc__mapping_field_new(const char *name, sc_mapping_field *parent,
                                        sc_mapping_type type)
{
    sc_mapping_field *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->name = strdup(name);
    f->path = join_path(parent, name);
    f->parent = parent;
    f->type = type;
    f->index = true;
    f->doc_values = type != SC_MAPPING_TEXT && type != SC_MAPPING_COMPLETION;
    f->max_input_length = 50;
    f->preserve_separators = f->preserve_position_increments = true;
    f->norms = type == SC_MAPPING_TEXT;
    f->enabled = true;
    f->coerce = true;
    f->ignore_above = -1;
    f->position_increment_gap = 100;
    f->vec = (sc_vec_params){0, SC_VEC_SIM_COSINE, SC_VEC_ELEM_FLOAT, SC__VEC_TYPE_UNSET, 16, 100};
    f->vec_confidence = -1;
    bool is_date = type == SC_MAPPING_DATE || type == SC_MAPPING_DATE_NANOS;
    if (is_date &&
        sc_date_format_new(sc_slice_cstr(SC_DATE_DEFAULT_FORMAT), &f->date_format) != SC_OK)
        f->date_format = NULL;
    if (!f->name || !f->path || (is_date && !f->date_format)) {
        sc__mapping_field_free(f);
        return NULL;
    }
    return f;
}

void sc__mapping_field_free(sc_mapping_field *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_children; i++)
        sc__mapping_field_free(f->children[i]);
    free(f->children);
    free(f->name);
    free(f->path);
    free(f->type_alias);
    free(f->analyzer);
    free(f->search_analyzer);
    free(f->search_quote_analyzer);
    free(f->normalizer);
    free(f->format);
    sc_date_format_free(f->date_format);
    json_decref(f->null_value);
    for (size_t i = 0; i < f->n_copy_to; i++)
        free(f->copy_to[i]);
    free(f->copy_to);
    json_decref(f->meta);
    json_decref(f->extra);
    free(f);
}

sc_mapping_field *sc__mapping_child(const sc_mapping_field *parent, const char *name, size_t len)
{
    size_t lo = 0, hi = parent->n_children;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *cn = parent->children[mid]->name;
        /* names hold no NUL, so strncmp orders like a byte compare with prefixes first */
        int c = len ? strncmp(cn, name, len) : 0;
        if (c == 0)
            c = cn[len] != 0;
        if (c == 0)
            return parent->children[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

sc_status sc__mapping_add_child(sc_mapping_field *parent, sc_mapping_field *child)
{
    sc_mapping_field **nc =
        realloc(parent->children, (parent->n_children + 1) * sizeof(*parent->children));
    if (!nc) {
        sc__mapping_field_free(child);
        return SC_ENOMEM;
    }
    parent->children = nc;
    size_t i = parent->n_children;
    while (i > 0 && strcmp(nc[i - 1]->name, child->name) > 0) {
        nc[i] = nc[i - 1];
        i--;
    }
    nc[i] = child;
    parent->n_children++;
    child->parent = parent;
    return SC_OK;
}

/* Rewrites the paths of f's subtree after it moved under a new parent. */
static sc_status fix_paths(sc_mapping_field *f)
{
    char *p = join_path(f->parent, f->name);
    if (!p)
        return SC_ENOMEM;
    free(f->path);
    f->path = p;
    for (size_t i = 0; i < f->n_children; i++) {
        f->children[i]->parent = f;
        SC_TRY(fix_paths(f->children[i]));
    }
    return SC_OK;
}

/* ---- parsing field definitions ---- */

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

static const char *const *params_for(sc_mapping_type t)
{
    switch (t) {
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
            return bad_param(err, "unknown parameter [%s] on mapper [%s] of type [%s]", k,
                             f->path, "object");
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
        } else if (strcmp(ts, "constant_keyword") == 0 || strcmp(ts, "wildcard") == 0) {
            type = SC_MAPPING_KEYWORD;
            alias = ts;
        } else if (!type_from_name(ts, &type))
            return bad_param(err, "No handler for type [%s] declared on field [%s]%s", ts, name,
                             "");
    } else if (multi) {
        return bad_param(err, "No type specified for field [%s]%s%s", name, "", "");
    }
    if (multi && type == SC_MAPPING_OBJECT)
        return bad_param(err, "Type [object] cannot be used in multi field [%s]%s%s", name, "", "");
    sc_mapping_field *f = sc__mapping_field_new(name, parent, type);
    if (!f)
        return SC_ENOMEM;
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
                if (multi || !json_is_object(v)) {
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

/* ---- the mapping object ---- */

sc_mapping *sc__mapping_alloc(void)
{
    sc_mapping *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    atomic_init(&m->refs, 1);
    m->date_detection = true;
    m->root = sc__mapping_field_new("", NULL, SC_MAPPING_OBJECT);
    if (!m->root || sc__mapping_reindex(m) != SC_OK) {
        sc_mapping_unref(m);
        return NULL;
    }
    return m;
}

static void count_fields(const sc_mapping_field *f, size_t *n)
{
    (*n)++;
    for (size_t i = 0; i < f->n_children; i++)
        count_fields(f->children[i], n);
}

static void fill_ords(sc_mapping_field *f, sc_mapping_field **by_ord, size_t *n)
{
    f->ord = (uint32_t)*n;
    by_ord[(*n)++] = f;
    for (size_t i = 0; i < f->n_children; i++)
        fill_ords(f->children[i], by_ord, n);
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp((*(sc_mapping_field *const *)a)->path, (*(sc_mapping_field *const *)b)->path);
}

sc_status sc__mapping_reindex(sc_mapping *m)
{
    size_t n = 0;
    count_fields(m->root, &n);
    sc_mapping_field **by_ord = malloc(n * sizeof(*by_ord));
    sc_mapping_field **sorted = malloc(n * sizeof(*sorted));
    if (!by_ord || !sorted) {
        free(by_ord);
        free(sorted);
        return SC_ENOMEM;
    }
    size_t k = 0;
    fill_ords(m->root, by_ord, &k);
    memcpy(sorted, by_ord, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), cmp_path);
    free(m->by_ord);
    free(m->sorted);
    m->by_ord = by_ord;
    m->sorted = sorted;
    m->n_fields = n;
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

sc_mapping *sc_mapping_ref(sc_mapping *m)
{
    if (m)
        atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
    return m;
}

void sc_mapping_unref(sc_mapping *m)
{
    if (!m || atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1)
        return;
    sc__mapping_field_free(m->root);
    free(m->by_ord);
    free(m->sorted);
    json_decref(m->root_extra);
    free(m);
}

static sc_mapping_field *clone_field(const sc_mapping_field *src, sc_mapping_field *parent)
{
    sc_mapping_field *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    *f = *src;
    f->parent = parent;
    f->children = NULL;
    f->n_children = 0;
    f->name = xstrdup(src->name);
    f->path = xstrdup(src->path);
    f->type_alias = xstrdup(src->type_alias);
    f->analyzer = xstrdup(src->analyzer);
    f->search_analyzer = xstrdup(src->search_analyzer);
    f->search_quote_analyzer = xstrdup(src->search_quote_analyzer);
    f->normalizer = xstrdup(src->normalizer);
    f->format = xstrdup(src->format);
    f->date_format = NULL;
    f->null_value = src->null_value ? json_deep_copy(src->null_value) : NULL;
    f->meta = src->meta ? json_deep_copy(src->meta) : NULL;
    f->extra = src->extra ? json_deep_copy(src->extra) : NULL;
    f->copy_to = src->n_copy_to ? calloc(src->n_copy_to, sizeof(char *)) : NULL;
    f->n_copy_to = 0;
    int ok = f->name && f->path;
    for (size_t i = 0; ok && i < src->n_copy_to; i++) {
        f->copy_to[i] = strdup(src->copy_to[i]);
        ok = f->copy_to[i] != NULL;
        f->n_copy_to = i + 1;
    }
    if (ok && src->date_format)
        ok = sc_date_format_new(sc_slice_cstr(sc_date_format_spec(src->date_format)),
                                &f->date_format) == SC_OK;
    if (ok && src->n_children) {
        f->children = calloc(src->n_children, sizeof(*f->children));
        ok = f->children != NULL;
        for (size_t i = 0; ok && i < src->n_children; i++) {
            f->children[i] = clone_field(src->children[i], f);
            ok = f->children[i] != NULL;
            if (ok)
                f->n_children = i + 1;
        }
    }
    if (!ok) {
        sc__mapping_field_free(f);
        return NULL;
    }
    return f;
}

sc_mapping *sc__mapping_clone(const sc_mapping *m)
{
    sc_mapping *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    c->date_detection = m->date_detection;
    c->numeric_detection = m->numeric_detection;
    c->set_date_detection = m->set_date_detection;
    c->set_numeric_detection = m->set_numeric_detection;
    c->root_extra = m->root_extra ? json_deep_copy(m->root_extra) : NULL;
    c->root = clone_field(m->root, NULL);
    if (!c->root || sc__mapping_reindex(c) != SC_OK) {
        sc_mapping_unref(c);
        return NULL;
    }
    return c;
}

sc_mapping_dynamic sc__mapping_effective_dynamic(const sc_mapping_field *obj)
{
    for (; obj; obj = obj->parent)
        if (obj->dynamic != SC_MAPPING_DYNAMIC_INHERIT)
            return obj->dynamic;
    return SC_MAPPING_DYNAMIC_TRUE;
}

const sc_mapping_field *sc_mapping_find(const sc_mapping *m, sc_slice path)
{
    size_t lo = 0, hi = m->n_fields;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *p = m->sorted[mid]->path;
        size_t pl = strlen(p);
        size_t n = pl < path.len ? pl : path.len;
        int c = n ? memcmp(p, path.ptr, n) : 0;
        if (c == 0)
            c = (pl > path.len) - (pl < path.len);
        if (c == 0)
            return m->sorted[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const sc_mapping_field *sc_mapping_root(const sc_mapping *m)
{
    return m->root;
}

size_t sc_mapping_n_fields(const sc_mapping *m)
{
    return m->n_fields;
}

const sc_mapping_field *sc_mapping_field_at(const sc_mapping *m, uint32_t ord)
{
    return ord < m->n_fields ? m->by_ord[ord] : NULL;
}

sc_status sc__mapping_adopt(sc_mapping_field *parent, sc_mapping_field *child)
{
    child->parent = parent;
    sc_status st = fix_paths(child);
    if (st != SC_OK) {
        sc__mapping_field_free(child);
        return st;
    }
    return sc__mapping_add_child(parent, child);
}
