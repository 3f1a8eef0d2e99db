/* Encoders and decoders of the cross-node search phases (search_wire.h). Grammar (wire.h
 * primitives: uv = unsigned varint, sv = zigzag varint, bytes = uv length + bytes):
 *
 *   node_query      = uv:n_indices (bytes:name bytes:alias_filter)* query:bytes
 *                     post_filter:bytes aggs:bytes uv:k
 *                     sv:track_total_hits sv:timeout_ms bool:count_only
 *                     uv:n_sort sort_spec* bool:has_after [sort_key*n_sort]
 *                     uv:n_targets target* uv:n_shards_total bool:can_match
 *                     bool:has_dfs [term_stats] bytes:parent_task uv:batched_reduce_size
 *                     exts
 *   node_cancel     = bytes:parent_task   (1..SC_WIRE_MAX_TASK_ID bytes)
 *   term_stats      = uv:n_fields (bytes:field uv:doc_count uv:sum_total_term_freq)*
 *                     uv:n_terms (bytes:field bytes:term uv:doc_freq uv:total_term_freq)*
 *   sort_spec       = u8:kind bytes:field bool:desc bool:missing_first u8:mode bool:is_double
 *                     [bytes:nested_path]   (mode | 0x80: a nested sort; older specs unchanged)
 *   sort_key        = bool:missing sv:i f64:d bytes:s
 *   target          = uv:index_i uv:shard uv:shard_ix uv:pin_ix
 *   node_query_resp = uv:context_id uv:n_results outcome* uv:n_sort uv:n_top hit* bytes:agg
 *                     uv:n_partial_reduces exts
 *   outcome         = u8:status [uv:http_status bytes:type bytes:reason]   (status != OK)
 *                     uv:total bool:total_gte bool:timed_out bool:skipped
 *   hit             = f32:score uv:shard_ix uv:doc sort_key*n_sort
 *   node_fetch      = uv:context_id uv:n_docs (uv:shard_ix uv:doc)* bool:source uv:n bytes*
 *                     exts
 *   node_fetch_resp = uv:n_docs fetched* exts
 *   fetched         = bool:found [bytes:id bytes:source uv:n_fields field*]   (found)
 *   field           = uv:field u8:type bool:numeric uv:n_values (sv* | bytes*)
 *
 * Extensions (parts added after a message's first encoding; issue 14's fetch-phase features):
 *
 *   exts            = uv:n_ext (uv:tag bytes:payload)*   (tags ascending; each payload is read
 *                     to its end; an unknown tag is corrupt)
 *   node_query      tag 1 (scores):  uv:flags   (bit 0 track_scores; other bits corrupt)
 *   node_query      tag 9 (page):    uv:flags (bit 0 min_score, bit 1 boosts; not 0, other
 *                     bits corrupt) [f32:min_score] [f32:boost * n_indices]
 *   node_query      tag 10 (terminate): uv:terminate_after   (not 0)
 *   node_query      tag 11 (runtime): bytes:runtime_mappings   (a JSON object; not empty)
 *   node_query_resp tag 1 (scores):  f32:max_score * n_results
 *   node_query_resp tag 2 (terminated): bool:terminated_early * n_results
 *   node_fetch      tag 1 (extras):  uv:flags (SC_WIRE_FETCH_*, not 0) uv:n_indices
 *                     (bytes:name bytes:alias_filter)* bytes:query bytes:highlight
 *                     uv:doc_index * n_docs (< n_indices) bool:has_dfs [term_stats]
 *   node_fetch_resp tag 1 (extras):  doc_extras per found doc, in order
 *   doc_extras      = uv:n_highlights (uv:field uv:n_frags bytes*)* bool:has_versions
 *                     [sv:version sv:seq_no sv:primary_term] uv:n_matched uv* bool:has_expl
 *                     [expl] uv:n_inner inner*
 *   expl            = bool:match f32:value bytes:description uv:n_details expl*
 *                     (at most SC_WIRE_MAX_EXPLAIN_DEPTH levels)
 *   inner           = uv:total f32:max_score uv:n_hits (uv:offset f32:score bytes:source)*
 * node_query and node_query_resp may be followed by the query-phase features (search_wire_fx.c).
 */
#include "cluster/search_wire.h"
#include "cluster/search_wire_internal.h"

#include <math.h>
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

/* ---- extensions (exts in the grammar) ---- */

