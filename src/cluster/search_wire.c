/* Encoders and decoders of the cross-node search phases (search_wire.h). Grammar (wire.h
 * primitives: uv = unsigned varint, sv = zigzag varint, bytes = uv length + bytes):
 *
 *   node_query      = uv:n_indices (bytes:name bytes:alias_filter)* query:bytes
 *                     post_filter:bytes aggs:bytes uv:k
 *                     sv:track_total_hits sv:timeout_ms bool:count_only
 *                     uv:n_sort sort_spec* bool:has_after [sort_key*n_sort]
 *                     uv:n_targets target* uv:n_shards_total bool:can_match
 *                     bool:has_dfs [term_stats] bytes:parent_task uv:batched_reduce_size
 *   node_cancel     = bytes:parent_task   (1..SC_WIRE_MAX_TASK_ID bytes)
 *   term_stats      = uv:n_fields (bytes:field uv:doc_count uv:sum_total_term_freq)*
 *                     uv:n_terms (bytes:field bytes:term uv:doc_freq uv:total_term_freq)*
 *   sort_spec       = u8:kind bytes:field bool:desc bool:missing_first u8:mode bool:is_double
 *                     [bytes:nested_path]   (mode | 0x80: a nested sort; older specs unchanged)
 *   sort_key        = bool:missing sv:i f64:d bytes:s
 *   target          = uv:index_i uv:shard uv:shard_ix uv:pin_ix
 *   node_query_resp = uv:context_id uv:n_results outcome* uv:n_sort uv:n_top hit* bytes:agg
 *                     uv:n_partial_reduces
 *   outcome         = u8:status [uv:http_status bytes:type bytes:reason]   (status != OK)
 *                     uv:total bool:total_gte bool:timed_out bool:skipped
 *   hit             = f32:score uv:shard_ix uv:doc sort_key*n_sort
 *   node_fetch      = uv:context_id uv:n_docs (uv:shard_ix uv:doc)* bool:source uv:n bytes*
 *   node_fetch_resp = uv:n_docs fetched*
 *   fetched         = bool:found [bytes:id bytes:source uv:n_fields field*]   (found)
 *   field           = uv:field u8:type bool:numeric uv:n_values (sv* | bytes*)
 */
#include "cluster/search_wire.h"

#include <string.h>

/* An element count: every element takes at least one byte, so a count larger than what is left
 * is corrupt (and never drives a huge allocation). */
static size_t get_count(sc_wire_reader *r)
{
    return (size_t)sc_wire_get_uvar_max(r, (uint64_t)(r->end - r->p));
}

static void *alloc_n(sc_arena *a, sc_wire_reader *r, size_t n, size_t size)
{
    if (r->st != SC_OK)
        return NULL;
    void *p = sc_arena_calloc(a, n ? n : 1, size);
    if (!p)
        r->st = SC_ENOMEM;
    return p;
}

static void put_key(sc_wire_buf *b, const sc_sort_key *k)
{
    sc_wire_put_bool(b, k->missing);
    sc_wire_put_svar(b, k->i);
    sc_wire_put_f64(b, k->d);
    sc_wire_put_bytes(b, k->s.ptr, k->s.len);
}

static void get_key(sc_wire_reader *r, sc_sort_key *k)
{
    k->missing = sc_wire_get_bool(r);
    k->i = sc_wire_get_svar(r);
    k->d = sc_wire_get_f64(r);
    k->s = sc_wire_get_bytes(r);
}

static void put_spec(sc_wire_buf *b, const sc_sort_spec *s)
{
    sc_wire_put_u8(b, (uint8_t)s->kind);
    sc_wire_put_bytes(b, s->field.ptr, s->field.len);
    sc_wire_put_bool(b, s->desc);
    sc_wire_put_bool(b, s->missing_first);
    sc_wire_put_u8(b, (uint8_t)((uint8_t)s->mode | (s->nested_path.len ? 0x80 : 0)));
    sc_wire_put_bool(b, s->is_double);
    if (s->nested_path.len)
        sc_wire_put_bytes(b, s->nested_path.ptr, s->nested_path.len);
}

static void get_spec(sc_wire_reader *r, sc_sort_spec *s)
{
    uint8_t kind = sc_wire_get_u8(r);
    s->field = sc_wire_get_bytes(r);
    s->desc = sc_wire_get_bool(r);
    s->missing_first = sc_wire_get_bool(r);
    uint8_t mode = sc_wire_get_u8(r);
    s->is_double = sc_wire_get_bool(r);
    s->nested_path = (sc_slice){0};
    if (mode & 0x80) {
        mode &= 0x7f;
        s->nested_path = sc_wire_get_bytes(r);
        if (!s->nested_path.len)
            r->st = r->st == SC_OK ? SC_ECORRUPT : r->st;
    }
    if (kind > SC_SORT_BY_KEYWORD || mode > SC_SORT_MODE_SUM)
        r->st = r->st == SC_OK ? SC_ECORRUPT : r->st;
    s->kind = (sc_sort_by)kind;
    s->mode = (sc_sort_mode)mode;
}

