/* The JSON form of a routing table entry, as the master stores it in etcd under
 * routing/<index> (see allocation.h and docs/cluster.md). The parser validates every field:
 * the value comes from etcd and is treated as untrusted bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/allocation.h"

/* Bounds that keep a hostile value from allocating much (Elasticsearch: 1024 shards max). */
#define MAX_SHARDS 1024
#define MAX_COPIES 64

json_t *sc_index_routing_to_json(const sc_index_routing *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "number_of_shards", json_integer(r->number_of_shards));
    json_object_set_new(o, "number_of_replicas", json_integer(r->number_of_replicas));
    json_t *shards = json_array();
    for (uint32_t s = 0; s < r->number_of_shards; s++) {
        const sc_shard_routing *sh = &r->shards[s];
        json_t *so = json_object();
        json_object_set_new(so, "primary_term", json_integer(sh->primary_term));
        json_t *sync = json_array();
        for (size_t i = 0; i < sh->n_in_sync; i++) {
            json_t *e = json_object();
            json_object_set_new(e, "alloc_id", json_string(sh->in_sync[i].alloc_id));
            json_object_set_new(e, "node", json_string(sh->in_sync[i].node));
            json_array_append_new(sync, e);
        }
        json_object_set_new(so, "in_sync", sync);
        json_t *copies = json_array();
        for (size_t i = 0; i < sh->n_copies; i++) {
            json_t *c = json_object();
            json_object_set_new(c, "node", json_string(sh->copies[i].node));
            json_object_set_new(c, "alloc_id", json_string(sh->copies[i].alloc_id));
            json_object_set_new(c, "primary", json_boolean(sh->copies[i].primary));
            if (sh->copies[i].relocating_from[0])
                json_object_set_new(c, "relocating_from",
                                    json_string(sh->copies[i].relocating_from));
            json_array_append_new(copies, c);
        }
        json_object_set_new(so, "copies", copies);
        json_array_append_new(shards, so);
    }
    json_object_set_new(o, "shards", shards);
    return o;
}

static bool copy_str(char *dst, size_t cap, const json_t *v)
{
    const char *s = json_string_value(v);
    if (!s || !*s || json_string_length(v) >= cap || strlen(s) != json_string_length(v))
        return false;
    memcpy(dst, s, json_string_length(v) + 1);
    return true;
}

static bool shard_from_json(const json_t *so, sc_shard_routing *sh)
{
    const json_t *term = json_object_get(so, "primary_term");
    const json_t *sync = json_object_get(so, "in_sync");
    const json_t *copies = json_object_get(so, "copies");
    if (!json_is_object(so) || !json_is_integer(term) || json_integer_value(term) < 0 ||
        !json_is_array(sync) || !json_is_array(copies) || json_array_size(sync) > MAX_COPIES ||
        json_array_size(copies) > MAX_COPIES)
        return false;
    sh->primary_term = json_integer_value(term);
    sh->copies = calloc(json_array_size(copies) + 1, sizeof *sh->copies);
    sh->in_sync = calloc(json_array_size(sync) + 1, sizeof *sh->in_sync);
    if (!sh->copies || !sh->in_sync)
        return false;
    for (size_t i = 0; i < json_array_size(sync); i++) {
        const json_t *e = json_array_get(sync, i);
        sc_in_sync *is = &sh->in_sync[i];
        if (!copy_str(is->alloc_id, sizeof is->alloc_id, json_object_get(e, "alloc_id")) ||
            !copy_str(is->node, sizeof is->node, json_object_get(e, "node")))
            return false;
        sh->n_in_sync++;
    }
    for (size_t i = 0; i < json_array_size(copies); i++) {
        const json_t *c = json_array_get(copies, i);
        sc_shard_copy *cp = &sh->copies[i];
        const json_t *prim = json_object_get(c, "primary");
        const json_t *from = json_is_object(c) ? json_object_get(c, "relocating_from") : NULL;
        if (!json_is_object(c) ||
            !copy_str(cp->node, sizeof cp->node, json_object_get(c, "node")) ||
            !copy_str(cp->alloc_id, sizeof cp->alloc_id, json_object_get(c, "alloc_id")) ||
            (prim && !json_is_boolean(prim)) ||
            (from && !copy_str(cp->relocating_from, sizeof cp->relocating_from, from)))
            return false;
        cp->primary = json_is_true(prim);
        /* a relocation target is never the primary nor its own source */
        if (from && (cp->primary || !strcmp(cp->relocating_from, cp->alloc_id)))
            return false;
        /* the primary, if any, is the first copy */
        if (cp->primary && i > 0)
            return false;
        sh->n_copies++;
    }
    return true;
}

sc_status sc_index_routing_from_json(const char *name, const json_t *j, sc_index_routing *out)
{
    memset(out, 0, sizeof *out);
    const json_t *ns = json_object_get(j, "number_of_shards");
    const json_t *nr = json_object_get(j, "number_of_replicas");
    const json_t *shards = json_object_get(j, "shards");
    if (!json_is_object(j) || !json_is_integer(ns) || !json_is_integer(nr) ||
        !json_is_array(shards) || json_integer_value(ns) < 1 ||
        json_integer_value(ns) > MAX_SHARDS || json_integer_value(nr) < 0 ||
        json_integer_value(nr) >= MAX_COPIES ||
        json_array_size(shards) != (size_t)json_integer_value(ns))
        return SC_ECORRUPT;
    out->index = strdup(name);
    out->shards = calloc((size_t)json_integer_value(ns), sizeof *out->shards);
    if (!out->index || !out->shards) {
        free(out->index);
        free(out->shards);
        memset(out, 0, sizeof *out);
        return SC_ENOMEM;
    }
    out->number_of_shards = (uint32_t)json_integer_value(ns);
    out->number_of_replicas = (uint32_t)json_integer_value(nr);
    for (uint32_t s = 0; s < out->number_of_shards; s++)
        if (!shard_from_json(json_array_get(shards, s), &out->shards[s])) {
            sc_index_routing_fini(out);
            return SC_ECORRUPT;
        }
    return SC_OK;
}

bool sc_index_routing_equal(const sc_index_routing *a, const sc_index_routing *b)
{
    if (a->number_of_shards != b->number_of_shards ||
        a->number_of_replicas != b->number_of_replicas)
        return false;
    for (uint32_t s = 0; s < a->number_of_shards; s++) {
        const sc_shard_routing *x = &a->shards[s], *y = &b->shards[s];
        if (x->primary_term != y->primary_term || x->n_copies != y->n_copies ||
            x->n_in_sync != y->n_in_sync)
            return false;
        for (size_t i = 0; i < x->n_copies; i++)
            if (x->copies[i].primary != y->copies[i].primary ||
                strcmp(x->copies[i].node, y->copies[i].node) != 0 ||
                strcmp(x->copies[i].alloc_id, y->copies[i].alloc_id) != 0 ||
                strcmp(x->copies[i].relocating_from, y->copies[i].relocating_from) != 0)
                return false;
        for (size_t i = 0; i < x->n_in_sync; i++)
            if (strcmp(x->in_sync[i].alloc_id, y->in_sync[i].alloc_id) != 0 ||
                strcmp(x->in_sync[i].node, y->in_sync[i].node) != 0)
                return false;
    }
    return true;
}
