/* The in-memory indexing buffer (builder.h). Terms of each field live in a hash map (term ->
 * global term id) whose key bytes sit in append-only chunks owned here; every (term, doc) pair
 * becomes a 16-byte record appended in doc order, positions go to one shared array. Writing a
 * segment (segwrite.c) groups records by term with a counting sort, which is stable, so every
 * term's records come out in doc order without per-term buffers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "index/builder_impl.h"

#define KEYCHUNK (64 * 1024)

static sc_status key_copy(sc_segment_builder *b, sc_slice key, const uint8_t **out)
{
    if (!b->chunk || b->chunk_used + key.len > b->chunk->cap) {
        size_t cap = key.len > KEYCHUNK ? key.len : KEYCHUNK;
        sc__keychunk *c = malloc(sizeof(*c) + cap);
        if (!c)
            return SC_ENOMEM;
        c->prev = b->chunk;
        c->cap = cap;
        b->chunk = c;
        b->chunk_used = 0;
        b->key_bytes += cap + sizeof(*c);
    }
    uint8_t *p = b->chunk->data + b->chunk_used;
    if (key.len)
        memcpy(p, key.ptr, key.len);
    b->chunk_used += key.len;
    *out = p;
    return SC_OK;
}

sc_status sc_segment_builder_new(sc_segment_builder **out)
{
    sc_segment_builder *b = calloc(1, sizeof(*b));
    if (!b)
        return SC_ENOMEM;
    sc_hashmap_init(&b->fields_by_name, NULL, 0);
    *out = b;
    return SC_OK;
}

static void field_free(sc__bfield *f)
{
    if (!f)
        return;
    free(f->terms.slots);
    sc_vec_free(&f->norms);
    sc_vec_free(&f->has);
    sc_vec_free(&f->dvn);
    sc_vec_free(&f->pts);
    sc_vec_free(&f->dvs);
    sc_vec_free(&f->vdocs);
    sc_vec_free(&f->vecs);
    free(f->name);
    free(f);
}

void sc_segment_builder_reset(sc_segment_builder *b)
{
    for (size_t i = 0; i < b->fields.len; i++)
        field_free(b->fields.ptr[i]);
    sc_vec_clear(&b->fields);
    sc_hashmap_clear(&b->fields_by_name);
    sc__keychunk *c = b->chunk;
    while (c) {
        sc__keychunk *p = c->prev;
        free(c);
        c = p;
    }
    b->chunk = NULL;
    b->chunk_used = 0;
    b->key_bytes = 0;
    sc_vec_clear(&b->terms);
    sc_vec_clear(&b->recs);
    sc_vec_clear(&b->positions);
    sc_vec_clear(&b->stored);
    sc_vec_clear(&b->stored_off);
    b->n_docs = 0;
    b->failed = SC_OK;
}

void sc_segment_builder_trim(sc_segment_builder *b)
{
    sc_segment_builder_reset(b);
    sc_vec_free(&b->terms);
    sc_vec_free(&b->recs);
    sc_vec_free(&b->positions);
    sc_vec_free(&b->stored);
    sc_vec_free(&b->stored_off);
    sc_vec_free(&b->pairs);
    sc_vec_free(&b->gids);
}

void sc_segment_builder_free(sc_segment_builder *b)
{
    if (!b)
        return;
    sc_segment_builder_reset(b);
    sc_vec_free(&b->fields);
    sc_hashmap_fini(&b->fields_by_name);
    sc_vec_free(&b->terms);
    sc_vec_free(&b->recs);
    sc_vec_free(&b->positions);
    sc_vec_free(&b->stored);
    sc_vec_free(&b->stored_off);
    sc_vec_free(&b->pairs);
    sc_vec_free(&b->gids);
    free(b);
}

uint32_t sc_segment_builder_n_docs(const sc_segment_builder *b)
{
    return b->n_docs;
}

size_t sc_segment_builder_ram_bytes(const sc_segment_builder *b)
{
    size_t n = sizeof(*b) + b->key_bytes + sc_hashmap_memory_bytes(&b->fields_by_name);
    n += b->terms.cap * sizeof(*b->terms.ptr) + b->recs.cap * sizeof(*b->recs.ptr);
    n += b->positions.cap * sizeof(uint32_t) + b->stored.cap + b->stored_off.cap * 8;
    n += b->pairs.cap * sizeof(*b->pairs.ptr) + b->gids.cap * sizeof(uint32_t);
    for (size_t i = 0; i < b->fields.len; i++) {
        const sc__bfield *f = b->fields.ptr[i];
        n += sizeof(*f) + f->name_len + f->terms.cap * sizeof(sc__tslot) + f->norms.cap;
        n += f->has.cap * 8 + f->dvn.cap * sizeof(*f->dvn.ptr) + f->dvs.cap * sizeof(*f->dvs.ptr);
        n += f->pts.cap * sizeof(*f->pts.ptr) + f->vdocs.cap * 4 + f->vecs.cap * 4;
    }
    return n;
}

static sc__bfield *field_find(const sc_segment_builder *b, sc_slice name)
{
    uint64_t v;
    if (!sc_hashmap_get(&b->fields_by_name, name, &v))
        return NULL;
    return b->fields.ptr[v];
}

sc_status sc__builder_field(sc_segment_builder *b, sc_slice name, sc_field_kind kind,
                            uint32_t flags, sc__bfield **out)
{
    sc__bfield *f = field_find(b, name);
    if (f) {
        if (f->kind != kind || f->flags != flags)
            return SC_EINVAL;
        *out = f;
        return SC_OK;
    }
    if (name.len == 0 || name.len > UINT16_MAX || kind > SC_FIELD_VECTOR)
        return SC_EINVAL;
    f = calloc(1, sizeof(*f));
    if (!f)
        return SC_ENOMEM;
    f->name = malloc(name.len);
    if (!f->name) {
        free(f);
        return SC_ENOMEM;
    }
    memcpy(f->name, name.ptr, name.len);
    f->name_len = name.len;
    f->kind = kind;
    f->flags = flags;
    f->number = (uint32_t)b->fields.len;
    if (sc_vec_push(&b->fields, f) != SC_OK) {
        field_free(f);
        return SC_ENOMEM;
    }
    if (sc_hashmap_put(&b->fields_by_name, name, f->number) != SC_OK) {
        b->fields.len--;
        field_free(f);
        return SC_ENOMEM;
    }
    *out = f;
    return SC_OK;
}

static uint64_t key_prefix(sc_slice key)
{
    uint64_t v = 0;
    if (key.len)
        memcpy(&v, key.ptr, key.len < 8 ? key.len : 8);
    return v;
}

static sc_status table_grow(sc__ttable *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    if (cap > (size_t)UINT32_MAX + 1)
        return SC_ELIMIT;
    sc__tslot *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return SC_ENOMEM;
    size_t mask = cap - 1;
    for (size_t i = 0; i < t->cap; i++) {
        sc__tslot e = t->slots[i];
        if (!e.gid1)
            continue;
        size_t j = e.h32 & mask;
        while (slots[j].gid1)
            j = (j + 1) & mask;
        slots[j] = e;
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return SC_OK;
}

/* The global id of `term` in field f, inserting it if new (the key is then copied into the
 * builder's chunks). One hash, one probe sequence over 8-byte slots; a slot whose hash matches
 * is confirmed on the term entry's length and prefix, and on the bytes past 8 for long keys.
 * Replaces the generic hash map (32-byte slots, the key copied into the chunks before every
 * probe, a memcmp call per hit; ~20 % of the indexing CPU on the wiki corpus). What remains
 * (~16 %) is mostly the cache misses on the slot and on the term entry. */
