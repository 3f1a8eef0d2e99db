/* moving_fn, serial_diff, percentiles_bucket and extended_stats_bucket (search/agg.h), at the
 * final reduce, as Elasticsearch computes them:
 *  - moving_fn: the values of the buckets that have one (missing ones skipped, or 0 under
 *    insert_zeros) in a list; bucket k of those gets the script over list[k - window + shift,
 *    k + shift) (clamped), bound to `values`; buckets without a value get nothing.
 *  - serial_diff: value(i) - value(i - lag) by bucket position, when both exist.
 *  - percentiles_bucket: the sorted values, percentile p at index round(p / 100 * (n - 1)).
 *  - extended_stats_bucket: count, sum, sum of squares, min and max of the values.
 * MovingFunctions are script functions (search/script.h) over the OBJECT `values`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/agg_internal.h"

/* ---- MovingFunctions ---- */

static sc_status values_arg(const sc_script_value *v, const char *fn, const double **out, size_t *n,
                            sc_script_error *err)
{
    if (v->type != SC_SCRIPT_OBJECT) {
        snprintf(err->reason, sizeof err->reason, "MovingFunctions.%s expects `values`", fn);
        return SC_EINVAL;
    }
    *out = v->obj;
    *n = v->obj_kind;
    return SC_OK;
}

static sc_status num_arg(const sc_script_value *v, const char *fn, double *out,
                         sc_script_error *err)
{
    if (sc_script_number(v, out))
        return SC_OK;
    snprintf(err->reason, sizeof err->reason, "MovingFunctions.%s expects a number", fn);
    return SC_EINVAL;
}

typedef enum mf_kind {
    MF_MAX,
    MF_MIN,
    MF_SUM,
    MF_AVG,
    MF_LINEAR
} mf_kind;

static double mf_simple(const double *v, size_t n, mf_kind k)
{
    double acc = k == MF_MAX ? -INFINITY : k == MF_MIN ? INFINITY : 0;
    size_t cnt = 0;
    double weight = 1, total_weight = 1;
    for (size_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            continue;
        cnt++;
        switch (k) {
        case MF_MAX: acc = v[i] > acc ? v[i] : acc; break;
        case MF_MIN: acc = v[i] < acc ? v[i] : acc; break;
        case MF_LINEAR:
            acc += v[i] * weight;
            total_weight += weight;
            weight += 1;
            break;
        default: acc += v[i]; break;
        }
    }
    switch (k) {
    case MF_SUM: return acc; /* 0 for an empty window */
    case MF_AVG: return cnt ? acc / (double)cnt : NAN;
    case MF_LINEAR: return total_weight == 1 ? NAN : acc / (total_weight - 1);
    default: return cnt ? acc : NAN;
    }
}

#define MF_SIMPLE(cname, jname, kind)                                                              \
    static sc_status cname(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out, \
                           sc_script_error *err)                                                   \
    {                                                                                              \
        (void)ctx, (void)n;                                                                        \
        const double *v;                                                                           \
        size_t len;                                                                                \
        SC_TRY(values_arg(&args[0], jname, &v, &len, err));                                        \
        *out = sc_script_double(mf_simple(v, len, kind));                                          \
        return SC_OK;                                                                              \
    }

MF_SIMPLE(mf_max, "max", MF_MAX)
MF_SIMPLE(mf_min, "min", MF_MIN)
MF_SIMPLE(mf_sum, "sum", MF_SUM)
MF_SIMPLE(mf_avg, "unweightedAvg", MF_AVG)
MF_SIMPLE(mf_linear, "linearWeightedAvg", MF_LINEAR)

static sc_status mf_ewma(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                         sc_script_error *err)
{
    (void)ctx, (void)n;
    const double *v;
    size_t len;
    double alpha, avg = NAN;
    SC_TRY(values_arg(&args[0], "ewma", &v, &len, err));
    SC_TRY(num_arg(&args[1], "ewma", &alpha, err));
    bool first = true;
    for (size_t i = 0; i < len; i++) {
        if (isnan(v[i]))
            continue;
        avg = first ? v[i] : v[i] * alpha + avg * (1 - alpha);
        first = false;
    }
    *out = sc_script_double(avg);
    return SC_OK;
}

