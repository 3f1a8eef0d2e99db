/* function_score: the score functions of Elasticsearch's function_score query (weight,
 * field_value_factor, gauss / exp / linear decay, random_score) and how their results combine
 * (score_mode over the functions, boost_mode with the query's score, max_boost), written as
 * Elasticsearch's FunctionScoreQuery, FieldValueFactorFunction, DecayFunctionBuilder and
 * CombineFunction compute them. The query node (search/query.h) holds these specs; the
 * iterator (iter_function_score.c) reads the fields' doc values per doc and calls in here. */
#ifndef SC_SEARCH_FUNCTION_SCORE_H
#define SC_SEARCH_FUNCTION_SCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"

typedef enum sc_sf_kind {
    SC_SF_WEIGHT,      /* the weight alone */
    SC_SF_FIELD_VALUE, /* field_value_factor */
    SC_SF_DECAY,       /* gauss / exp / linear */
    SC_SF_RANDOM,      /* random_score */
    SC_SF_SCRIPT,      /* script_score (search/score_script.h) */
    SC_SF_RANK_FEATURE, /* the rank_feature query's function of a rank feature column */
} sc_sf_kind;

/* The functions of the rank_feature query, as Lucene's FeatureField computes them from the
 * decoded feature value f: saturation w * (1 - pivot / (f + pivot)) (float steps), log
 * w * ln(scaling_factor + f), sigmoid w * (1 - pivot^a / (f^a + pivot^a)), linear w * f. */
typedef enum sc_sf_rank {
    SC_SF_RANK_SATURATION,
    SC_SF_RANK_LOG,
    SC_SF_RANK_SIGMOID,
    SC_SF_RANK_LINEAR,
} sc_sf_rank;

typedef enum sc_sf_modifier {
    SC_SF_MOD_NONE,
    SC_SF_MOD_LOG,
    SC_SF_MOD_LOG1P,
    SC_SF_MOD_LOG2P,
    SC_SF_MOD_LN,
    SC_SF_MOD_LN1P,
    SC_SF_MOD_LN2P,
    SC_SF_MOD_SQUARE,
    SC_SF_MOD_SQRT,
    SC_SF_MOD_RECIPROCAL,
} sc_sf_modifier;

typedef enum sc_sf_decay {
    SC_SF_GAUSS,
    SC_SF_EXP,
    SC_SF_LINEAR
} sc_sf_decay;

/* How a numeric doc value reads as a number. */
typedef enum sc_sf_value {
    SC_SF_VALUE_LONG,   /* integers, dates (epoch ms / ns), booleans */
    SC_SF_VALUE_DOUBLE, /* double / float / half_float in the sortable-long encoding */
    SC_SF_VALUE_SCALED, /* scaled_float: value / scaling */
    SC_SF_VALUE_FEATURE,     /* rank feature frequency (mapping.h); only the rank_feature query */
    SC_SF_VALUE_FEATURE_NEG, /* the same, of a field with positive_score_impact false */
} sc_sf_value;

/* multi_value_mode of decay functions: which of a doc's values' distances counts. */
typedef enum sc_sf_multi {
    SC_SF_MULTI_MIN,
    SC_SF_MULTI_MAX,
    SC_SF_MULTI_AVG,
    SC_SF_MULTI_SUM
} sc_sf_multi;

typedef enum sc_sf_score_mode {
    SC_SF_SCORE_MULTIPLY,
    SC_SF_SCORE_SUM,
    SC_SF_SCORE_AVG,
    SC_SF_SCORE_FIRST,
    SC_SF_SCORE_MAX,
    SC_SF_SCORE_MIN,
} sc_sf_score_mode;

typedef enum sc_sf_boost_mode {
    SC_SF_BOOST_MULTIPLY,
    SC_SF_BOOST_REPLACE,
    SC_SF_BOOST_SUM,
    SC_SF_BOOST_AVG,
    SC_SF_BOOST_MAX,
    SC_SF_BOOST_MIN,
} sc_sf_boost_mode;

struct sc_query;
struct sc_score_script;

/* One function of a function_score query. */
typedef struct sc_score_function {
    sc_sf_kind kind;
    const struct sc_query *filter; /* docs it applies to; NULL = all */
    double weight;                 /* 1 unless given */
    sc_slice field;                /* FIELD_VALUE, DECAY, RANDOM (empty: by doc) */
    sc_sf_value value;
    double scaling; /* SC_SF_VALUE_SCALED */
    /* field_value_factor */
    double factor;
    sc_sf_modifier modifier;
    bool has_missing;
    double missing;
    /* decay: distances in the field's units (dates: ms, or ns for date_nanos) */
    sc_sf_decay decay;
    double origin, scale, offset, decay_value;
    sc_sf_multi multi;
    /* random_score */
    uint64_t seed;
    /* script_score (the iterator runs it; sc_sf_eval does not) */
    const struct sc_score_script *script;
    /* rank_feature: the function, pivot (saturation: 0 until the plan computes the shard's
     * default, sc_sf_rank_default_pivot), exponent (sigmoid), scaling_factor (log) */
    sc_sf_rank rank;
    float rank_pivot, rank_exponent, rank_scaling;
} sc_score_function;

/* A stored rank feature frequency (mapping.h) as the feature value, as Lucene decodes it. */
float sc_sf_rank_decode(int64_t freq);

/* Lucene's default saturation pivot of a feature from its statistics over a shard: the sum of
 * the docs' stored frequencies over the number of docs having the feature, truncated, decoded
 * (an approximation of the values' geometric mean). 1 when no doc has it. */
float sc_sf_rank_default_pivot(uint64_t sum_freq, uint64_t n_docs);

/* The rank_feature function's value of a doc's stored frequency with Lucene's weight w (the
 * query's boost), as a float in Lucene's steps. */
float sc_sf_rank_eval(const sc_score_function *f, int64_t freq, float w);

/* A doc value as a number. */
double sc_sf_value_of(const sc_score_function *f, int64_t raw);

/* The function's result for a doc whose field values are vals[0..n) (n == 0: missing; for
 * RANDOM without a field, vals[0] is the doc id and n == 1), the weight applied. Missing values
 * give field_value_factor its `missing` (1 without it: Elasticsearch fails the shard instead)
 * and decay functions 1, as Elasticsearch does. NaN or infinite results come back as such. */
double sc_sf_eval(const sc_score_function *f, const int64_t *vals, size_t n);

/* Folds the results of the functions that match a doc into one factor as score_mode says:
 * results[i] with weights[i] for the n matching functions, in order (1 when none). */
double sc_sf_combine(sc_sf_score_mode mode, const double *results, const double *weights, size_t n);

/* The final score: the query's score and the functions' factor (capped at max_boost) joined
 * as boost_mode says, as a float. */
float sc_sf_boost(sc_sf_boost_mode mode, float query_score, double factor, float max_boost);

#endif
