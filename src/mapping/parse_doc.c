/* Document parsing: _source JSON -> sc_index_doc, with Elasticsearch's dynamic mapping rules.
 * A document is parsed against the immutable mapping first; if it introduces new fields under
 * dynamic:true, it is parsed again against a private copy that grows the new fields, and that
 * copy is handed back as the updated mapping. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/vec.h"
#include "mapping/internal.h"
#include "mapping/jdoc.h"

typedef struct acc {
    sc_mapping_field *field;
    SC_VEC(sc_index_token) toks;
    SC_VEC(int64_t) vals;
    int64_t position; /* Lucene's invert state: last absolute position, -1 before any */
    uint32_t length;
    uint32_t n_text_values;
    float *vec; /* dense_vector: the doc's vector (arena) */
} acc;

/* One feature of a rank_features field: a column "<field path>.<feature>" (mapping.h). */
typedef struct feat {
    sc_slice name; /* arena */
    int64_t value;
} feat;

typedef struct pctx {
    sc_mapping *m; /* the mapping used (base, or the growing clone in the second pass) */
    bool mutable_pass;
    const sc_mapping_analysis *an;
    sc_arena *arena;
    sc_slice id;
    acc *accs;
    size_t n_accs;
    uint32_t next_ord; /* ords for fields created in this pass */
    bool created;      /* a dynamic field was created */
    bool limit_hit;    /* SC_ELIMIT came from a mapping limit, not the arena */
    sc_mapping_error *err;
    SC_VEC(sc_index_doc) children; /* nested objects met so far (assembled in the arena) */
    const char *nested_path;       /* while walking a nested object: its path */
    SC_VEC(feat) feats;
} pctx;

/* Internal: the first pass met a field it must map dynamically. */
#define NEED_DYNAMIC SC_ECANCELLED

static acc *acc_for(pctx *c, sc_mapping_field *f)
{
    if (f->ord >= c->n_accs) {
        size_t n = f->ord + 16;
        acc *a = realloc(c->accs, n * sizeof(*a));
        if (!a)
            return NULL;
        memset(a + c->n_accs, 0, (n - c->n_accs) * sizeof(*a));
        c->accs = a;
        c->n_accs = n;
    }
    acc *a = &c->accs[f->ord];
    if (!a->field) {
        a->field = f;
        a->position = -1;
    }
    return a;
}

static void jd_preview(const sc__jd *v, char *buf, size_t cap)
{
    sc_slice t = v->type == SC__JD_STRING ? v->str : v->raw;
    size_t n = t.len < cap - 1 ? t.len : cap - 1;
    if (n)
        memcpy(buf, t.ptr, n);
    buf[n] = 0;
}

static sc_status doc_error(pctx *c, const sc_mapping_field *f, const sc__jd *v)
{
    char prev[128];
    jd_preview(v, prev, sizeof(prev));
    if (c->err) {
        c->err->type = "mapper_parsing_exception";
        snprintf(c->err->reason, sizeof(c->err->reason),
                 "failed to parse field [%s] of type [%s] in document with id '%.*s'. Preview of "
                 "field's value: '%s'",
                 f->path, sc_mapping_type_name(f->type), (int)(c->id.len > 200 ? 200 : c->id.len),
                 (const char *)c->id.ptr, prev);
    }
    return SC_EINVAL;
}

static size_t utf8_chars(sc_slice s)
{
    size_t n = 0;
    for (size_t i = 0; i < s.len; i++)
        n += (s.ptr[i] & 0xC0) != 0x80;
    return n;
}

static sc_status index_value(pctx *c, sc_mapping_field *f, const sc__jd *v, bool with_copy);

static sc_status index_text(pctx *c, sc_mapping_field *f, const sc__jd *v)
{
    /* numbers and booleans are analyzed as their JSON text */
    sc_slice text = v->type == SC__JD_STRING ? v->str : v->raw;
    acc *a = acc_for(c, f);
    if (!a)
        return SC_ENOMEM;
    sc_index_token *toks = NULL;
    size_t n = 0;
    if (f->index)
        SC_TRY(sc__mapping_analyze(c->an, f->analyzer, text, c->arena, &toks, &n));
    if (a->n_text_values++ > 0)
        a->position += f->position_increment_gap;
    int64_t base = a->position + 1;
    int64_t prev_rel = -1;
    SC_TRY(sc_vec_reserve(&a->toks, n));
    for (size_t i = 0; i < n; i++) {
        int64_t abs_pos = base + toks[i].position;
        if (abs_pos > UINT32_MAX - 1)
            break;
        sc_index_token t = {toks[i].term, (uint32_t)abs_pos};
        a->toks.ptr[a->toks.len++] = t;
        if ((int64_t)toks[i].position != prev_rel)
            a->length++;
        prev_rel = toks[i].position;
        a->position = abs_pos;
    }
    return SC_OK;
}

