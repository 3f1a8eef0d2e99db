/* Runtime fields (runtime.h): the `emit` function and the per-segment column a script's emitted
 * values make, read back through the ordinary doc values readers. */
#include "search/runtime.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One doc's evaluation: what emit appends to. */
typedef struct emit_ctx {
    const sc_runtime_field *rf;
    int64_t nums[SC_RUNTIME_MAX_VALUES];
    sc_slice strs[SC_RUNTIME_MAX_VALUES];
    size_t n;
} emit_ctx;

const char *sc_runtime_type_name(sc_runtime_type t)
{
    static const char *const names[] = {"long", "double", "date", "boolean", "keyword"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static sc_status fn_emit(void *call_ctx, const sc_script_value *args, size_t n,
                         sc_script_value *out, sc_script_error *err)
{
    (void)n;
    emit_ctx *e = call_ctx;
    if (!e || !e->rf)
        return sc_script_fail(err, "emit can only be called from a runtime field's script");
    const sc_runtime_field *rf = e->rf;
    if (e->n == SC_RUNTIME_MAX_VALUES)
        return sc_script_fail(err,
                        "Runtime field [%s] is emitting [%d] values while the maximum number of "
                        "values allowed is [%d]",
                        rf->name, SC_RUNTIME_MAX_VALUES + 1, SC_RUNTIME_MAX_VALUES);
    const sc_script_value *v = &args[0];
    bool ok = false;
    switch (rf->type) {
    case SC_RUNTIME_LONG:
    case SC_RUNTIME_DATE:
        if ((ok = v->type == SC_SCRIPT_LONG))
            e->nums[e->n] = v->l;
        break;
    case SC_RUNTIME_DOUBLE:
        if (v->type == SC_SCRIPT_LONG || v->type == SC_SCRIPT_DOUBLE) {
            double d = v->type == SC_SCRIPT_LONG ? (double)v->l : v->d;
            int64_t bits;
            memcpy(&bits, &d, sizeof bits);
            e->nums[e->n] = bits ^ ((bits >> 63) & INT64_MAX); /* the sortable-long encoding */
            ok = true;
        }
        break;
    case SC_RUNTIME_BOOLEAN:
        if ((ok = v->type == SC_SCRIPT_BOOL))
            e->nums[e->n] = v->b ? 1 : 0;
        break;
    case SC_RUNTIME_KEYWORD:
        if ((ok = v->type == SC_SCRIPT_STRING))
            e->strs[e->n] = v->s;
        break;
    }
    if (!ok)
        return sc_script_fail(err, "emit of a [%s] runtime field [%s] takes a %s, got a %s",
                        sc_runtime_type_name(rf->type), rf->name,
                        rf->type == SC_RUNTIME_KEYWORD   ? "String"
                        : rf->type == SC_RUNTIME_BOOLEAN ? "boolean"
                        : rf->type == SC_RUNTIME_DOUBLE  ? "number"
                                                         : "long (cast a double with (long))",
                        sc_script_type_name(v->type));
    e->n++;
    *out = sc_script_null();
    return SC_OK;
}

static sc_script_env *env;

static void env_build(void)
{
    sc_script_env *e = sc_script_env_new();
    if (e && sc_script_env_add(e, "emit", 1, 1, fn_emit) != SC_OK) {
        sc_script_env_free(e);
        return;
    }
    env = e;
}

const sc_script_env *sc_runtime_env(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, env_build);
    return env;
}

/* One variable's reader in the segment. */
typedef struct var_reader {
    bool has_num, has_ss;
    sc_dv_numeric num;
    sc_dv_sorted_set ss;
} var_reader;

static void bind(const sc_runtime_var *rv, const sc_script_var *sv, const var_reader *r,
                 uint32_t doc, sc_script_value *out)
{
    uint32_t count = r->has_num  ? sc_dv_numeric_count(&r->num, doc)
                     : r->has_ss ? sc_dv_sorted_set_count(&r->ss, doc)
                                 : 0;
    switch (sv->kind) {
    case SC_SCRIPT_VAR_DOC_SIZE: *out = sc_script_long(count); return;
    case SC_SCRIPT_VAR_DOC_EMPTY: *out = sc_script_bool(count == 0); return;
    case SC_SCRIPT_VAR_DOC_VALUE: break;
    default: *out = rv->param; return;
    }
    *out = sc_script_null();
    if (!count)
        return;
    if (r->has_ss) {
        uint64_t ord;
        if (sc_dv_sorted_set_ords(&r->ss, doc, &ord, 1) == 1)
            *out = (sc_script_value){.type = SC_SCRIPT_STRING,
                                     .s = sc_dv_sorted_set_term(&r->ss, ord)};
        return;
    }
    int64_t raw;
    if (!sc_dv_numeric_first(&r->num, doc, &raw))
        return;
    if (rv->value == SC_SF_VALUE_LONG) {
        *out = sc_script_long(raw);
        return;
    }
    sc_score_function f = {.value = rv->value, .scaling = rv->scaling};
    *out = sc_script_double(sc_sf_value_of(&f, raw));
}

static sc_status oom(sc_arena *a)
{
    return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
}

static int i64_cmp(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* Grows the value array (cells, n in use) to hold `need`. */
static sc_status grow(sc_arena *a, void **p, size_t *cap, size_t n, size_t need, size_t cell)
{
    if (need <= *cap)
        return SC_OK;
    size_t c = *cap * 2 > need ? *cap * 2 : need;
    void *q = sc_arena_alloc(a, c * cell);
    if (!q)
        return oom(a);
    if (n)
        memcpy(q, *p, n * cell);
    *p = q;
    *cap = c;
    return SC_OK;
}

/* The fast path of a double field whose script is arithmetic over single-valued double doc
 * values (sc_script_doubles_ok): per window of docs, each variable decoded in one batch read,
 * the program run over the window's arrays. Same values as the interpreter, bit for bit; no doc
 * can fail (every doc has every value). */
enum {
    WIN = 512 /* rows per program run: the variables and scratch of a window stay in L1 */
};

struct sc_runtime_doubles {
    const sc_runtime_field *rf;
    const var_reader *rd;
    size_t nv;
    int64_t *raw;
    double *dv, *scratch;
    const double **vars;
};

/* The evaluator over rd's readers, or *out NULL when the fast path does not apply. */
static sc_status doubles_new(sc_arena *a, const sc_runtime_field *rf, const var_reader *rd,
                             sc_runtime_doubles **out)
{
    *out = NULL;
    size_t nv = sc_script_n_vars(rf->script);
    bool fast = rf->type == SC_RUNTIME_DOUBLE && sc_script_doubles_ok(rf->script, "emit");
    for (size_t i = 0; fast && i < nv; i++)
        fast = rd[i].has_num && sc_dv_numeric_is_single(&rd[i].num) &&
               rf->vars[i].value != SC_SF_VALUE_LONG;
    if (!fast)
        return SC_OK;
    sc_runtime_doubles *d = sc_arena_calloc(a, 1, sizeof *d);
    if (!d)
        return oom(a);
    *d = (sc_runtime_doubles){.rf = rf, .rd = rd, .nv = nv};
    d->raw = sc_arena_alloc(a, WIN * sizeof *d->raw);
    d->dv = sc_arena_alloc(a, (nv ? nv : 1) * WIN * sizeof *d->dv);
    d->scratch =
        sc_arena_alloc(a, (sc_script_doubles_scratch(rf->script) + 1) * WIN * sizeof *d->scratch);
    d->vars = sc_arena_alloc(a, (nv ? nv : 1) * sizeof *d->vars);
    if (!d->raw || !d->dv || !d->scratch || !d->vars)
        return oom(a);
    *out = d;
    return SC_OK;
}

void sc_runtime_doubles_eval(sc_runtime_doubles *d, const uint32_t *docs, size_t n, double *out)
{
    const sc_runtime_field *rf = d->rf;
    for (size_t off = 0; off < n; off += WIN) {
        size_t k = n - off < WIN ? n - off : WIN;
        for (size_t i = 0; i < d->nv; i++) {
            double *x = d->dv + i * WIN;
            const int64_t *raw = d->raw;
            sc_dv_numeric_get_single_batch(&d->rd[i].num, docs + off, k, d->raw);
            if (rf->vars[i].value == SC_SF_VALUE_SCALED) {
                double f = rf->vars[i].scaling;
                for (size_t j = 0; j < k; j++)
                    x[j] = (double)raw[j] / f;
            } else { /* the sortable-long encoding of doubles */
                for (size_t j = 0; j < k; j++) {
                    int64_t b = raw[j] ^ ((raw[j] >> 63) & INT64_MAX);
                    memcpy(&x[j], &b, sizeof b);
                }
            }
            d->vars[i] = x;
        }
        sc_script_eval_doubles(rf->script, d->vars, k, out + off, d->scratch);
    }
}

/* The whole column of the fast path: every doc through the evaluator, stored in the sortable
 * encoding. */
static sc_status doubles_column(sc_arena *a, sc_runtime_doubles *d, const sc_segment *seg,
                                sc_dv_numeric *num)
{
    uint32_t n_docs = sc_segment_n_docs(seg);
    int64_t *out = sc_arena_alloc(a, ((size_t)n_docs + 1) * sizeof *out);
    uint32_t *docs = sc_arena_alloc(a, WIN * sizeof *docs);
    double *res = sc_arena_alloc(a, WIN * sizeof *res);
    if (!out || !docs || !res)
        return oom(a);
    for (uint32_t d0 = 0; d0 < n_docs; d0 += WIN) {
        uint32_t k = n_docs - d0 < WIN ? n_docs - d0 : WIN;
        for (uint32_t j = 0; j < k; j++)
            docs[j] = d0 + j;
        sc_runtime_doubles_eval(d, docs, k, res);
        for (uint32_t j = 0; j < k; j++) {
            int64_t b;
            memcpy(&b, &res[j], sizeof b);
            out[d0 + j] = b ^ ((b >> 63) & INT64_MAX);
        }
    }
    sc_dv_numeric_wrap(n_docs, out, n_docs, NULL, num);
    return SC_OK;
}

/* Opens the doc values of rf's variables in seg (rd: one per variable). */
static sc_status open_vars(const sc_runtime_field *rf, const sc_segment *seg, var_reader *rd)
{
    size_t nv = sc_script_n_vars(rf->script);
    for (size_t i = 0; i < nv; i++) {
        const sc_runtime_var *rv = &rf->vars[i];
        if (!rv->field.len)
            continue;
        const sc_field_info *fi = sc_segment_field(seg, rv->field);
        if (!fi)
            continue;
        sc_status st;
        if (rv->keyword) {
            st = sc_dv_sorted_set_open(seg, fi, &rd[i].ss);
            rd[i].has_ss = st == SC_OK;
        } else {
            st = sc_dv_numeric_open(seg, fi, &rd[i].num);
            rd[i].has_num = st == SC_OK;
        }
        if (st != SC_OK && st != SC_ENOTFOUND)
            return st;
    }
    return SC_OK;
}

sc_status sc_runtime_doubles_open(sc_arena *a, const sc_runtime_field *rf, const sc_segment *seg,
                                  sc_runtime_doubles **out)
{
    *out = NULL;
    size_t nv = sc_script_n_vars(rf->script);
    var_reader *rd = sc_arena_calloc(a, nv ? nv : 1, sizeof *rd);
    if (!rd)
        return oom(a);
    SC_TRY(open_vars(rf, seg, rd));
    return doubles_new(a, rf, rd, out);
}

sc_status sc_runtime_column(sc_arena *a, const sc_runtime_field *rf, const sc_segment *seg,
                            bool *is_num, sc_dv_numeric *num, sc_dv_sorted_set *ss,
                            uint64_t **failed, sc_script_error *err)
{
    *failed = NULL;
    size_t nv = sc_script_n_vars(rf->script);
    uint32_t n_docs = sc_segment_n_docs(seg);
    var_reader *rd = sc_arena_calloc(a, nv ? nv : 1, sizeof *rd);
    sc_script_value *vals = sc_arena_calloc(a, nv ? nv : 1, sizeof *vals);
    emit_ctx *e = sc_arena_calloc(a, 1, sizeof *e);
    uint32_t *offs = sc_arena_alloc(a, ((size_t)n_docs + 3) * sizeof *offs);
    if (!rd || !vals || !e || !offs)
        return oom(a);
    SC_TRY(open_vars(rf, seg, rd));
    sc_runtime_doubles *fast;
    SC_TRY(doubles_new(a, rf, rd, &fast));
    if (fast) {
        *is_num = true;
        return doubles_column(a, fast, seg, num);
    }
    bool keyword = rf->type == SC_RUNTIME_KEYWORD;
    size_t cell = keyword ? sizeof(sc_slice) : sizeof(int64_t);
    size_t cap = (size_t)n_docs + 1, n = 0;
    void *out = sc_arena_alloc(a, cap * cell);
    if (!out)
        return oom(a);
    bool single = true;
    e->rf = rf;
    /* single-valued numeric doc accesses are decoded a window of docs at a time (one tight
     * loop per variable instead of two reader calls per doc) */
    uint32_t *win_docs = sc_arena_alloc(a, WIN * sizeof *win_docs);
    int64_t *win_raw = sc_arena_alloc(a, (nv ? nv : 1) * WIN * sizeof *win_raw);
    bool *batched = sc_arena_calloc(a, nv ? nv : 1, sizeof *batched);
    if (!win_docs || !win_raw || !batched)
        return oom(a);
    for (size_t i = 0; i < nv; i++)
        batched[i] = rd[i].has_num && sc_dv_numeric_is_single(&rd[i].num) &&
                     sc_script_var_get(rf->script, i)->kind == SC_SCRIPT_VAR_DOC_VALUE;
    for (uint32_t d = 0; d < n_docs; d++) {
        uint32_t w = d % WIN;
        if (w == 0) {
            uint32_t k = n_docs - d < WIN ? n_docs - d : WIN;
            for (uint32_t j = 0; j < k; j++)
                win_docs[j] = d + j;
            for (size_t i = 0; i < nv; i++)
                if (batched[i])
                    sc_dv_numeric_get_single_batch(&rd[i].num, win_docs, k, win_raw + i * WIN);
        }
        for (size_t i = 0; i < nv; i++) {
            if (!batched[i]) {
                bind(&rf->vars[i], sc_script_var_get(rf->script, i), &rd[i], d, &vals[i]);
                continue;
            }
            int64_t raw = win_raw[i * WIN + w];
            const sc_runtime_var *rv = &rf->vars[i];
            if (rv->value == SC_SF_VALUE_LONG) {
                vals[i] = sc_script_long(raw);
            } else {
                sc_score_function f = {.value = rv->value, .scaling = rv->scaling};
                vals[i] = sc_script_double(sc_sf_value_of(&f, raw));
            }
        }
        e->n = 0;
        sc_script_value ret;
        sc_script_error derr;
        sc_status st = sc_script_eval(rf->script, vals, e, &ret, &derr);
        if (st == SC_EINVAL) {
            if (!*failed) {
                *failed = sc_arena_calloc(a, ((size_t)n_docs + 63) / 64, sizeof **failed);
                if (!*failed)
                    return oom(a);
                *err = derr;
            }
            (*failed)[d / 64] |= UINT64_C(1) << (d % 64);
            e->n = 0;
        } else if (st != SC_OK) {
            return st;
        }
        offs[d] = (uint32_t)n;
        single &= e->n == 1;
        SC_TRY(grow(a, &out, &cap, n, n + e->n + 1, cell));
        if (keyword) {
            memcpy((sc_slice *)out + n, e->strs, e->n * sizeof(sc_slice));
        } else {
            if (e->n > 1)
                qsort(e->nums, e->n, sizeof e->nums[0], i64_cmp);
            memcpy((int64_t *)out + n, e->nums, e->n * sizeof(int64_t));
        }
        n += e->n;
        if (n > UINT32_MAX - SC_RUNTIME_MAX_VALUES)
            return sc_script_fail(err, "runtime field [%s] emitted too many values in one segment",
                            rf->name);
    }
    offs[n_docs] = (uint32_t)n;
    *is_num = !keyword;
    if (keyword)
        return sc_dv_sorted_set_build(a, n_docs, out, offs, ss);
    sc_dv_numeric_wrap(n_docs, out, n, single ? NULL : offs, num);
    return SC_OK;
}
