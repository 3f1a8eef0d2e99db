/* Where the shard finds an _id (internal.h, sc__id_locate): the id table (idtab.c) holds only
 * the ids whose latest operation is buffered or a delete, as hash tags, and each of their keys is
 * read where it is: a buffered doc's from the indexing buffer (beside its source), a
 * tombstone's from the tombstone keys kept here. Any other id is looked up in the segments'
 * `_id` terms behind their filters (idfilter.c), a segment doc's key read from its `_id` doc
 * values. A refresh drops the buffer's entries (sc__ids_drop_buffered). Everything under the
 * writer's lock. */
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/varint.h"
#include "index/stored.h"
#include "shard/internal.h"

static sc__slot *find_slot(const sc_shard *s, uint32_t uid)
{
    for (size_t i = 0; i < s->slots.len; i++)
        if (s->slots.ptr[i]->uid == uid)
            return s->slots.ptr[i];
    return NULL;
}

/* Reads every doc's id of a segment written before `_id` had doc values from its stored fields
 * into the slot (iddv_state -1); SC_ECORRUPT / SC_ENOMEM leave the slot without them. */
static sc_status load_old_ids(sc__slot *sl)
{
    sc_stored_reader r;
    sc_stored_reader_init(&r, sl->seg);
    sc_status st = sc_vec_reserve(&sl->old_id_off, (size_t)sl->n_docs + 1);
    for (uint32_t d = 0; d < sl->n_docs && st == SC_OK; d++) {
        sc_slice id, src;
        sl->old_id_off.ptr[d] = sl->old_ids.len;
        st = sc_stored_get(&r, d, &id, &src);
        if (st == SC_OK)
            st = sc_vec_append(&sl->old_ids, id.ptr, id.len);
    }
    sc_stored_reader_fini(&r);
    if (st == SC_OK) {
        sl->old_id_off.ptr[sl->n_docs] = sl->old_ids.len;
        sl->old_id_off.len = (size_t)sl->n_docs + 1;
    } else {
        sc_vec_free(&sl->old_ids);
        sc_vec_free(&sl->old_id_off);
    }
    return st;
}

sc_slice sc__slot_key(sc__slot *sl, uint32_t doc)
{
    sc_slice none = sc_slice_make(NULL, 0);
    if (doc >= sl->n_docs)
        return none;
    if (!sl->iddv_state) {
        const sc_field_info *fi = sc_segment_field(sl->seg, sc_slice_cstr("_id"));
        /* The builder gives every doc with an _id its doc value and a merge always writes
         * them, so a segment has them for all its ids or (written before `_id` had doc
         * values) for none. Nested children have neither; no entry points at one. */
        sl->iddv_state = fi && fi->kind == SC_FIELD_KEYWORD && fi->dvs_len &&
                                 sc_dv_sorted_set_open(sl->seg, fi, &sl->iddv) == SC_OK
                             ? 1
                             : -1;
    }
    if (sl->iddv_state == 1) {
        uint64_t ord;
        if (sc_dv_sorted_set_ords(&sl->iddv, doc, &ord, 1) != 1)
            return none;
        return sc_dv_sorted_set_term(&sl->iddv, ord);
    }
    if (sl->iddv_state == -1 && !sl->old_id_off.len && load_old_ids(sl) != SC_OK)
        sl->iddv_state = -2; /* unreadable: no key, lookups of its ids miss */
    if (sl->iddv_state != -1)
        return none;
    uint64_t a = sl->old_id_off.ptr[doc], b = sl->old_id_off.ptr[doc + 1];
    return sc_slice_make(sl->old_ids.ptr + a, (size_t)(b - a));
}

sc_slice sc__entry_key(sc_shard *s, uint32_t ei)
{
    sc_slice none = sc_slice_make(NULL, 0);
    if (ei >= s->entries.len)
        return none;
    const sc__id_entry *e = &s->entries.ptr[ei];
    if (e->seg == SC__SEG_BUFFER) {
        if (e->doc >= s->buf_src.len)
            return none;
        const sc__buf_src *bs = &s->buf_src.ptr[e->doc];
        return sc_slice_make(s->buf_sources.ptr + bs->off, bs->id_len);
    }
    if (e->seg == SC__SEG_NONE)
        return sc__tomb_key(s, e->doc);
    sc__slot *sl = find_slot(s, e->seg);
    return sl ? sc__slot_key(sl, e->doc) : none;
}

