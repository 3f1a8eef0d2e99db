/* The script compiler (search/script.h): a lexer and a recursive-descent parser that emits the
 * stack program directly (jumps patched for ?:, && and ||), with the stack depth tracked so
 * the evaluator's fixed stack always suffices; and the function environments. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/script_internal.h"

/* ---- environments ---- */

sc_script_env *sc_script_env_new(void)
{
    sc_script_env *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->cap = sc__script_n_builtins + 8;
    e->fns = malloc(e->cap * sizeof *e->fns);
    if (!e->fns) {
        free(e);
        return NULL;
    }
    memcpy(e->fns, sc__script_builtins, sc__script_n_builtins * sizeof *e->fns);
    e->n = sc__script_n_builtins;
    return e;
}

void sc_script_env_free(sc_script_env *env)
{
    if (!env || env->is_static)
        return;
    free(env->fns);
    free(env);
}

static bool valid_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= SC__SCRIPT_NAME_MAX || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!(isalnum(c) || c == '_' || (c == '.' && i + 1 < n && name[i + 1] != '.')))
            return false;
    }
    return true;
}

sc_status sc_script_env_add(sc_script_env *env, const char *name, uint32_t min_args,
                            uint32_t max_args, sc_script_fn fn)
{
    if (!env || env->is_static || !fn || !valid_name(name) || min_args > max_args ||
        max_args > SC__SCRIPT_MAX_ARGS)
        return SC_EINVAL;
    sc__script_fn_entry *slot = NULL;
    for (size_t i = 0; i < env->n; i++)
        if (!strcmp(env->fns[i].name, name))
            slot = &env->fns[i];
    if (!slot) {
        if (env->n == env->cap) {
            size_t cap = env->cap * 2;
            sc__script_fn_entry *p = realloc(env->fns, cap * sizeof *p);
            if (!p)
                return SC_ENOMEM;
            env->fns = p;
            env->cap = cap;
        }
        slot = &env->fns[env->n++];
    }
    memset(slot, 0, sizeof *slot);
    memcpy(slot->name, name, strlen(name));
    slot->min_args = min_args;
    slot->max_args = max_args;
    slot->fn = fn;
    return SC_OK;
}

/* ---- lexer ---- */

typedef enum tok_kind {
    T_END,
    T_NUM,
    T_STR,
    T_IDENT,
    T_OP
} tok_kind;

typedef struct tok {
    tok_kind kind;
    size_t pos, len; /* in the source */
    sc_script_value num;
    char op[3];
} tok;

typedef struct parser {
    const char *src;
    size_t len, pos;
    tok t;
    sc_arena *a;
    const sc_script_env *env;
    sc_script *s;
    uint32_t cap_code, cap_consts, cap_vars, cap_fns;
    int depth;
    int64_t sp;
    sc_script_error *err;
    sc_status st;
} parser;

static bool fail(parser *p, sc_status st, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool fail(parser *p, sc_status st, size_t pos, const char *fmt, ...)
{
    if (p->st != SC_OK)
        return false;
    p->st = st;
    p->err->pos = (int64_t)pos;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err->reason, sizeof p->err->reason, fmt, ap);
    va_end(ap);
    return false;
}

static bool lex_number(parser *p, size_t start)
{
    size_t i = start;
    bool is_double = false;
    while (i < p->len && isdigit((unsigned char)p->src[i]))
        i++;
    if (i < p->len && p->src[i] == '.' && i + 1 < p->len && isdigit((unsigned char)p->src[i + 1])) {
        is_double = true;
        i++;
        while (i < p->len && isdigit((unsigned char)p->src[i]))
            i++;
    }
    if (i < p->len && (p->src[i] == 'e' || p->src[i] == 'E')) {
        size_t j = i + 1;
        if (j < p->len && (p->src[j] == '+' || p->src[j] == '-'))
            j++;
        if (j < p->len && isdigit((unsigned char)p->src[j])) {
            is_double = true;
            i = j;
            while (i < p->len && isdigit((unsigned char)p->src[i]))
                i++;
        }
    }
    char buf[64];
    size_t n = i - start;
    if (n >= sizeof buf)
        return fail(p, SC_EPARSE, start, "number too long");
    memcpy(buf, p->src + start, n);
    buf[n] = '\0';
    if (i < p->len && strchr("lLfFdD", p->src[i])) {
        is_double |= strchr("fFdD", p->src[i]) != NULL;
        i++;
    }
    if (i < p->len && (isalnum((unsigned char)p->src[i]) || p->src[i] == '_'))
        return fail(p, SC_EPARSE, start, "invalid number");
    errno = 0;
    if (is_double) {
        p->t.num = sc_script_double(strtod(buf, NULL));
    } else {
        long long v = strtoll(buf, NULL, 10);
        if (errno == ERANGE)
            return fail(p, SC_EPARSE, start, "integer [%s] out of range", buf);
        p->t.num = sc_script_long(v);
    }
    p->t.kind = T_NUM;
    p->t.len = i - start;
    p->pos = i;
    return true;
}

