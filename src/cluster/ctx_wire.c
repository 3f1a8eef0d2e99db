/* Encoders and decoders of the clustered search-context messages and ids (ctx_wire.h; the
 * grammar is there). */
#include "cluster/ctx_wire.h"

#include <stdlib.h>
#include <string.h>

#include "base/base64.h"

/* Every element takes at least one byte: a count above what is left is corrupt. */
static size_t get_count(sc_wire_reader *r, size_t max)
{
    size_t left = (size_t)(r->end - r->p);
    return (size_t)sc_wire_get_uvar_max(r, left < max ? left : max);
}

static void *alloc_n(sc_arena *a, sc_wire_reader *r, size_t n, size_t size)
{
    if (r->st != SC_OK)
        return NULL;
    void *p = sc_arena_calloc(a, n ? n : 1, size);
    if (!p)
        r->st = a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    return p;
}

static void get_version(sc_wire_reader *r)
{
    if (sc_wire_get_u8(r) != SC_CTX_WIRE_VERSION && r->st == SC_OK)
        r->st = SC_ECORRUPT;
}

sc_status sc_ctx_query_encode(const sc_ctx_query *q, sc_wire_buf *b)
{
    sc_wire_put_u8(b, SC_CTX_WIRE_VERSION);
    sc_wire_put_u8(b, q->flags);
    sc_wire_put_uvar(b, q->seq);
    sc_wire_put_uvar(b, q->keep_alive_ms);
    sc_wire_put_uvar(b, q->page_size);
    sc_wire_put_uvar(b, q->n_skip);
    for (size_t i = 0; i < q->n_skip; i++)
        sc_wire_put_uvar(b, q->skip[i]);
    sc_wire_put_bytes(b, q->node_query.ptr, q->node_query.len);
    return b->st;
}

sc_status sc_ctx_query_decode(const uint8_t *p, size_t n, sc_arena *a, sc_ctx_query *q)
{
    memset(q, 0, sizeof *q);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    get_version(&r);
    q->flags = sc_wire_get_u8(&r);
    if (r.st == SC_OK && (q->flags & ~(SC_CTX_OPEN | SC_CTX_PIT | SC_CTX_OPEN_ONLY)))
        r.st = SC_ECORRUPT;
    q->seq = sc_wire_get_uvar(&r);
    if (r.st == SC_OK && (q->flags & SC_CTX_OPEN) && q->seq)
        r.st = SC_ECORRUPT;
    q->keep_alive_ms = sc_wire_get_uvar_max(&r, INT64_MAX / 1000000);
    q->page_size = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    q->n_skip = get_count(&r, SIZE_MAX);
    uint64_t *skip = alloc_n(a, &r, q->n_skip, sizeof *skip);
    for (size_t i = 0; r.st == SC_OK && i < q->n_skip; i++)
        skip[i] = sc_wire_get_uvar_max(&r, UINT32_MAX);
    q->skip = skip;
    q->node_query = sc_wire_get_bytes(&r);
    return sc_wire_reader_finish(&r);
}

sc_status sc_ctx_query_resp_encode(const sc_ctx_query_resp *q, sc_wire_buf *b)
{
    sc_wire_put_u8(b, SC_CTX_WIRE_VERSION);
    sc_wire_put_uvar(b, q->seq);
    sc_wire_put_uvar(b, q->n_shards);
    sc_wire_put_bytes(b, q->node_query_resp.ptr, q->node_query_resp.len);
    return b->st;
}

sc_status sc_ctx_query_resp_decode(const uint8_t *p, size_t n, sc_ctx_query_resp *q)
{
    memset(q, 0, sizeof *q);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    get_version(&r);
    q->seq = sc_wire_get_uvar(&r);
    q->n_shards = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    q->node_query_resp = sc_wire_get_bytes(&r);
    return sc_wire_reader_finish(&r);
}

