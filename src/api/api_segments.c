/* GET /{index}/_segments (each shard's segments: generation, docs, size, committed, search) and
 * POST /{index}/_disk_usage?run_expensive_tasks=true (Elasticsearch's per-field breakdown:
 * inverted index, stored fields, doc values, points, norms, term vectors, measured per segment
 * by index/diskusage.h). scry adds to the inverted index its terms / postings / positions split,
 * and per index the bytes of the id table and of the segment files' own structure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/internal.h"
#include "cluster/node.h"
#include "cluster/ops.h"
#include "index/diskusage.h"
#include "shard/shard.h"

#define SC_SEGMENT_LUCENE_VERSION "9.11.1" /* as GET / reports */

static void shards_header(sc_jsonw *w, uint32_t total, uint32_t ok)
{
    sc_jsonw_key(w, "_shards");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "total", total);
    sc_jsonw_kv_int(w, "successful", ok);
    sc_jsonw_kv_int(w, "failed", total - ok);
    sc_jsonw_obj_end(w);
}

static void write_segment(sc_jsonw *w, const sc_shard_segment_stats *g)
{
    sc_jsonw_key(w, g->name);
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_int(w, "generation", (int64_t)g->generation);
    sc_jsonw_kv_int(w, "num_docs", g->n_docs);
    sc_jsonw_kv_int(w, "deleted_docs", g->n_deleted);
    sc_jsonw_kv_int(w, "size_in_bytes", (int64_t)g->size_bytes);
    sc_jsonw_kv_int(w, "memory_in_bytes", 0);
    sc_jsonw_kv_bool(w, "committed", g->committed);
    sc_jsonw_kv_bool(w, "search", g->searchable);
    sc_jsonw_kv_str(w, "version", SC_SEGMENT_LUCENE_VERSION);
    sc_jsonw_kv_bool(w, "compound", false);
    sc_jsonw_obj_end(w);
}

/* One shard's entry of _segments: its routing and segments. */
static void write_shard_segments(sc_rest_req *req, sc_jsonw *w, sc_index *ix, uint32_t s)
{
    sc_shard *shard = ix->shards ? ix->shards[s] : NULL;
    sc_shard_stats st;
    bool have = shard && sc_shard_stats_get(shard, true, &st) == SC_OK;
    sc_jsonw_obj_begin(w);
    sc_jsonw_key(w, "routing");
    sc_jsonw_obj_begin(w);
    sc_jsonw_kv_str(w, "state", have                                ? "STARTED"
                                : sc_index_shard_initializing(ix, s) ? "INITIALIZING"
                                                                     : "UNASSIGNED");
    sc_jsonw_kv_bool(w, "primary", true);
    sc_jsonw_kv_str(w, "node", sc_node_id(req->node));
    sc_jsonw_obj_end(w);
    uint32_t committed = 0, search = 0;
    for (size_t k = 0; have && k < st.n_segments; k++) {
        committed += st.segments[k].committed;
        search += st.segments[k].searchable;
    }
    sc_jsonw_kv_int(w, "num_committed_segments", committed);
    sc_jsonw_kv_int(w, "num_search_segments", search);
    sc_jsonw_key(w, "segments");
    sc_jsonw_obj_begin(w);
    for (size_t k = 0; have && st.segments && k < st.n_segments; k++)
        write_segment(w, &st.segments[k]);
    sc_jsonw_obj_end(w);
    sc_jsonw_obj_end(w);
    if (have)
        sc_shard_stats_fini(&st);
}

void sc_api_segments(sc_rest_req *req, sc_rest_resp *resp)
{
    sc_index **list;
    size_t n;
    if (!sc__api_resolve(req, resp, req->index, 0, &list, &n))
        return;
    uint32_t total = 0, ok = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t s = 0; s < list[i]->settings.number_of_shards; s++) {
            total++;
            ok += list[i]->shards && list[i]->shards[s];
        }
    sc_jsonw w;
    sc_rest_json_begin(req, resp, 200, &w);
    sc_jsonw_obj_begin(&w);
    shards_header(&w, total, ok);
    sc_jsonw_key(&w, "indices");
    sc_jsonw_obj_begin(&w);
    for (size_t i = 0; i < n; i++) {
        sc_jsonw_key(&w, list[i]->name);
        sc_jsonw_obj_begin(&w);
        sc_jsonw_key(&w, "shards");
        sc_jsonw_obj_begin(&w);
        for (uint32_t s = 0; s < list[i]->settings.number_of_shards; s++) {
            char key[16];
            snprintf(key, sizeof key, "%u", s);
            sc_jsonw_key(&w, key);
            sc_jsonw_arr_begin(&w);
            write_shard_segments(req, &w, list[i], s);
            sc_jsonw_arr_end(&w);
        }
        sc_jsonw_obj_end(&w);
        sc_jsonw_obj_end(&w);
    }
    sc_jsonw_obj_end(&w);
    sc_jsonw_obj_end(&w);
    sc_node_release(list, n);
    sc_rest_json_end(req, resp, &w);
}