/* ---- term statistics ---- */

static void put_stats(sc_wire_buf *b, const sc_term_stats *ts)
{
    sc_wire_put_uvar(b, ts->n_fields);
    for (size_t i = 0; i < ts->n_fields; i++) {
        sc_wire_put_bytes(b, ts->fields[i].field.ptr, ts->fields[i].field.len);
        sc_wire_put_uvar(b, ts->fields[i].doc_count);
        sc_wire_put_uvar(b, ts->fields[i].sum_total_term_freq);
    }
    sc_wire_put_uvar(b, ts->n_terms);
    for (size_t i = 0; i < ts->n_terms; i++) {
        sc_wire_put_bytes(b, ts->terms[i].field.ptr, ts->terms[i].field.len);
        sc_wire_put_bytes(b, ts->terms[i].term.ptr, ts->terms[i].term.len);
        sc_wire_put_uvar(b, ts->terms[i].doc_freq);
        sc_wire_put_uvar(b, ts->terms[i].total_term_freq);
    }
}

static void get_stats(sc_wire_reader *r, sc_arena *a, sc_term_stats *ts)
{
    ts->n_fields = get_count(r);
    ts->fields = alloc_n(a, r, ts->n_fields, sizeof *ts->fields);
    for (size_t i = 0; ts->fields && i < ts->n_fields && r->st == SC_OK; i++) {
        ts->fields[i].field = sc_wire_get_bytes(r);
        ts->fields[i].doc_count = sc_wire_get_uvar(r);
        ts->fields[i].sum_total_term_freq = sc_wire_get_uvar(r);
    }
    ts->n_terms = get_count(r);
    ts->terms = alloc_n(a, r, ts->n_terms, sizeof *ts->terms);
    for (size_t i = 0; ts->terms && i < ts->n_terms && r->st == SC_OK; i++) {
        ts->terms[i].field = sc_wire_get_bytes(r);
        ts->terms[i].term = sc_wire_get_bytes(r);
        ts->terms[i].doc_freq = sc_wire_get_uvar(r);
        ts->terms[i].total_term_freq = sc_wire_get_uvar(r);
    }
}

sc_status sc_wire_term_stats_encode(const sc_term_stats *ts, sc_wire_buf *b)
{
    put_stats(b, ts);
    return b->st;
}

sc_status sc_wire_term_stats_decode(const uint8_t *p, size_t n, sc_arena *a, sc_term_stats *out)
{
    memset(out, 0, sizeof *out);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    get_stats(&r, a, out);
    return sc_wire_reader_finish(&r);
}

/* ---- node query request ---- */

sc_status sc_wire_node_query_encode(const sc_wire_node_query *q, sc_wire_buf *b)
{
    sc_wire_put_uvar(b, q->n_indices);
    for (size_t i = 0; i < q->n_indices; i++) {
        sc_wire_put_bytes(b, q->index_names[i].ptr, q->index_names[i].len);
        sc_slice f = q->index_filters ? q->index_filters[i] : sc_slice_make(NULL, 0);
        sc_wire_put_bytes(b, f.ptr, f.len);
    }
    sc_wire_put_bytes(b, q->query_json.ptr, q->query_json.len);
    sc_wire_put_bytes(b, q->post_filter_json.ptr, q->post_filter_json.len);
    sc_wire_put_bytes(b, q->aggs_json.ptr, q->aggs_json.len);
    sc_wire_put_uvar(b, q->k);
    sc_wire_put_svar(b, q->track_total_hits);
    sc_wire_put_svar(b, q->timeout_ms);
    sc_wire_put_bool(b, q->count_only);
    sc_wire_put_uvar(b, q->n_sort);
    for (size_t i = 0; i < q->n_sort; i++)
        put_spec(b, &q->sort[i]);
    sc_wire_put_bool(b, q->search_after != NULL);
    for (size_t i = 0; q->search_after && i < q->n_sort; i++)
        put_key(b, &q->search_after[i]);
    sc_wire_put_uvar(b, q->n_targets);
    for (size_t i = 0; i < q->n_targets; i++) {
        sc_wire_put_uvar(b, q->targets[i].index_i);
        sc_wire_put_uvar(b, q->targets[i].shard);
        sc_wire_put_uvar(b, q->targets[i].shard_ix);
        sc_wire_put_uvar(b, q->targets[i].pin_ix);
    }
    sc_wire_put_uvar(b, q->n_shards_total);
    sc_wire_put_bool(b, q->can_match);
    sc_wire_put_bool(b, q->dfs != NULL);
    if (q->dfs)
        put_stats(b, q->dfs);
    sc_wire_put_bytes(b, q->parent_task.ptr, q->parent_task.len);
    sc_wire_put_uvar(b, q->batched_reduce_size);
    return b->st;
}

