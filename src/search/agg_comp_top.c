/* The bounded count table of a composite aggregation with one numeric source (agg_internal.h,
 * sc__agg_comp_top): the doc count of each key while it can still be among the `keep`
 * smallest. When the table holds more than max_n keys, the keep-th smallest becomes the bound
 * and every larger key leaves it for good (keep keys with docs are at or below the bound, so
 * no larger key can be among the smallest any more); a later key above the bound costs one
 * compare. */
#include <string.h>

#include "search/agg_internal.h"

/* keys in the table past which it is pruned: 4 x keep (so a prune is paid at most every
 * 3 x keep new keys), at least 64 */
static size_t max_keys(size_t keep)
{
    return keep * 4 < 64 ? 64 : keep * 4;
}

sc_status sc__agg_comp_top_init(sc__agg_comp_top *t, sc_arena *a, size_t keep)
{
    memset(t, 0, sizeof *t);
    t->keep = keep ? keep : 1;
    t->max_n = max_keys(t->keep);
    size_t cap = 64, bits = 6;
    while (cap < 2 * t->max_n)
        cap *= 2, bits++;
    t->cap = cap;
    t->shift = 64 - (unsigned)bits;
    t->keys = sc_arena_alloc(a, cap * sizeof *t->keys);
    t->counts = sc_arena_calloc(a, cap, sizeof *t->counts);
    t->scratch = sc_arena_alloc(a, (t->max_n + 1) * sizeof *t->scratch);
    if (!t->keys || !t->counts || !t->scratch)
        return sc__agg_oom(a);
    t->bound = INT64_MAX;
    return SC_OK;
}

/* The k-th smallest (0-based) of x[0, n), x reordered: quickselect with a three-way partition
 * (the middle part holds the pivot, so every round shrinks the range). */
static int64_t select_kth(int64_t *x, size_t n, size_t k)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        int64_t p = x[lo + (hi - lo) / 2], tmp;
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (x[i] < p) {
                tmp = x[lt], x[lt++] = x[i], x[i++] = tmp;
            } else if (x[i] > p) {
                tmp = x[--gt], x[gt] = x[i], x[i] = tmp;
            } else {
                i++;
            }
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return p;
    }
    return x[lo];
}

/* Every key of the table into x (its count left in place); the number of keys. */
static size_t table_keys(const sc__agg_comp_top *t, int64_t *x)
{
    size_t m = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->counts[i])
            x[m++] = t->keys[i];
    return m;
}

void sc__agg_comp_top_prune(sc__agg_comp_top *t)
{
    size_t m = table_keys(t, t->scratch);
    if (m <= t->keep)
        return;
    int64_t b = select_kth(t->scratch, m, t->keep - 1);
    t->bound = b < t->bound ? b : t->bound;
    /* the kept keys back in place: a key's slot depends on the keys inserted before it, so the
     * table is rebuilt from the kept (key, count) pairs */
    size_t k = 0;
    uint64_t *cnt = (uint64_t *)t->scratch; /* reused: pairs after the selection */
    int64_t *keys = t->scratch;
    for (size_t i = 0; i < t->cap; i++)
        if (t->counts[i] && t->keys[i] <= t->bound) {
            keys[2 * k] = t->keys[i];
            cnt[2 * k + 1] = t->counts[i];
            k++;
        }
    memset(t->counts, 0, t->cap * sizeof *t->counts);
    t->n = 0;
    for (size_t i = 0; i < k; i++)
        sc__agg_comp_top_add(t, keys[2 * i], cnt[2 * i + 1]);
}
