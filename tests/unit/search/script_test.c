/* Script expressions (search/script.h): literal results of the Painless subset (Java's long and
 * double arithmetic, precedence, short-circuits, ternaries, casts, Math), variables collected
 * once and bound per evaluation, doc field accessors, functions added by another module through
 * an environment, compile and run-time errors with positions, limits; and random expression
 * trees against a direct evaluation in C. Seed printed, SCRY_SEED reruns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "search/runtime.h"
#include "search/script.h"

static uint64_t rng;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static sc_script *compile_env(sc_arena *a, const sc_script_env *env, const char *src)
{
    sc_script *s = NULL;
    sc_script_error err;
    sc_status st = sc_script_compile(env, sc_slice_cstr(src), a, &s, &err);
    if (st != SC_OK)
        fail_msg("compile [%s]: %s at %lld", src, err.reason, (long long)err.pos);
    return s;
}

static sc_script_value run_vars(const char *src, const sc_script_value *vars)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_script *s = compile_env(&a, sc_script_env_builtin(), src);
    sc_script_value out;
    sc_script_error err;
    sc_status st = sc_script_eval(s, vars, NULL, &out, &err);
    if (st != SC_OK)
        fail_msg("eval [%s]: %s", src, err.reason);
    sc_arena_fini(&a);
    return out;
}

static void is_long(const char *src, int64_t v)
{
    sc_script_value r = run_vars(src, NULL);
    if (r.type != SC_SCRIPT_LONG || r.l != v)
        fail_msg("[%s]: type %d l %lld d %g, expected long %lld", src, r.type, (long long)r.l, r.d,
                 (long long)v);
}

static void is_double(const char *src, double v)
{
    sc_script_value r = run_vars(src, NULL);
    if (r.type != SC_SCRIPT_DOUBLE || !(r.d == v || (isnan(r.d) && isnan(v))))
        fail_msg("[%s]: type %d d %.17g, expected double %.17g", src, r.type, r.d, v);
}

static void is_bool(const char *src, bool v)
{
    sc_script_value r = run_vars(src, NULL);
    if (r.type != SC_SCRIPT_BOOL || r.b != v)
        fail_msg("[%s]: type %d, expected %s", src, r.type, v ? "true" : "false");
}

static void test_literals_and_arithmetic(void **state)
{
    (void)state;
    is_long("1 + 2 * 3", 7);
    is_long("(1 + 2) * 3", 9);
    is_long("7 / 2", 3);
    is_long("-7 / 2", -3);
    is_long("-7 % 3", -1);
    is_long("10 - 4 - 3", 3);
    is_long("-2 - -3", 1);
    is_long("+5", 5);
    is_long("return 42;", 42);
    is_long("9223372036854775807 + 1", INT64_MIN); /* Java wraps */
    is_double("7.0 / 2", 3.5);
    is_double("7 / 2.0", 3.5);
    is_double("1e3 + .5", 1000.5);
    is_double("2L * 1.5f", 3.0);
    is_double("5.5 % 2", 1.5);
    is_double("1.0 / 0", INFINITY);
    is_double("(double) 7 / 2", 3.5);
    is_long("(long) 3.99", 3);
    is_long("(int) -3.99", -3);
    is_bool("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 4 == false", true);
    is_bool("1 == 1.0", true);
    is_bool("'abc' == \"abc\" && 'a' != 'b'", true);
    is_bool("null == null && 1 != null", true);
    is_bool("!(1 > 2)", true);
    is_bool("true || 1 / 0 == 1", true); /* short-circuit: no / by zero */
    is_bool("false && 1 / 0 == 1", false);
    is_bool("false || false || true", true);
    is_long("true ? 1 : 2", 1);
    is_long("1 > 2 ? 1 : 3 > 2 ? 2 : 3", 2); /* right-associative */
    is_long("(1 < 2 ? 10 : 20) + 1", 11);
    is_double("Math.abs(-2.5) + Math.max(1, 2.5) + Math.min(3, 4)", 2.5 + 2.5 + 3);
    is_long("Math.abs(-3) + Math.max(1, 2)", 5);
    is_double("Math.sqrt(16) + Math.pow(2, 10) + Math.floor(1.7) + Math.ceil(1.2)",
              4 + 1024 + 1 + 2);
    is_double("Math.log(Math.exp(2))", log(exp(2)));
    is_double("Math.log10(1000)", 3);
    is_long("Math.round(2.5) + Math.round(-2.5)", 3 + -2);
    is_double("Math.PI * 2", M_PI * 2);
    is_double("Math.signum(-3.0)", -1);
}