static bool lex(parser *p)
{
    while (p->pos < p->len && isspace((unsigned char)p->src[p->pos]))
        p->pos++;
    size_t start = p->pos;
    memset(&p->t, 0, sizeof p->t);
    p->t.pos = start;
    if (start >= p->len) {
        p->t.kind = T_END;
        return true;
    }
    char c = p->src[start];
    if (isdigit((unsigned char)c) ||
        (c == '.' && start + 1 < p->len && isdigit((unsigned char)p->src[start + 1])))
        return lex_number(p, start);
    if (isalpha((unsigned char)c) || c == '_') {
        size_t i = start;
        while (i < p->len && (isalnum((unsigned char)p->src[i]) || p->src[i] == '_'))
            i++;
        p->t.kind = T_IDENT;
        p->t.len = i - start;
        p->pos = i;
        return true;
    }
    if (c == '\'' || c == '"') {
        size_t i = start + 1;
        while (i < p->len && p->src[i] != c) {
            if (p->src[i] == '\\')
                return fail(p, SC_EPARSE, i, "escapes in strings are not supported");
            i++;
        }
        if (i >= p->len)
            return fail(p, SC_EPARSE, start, "unterminated string");
        p->t.kind = T_STR;
        p->t.len = i + 1 - start;
        p->pos = i + 1;
        return true;
    }
    static const char *const two[] = {"==", "!=", "<=", ">=", "&&", "||", NULL};
    for (const char *const *o = two; *o; o++)
        if (start + 1 < p->len && p->src[start] == (*o)[0] && p->src[start + 1] == (*o)[1]) {
            p->t.kind = T_OP;
            memcpy(p->t.op, *o, 2);
            p->t.len = 2;
            p->pos = start + 2;
            return true;
        }
    if (strchr("+-*/%<>!?:()[].,;", c)) {
        p->t.kind = T_OP;
        p->t.op[0] = c;
        p->t.len = 1;
        p->pos = start + 1;
        return true;
    }
    if (c == '=')
        return fail(p, SC_EPARSE, start, "assignments are not supported");
    return fail(p, SC_EPARSE, start, "unexpected character '%c'",
                isprint((unsigned char)c) ? c : '?');
}

static bool is_op(const parser *p, const char *op)
{
    return p->t.kind == T_OP && !strcmp(p->t.op, op);
}

static bool is_ident(const parser *p, const char *name)
{
    return p->t.kind == T_IDENT && p->t.len == strlen(name) &&
           !memcmp(p->src + p->t.pos, name, p->t.len);
}

static bool expect(parser *p, const char *op)
{
    if (!is_op(p, op))
        return fail(p, SC_EPARSE, p->t.pos, "expected '%s'", op);
    return lex(p);
}

/* ---- emission ---- */

static bool grow(parser *p, void **arr, uint32_t *cap, uint32_t n, size_t elem, uint32_t max,
                 const char *what)
{
    if (n < *cap)
        return true;
    if (n >= max)
        return fail(p, SC_ELIMIT, p->t.pos, "script too large: more than %u %s", max, what);
    uint32_t nc = *cap ? *cap * 2 : 16;
    if (nc > max)
        nc = max;
    void *np = sc_arena_alloc(p->a, (size_t)nc * elem);
    if (!np)
        return fail(p, p->a->over_budget ? SC_ELIMIT : SC_ENOMEM, p->t.pos, "out of memory");
    if (n)
        memcpy(np, *arr, (size_t)n * elem);
    *arr = np;
    *cap = nc;
    return true;
}