static sc_status term_gid(sc_segment_builder *b, sc__bfield *f, sc_slice term, uint32_t *gid)
{
    sc__ttable *t = &f->terms;
    if (b->terms.len >= UINT32_MAX - 1)
        return SC_ELIMIT;
    if (2 * (t->len + 1) > t->cap)
        SC_TRY(table_grow(t));
    uint64_t h = sc_hashmap_hash(term), pfx = key_prefix(term);
    uint32_t h32 = (uint32_t)(h >> 32);
    size_t mask = t->cap - 1, i = h32 & mask;
    for (;; i = (i + 1) & mask) {
        sc__tslot *s = &t->slots[i];
        if (!s->gid1)
            break;
        if (s->h32 != h32)
            continue;
        const sc__bterm *e = &b->terms.ptr[s->gid1 - 1];
        if (e->pfx == pfx && e->len == term.len &&
            (term.len <= 8 || memcmp(e->key + 8, term.ptr + 8, term.len - 8) == 0)) {
            *gid = s->gid1 - 1;
            return SC_OK;
        }
    }
    SC_TRY(sc_vec_reserve(&b->terms, 1));
    const uint8_t *copy;
    SC_TRY(key_copy(b, term, &copy));
    sc__bterm e = {.pfx = pfx, .key = copy, .len = (uint32_t)term.len, .field = f->number};
    b->terms.ptr[b->terms.len++] = e; /* room reserved above */
    *gid = (uint32_t)(b->terms.len - 1);
    t->slots[i] = (sc__tslot){h32, *gid + 1};
    t->len++;
    return SC_OK;
}