static void jd_scalar(const sc__jd *v, sc__scalar *s)
{
    memset(s, 0, sizeof(*s));
    switch (v->type) {
    case SC__JD_STRING:
        s->kind = SC__S_STRING;
        s->text = v->str;
        break;
    case SC__JD_INT:
        s->kind = SC__S_INT;
        s->i = v->i;
        s->d = v->d;
        s->text = v->raw;
        break;
    case SC__JD_REAL:
        s->kind = SC__S_REAL;
        s->d = v->d;
        s->text = v->raw;
        break;
    default:
        s->kind = SC__S_BOOL;
        s->b = v->type == SC__JD_TRUE;
        s->text = sc_slice_cstr(s->b ? "true" : "false");
        break;
    }
}

static int jd_coord(const sc__jd *v, double *out)
{
    if (!v)
        return 0;
    if (v->type == SC__JD_INT || v->type == SC__JD_REAL) {
        *out = v->d;
        return isfinite(*out);
    }
    if (v->type == SC__JD_STRING && v->str.len && v->str.len < 64) {
        char buf[64], *end;
        memcpy(buf, v->str.ptr, v->str.len);
        buf[v->str.len] = 0;
        *out = strtod(buf, &end);
        return *end == 0 && isfinite(*out);
    }
    return 0;
}

static const sc__jd *jd_member(const sc__jd *o, const char *key)
{
    for (const sc__jd *m = o->child; m; m = m->next)
        if (sc_slice_eq_cstr(m->key, key))
            return m;
    return NULL;
}

/* [lon, lat] or [lon, lat, z]. */
static int jd_lonlat(const sc__jd *v, double *lat, double *lon)
{
    const sc__jd *a = v->child, *b = a ? a->next : NULL;
    return v->type == SC__JD_ARRAY && (v->n == 2 || v->n == 3) && jd_coord(a, lon) &&
           jd_coord(b, lat);
}

/* A geo point given as {"lat": .., "lon": ..}, a GeoJSON {"type": "Point", "coordinates":
 * [lon, lat]} or a [lon, lat] array. */
static sc_status geo_from_jd(const sc__jd *v, int64_t *num, sc_mapping_error *err)
{
    double lat = 0, lon = 0;
    int ok;
    const sc__jd *coords = v->type == SC__JD_OBJECT ? jd_member(v, "coordinates") : NULL;
    if (coords) {
        const sc__jd *t = jd_member(v, "type");
        ok = t && t->type == SC__JD_STRING && t->str.len == 5 &&
             strncasecmp((const char *)t->str.ptr, "point", 5) == 0 &&
             jd_lonlat(coords, &lat, &lon);
    } else if (v->type == SC__JD_OBJECT) {
        ok = jd_coord(jd_member(v, "lat"), &lat) && jd_coord(jd_member(v, "lon"), &lon);
    } else {
        ok = jd_lonlat(v, &lat, &lon);
    }
    if (!ok) {
        sc__mapping_cause(err, "parse_exception", "unsupported geo_point value");
        return SC_EINVAL;
    }
    return sc__mapping_geo_latlon(lat, lon, num, err);
}

static sc_status index_scalar(pctx *c, sc_mapping_field *f, const sc__jd *v)
{
    if (f->type == SC_MAPPING_TEXT)
        return index_text(c, f, v);
    sc_slice term = {0};
    int64_t num = 0;
    sc_status st;
    if (v->type == SC__JD_OBJECT || v->type == SC__JD_ARRAY) {
        st = geo_from_jd(v, &num, c->err); /* callers only pass these for geo_point */
    } else {
        sc__scalar sv;
        jd_scalar(v, &sv);
        st = sc__mapping_encode(f, &sv, c->an, c->arena, &term, &num, c->err);
    }
    if (st == SC_EINVAL) {
        if (f->ignore_malformed)
            return SC_OK;
        const char *ct = c->err ? c->err->cause_type : NULL;
        char cr[256] = "";
        if (c->err)
            snprintf(cr, sizeof(cr), "%s", c->err->cause_reason);
        doc_error(c, f, v);
        if (c->err && ct) {
            c->err->cause_type = ct;
            snprintf(c->err->cause_reason, sizeof(c->err->cause_reason), "%s", cr);
        }
        return SC_EINVAL;
    }
    SC_TRY(st);
    if (f->type == SC_MAPPING_KEYWORD && f->ignore_above >= 0 && v->type == SC__JD_STRING &&
        utf8_chars(v->str) > (size_t)f->ignore_above)
        return SC_OK;
    if (!f->index && !f->doc_values)
        return SC_OK;
    acc *a = acc_for(c, f);
    if (!a)
        return SC_ENOMEM;
    if (sc_mapping_type_is_numeric(f->type))
        return sc_vec_push(&a->vals, num);
    sc_index_token t = {term, (uint32_t)a->toks.len};
    return sc_vec_push(&a->toks, t);
}

/* ---- dynamic mapping ---- */

static int looks_like_date(sc_slice s)
{
    /* Elasticsearch's default dynamic_date_formats start with strict_date_optional_time; we
     * require at least yyyy-MM-dd so that plain numbers and years stay strings. */
    if (s.len < 10)
        return 0;
    for (int i = 0; i < 10; i++) {
        int want_dash = i == 4 || i == 7;
        if (want_dash ? s.ptr[i] != '-' : (s.ptr[i] < '0' || s.ptr[i] > '9'))
            return 0;
    }
    return 1;
}

