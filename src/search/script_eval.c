/* The script evaluator (search/script.h): one pass over the stack program with a fixed stack
 * on the C stack (the compiler bounds its depth), Java's numeric promotion (long op long is
 * long, with a double it is double), and the builtin Math functions. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "search/script_internal.h"

bool sc_script_number(const sc_script_value *v, double *out)
{
    if (v->type == SC_SCRIPT_LONG)
        *out = (double)v->l;
    else if (v->type == SC_SCRIPT_DOUBLE)
        *out = v->d;
    else
        return false;
    return true;
}

const char *sc_script_type_name(sc_script_type t)
{
    switch (t) {
    case SC_SCRIPT_NULL: return "null";
    case SC_SCRIPT_BOOL: return "boolean";
    case SC_SCRIPT_LONG: return "long";
    case SC_SCRIPT_DOUBLE: return "double";
    case SC_SCRIPT_STRING: return "String";
    default: return "Object";
    }
}

sc_status sc_script_fail(sc_script_error *err, const char *fmt, ...)
{
    err->pos = -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->reason, sizeof err->reason, fmt, ap);
    va_end(ap);
    return SC_EINVAL;
}

/* ---- builtins ---- */

static sc_status num_arg(const sc_script_value *v, const char *fn, double *out,
                         sc_script_error *err)
{
    if (sc_script_number(v, out))
        return SC_OK;
    return sc_script_fail(err, "Cannot apply [%s] to a [%s]", fn, sc_script_type_name(v->type));
}

#define MATH1(cname, jname, expr)                                                                  \
    static sc_status cname(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out, \
                           sc_script_error *err)                                                   \
    {                                                                                              \
        (void)ctx, (void)n;                                                                        \
        double x;                                                                                  \
        SC_TRY(num_arg(&args[0], jname, &x, err));                                                 \
        *out = sc_script_double(expr);                                                             \
        return SC_OK;                                                                              \
    }

MATH1(m_sqrt, "Math.sqrt", sqrt(x))
MATH1(m_log, "Math.log", log(x))
MATH1(m_log10, "Math.log10", log10(x))
MATH1(m_exp, "Math.exp", exp(x))
MATH1(m_floor, "Math.floor", floor(x))
MATH1(m_ceil, "Math.ceil", ceil(x))
MATH1(m_signum, "Math.signum", x > 0 ? 1.0 : x < 0 ? -1.0 : x)

static sc_status m_abs(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                       sc_script_error *err)
{
    (void)ctx, (void)n;
    if (args[0].type == SC_SCRIPT_LONG) {
        *out = sc_script_long(args[0].l < 0 ? (int64_t)(0 - (uint64_t)args[0].l) : args[0].l);
        return SC_OK;
    }
    double x;
    SC_TRY(num_arg(&args[0], "Math.abs", &x, err));
    *out = sc_script_double(fabs(x));
    return SC_OK;
}

/* Java's Math.round: floor(x + 0.5) as a long (NaN 0, saturating). */
static sc_status m_round(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                         sc_script_error *err)
{
    (void)ctx, (void)n;
    if (args[0].type == SC_SCRIPT_LONG) {
        *out = args[0];
        return SC_OK;
    }
    double x;
    SC_TRY(num_arg(&args[0], "Math.round", &x, err));
    double r = floor(x + 0.5);
    int64_t l = isnan(r)                      ? 0
                : r >= 9.2233720368547758e18  ? INT64_MAX
                : r <= -9.2233720368547758e18 ? INT64_MIN
                                              : (int64_t)r;
    *out = sc_script_long(l);
    return SC_OK;
}

static sc_status minmax(const sc_script_value *args, bool max, sc_script_value *out,
                        sc_script_error *err)
{
    const char *fn = max ? "Math.max" : "Math.min";
    if (args[0].type == SC_SCRIPT_LONG && args[1].type == SC_SCRIPT_LONG) {
        int64_t a = args[0].l, b = args[1].l;
        *out = sc_script_long(max ? (a > b ? a : b) : (a < b ? a : b));
        return SC_OK;
    }
    double a, b;
    SC_TRY(num_arg(&args[0], fn, &a, err));
    SC_TRY(num_arg(&args[1], fn, &b, err));
    /* Java: NaN wins */
    *out = sc_script_double(isnan(a) || isnan(b) ? NAN : max ? fmax(a, b) : fmin(a, b));
    return SC_OK;
}

static sc_status m_max(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                       sc_script_error *err)
{
    (void)ctx, (void)n;
    return minmax(args, true, out, err);
}

static sc_status m_min(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                       sc_script_error *err)
{
    (void)ctx, (void)n;
    return minmax(args, false, out, err);
}