static sc_status grow_doc_arrays(sc__bfield *f, uint32_t doc)
{
    size_t words = (size_t)doc / 64 + 1;
    if (f->has.len < words) {
        SC_TRY(sc_vec_reserve(&f->has, words - f->has.len));
        memset(f->has.ptr + f->has.len, 0, (words - f->has.len) * 8);
        f->has.len = words;
    }
    return SC_OK;
}

sc_status sc__builder_mark_doc(sc_segment_builder *b, sc__bfield *f, uint32_t doc)
{
    (void)b;
    SC_TRY(grow_doc_arrays(f, doc));
    f->has.ptr[doc / 64] |= UINT64_C(1) << (doc % 64);
    return SC_OK;
}

sc_status sc__builder_norm(sc_segment_builder *b, sc__bfield *f, uint32_t doc, uint8_t norm)
{
    (void)b;
    if (f->norms.len <= doc) {
        size_t need = (size_t)doc + 1 - f->norms.len;
        SC_TRY(sc_vec_reserve(&f->norms, need));
        memset(f->norms.ptr + f->norms.len, 0, need);
        f->norms.len = (size_t)doc + 1;
    }
    f->norms.ptr[doc] = norm;
    return SC_OK;
}

sc_status sc__builder_posting(sc_segment_builder *b, sc__bfield *f, sc_slice term, uint32_t doc,
                              uint32_t freq, const uint32_t *positions, size_t n_positions)
{
    if (term.len > SC_TERM_MAX_BYTES || freq == 0)
        return SC_EINVAL;
    uint32_t gid;
    SC_TRY(term_gid(b, f, term, &gid));
    sc__bterm *t = &b->terms.ptr[gid];
    if (t->df > 0 && t->last_doc >= doc)
        return SC_EINVAL;
    if (b->positions.len + n_positions > UINT32_MAX)
        return SC_ELIMIT;
    sc__brec r = {.gid = gid, .doc = doc, .freq = freq, .pos = (uint32_t)b->positions.len};
    SC_TRY(sc_vec_reserve(&b->positions, n_positions));
    SC_TRY(sc_vec_push(&b->recs, r));
    if (n_positions)
        memcpy(b->positions.ptr + b->positions.len, positions, n_positions * sizeof(uint32_t));
    b->positions.len += n_positions;
    t->df++;
    t->ttf += freq;
    t->last_doc = doc;
    f->sum_ttf += freq;
    return SC_OK;
}

sc_status sc__builder_numeric(sc_segment_builder *b, sc__bfield *f, uint32_t doc, int64_t value)
{
    (void)b;
    sc__dvn r = {.doc = doc, .value = value};
    return sc_vec_push(&f->dvn, r);
}

sc_status sc__builder_point(sc_segment_builder *b, sc__bfield *f, uint32_t doc, int64_t value)
{
    (void)b;
    sc__dvn r = {.doc = doc, .value = value};
    return sc_vec_push(&f->pts, r);
}

