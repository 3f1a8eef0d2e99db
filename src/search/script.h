/* Script expressions: the subset of Painless people write in bucket_script, bucket_selector,
 * script fields and score scripts, compiled once into a small stack program and evaluated
 * many times without allocation.
 *
 * Language: numbers (`3`, `2.5`, `1e3`, suffixes L/F/D), strings ('a' / "a"), true, false,
 * null; `params.x`, `params['x']` and bare names (one namespace: the caller binds them);
 * `doc['f'].value`, `doc['f'].size()`, `doc['f'].empty`; + - * / %, == != < <= > >=, && || !,
 * `c ? a : b`, parentheses, casts `(double)` `(long)` `(int)` `(float)`; `Math.abs / max / min
 * / sqrt / log / log10 / pow / exp / floor / ceil / round / signum` and `Math.PI`, `Math.E`; an
 * optional leading `return` and trailing `;`. Integer literals and long values follow Java:
 * long op long is long (integer division; `/ by zero` is an error), anything with a double is
 * double.
 *
 * Extension: an environment (sc_script_env) lists the functions a script may call. The
 * builtin one (sc_script_env_builtin) has the Math functions; another module (script_score's
 * vector functions, say `cosineSimilarity(params.query_vector, 'field')`) makes its own with
 * sc_script_env_new, adds functions with sc_script_env_add, and compiles against it. A function
 * receives the evaluation's `call_ctx` (the caller's: a document, a segment) and typed
 * arguments, so it can read a string argument as a field name or an OBJECT value (bound by the
 * caller, e.g. a parsed vector) as its own kind.
 *
 * Variables: compiling collects every distinct variable a script reads (sc_script_var: a
 * parameter name or a doc field access). The caller resolves them once (e.g. to buckets_path
 * entries or doc values readers) and passes their values per evaluation in the same order.
 *
 * Limits: 16 KiB of source, 1,024 instructions, nesting depth 64, 256 variables; beyond them
 * compiling fails with SC_ELIMIT and a reason. Thread-safety: a compiled script and an env are
 * read-only once built (evaluate from any number of threads); sc_script_env_add is not
 * thread-safe. */
#ifndef SC_SEARCH_SCRIPT_H
#define SC_SEARCH_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"

typedef enum sc_script_type {
    SC_SCRIPT_NULL,
    SC_SCRIPT_BOOL,
    SC_SCRIPT_LONG,
    SC_SCRIPT_DOUBLE,
    SC_SCRIPT_STRING,
    SC_SCRIPT_OBJECT, /* opaque to the language: passed to functions, compared by pointer */
} sc_script_type;

typedef struct sc_script_value {
    sc_script_type type;
    bool b;
    int64_t l;
    double d;
    sc_slice s;        /* STRING (borrowed: from the script or the caller) */
    const void *obj;   /* OBJECT */
    uint32_t obj_kind; /* OBJECT: the binder's tag */
} sc_script_value;

static inline sc_script_value sc_script_double(double d)
{
    return (sc_script_value){.type = SC_SCRIPT_DOUBLE, .d = d};
}
static inline sc_script_value sc_script_long(int64_t l)
{
    return (sc_script_value){.type = SC_SCRIPT_LONG, .l = l};
}
static inline sc_script_value sc_script_bool(bool b)
{
    return (sc_script_value){.type = SC_SCRIPT_BOOL, .b = b};
}
static inline sc_script_value sc_script_null(void)
{
    return (sc_script_value){.type = SC_SCRIPT_NULL};
}
/* A value as a number (LONG or DOUBLE); false for other types. */
bool sc_script_number(const sc_script_value *v, double *out);

/* A user-facing error: what and where (byte offset into the source, or -1 at run time). */
typedef struct sc_script_error {
    int64_t pos;
    char reason[200];
} sc_script_error;

/* A run-time error of a script (pos -1, reason from the format): returns SC_EINVAL, for
 * functions and evaluators to return as their status. */