static const sc__jd *first_concrete(const sc__jd *v)
{
    while (v && v->type == SC__JD_ARRAY) {
        const sc__jd *found = NULL;
        for (const sc__jd *e = v->child; e && !found; e = e->next)
            if (e->type != SC__JD_NULL)
                found = e;
        v = found;
    }
    return v;
}

/* Creates the field `name` under obj for value v (second pass), or reports NEED_DYNAMIC (first
 * pass), or sets *out NULL when the value is to be ignored. */
static sc_status dynamic_field(pctx *c, sc_mapping_field *obj, const char *name, size_t len,
                               const sc__jd *v, sc_mapping_field **out)
{
    *out = NULL;
    sc_mapping_dynamic dyn = sc__mapping_effective_dynamic(obj);
    if (dyn == SC_MAPPING_DYNAMIC_STRICT) {
        sc__mapping_err(c->err, "strict_dynamic_mapping_exception",
                        "[%s] mapping set to strict, dynamic introduction of [%.*s] within [%s] is "
                        "not allowed",
                        obj->path[0] ? obj->path : "_doc", (int)len, name,
                        obj->path[0] ? obj->path : "_doc");
        return SC_ECONFLICT;
    }
    if (dyn == SC_MAPPING_DYNAMIC_FALSE)
        return SC_OK;
    const sc__jd *cv = v ? first_concrete(v) : NULL;
    if (v && (!cv || cv->type == SC__JD_NULL))
        return SC_OK; /* nulls and empty arrays add no mapping */
    if (!c->mutable_pass)
        return NEED_DYNAMIC;
    /* Elasticsearch's index.mapping.total_fields.limit and depth.limit defaults */
    if (c->next_ord + 2 > SC_MAPPING_MAX_FIELDS + 1) {
        sc__mapping_err(c->err, "illegal_argument_exception",
                        "Limit of total fields [%d] has been exceeded while adding new fields [1]",
                        SC_MAPPING_MAX_FIELDS);
        c->limit_hit = true;
        return SC_ELIMIT;
    }
    int depth = 1;
    for (const sc_mapping_field *p = obj; p->parent; p = p->parent)
        depth++;
    if (depth > SC_MAPPING_MAX_DEPTH) {
        sc__mapping_err(c->err, "illegal_argument_exception",
                        "Limit of mapping depth [%d] has been exceeded due to object field [%s]",
                        SC_MAPPING_MAX_DEPTH, obj->path);
        c->limit_hit = true;
        return SC_ELIMIT;
    }
    sc_mapping_type t;
    bool keyword_sub = false;
    if (!cv || cv->type == SC__JD_OBJECT) { /* NULL: an intermediate object of a dotted name */
        t = SC_MAPPING_OBJECT;
    } else if (cv->type == SC__JD_TRUE || cv->type == SC__JD_FALSE) {
        t = SC_MAPPING_BOOLEAN;
    } else if (cv->type == SC__JD_INT) {
        t = SC_MAPPING_LONG;
    } else if (cv->type == SC__JD_REAL) {
        t = SC_MAPPING_FLOAT;
    } else {
        sc_slice s = cv->str;
        t = SC_MAPPING_TEXT;
        keyword_sub = true;
        if (c->m->date_detection && looks_like_date(s)) {
            sc_date_format *df;
            int64_t ms;
            if (sc_date_format_new(sc_slice_cstr("strict_date_optional_time"), &df) == SC_OK) {
                if (sc_date_parse(df, s, &ms) == SC_OK) {
                    t = SC_MAPPING_DATE;
                    keyword_sub = false;
                }
                sc_date_format_free(df);
            }
        } else if (c->m->numeric_detection) {
            char *end;
            char buf[64];
            snprintf(buf, sizeof(buf), "%.*s", (int)(s.len < 63 ? s.len : 63), (const char *)s.ptr);
            if (s.len && s.len < 63) {
                (void)strtoll(buf, &end, 10);
                if (!*end) {
                    t = SC_MAPPING_LONG;
                    keyword_sub = false;
                } else {
                    (void)strtod(buf, &end);
                    if (!*end) {
                        t = SC_MAPPING_FLOAT;
                        keyword_sub = false;
                    }
                }
            }
        }
    }
    /* the whole name: a truncated one would not match the field on the next document */
    char *nm = strndup(name, len);
    sc_mapping_field *f = nm ? sc__mapping_field_new(nm, obj, t) : NULL;
    free(nm);
    if (!f)
        return SC_ENOMEM;
    f->ord = c->next_ord++;
    if (keyword_sub) {
        sc_mapping_field *k = sc__mapping_field_new("keyword", f, SC_MAPPING_KEYWORD);
        if (!k) {
            sc__mapping_field_free(f);
            return SC_ENOMEM;
        }
        k->is_multi_field = true;
        k->ignore_above = 256;
        k->ord = c->next_ord++;
        SC_TRY(sc__mapping_add_child(f, k));
    }
    SC_TRY(sc__mapping_add_child(obj, f));
    c->created = true;
    *out = f;
    return SC_OK;
}

