/* The arithmetic of function_score (function_score.h), in Elasticsearch's double steps. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "search/function_score.h"

double sc_sf_value_of(const sc_score_function *f, int64_t raw)
{
    switch (f->value) {
    case SC_SF_VALUE_DOUBLE: {
        uint64_t bits = (uint64_t)raw;
        if (raw < 0)
            bits ^= 0x7FFFFFFFFFFFFFFFull; /* the sortable-long encoding is its own inverse */
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    case SC_SF_VALUE_SCALED: return (double)raw / f->scaling;
    default: return (double)raw;
    }
}

static double modify(sc_sf_modifier m, double v)
{
    switch (m) {
    case SC_SF_MOD_LOG: return log10(v);
    case SC_SF_MOD_LOG1P: return log10(v + 1);
    case SC_SF_MOD_LOG2P: return log10(v + 2);
    case SC_SF_MOD_LN: return log(v);
    case SC_SF_MOD_LN1P: return log1p(v);
    case SC_SF_MOD_LN2P: return log1p(1 + v);
    case SC_SF_MOD_SQUARE: return pow(v, 2);
    case SC_SF_MOD_SQRT: return sqrt(v);
    case SC_SF_MOD_RECIPROCAL: return 1.0 / v;
    default: return v;
    }
}

/* Elasticsearch's decay curves: the scale is first turned into the curve's parameter. */
static double decay(const sc_score_function *f, double dist)
{
    switch (f->decay) {
    case SC_SF_GAUSS: {
        double s = 0.5 * pow(f->scale, 2.0) / log(f->decay_value);
        return exp(0.5 * pow(dist, 2.0) / s);
    }
    case SC_SF_EXP: return exp(log(f->decay_value) / f->scale * dist);
    default: {
        double s = f->scale / (1.0 - f->decay_value);
        return fmax(0.0, (s - dist) / s);
    }
    }
}

static double distance(const sc_score_function *f, const int64_t *vals, size_t n)
{
    double acc = f->multi == SC_SF_MULTI_MIN   ? INFINITY
                 : f->multi == SC_SF_MULTI_MAX ? -INFINITY
                                               : 0;
    for (size_t i = 0; i < n; i++) {
        double d = fmax(0.0, fabs(sc_sf_value_of(f, vals[i]) - f->origin) - f->offset);
        if (f->multi == SC_SF_MULTI_MIN)
            acc = fmin(acc, d);
        else if (f->multi == SC_SF_MULTI_MAX)
            acc = fmax(acc, d);
        else
            acc += d;
    }
    return f->multi == SC_SF_MULTI_AVG ? acc / (double)n : acc;
}

/* A well-mixed 64-bit hash (splitmix64's finalizer). */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

float sc_sf_rank_decode(int64_t freq)
{
    if (freq < 0 || freq > 0xFFFF) /* never stored: values are finite positive floats */
        return FLT_MAX;
    uint32_t bits = (uint32_t)freq << 15;
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

float sc_sf_rank_default_pivot(uint64_t sum_freq, uint64_t n_docs)
{
    if (n_docs == 0)
        return 1;
    float avg = (float)((double)sum_freq / (double)n_docs);
    return sc_sf_rank_decode((int64_t)avg);
}

float sc_sf_rank_eval(const sc_score_function *f, int64_t freq, float w)
{
    float v = sc_sf_rank_decode(freq);
    switch (f->rank) {
    case SC_SF_RANK_SATURATION: {
        /* 1 - k / (f + k) rather than f / (f + k): never decreasing with f despite rounding */
        float frac = f->rank_pivot / (v + f->rank_pivot);
        return w * (1.0f - frac);
    }
    case SC_SF_RANK_LOG: return (float)((double)w * log((double)(f->rank_scaling + v)));
    case SC_SF_RANK_SIGMOID: {
        double pa = pow((double)f->rank_pivot, (double)f->rank_exponent);
        return (float)((double)w * (1.0 - pa / (pow((double)v, (double)f->rank_exponent) + pa)));
    }
    default: return w * v;
    }
}

double sc_sf_eval(const sc_score_function *f, const int64_t *vals, size_t n)
{
    double r = 1;
    switch (f->kind) {
    case SC_SF_WEIGHT:
    case SC_SF_SCRIPT: break; /* run by the iterator (search/score_script.h) */
    case SC_SF_FIELD_VALUE: {
        double v = n ? sc_sf_value_of(f, vals[0]) : f->has_missing ? f->missing : NAN;
        r = isnan(v) ? 1 : modify(f->modifier, v * f->factor);
        break;
    }
    case SC_SF_DECAY: r = n ? decay(f, distance(f, vals, n)) : 1; break;
    case SC_SF_RANK_FEATURE: return n ? (double)sc_sf_rank_eval(f, vals[0], (float)f->weight) : 0;
    case SC_SF_RANDOM: {
        /* 24 random bits in [0, 1), as Elasticsearch keeps; a function of seed and value */
        uint64_t h = mix(f->seed ^ mix(n ? (uint64_t)vals[0] : 0));
        r = (double)(h & 0xFFFFFF) / (double)(1 << 24);
        break;
    }
    }
    return r * f->weight;
}

double sc_sf_combine(sc_sf_score_mode mode, const double *results, const double *weights, size_t n)
{
    if (n == 0)
        return 1;
    double acc = mode == SC_SF_SCORE_MULTIPLY ? 1
                 : mode == SC_SF_SCORE_MAX    ? -INFINITY
                 : mode == SC_SF_SCORE_MIN    ? INFINITY
                                              : 0;
    double wsum = 0;
    for (size_t i = 0; i < n; i++) {
        switch (mode) {
        case SC_SF_SCORE_FIRST: return results[0];
        case SC_SF_SCORE_MULTIPLY: acc *= results[i]; break;
        case SC_SF_SCORE_MAX: acc = fmax(acc, results[i]); break;
        case SC_SF_SCORE_MIN: acc = fmin(acc, results[i]); break;
        default: acc += results[i]; wsum += weights[i];
        }
    }
    if (mode == SC_SF_SCORE_SUM || mode == SC_SF_SCORE_AVG) {
        if (wsum == 0)
            return 1;
        return mode == SC_SF_SCORE_AVG ? acc / wsum : acc;
    }
    return acc;
}

float sc_sf_boost(sc_sf_boost_mode mode, float query_score, double factor, float max_boost)
{
    double f = fmin(factor, (double)max_boost), q = query_score;
    switch (mode) {
    case SC_SF_BOOST_REPLACE: return (float)f;
    case SC_SF_BOOST_SUM: return (float)(q + f);
    case SC_SF_BOOST_AVG: return (float)((q + f) / 2.0);
    case SC_SF_BOOST_MAX: return (float)fmax(q, f);
    case SC_SF_BOOST_MIN: return (float)fmin(q, f);
    default: return (float)(q * f);
    }
}