sc_status sc_script_fail(sc_script_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A value type as Painless names it in errors ("long", "double", "String", ...). */
const char *sc_script_type_name(sc_script_type t);

/* A function callable from scripts. args[0..n) are evaluated arguments (n within the
 * registered bounds); writes *out. Errors: SC_EINVAL with err->reason set (a run-time error
 * of the script). call_ctx: what the evaluator was given. */
typedef sc_status (*sc_script_fn)(void *call_ctx, const sc_script_value *args, size_t n,
                                  sc_script_value *out, sc_script_error *err);

typedef struct sc_script_env sc_script_env;

/* The environment with the builtin Math functions (static, immutable). */
const sc_script_env *sc_script_env_builtin(void);
/* A new environment holding the builtins; free with sc_script_env_free. NULL on exhaustion. */
sc_script_env *sc_script_env_new(void);
void sc_script_env_free(sc_script_env *env);
/* Adds (or replaces) function `name` (e.g. "cosineSimilarity", or a dotted "Vec.dot") taking
 * min_args..max_args arguments (at most 16). name is copied. SC_EINVAL for a bad name or
 * bounds, SC_ENOMEM. Scripts compiled against env before a replacement keep calling the
 * function they were compiled with. */
sc_status sc_script_env_add(sc_script_env *env, const char *name, uint32_t min_args,
                            uint32_t max_args, sc_script_fn fn) SC_MUST_USE;

typedef enum sc_script_var_kind {
    SC_SCRIPT_VAR_PARAM,     /* params.x, params['x'], x */
    SC_SCRIPT_VAR_DOC_VALUE, /* doc['f'].value */
    SC_SCRIPT_VAR_DOC_SIZE,  /* doc['f'].size() (LONG) */
    SC_SCRIPT_VAR_DOC_EMPTY, /* doc['f'].empty / .isEmpty() (BOOL) */
} sc_script_var_kind;

typedef struct sc_script_var {
    sc_script_var_kind kind;
    const char *name; /* NUL-terminated (the script's arena) */
} sc_script_var;

typedef struct sc_script sc_script;

/* Compiles src against env (which must outlive the script) into *out, allocated in `a`.
 * SC_EPARSE (syntax, unknown function, wrong argument count) or SC_ELIMIT with err filled;
 * SC_ENOMEM / SC_ELIMIT from the arena. O(len(src)). */
sc_status sc_script_compile(const sc_script_env *env, sc_slice src, sc_arena *a, sc_script **out,
                            sc_script_error *err) SC_MUST_USE;

/* The variables the script reads, in the order sc_script_eval expects their values. */
size_t sc_script_n_vars(const sc_script *s);
const sc_script_var *sc_script_var_get(const sc_script *s, size_t i);

/* Runs the script with vars[0..n_vars) bound and call_ctx handed to functions; the result
 * in *out (strings borrowed from the script or the inputs). SC_EINVAL with err on a run-time
 * error (null in arithmetic, / by zero, a wrong type, a function's error). No allocation. */
sc_status sc_script_eval(const sc_script *s, const sc_script_value *vars, void *call_ctx,
                         sc_script_value *out, sc_script_error *err) SC_MUST_USE;

/* ---- batch evaluation of arithmetic over doubles (runtime fields' fast path) ---- */

/* Whether s can run with sc_script_eval_doubles: straight-line code of number constants, its
 * variables (doc value accesses only, all of which the caller binds to doubles), + - * / and unary
 * -, casts to double, where every binary operation has a double operand (so none is Java's long
 * arithmetic) and the result is a double; with `fn`, the program's last instruction is the only
 * call, to the function named fn with one argument, and that argument is the result. */
bool sc_script_doubles_ok(const sc_script *s, const char *fn);
/* For each row r < n, the value sc_script_eval would compute with variable i bound to the
 * double vars[i][r] (bit for bit: the same operations in the same order), into out[r].
 * scratch holds sc_script_doubles_scratch(s) * n doubles. Requires sc_script_doubles_ok. */
void sc_script_eval_doubles(const sc_script *s, const double *const *vars, size_t n, double *out,
                            double *scratch);
size_t sc_script_doubles_scratch(const sc_script *s);

#endif
