/* Serializing a mapping back to JSON in Elasticsearch's GET _mapping shape: properties sorted by
 * name, parameters equal to their defaults left out, objects without a "type". */
#include <stdlib.h>
#include <string.h>

#include "mapping/internal.h"

static const char *dynamic_str(sc_mapping_dynamic d)
{
    switch (d) {
    case SC_MAPPING_DYNAMIC_TRUE:
        return "true";
    case SC_MAPPING_DYNAMIC_FALSE:
        return "false";
    case SC_MAPPING_DYNAMIC_STRICT:
        return "strict";
    default:
        return NULL;
    }
}

static json_t *field_json(const sc_mapping_field *f);

static void set_extra(json_t *o, const json_t *extra)
{
    const char *k;
    json_t *v;
    if (!extra)
        return;
    json_object_foreach((json_t *)extra, k, v)
    {
        json_object_set_new(o, k, json_deep_copy(v));
    }
}

static json_t *props_json(const sc_mapping_field *obj)
{
    json_t *p = json_object();
    for (size_t i = 0; p && i < obj->n_children; i++)
        json_object_set_new(p, obj->children[i]->name, field_json(obj->children[i]));
    return p;
}

static json_t *object_json(const sc_mapping_field *f)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    const char *d = dynamic_str(f->dynamic);
    if (d)
        json_object_set_new(o, "dynamic", json_string(d));
    if (!f->enabled)
        json_object_set_new(o, "enabled", json_false());
    set_extra(o, f->extra);
    if (f->nested)
        json_object_set_new(o, "type", json_string("nested"));
    if (f->n_children)
        json_object_set_new(o, "properties", props_json(f));
    if (!f->nested && (json_object_size(o) == 0 || (!f->n_children && f->enabled)))
        json_object_set_new(o, "type", json_string("object"));
    return o;
}

static json_t *field_json(const sc_mapping_field *f)
{
    if (f->type == SC_MAPPING_OBJECT)
        return object_json(f);
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "type",
                        json_string(f->type_alias ? f->type_alias : sc_mapping_type_name(f->type)));
    if (f->type == SC_MAPPING_DENSE_VECTOR) {
        sc__mapping_vector_json(f, o);
        if (f->meta)
            json_object_set_new(o, "meta", json_deep_copy(f->meta));
        return o;
    }
    if (f->analyzer)
        json_object_set_new(o, "analyzer", json_string(f->analyzer));
    if (f->search_analyzer)
        json_object_set_new(o, "search_analyzer", json_string(f->search_analyzer));
    if (f->search_quote_analyzer)
        json_object_set_new(o, "search_quote_analyzer", json_string(f->search_quote_analyzer));
    if (f->normalizer)
        json_object_set_new(o, "normalizer", json_string(f->normalizer));
    if (f->ignore_above >= 0)
        json_object_set_new(o, "ignore_above", json_integer(f->ignore_above));
    if (f->type == SC_MAPPING_SCALED_FLOAT)
        json_object_set_new(o, "scaling_factor", json_real(f->scaling_factor));
    if (f->format)
        json_object_set_new(o, "format", json_string(f->format));
    if (f->type == SC_MAPPING_RANK_FEATURE || f->type == SC_MAPPING_RANK_FEATURES) {
        if (!f->positive_score_impact)
            json_object_set_new(o, "positive_score_impact", json_false());
        if (f->meta)
            json_object_set_new(o, "meta", json_deep_copy(f->meta));
        return o;
    }
    if (!f->index)
        json_object_set_new(o, "index", json_false());
    if (f->max_shingle_size && f->max_shingle_size != 3)
        json_object_set_new(o, "max_shingle_size", json_integer(f->max_shingle_size));
    if (f->type == SC_MAPPING_COMPLETION) {
        json_object_set_new(o, "preserve_separators", json_boolean(f->preserve_separators));
        json_object_set_new(o, "preserve_position_increments",
                            json_boolean(f->preserve_position_increments));
        json_object_set_new(o, "max_input_length", json_integer(f->max_input_length));
    }
    if (f->type != SC_MAPPING_TEXT && f->type != SC_MAPPING_COMPLETION && !f->doc_values)
        json_object_set_new(o, "doc_values", json_false());
    if (f->type == SC_MAPPING_TEXT && !f->norms)
        json_object_set_new(o, "norms", json_false());
    if (f->store)
        json_object_set_new(o, "store", json_true());
    if (!f->coerce)
        json_object_set_new(o, "coerce", json_false());
    if (f->ignore_malformed)
        json_object_set_new(o, "ignore_malformed", json_true());
    if (f->type == SC_MAPPING_TEXT && f->position_increment_gap != 100)
        json_object_set_new(o, "position_increment_gap", json_integer(f->position_increment_gap));
    if (f->null_value)
        json_object_set_new(o, "null_value", json_deep_copy(f->null_value));
    if (f->meta)
        json_object_set_new(o, "meta", json_deep_copy(f->meta));
    set_extra(o, f->extra);
    size_t shown = 0;
    for (size_t i = 0; i < f->n_children; i++)
        shown += !f->children[i]->sayt_sub;
    if (shown) {
        json_t *fs = json_object();
        for (size_t i = 0; fs && i < f->n_children; i++)
            if (!f->children[i]->sayt_sub)
                json_object_set_new(fs, f->children[i]->name, field_json(f->children[i]));
        json_object_set_new(o, "fields", fs);
    }
    if (f->n_copy_to) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < f->n_copy_to; i++)
            json_array_append_new(a, json_string(f->copy_to[i]));
        json_object_set_new(o, "copy_to", a);
    }
    return o;
}