/* ---- walking ---- */

static sc_status walk_object(pctx *c, sc_mapping_field *obj, const sc__jd *o)
{
    for (const sc__jd *v = o->child; v; v = v->next) {
        sc_mapping_field *parent = obj;
        const char *key = (const char *)v->key.ptr;
        size_t klen = v->key.len;
        const char *comp = key;
        const char *dot = NULL;
        if (klen == 0 || memchr(key, 0, klen)) {
            sc__mapping_err(c->err, "mapper_parsing_exception",
                            klen ? "field name cannot contain a NUL character"
                                 : "field name cannot be an empty string");
            return SC_EINVAL;
        }
        /* "a.b": c is field b of object a (objects created as needed). */
        while ((dot = memchr(comp, '.', (size_t)(key + klen - comp))) != NULL) {
            size_t n = (size_t)(dot - comp);
            if (n == 0 || dot + 1 == key + klen) {
                sc__mapping_err(c->err, "mapper_parsing_exception",
                                "field name cannot contain only whitespace or dots: [%.*s]",
                                (int)(klen > 200 ? 200 : klen), key);
                return SC_EINVAL;
            }
            sc_mapping_field *ch = sc__mapping_child(parent, comp, n);
            if (!ch) {
                SC_TRY(dynamic_field(c, parent, comp, n, NULL, &ch));
                if (!ch)
                    break; /* dynamic false: ignored */
            } else if (ch->type != SC_MAPPING_OBJECT) {
                sc__mapping_err(c->err, "mapper_parsing_exception",
                                "Could not dynamically add mapping for field [%.*s]. Existing "
                                "mapping for [%s] must be of type object but found [%s].",
                                (int)(klen > 200 ? 200 : klen), key, ch->path,
                                sc_mapping_type_name(ch->type));
                return SC_EINVAL;
            }
            parent = ch;
            comp = dot + 1;
        }
        if (dot)
            continue; /* ignored intermediate */
        size_t n = (size_t)(key + klen - comp);
        sc_mapping_field *f = sc__mapping_child(parent, comp, n);
        if (!f) {
            SC_TRY(dynamic_field(c, parent, comp, n, v, &f));
            if (!f)
                continue;
        }
        SC_TRY(index_value(c, f, v, true));
    }
    return SC_OK;
}

/* The field's null_value as a document value (parsed into the arena). */
static sc_status null_value_jd(pctx *c, const sc_mapping_field *f, const sc__jd **out)
{
    char *txt = json_dumps(f->null_value, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!txt)
        return SC_ENOMEM;
    size_t n = strlen(txt);
    char *copy = sc_arena_strndup(c->arena, txt, n);
    free(txt);
    if (!copy)
        return SC_ELIMIT;
    sc__jd *v;
    char msg[64];
    SC_TRY(sc__jdoc_parse(sc_slice_make(copy, n), c->arena, &v, msg, sizeof(msg)));
    *out = v;
    return SC_OK;
}

/* A dense_vector value: one per document. A mapping without dims takes the first vector's
 * length (a mapping update, as Elasticsearch). */
static sc_status index_vector(pctx *c, sc_mapping_field *f, const sc__jd *v)
{
    acc *a = acc_for(c, f);
    if (!a)
        return SC_ENOMEM;
    uint32_t dims = f->vec.dims;
    if (dims == 0) {
        if (!c->mutable_pass)
            return NEED_DYNAMIC;
        uint64_t n = v->type == SC__JD_ARRAY ? v->n : 0;
        if (f->vec.elem == SC_VEC_ELEM_BIT) /* bytes or hex digits -> bits */
            n = v->type == SC__JD_STRING ? (uint64_t)v->str.len / 2 * 8 : n * 8;
        if (n >= 1 && n <= sc_vec_max_dims(f->vec.elem)) {
            f->vec.dims = dims = (uint32_t)n;
            c->created = true;
        }
    }
    if (a->vec) {
        doc_error(c, f, v);
        sc__mapping_cause(c->err, "illegal_argument_exception",
                          "Field [%s] of type [dense_vector] doesn't support indexing multiple "
                          "values for the same field in the same document",
                          f->path);
        return SC_EINVAL;
    }
    sc_status st = sc__mapping_vector_value(f, v, dims, c->arena, &a->vec, c->err);
    if (st == SC_EINVAL) {
        char cause[256];
        snprintf(cause, sizeof(cause), "%s", c->err ? c->err->cause_reason : "");
        doc_error(c, f, v);
        if (c->err)
            sc__mapping_cause(c->err, "illegal_argument_exception", "%s", cause);
    }
    return st;
}

/* One completion input: truncated to max_input_length code points, analyzed, packed with its
 * weight (mapping.h). */