sc_status sc_ctx_free_encode(const sc_ctx_free *f, sc_wire_buf *b)
{
    if (f->n > SC_CTX_WIRE_MAX_IDS)
        return SC_ELIMIT;
    sc_wire_put_u8(b, SC_CTX_WIRE_VERSION);
    sc_wire_put_bool(b, f->all_scrolls);
    sc_wire_put_uvar(b, f->n);
    for (size_t i = 0; i < f->n; i++)
        sc_wire_put_uvar(b, f->seq[i]);
    return b->st;
}

sc_status sc_ctx_free_decode(const uint8_t *p, size_t n, sc_arena *a, sc_ctx_free *f)
{
    memset(f, 0, sizeof *f);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    get_version(&r);
    f->all_scrolls = sc_wire_get_bool(&r);
    f->n = get_count(&r, SC_CTX_WIRE_MAX_IDS);
    uint64_t *seq = alloc_n(a, &r, f->n, sizeof *seq);
    for (size_t i = 0; r.st == SC_OK && i < f->n; i++)
        seq[i] = sc_wire_get_uvar(&r);
    f->seq = seq;
    return sc_wire_reader_finish(&r);
}

sc_status sc_terms_req_encode(const sc_terms_req *q, sc_wire_buf *b)
{
    sc_wire_put_u8(b, SC_CTX_WIRE_VERSION);
    sc_wire_put_bytes(b, q->field.ptr, q->field.len);
    sc_wire_put_bytes(b, q->prefix.ptr, q->prefix.len);
    sc_wire_put_bool(b, q->case_insensitive);
    sc_wire_put_uvar(b, q->size);
    sc_wire_put_uvar(b, q->n_indices);
    for (size_t i = 0; i < q->n_indices; i++) {
        const sc_terms_req_index *x = &q->indices[i];
        sc_wire_put_bytes(b, x->name.ptr, x->name.len);
        sc_wire_put_uvar(b, x->n_shards);
        for (size_t s = 0; s < x->n_shards; s++)
            sc_wire_put_uvar(b, x->shards[s]);
    }
    return b->st;
}

sc_status sc_terms_req_decode(const uint8_t *p, size_t n, sc_arena *a, sc_terms_req *q)
{
    memset(q, 0, sizeof *q);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    get_version(&r);
    q->field = sc_wire_get_bytes(&r);
    q->prefix = sc_wire_get_bytes(&r);
    q->case_insensitive = sc_wire_get_bool(&r);
    q->size = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    q->n_indices = get_count(&r, SIZE_MAX);
    sc_terms_req_index *ix = alloc_n(a, &r, q->n_indices, sizeof *ix);
    for (size_t i = 0; r.st == SC_OK && i < q->n_indices; i++) {
        ix[i].name = sc_wire_get_bytes(&r);
        ix[i].n_shards = get_count(&r, SIZE_MAX);
        uint32_t *sh = alloc_n(a, &r, ix[i].n_shards, sizeof *sh);
        for (size_t s = 0; r.st == SC_OK && s < ix[i].n_shards; s++)
            sh[s] = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
        ix[i].shards = sh;
    }
    q->indices = ix;
    return sc_wire_reader_finish(&r);
}

static int cmp_bytes(sc_slice a, sc_slice b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    return c ? c : (a.len > b.len) - (a.len < b.len);
}

sc_status sc_terms_resp_encode(const sc_terms_resp *q, sc_wire_buf *b)
{
    sc_wire_put_u8(b, SC_CTX_WIRE_VERSION);
    sc_wire_put_uvar(b, q->successful);
    sc_wire_put_uvar(b, q->failed);
    sc_wire_put_uvar(b, q->n_terms);
    for (size_t i = 0; i < q->n_terms; i++)
        sc_wire_put_bytes(b, q->terms[i].ptr, q->terms[i].len);
    return b->st;
}

sc_status sc_terms_resp_decode(const uint8_t *p, size_t n, sc_arena *a, sc_terms_resp *q)
{
    memset(q, 0, sizeof *q);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    get_version(&r);
    q->successful = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    q->failed = (uint32_t)sc_wire_get_uvar_max(&r, UINT32_MAX);
    q->n_terms = get_count(&r, SIZE_MAX);
    sc_slice *t = alloc_n(a, &r, q->n_terms, sizeof *t);
    for (size_t i = 0; r.st == SC_OK && i < q->n_terms; i++) {
        t[i] = sc_wire_get_bytes(&r);
        /* the merge relies on each node's list being sorted and unique */
        if (r.st == SC_OK && i && cmp_bytes(t[i - 1], t[i]) >= 0)
            r.st = SC_ECORRUPT;
    }
    q->terms = t;
    return sc_wire_reader_finish(&r);
}