static void test_variables_and_doc(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_script *s = compile_env(&a, sc_script_env_builtin(),
                               "params.a / params['b'] + a * 0 + doc['price'].value * "
                               "doc['price'].size() + (doc['tags'].empty ? 0 : 100)");
    assert_int_equal(sc_script_n_vars(s), 5);
    assert_int_equal(sc_script_var_get(s, 0)->kind, SC_SCRIPT_VAR_PARAM);
    assert_string_equal(sc_script_var_get(s, 0)->name, "a");
    assert_string_equal(sc_script_var_get(s, 1)->name, "b");
    assert_int_equal(sc_script_var_get(s, 2)->kind, SC_SCRIPT_VAR_DOC_VALUE);
    assert_string_equal(sc_script_var_get(s, 2)->name, "price");
    assert_int_equal(sc_script_var_get(s, 3)->kind, SC_SCRIPT_VAR_DOC_SIZE);
    assert_int_equal(sc_script_var_get(s, 4)->kind, SC_SCRIPT_VAR_DOC_EMPTY);
    assert_string_equal(sc_script_var_get(s, 4)->name, "tags");
    assert_null(sc_script_var_get(s, 5));
    /* evaluate many times with different bindings */
    for (int i = 1; i <= 50; i++) {
        sc_script_value v[5] = {sc_script_double(10.0 * i), sc_script_long(4),
                                sc_script_double(1.5), sc_script_long(i % 3),
                                sc_script_bool(i % 2)};
        sc_script_value out;
        sc_script_error err;
        assert_int_equal(sc_script_eval(s, v, NULL, &out, &err), SC_OK);
        assert_int_equal(out.type, SC_SCRIPT_DOUBLE);
        double expect = 10.0 * i / 4 + 1.5 * (i % 3) + (i % 2 ? 0 : 100);
        assert_true(out.d == expect);
    }
    sc_arena_fini(&a);
}

/* A function another module would add (vector functions of script_score, say). */
static sc_status fn_dot(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                        sc_script_error *err)
{
    const double *field = ctx; /* the caller's per-doc context */
    if (args[0].type != SC_SCRIPT_OBJECT || args[1].type != SC_SCRIPT_STRING) {
        snprintf(err->reason, sizeof err->reason, "dot(vector, 'field') expected");
        return SC_EINVAL;
    }
    const double *q = args[0].obj;
    double s = 0;
    for (uint32_t i = 0; i < args[0].obj_kind; i++)
        s += q[i] * field[i];
    (void)n;
    *out = sc_script_double(s + (double)args[1].s.len * 0);
    return SC_OK;
}

static sc_status fn_count(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                          sc_script_error *err)
{
    (void)ctx, (void)args, (void)err;
    *out = sc_script_long((int64_t)n);
    return SC_OK;
}

