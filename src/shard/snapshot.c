/* Searcher snapshots: immutable, refcounted views of a shard's segments and live docs, swapped
 * atomically by refresh; see shard.h. */
#include <stdlib.h>
#include <string.h>

#include "shard/internal.h"

void sc__live_unref(sc__live *l)
{
    if (l && atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) == 1) {
        sc_bitset_fini(&l->bits);
        free(l);
    }
}

static void snap_free(sc__snap *sn)
{
    for (size_t i = 0; i < sn->pub.n_segments; i++) {
        sc_segment_unref(sn->views[i].seg);
        sc__live_unref(sn->lives[i]);
    }
    sc_mapping_unref(sn->pub.mapping);
    free(sn->views);
    free(sn->lives);
    free(sn);
}

/* A copy of the slot's pending bits as an immutable live object. In a segment with nested
 * documents (parents non-NULL) the children are cleared too, so every search sees only root
 * documents (Elasticsearch's "not nested" filter at no per-query cost); a nested query reaches
 * the children itself (children are deleted exactly when their root is). */
static sc__live *live_from_pending(const sc__slot *sl, const sc_bitset *parents)
{
    sc__live *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    if (sc_bitset_init(&l->bits, sl->n_docs) != SC_OK) {
        free(l);
        return NULL;
    }
    size_t nw = sc_bitset_words_for(sl->n_docs);
    if (sl->pending.words)
        memcpy(l->bits.words, sl->pending.words, nw * 8);
    else
        sc_bitset_set_range(&l->bits, 0, sl->n_docs);
    l->n_deleted = sl->n_deleted;
    if (parents) {
        sc_bitset_and_words(&l->bits, parents, 0, nw);
        l->n_deleted = sl->n_docs - (uint32_t)sc_bitset_count(&l->bits);
    }
    atomic_init(&l->refs, 1);
    return l;
}

sc_status sc__shard_publish(sc_shard *s)
{
    size_t n = s->slots.len;
    sc__snap *sn = calloc(1, sizeof(*sn));
    if (!sn)
        return SC_ENOMEM;
    sn->views = calloc(n ? n : 1, sizeof(*sn->views));
    sn->lives = calloc(n ? n : 1, sizeof(*sn->lives));
    if (!sn->views || !sn->lives) {
        free(sn->views);
        free(sn->lives);
        free(sn);
        return SC_ENOMEM;
    }
    /* Bring every slot's published live bits up to date first (may fail: nothing changed). */
    for (size_t i = 0; i < n; i++) {
        sc__slot *sl = s->slots.ptr[i];
        if (!sl->dirty)
            continue;
        const sc_bitset *parents = sc_segment_parents(sl->seg);
        bool need = sl->n_deleted || parents;
        sc__live *l = need ? live_from_pending(sl, parents) : NULL;
        if (need && !l) {
            free(sn->views);
            free(sn->lives);
            free(sn);
            return SC_ENOMEM;
        }
        sc__live_unref(sl->published);
        sl->published = l;
        sl->dirty = false;
    }
    uint32_t base = 0;
    for (size_t i = 0; i < n; i++) {
        sc__slot *sl = s->slots.ptr[i];
        sc_segment_ref(sl->seg);
        if (sl->published)
            atomic_fetch_add_explicit(&sl->published->refs, 1, memory_order_relaxed);
        sn->lives[i] = sl->published;
        sc_shard_segment_view *v = &sn->views[i];
        v->seg = sl->seg;
        v->live = sl->published ? &sl->published->bits : NULL;
        v->n_docs = sl->n_docs;
        v->n_deleted = sl->published ? sl->published->n_deleted : 0;
        v->doc_base = base;
        base += sl->n_docs;
        sn->pub.n_docs += sl->n_docs - v->n_deleted;
        /* deleted roots: the hidden children count as neither live nor deleted */
        sn->pub.n_deleted += v->n_deleted - sc_segment_n_children(sl->seg);
    }
    sn->pub.segments = sn->views;
    sn->pub.n_segments = n;
    sn->pub.max_doc = base;
    sn->pub.generation = ++s->snap_gen;
    sn->pub.mapping = sc_shard_mapping(s);
    atomic_init(&sn->refs, 1);
    pthread_mutex_lock(&s->snap_lock);
    sc__snap *old = s->snap;
    s->snap = sn;
    pthread_mutex_unlock(&s->snap_lock);
    if (old)
        sc_shard_searcher_release(&old->pub);
    return SC_OK;
}

const sc_shard_snapshot *sc_shard_searcher_acquire(sc_shard *s)
{
    pthread_mutex_lock(&s->snap_lock);
    sc__snap *sn = s->snap;
    atomic_fetch_add_explicit(&sn->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&s->snap_lock);
    return &sn->pub;
}

const sc_shard_snapshot *sc_shard_snapshot_ref(const sc_shard_snapshot *snap)
{
    atomic_fetch_add_explicit(&((sc__snap *)snap)->refs, 1, memory_order_relaxed);
    return snap;
}

void sc_shard_searcher_release(const sc_shard_snapshot *snap)
{
    if (!snap)
        return;
    sc__snap *sn = (sc__snap *)snap;
    if (atomic_fetch_sub_explicit(&sn->refs, 1, memory_order_acq_rel) == 1)
        snap_free(sn);
}