/* ---- _disk_usage ---- */

typedef struct field_usage {
    char *name;
    sc_field_disk_usage u;
    uint64_t stored_bytes;
} field_usage;

typedef struct usage {
    SC_VEC(field_usage) fields;
    uint64_t store_bytes, id_table_bytes, overhead_bytes;
    sc_status st;
} usage;

static field_usage *field_get(usage *u, const char *name, size_t len)
{
    for (size_t i = 0; i < u->fields.len; i++)
        if (strlen(u->fields.ptr[i].name) == len && !memcmp(u->fields.ptr[i].name, name, len))
            return &u->fields.ptr[i];
    field_usage f = {.name = strndup(name, len)};
    if (!f.name || sc_vec_push(&u->fields, f) != SC_OK) {
        free(f.name);
        u->st = SC_ENOMEM;
        return NULL;
    }
    return &u->fields.ptr[u->fields.len - 1];
}

static void add_segment(usage *u, const sc_segment *seg)
{
    sc_segment_disk_usage d;
    sc_status st = sc_segment_disk_usage_measure(seg, &d);
    if (st != SC_OK) {
        u->st = st;
        return;
    }
    for (size_t i = 0; i < d.n_fields; i++) {
        const sc_field_info *fi = sc_segment_field_at(seg, i);
        field_usage *f = field_get(u, (const char *)fi->name.ptr, fi->name.len);
        if (!f)
            break;
        const sc_field_disk_usage *x = &d.fields[i];
        f->u.terms_bytes += x->terms_bytes;
        f->u.postings_bytes += x->postings_bytes;
        f->u.positions_bytes += x->positions_bytes;
        f->u.norms_bytes += x->norms_bytes;
        f->u.doc_values_bytes += x->doc_values_bytes;
        f->u.points_bytes += x->points_bytes;
    }
    field_usage *id = field_get(u, "_id", 3);
    if (id)
        id->stored_bytes += d.stored_id_bytes;
    field_usage *src = field_get(u, "_source", 7);
    if (src)
        src->stored_bytes += d.stored_source_bytes;
    u->overhead_bytes += d.overhead_bytes;
    u->store_bytes += d.total_bytes;
    sc_segment_disk_usage_fini(&d);
}

/* Measures every segment of the searchable snapshot of each open shard of ix. */
static uint32_t measure_index(sc_index *ix, usage *u)
{
    uint32_t ok = 0;
    for (uint32_t s = 0; s < ix->settings.number_of_shards && u->st == SC_OK; s++) {
        sc_shard *shard = ix->shards ? ix->shards[s] : NULL;
        if (!shard)
            continue;
        const sc_shard_snapshot *snap = sc_shard_searcher_acquire(shard);
        for (size_t k = 0; k < snap->n_segments && u->st == SC_OK; k++)
            add_segment(u, snap->segments[k].seg);
        sc_shard_searcher_release(snap);
        sc_shard_stats st;
        if (sc_shard_stats_get(shard, true, &st) == SC_OK) {
            u->id_table_bytes += st.id_table_bytes;
            u->store_bytes += st.id_table_bytes;
            sc_shard_stats_fini(&st);
        }
        ok++;
    }
    return ok;
}

static void kv_size(sc_jsonw *w, const char *key, uint64_t bytes)
{
    char human[32], key_bytes[64];
    sc__api_human_bytes(human, sizeof human, bytes);
    sc_jsonw_kv_str(w, key, human);
    snprintf(key_bytes, sizeof key_bytes, "%s_in_bytes", key);
    sc_jsonw_kv_int(w, key_bytes, (int64_t)bytes);
}

/* One field object (or all_fields) in Elasticsearch's shape plus the inverted-index split. */
static void write_usage(sc_jsonw *w, const sc_field_disk_usage *x, uint64_t stored)
{
    uint64_t inv = x->terms_bytes + x->postings_bytes + x->positions_bytes;
    sc_jsonw_obj_begin(w);
    kv_size(w, "total",
            inv + stored + x->doc_values_bytes + x->points_bytes + x->norms_bytes);
    sc_jsonw_key(w, "inverted_index");
    sc_jsonw_obj_begin(w);
    kv_size(w, "total", inv);
    sc_jsonw_kv_int(w, "terms_in_bytes", (int64_t)x->terms_bytes);
    sc_jsonw_kv_int(w, "postings_in_bytes", (int64_t)x->postings_bytes);
    sc_jsonw_kv_int(w, "positions_in_bytes", (int64_t)x->positions_bytes);
    sc_jsonw_obj_end(w);
    kv_size(w, "stored_fields", stored);
    kv_size(w, "doc_values", x->doc_values_bytes);
    kv_size(w, "points", x->points_bytes);
    kv_size(w, "norms", x->norms_bytes);
    kv_size(w, "term_vectors", 0);
    kv_size(w, "knn_vectors", 0);
    sc_jsonw_obj_end(w);
}