#define EXT_SCORES 1 /* node_query / node_query_resp */
#define EXT_PAGE 9   /* node_query: min_score, indices_boost */
#define EXT_TERMINATE 10 /* node_query: terminate_after */
#define EXT_RUNTIME 11   /* node_query: runtime_mappings */
#define EXT_TERMINATED 2 /* node_query_resp: terminated_early per shard */
#define EXT_EXTRAS 1 /* node_fetch / node_fetch_resp */

/* Appends one extension: tag, then the payload p built (sticky status joins b's). */
static void put_ext(sc_wire_buf *b, uint64_t tag, sc_wire_buf *p)
{
    sc_wire_put_uvar(b, tag);
    if (p->st != SC_OK && b->st == SC_OK)
        b->st = p->st;
    sc_wire_put_bytes(b, p->ptr, p->len);
    sc_wire_buf_fini(p);
}

/* Reads the extension list: calls get(ctx, tag, payload reader) for each; get returns false for
 * an unknown tag. A payload not read to its end, a repeated or unordered tag is corrupt. */
static void get_exts(sc_wire_reader *r, void *ctx, bool (*get)(void *, uint64_t, sc_wire_reader *))
{
    size_t n = get_count(r);
    uint64_t last = 0;
    for (size_t i = 0; i < n && r->st == SC_OK; i++) {
        uint64_t tag = sc_wire_get_uvar(r);
        sc_slice body = sc_wire_get_bytes(r);
        if (r->st != SC_OK)
            return;
        if (tag <= last) {
            r->st = SC_ECORRUPT;
            return;
        }
        last = tag;
        sc_wire_reader pr;
        sc_wire_reader_init(&pr, body.ptr, body.len);
        if (!get(ctx, tag, &pr))
            pr.st = pr.st == SC_OK ? SC_ECORRUPT : pr.st;
        sc_status st = sc_wire_reader_finish(&pr);
        if (st != SC_OK)
            r->st = st;
    }
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
    bool page = q->has_min_score || q->index_boosts;
    sc_wire_put_uvar(b, (q->track_scores ? 1 : 0) + (page ? 1 : 0) + (q->terminate_after ? 1 : 0) +
                            (q->runtime_json.len ? 1 : 0));
    if (q->track_scores) {
        sc_wire_buf p;
        sc_wire_buf_init(&p);
        sc_wire_put_uvar(&p, 1);
        put_ext(b, EXT_SCORES, &p);
    }
    if (page) {
        sc_wire_buf p;
        sc_wire_buf_init(&p);
        sc_wire_put_uvar(&p, (q->has_min_score ? 1u : 0u) | (q->index_boosts ? 2u : 0u));
        if (q->has_min_score)
            sc_wire_put_f32(&p, q->min_score);
        for (size_t i = 0; q->index_boosts && i < q->n_indices; i++)
            sc_wire_put_f32(&p, q->index_boosts[i]);
        put_ext(b, EXT_PAGE, &p);
    }
    if (q->terminate_after) {
        sc_wire_buf p;
        sc_wire_buf_init(&p);
        sc_wire_put_uvar(&p, q->terminate_after);
        put_ext(b, EXT_TERMINATE, &p);
    }
    if (q->runtime_json.len) {
        sc_wire_buf p;
        sc_wire_buf_init(&p);
        sc_wire_put_bytes(&p, q->runtime_json.ptr, q->runtime_json.len);
        put_ext(b, EXT_RUNTIME, &p);
    }
    sc__wire_put_features(b, &q->fx);
    return b->st;
}

typedef struct query_ext_ctx {
    sc_wire_node_query *q;
    sc_arena *a;
} query_ext_ctx;

