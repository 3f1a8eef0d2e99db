/* Query DSL: rank_feature (dsl_internal.h). Scores the docs having a rank feature (a
 * rank_feature field, or feature `k` of a rank_features field `f` named "f.k") by one of
 * Lucene's FeatureField functions: saturation (pivot, by default the shard's approximate
 * geometric mean, computed when the shard plans), log (scaling_factor), sigmoid (pivot,
 * exponent) or linear. Built as a function_score over an exists query (constant score: the
 * boost) whose score is the function's weight (boost_mode replace), so the boost enters the
 * function's arithmetic where Lucene's FeatureQuery puts it. */
#include <math.h>
#include <string.h>

#include "api/dsl_internal.h"

static sc_status param(P *p, const char *fn, const json_t *b, const char *key, bool need,
                       float *out)
{
    const json_t *v = json_object_get(b, key);
    if (!v) {
        if (need)
            return sc__dsl_fail(p, "parsing_exception", "[%s] requires [%s]", fn, key);
        return SC_OK;
    }
    if (!sc__dsl_get_float(v, out) || !isfinite(*out))
        return sc__dsl_fail(p, "parsing_exception", "[%s] [%s] must be a number", fn, key);
    return SC_OK;
}

/* The function object of body into f (saturation without a pivot when none is given). */
static sc_status rank_function(P *p, const json_t *body, sc_score_function *f)
{
    static const char *const names[] = {"saturation", "log", "sigmoid", "linear"};
    const json_t *spec = NULL;
    for (size_t i = 0; i < 4; i++) {
        const json_t *v = json_object_get(body, names[i]);
        if (!v)
            continue;
        if (spec)
            return sc__dsl_fail(p, "parsing_exception",
                                "[rank_feature] takes at most one function of [saturation], "
                                "[log], [sigmoid], [linear]");
        if (!json_is_object(v))
            return sc__dsl_fail(p, "parsing_exception", "[%s] must be an object", names[i]);
        spec = v;
        f->rank = (sc_sf_rank)i;
    }
    if (!spec)
        return SC_OK;
    static const char *const sat_keys[] = {"pivot", NULL},
                             *const log_keys[] = {"scaling_factor", NULL},
                             *const sig_keys[] = {"pivot", "exponent", NULL},
                             *const lin_keys[] = {NULL};
    switch (f->rank) {
    case SC_SF_RANK_SATURATION:
        SC_TRY(sc__dsl_check_keys(p, "saturation", spec, sat_keys));
        SC_TRY(param(p, "saturation", spec, "pivot", false, &f->rank_pivot));
        if (json_object_get(spec, "pivot") && !(f->rank_pivot > 0))
            return sc__dsl_fail(p, "illegal_argument_exception", "pivot must be > 0, got: %g",
                                (double)f->rank_pivot);
        return SC_OK;
    case SC_SF_RANK_LOG:
        SC_TRY(sc__dsl_check_keys(p, "log", spec, log_keys));
        SC_TRY(param(p, "log", spec, "scaling_factor", true, &f->rank_scaling));
        if (!(f->rank_scaling >= 1))
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "scalingFactor must be >= 1, got: %g", (double)f->rank_scaling);
        return SC_OK;
    case SC_SF_RANK_SIGMOID:
        SC_TRY(sc__dsl_check_keys(p, "sigmoid", spec, sig_keys));
        SC_TRY(param(p, "sigmoid", spec, "pivot", true, &f->rank_pivot));
        SC_TRY(param(p, "sigmoid", spec, "exponent", true, &f->rank_exponent));
        if (!(f->rank_pivot > 0) || !(f->rank_exponent > 0))
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "[sigmoid] needs pivot > 0 and exponent > 0, got: %g and %g",
                                (double)f->rank_pivot, (double)f->rank_exponent);
        return SC_OK;
    default: return sc__dsl_check_keys(p, "linear", spec, lin_keys);
    }
}

sc_status sc__dsl_q_rank_feature(P *p, const json_t *body, sc_query **out)
{
    static const char *const keys[] = {"field", "boost",   "_name",  "saturation",
                                       "log",   "sigmoid", "linear", NULL};
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[rank_feature] malformed query");
    SC_TRY(sc__dsl_check_keys(p, "rank_feature", body, keys));
    const json_t *fld = json_object_get(body, "field");
    if (!json_is_string(fld))
        return sc__dsl_fail(p, "parsing_exception", "[rank_feature] requires a [field]");
    sc_score_function f;
    memset(&f, 0, sizeof f);
    f.kind = SC_SF_RANK_FEATURE;
    f.weight = 1;
    f.rank = SC_SF_RANK_SATURATION;
    SC_TRY(rank_function(p, body, &f));
    f.field = sc__dsl_jstr(fld);
    int date;
    sc_status st = p->env && p->env->score_field
                       ? p->env->score_field(p->env->ctx, f.field, &f.value, &f.scaling, &date)
                       : SC_ENOTFOUND;
    if (st == SC_ENOTFOUND) { /* unmapped: matches nothing, as Elasticsearch */
        *out = NEW(p, sc_query_match_none(p->a));
        return SC_OK;
    }
    if (st != SC_OK || (f.value != SC_SF_VALUE_FEATURE && f.value != SC_SF_VALUE_FEATURE_NEG))
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "[rank_feature] query only works on [rank_feature] fields and "
                            "features of [rank_features] fields, not [%s]",
                            json_string_value(fld));
    if (f.rank == SC_SF_RANK_LOG && f.value == SC_SF_VALUE_FEATURE_NEG)
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "Cannot use the [log] function with a field that has a negative "
                            "score impact as it would trigger negative scores");
    sc_query *inner = NEW(p, sc_query_exists(p->a, f.field));
    sc_query *q = NEW(p, sc_query_function_score(p->a, inner));
    if (sc_query_function_score_add(p->a, q, &f) != SC_OK)
        return sc__dsl_oom(p);
    q->u.function_score.score_mode = SC_SF_SCORE_FIRST;
    q->u.function_score.boost_mode = SC_SF_BOOST_REPLACE;
    *out = q;
    return sc__dsl_apply_boost(p, "rank_feature", body, q);
}