static int cmp_field(const void *a, const void *b)
{
    return strcmp(((const field_usage *)a)->name, ((const field_usage *)b)->name);
}

static void write_index_usage(sc_jsonw *w, const usage *u)
{
    sc_field_disk_usage all = {0};
    uint64_t all_stored = 0;
    for (size_t i = 0; i < u->fields.len; i++) {
        const field_usage *f = &u->fields.ptr[i];
        all.terms_bytes += f->u.terms_bytes;
        all.postings_bytes += f->u.postings_bytes;
        all.positions_bytes += f->u.positions_bytes;
        all.norms_bytes += f->u.norms_bytes;
        all.doc_values_bytes += f->u.doc_values_bytes;
        all.points_bytes += f->u.points_bytes;
        all_stored += f->stored_bytes;
    }
    sc_jsonw_obj_begin(w);
    kv_size(w, "store_size", u->store_bytes);
    sc_jsonw_key(w, "all_fields");
    write_usage(w, &all, all_stored);
    sc_jsonw_key(w, "fields");
    sc_jsonw_obj_begin(w);
    for (size_t i = 0; i < u->fields.len; i++) {
        sc_jsonw_key(w, u->fields.ptr[i].name);
        write_usage(w, &u->fields.ptr[i].u, u->fields.ptr[i].stored_bytes);
    }
    sc_jsonw_obj_end(w);
    /* scry's own structures, outside Lucene's per-field categories. */
    sc_jsonw_key(w, "scry");
    sc_jsonw_obj_begin(w);
    kv_size(w, "id_table", u->id_table_bytes);
    kv_size(w, "segment_structure", u->overhead_bytes);
    sc_jsonw_obj_end(w);
    sc_jsonw_obj_end(w);
}

static void usage_fini(usage *u)
{
    for (size_t i = 0; i < u->fields.len; i++)
        free(u->fields.ptr[i].name);
    sc_vec_free(&u->fields);
}

void sc_api_disk_usage(sc_rest_req *req, sc_rest_resp *resp)
{
    if (!sc_rest_param_bool(req, "run_expensive_tasks", false)) {
        sc_rest_errorf(req, resp, 400, "illegal_argument_exception",
                       "analyzing the disk usage of an index is expensive and resource-intensive, "
                       "the parameter [run_expensive_tasks] must be set to [true] in order for the "
                       "task to be performed.");
        return;
    }
    sc_index **list;
    size_t n;
    if (!sc__api_resolve(req, resp, req->index, 0, &list, &n))
        return;
    bool flush = sc_rest_param_bool(req, "flush", true);
    usage *per = calloc(n ? n : 1, sizeof *per);
    if (!per) {
        sc_node_release(list, n);
        sc_rest_error(req, resp, 500, "exception", "out of memory", NULL, 0);
        return;
    }
    uint32_t total = 0, ok = 0;
    sc_status st = SC_OK;
    for (size_t i = 0; i < n && st == SC_OK; i++) {
        if (flush)
            (void)sc_index_flush(list[i]);
        total += list[i]->settings.number_of_shards;
        ok += measure_index(list[i], &per[i]);
        st = per[i].st;
        if (per[i].fields.len > 1)
            qsort(per[i].fields.ptr, per[i].fields.len, sizeof *per[i].fields.ptr, cmp_field);
    }
    if (st != SC_OK) {
        sc_rest_error(req, resp, st == SC_ENOMEM ? 500 : 500, "exception",
                      "could not measure the segments", NULL, 0);
    } else {
        sc_jsonw w;
        sc_rest_json_begin(req, resp, 200, &w);
        sc_jsonw_obj_begin(&w);
        shards_header(&w, total, ok);
        for (size_t i = 0; i < n; i++) {
            sc_jsonw_key(&w, list[i]->name);
            write_index_usage(&w, &per[i]);
        }
        sc_jsonw_obj_end(&w);
        sc_rest_json_end(req, resp, &w);
    }
    for (size_t i = 0; i < n; i++)
        usage_fini(&per[i]);
    free(per);
    sc_node_release(list, n);
}