sc_status sc_ctx_id_encode(const sc_ctx_id *id, sc_wire_buf *b)
{
    if (id->n > SC_CTX_WIRE_MAX_IDS)
        return SC_ELIMIT;
    sc_wire_put_u8(b, SC_CTX_WIRE_VERSION);
    sc_wire_put_bool(b, id->pit);
    sc_wire_put_bytes(b, id->coordinator.ptr, id->coordinator.len);
    sc_wire_put_uvar(b, id->coordinator_seq);
    sc_wire_put_uvar(b, id->n);
    for (size_t i = 0; i < id->n; i++) {
        sc_wire_put_bytes(b, id->entries[i].node.ptr, id->entries[i].node.len);
        sc_wire_put_uvar(b, id->entries[i].seq);
    }
    return b->st;
}

/* A node id as carried in an id: 1..63 bytes, no NUL. */
static bool node_ok(sc_slice s)
{
    return s.len > 0 && s.len < 64 && !memchr(s.ptr, 0, s.len);
}

sc_status sc_ctx_id_decode(const uint8_t *p, size_t n, sc_arena *a, sc_ctx_id *id)
{
    memset(id, 0, sizeof *id);
    sc_wire_reader r;
    sc_wire_reader_init(&r, p, n);
    get_version(&r);
    id->pit = sc_wire_get_bool(&r);
    id->coordinator = sc_wire_get_bytes(&r);
    if (r.st == SC_OK && !node_ok(id->coordinator))
        r.st = SC_ECORRUPT;
    id->coordinator_seq = sc_wire_get_uvar(&r);
    id->n = get_count(&r, SC_CTX_WIRE_MAX_IDS);
    sc_ctx_id_entry *e = alloc_n(a, &r, id->n, sizeof *e);
    for (size_t i = 0; r.st == SC_OK && i < id->n; i++) {
        e[i].node = sc_wire_get_bytes(&r);
        if (r.st == SC_OK && !node_ok(e[i].node))
            r.st = SC_ECORRUPT;
        e[i].seq = sc_wire_get_uvar(&r);
    }
    id->entries = e;
    return sc_wire_reader_finish(&r);
}

char *sc_ctx_id_text(const sc_ctx_id *id)
{
    sc_wire_buf b;
    sc_wire_buf_init(&b);
    char *out = NULL;
    if (sc_ctx_id_encode(id, &b) == SC_OK && (out = malloc(sc_base64_encoded_len(b.len) + 1))) {
        size_t len = sc_base64_encode(b.ptr, b.len, out);
        while (len && out[len - 1] == '=')
            out[--len] = '\0';
        for (size_t i = 0; i < len; i++)
            out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    }
    sc_wire_buf_fini(&b);
    return out;
}

sc_status sc_ctx_id_parse(const char *text, sc_arena *a, sc_ctx_id *out)
{
    size_t len = strlen(text);
    if (!len || len > (1u << 20))
        return SC_EINVAL;
    char *t = sc_arena_alloc(a, len + 4);
    if (!t)
        return SC_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '+' || c == '/' || c == '=')
            return SC_EINVAL; /* the URL-safe alphabet only */
        t[i] = c == '-' ? '+' : c == '_' ? '/' : c;
    }
    if (len % 4 == 1)
        return SC_EINVAL;
    while (len % 4)
        t[len++] = '=';
    uint8_t *bytes = sc_arena_alloc(a, sc_base64_decoded_cap(len) + 1);
    size_t n = 0;
    if (!bytes)
        return SC_ENOMEM;
    if (sc_base64_decode(t, len, bytes, &n) != SC_OK)
        return SC_EINVAL;
    return sc_ctx_id_decode(bytes, n, a, out) == SC_OK ? SC_OK : SC_EINVAL;
}