static bool get_query_ext(void *ctx, uint64_t tag, sc_wire_reader *r)
{
    sc_wire_node_query *q = ((query_ext_ctx *)ctx)->q;
    if (tag == EXT_SCORES) {
        uint64_t flags = sc_wire_get_uvar_max(r, 1);
        q->track_scores = flags & 1;
        return true;
    }
    if (tag == EXT_TERMINATE) {
        q->terminate_after = sc_wire_get_uvar(r);
        if (r->st == SC_OK && q->terminate_after == 0)
            r->st = SC_ECORRUPT;
        return true;
    }
    if (tag == EXT_RUNTIME) {
        q->runtime_json = sc_wire_get_bytes(r);
        if (r->st == SC_OK && q->runtime_json.len == 0)
            r->st = SC_ECORRUPT;
        return true;
    }
    if (tag != EXT_PAGE)
        return false;
    uint64_t flags = sc_wire_get_uvar_max(r, 3);
    if (r->st == SC_OK && flags == 0)
        r->st = SC_ECORRUPT;
    q->has_min_score = flags & 1;
    if (q->has_min_score)
        q->min_score = sc_wire_get_f32(r);
    if (flags & 2) {
        float *b = alloc_n(((query_ext_ctx *)ctx)->a, r, q->n_indices, sizeof *b);
        for (size_t i = 0; b && i < q->n_indices; i++)
            b[i] = sc_wire_get_f32(r);
        q->index_boosts = b;
    }
    return true;
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
    query_ext_ctx ec = {q, a};
    get_exts(&r, &ec, get_query_ext);
    sc__wire_get_features(&r, a, &q->fx);
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
    bool terminated = false;
    for (size_t i = 0; i < q->n_results; i++)
        terminated |= q->results[i].terminated_early;
    sc_wire_put_uvar(b, (q->has_max_scores ? 1 : 0) + (terminated ? 1 : 0));
    if (q->has_max_scores) {
        sc_wire_buf p;
        sc_wire_buf_init(&p);
        for (size_t i = 0; i < q->n_results; i++)
            sc_wire_put_f32(&p, q->results[i].max_score);
        put_ext(b, EXT_SCORES, &p);
    }
    if (terminated) {
        sc_wire_buf p;
        sc_wire_buf_init(&p);
        for (size_t i = 0; i < q->n_results; i++)
            sc_wire_put_bool(&p, q->results[i].terminated_early);
        put_ext(b, EXT_TERMINATED, &p);
    }
    sc__wire_put_resp_features(b, q, put_key);
    return b->st;
}

static bool get_query_resp_ext(void *ctx, uint64_t tag, sc_wire_reader *r)
{
    sc_wire_node_query_resp *q = ctx;
    if (tag == EXT_TERMINATED) {
        for (size_t i = 0; q->results && i < q->n_results; i++)
            q->results[i].terminated_early = sc_wire_get_bool(r);
        return true;
    }
    if (tag != EXT_SCORES)
        return false;
    for (size_t i = 0; q->results && i < q->n_results; i++)
        q->results[i].max_score = sc_wire_get_f32(r);
    q->has_max_scores = true;
    return true;
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
    for (size_t i = 0; q->results && i < q->n_results; i++)
        q->results[i].max_score = NAN;
    get_exts(&r, q, get_query_resp_ext);
    sc__wire_get_resp_features(&r, a, q, get_key);
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
    if (f->flags & ~(uint32_t)SC_WIRE_FETCH_ALL_)
        b->st = b->st == SC_OK ? SC_EINVAL : b->st;
    sc_wire_put_uvar(b, f->flags ? 1 : 0);
    if (!f->flags)
        return b->st;
    sc_wire_buf p;
    sc_wire_buf_init(&p);
    sc_wire_put_uvar(&p, f->flags);
    sc_wire_put_uvar(&p, f->n_indices);
    for (size_t i = 0; i < f->n_indices; i++) {
        sc_wire_put_bytes(&p, f->index_names[i].ptr, f->index_names[i].len);
        sc_slice fs = f->index_filters ? f->index_filters[i] : sc_slice_make(NULL, 0);
        sc_wire_put_bytes(&p, fs.ptr, fs.len);
    }
    sc_wire_put_bytes(&p, f->query_json.ptr, f->query_json.len);
    sc_wire_put_bytes(&p, f->highlight_json.ptr, f->highlight_json.len);
    for (size_t i = 0; i < f->n_docs; i++) {
        if (f->doc_index[i] >= f->n_indices)
            p.st = p.st == SC_OK ? SC_EINVAL : p.st;
        sc_wire_put_uvar(&p, f->doc_index[i]);
    }
    sc_wire_put_bool(&p, f->dfs != NULL);
    if (f->dfs)
        put_stats(&p, f->dfs);
    put_ext(b, EXT_EXTRAS, &p);
    return b->st;
}

typedef struct fetch_ext_ctx {
    sc_wire_node_fetch *f;
    sc_arena *a;
} fetch_ext_ctx;