static bool vparams_ok(const sc__bfield *f, const sc_vec_params *p)
{
    if (!p || (unsigned)p->elem > SC_VEC_ELEM_BIT || p->dims == 0 ||
        p->dims > sc_vec_max_dims(p->elem) || p->m < 2 || p->m > 512 || p->ef_construction < 1 ||
        (unsigned)p->sim > SC_VEC_SIM_MIP || (unsigned)p->type > SC_VEC_INDEX_INT8_FLAT)
        return false;
    return f->vp.dims == 0 || memcmp(&f->vp, p, sizeof(*p)) == 0;
}

sc_status sc__builder_vector(sc_segment_builder *b, sc__bfield *f, uint32_t doc,
                             const sc_vec_params *p, const float *v)
{
    if (!vparams_ok(f, p) || (f->vdocs.len && doc <= f->vdocs.ptr[f->vdocs.len - 1]))
        return SC_EINVAL;
    f->vp = *p;
    SC_TRY(sc__builder_mark_doc(b, f, doc));
    SC_TRY(sc_vec_reserve(&f->vecs, p->dims));
    SC_TRY(sc_vec_push(&f->vdocs, doc));
    memcpy(f->vecs.ptr + f->vecs.len, v, p->dims * sizeof(float));
    f->vecs.len += p->dims;
    return SC_OK;
}

sc_status sc__builder_ord_term(sc_segment_builder *b, sc__bfield *f, uint32_t doc, sc_slice term)
{
    if (term.len > SC_TERM_MAX_BYTES)
        return SC_EINVAL;
    uint32_t gid;
    SC_TRY(term_gid(b, f, term, &gid));
    b->terms.ptr[gid].in_dv = 1;
    sc__dvs r = {.doc = doc, .gid = gid};
    return sc_vec_push(&f->dvs, r);
}

sc_status sc__builder_stored(sc_segment_builder *b, sc_slice id, sc_slice source)
{
    sc_status st = SC_OK;
    if (b->n_docs >= UINT32_MAX - 1)
        return SC_ELIMIT;
    SC_TRY(sc_vec_push(&b->stored_off, (uint64_t)b->stored.len));
    size_t mark = b->stored.len;
    sc__buf_varint(&b->stored, id.len, &st);
    sc__buf_varint(&b->stored, source.len, &st);
    sc__buf_put(&b->stored, id.ptr, id.len, &st);
    sc__buf_put(&b->stored, source.ptr, source.len, &st);
    if (st != SC_OK) {
        b->stored.len = mark;
        b->stored_off.len--;
        return st;
    }
    b->n_docs++;
    return SC_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Groups the field's tokens by term without sorting: pass 1 maps tokens to term ids and counts
 * each term's occurrences in this doc (marked by cur_doc), pass 2 drops positions into each
 * term's slice of the shared positions array in token order. */
static sc_status add_text(sc_segment_builder *b, sc__bfield *f, const sc_index_field *in,
                          uint32_t doc)
{
    if (f->flags & SC_FIELD_NORMS)
        SC_TRY(sc__builder_norm(b, f, doc, sc_norm_encode(in->length)));
    if (in->n_tokens == 0)
        return SC_OK;
    SC_TRY(sc__builder_mark_doc(b, f, doc));
    if (!(f->flags & SC_FIELD_INDEXED))
        return SC_OK;
    size_t n = in->n_tokens;
    sc_vec_clear(&b->gids);
    sc_vec_clear(&b->pairs);
    SC_TRY(sc_vec_reserve(&b->gids, n));
    SC_TRY(sc_vec_reserve(&b->pairs, n)); /* pairs.ptr[k].gid: the k-th distinct term */
    for (size_t i = 0; i < n; i++) {
        uint32_t gid;
        SC_TRY(term_gid(b, f, in->tokens[i].term, &gid));
        b->gids.ptr[b->gids.len++] = gid;
        sc__bterm *t = &b->terms.ptr[gid];
        if (t->cur_doc != doc + 1) {
            t->cur_doc = doc + 1;
            t->cur_freq = 0;
            b->pairs.ptr[b->pairs.len++] = (sc__pair){gid, 0};
        }
        t->cur_freq++;
    }
    bool with_pos = (f->flags & SC_FIELD_POSITIONS) != 0;
    if (with_pos && b->positions.len + n > UINT32_MAX)
        return SC_ELIMIT;
    SC_TRY(sc_vec_reserve(&b->recs, b->pairs.len));
    if (with_pos)
        SC_TRY(sc_vec_reserve(&b->positions, n));
    uint32_t slot = (uint32_t)b->positions.len;
    for (size_t k = 0; k < b->pairs.len; k++) {
        sc__bterm *t = &b->terms.ptr[b->pairs.ptr[k].gid];
        sc__brec r = {.gid = b->pairs.ptr[k].gid, .doc = doc, .freq = t->cur_freq, .pos = slot};
        b->recs.ptr[b->recs.len++] = r;
        t->cur_slot = slot;
        if (with_pos)
            slot += t->cur_freq;
        t->df++;
        t->ttf += t->cur_freq;
        t->last_doc = doc;
        f->sum_ttf += t->cur_freq;
    }
    if (!with_pos)
        return SC_OK;
    uint32_t *pos = b->positions.ptr;
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        sc__bterm *t = &b->terms.ptr[b->gids.ptr[i]];
        pos[t->cur_slot++] = in->tokens[i].position;
        if (i > 0 && in->tokens[i].position < in->tokens[i - 1].position)
            sorted = false;
    }
    b->positions.len = slot;
    if (!sorted) {
        /* tokens out of position order: sort each term's positions */
        for (size_t k = 0; k < b->pairs.len; k++) {
            const sc__brec *r = &b->recs.ptr[b->recs.len - b->pairs.len + k];
            qsort(pos + r->pos, r->freq, sizeof(uint32_t), cmp_u32);
        }
    }
    return SC_OK;
}