static void get_targets(sc_wire_reader *r, sc_arena *a, sc_wire_node_query *q)
{
    q->n_targets = get_count(r);
    sc_shard_target *t = alloc_n(a, r, q->n_targets, sizeof *t);
    for (size_t i = 0; t && i < q->n_targets && r->st == SC_OK; i++) {
        t[i].index_i = (uint32_t)sc_wire_get_uvar_max(r, q->n_indices ? q->n_indices - 1 : 0);
        t[i].shard = (uint32_t)sc_wire_get_uvar_max(r, UINT32_MAX);
        t[i].shard_ix = (uint32_t)sc_wire_get_uvar_max(r, UINT32_MAX);
        t[i].pin_ix = (uint32_t)sc_wire_get_uvar_max(r, UINT32_MAX);
        if (q->n_indices == 0)
            r->st = SC_ECORRUPT;
    }
    q->targets = t;
}

sc_status sc_wire_node_query_decode(const uint8_t *p, size_t n, sc_arena *a, sc_wire_node_query *q)
{
    memset(q, 0, sizeof *q);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    q->n_indices = get_count(&r);
    q->index_names = alloc_n(a, &r, q->n_indices, sizeof *q->index_names);
    q->index_filters = alloc_n(a, &r, q->n_indices, sizeof *q->index_filters);
    for (size_t i = 0; q->index_names && q->index_filters && i < q->n_indices; i++) {
        q->index_names[i] = sc_wire_get_bytes(&r);
        q->index_filters[i] = sc_wire_get_bytes(&r);
    }
    q->query_json = sc_wire_get_bytes(&r);
    q->post_filter_json = sc_wire_get_bytes(&r);
    q->aggs_json = sc_wire_get_bytes(&r);
    q->k = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    q->track_total_hits = sc_wire_get_svar(&r);
    q->timeout_ms = sc_wire_get_svar(&r);
    q->count_only = sc_wire_get_bool(&r);
    q->n_sort = (size_t)sc_wire_get_uvar_max(&r, SC_WIRE_MAX_SORT_KEYS);
    sc_sort_spec *specs = alloc_n(a, &r, q->n_sort, sizeof *specs);
    for (size_t i = 0; specs && i < q->n_sort; i++)
        get_spec(&r, &specs[i]);
    q->sort = q->n_sort ? specs : NULL;
    if (sc_wire_get_bool(&r)) {
        sc_sort_key *after = alloc_n(a, &r, q->n_sort, sizeof *after);
        for (size_t i = 0; after && i < q->n_sort; i++)
            get_key(&r, &after[i]);
        q->search_after = after;
    }
    get_targets(&r, a, q);
    q->n_shards_total = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    q->can_match = sc_wire_get_bool(&r);
    if (sc_wire_get_bool(&r)) {
        sc_term_stats *ts = alloc_n(a, &r, 1, sizeof *ts);
        if (ts)
            get_stats(&r, a, ts);
        q->dfs = ts;
    }
    q->parent_task = sc_wire_get_bytes(&r);
    if (r.st == SC_OK && q->parent_task.len > SC_WIRE_MAX_TASK_ID)
        r.st = SC_ECORRUPT;
    q->batched_reduce_size = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    if (r.st == SC_OK && q->batched_reduce_size == 1)
        r.st = SC_ECORRUPT;
    return sc_wire_reader_finish(&r);
}

sc_status sc_wire_node_cancel_encode(sc_slice parent_task, sc_wire_buf *out)
{
    if (!parent_task.len || parent_task.len > SC_WIRE_MAX_TASK_ID)
        return SC_EINVAL;
    sc_wire_put_bytes(out, parent_task.ptr, parent_task.len);
    return out->st;
}

sc_status sc_wire_node_cancel_decode(const uint8_t *p, size_t n, sc_slice *parent_task)
{
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    *parent_task = sc_wire_get_bytes(&r);
    if (r.st == SC_OK && (!parent_task->len || parent_task->len > SC_WIRE_MAX_TASK_ID))
        r.st = SC_ECORRUPT;
    return sc_wire_reader_finish(&r);
}