static void test_extension_env(void **state)
{
    (void)state;
    sc_script_env *env = sc_script_env_new();
    assert_non_null(env);
    assert_int_equal(sc_script_env_add(env, "dotProduct", 2, 2, fn_dot), SC_OK);
    assert_int_equal(sc_script_env_add(env, "Vec.count", 0, 3, fn_count), SC_OK);
    assert_int_equal(sc_script_env_add(env, "bad name", 0, 1, fn_count), SC_EINVAL);
    assert_int_equal(sc_script_env_add(env, "x", 2, 1, fn_count), SC_EINVAL);
    assert_int_equal(sc_script_env_add(env, "x", 0, 17, fn_count), SC_EINVAL);
    /* the builtin environment is read-only */
    assert_int_equal(
        sc_script_env_add((sc_script_env *)sc_script_env_builtin(), "y", 0, 1, fn_count),
        SC_EINVAL);
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_script *s = compile_env(&a, env,
                               "dotProduct(params.query_vector, 'v') + Vec.count(1, 2) + "
                               "Math.sqrt(Vec.count())");
    assert_int_equal(sc_script_n_vars(s), 1);
    double q[3] = {1, 2, 3}, doc[3] = {4, 5, 6};
    sc_script_value v = {.type = SC_SCRIPT_OBJECT, .obj = q, .obj_kind = 3};
    sc_script_value out;
    sc_script_error err;
    assert_int_equal(sc_script_eval(s, &v, doc, &out, &err), SC_OK);
    assert_true(out.type == SC_SCRIPT_DOUBLE && out.d == 32 + 2 + 0);
    /* a function's error is a run-time error with its reason */
    v = sc_script_long(1);
    assert_int_equal(sc_script_eval(s, &v, doc, &out, &err), SC_EINVAL);
    assert_string_equal(err.reason, "dot(vector, 'field') expected");
    /* the builtin environment does not know it */
    sc_script *t;
    assert_int_equal(
        sc_script_compile(sc_script_env_builtin(), sc_slice_cstr("dotProduct(1, 2)"), &a, &t, &err),
        SC_EPARSE);
    assert_string_equal(err.reason, "unknown function [dotProduct]");
    assert_int_equal(err.pos, 0);
    sc_arena_fini(&a);
    sc_script_env_free(env);
    sc_script_env_free(NULL);
}

static void compile_fails(const char *src, sc_status want, int64_t pos, const char *reason_part)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_script *s;
    sc_script_error err;
    sc_status st = sc_script_compile(sc_script_env_builtin(), sc_slice_cstr(src), &a, &s, &err);
    if (st != want)
        fail_msg("[%.40s]: status %s, expected %s (%s)", src, sc_status_str(st),
                 sc_status_str(want), err.reason);
    if (pos >= 0 && err.pos != pos)
        fail_msg("[%.40s]: pos %lld, expected %lld (%s)", src, (long long)err.pos, (long long)pos,
                 err.reason);
    if (!strstr(err.reason, reason_part))
        fail_msg("[%.40s]: reason [%s] lacks [%s]", src, err.reason, reason_part);
    sc_arena_fini(&a);
}

static void runtime_fails(const char *src, const char *reason_part)
{
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_script *s = compile_env(&a, sc_script_env_builtin(), src);
    sc_script_value vars[4] = {sc_script_null(), sc_script_null(), sc_script_null(),
                               sc_script_null()};
    sc_script_value out;
    sc_script_error err;
    assert_true(sc_script_n_vars(s) <= 4);
    assert_int_equal(sc_script_eval(s, vars, NULL, &out, &err), SC_EINVAL);
    if (!strstr(err.reason, reason_part))
        fail_msg("[%s]: reason [%s] lacks [%s]", src, err.reason, reason_part);
    sc_arena_fini(&a);
}