/* Stack effect of an instruction (CALL: 1 - argc). */
static int64_t effect(uint8_t op, uint32_t b)
{
    switch (op) {
    case SC__OP_CONST:
    case SC__OP_VAR: return 1;
    case SC__OP_NEG:
    case SC__OP_NOT:
    case SC__OP_BOOL:
    case SC__OP_JMP:
    case SC__OP_TO_DOUBLE:
    case SC__OP_TO_LONG: return 0;
    case SC__OP_CALL: return 1 - (int64_t)b;
    default: return -1; /* binary operators, JF, JT */
    }
}

static bool emit(parser *p, uint8_t op, uint32_t a, uint32_t b, size_t pos)
{
    sc_script *s = p->s;
    if (!grow(p, (void **)&s->code, &p->cap_code, s->n_code, sizeof *s->code, SC__SCRIPT_MAX_CODE,
              "instructions"))
        return false;
    s->code[s->n_code++] = (sc__script_ins){op, a, b, (uint32_t)pos};
    p->sp += effect(op, b);
    if (p->sp > (int64_t)s->max_stack)
        s->max_stack = (uint32_t)p->sp;
    if (s->max_stack > SC__SCRIPT_MAX_STACK)
        return fail(p, SC_ELIMIT, pos, "script too complex: more than %d pending values",
                    SC__SCRIPT_MAX_STACK);
    return true;
}

static bool emit_const(parser *p, sc_script_value v, size_t pos)
{
    sc_script *s = p->s;
    if (!grow(p, (void **)&s->consts, &p->cap_consts, s->n_consts, sizeof *s->consts,
              SC__SCRIPT_MAX_CONSTS, "constants"))
        return false;
    s->consts[s->n_consts] = v;
    return emit(p, SC__OP_CONST, s->n_consts++, 0, pos);
}

static bool emit_var(parser *p, sc_script_var_kind kind, const char *name, size_t len, size_t pos)
{
    sc_script *s = p->s;
    uint32_t i = 0;
    for (; i < s->n_vars; i++)
        if (s->vars[i].kind == kind && strlen(s->vars[i].name) == len &&
            !memcmp(s->vars[i].name, name, len))
            break;
    if (i == s->n_vars) {
        if (!grow(p, (void **)&s->vars, &p->cap_vars, s->n_vars, sizeof *s->vars,
                  SC__SCRIPT_MAX_VARS, "variables"))
            return false;
        char *copy = sc_arena_strndup(p->a, name, len);
        if (!copy)
            return fail(p, p->a->over_budget ? SC_ELIMIT : SC_ENOMEM, pos, "out of memory");
        s->vars[s->n_vars++] = (sc_script_var){kind, copy};
    }
    return emit(p, SC__OP_VAR, i, 0, pos);
}

/* ---- grammar ---- */

static bool parse_expr(parser *p);

/* The string of a T_STR token (quotes stripped), borrowed from the source. */
static sc_slice str_of(const parser *p)
{
    return sc_slice_make(p->src + p->t.pos + 1, p->t.len - 2);
}

static bool parse_call(parser *p, const char *name, size_t pos)
{
    const sc__script_fn_entry *f = NULL;
    for (size_t i = 0; i < p->env->n; i++)
        if (!strcmp(p->env->fns[i].name, name))
            f = &p->env->fns[i];
    if (!f)
        return fail(p, SC_EPARSE, pos, "unknown function [%s]", name);
    if (!lex(p)) /* ( */
        return false;
    uint32_t argc = 0;
    if (!is_op(p, ")")) {
        for (;;) {
            if (argc == SC__SCRIPT_MAX_ARGS)
                return fail(p, SC_EPARSE, p->t.pos, "too many arguments to [%s]", name);
            if (!parse_expr(p))
                return false;
            argc++;
            if (!is_op(p, ","))
                break;
            if (!lex(p))
                return false;
        }
    }
    if (!expect(p, ")"))
        return false;
    if (argc < f->min_args || argc > f->max_args)
        return fail(p, SC_EPARSE, pos, "[%s] takes %u to %u arguments, not %u", name, f->min_args,
                    f->max_args, argc);
    sc_script *s = p->s;
    uint32_t i = 0;
    for (; i < s->n_fns; i++)
        if (s->fns[i] == f)
            break;
    if (i == s->n_fns) {
        if (!grow(p, (void **)&s->fns, &p->cap_fns, s->n_fns, sizeof *s->fns, SC__SCRIPT_MAX_FNS,
                  "functions"))
            return false;
        s->fns[s->n_fns++] = f;
    }
    return emit(p, SC__OP_CALL, i, argc, pos);
}