static sc_status mf_holt(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                         sc_script_error *err)
{
    (void)ctx, (void)n;
    const double *v;
    size_t len;
    double alpha, beta;
    SC_TRY(values_arg(&args[0], "holt", &v, &len, err));
    SC_TRY(num_arg(&args[1], "holt", &alpha, err));
    SC_TRY(num_arg(&args[2], "holt", &beta, err));
    double s = 0, last_s = 0, b = 0, last_b = 0;
    size_t cnt = 0;
    for (size_t i = 0; i < len; i++) {
        if (isnan(v[i]))
            continue;
        if (cnt == 0) {
            s = v[i];
            b = 0;
        } else {
            s = alpha * v[i] + (1.0 - alpha) * (last_s + last_b);
            b = beta * (s - last_s) + (1 - beta) * last_b;
        }
        cnt++;
        last_s = s;
        last_b = b;
    }
    *out = sc_script_double(cnt ? s : NAN);
    return SC_OK;
}

static sc_status mf_std(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                        sc_script_error *err)
{
    (void)ctx, (void)n;
    const double *v;
    size_t len;
    double avg;
    SC_TRY(values_arg(&args[0], "stdDev", &v, &len, err));
    SC_TRY(num_arg(&args[1], "stdDev", &avg, err));
    double var = 0;
    size_t cnt = 0;
    for (size_t i = 0; i < len; i++)
        if (!isnan(v[i])) {
            var += (v[i] - avg) * (v[i] - avg);
            cnt++;
        }
    *out = sc_script_double(cnt == 0 || isnan(avg) ? NAN : sqrt(var / (double)cnt));
    return SC_OK;
}

sc_status sc_agg_moving_functions_add(sc_script_env *env)
{
    static const struct {
        const char *name;
        uint32_t min, max;
        sc_script_fn fn;
    } fns[] = {
        {"MovingFunctions.max", 1, 1, mf_max},
        {"MovingFunctions.min", 1, 1, mf_min},
        {"MovingFunctions.sum", 1, 1, mf_sum},
        {"MovingFunctions.unweightedAvg", 1, 1, mf_avg},
        {"MovingFunctions.linearWeightedAvg", 1, 1, mf_linear},
        {"MovingFunctions.ewma", 2, 2, mf_ewma},
        {"MovingFunctions.holt", 3, 3, mf_holt},
        {"MovingFunctions.stdDev", 2, 2, mf_std},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        sc_status st = sc_script_env_add(env, fns[i].name, fns[i].min, fns[i].max, fns[i].fn);
        if (st != SC_OK)
            return st == SC_EINVAL ? SC_ENOMEM : st;
    }
    return SC_OK;
}

/* ---- parent pipelines ---- */

static double bucket_value(const sc_agg_spec *spec, const sc_agg_spec *p, const sc_agg_bucket *b)
{
    double v = sc__agg_path_value(spec, b, &p->value);
    return isnan(v) && p->gap_insert_zeros ? 0 : v;
}

static sc_status serial_diff(const sc_agg_spec *spec, uint32_t j, sc_agg_result *r, sc_arena *a)
{
    const sc_agg_spec *p = spec->subs[j];
    uint32_t lag = p->window ? p->window : 1;
    for (size_t i = 0; i < r->n_buckets; i++) {
        sc_agg_result *x = sc__agg_result_new(a, p, 0);
        if (!x)
            return sc__agg_oom(a);
        double v = bucket_value(spec, p, &r->buckets[i]);
        double prev = i >= lag ? bucket_value(spec, p, &r->buckets[i - lag]) : NAN;
        if (!isnan(v) && !isnan(prev)) {
            x->sum = v - prev;
            x->count = 1;
        }
        r->buckets[i].subs[j] = x;
    }
    return SC_OK;
}

static size_t clamp(int64_t i, size_t n)
{
    return i < 0 ? 0 : (size_t)i > n ? n : (size_t)i;
}