static void test_errors(void **state)
{
    (void)state;
    compile_fails("", SC_EPARSE, 0, "empty script");
    compile_fails("1 +", SC_EPARSE, 3, "unexpected end");
    compile_fails("params.", SC_EPARSE, 7, "parameter name");
    compile_fails("params[x]", SC_EPARSE, 7, "quoted parameter");
    compile_fails("doc['f'].values", SC_EPARSE, 9, "expected value");
    compile_fails("foo(1)", SC_EPARSE, 0, "unknown function [foo]");
    compile_fails("Math.max(1)", SC_EPARSE, 0, "takes 2 to 2 arguments");
    compile_fails("Math.nope", SC_EPARSE, 0, "unknown field [Math.nope]");
    compile_fails("a = 1", SC_EPARSE, 2, "assignments");
    compile_fails("'abc", SC_EPARSE, 0, "unterminated string");
    compile_fails("1 2", SC_EPARSE, 2, "one expression");
    compile_fails("1; 2", SC_EPARSE, 3, "one expression");
    compile_fails("1 # 2", SC_EPARSE, 2, "unexpected character");
    compile_fails("(1 + 2", SC_EPARSE, 6, "expected ')'");
    compile_fails("1 ? 2", SC_EPARSE, 5, "expected ':'");
    compile_fails("99999999999999999999", SC_EPARSE, 0, "out of range");
    compile_fails("12abc", SC_EPARSE, 0, "invalid number");
    /* limits */
    char deep[400];
    memset(deep, '(', 200);
    deep[200] = '1';
    memset(deep + 201, ')', 198);
    deep[399] = '\0';
    compile_fails(deep, SC_ELIMIT, -1, "nested too deeply");
    static char big[8000];
    size_t n = 0;
    for (int i = 0; i < 1100 && n + 8 < sizeof big; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "%s1", i ? "+" : "");
    compile_fails(big, SC_ELIMIT, -1, "script too large");
    static char huge[20000];
    memset(huge, ' ', sizeof huge - 2);
    huge[sizeof huge - 2] = '1';
    huge[sizeof huge - 1] = '\0';
    compile_fails(huge, SC_ELIMIT, 0, "longer than");
    /* run time */
    runtime_fails("1 / 0", "/ by zero");
    runtime_fails("5 % 0", "/ by zero");
    runtime_fails("params.x + 1", "Cannot apply [+] to a [null]");
    runtime_fails("1 < params.x", "Cannot apply [<] to a [null]");
    runtime_fails("!1", "Cannot cast [long] to [boolean]");
    runtime_fails("1 ? 2 : 3", "Cannot cast [long] to [boolean]");
    runtime_fails("-'a'", "Cannot apply [-] to a [String]");
    runtime_fails("'a' + 1", "strings");
    runtime_fails("Math.sqrt('x')", "Cannot apply [Math.sqrt] to a [String]");
    runtime_fails("(double) null", "Cannot cast [null]");
}

/* ---- random trees against C ---- */

typedef struct node {
    char src[2048];
    double v; /* NaN marks a boolean node; then b */
    bool b, is_bool;
} node;