static bool get_fetch_ext(void *ctx, uint64_t tag, sc_wire_reader *r)
{
    sc_wire_node_fetch *f = ((fetch_ext_ctx *)ctx)->f;
    sc_arena *a = ((fetch_ext_ctx *)ctx)->a;
    if (tag != EXT_EXTRAS)
        return false;
    f->flags = (uint32_t)sc_wire_get_uvar_max(r, SC_WIRE_FETCH_ALL_);
    if (!f->flags && r->st == SC_OK)
        r->st = SC_ECORRUPT;
    f->n_indices = get_count(r);
    f->index_names = alloc_n(a, r, f->n_indices, sizeof *f->index_names);
    f->index_filters = alloc_n(a, r, f->n_indices, sizeof *f->index_filters);
    for (size_t i = 0; f->index_names && f->index_filters && i < f->n_indices; i++) {
        f->index_names[i] = sc_wire_get_bytes(r);
        f->index_filters[i] = sc_wire_get_bytes(r);
    }
    f->query_json = sc_wire_get_bytes(r);
    f->highlight_json = sc_wire_get_bytes(r);
    uint32_t *di = alloc_n(a, r, f->n_docs, sizeof *di);
    for (size_t i = 0; di && i < f->n_docs; i++)
        di[i] = (uint32_t)sc_wire_get_uvar_max(r, f->n_indices ? f->n_indices - 1 : 0);
    if (f->n_docs && !f->n_indices && r->st == SC_OK)
        r->st = SC_ECORRUPT;
    f->doc_index = di;
    if (sc_wire_get_bool(r)) {
        sc_term_stats *ts = alloc_n(a, r, 1, sizeof *ts);
        if (ts)
            get_stats(r, a, ts);
        f->dfs = ts;
    }
    return true;
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
    fetch_ext_ctx ec = {f, a};
    get_exts(&r, &ec, get_fetch_ext);
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

/* ---- fetch-phase extras of one doc (doc_extras in the grammar) ---- */

static void put_expl(sc_wire_buf *b, const sc_explanation *x, int depth)
{
    if (depth >= SC_WIRE_MAX_EXPLAIN_DEPTH) { /* deeper than a reader accepts */
        b->st = b->st == SC_OK ? SC_ELIMIT : b->st;
        return;
    }
    sc_wire_put_bool(b, x->match);
    sc_wire_put_f32(b, x->value);
    sc_wire_put_str(b, x->description);
    sc_wire_put_uvar(b, x->n_details);
    for (size_t i = 0; i < x->n_details; i++)
        put_expl(b, &x->details[i], depth + 1);
}

static void get_expl(sc_wire_reader *r, sc_arena *a, sc_explanation *x, int depth)
{
    if (depth >= SC_WIRE_MAX_EXPLAIN_DEPTH) {
        r->st = r->st == SC_OK ? SC_ECORRUPT : r->st;
        return;
    }
    x->match = sc_wire_get_bool(r);
    x->value = sc_wire_get_f32(r);
    sc_slice d = sc_wire_get_bytes(r);
    x->n_details = get_count(r);
    if (r->st != SC_OK)
        return;
    x->description = sc_arena_strndup(a, d.len ? (const char *)d.ptr : "", d.len);
    if (!x->description)
        r->st = SC_ENOMEM;
    x->details = x->n_details ? alloc_n(a, r, x->n_details, sizeof *x->details) : NULL;
    for (size_t i = 0; x->details && i < x->n_details && r->st == SC_OK; i++)
        get_expl(r, a, &x->details[i], depth + 1);
}

static void put_doc_extras(sc_wire_buf *b, const sc_shard_fetched *d, uint32_t n_inner)
{
    sc_wire_put_uvar(b, d->n_highlights);
    for (size_t i = 0; i < d->n_highlights; i++) {
        const sc_shard_highlight *h = &d->highlights[i];
        sc_wire_put_uvar(b, h->field);
        sc_wire_put_uvar(b, h->n_frags);
        for (size_t k = 0; k < h->n_frags; k++)
            sc_wire_put_bytes(b, h->frags[k].ptr, h->frags[k].len);
    }
    sc_wire_put_bool(b, d->has_versions);
    if (d->has_versions) {
        sc_wire_put_svar(b, d->version);
        sc_wire_put_svar(b, d->seq_no);
        sc_wire_put_svar(b, d->primary_term);
    }
    sc_wire_put_uvar(b, d->n_matched);
    for (size_t i = 0; i < d->n_matched; i++)
        sc_wire_put_uvar(b, d->matched[i]);
    sc_wire_put_bool(b, d->explanation != NULL);
    if (d->explanation)
        put_expl(b, d->explanation, 0);
    n_inner = d->inner ? n_inner : 0;
    sc_wire_put_uvar(b, n_inner);
    for (size_t k = 0; k < n_inner; k++) {
        const sc_shard_inner_result *ir = &d->inner[k];
        sc_wire_put_uvar(b, ir->total);
        sc_wire_put_f32(b, ir->max_score);
        sc_wire_put_uvar(b, ir->n_hits);
        for (size_t h = 0; h < ir->n_hits; h++) {
            sc_wire_put_uvar(b, ir->hits[h].offset);
            sc_wire_put_f32(b, ir->hits[h].score);
            sc_wire_put_bytes(b, ir->hits[h].source.ptr, ir->hits[h].source.len);
        }
    }
}

static void get_inner(sc_wire_reader *r, sc_arena *a, sc_shard_inner_result *ir)
{
    ir->total = sc_wire_get_uvar(r);
    ir->max_score = sc_wire_get_f32(r);
    ir->n_hits = get_count(r);
    sc_shard_inner_hit *hits = alloc_n(a, r, ir->n_hits, sizeof *hits);
    for (size_t h = 0; hits && h < ir->n_hits && r->st == SC_OK; h++) {
        hits[h].offset = (uint32_t)sc_wire_get_uvar_max(r, UINT32_MAX);
        hits[h].score = sc_wire_get_f32(r);
        hits[h].source = sc_wire_get_bytes(r);
    }
    ir->hits = hits;
}

static void get_doc_extras(sc_wire_reader *r, sc_arena *a, sc_shard_fetched *d, uint32_t *n_inner)
{
    d->n_highlights = get_count(r);
    d->highlights = alloc_n(a, r, d->n_highlights, sizeof *d->highlights);
    for (size_t i = 0; d->highlights && i < d->n_highlights && r->st == SC_OK; i++) {
        sc_shard_highlight *h = &d->highlights[i];
        h->field = (uint32_t)sc_wire_get_uvar_max(r, UINT32_MAX);
        h->n_frags = get_count(r);
        sc_slice *frags = alloc_n(a, r, h->n_frags, sizeof *frags);
        for (size_t k = 0; frags && k < h->n_frags; k++)
            frags[k] = sc_wire_get_bytes(r);
        h->frags = frags;
    }
    d->has_versions = sc_wire_get_bool(r);
    if (d->has_versions) {
        d->version = sc_wire_get_svar(r);
        d->seq_no = sc_wire_get_svar(r);
        d->primary_term = sc_wire_get_svar(r);
    }
    d->n_matched = get_count(r);
    uint32_t *m = alloc_n(a, r, d->n_matched, sizeof *m);
    for (size_t i = 0; m && i < d->n_matched; i++)
        m[i] = (uint32_t)sc_wire_get_uvar_max(r, UINT32_MAX);
    d->matched = m;
    if (sc_wire_get_bool(r)) {
        sc_explanation *x = alloc_n(a, r, 1, sizeof *x);
        if (x)
            get_expl(r, a, x, 0);
        d->explanation = r->st == SC_OK ? x : NULL;
    }
    *n_inner = (uint32_t)get_count(r);
    sc_shard_inner_result *inner = *n_inner ? alloc_n(a, r, *n_inner, sizeof *inner) : NULL;
    for (size_t k = 0; inner && k < *n_inner && r->st == SC_OK; k++)
        get_inner(r, a, &inner[k]);
    d->inner = inner;
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
    sc_wire_put_uvar(b, f->extras ? 1 : 0);
    if (!f->extras)
        return b->st;
    sc_wire_buf p;
    sc_wire_buf_init(&p);
    for (size_t i = 0; i < f->n_docs; i++)
        if (f->docs[i].found)
            put_doc_extras(&p, &f->docs[i], f->n_inner ? f->n_inner[i] : 0);
    put_ext(b, EXT_EXTRAS, &p);
    return b->st;
}

typedef struct fetch_resp_ext_ctx {
    sc_wire_node_fetch_resp *f;
    sc_arena *a;
} fetch_resp_ext_ctx;

static bool get_fetch_resp_ext(void *ctx, uint64_t tag, sc_wire_reader *r)
{
    sc_wire_node_fetch_resp *f = ((fetch_resp_ext_ctx *)ctx)->f;
    sc_arena *a = ((fetch_resp_ext_ctx *)ctx)->a;
    if (tag != EXT_EXTRAS)
        return false;
    f->extras = true;
    f->n_inner = alloc_n(a, r, f->n_docs, sizeof *f->n_inner);
    for (size_t i = 0; f->n_inner && i < f->n_docs && r->st == SC_OK; i++)
        if (f->docs[i].found)
            get_doc_extras(r, a, &f->docs[i], &f->n_inner[i]);
    return true;
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
    fetch_resp_ext_ctx ec = {f, a};
    if (f->docs)
        get_exts(&r, &ec, get_fetch_resp_ext);
    return sc_wire_reader_finish(&r);
}
