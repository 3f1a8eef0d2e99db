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
} sc_sf_kind;

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
} sc_score_function;

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