static sc_status m_pow(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                       sc_script_error *err)
{
    (void)ctx, (void)n;
    double a, b;
    SC_TRY(num_arg(&args[0], "Math.pow", &a, err));
    SC_TRY(num_arg(&args[1], "Math.pow", &b, err));
    *out = sc_script_double(pow(a, b));
    return SC_OK;
}

const sc__script_fn_entry sc__script_builtins[] = {
    {"Math.abs", 1, 1, m_abs},   {"Math.max", 2, 2, m_max},     {"Math.min", 2, 2, m_min},
    {"Math.sqrt", 1, 1, m_sqrt}, {"Math.log", 1, 1, m_log},     {"Math.log10", 1, 1, m_log10},
    {"Math.pow", 2, 2, m_pow},   {"Math.exp", 1, 1, m_exp},     {"Math.floor", 1, 1, m_floor},
    {"Math.ceil", 1, 1, m_ceil}, {"Math.round", 1, 1, m_round}, {"Math.signum", 1, 1, m_signum},
};
const size_t sc__script_n_builtins = sizeof sc__script_builtins / sizeof sc__script_builtins[0];

static const sc_script_env builtin_env = {
    .fns = (sc__script_fn_entry *)sc__script_builtins,
    .n = sizeof sc__script_builtins / sizeof sc__script_builtins[0],
    .cap = sizeof sc__script_builtins / sizeof sc__script_builtins[0],
    .is_static = true,
};

const sc_script_env *sc_script_env_builtin(void)
{
    return &builtin_env;
}

/* ---- evaluation ---- */

static const char *op_name(uint8_t op)
{
    static const char *const names[] = {
        [SC__OP_NEG] = "-", [SC__OP_NOT] = "!", [SC__OP_ADD] = "+", [SC__OP_SUB] = "-",
        [SC__OP_MUL] = "*", [SC__OP_DIV] = "/", [SC__OP_MOD] = "%", [SC__OP_LT] = "<",
        [SC__OP_LE] = "<=", [SC__OP_GT] = ">",  [SC__OP_GE] = ">=",
    };
    return op < sizeof names / sizeof names[0] && names[op] ? names[op] : "?";
}

static bool truth(const sc_script_value *v, bool *out)
{
    switch (v->type) {
    case SC_SCRIPT_BOOL: *out = v->b; return true;
    default: return false;
    }
}

static bool values_equal(const sc_script_value *x, const sc_script_value *y)
{
    double a, b;
    if (sc_script_number(x, &a) && sc_script_number(y, &b)) {
        if (x->type == SC_SCRIPT_LONG && y->type == SC_SCRIPT_LONG)
            return x->l == y->l;
        return a == b;
    }
    if (x->type != y->type)
        return false;
    switch (x->type) {
    case SC_SCRIPT_NULL: return true;
    case SC_SCRIPT_BOOL: return x->b == y->b;
    case SC_SCRIPT_STRING: return sc_slice_eq(x->s, y->s);
    default: return x->obj == y->obj && x->obj_kind == y->obj_kind;
    }
}

static sc_status arith(uint8_t op, const sc_script_value *x, const sc_script_value *y,
                       sc_script_value *out, sc_script_error *err)
{
    if (op == SC__OP_ADD && (x->type == SC_SCRIPT_STRING || y->type == SC_SCRIPT_STRING))
        return sc_script_fail(err, "Cannot apply [+] to strings");
    if (x->type == SC_SCRIPT_LONG && y->type == SC_SCRIPT_LONG) {
        uint64_t a = (uint64_t)x->l, b = (uint64_t)y->l;
        switch (op) {
        case SC__OP_ADD: *out = sc_script_long((int64_t)(a + b)); return SC_OK;
        case SC__OP_SUB: *out = sc_script_long((int64_t)(a - b)); return SC_OK;
        case SC__OP_MUL: *out = sc_script_long((int64_t)(a * b)); return SC_OK;
        case SC__OP_DIV:
        case SC__OP_MOD:
            if (y->l == 0)
                return sc_script_fail(err, "ArithmeticException: / by zero");
            if (x->l == INT64_MIN && y->l == -1) /* Java wraps */
                *out = sc_script_long(op == SC__OP_DIV ? INT64_MIN : 0);
            else
                *out = sc_script_long(op == SC__OP_DIV ? x->l / y->l : x->l % y->l);
            return SC_OK;
        }
    }
    double a, b;
    if (!sc_script_number(x, &a) || !sc_script_number(y, &b))
        return sc_script_fail(err, "Cannot apply [%s] to a [%s]", op_name(op),
                        sc_script_type_name(sc_script_number(x, &a) ? y->type : x->type));
    double r;
    switch (op) {
    case SC__OP_ADD: r = a + b; break;
    case SC__OP_SUB: r = a - b; break;
    case SC__OP_MUL: r = a * b; break;
    case SC__OP_DIV: r = a / b; break;
    default: r = fmod(a, b); break;
    }
    *out = sc_script_double(r);
    return SC_OK;
}