static sc_status completion_input(pctx *c, sc_mapping_field *f, const sc__jd *in, uint32_t weight)
{
    if (in->type != SC__JD_STRING) {
        doc_error(c, f, in);
        sc__mapping_cause(c->err, "illegal_argument_exception",
                          "completion input must be a string");
        return SC_EINVAL;
    }
    sc_slice text = in->str;
    size_t cps = 0, cut = text.len;
    for (size_t i = 0; i < text.len; i++)
        if ((text.ptr[i] & 0xC0) != 0x80 && cps++ == (size_t)f->max_input_length) {
            cut = i;
            break;
        }
    text.len = cut;
    if (memchr(text.ptr, 0, text.len)) {
        doc_error(c, f, in);
        sc__mapping_cause(c->err, "illegal_argument_exception",
                          "Illegal input [\\u0000] reserved character in suggest input");
        return SC_EINVAL;
    }
    sc_index_token *toks = NULL;
    size_t n = 0;
    SC_TRY(sc__mapping_analyze(c->an, f->analyzer ? f->analyzer : "simple", text, c->arena, &toks,
                               &n));
    if (n == 0)
        return SC_OK;
    sc_slice key;
    SC_TRY(sc_mapping_completion_key(f, toks, n, c->arena, &key));
    uint8_t *t = sc_arena_alloc(c->arena, key.len + 5 + text.len);
    if (!t)
        return SC_ELIMIT;
    memcpy(t, key.ptr, key.len);
    t[key.len] = 0;
    t[key.len + 1] = (uint8_t)(weight >> 24);
    t[key.len + 2] = (uint8_t)(weight >> 16);
    t[key.len + 3] = (uint8_t)(weight >> 8);
    t[key.len + 4] = (uint8_t)weight;
    memcpy(t + key.len + 5, text.ptr, text.len);
    acc *a = acc_for(c, f);
    if (!a)
        return SC_ENOMEM;
    sc_index_token tok = {sc_slice_make(t, key.len + 5 + text.len), (uint32_t)a->toks.len};
    return sc_vec_push(&a->toks, tok);
}

/* A completion value: a string, {"input": string or strings, "weight": n}, or an array of
 * those. */
static sc_status index_completion(pctx *c, sc_mapping_field *f, const sc__jd *v)
{
    if (v->type == SC__JD_NULL)
        return SC_OK;
    if (v->type == SC__JD_ARRAY) {
        for (const sc__jd *e = v->child; e; e = e->next)
            SC_TRY(index_completion(c, f, e));
        return SC_OK;
    }
    if (v->type != SC__JD_OBJECT)
        return completion_input(c, f, v, 1);
    const sc__jd *input = NULL;
    int64_t weight = 1;
    for (const sc__jd *m = v->child; m; m = m->next) {
        if (sc_slice_eq(m->key, sc_slice_cstr("input"))) {
            input = m;
        } else if (sc_slice_eq(m->key, sc_slice_cstr("weight"))) {
            char buf[32];
            size_t l = m->type == SC__JD_STRING && m->str.len < sizeof buf ? m->str.len : 0;
            if (l)
                memcpy(buf, m->str.ptr, l);
            buf[l] = 0;
            char *end = NULL;
            if (m->type == SC__JD_INT)
                weight = m->i;
            else if (l)
                weight = strtoll(buf, &end, 10);
            if ((m->type != SC__JD_INT && (!l || !end || *end)) || weight < 0 ||
                weight > INT32_MAX) {
                doc_error(c, f, m);
                sc__mapping_cause(c->err, "illegal_argument_exception",
                                  "weight must be an integer from 0 to 2147483647");
                return SC_EINVAL;
            }
        } else {
            doc_error(c, f, v);
            sc__mapping_cause(c->err, "illegal_argument_exception",
                              "unknown field name [%.*s], must be one of [input, weight]"
                              " (contexts are not supported)",
                              (int)(m->key.len > 100 ? 100 : m->key.len),
                              (const char *)m->key.ptr);
            return SC_EINVAL;
        }
    }
    if (!input) {
        doc_error(c, f, v);
        sc__mapping_cause(c->err, "illegal_argument_exception", "input must be set");
        return SC_EINVAL;
    }
    if (input->type == SC__JD_ARRAY) {
        for (const sc__jd *e = input->child; e; e = e->next)
            SC_TRY(completion_input(c, f, e, (uint32_t)weight));
        return SC_OK;
    }
    return completion_input(c, f, input, (uint32_t)weight);
}

static sc_status nested_child(pctx *c, sc_mapping_field *f, const sc__jd *v);
/* One rank feature value of field f (feature name for errors). */
static sc_status rank_value(pctx *c, const sc_mapping_field *f, const sc__jd *v, int64_t *out)
{
    if (v->type == SC__JD_ARRAY || v->type == SC__JD_OBJECT || v->type == SC__JD_TRUE ||
        v->type == SC__JD_FALSE) {
        doc_error(c, f, v);
        sc__mapping_cause(c->err, "illegal_argument_exception",
                          f->type == SC_MAPPING_RANK_FEATURES
                              ? "[rank_features] fields take hashes that map a feature to a "
                                "strictly positive float"
                              : "[rank_feature] fields do not support indexing multiple values "
                                "for the same field [%s] in the same document",
                          f->path);
        return SC_EINVAL;
    }
    sc__scalar sv;
    jd_scalar(v, &sv);
    sc_status st = sc__mapping_rank_feature_value(f, &sv, out, c->err);
    if (st == SC_EINVAL) {
        char cr[256] = "";
        const char *ct = c->err ? c->err->cause_type : NULL;
        if (c->err)
            snprintf(cr, sizeof cr, "%s", c->err->cause_reason);
        doc_error(c, f, v);
        if (c->err && ct)
            sc__mapping_cause(c->err, ct, "%s", cr);
    }
    return st;
}