sc_slice sc__tomb_key(const sc_shard *s, uint32_t t)
{
    sc_slice none = sc_slice_make(NULL, 0);
    if (t >= s->tomb_key.len || s->tomb_key.ptr[t] == UINT64_MAX)
        return none;
    const uint8_t *p = s->tomb_keys.ptr + s->tomb_key.ptr[t];
    const uint8_t *end = s->tomb_keys.ptr + s->tomb_keys.len;
    uint64_t len;
    if (sc_varint_get(&p, end, &len) != SC_OK || len > (uint64_t)(end - p))
        return none;
    return sc_slice_make(p, (size_t)len);
}

static sc_slice key_of(void *ctx, uint32_t ei)
{
    return sc__entry_key(ctx, ei);
}

bool sc__entry_find(sc_shard *s, sc_slice id, uint32_t *ei)
{
    return sc__idtab_get(&s->ids, id, key_of, s, ei);
}

sc_status sc__id_locate(sc_shard *s, sc_slice id, sc__id_loc *loc)
{
    memset(loc, 0, sizeof *loc);
    loc->entry = SC__NO_ENTRY;
    uint32_t ei;
    if (sc__entry_find(s, id, &ei)) {
        loc->known = true;
        loc->entry = ei;
        loc->at = s->entries.ptr[ei];
        return SC_OK;
    }
    sc__slot *sl = NULL;
    uint32_t doc = 0;
    bool found = false;
    SC_TRY(sc__segments_find(s, id, sc_hashmap_hash(id), &sl, &doc, &found));
    if (found) {
        loc->known = true;
        loc->at = (sc__id_entry){sl->uid, doc};
        loc->slot = sl;
    }
    return SC_OK;
}

sc_status sc__loc_versions(sc_shard *s, const sc__id_loc *loc, sc__versions *out)
{
    if (loc->slot)
        return sc__slot_versions(loc->slot, loc->at.doc, out);
    return sc__entry_versions(s, &loc->at, out);
}

sc_status sc__ids_drop_buffered(sc_shard *s)
{
    uint32_t n = 0, len = s->ids.len;
    for (uint32_t e = 0; e < len; e++)
        n += s->entries.ptr[e].seg == SC__SEG_NONE;
    if (n == len)
        return SC_OK; /* nothing buffered */
    uint32_t *renum = malloc((len ? len : 1) * sizeof *renum);
    sc__id_entry *kept = n ? malloc(n * sizeof *kept) : NULL;
    if (!renum || (n && !kept)) {
        free(renum);
        free(kept);
        return SC_ENOMEM;
    }
    uint32_t k = 0;
    for (uint32_t e = 0; e < len; e++) {
        if (s->entries.ptr[e].seg == SC__SEG_NONE) {
            kept[k] = s->entries.ptr[e];
            renum[e] = k++;
        } else {
            renum[e] = UINT32_MAX;
        }
    }
    sc_status st = sc__idtab_compact(&s->ids, renum, n);
    free(renum);
    if (st != SC_OK) {
        free(kept);
        return st;
    }
    sc_vec_free(&s->entries);
    s->entries.ptr = kept;
    s->entries.len = s->entries.cap = n;
    return SC_OK;
}

sc_status sc__tomb_new(sc_shard *s, sc_slice key, const sc__versions *v, uint32_t *out)
{
    SC_TRY(sc_vec_reserve(&s->tomb_keys, key.len + SC_VARINT_MAX_BYTES));
    uint32_t t;
    if (s->tombs_free.len) {
        t = s->tombs_free.ptr[--s->tombs_free.len];
    } else {
        if (s->tombs.len >= UINT32_MAX)
            return SC_ENOMEM;
        SC_TRY(sc_vec_reserve(&s->tombs, 1));
        SC_TRY(sc_vec_reserve(&s->tomb_key, 1));
        t = (uint32_t)s->tombs.len++;
        s->tomb_key.len++;
    }
    s->tombs.ptr[t] = *v;
    s->tomb_key.ptr[t] = s->tomb_keys.len;
    s->tomb_keys.len += sc_varint_put(s->tomb_keys.ptr + s->tomb_keys.len, key.len);
    if (key.len)
        memcpy(s->tomb_keys.ptr + s->tomb_keys.len, key.ptr, key.len);
    s->tomb_keys.len += key.len;
    *out = t;
    return SC_OK;
}