static sc_status compare(uint8_t op, const sc_script_value *x, const sc_script_value *y,
                         sc_script_value *out, sc_script_error *err)
{
    double a, b;
    bool r;
    if (x->type == SC_SCRIPT_LONG && y->type == SC_SCRIPT_LONG) {
        int64_t p = x->l, q = y->l;
        r = op == SC__OP_LT ? p < q : op == SC__OP_LE ? p <= q : op == SC__OP_GT ? p > q : p >= q;
    } else if (sc_script_number(x, &a) && sc_script_number(y, &b)) {
        r = op == SC__OP_LT ? a < b : op == SC__OP_LE ? a <= b : op == SC__OP_GT ? a > b : a >= b;
    } else {
        return sc_script_fail(err, "Cannot apply [%s] to a [%s]", op_name(op),
                        sc_script_type_name(sc_script_number(x, &a) ? y->type : x->type));
    }
    *out = sc_script_bool(r);
    return SC_OK;
}

sc_status sc_script_eval(const sc_script *s, const sc_script_value *vars, void *call_ctx,
                         sc_script_value *out, sc_script_error *err)
{
    sc_script_value st[SC__SCRIPT_MAX_STACK + 1];
    size_t sp = 0;
    /* not a memset of the 200-byte reason: runtime fields evaluate once per doc */
    err->pos = -1;
    err->reason[0] = '\0';
    for (uint32_t pc = 0; pc < s->n_code;) {
        const sc__script_ins *in = &s->code[pc++];
        switch ((sc__script_op)in->op) {
        case SC__OP_CONST: st[sp++] = s->consts[in->a]; break;
        case SC__OP_VAR: st[sp++] = vars[in->a]; break;
        case SC__OP_NEG: {
            sc_script_value *v = &st[sp - 1];
            if (v->type == SC_SCRIPT_LONG)
                v->l = (int64_t)(0 - (uint64_t)v->l);
            else if (v->type == SC_SCRIPT_DOUBLE)
                v->d = -v->d;
            else
                return sc_script_fail(err, "Cannot apply [%s] to a [%s]", "-", sc_script_type_name(v->type));
            break;
        }
        case SC__OP_NOT:
        case SC__OP_BOOL: {
            bool b;
            if (!truth(&st[sp - 1], &b))
                return sc_script_fail(err, "Cannot cast [%s] to [boolean]", sc_script_type_name(st[sp - 1].type));
            st[sp - 1] = sc_script_bool(in->op == SC__OP_NOT ? !b : b);
            break;
        }
        case SC__OP_ADD:
        case SC__OP_SUB:
        case SC__OP_MUL:
        case SC__OP_DIV:
        case SC__OP_MOD:
            sp--;
            SC_TRY(arith(in->op, &st[sp - 1], &st[sp], &st[sp - 1], err));
            break;
        case SC__OP_EQ:
        case SC__OP_NE: {
            sp--;
            bool eq = values_equal(&st[sp - 1], &st[sp]);
            st[sp - 1] = sc_script_bool(in->op == SC__OP_EQ ? eq : !eq);
            break;
        }
        case SC__OP_LT:
        case SC__OP_LE:
        case SC__OP_GT:
        case SC__OP_GE:
            sp--;
            SC_TRY(compare(in->op, &st[sp - 1], &st[sp], &st[sp - 1], err));
            break;
        case SC__OP_JMP: pc = in->a; break;
        case SC__OP_JF:
        case SC__OP_JT: {
            bool b;
            sp--;
            if (!truth(&st[sp], &b))
                return sc_script_fail(err, "Cannot cast [%s] to [boolean]", sc_script_type_name(st[sp].type));
            if (b == (in->op == SC__OP_JT))
                pc = in->a;
            break;
        }
        case SC__OP_CALL: {
            const sc__script_fn_entry *f = s->fns[in->a];
            sp -= in->b;
            sc_script_value r = sc_script_null();
            sc_status rs = f->fn(call_ctx, &st[sp], in->b, &r, err);
            if (rs != SC_OK) {
                if (!err->reason[0])
                    sc_script_fail(err, "[%s] failed", f->name);
                return SC_EINVAL;
            }
            st[sp++] = r;
            break;
        }
        case SC__OP_TO_DOUBLE:
        case SC__OP_TO_LONG: {
            sc_script_value *v = &st[sp - 1];
            double d;
            if (!sc_script_number(v, &d))
                return sc_script_fail(err, "Cannot cast [%s] to a number", sc_script_type_name(v->type));
            if (in->op == SC__OP_TO_DOUBLE)
                *v = sc_script_double(d);
            else if (v->type == SC_SCRIPT_DOUBLE) /* Java's (long) d: truncation, saturating */
                *v = sc_script_long(isnan(d)                      ? 0
                                    : d >= 9.2233720368547758e18  ? INT64_MAX
                                    : d <= -9.2233720368547758e18 ? INT64_MIN
                                                                  : (int64_t)d);
            break;
        }
        default: return sc_script_fail(err, "internal: bad instruction");
        }
    }
    if (sp != 1)
        return sc_script_fail(err, "internal: stack depth at the end");
    *out = st[0];
    return SC_OK;
}