/* rank_feature: one positive number per document; rank_features: {feature: number}. */
static sc_status index_rank(pctx *c, sc_mapping_field *f, const sc__jd *v)
{
    if (v->type == SC__JD_NULL)
        return SC_OK;
    int64_t x;
    if (f->type == SC_MAPPING_RANK_FEATURE) {
        acc *a = acc_for(c, f);
        if (!a)
            return SC_ENOMEM;
        if (a->vals.len) {
            doc_error(c, f, v);
            sc__mapping_cause(c->err, "illegal_argument_exception",
                              "[rank_feature] fields do not support indexing multiple values for "
                              "the same field [%s] in the same document",
                              f->path);
            return SC_EINVAL;
        }
        SC_TRY(rank_value(c, f, v, &x));
        return sc_vec_push(&a->vals, x);
    }
    if (v->type != SC__JD_OBJECT) {
        doc_error(c, f, v);
        sc__mapping_cause(c->err, "illegal_argument_exception",
                          "[rank_features] fields must be json objects, expected a START_OBJECT "
                          "but got: %s",
                          v->type == SC__JD_ARRAY ? "START_ARRAY" : "a value");
        return SC_EINVAL;
    }
    size_t plen = strlen(f->path);
    for (const sc__jd *m = v->child; m; m = m->next) {
        if (!m->key.len || memchr(m->key.ptr, '.', m->key.len) ||
            memchr(m->key.ptr, 0, m->key.len)) {
            doc_error(c, f, v);
            sc__mapping_cause(c->err, "illegal_argument_exception",
                              "[rank_features] fields do not support dots in feature names but "
                              "found [%.*s]",
                              (int)(m->key.len > 100 ? 100 : m->key.len), (const char *)m->key.ptr);
            return SC_EINVAL;
        }
        SC_TRY(rank_value(c, f, m, &x));
        char *name = sc_arena_alloc(c->arena, plen + 1 + m->key.len);
        if (!name)
            return SC_ELIMIT;
        memcpy(name, f->path, plen);
        name[plen] = '.';
        memcpy(name + plen + 1, m->key.ptr, m->key.len);
        feat ft = {sc_slice_make(name, plen + 1 + m->key.len), x};
        for (size_t i = 0; i < c->feats.len; i++)
            if (sc_slice_eq(c->feats.ptr[i].name, ft.name)) {
                doc_error(c, f, v);
                sc__mapping_cause(c->err, "illegal_argument_exception",
                                  "[rank_features] fields do not support indexing multiple values "
                                  "for the same rank feature [%.*s] in the same document",
                                  (int)(ft.name.len > 200 ? 200 : ft.name.len),
                                  (const char *)ft.name.ptr);
                return SC_EINVAL;
            }
        SC_TRY(sc_vec_push(&c->feats, ft));
    }
    return SC_OK;
}

static sc_status index_value(pctx *c, sc_mapping_field *f, const sc__jd *v, bool with_copy)
{
    if (f->type == SC_MAPPING_RANK_FEATURE || f->type == SC_MAPPING_RANK_FEATURES)
        return index_rank(c, f, v);
    if (f->type == SC_MAPPING_COMPLETION)
        return index_completion(c, f, v);
    if (f->type == SC_MAPPING_DENSE_VECTOR && v->type != SC__JD_NULL)
        return index_vector(c, f, v);
    if (f->type == SC_MAPPING_DENSE_VECTOR)
        return SC_OK;
    if (v->type == SC__JD_NULL) {
        if (!f->null_value)
            return SC_OK;
        SC_TRY(null_value_jd(c, f, &v));
        if (v->type == SC__JD_NULL)
            return SC_OK;
    }
    if (f->type == SC_MAPPING_GEO_POINT) {
        /* [lon, lat] is one point; other arrays hold several points */
        bool coords = v->type == SC__JD_ARRAY && v->n >= 2 && v->n <= 3;
        for (const sc__jd *e = v->child; coords && e; e = e->next)
            coords = e->type == SC__JD_INT || e->type == SC__JD_REAL;
        if (v->type == SC__JD_ARRAY && !coords) {
            for (const sc__jd *e = v->child; e; e = e->next)
                SC_TRY(index_value(c, f, e, with_copy));
            return SC_OK;
        }
        return index_scalar(c, f, v);
    }
    if (v->type == SC__JD_ARRAY) {
        for (const sc__jd *e = v->child; e; e = e->next)
            SC_TRY(index_value(c, f, e, with_copy));
        return SC_OK;
    }
    if (f->type == SC_MAPPING_OBJECT) {
        if (v->type != SC__JD_OBJECT) {
            sc__mapping_err(c->err, "mapper_parsing_exception",
                            "object mapping for [%s] tried to parse field [%s] as object, but "
                            "found a concrete value",
                            f->path, f->name);
            return SC_EINVAL;
        }
        if (f->nested && f->enabled)
            return nested_child(c, f, v);
        return f->enabled ? walk_object(c, f, v) : SC_OK;
    }
    if (v->type == SC__JD_OBJECT)
        return doc_error(c, f, v);
    SC_TRY(index_scalar(c, f, v));
    for (size_t i = 0; i < f->n_children; i++)
        SC_TRY(index_value(c, f->children[i], v, false));
    if (with_copy) {
        for (size_t i = 0; i < f->n_copy_to; i++) {
            sc_mapping_field *t =
                (sc_mapping_field *)sc_mapping_find(c->m, sc_slice_cstr(f->copy_to[i]));
            if (t && t->type != SC_MAPPING_OBJECT)
                SC_TRY(index_value(c, t, v, false));
        }
    }
    return SC_OK;
}