/* ---- node query response ---- */

sc_status sc_wire_node_query_resp_encode(const sc_wire_node_query_resp *q, sc_wire_buf *b)
{
    sc_wire_put_uvar(b, q->context_id);
    sc_wire_put_uvar(b, q->n_results);
    for (size_t i = 0; i < q->n_results; i++) {
        const sc_wire_shard_outcome *o = &q->results[i];
        sc_wire_put_u8(b, (uint8_t)o->st);
        if (o->st != SC_OK) {
            sc_wire_put_uvar(b, (uint64_t)(o->http_status > 0 ? o->http_status : 500));
            sc_wire_put_bytes(b, o->type.ptr, o->type.len);
            sc_wire_put_bytes(b, o->reason.ptr, o->reason.len);
        }
        sc_wire_put_uvar(b, o->total);
        sc_wire_put_bool(b, o->total_gte);
        sc_wire_put_bool(b, o->timed_out);
        sc_wire_put_bool(b, o->skipped);
    }
    sc_wire_put_uvar(b, q->n_sort);
    sc_wire_put_uvar(b, q->n_top);
    for (size_t i = 0; i < q->n_top; i++) {
        const sc_node_hit *h = &q->top[i];
        sc_wire_put_f32(b, h->score);
        sc_wire_put_uvar(b, h->shard_ix);
        sc_wire_put_uvar(b, h->doc);
        for (size_t k = 0; k < q->n_sort; k++)
            put_key(b, &h->keys[k]);
    }
    sc_wire_put_bytes(b, q->agg_partial.ptr, q->agg_partial.len);
    sc_wire_put_uvar(b, q->n_partial_reduces);
    return b->st;
}

static void get_outcome(sc_wire_reader *r, sc_wire_shard_outcome *o)
{
    uint8_t st = sc_wire_get_u8(r);
    if (st >= SC_STATUS_COUNT_ && r->st == SC_OK)
        r->st = SC_ECORRUPT;
    o->st = (sc_status)st;
    if (st != SC_OK) {
        o->http_status = (int)sc_wire_get_uvar_max(r, 599);
        o->type = sc_wire_get_bytes(r);
        o->reason = sc_wire_get_bytes(r);
    }
    o->total = sc_wire_get_uvar(r);
    o->total_gte = sc_wire_get_bool(r);
    o->timed_out = sc_wire_get_bool(r);
    o->skipped = sc_wire_get_bool(r);
}

sc_status sc_wire_node_query_resp_decode(const uint8_t *p, size_t n, sc_arena *a,
                                         sc_wire_node_query_resp *q)
{
    memset(q, 0, sizeof *q);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    q->context_id = sc_wire_get_uvar(&r);
    q->n_results = get_count(&r);
    q->results = alloc_n(a, &r, q->n_results, sizeof *q->results);
    for (size_t i = 0; q->results && i < q->n_results; i++)
        get_outcome(&r, &q->results[i]);
    /* keys per hit, not an element count of what follows (no hits: no keys) */
    q->n_sort = (size_t)sc_wire_get_uvar_max(&r, SC_WIRE_MAX_SORT_KEYS);
    q->n_top = get_count(&r);
    q->top = alloc_n(a, &r, q->n_top, sizeof *q->top);
    for (size_t i = 0; q->top && i < q->n_top && r.st == SC_OK; i++) {
        sc_node_hit *h = &q->top[i];
        h->score = sc_wire_get_f32(&r);
        h->shard_ix = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
        h->doc = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
        if (q->n_sort) {
            sc_sort_key *keys = alloc_n(a, &r, q->n_sort, sizeof *keys);
            for (size_t k = 0; keys && k < q->n_sort; k++)
                get_key(&r, &keys[k]);
            h->keys = keys;
        }
    }
    q->agg_partial = sc_wire_get_bytes(&r);
    q->n_partial_reduces = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    return sc_wire_reader_finish(&r);
}

/* ---- node fetch request ---- */

sc_status sc_wire_node_fetch_encode(const sc_wire_node_fetch *f, sc_wire_buf *b)
{
    sc_wire_put_uvar(b, f->context_id);
    sc_wire_put_uvar(b, f->n_docs);
    for (size_t i = 0; i < f->n_docs; i++) {
        sc_wire_put_uvar(b, f->docs[i].shard_ix);
        sc_wire_put_uvar(b, f->docs[i].doc);
    }
    sc_wire_put_bool(b, f->source);
    sc_wire_put_uvar(b, f->n_dv_fields);
    for (size_t i = 0; i < f->n_dv_fields; i++)
        sc_wire_put_bytes(b, f->dv_fields[i].ptr, f->dv_fields[i].len);
    return b->st;
}