/* The bytes of tomb t's key in tomb_keys (varint length and key), t in use. */
static size_t tomb_key_size(const sc_shard *s, size_t t)
{
    const uint8_t *p = s->tomb_keys.ptr + s->tomb_key.ptr[t], *q = p;
    uint64_t len = 0;
    /* written by sc__tomb_new: a valid varint and length inside tomb_keys */
    if (sc_varint_get(&q, s->tomb_keys.ptr + s->tomb_keys.len, &len) != SC_OK)
        return 0;
    return (size_t)(q - p) + (size_t)len;
}

/* Rewrites the tombstone keys without the bytes of freed tombs (never fails: without memory
 * for the copy the garbage stays). */
static void compact_tomb_keys(sc_shard *s)
{
    size_t live = 0;
    for (size_t t = 0; t < s->tomb_key.len; t++)
        if (s->tomb_key.ptr[t] != UINT64_MAX)
            live += tomb_key_size(s, t);
    sc_buf b = {0};
    if (live && sc_vec_reserve(&b, live) != SC_OK)
        return;
    for (size_t t = 0; t < s->tomb_key.len; t++) {
        if (s->tomb_key.ptr[t] == UINT64_MAX)
            continue;
        size_t n = tomb_key_size(s, t);
        memcpy(b.ptr + b.len, s->tomb_keys.ptr + s->tomb_key.ptr[t], n);
        s->tomb_key.ptr[t] = b.len;
        b.len += n;
    }
    sc_vec_free(&s->tomb_keys);
    s->tomb_keys = b;
    s->tomb_keys_garbage = 0;
}

sc_status sc__tomb_free(sc_shard *s, uint32_t t)
{
    if (t >= s->tombs.len || s->tomb_key.ptr[t] == UINT64_MAX)
        return SC_EINVAL;
    SC_TRY(sc_vec_push(&s->tombs_free, t));
    s->tomb_keys_garbage += tomb_key_size(s, t);
    s->tomb_key.ptr[t] = UINT64_MAX;
    /* past half of the bytes (and 4 KiB): a reindex of deleted ids frees their keys */
    if (s->tomb_keys_garbage > 4096 && s->tomb_keys_garbage * 2 > s->tomb_keys.len)
        compact_tomb_keys(s);
    return SC_OK;
}

sc_status sc__entry_tombstone(sc_shard *s, uint32_t ei, sc_slice key, const sc__versions *v)
{
    sc__id_entry *e = &s->entries.ptr[ei];
    if (e->seg == SC__SEG_NONE) {
        s->tombs.ptr[e->doc] = *v;
        return SC_OK;
    }
    uint32_t t;
    SC_TRY(sc__tomb_new(s, key, v, &t));
    e->seg = SC__SEG_NONE;
    e->doc = t;
    return SC_OK;
}

void sc__tombs_shrink(sc_shard *s)
{
    if (s->tomb_keys_garbage)
        compact_tomb_keys(s);
    if (!s->tomb_keys.len) {
        sc_vec_free(&s->tomb_keys);
    } else if (s->tomb_keys.len < s->tomb_keys.cap) {
        uint8_t *p = realloc(s->tomb_keys.ptr, s->tomb_keys.len);
        if (p) {
            s->tomb_keys.ptr = p;
            s->tomb_keys.cap = s->tomb_keys.len;
        }
    }
}

void sc__tombs_clear(sc_shard *s)
{
    sc_vec_free(&s->tombs);
    sc_vec_free(&s->tombs_free);
    sc_vec_free(&s->tomb_key);
    sc_vec_free(&s->tomb_keys);
    s->tomb_keys_garbage = 0;
}