/* params.x / params['x'] */
static bool parse_params(parser *p, size_t pos)
{
    if (!lex(p))
        return false;
    if (is_op(p, ".")) {
        if (!lex(p))
            return false;
        if (p->t.kind != T_IDENT)
            return fail(p, SC_EPARSE, p->t.pos, "expected a parameter name after 'params.'");
        size_t at = p->t.pos, len = p->t.len;
        if (!lex(p))
            return false;
        return emit_var(p, SC_SCRIPT_VAR_PARAM, p->src + at, len, pos);
    }
    if (is_op(p, "[")) {
        if (!lex(p))
            return false;
        if (p->t.kind != T_STR)
            return fail(p, SC_EPARSE, p->t.pos, "expected a quoted parameter name in params[...]");
        sc_slice n = str_of(p);
        if (!lex(p) || !expect(p, "]"))
            return false;
        return emit_var(p, SC_SCRIPT_VAR_PARAM, (const char *)n.ptr, n.len, pos);
    }
    return fail(p, SC_EPARSE, p->t.pos, "expected '.' or '[' after 'params'");
}

/* doc['f'].value / .size() / .empty / .isEmpty() */
static bool parse_doc(parser *p, size_t pos)
{
    if (!lex(p) || !expect(p, "["))
        return false;
    if (p->t.kind != T_STR)
        return fail(p, SC_EPARSE, p->t.pos, "expected a quoted field name in doc[...]");
    sc_slice f = str_of(p);
    if (!lex(p) || !expect(p, "]") || !expect(p, "."))
        return false;
    sc_script_var_kind kind;
    bool call = false;
    if (is_ident(p, "value")) {
        kind = SC_SCRIPT_VAR_DOC_VALUE;
    } else if (is_ident(p, "empty")) {
        kind = SC_SCRIPT_VAR_DOC_EMPTY;
    } else if (is_ident(p, "isEmpty")) {
        kind = SC_SCRIPT_VAR_DOC_EMPTY;
        call = true;
    } else if (is_ident(p, "size")) {
        kind = SC_SCRIPT_VAR_DOC_SIZE;
        call = true;
    } else {
        return fail(p, SC_EPARSE, p->t.pos,
                    "expected value, size(), empty or isEmpty() after doc[...]");
    }
    if (!lex(p))
        return false;
    if (call && (!expect(p, "(") || !expect(p, ")")))
        return false;
    return emit_var(p, kind, (const char *)f.ptr, f.len, pos);
}

/* An identifier: a literal, params, doc, Math constants, a (dotted) function call, or a
 * bare variable. */
static bool parse_ident(parser *p)
{
    size_t pos = p->t.pos;
    if (is_ident(p, "true") || is_ident(p, "false")) {
        bool b = is_ident(p, "true");
        return lex(p) && emit_const(p, sc_script_bool(b), pos);
    }
    if (is_ident(p, "null"))
        return lex(p) && emit_const(p, sc_script_null(), pos);
    if (is_ident(p, "params"))
        return parse_params(p, pos);
    if (is_ident(p, "doc"))
        return parse_doc(p, pos);
    char name[SC__SCRIPT_NAME_MAX];
    size_t n = 0;
    for (;;) {
        if (p->t.kind != T_IDENT)
            return fail(p, SC_EPARSE, p->t.pos, "expected a name");
        if (n + p->t.len + 1 >= sizeof name)
            return fail(p, SC_EPARSE, p->t.pos, "name too long");
        memcpy(name + n, p->src + p->t.pos, p->t.len);
        n += p->t.len;
        name[n] = '\0';
        if (!lex(p))
            return false;
        if (!is_op(p, "."))
            break;
        name[n++] = '.';
        if (!lex(p))
            return false;
    }
    if (is_op(p, "("))
        return parse_call(p, name, pos);
    if (!strcmp(name, "Math.PI"))
        return emit_const(p, sc_script_double(M_PI), pos);
    if (!strcmp(name, "Math.E"))
        return emit_const(p, sc_script_double(M_E), pos);
    if (strchr(name, '.'))
        return fail(p, SC_EPARSE, pos, "unknown field [%s]", name);
    return emit_var(p, SC_SCRIPT_VAR_PARAM, name, n, pos);
}