sc_status sc__agg_moving(const sc_agg_spec *spec, uint32_t j, sc_agg_result *r, sc_arena *a,
                         sc_agg_error *err)
{
    const sc_agg_spec *p = spec->subs[j];
    for (size_t i = 0; i < r->n_buckets; i++)
        if (j >= r->buckets[i].n_subs)
            return SC_ECORRUPT;
    if (p->kind == SC_AGG_SERIAL_DIFF)
        return serial_diff(spec, j, r, a);
    if (!p->script)
        return SC_EINVAL;
    double *values = sc_arena_alloc(a, (r->n_buckets ? r->n_buckets : 1) * sizeof *values);
    if (!values)
        return sc__agg_oom(a);
    size_t nv = 0;
    for (size_t i = 0; i < r->n_buckets; i++) {
        double v = bucket_value(spec, p, &r->buckets[i]);
        if (!isnan(v))
            values[nv++] = v;
    }
    size_t n_vars = sc_script_n_vars(p->script);
    sc_script_value vars[256];
    if (n_vars > 256)
        return SC_EINVAL;
    for (size_t v = 0; v < n_vars; v++)
        vars[v] = p->binds[v].value;
    int64_t k = 0;
    for (size_t i = 0; i < r->n_buckets; i++) {
        sc_agg_result *x = sc__agg_result_new(a, p, 0);
        if (!x)
            return sc__agg_oom(a);
        r->buckets[i].subs[j] = x;
        if (isnan(bucket_value(spec, p, &r->buckets[i])))
            continue;
        size_t from = clamp(k - (int64_t)p->window + p->shift, nv);
        size_t to = clamp(k + p->shift, nv);
        if (to < from)
            to = from;
        for (size_t v = 0; v < n_vars; v++)
            if (p->binds[v].window)
                vars[v] = (sc_script_value){.type = SC_SCRIPT_OBJECT,
                                            .obj = values + from,
                                            .obj_kind = (uint32_t)(to - from)};
        sc_script_value out;
        sc_script_error serr;
        if (sc_script_eval(p->script, vars, NULL, &out, &serr) != SC_OK) {
            snprintf(err->reason, sizeof err->reason, "runtime error in [moving_fn] of [%s]: %s",
                     p->name, serr.reason);
            return SC_EINVAL;
        }
        double d;
        if (!sc_script_number(&out, &d)) {
            snprintf(err->reason, sizeof err->reason, "moving_fn [%s] must return a number",
                     p->name);
            return SC_EINVAL;
        }
        x->sum = d;
        x->count = 1;
        k++;
    }
    return SC_OK;
}

/* ---- sibling pipelines ---- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

sc_status sc__agg_sibling_more(const sc_agg_spec *pipe, const sc_agg_result *target, sc_arena *a,
                               sc_agg_result **out)
{
    sc_agg_result *r = sc__agg_result_new(a, pipe, 0);
    if (!r)
        return sc__agg_oom(a);
    size_t n = target ? target->n_buckets : 0;
    double *vals = sc_arena_alloc(a, (n ? n : 1) * sizeof *vals);
    if (!vals)
        return sc__agg_oom(a);
    size_t nv = 0;
    for (size_t i = 0; i < n; i++) {
        double v = sc__agg_path_value(pipe->target, &target->buckets[i], &pipe->value);
        if (isnan(v) && pipe->gap_insert_zeros)
            v = 0;
        if (isnan(v))
            continue;
        vals[nv++] = v;
        r->count++;
        r->sum += v;
        r->sum_sq += v * v;
        r->min = v < r->min ? v : r->min;
        r->max = v > r->max ? v : r->max;
    }
    if (pipe->kind == SC_AGG_PERCENTILES_BUCKET) {
        qsort(vals, nv, sizeof *vals, cmp_double);
        r->buckets = sc_arena_calloc(a, pipe->n_points ? pipe->n_points : 1, sizeof *r->buckets);
        if (!r->buckets)
            return sc__agg_oom(a);
        r->n_buckets = pipe->n_points;
        for (size_t i = 0; i < pipe->n_points; i++) {
            double idx = round(pipe->points[i] / 100.0 * (double)(nv ? nv - 1 : 0));
            size_t at = idx < 0 ? 0 : (size_t)idx >= nv ? (nv ? nv - 1 : 0) : (size_t)idx;
            r->buckets[i].key = (int64_t)i;
            r->buckets[i].dkey = nv ? vals[at] : NAN;
        }
    }
    *out = r;
    return SC_OK;
}