static sc_status add_keyword(sc_segment_builder *b, sc__bfield *f, const sc_index_field *in,
                             uint32_t doc)
{
    if (in->n_tokens == 0)
        return SC_OK;
    SC_TRY(sc__builder_mark_doc(b, f, doc));
    if (!(f->flags & (SC_FIELD_INDEXED | SC_FIELD_DOCVALUES)))
        return SC_OK;
    sc_vec_clear(&b->gids);
    SC_TRY(sc_vec_reserve(&b->gids, in->n_tokens));
    for (size_t i = 0; i < in->n_tokens; i++) {
        uint32_t gid;
        SC_TRY(term_gid(b, f, in->tokens[i].term, &gid));
        b->gids.ptr[b->gids.len++] = gid;
    }
    /* gids are unique per term; sorting dedups and the writer orders terms anyway */
    if (b->gids.len > 1)
        qsort(b->gids.ptr, b->gids.len, sizeof(uint32_t), cmp_u32);
    for (size_t i = 0; i < b->gids.len; i++) {
        uint32_t gid = b->gids.ptr[i];
        if (i > 0 && gid == b->gids.ptr[i - 1])
            continue;
        sc__bterm *t = &b->terms.ptr[gid];
        if (f->flags & SC_FIELD_INDEXED) {
            sc__brec r = {.gid = gid, .doc = doc, .freq = 1, .pos = 0};
            SC_TRY(sc_vec_push(&b->recs, r));
            t->df++;
            t->ttf++;
            t->last_doc = doc;
            f->sum_ttf++;
        }
        if (f->flags & SC_FIELD_DOCVALUES) {
            t->in_dv = 1;
            sc__dvs r = {.doc = doc, .gid = gid};
            SC_TRY(sc_vec_push(&f->dvs, r));
        }
    }
    return SC_OK;
}