static bool parse_primary(parser *p)
{
    size_t pos = p->t.pos;
    switch (p->t.kind) {
    case T_NUM: {
        sc_script_value v = p->t.num;
        return lex(p) && emit_const(p, v, pos);
    }
    case T_STR: {
        sc_script_value v = {.type = SC_SCRIPT_STRING, .s = str_of(p)};
        return lex(p) && emit_const(p, v, pos);
    }
    case T_IDENT: return parse_ident(p);
    case T_OP:
        if (is_op(p, "(")) {
            if (!lex(p) || !parse_expr(p))
                return false;
            return expect(p, ")");
        }
        return fail(p, SC_EPARSE, pos, "unexpected '%s'", p->t.op);
    default: return fail(p, SC_EPARSE, pos, "unexpected end of script");
    }
}

/* Whether the parenthesis at the current token opens a cast: ( double|long|int|float ) */
static bool cast_type(parser *p, uint8_t *op)
{
    if (!is_op(p, "("))
        return false;
    size_t i = p->pos;
    while (i < p->len && isspace((unsigned char)p->src[i]))
        i++;
    static const char *const types[] = {"double", "float", "long", "int", "short", "byte", NULL};
    for (const char *const *t = types; *t; t++) {
        size_t n = strlen(*t);
        if (i + n <= p->len && !memcmp(p->src + i, *t, n)) {
            size_t j = i + n;
            while (j < p->len && isspace((unsigned char)p->src[j]))
                j++;
            if (j < p->len && p->src[j] == ')') {
                *op = (*t)[0] == 'd' || (*t)[0] == 'f' ? SC__OP_TO_DOUBLE : SC__OP_TO_LONG;
                p->pos = j + 1;
                return true;
            }
        }
    }
    return false;
}

static bool parse_unary(parser *p)
{
    if (++p->depth > SC__SCRIPT_MAX_DEPTH)
        return fail(p, SC_ELIMIT, p->t.pos, "script nested too deeply (more than %d levels)",
                    SC__SCRIPT_MAX_DEPTH);
    size_t pos = p->t.pos;
    bool ok;
    uint8_t cast;
    if (is_op(p, "!") || is_op(p, "-") || is_op(p, "+")) {
        char op = p->t.op[0];
        ok = lex(p) && parse_unary(p);
        if (ok && op != '+')
            ok = emit(p, op == '!' ? SC__OP_NOT : SC__OP_NEG, 0, 0, pos);
    } else if (cast_type(p, &cast)) {
        ok = lex(p) && parse_unary(p) && emit(p, cast, 0, 0, pos);
    } else {
        ok = parse_primary(p);
    }
    p->depth--;
    return ok;
}

typedef struct binop {
    const char *tok;
    uint8_t op;
} binop;

static const binop levels[4][5] = {
    {{"==", SC__OP_EQ}, {"!=", SC__OP_NE}, {NULL, 0}},
    {{"<", SC__OP_LT}, {"<=", SC__OP_LE}, {">", SC__OP_GT}, {">=", SC__OP_GE}, {NULL, 0}},
    {{"+", SC__OP_ADD}, {"-", SC__OP_SUB}, {NULL, 0}},
    {{"*", SC__OP_MUL}, {"/", SC__OP_DIV}, {"%", SC__OP_MOD}, {NULL, 0}},
};

/* Left-associative binary levels: 0 equality .. 3 multiplicative. */
static bool parse_level(parser *p, int level)
{
    if (level == 4)
        return parse_unary(p);
    if (!parse_level(p, level + 1))
        return false;
    for (;;) {
        const binop *hit = NULL;
        for (const binop *b = levels[level]; b->tok && p->t.kind == T_OP; b++)
            if (!strcmp(p->t.op, b->tok))
                hit = b;
        if (!hit)
            return true;
        size_t pos = p->t.pos;
        if (!lex(p) || !parse_level(p, level + 1) || !emit(p, hit->op, 0, 0, pos))
            return false;
    }
}