static void gen(node *out, int depth, const double *vars)
{
    uint64_t r = rnd() % (depth <= 0 ? 2 : 9);
    node x, y, c;
    switch (r) {
    case 0: {
        double v = (double)(int64_t)(rnd() % 2001 - 1000) / 8.0; /* exact in binary */
        snprintf(out->src, sizeof out->src, "%.3f", v);
        out->v = v;
        out->is_bool = false;
        return;
    }
    case 1: {
        int i = (int)(rnd() % 3);
        snprintf(out->src, sizeof out->src, rnd() % 2 ? "params.v%d" : "params['v%d']", i);
        out->v = vars[i];
        out->is_bool = false;
        return;
    }
    case 2:
    case 3:
    case 4:
    case 5: {
        static const char ops[] = "+-*/";
        char op = ops[r - 2];
        gen(&x, depth - 1, vars);
        gen(&y, depth - 1, vars);
        if (x.is_bool || y.is_bool) {
            gen(out, 0, vars);
            return;
        }
        snprintf(out->src, sizeof out->src, "(%s %c %s)", x.src, op, y.src);
        out->v = op == '+' ? x.v + y.v : op == '-' ? x.v - y.v : op == '*' ? x.v * y.v : x.v / y.v;
        out->is_bool = false;
        return;
    }
    case 6: {
        gen(&x, depth - 1, vars);
        gen(&y, depth - 1, vars);
        if (x.is_bool || y.is_bool) {
            gen(out, 0, vars);
            return;
        }
        static const char *const cmp[] = {"<", "<=", ">", ">=", "==", "!="};
        int k = (int)(rnd() % 6);
        snprintf(out->src, sizeof out->src, "(%s %s %s)", x.src, cmp[k], y.src);
        bool b = k == 0   ? x.v < y.v
                 : k == 1 ? x.v <= y.v
                 : k == 2 ? x.v > y.v
                 : k == 3 ? x.v >= y.v
                 : k == 4 ? x.v == y.v
                          : x.v != y.v;
        out->is_bool = true;
        out->b = b;
        return;
    }
    case 7: {
        gen(&x, depth - 1, vars);
        gen(&y, depth - 1, vars);
        if (!x.is_bool || !y.is_bool) {
            gen(out, depth - 1, vars);
            return;
        }
        bool conj = rnd() % 2;
        snprintf(out->src, sizeof out->src, "(%s %s %s)", x.src, conj ? "&&" : "||", y.src);
        out->is_bool = true;
        out->b = conj ? x.b && y.b : x.b || y.b;
        return;
    }
    default: {
        gen(&c, depth - 1, vars);
        gen(&x, depth - 1, vars);
        gen(&y, depth - 1, vars);
        if (!c.is_bool || x.is_bool != y.is_bool) {
            gen(out, depth - 1, vars);
            return;
        }
        snprintf(out->src, sizeof out->src, "(%s ? %s : %s)", c.src, x.src, y.src);
        out->is_bool = x.is_bool;
        if (x.is_bool)
            out->b = c.b ? x.b : y.b;
        else
            out->v = c.b ? x.v : y.v;
        return;
    }
    }
}

static void test_random_trees(void **state)
{
    (void)state;
    const char *env = getenv("SCRY_SEED");
    rng = env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20));
    if (!rng)
        rng = 1;
    fprintf(stderr, "[script] seed=%llu (rerun with SCRY_SEED=%llu)\n", (unsigned long long)rng,
            (unsigned long long)rng);
    static node n;
    for (int it = 0; it < 2000; it++) {
        double vars[3] = {(double)(int64_t)(rnd() % 201 - 100) / 4.0,
                          (double)(int64_t)(rnd() % 201 - 100) / 4.0, 0.5};
        gen(&n, 4, vars);
        sc_arena a;
        sc_arena_init(&a, 0);
        sc_script *s = compile_env(&a, sc_script_env_builtin(), n.src);
        sc_script_value bound[3];
        for (size_t i = 0; i < sc_script_n_vars(s); i++) {
            const char *name = sc_script_var_get(s, i)->name;
            assert_int_equal(name[0], 'v');
            bound[i] = sc_script_double(vars[name[1] - '0']);
        }
        sc_script_value out;
        sc_script_error err;
        assert_int_equal(sc_script_eval(s, bound, NULL, &out, &err), SC_OK);
        if (n.is_bool) {
            if (out.type != SC_SCRIPT_BOOL || out.b != n.b)
                fail_msg("[%s]: expected %d", n.src, n.b);
        } else if (out.type != SC_SCRIPT_DOUBLE ||
                   !(out.d == n.v || (isnan(out.d) && isnan(n.v)))) {
            fail_msg("[%s]: %.17g, expected %.17g", n.src, out.d, n.v);
        }
        sc_arena_fini(&a);
    }
}

/* A random arithmetic expression over doc['a'|'b'|'c'].value and number constants. */
static void gen_arith(char *out, size_t cap, int depth)
{
    static const char *const leaves[] = {
        "doc['a'].value", "doc['b'].value", "doc['c'].value", "2.5", "3", "(double)4", "0.1"};
    int k = (int)(rnd() % 6);
    if (depth == 0 || k == 0) {
        snprintf(out, cap, "%s", leaves[rnd() % 7]);
        return;
    }
    char x[512], y[512];
    gen_arith(x, sizeof x, depth - 1);
    if (k == 1) {
        snprintf(out, cap, "-(%s)", x);
        return;
    }
    gen_arith(y, sizeof y, depth - 1);
    snprintf(out, cap, "(%s %c %s)", x, "+-*/"[rnd() % 4], y);
}