static uint32_t field_flags(const sc_mapping_field *f)
{
    uint32_t fl = 0;
    if (f->index)
        fl |= SC_FIELD_INDEXED;
    if (f->type == SC_MAPPING_TEXT) {
        fl |= SC_FIELD_POSITIONS;
        if (f->norms)
            fl |= SC_FIELD_NORMS;
    } else if (f->doc_values) {
        fl |= SC_FIELD_DOCVALUES;
    }
    if (f->type == SC_MAPPING_GEO_POINT)
        fl |= SC_FIELD_GEO; /* points as a 2-D tree */
    return fl;
}

/* The fields gathered in c->accs as *doc's fields: _id first, then (for a nested child,
 * c->nested_path set) SC_NESTED_PATH_FIELD, then the mapped fields. */
static sc_status assemble(pctx *c, sc_index_doc *doc)
{
    size_t n = 2 + c->feats.len;
    for (size_t i = 0; i < c->n_accs; i++)
        n += c->accs[i].field != NULL;
    sc_index_field *fields = sc_arena_calloc(c->arena, n, sizeof(*fields));
    sc_index_token *idtok = sc_arena_alloc(c->arena, 2 * sizeof(*idtok));
    if (!fields || !idtok)
        return SC_ELIMIT;
    idtok->term = c->id;
    idtok->position = 0;
    fields[0].name = sc_slice_cstr("_id");
    fields[0].kind = SC_FIELD_KEYWORD;
    /* doc values too: fetch reads a hit's _id from them without decompressing stored fields */
    fields[0].flags = SC_FIELD_INDEXED | SC_FIELD_DOCVALUES;
    fields[0].tokens = idtok;
    fields[0].n_tokens = 1;
    size_t k = 1;
    if (c->nested_path) {
        idtok[1].term = sc_slice_cstr(c->nested_path);
        idtok[1].position = 0;
        fields[1].name = sc_slice_cstr(SC_NESTED_PATH_FIELD);
        fields[1].kind = SC_FIELD_KEYWORD;
        fields[1].flags = SC_FIELD_INDEXED;
        fields[1].tokens = &idtok[1];
        fields[1].n_tokens = 1;
        k = 2;
    }
    for (size_t i = 0; i < c->n_accs; i++) {
        acc *a = &c->accs[i];
        if (!a->field || (a->toks.len == 0 && a->vals.len == 0 && !a->vec))
            continue;
        sc_mapping_field *f = a->field;
        uint32_t fl = field_flags(f);
        if (!(fl & (SC_FIELD_INDEXED | SC_FIELD_DOCVALUES)) && !a->vec)
            continue;
        sc_index_field *o = &fields[k++];
        char *name = sc_arena_strndup(c->arena, f->path, strlen(f->path));
        if (!name)
            return SC_ELIMIT;
        o->name = sc_slice_cstr(name);
        o->kind = sc_mapping_field_kind(f);
        o->flags = fl;
        if (a->toks.len) {
            sc_index_token *t = sc_arena_alloc(c->arena, a->toks.len * sizeof(*t));
            if (!t)
                return SC_ELIMIT;
            memcpy(t, a->toks.ptr, a->toks.len * sizeof(*t));
            o->tokens = t;
            o->n_tokens = a->toks.len;
        }
        if (a->vals.len) {
            int64_t *vv = sc_arena_alloc(c->arena, a->vals.len * sizeof(*vv));
            if (!vv)
                return SC_ELIMIT;
            memcpy(vv, a->vals.ptr, a->vals.len * sizeof(*vv));
            o->values = vv;
            o->n_values = a->vals.len;
        }
        o->length = a->length;
        if (a->vec) {
            /* copied: the mapping of a second (dynamic) pass may be dropped before indexing */
            sc_vec_params *vp = sc_arena_alloc(c->arena, sizeof(*vp));
            if (!vp)
                return SC_ELIMIT;
            *vp = f->vec;
            if (!f->index) /* stored for exact scoring only: no graph, no codes */
                vp->type = SC_VEC_INDEX_FLAT;
            o->vector = a->vec;
            o->vparams = vp;
            o->flags = f->index ? SC_FIELD_INDEXED : 0;
        }
    }
    /* copied: feats is freed after assembly; names already live in the arena */
    int64_t *fv = c->feats.len ? sc_arena_alloc(c->arena, c->feats.len * sizeof(*fv)) : NULL;
    if (c->feats.len && !fv)
        return SC_ELIMIT;
    for (size_t i = 0; i < c->feats.len; i++) {
        sc_index_field *o = &fields[k++];
        o->name = c->feats.ptr[i].name;
        o->kind = SC_FIELD_NUMERIC;
        o->flags = SC_FIELD_DOCVALUES;
        fv[i] = c->feats.ptr[i].value;
        o->values = &fv[i];
        o->n_values = 1;
    }
    doc->fields = fields;
    doc->n_fields = k;
    return SC_OK;
}