static sc_status add_numeric(sc_segment_builder *b, sc__bfield *f, const sc_index_field *in,
                             uint32_t doc)
{
    if (in->n_values == 0)
        return SC_OK;
    SC_TRY(sc__builder_mark_doc(b, f, doc));
    if (f->flags & SC_FIELD_INDEXED) {
        SC_TRY(sc_vec_reserve(&f->pts, in->n_values));
        for (size_t i = 0; i < in->n_values; i++)
            f->pts.ptr[f->pts.len++] = (sc__dvn){.doc = doc, .value = in->values[i]};
    }
    if (!(f->flags & SC_FIELD_DOCVALUES))
        return SC_OK;
    size_t start = f->dvn.len;
    SC_TRY(sc_vec_reserve(&f->dvn, in->n_values));
    for (size_t i = 0; i < in->n_values; i++)
        f->dvn.ptr[f->dvn.len++] = (sc__dvn){.doc = doc, .value = in->values[i]};
    /* keep each doc's values ascending (sc__dvn starts with the value's slot) */
    int64_t *tmp = malloc(in->n_values * sizeof(int64_t));
    if (!tmp)
        return SC_ENOMEM;
    memcpy(tmp, in->values, in->n_values * sizeof(int64_t));
    qsort(tmp, in->n_values, sizeof(int64_t), cmp_i64);
    for (size_t i = 0; i < in->n_values; i++)
        f->dvn.ptr[start + i].value = tmp[i];
    free(tmp);
    return SC_OK;
}

/* Checks everything that can make a document invalid before anything is changed. */
static sc_status validate_doc(const sc_segment_builder *b, const sc_index_doc *doc)
{
    if (b->n_docs >= UINT32_MAX - 1)
        return SC_ELIMIT;
    for (size_t i = 0; i < doc->n_fields; i++) {
        const sc_index_field *in = &doc->fields[i];
        if (in->name.len == 0 || in->name.len > UINT16_MAX || in->kind > SC_FIELD_VECTOR)
            return SC_EINVAL;
        if (in->kind == SC_FIELD_VECTOR && in->vector) {
            const sc__bfield *vf = field_find(b, in->name);
            sc__bfield empty = {0};
            if (!vparams_ok(vf ? vf : &empty, in->vparams))
                return SC_EINVAL;
            for (uint32_t j = 0; j < in->vparams->dims; j++)
                if (!isfinite(in->vector[j]))
                    return SC_EINVAL;
        }
        if ((in->n_tokens && !in->tokens) || (in->n_values && !in->values))
            return SC_EINVAL;
        const sc__bfield *f = field_find(b, in->name);
        if (f && (f->kind != in->kind || f->flags != in->flags))
            return SC_EINVAL;
        for (size_t j = 0; j < i; j++)
            if (sc_slice_eq(doc->fields[j].name, in->name))
                return SC_EINVAL;
        for (size_t j = 0; j < in->n_tokens; j++)
            if (in->tokens[j].term.len > SC_TERM_MAX_BYTES)
                return SC_EINVAL;
    }
    return SC_OK;
}

sc_status sc_segment_builder_add(sc_segment_builder *b, const sc_index_doc *doc, uint32_t *doc_id)
{
    if (b->failed != SC_OK)
        return b->failed;
    SC_TRY(validate_doc(b, doc));
    uint32_t id = b->n_docs;
    sc_status st = SC_OK;
    for (size_t i = 0; i < doc->n_fields && st == SC_OK; i++) {
        const sc_index_field *in = &doc->fields[i];
        sc__bfield *f;
        st = sc__builder_field(b, in->name, in->kind, in->flags, &f);
        if (st != SC_OK)
            break;
        switch (in->kind) {
        case SC_FIELD_TEXT: st = add_text(b, f, in, id); break;
        case SC_FIELD_KEYWORD: st = add_keyword(b, f, in, id); break;
        case SC_FIELD_NUMERIC: st = add_numeric(b, f, in, id); break;
        case SC_FIELD_VECTOR:
            if (in->vector)
                st = sc__builder_vector(b, f, id, in->vparams, in->vector);
            break;
        }
    }
    if (st == SC_OK)
        st = sc__builder_stored(b, doc->id, doc->source);
    if (st != SC_OK) {
        /* part of the doc may be in the buffers under an id the next doc would reuse */
        b->failed = st;
        return st;
    }
    if (doc_id)
        *doc_id = id;
    return SC_OK;
}
