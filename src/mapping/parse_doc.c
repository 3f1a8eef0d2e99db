/* Document parsing: _source JSON -> sc_index_doc, with Elasticsearch's dynamic mapping rules.
 * A document is parsed against the immutable mapping first; if it introduces new fields under
 * dynamic:true, it is parsed again against a private copy that grows the new fields, and that
 * copy is handed back as the updated mapping. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "mapping/internal.h"

typedef struct acc {
    sc_mapping_field *field;
    SC_VEC(sc_index_token) toks;
    SC_VEC(int64_t) vals;
    int64_t position; /* Lucene's invert state: last absolute position, -1 before any */
    uint32_t length;
    uint32_t n_text_values;
} acc;

typedef struct pctx {
    sc_mapping *m;   /* the mapping used (base, or the growing clone in the second pass) */
    bool mutable_pass;
    const sc_mapping_analysis *an;
    sc_arena *arena;
    sc_slice id;
    acc *accs;
    size_t n_accs;
    uint32_t next_ord; /* ords for fields created in this pass */
    bool created;      /* a dynamic field was created */
    sc_mapping_error *err;
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

static sc_status doc_error(pctx *c, const sc_mapping_field *f, const json_t *v)
{
    char prev[128];
    sc__mapping_preview(v, prev, sizeof(prev));
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

static sc_status index_value(pctx *c, sc_mapping_field *f, const json_t *v, bool with_copy);

static sc_status index_text(pctx *c, sc_mapping_field *f, const json_t *v)
{
    sc_slice text;
    char *dump = NULL;
    if (json_is_string(v)) {
        text = sc_slice_make(json_string_value(v), json_string_length(v));
    } else {
        dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!dump)
            return SC_ENOMEM;
        text = sc_slice_cstr(dump);
    }
    acc *a = acc_for(c, f);
    if (!a) {
        free(dump);
        return SC_ENOMEM;
    }
    sc_index_token *toks = NULL;
    size_t n = 0;
    sc_status st = SC_OK;
    if (f->index)
        st = sc__mapping_analyze(c->an, f->analyzer, text, c->arena, &toks, &n);
    free(dump);
    SC_TRY(st);
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

static sc_status index_scalar(pctx *c, sc_mapping_field *f, const json_t *v)
{
    if (f->type == SC_MAPPING_TEXT)
        return index_text(c, f, v);
    sc_slice term = {0};
    int64_t num = 0;
    sc_status st = sc__mapping_encode_scalar(f, v, c->an, c->arena, &term, &num, c->err);
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
    if (f->type == SC_MAPPING_KEYWORD && f->ignore_above >= 0 && json_is_string(v) &&
        utf8_chars(sc_slice_make(json_string_value(v), json_string_length(v))) >
            (size_t)f->ignore_above)
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

static const json_t *first_concrete(const json_t *v)
{
    while (json_is_array(v)) {
        const json_t *found = NULL;
        for (size_t i = 0; i < json_array_size(v) && !found; i++)
            if (!json_is_null(json_array_get(v, i)))
                found = json_array_get(v, i);
        v = found;
    }
    return v;
}

/* Creates the field `name` under obj for value v (second pass), or reports NEED_DYNAMIC (first
 * pass), or sets *out NULL when the value is to be ignored. */
static sc_status dynamic_field(pctx *c, sc_mapping_field *obj, const char *name, size_t len,
                               const json_t *v, sc_mapping_field **out)
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
    const json_t *cv = first_concrete(v);
    if (!cv || json_is_null(cv))
        return SC_OK; /* nulls and empty arrays add no mapping */
    if (!c->mutable_pass)
        return NEED_DYNAMIC;
    sc_mapping_type t;
    bool keyword_sub = false;
    if (json_is_object(cv)) {
        t = SC_MAPPING_OBJECT;
    } else if (json_is_boolean(cv)) {
        t = SC_MAPPING_BOOLEAN;
    } else if (json_is_integer(cv)) {
        t = SC_MAPPING_LONG;
    } else if (json_is_real(cv)) {
        t = SC_MAPPING_FLOAT;
    } else {
        sc_slice s = sc_slice_make(json_string_value(cv), json_string_length(cv));
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
    char nm[256];
    snprintf(nm, sizeof(nm), "%.*s", (int)(len < 255 ? len : 255), name);
    sc_mapping_field *f = sc__mapping_field_new(nm, obj, t);
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

static sc_status walk_object(pctx *c, sc_mapping_field *obj, const json_t *o)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        sc_mapping_field *parent = obj;
        const char *comp = key;
        const char *dot;
        size_t klen = strlen(key);
        if (klen == 0) {
            sc__mapping_err(c->err, "mapper_parsing_exception",
                            "field name cannot be an empty string");
            return SC_EINVAL;
        }
        /* "a.b": c is field b of object a (objects created as needed). */
        while ((dot = memchr(comp, '.', (size_t)(key + klen - comp))) != NULL) {
            size_t n = (size_t)(dot - comp);
            if (n == 0 || dot + 1 == key + klen) {
                sc__mapping_err(c->err, "mapper_parsing_exception",
                                "field name cannot contain only whitespace or dots: [%s]", key);
                return SC_EINVAL;
            }
            sc_mapping_field *ch = sc__mapping_child(parent, comp, n);
            if (!ch) {
                json_t *probe = json_object();
                if (!probe)
                    return SC_ENOMEM;
                sc_status st = dynamic_field(c, parent, comp, n, probe, &ch);
                json_decref(probe);
                SC_TRY(st);
                if (!ch)
                    break; /* dynamic false: ignored */
            } else if (ch->type != SC_MAPPING_OBJECT) {
                sc__mapping_err(c->err, "mapper_parsing_exception",
                                "Could not dynamically add mapping for field [%s]. Existing "
                                "mapping for [%s] must be of type object but found [%s].",
                                key, ch->path, sc_mapping_type_name(ch->type));
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

static sc_status index_value(pctx *c, sc_mapping_field *f, const json_t *v, bool with_copy)
{
    if (json_is_null(v)) {
        if (!f->null_value)
            return SC_OK;
        v = f->null_value;
    }
    if (f->type == SC_MAPPING_GEO_POINT) {
        /* [lon, lat] is one point; other arrays hold several points */
        bool coords = json_is_array(v) && json_array_size(v) >= 2 && json_array_size(v) <= 3;
        for (size_t i = 0; coords && i < json_array_size(v); i++)
            coords = json_is_number(json_array_get(v, i));
        if (json_is_array(v) && !coords) {
            for (size_t i = 0; i < json_array_size(v); i++)
                SC_TRY(index_value(c, f, json_array_get(v, i), with_copy));
            return SC_OK;
        }
        return index_scalar(c, f, v);
    }
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            SC_TRY(index_value(c, f, json_array_get(v, i), with_copy));
        return SC_OK;
    }
    if (f->type == SC_MAPPING_OBJECT) {
        if (!json_is_object(v)) {
            char prev[128];
            sc__mapping_preview(v, prev, sizeof(prev));
            sc__mapping_err(c->err, "mapper_parsing_exception",
                            "object mapping for [%s] tried to parse field [%s] as object, but "
                            "found a concrete value",
                            f->path, f->name);
            return SC_EINVAL;
        }
        return f->enabled ? walk_object(c, f, v) : SC_OK;
    }
    if (json_is_object(v))
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
    return fl;
}

static sc_status assemble(pctx *c, sc_index_doc *doc)
{
    size_t n = 1;
    for (size_t i = 0; i < c->n_accs; i++)
        n += c->accs[i].field != NULL;
    sc_index_field *fields = sc_arena_calloc(c->arena, n, sizeof(*fields));
    sc_index_token *idtok = sc_arena_alloc(c->arena, sizeof(*idtok));
    if (!fields || !idtok)
        return SC_ELIMIT;
    idtok->term = c->id;
    idtok->position = 0;
    fields[0].name = sc_slice_cstr("_id");
    fields[0].kind = SC_FIELD_KEYWORD;
    fields[0].flags = SC_FIELD_INDEXED;
    fields[0].tokens = idtok;
    fields[0].n_tokens = 1;
    size_t k = 1;
    for (size_t i = 0; i < c->n_accs; i++) {
        acc *a = &c->accs[i];
        if (!a->field || (a->toks.len == 0 && a->vals.len == 0))
            continue;
        sc_mapping_field *f = a->field;
        uint32_t fl = field_flags(f);
        if (!(fl & (SC_FIELD_INDEXED | SC_FIELD_DOCVALUES)))
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
}

static sc_status run(pctx *c, const json_t *src, sc_index_doc *doc)
{
    c->next_ord = (uint32_t)c->m->n_fields;
    sc_status st = walk_object(c, c->m->root, src);
    if (st == SC_OK)
        st = assemble(c, doc);
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
    json_error_t je;
    json_t *src = json_loadb((const char *)source.ptr, source.len, JSON_ALLOW_NUL, &je);
    if (!src || !json_is_object(src)) {
        sc__mapping_err(err, "mapper_parsing_exception", "failed to parse");
        if (src)
            sc__mapping_cause(err, "not_x_content_exception",
                              "Compressor detection can only be called on some xcontent bytes or "
                              "compressed xcontent bytes");
        else
            sc__mapping_cause(err, "json_parse_exception", "%s at line %d column %d", je.text,
                              je.line, je.column);
        json_decref(src);
        return SC_EPARSE;
    }
    pctx c = {.m = (sc_mapping *)m, .an = analysis, .arena = arena, .id = id, .err = err};
    sc_arena_mark mark = sc_arena_mark_get(arena);
    sc_status st = run(&c, src, doc);
    if (st == NEED_DYNAMIC) {
        sc_arena_rewind(arena, mark);
        sc_mapping *clone = sc__mapping_clone(m);
        if (!clone) {
            json_decref(src);
            return SC_ENOMEM;
        }
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
    json_decref(src);
    if (st == SC_ELIMIT && arena->over_budget == false)
        st = SC_ENOMEM;
    return st;
}
