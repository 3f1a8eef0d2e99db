/* Merge policies (merge.h): a tiered policy in the spirit of Lucene's TieredMergePolicy
 * (segments sorted by live size; when there are more segments than the tiers allow, merge the
 * window of up to max_merge_at_once similar-sized segments with the best skew score; also
 * reclaim segments with too many deletes) and force-merge planning. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index/merge.h"

void sc_merge_spec_init(sc_merge_spec *s)
{
    memset(s, 0, sizeof(*s));
}

void sc_merge_spec_fini(sc_merge_spec *s)
{
    sc_vec_free(&s->idx);
    sc_vec_free(&s->starts);
}

static sc_status spec_add(sc_merge_spec *s, const size_t *idx, size_t n)
{
    if (s->starts.len == 0)
        SC_TRY(sc_vec_push(&s->starts, (size_t)0));
    SC_TRY(sc_vec_append(&s->idx, idx, n));
    return sc_vec_push(&s->starts, s->idx.len);
}

sc_tiered_merge_config sc_tiered_merge_defaults(void)
{
    sc_tiered_merge_config c = {
        .segs_per_tier = 10,
        .max_merge_at_once = 10,
        .max_segment_bytes = UINT64_C(5) << 30,
        .floor_segment_bytes = UINT64_C(2) << 20,
        .deletes_pct_allowed = 33.0,
    };
    return c;
}

typedef struct cand {
    size_t idx;
    double live_bytes;
    double del_pct;
} cand;

static int cmp_size_desc(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->live_bytes != y->live_bytes)
        return x->live_bytes < y->live_bytes ? 1 : -1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static double live_size(const sc_merge_candidate *c)
{
    if (c->n_docs == 0)
        return 0;
    return (double)c->size_bytes * (1.0 - (double)c->n_deleted / (double)c->n_docs);
}

static sc_status tiered_find(const sc_merge_policy *p, const sc_merge_candidate *segs, size_t n,
                             sc_merge_spec *out)
{
    const sc_tiered_merge_config *cfg = p->ctx;
    cand *c = malloc((n ? n : 1) * sizeof(*c));
    size_t *win = malloc((cfg->max_merge_at_once + 1) * sizeof(size_t));
    if (!c || !win) {
        free(c);
        free(win);
        return SC_ENOMEM;
    }
    size_t m = 0;
    double total = 0, min_size = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (segs[i].merging)
            continue;
        double ls = live_size(&segs[i]);
        double dp = segs[i].n_docs ? 100.0 * segs[i].n_deleted / segs[i].n_docs : 0;
        /* a large segment is left alone unless it carries too many deletes */
        if (ls > (double)cfg->max_segment_bytes / 2 && dp < cfg->deletes_pct_allowed)
            continue;
        c[m++] = (cand){i, ls, dp};
        total += ls;
        if (ls < min_size)
            min_size = ls;
    }
    qsort(c, m, sizeof(*c), cmp_size_desc);
    /* allowed segment count: segs_per_tier per level, levels growing by max_merge_at_once, and
     * never fewer than segs_per_tier. The levels share the index's real bytes (as Lucene's
     * TieredMergePolicy does): flooring each small segment's size here counted 11 tiny
     * segments as 11 floors, allowed 10 + 1, and left a shard of small refreshes at 11-12
     * segments for good. */
    double level =
        min_size < (double)cfg->floor_segment_bytes ? (double)cfg->floor_segment_bytes : min_size;
    double allowed = 0, left = total;
    while (m > 0 && left > 0) {
        double segs_here = left / level;
        if (segs_here < cfg->segs_per_tier) {
            allowed += ceil(segs_here);
            break;
        }
        allowed += cfg->segs_per_tier;
        left -= cfg->segs_per_tier * level;
        level *= cfg->max_merge_at_once;
    }
    if (allowed < cfg->segs_per_tier)
        allowed = cfg->segs_per_tier;
    sc_status st = SC_OK;
    size_t remaining = m;
    bool *used = calloc(m ? m : 1, sizeof(bool));
    if (!used)
        st = SC_ENOMEM;
    while (st == SC_OK && remaining > (size_t)allowed && remaining >= 2) {
        double best = INFINITY;
        size_t best_start = SIZE_MAX, best_len = 0;
        for (size_t s = 0; s < m; s++) {
            if (used[s])
                continue;
            size_t len = 0;
            double sum = 0, largest = 0;
            for (size_t j = s; j < m && len < cfg->max_merge_at_once; j++) {
                if (used[j])
                    continue;
                if (sum + c[j].live_bytes > (double)cfg->max_segment_bytes && len > 0)
                    continue;
                win[len++] = j;
                sum += c[j].live_bytes;
                if (c[j].live_bytes > largest)
                    largest = c[j].live_bytes;
            }
            if (len < 2)
                continue;
            double floor_sum =
                sum < (double)cfg->floor_segment_bytes ? (double)cfg->floor_segment_bytes : sum;
            double skew =
                (largest < (double)cfg->floor_segment_bytes ? (double)cfg->floor_segment_bytes
                                                            : largest) /
                floor_sum;
            double score = skew * pow(floor_sum, 0.05);
            if (score < best) {
                best = score;
                best_start = s;
                best_len = len;
            }
        }
        if (best_start == SIZE_MAX)
            break;
        /* rebuild the winning window and record it */
        size_t len = 0;
        double sum = 0;
        for (size_t j = best_start; j < m && len < best_len; j++) {
            if (used[j] || (sum + c[j].live_bytes > (double)cfg->max_segment_bytes && len > 0))
                continue;
            win[len++] = j;
            sum += c[j].live_bytes;
        }
        for (size_t k = 0; k < len; k++) {
            used[win[k]] = true;
            win[k] = c[win[k]].idx;
        }
        st = spec_add(out, win, len);
        remaining -= len;
    }
    /* singletons with too many deletes are rewritten alone */
    for (size_t s = 0; st == SC_OK && s < m; s++) {
        if (!used[s] && c[s].del_pct > cfg->deletes_pct_allowed) {
            size_t one = c[s].idx;
            st = spec_add(out, &one, 1);
        }
    }
    free(used);
    free(c);
    free(win);
    return st;
}

