/* A field's values as they stand in a document's _source (for highlighting and other fetch-
 * time readers that need the original text, not the indexed terms): the dotted path is
 * followed through objects, arrays and dotted keys, as Elasticsearch's source lookup does. */
#include <string.h>

#include "mapping/jdoc.h"
#include "mapping/mapping.h"

typedef struct collect {
    sc_arena *a;
    sc_slice *v;
    size_t n, cap;
} collect;

static sc_status push(collect *c, sc_slice s)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4;
        sc_slice *v = sc_arena_alloc(c->a, cap * sizeof *v);
        if (!v)
            return c->a->over_budget ? SC_ELIMIT : SC_ENOMEM;
        if (c->n)
            memcpy(v, c->v, c->n * sizeof *v);
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = s;
    return SC_OK;
}

/* Leaf values under v: strings decoded, numbers and booleans as their source text. */
static sc_status leaves(collect *c, const sc__jd *v)
{
    switch (v->type) {
    case SC__JD_STRING: return push(c, v->str);
    case SC__JD_INT:
    case SC__JD_REAL:
    case SC__JD_TRUE:
    case SC__JD_FALSE: return push(c, v->raw);
    case SC__JD_ARRAY:
        for (const sc__jd *x = v->child; x; x = x->next)
            SC_TRY(leaves(c, x));
        return SC_OK;
    default: return SC_OK; /* null; objects are not values of a leaf field */
    }
}

/* Follows path (the rest of the dotted name) from v. */
static sc_status follow(collect *c, const sc__jd *v, sc_slice path)
{
    if (path.len == 0)
        return leaves(c, v);
    if (v->type == SC__JD_ARRAY) {
        for (const sc__jd *x = v->child; x; x = x->next)
            SC_TRY(follow(c, x, path));
        return SC_OK;
    }
    if (v->type != SC__JD_OBJECT)
        return SC_OK;
    for (const sc__jd *m = v->child; m; m = m->next) {
        /* a key matches the whole rest or a dotted prefix of it ({"a.b": ..} or {"a": {"b"..}}) */
        if (m->key.len > path.len || memcmp(m->key.ptr, path.ptr, m->key.len) != 0)
            continue;
        if (m->key.len == path.len)
            SC_TRY(follow(c, m, sc_slice_make(path.ptr, 0)));
        else if (path.ptr[m->key.len] == '.')
            SC_TRY(follow(c, m, sc_slice_sub(path, m->key.len + 1, path.len - m->key.len - 1)));
    }
    return SC_OK;
}

sc_status sc_mapping_source_values(sc_slice source, const sc_slice *paths, size_t n_paths,
                                   sc_arena *arena, sc_slice **values, size_t *n_values)
{
    for (size_t i = 0; i < n_paths; i++) {
        values[i] = NULL;
        n_values[i] = 0;
    }
    sc__jd *root;
    char msg[128];
    sc_status st = sc__jdoc_parse(source, arena, &root, msg, sizeof msg);
    if (st == SC_EPARSE)
        return SC_OK; /* not JSON (cannot happen for indexed docs): no values */
    SC_TRY(st);
    for (size_t i = 0; i < n_paths; i++) {
        collect c = {.a = arena};
        SC_TRY(follow(&c, root, paths[i]));
        values[i] = c.v;
        n_values[i] = c.n;
    }
    return SC_OK;
}