sc_status sc_wire_node_fetch_decode(const uint8_t *p, size_t n, sc_arena *a, sc_wire_node_fetch *f)
{
    memset(f, 0, sizeof *f);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    f->context_id = sc_wire_get_uvar(&r);
    f->n_docs = get_count(&r);
    sc_node_hit *docs = alloc_n(a, &r, f->n_docs, sizeof *docs);
    for (size_t i = 0; docs && i < f->n_docs; i++) {
        docs[i].shard_ix = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
        docs[i].doc = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    }
    f->docs = docs;
    f->source = sc_wire_get_bool(&r);
    f->n_dv_fields = get_count(&r);
    f->dv_fields = alloc_n(a, &r, f->n_dv_fields, sizeof *f->dv_fields);
    for (size_t i = 0; f->dv_fields && i < f->n_dv_fields; i++)
        f->dv_fields[i] = sc_wire_get_bytes(&r);
    return sc_wire_reader_finish(&r);
}

/* ---- node fetch response ---- */

static void put_fields(sc_wire_buf *b, const sc_shard_field_values *fv)
{
    sc_wire_put_uvar(b, fv->field);
    sc_wire_put_u8(b, (uint8_t)fv->type);
    sc_wire_put_bool(b, fv->numeric);
    sc_wire_put_uvar(b, fv->n_values);
    for (size_t v = 0; v < fv->n_values; v++) {
        if (fv->numeric)
            sc_wire_put_svar(b, fv->nums[v]);
        else
            sc_wire_put_bytes(b, fv->terms[v].ptr, fv->terms[v].len);
    }
}

sc_status sc_wire_node_fetch_resp_encode(const sc_wire_node_fetch_resp *f, sc_wire_buf *b)
{
    sc_wire_put_uvar(b, f->n_docs);
    for (size_t i = 0; i < f->n_docs; i++) {
        const sc_shard_fetched *d = &f->docs[i];
        sc_wire_put_bool(b, d->found);
        if (!d->found)
            continue;
        sc_wire_put_bytes(b, d->id.ptr, d->id.len);
        sc_wire_put_bytes(b, d->source.ptr, d->source.len);
        sc_wire_put_uvar(b, d->n_fields);
        for (size_t k = 0; k < d->n_fields; k++)
            put_fields(b, &d->fields[k]);
    }
    return b->st;
}

static void get_fields(sc_wire_reader *r, sc_arena *a, sc_shard_field_values *fv)
{
    fv->field = (uint32_t)sc_wire_get_uvar_max(r, UINT32_MAX);
    uint8_t type = sc_wire_get_u8(r);
    if (type > SC_SHARD_VALUE_TERM && r->st == SC_OK)
        r->st = SC_ECORRUPT;
    fv->type = (sc_shard_value_type)type;
    fv->numeric = sc_wire_get_bool(r);
    fv->n_values = get_count(r);
    if (fv->numeric) {
        int64_t *nums = alloc_n(a, r, fv->n_values, sizeof *nums);
        for (size_t v = 0; nums && v < fv->n_values; v++)
            nums[v] = sc_wire_get_svar(r);
        fv->nums = nums;
    } else {
        sc_slice *terms = alloc_n(a, r, fv->n_values, sizeof *terms);
        for (size_t v = 0; terms && v < fv->n_values; v++)
            terms[v] = sc_wire_get_bytes(r);
        fv->terms = terms;
    }
}

sc_status sc_wire_node_fetch_resp_decode(const uint8_t *p, size_t n, sc_arena *a,
                                         sc_wire_node_fetch_resp *f)
{
    memset(f, 0, sizeof *f);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    f->n_docs = get_count(&r);
    f->docs = alloc_n(a, &r, f->n_docs, sizeof *f->docs);
    for (size_t i = 0; f->docs && i < f->n_docs && r.st == SC_OK; i++) {
        sc_shard_fetched *d = &f->docs[i];
        d->found = sc_wire_get_bool(&r);
        if (!d->found)
            continue;
        d->id = sc_wire_get_bytes(&r);
        d->source = sc_wire_get_bytes(&r);
        d->n_fields = get_count(&r);
        d->fields = alloc_n(a, &r, d->n_fields, sizeof *d->fields);
        for (size_t k = 0; d->fields && k < d->n_fields && r.st == SC_OK; k++)
            get_fields(&r, a, &d->fields[k]);
    }
    return sc_wire_reader_finish(&r);
}
