/* Mapping fields and the mapping object: field lookup, cloning and refcounting; see mapping.h.
 * Parsing mappings from JSON lives in mapping_parse.c; serialization lives in mapping_json.c, merging in merge.c, documents in parse_doc.c and value
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
    [SC_MAPPING_COMPLETION] = "completion", [SC_MAPPING_RANK_FEATURE] = "rank_feature",
    [SC_MAPPING_RANK_FEATURES] = "rank_features",
};

const char *sc_mapping_type_name(sc_mapping_type t)
{
    return (unsigned)t < sizeof(type_names) / sizeof(type_names[0]) ? type_names[t] : "unknown";
}

int sc__mapping_type_from_name(const char *s, sc_mapping_type *out)
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
    if (f->type == SC_MAPPING_RANK_FEATURE || f->type == SC_MAPPING_RANK_FEATURES)
        return SC_FIELD_NUMERIC;
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
    /* rank features are read from doc values only (mapping.h) */
    f->index = type != SC_MAPPING_RANK_FEATURE && type != SC_MAPPING_RANK_FEATURES;
    f->positive_score_impact = true;
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
    f->vec_oversample = -1;
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

const json_t *sc_mapping_runtime(const sc_mapping *m)
{
    return m && m->root_extra ? json_object_get(m->root_extra, "runtime") : NULL;
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
