/* script_score: a compiled script (search/script.h) run per matching doc as a function_score
 * function or the script_score query, with `_score` (the inner query's score), `params.*`
 * (bound once when the query is parsed), `doc['f'].value / .size() / .empty` of numeric and
 * date fields (numeric doc values, read per doc) and the vector functions of Elasticsearch's
 * score scripts: cosineSimilarity, dotProduct, l1norm, l2norm and hamming(query, 'field'),
 * computed with the vector kernels (index/vec_kernels.h) on the doc's raw floats
 * (index/vecfield.h), never the int8 codes. */
#ifndef SC_SEARCH_SCORE_SCRIPT_H
#define SC_SEARCH_SCORE_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/status.h"
#include "index/segment.h"
#include "search/function_score.h"
#include "search/script.h"

/* obj_kind of a query vector bound as a parameter (an sc_score_script_vec). */
#define SC_SCORE_SCRIPT_VEC 0x76656331u

typedef struct sc_score_script_vec {
    const float *v;
    uint32_t dims;
} sc_score_script_vec;

/* The environment score scripts compile against: the builtins plus the vector functions.
 * Built once, immutable afterwards; NULL only when memory ran out building it. */
const sc_script_env *sc_score_script_env(void);

/* A compiled score script with its variables resolved (allocated in the query's arena). */
typedef struct sc_score_script {
    const sc_script *script;
    sc_script_value *vals; /* per variable: PARAM values bound at parse time */
    sc_slice *fields;      /* per variable: the field of a doc access (empty for params) */
    sc_sf_value *dv_value; /* per variable: how the doc values read (doc accesses) */
    double *dv_scaling;
    int64_t score_var; /* the variable `_score` (not a parameter), -1 when unused */
} sc_score_script;

/* One segment's evaluation state (not shared between threads). */
typedef struct sc_score_script_seg sc_score_script_seg;

/* The state for running ss over seg's docs, in a. SC_ENOMEM (arena). */
sc_status sc_score_script_seg_open(sc_arena *a, const sc_score_script *ss, const sc_segment *seg,
                                   sc_score_script_seg **out) SC_MUST_USE;

/* The script's value for doc (ascending or not) with the inner query's score: a number that is
 * not negative (nor NaN). SC_EINVAL with err->reason on a run-time error, a non-numeric
 * result or a negative score (Elasticsearch's rule). No allocation. */
sc_status sc_score_script_run(sc_score_script_seg *st, uint32_t doc, float score, double *out,
                              sc_script_error *err) SC_MUST_USE;

#endif
