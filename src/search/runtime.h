/* Runtime fields (a search body's `runtime_mappings`): a field of type long, double, date,
 * boolean or keyword whose values a script computes per doc from other fields' doc values by
 * calling `emit(value)` (search/script.h's language plus `emit`). Per segment, the script runs
 * once over every doc and its values become an in-memory doc values column
 * (index/docvalues.h's sc_dv_numeric_wrap / sc_dv_sorted_set_build), so every reader of doc
 * values (aggregations here) uses it as a stored field; numeric values take the encoding of
 * the mapped type (doubles as sortable longs, dates as epoch milliseconds, booleans as 0/1).
 * A double field of arithmetic over single-valued doc values can instead be evaluated for just
 * the docs a collector gets (sc_runtime_doubles: what the metric aggregations use).
 *
 * The API layer compiles the script against sc_runtime_env() and resolves how each doc access
 * reads (sc_runtime_var); this module evaluates. Thread-safety: a compiled field is read-only;
 * sc_runtime_column may run on many threads at once, each with its own arena. */
#ifndef SC_SEARCH_RUNTIME_H
#define SC_SEARCH_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/status.h"
#include "index/docvalues.h"
#include "index/segment.h"
#include "search/function_score.h"
#include "search/script.h"

/* At most this many values per doc (Elasticsearch's limit for runtime fields). */
#define SC_RUNTIME_MAX_VALUES 100

typedef enum sc_runtime_type {
    SC_RUNTIME_LONG,
    SC_RUNTIME_DOUBLE,
    SC_RUNTIME_DATE, /* epoch milliseconds */
    SC_RUNTIME_BOOLEAN,
    SC_RUNTIME_KEYWORD,
} sc_runtime_type;

/* How a script variable reads (one per sc_script_var of the script). */
typedef struct sc_runtime_var {
    sc_slice field;        /* doc accesses: the field; empty for params */
    bool keyword;          /* the field has sorted-set doc values (value = its smallest term) */
    sc_sf_value value;     /* numeric fields: how to decode (LONG, DOUBLE, SCALED) */
    double scaling;        /* SCALED */
    sc_script_value param; /* params: the bound value */
} sc_runtime_var;

typedef struct sc_runtime_field {
    const char *name;
    sc_runtime_type type;
    const sc_script *script;
    const sc_runtime_var *vars; /* sc_script_n_vars(script) */
} sc_runtime_field;

/* The environment runtime scripts compile against: the builtins plus `emit(value)`. Built once;
 * NULL only when memory ran out building it. */
const sc_script_env *sc_runtime_env(void);

/* The column of rf over seg's docs (all of them, deleted or not), in `a`: *is_num and *num for
 * numeric types, else *ss. A doc whose script fails at run time (a wrong emit type, too many
 * values, null arithmetic ...) gets no values and its bit set in *failed (n_docs bits in
 * 64-bit words, in `a`; NULL when no doc failed), the first failure's reason in *err: the
 * caller fails the search only if such a doc is one it reads (Elasticsearch runs the script on
 * the matching docs only). SC_ENOMEM / SC_ELIMIT (arena budget); SC_ECORRUPT from the
 * segment. O(n_docs) script evaluations. */
sc_status sc_runtime_column(sc_arena *a, const sc_runtime_field *rf, const sc_segment *seg,
                            bool *is_num, sc_dv_numeric *num, sc_dv_sorted_set *ss,
                            uint64_t **failed, sc_script_error *err) SC_MUST_USE;

/* A double runtime field evaluated for given docs, without a column: the fast path of a script
 * that is arithmetic over single-valued double (or scaled_float) doc values, as the column's
 * (sc_script_doubles_ok). Lives in the arena it was opened in; one thread at a time. */
typedef struct sc_runtime_doubles sc_runtime_doubles;

/* The evaluator of rf over seg's docs into *out (in `a`), or *out NULL when rf does not take the
 * fast path in seg (another type, a script outside the subset, a variable without exactly one
 * value per doc): then the caller uses sc_runtime_column. SC_ENOMEM / SC_ELIMIT; SC_ECORRUPT. */
sc_status sc_runtime_doubles_open(sc_arena *a, const sc_runtime_field *rf, const sc_segment *seg,
                                  sc_runtime_doubles **out) SC_MUST_USE;
/* The values of docs[0..n) (any order, any n) into out[0..n): bit for bit what
 * sc_runtime_column stores for them (as doubles, not sortable longs). O(n). */
void sc_runtime_doubles_eval(sc_runtime_doubles *d, const uint32_t *docs, size_t n, double *out);

/* The name of a runtime type ("long", ...). */
const char *sc_runtime_type_name(sc_runtime_type t);

#endif