/* a && b (and = true) / a || b: short-circuit, the result a boolean. */
static bool parse_logic(parser *p, bool and)
{
    if (!(and? parse_level(p, 0) : parse_logic(p, true)))
        return false;
    while (is_op(p, and? "&&" : "||")) {
        size_t pos = p->t.pos;
        if (!lex(p))
            return false;
        uint32_t jump = p->s->n_code;
        if (!emit(p, and? SC__OP_JF : SC__OP_JT, 0, 0, pos))
            return false;
        if (!(and? parse_level(p, 0) : parse_logic(p, true)) || !emit(p, SC__OP_BOOL, 0, 0, pos))
            return false;
        uint32_t skip = p->s->n_code;
        if (!emit(p, SC__OP_JMP, 0, 0, pos))
            return false;
        p->s->code[jump].a = p->s->n_code;
        p->sp--; /* the short-circuit path has not pushed b */
        if (!emit_const(p, sc_script_bool(!and), pos))
            return false;
        p->s->code[skip].a = p->s->n_code;
    }
    return true;
}

static bool parse_ternary(parser *p)
{
    if (++p->depth > SC__SCRIPT_MAX_DEPTH)
        return fail(p, SC_ELIMIT, p->t.pos, "script nested too deeply (more than %d levels)",
                    SC__SCRIPT_MAX_DEPTH);
    bool ok = parse_logic(p, false);
    if (ok && is_op(p, "?")) {
        size_t pos = p->t.pos;
        uint32_t jf = p->s->n_code;
        ok = lex(p) && emit(p, SC__OP_JF, 0, 0, pos) && parse_ternary(p);
        uint32_t jmp = p->s->n_code;
        ok = ok && expect(p, ":") && emit(p, SC__OP_JMP, 0, 0, pos);
        if (ok) {
            p->s->code[jf].a = p->s->n_code;
            p->sp--; /* the else branch starts without the then branch's value */
            ok = parse_ternary(p);
            p->s->code[jmp].a = p->s->n_code;
        }
    }
    p->depth--;
    return ok;
}

static bool parse_expr(parser *p)
{
    return parse_ternary(p);
}

sc_status sc_script_compile(const sc_script_env *env, sc_slice src, sc_arena *a, sc_script **out,
                            sc_script_error *err)
{
    memset(err, 0, sizeof *err);
    err->pos = -1;
    *out = NULL;
    parser p = {.src = (const char *)src.ptr, .len = src.len, .a = a, .env = env, .err = err};
    if (src.len > SC__SCRIPT_MAX_SRC) {
        fail(&p, SC_ELIMIT, 0, "script longer than %d bytes", SC__SCRIPT_MAX_SRC);
        return p.st;
    }
    p.s = sc_arena_calloc(a, 1, sizeof *p.s);
    if (!p.s)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    if (lex(&p) && is_ident(&p, "return"))
        lex(&p);
    if (p.st == SC_OK && p.t.kind == T_END)
        fail(&p, SC_EPARSE, p.t.pos, "empty script");
    if (p.st == SC_OK && parse_expr(&p)) {
        while (p.st == SC_OK && is_op(&p, ";"))
            lex(&p);
        if (p.st == SC_OK && p.t.kind != T_END)
            fail(&p, SC_EPARSE, p.t.pos,
                 "unexpected '%.*s' after the expression (one expression is supported)",
                 (int)(p.t.len < 20 ? p.t.len : 20), p.src + p.t.pos);
    }
    if (p.st != SC_OK)
        return p.st;
    if (p.sp != 1) {
        snprintf(err->reason, sizeof err->reason, "internal: stack depth %lld at the end",
                 (long long)p.sp);
        return SC_EPARSE;
    }
    *out = p.s;
    return SC_OK;
}

size_t sc_script_n_vars(const sc_script *s)
{
    return s->n_vars;
}

const sc_script_var *sc_script_var_get(const sc_script *s, size_t i)
{
    return i < s->n_vars ? &s->vars[i] : NULL;
}
