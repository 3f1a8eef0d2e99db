/* Merges of a shard's segments: the index layer's merge policy chooses, src/index merges the
 * files and the merged segment's `_id` filter is built without the writer lock held, then the
 * result replaces its inputs under the lock with the deletes that arrived during the merge
 * carried over. The id table names no segment doc (idkeys.c), so nothing is remapped. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "index/merge.h"
#include "shard/internal.h"

/* Merges the given slots (all in s->slots, not merging). merge_lock held, wlock not held. */
static sc_status run_merge(sc_shard *s, sc__slot **in, size_t n)
{
    uint64_t t0 = sc_clock_now_ns();
    sc_merge_input *inputs = calloc(n, sizeof(*inputs));
    sc_bitset *start = calloc(n, sizeof(*start));
    if (!inputs || !start) {
        free(inputs);
        free(start);
        return SC_ENOMEM;
    }
    char name[SC_SEGMENT_NAME_MAX + 1];
    sc_status st = SC_OK;
    pthread_mutex_lock(&s->wlock);
    for (size_t i = 0; i < n && st == SC_OK; i++) {
        in[i]->merging = 1;
        inputs[i].seg = in[i]->seg;
        sc_segment_ref(in[i]->seg);
        if (in[i]->pending.words && in[i]->n_deleted) {
            st = sc_bitset_init(&start[i], in[i]->n_docs);
            if (st == SC_OK) {
                memcpy(start[i].words, in[i]->pending.words,
                       sc_bitset_words_for(in[i]->n_docs) * 8);
                inputs[i].live = &start[i];
            }
        }
    }
    snprintf(name, sizeof(name), "seg%08" PRIu64, s->seg_counter++);
    snprintf(s->merging_name, sizeof(s->merging_name), "%s", name);
    pthread_mutex_unlock(&s->wlock);
    atomic_fetch_add(&s->merges_current, 1);
    if (st == SC_OK) {
        sc_merge_options mo = {.memory_bytes = s->cfg.merge_memory_bytes};
        st = sc_segment_merge_opts(inputs, n, s->dir, name, &mo, NULL);
        if (mo.spilled_bytes)
            atomic_fetch_add(&s->merge_spilled_bytes, mo.spilled_bytes);
    }
    sc_alloc_release_free(); /* the merge's buffers, back to the system */
    sc_segment *nseg = NULL;
    if (st == SC_OK)
        st = sc_segment_open(s->dir, name, &nseg);
    /* the merged segment's `_id` filter, built before the lock: one pass over its terms (the
     * whole shard's ids after a force merge) must not stall the writes */
    sc__idfilter filter = {0};
    if (st == SC_OK)
        st = sc__idfilter_build(nseg, &filter);
    pthread_mutex_lock(&s->wlock);
    s->merging_name[0] = 0;
    sc__slot *ns = NULL;
    if (st == SC_OK) {
        ns = calloc(1, sizeof(*ns));
        if (ns) {
            ns->uid = s->next_uid++;
            snprintf(ns->name, sizeof(ns->name), "%s", name);
            ns->seg = nseg;
            ns->n_docs = sc_segment_n_docs(nseg);
            ns->filter = filter;
            ns->filter_state = 1;
            memset(&filter, 0, sizeof filter);
            nseg = NULL;
        } else {
            st = SC_ENOMEM;
        }
    }
    /* Live doc d of input i (at merge start) became doc base_i + (its rank among the live docs
     * of input i) of the new segment; deletes that arrived while the merge ran carry over. */
    uint32_t base = 0;
    for (size_t i = 0; i < n && st == SC_OK; i++) {
        sc__slot *sl = in[i];
        for (uint32_t d = 0; d < sl->n_docs; d++) {
            if (inputs[i].live && !sc_bitset_test(&start[i], d))
                continue;
            uint32_t nd = base++;
            if (nd >= ns->n_docs) {
                st = SC_ECORRUPT;
                break;
            }
            if (sl->pending.words && !sc_bitset_test(&sl->pending, d)) {
                /* deleted while the merge ran */
                if (!ns->pending.words) {
                    st = sc_bitset_init(&ns->pending, ns->n_docs);
                    if (st != SC_OK)
                        break;
                    sc_bitset_set_range(&ns->pending, 0, ns->n_docs);
                }
                sc_bitset_clear(&ns->pending, nd);
                ns->n_deleted++;
                ns->del_dirty = true;
            }
        }
    }
    if (st == SC_OK && base != ns->n_docs)
        st = SC_ECORRUPT;
    /* the id table names no segment doc (an id in a segment is found in its `_id` terms),
     * so nothing is remapped: the merged segment's ids are found there from now on, each at
     * its live doc (deletes carried over above) */
    if (st == SC_OK) {
        /* Replace the inputs by the new slot at the position of the first input. */
        size_t w = 0;
        bool placed = false;
        for (size_t r = 0; r < s->slots.len; r++) {
            sc__slot *sl = s->slots.ptr[r];
            bool is_input = false;
            for (size_t i = 0; i < n; i++)
                is_input |= sl == in[i];
            if (!is_input) {
                s->slots.ptr[w++] = sl;
            } else if (!placed) {
                s->slots.ptr[w++] = ns;
                placed = true;
            }
        }
        s->slots.len = w;
        ns->dirty = true;
        for (size_t i = 0; i < n; i++)
            sc__slot_free(in[i]);
        ns = NULL;
        st = sc__shard_publish(s);
        atomic_fetch_add(&s->n_merges, 1);
    } else {
        for (size_t i = 0; i < n; i++)
            in[i]->merging = 0;
    }
    pthread_mutex_unlock(&s->wlock);
    sc__idfilter_fini(&filter);
    sc__slot_free(ns);
    sc_segment_unref(nseg);
    for (size_t i = 0; i < n; i++) {
        sc_segment_unref(inputs[i].seg);
        sc_bitset_fini(&start[i]);
    }
    free(inputs);
    free(start);
    /* again, now that the inputs' slots (doc maps, deletes) are freed: trimming only before it
     * left ~5 MiB of a 100k-doc shard resident in the heap of an idle server */
    sc_alloc_release_free();
    atomic_fetch_sub(&s->merges_current, 1);
    atomic_fetch_add(&s->merge_time_ns, sc_clock_now_ns() - t0);
    return st;
}