sc_merge_policy sc_tiered_merge_policy(const sc_tiered_merge_config *cfg)
{
    sc_merge_policy p = {.find_merges = tiered_find, .ctx = (void *)cfg};
    return p;
}

static int cmp_size_asc(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->live_bytes != y->live_bytes)
        return x->live_bytes < y->live_bytes ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

sc_status sc_merge_find_forced(const sc_merge_candidate *segs, size_t n, size_t max_segments,
                               sc_merge_spec *out)
{
    if (max_segments == 0)
        return SC_EINVAL;
    cand *c = malloc((n ? n : 1) * sizeof(*c));
    if (!c)
        return SC_ENOMEM;
    size_t m = 0;
    bool deletes = false;
    for (size_t i = 0; i < n; i++) {
        if (segs[i].merging)
            continue;
        c[m++] = (cand){i, (double)segs[i].size_bytes, 0};
        deletes |= segs[i].n_deleted > 0;
    }
    sc_status st = SC_OK;
    if (m > max_segments || (max_segments == 1 && m == 1 && deletes)) {
        qsort(c, m, sizeof(*c), cmp_size_asc);
        size_t k = m > max_segments ? m - max_segments + 1 : 1;
        size_t *idx = malloc(k * sizeof(size_t));
        if (!idx) {
            st = SC_ENOMEM;
        } else {
            for (size_t i = 0; i < k; i++)
                idx[i] = c[i].idx;
            st = spec_add(out, idx, k);
            free(idx);
        }
    }
    free(c);
    return st;
}