json_t *sc_mapping_to_json(const sc_mapping *m)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    const char *d = dynamic_str(m->root->dynamic);
    if (d)
        json_object_set_new(o, "dynamic", json_string(d));
    if (m->set_date_detection)
        json_object_set_new(o, "date_detection", json_boolean(m->date_detection));
    if (m->set_numeric_detection)
        json_object_set_new(o, "numeric_detection", json_boolean(m->numeric_detection));
    set_extra(o, m->root_extra);
    if (m->root->n_children)
        json_object_set_new(o, "properties", props_json(m->root));
    return o;
}

void sc_mapping_write(const sc_mapping *m, sc_jsonw *w)
{
    json_t *j = sc_mapping_to_json(m);
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    if (s)
        sc_jsonw_raw(w, sc_slice_cstr(s));
    else
        sc_jsonw_raw(w, sc_slice_cstr("{}"));
    free(s);
    json_decref(j);
}

/* Adds to `props` (a "properties" object) what f's children add over base. */
static int added_children(const sc_mapping *base, const sc_mapping_field *obj, json_t *props)
{
    for (size_t i = 0; i < obj->n_children; i++) {
        const sc_mapping_field *c = obj->children[i];
        const sc_mapping_field *b = sc_mapping_find(base, sc_slice_cstr(c->path));
        if (!b) {
            if (json_object_set_new(props, c->name, field_json(c)) != 0)
                return 0;
            continue;
        }
        if (c->type == SC_MAPPING_OBJECT && b->type == SC_MAPPING_OBJECT) {
            json_t *sub = json_object();
            if (!sub || !added_children(base, c, sub)) {
                json_decref(sub);
                return 0;
            }
            if (json_object_size(sub)) {
                json_t *o = json_object();
                if (!o) {
                    json_decref(sub);
                    return 0;
                }
                if (c->nested) /* an update must not turn it into an object */
                    json_object_set_new(o, "type", json_string("nested"));
                json_object_set_new(o, "properties", sub);
                json_object_set_new(props, c->name, o);
            } else {
                json_decref(sub);
            }
        } else if (c->type != SC_MAPPING_OBJECT && b->type == c->type) {
            /* new multi-fields of an existing field */
            json_t *fs = json_object();
            for (size_t k = 0; fs && k < c->n_children; k++) {
                const sc_mapping_field *sf = c->children[k];
                if (!sc_mapping_find(base, sc_slice_cstr(sf->path)))
                    json_object_set_new(fs, sf->name, field_json(sf));
            }
            if (!fs)
                return 0;
            if (json_object_size(fs)) {
                json_t *o = field_json(b);
                if (!o) {
                    json_decref(fs);
                    return 0;
                }
                json_object_set_new(o, "fields", fs);
                json_object_set_new(props, c->name, o);
            } else {
                json_decref(fs);
            }
        }
    }
    return 1;
}

json_t *sc_mapping_added_json(const sc_mapping *base, const sc_mapping *updated)
{
    json_t *o = json_object();
    json_t *props = json_object();
    if (!o || !props || !added_children(base, updated->root, props)) {
        json_decref(o);
        json_decref(props);
        return NULL;
    }
    if (json_object_size(props))
        json_object_set_new(o, "properties", props);
    else
        json_decref(props);
    return o;
}