/* Builds candidates from the slots (wlock held). */
static sc_status candidates(sc_shard *s, sc_merge_candidate **out)
{
    sc_merge_candidate *c = calloc(s->slots.len ? s->slots.len : 1, sizeof(*c));
    if (!c)
        return SC_ENOMEM;
    for (size_t i = 0; i < s->slots.len; i++) {
        const sc__slot *sl = s->slots.ptr[i];
        c[i].size_bytes = sc_segment_size_bytes(sl->seg);
        c[i].n_docs = sl->n_docs;
        c[i].n_deleted = sl->n_deleted;
        c[i].merging = sl->merging;
    }
    *out = c;
    return SC_OK;
}

/* Plans with `forced_max` (0 = the tiered policy) and runs the first merge of the plan.
 * *ran tells whether a merge ran. merge_lock held. */
static sc_status merge_once(sc_shard *s, uint32_t forced_max, bool *ran)
{
    *ran = false;
    sc_merge_candidate *c = NULL;
    sc_merge_spec spec;
    sc_merge_spec_init(&spec);
    pthread_mutex_lock(&s->wlock);
    sc_status st = candidates(s, &c);
    size_t n_slots = s->slots.len;
    if (st == SC_OK) {
        if (forced_max) {
            st = sc_merge_find_forced(c, n_slots, forced_max, &spec);
        } else {
            sc_tiered_merge_config cfg = sc_tiered_merge_defaults();
            sc_merge_policy p = sc_tiered_merge_policy(&cfg);
            st = p.find_merges(&p, c, n_slots, &spec);
        }
    }
    sc__slot **in = NULL;
    size_t n = 0;
    if (st == SC_OK && sc_merge_spec_n_merges(&spec) > 0) {
        size_t a = spec.starts.ptr[0], b = spec.starts.ptr[1];
        in = calloc(b - a ? b - a : 1, sizeof(*in));
        if (!in)
            st = SC_ENOMEM;
        for (size_t k = a; in && k < b; k++) {
            if (spec.idx.ptr[k] < n_slots)
                in[n++] = s->slots.ptr[spec.idx.ptr[k]];
        }
    } else if (st == SC_OK && forced_max == 1 && n_slots == 1 && s->slots.ptr[0]->n_deleted &&
               !s->slots.ptr[0]->merging) {
        /* one segment with deletes: rewrite it without them, as Lucene's forceMerge(1) does */
        in = calloc(1, sizeof(*in));
        if (!in)
            st = SC_ENOMEM;
        else
            in[n++] = s->slots.ptr[0];
    }
    pthread_mutex_unlock(&s->wlock);
    free(c);
    sc_merge_spec_fini(&spec);
    if (st == SC_OK && n > 0) {
        st = run_merge(s, in, n);
        *ran = st == SC_OK;
    }
    free(in);
    return st;
}

sc_status sc_shard_maybe_merge(sc_shard *s)
{
    pthread_mutex_lock(&s->merge_lock);
    sc_status st = SC_OK;
    for (int i = 0; i < 16 && st == SC_OK; i++) {
        bool ran;
        st = merge_once(s, 0, &ran);
        if (!ran)
            break;
    }
    pthread_mutex_unlock(&s->merge_lock);
    return st;
}

sc_status sc_shard_force_merge(sc_shard *s, uint32_t max_segments)
{
    if (max_segments == 0)
        max_segments = 1;
    SC_TRY(sc_shard_refresh(s));
    pthread_mutex_lock(&s->merge_lock);
    sc_status st = SC_OK;
    for (int i = 0; i < 1000 && st == SC_OK; i++) {
        bool ran;
        st = merge_once(s, max_segments, &ran);
        if (!ran)
            break;
    }
    pthread_mutex_unlock(&s->merge_lock);
    if (st == SC_OK)
        st = sc_shard_flush(s);
    return st;
}