static void reset(pctx *c)
{
    for (size_t i = 0; i < c->n_accs; i++) {
        sc_vec_free(&c->accs[i].toks);
        sc_vec_free(&c->accs[i].vals);
    }
    free(c->accs);
    c->accs = NULL;
    c->n_accs = 0;
    sc_vec_free(&c->feats);
}

/* One object of nested field f: its fields are gathered apart (c->accs swapped out) and
 * assembled as a hidden child document. */
static sc_status nested_child(pctx *c, sc_mapping_field *f, const sc__jd *v)
{
    if (c->nested_path) { /* the mapping refuses nested in nested; dynamic cannot create it */
        sc__mapping_err(c->err, "mapper_parsing_exception",
                        "nested object [%s] inside nested object [%s] is not supported", f->path,
                        c->nested_path);
        return SC_EINVAL;
    }
    acc *saved = c->accs;
    size_t saved_n = c->n_accs;
    c->accs = NULL;
    c->n_accs = 0;
    /* the root's rank features so far stay the root's; the object's go to its child doc */
    __typeof__(c->feats) saved_feats = c->feats;
    memset(&c->feats, 0, sizeof c->feats);
    char *path = sc_arena_strndup(c->arena, f->path, strlen(f->path));
    c->nested_path = path;
    sc_index_doc child = {.id = c->id};
    sc_status st = path ? walk_object(c, f, v) : SC_ELIMIT;
    if (st == SC_OK)
        st = assemble(c, &child);
    reset(c);
    c->nested_path = NULL;
    c->accs = saved;
    c->n_accs = saved_n;
    c->feats = saved_feats;
    if (st == SC_OK)
        st = sc_vec_push(&c->children, child);
    return st;
}

static sc_status run(pctx *c, const sc__jd *src, sc_index_doc *doc)
{
    c->next_ord = (uint32_t)c->m->n_fields;
    c->children.len = 0;
    sc_status st = walk_object(c, c->m->root, src);
    if (st == SC_OK)
        st = assemble(c, doc);
    if (st == SC_OK && c->children.len) {
        sc_index_doc *ch = sc_arena_alloc(c->arena, c->children.len * sizeof(*ch));
        if (!ch) {
            st = SC_ELIMIT;
        } else {
            memcpy(ch, c->children.ptr, c->children.len * sizeof(*ch));
            doc->children = ch;
            doc->n_children = c->children.len;
        }
    }
    reset(c);
    return st;
}

sc_status sc_mapping_parse_doc(const sc_mapping *m, const sc_mapping_analysis *analysis,
                               sc_slice id, sc_slice source, sc_arena *arena, sc_index_doc *doc,
                               sc_mapping **updated, sc_mapping_error *err)
{
    *updated = NULL;
    memset(doc, 0, sizeof(*doc));
    doc->id = id;
    doc->source = source;
    sc__jd *src = NULL;
    char msg[160];
    sc_status pst = sc__jdoc_parse(source, arena, &src, msg, sizeof(msg));
    if (pst == SC_ELIMIT)
        return arena->over_budget ? SC_ELIMIT : SC_ENOMEM;
    if (pst != SC_OK || src->type != SC__JD_OBJECT) {
        sc__mapping_err(err, "mapper_parsing_exception", "failed to parse");
        if (pst == SC_OK)
            sc__mapping_cause(err, "not_x_content_exception",
                              "Compressor detection can only be called on some xcontent bytes or "
                              "compressed xcontent bytes");
        else
            sc__mapping_cause(err, "json_parse_exception", "%s", msg);
        return SC_EPARSE;
    }
    pctx c = {.m = (sc_mapping *)m, .an = analysis, .arena = arena, .id = id, .err = err};
    sc_arena_mark mark = sc_arena_mark_get(arena);
    sc_status st = run(&c, src, doc);
    if (st == NEED_DYNAMIC) {
        sc_arena_rewind(arena, mark);
        sc_mapping *clone = sc__mapping_clone(m);
        if (!clone)
            return SC_ENOMEM;
        c.m = clone;
        c.mutable_pass = true;
        st = run(&c, src, doc);
        if (st == SC_OK)
            st = sc__mapping_reindex(clone);
        if (st == SC_OK && c.created)
            *updated = clone;
        else
            sc_mapping_unref(clone);
    }
    sc_vec_free(&c.children);
    if (st == SC_ELIMIT && !arena->over_budget && !c.limit_hit)
        st = SC_ENOMEM;
    return st;
}
