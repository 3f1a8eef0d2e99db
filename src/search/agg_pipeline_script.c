/* bucket_script and bucket_selector (search/agg.h), run at the final reduce over the buckets
 * of the aggregation they sit in: each bucket's buckets_path values bound to the compiled
 * script's variables (search/script.h; params constants bound once). bucket_script stores a
 * number per bucket (a missing value under gap_policy skip leaves the bucket without one, as
 * Elasticsearch; insert_zeros binds 0); bucket_selector keeps the buckets the script is true
 * for (missing values bound as NaN). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "search/agg_internal.h"

#define MAX_VARS 256

sc_status sc__agg_bucket_script(const sc_agg_spec *spec, uint32_t j, sc_agg_result *r, sc_arena *a,
                                sc_agg_error *err)
{
    const sc_agg_spec *p = spec->subs[j];
    if (!p->script)
        return SC_EINVAL;
    size_t nv = sc_script_n_vars(p->script);
    if (nv > MAX_VARS)
        return SC_EINVAL;
    sc_script_value vars[MAX_VARS];
    for (size_t v = 0; v < nv; v++)
        vars[v] = p->binds[v].value;
    bool selector = p->kind == SC_AGG_BUCKET_SELECTOR;
    size_t kept = 0;
    for (size_t i = 0; i < r->n_buckets; i++) {
        sc_agg_bucket *b = &r->buckets[i];
        if (j >= b->n_subs)
            return SC_ECORRUPT;
        bool skip = false;
        for (size_t v = 0; v < nv; v++) {
            const sc_agg_script_bind *bd = &p->binds[v];
            if (!bd->from_path)
                continue;
            double x = sc__agg_path_value(spec, b, &p->paths[bd->path]);
            if (isnan(x) && p->gap_insert_zeros)
                x = 0;
            skip |= isnan(x) && !selector;
            vars[v] = sc_script_double(x);
        }
        sc_agg_result *x = sc__agg_result_new(a, p, 0);
        if (!x)
            return sc__agg_oom(a);
        b->subs[j] = x;
        if (skip) {
            r->buckets[kept++] = *b;
            continue;
        }
        sc_script_value out;
        sc_script_error serr;
        if (sc_script_eval(p->script, vars, NULL, &out, &serr) != SC_OK) {
            snprintf(err->reason, sizeof err->reason, "runtime error in [%s] of [%s]: %s",
                     selector ? "bucket_selector" : "bucket_script", p->name, serr.reason);
            return SC_EINVAL;
        }
        double d;
        if (selector) {
            if (out.type != SC_SCRIPT_BOOL) {
                snprintf(err->reason, sizeof err->reason,
                         "bucket_selector [%s]: the script must return a boolean", p->name);
                return SC_EINVAL;
            }
            if (out.b)
                r->buckets[kept++] = *b;
            continue;
        }
        if (out.type != SC_SCRIPT_NULL) {
            if (!sc_script_number(&out, &d)) {
                snprintf(err->reason, sizeof err->reason, "bucket_script [%s] must return a number",
                         p->name);
                return SC_EINVAL;
            }
            x->sum = d;
            x->count = 1;
        }
        r->buckets[kept++] = *b;
    }
    r->n_buckets = kept;
    return SC_OK;
}