/* sc_script_eval_doubles gives what sc_script_eval gives, bit for bit, whenever
 * sc_script_doubles_ok accepts the script; and what it must refuse. */
static void test_batch_doubles(void **state)
{
    (void)state;
    sc_arena a;
    sc_arena_init(&a, 0);
    sc_script *s = compile_env(&a, sc_script_env_builtin(), "1 / 2 + doc['a'].value");
    assert_false(sc_script_doubles_ok(s, NULL)); /* long / long */
    s = compile_env(&a, sc_script_env_builtin(), "-2L * doc['a'].value");
    assert_false(sc_script_doubles_ok(s, NULL)); /* a long negated */
    s = compile_env(&a, sc_script_env_builtin(), "doc['a'].size() * 1.5");
    assert_false(sc_script_doubles_ok(s, NULL));
    s = compile_env(&a, sc_script_env_builtin(), "params.x * 1.5");
    assert_false(sc_script_doubles_ok(s, NULL));
    s = compile_env(&a, sc_script_env_builtin(), "doc['a'].value > 1 ? 1.0 : 2.0");
    assert_false(sc_script_doubles_ok(s, NULL));
    s = compile_env(&a, sc_runtime_env(), "emit(doc['a'].value / doc['b'].value)");
    assert_true(sc_script_doubles_ok(s, "emit"));
    assert_false(sc_script_doubles_ok(s, NULL));
    s = compile_env(&a, sc_runtime_env(), "emit(doc['a'].value) + emit(doc['b'].value)");
    assert_false(sc_script_doubles_ok(s, "emit"));
    sc_arena_fini(&a);
    enum {
        ROWS = 37
    };
    int accepted = 0;
    if (!rng) /* run alone: test_random_trees seeds (and prints) it otherwise */
        rng = 88172645463325252ull;
    for (int it = 0; it < 500; it++) {
        char src[4096];
        gen_arith(src, sizeof src, 4);
        sc_arena_init(&a, 0);
        s = compile_env(&a, sc_script_env_builtin(), src);
        if (!sc_script_doubles_ok(s, NULL)) {
            sc_arena_fini(&a);
            continue;
        }
        accepted++;
        size_t nv = sc_script_n_vars(s);
        double cols[3][ROWS], out[ROWS];
        const double *vars[3];
        double *scratch = sc_arena_alloc(&a, sc_script_doubles_scratch(s) * ROWS * sizeof(double));
        for (size_t i = 0; i < nv; i++) {
            for (int r = 0; r < ROWS; r++)
                cols[i][r] = r == 0 ? 0.0 : (double)(int64_t)(rnd() % 2001 - 1000) / 8.0;
            vars[i] = cols[i];
        }
        sc_script_eval_doubles(s, vars, ROWS, out, scratch);
        for (int r = 0; r < ROWS; r++) {
            sc_script_value bound[3], v;
            sc_script_error err;
            for (size_t i = 0; i < nv; i++)
                bound[i] = sc_script_double(cols[i][r]);
            assert_int_equal(sc_script_eval(s, bound, NULL, &v, &err), SC_OK);
            assert_int_equal(v.type, SC_SCRIPT_DOUBLE);
            if (memcmp(&v.d, &out[r], sizeof v.d) != 0 && !(isnan(v.d) && isnan(out[r])))
                fail_msg("[%s] row %d: batch %.17g, interpreter %.17g", src, r, out[r], v.d);
        }
        sc_arena_fini(&a);
    }
    assert_true(accepted > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literals_and_arithmetic),
        cmocka_unit_test(test_variables_and_doc),
        cmocka_unit_test(test_extension_env),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_random_trees),
        cmocka_unit_test(test_batch_doubles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