/* ---- batch evaluation over doubles ---- */

bool sc_script_doubles_ok(const sc_script *s, const char *fn)
{
    /* the static type of each stack slot: true = double, false = long */
    bool dbl[SC__SCRIPT_MAX_STACK + 1];
    size_t sp = 0;
    for (uint32_t pc = 0; pc < s->n_code; pc++) {
        const sc__script_ins *in = &s->code[pc];
        switch ((sc__script_op)in->op) {
        case SC__OP_CONST: {
            const sc_script_value *c = &s->consts[in->a];
            if (c->type != SC_SCRIPT_DOUBLE && c->type != SC_SCRIPT_LONG)
                return false;
            dbl[sp++] = c->type == SC_SCRIPT_DOUBLE;
            break;
        }
        case SC__OP_VAR:
            if (s->vars[in->a].kind != SC_SCRIPT_VAR_DOC_VALUE)
                return false;
            dbl[sp++] = true;
            break;
        case SC__OP_NEG: /* of a long, Java wraps INT64_MIN: not the double's negation */
            if (!sp || !dbl[sp - 1])
                return false;
            break;
        case SC__OP_TO_DOUBLE:
            if (!sp)
                return false;
            dbl[sp - 1] = true;
            break;
        case SC__OP_ADD:
        case SC__OP_SUB:
        case SC__OP_MUL:
        case SC__OP_DIV:
            if (sp < 2 || (!dbl[sp - 1] && !dbl[sp - 2]))
                return false;
            sp--;
            dbl[sp - 1] = true;
            break;
        case SC__OP_CALL:
            if (!fn || pc + 1 != s->n_code || in->b != 1 || strcmp(s->fns[in->a]->name, fn))
                return false;
            return sp == 1 && dbl[0];
        default: return false;
        }
    }
    return !fn && sp == 1 && dbl[0];
}

size_t sc_script_doubles_scratch(const sc_script *s)
{
    return s->max_stack ? s->max_stack : 1;
}

void sc_script_eval_doubles(const sc_script *s, const double *const *vars, size_t n, double *out,
                            double *scratch)
{
    size_t sp = 0;
    for (uint32_t pc = 0; pc < s->n_code; pc++) {
        const sc__script_ins *in = &s->code[pc];
        double *top = scratch + (sp ? sp - 1 : 0) * n;
        switch ((sc__script_op)in->op) {
        case SC__OP_CONST: {
            const sc_script_value *c = &s->consts[in->a];
            double v = c->type == SC_SCRIPT_DOUBLE ? c->d : (double)c->l;
            double *d = scratch + sp++ * n;
            for (size_t r = 0; r < n; r++)
                d[r] = v;
            break;
        }
        case SC__OP_VAR: memcpy(scratch + sp++ * n, vars[in->a], n * sizeof(double)); break;
        case SC__OP_NEG:
            for (size_t r = 0; r < n; r++)
                top[r] = -top[r];
            break;
        case SC__OP_ADD:
        case SC__OP_SUB:
        case SC__OP_MUL:
        case SC__OP_DIV: {
            double *x = scratch + (sp - 2) * n, *y = scratch + (sp - 1) * n;
            if (in->op == SC__OP_ADD)
                for (size_t r = 0; r < n; r++)
                    x[r] += y[r];
            else if (in->op == SC__OP_SUB)
                for (size_t r = 0; r < n; r++)
                    x[r] -= y[r];
            else if (in->op == SC__OP_MUL)
                for (size_t r = 0; r < n; r++)
                    x[r] *= y[r];
            else
                for (size_t r = 0; r < n; r++)
                    x[r] /= y[r];
            sp--;
            break;
        }
        default: break; /* TO_DOUBLE (values are doubles already), the final CALL */
        }
    }
    memcpy(out, scratch, n * sizeof(double));
}
