/* script_score evaluation (search/score_script.h): per-segment binding of doc-value variables,
 * the vector functions, and Elasticsearch's checks on the result. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "index/docvalues.h"
#include "index/vec_kernels.h"
#include "index/vecfield.h"
#include "search/score_script.h"

#define MAX_VEC_FIELDS 8

typedef struct vec_slot {
    sc_slice name;
    sc_status st; /* SC_OK: vf valid; SC_ENOTFOUND: no vectors here; SC_EINVAL: not a vector */
    sc_vec_field vf;
} vec_slot;

struct sc_score_script_seg {
    const sc_score_script *ss;
    const sc_segment *seg;
    const sc_vec_kernels *k;
    sc_script_value *vals;
    sc_dv_numeric *dv;
    bool *has_dv;
    uint32_t doc;
    vec_slot vecs[MAX_VEC_FIELDS];
    size_t n_vecs;
};

static const vec_slot *vec_field(sc_score_script_seg *st, sc_slice name)
{
    for (size_t i = 0; i < st->n_vecs; i++)
        if (sc_slice_eq(st->vecs[i].name, name))
            return &st->vecs[i];
    vec_slot tmp, *s = st->n_vecs < MAX_VEC_FIELDS ? &st->vecs[st->n_vecs++] : &tmp;
    memset(s, 0, sizeof *s);
    s->name = name;
    const sc_field_info *fi = sc_segment_field(st->seg, name);
    if (!fi)
        s->st = SC_ENOTFOUND;
    else if (fi->kind != SC_FIELD_VECTOR)
        s->st = SC_EINVAL;
    else
        s->st = sc_segment_vectors(st->seg, fi, &s->vf) == SC_OK ? SC_OK : SC_ENOTFOUND;
    if (s == &tmp) { /* more fields than slots: look up every time */
        st->vecs[MAX_VEC_FIELDS - 1] = tmp;
        return &st->vecs[MAX_VEC_FIELDS - 1];
    }
    return s;
}

/* The query vector and the doc's vector of the field named by args[1]. With `packed` (NULL:
 * not allowed), a bit field also takes a query of dims / 8 bytes (*packed set then). */
static sc_status vec_args(void *call_ctx, const sc_script_value *args, const char *fn,
                          const sc_score_script_vec **q, const float **v, sc_vec_elem *elem,
                          bool *packed, sc_script_error *err)
{
    sc_score_script_seg *st = call_ctx;
    if (args[0].type != SC_SCRIPT_OBJECT || args[0].obj_kind != SC_SCORE_SCRIPT_VEC)
        return sc_script_fail(err, "[%s] needs a query vector (an array of numbers in params) first", fn);
    if (args[1].type != SC_SCRIPT_STRING)
        return sc_script_fail(err, "[%s] needs a field name second", fn);
    *q = args[0].obj;
    const vec_slot *s = vec_field(st, args[1].s);
    if (s->st == SC_EINVAL)
        return sc_script_fail(err, "field [%.*s] is not a dense_vector field", (int)args[1].s.len,
                        (const char *)args[1].s.ptr);
    if (s->st != SC_OK)
        return sc_script_fail(err, "A document doesn't have a value for a vector field [%.*s]!",
                        (int)args[1].s.len, (const char *)args[1].s.ptr);
    const sc_vec_field *vf = &s->vf;
    if (packed)
        *packed = vf->p.elem == SC_VEC_ELEM_BIT && (*q)->dims * 8 == vf->p.dims;
    if ((*q)->dims != vf->p.dims && !(packed && *packed))
        return sc_script_fail(err,
                        "The query vector has a different number of dimensions [%u] than the "
                        "document vectors [%u].",
                        (*q)->dims, vf->p.dims);
    size_t lo = 0, hi = vf->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (vf->docs[mid] < st->doc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == vf->n || vf->docs[lo] != st->doc)
        return sc_script_fail(err, "A document doesn't have a value for a vector field [%.*s]!",
                        (int)args[1].s.len, (const char *)args[1].s.ptr);
    *v = vf->vecs + (size_t)lo * vf->p.dims;
    *elem = vf->p.elem;
    return SC_OK;
}

static sc_status v_cosine(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                          sc_script_error *err)
{
    (void)n;
    const sc_score_script_vec *q;
    const float *v;
    sc_vec_elem elem;
    SC_TRY(vec_args(ctx, args, "cosineSimilarity", &q, &v, &elem, NULL, err));
    sc_score_script_seg *st = ctx;
    *out = sc_script_double(sc_vec_cos_f32(st->k, q->v, v, q->dims));
    return SC_OK;
}

static sc_status v_dot(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                       sc_script_error *err)
{
    (void)n;
    const sc_score_script_vec *q;
    const float *v;
    sc_vec_elem elem;
    SC_TRY(vec_args(ctx, args, "dotProduct", &q, &v, &elem, NULL, err));
    sc_score_script_seg *st = ctx;
    *out = sc_script_double(st->k->dot_f32(q->v, v, q->dims));
    return SC_OK;
}

static sc_status v_l2(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                      sc_script_error *err)
{
    (void)n;
    const sc_score_script_vec *q;
    const float *v;
    sc_vec_elem elem;
    SC_TRY(vec_args(ctx, args, "l2norm", &q, &v, &elem, NULL, err));
    sc_score_script_seg *st = ctx;
    *out = sc_script_double(sqrtf(st->k->l2sq_f32(q->v, v, q->dims)));
    return SC_OK;
}

static sc_status v_l1(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                      sc_script_error *err)
{
    (void)n;
    const sc_score_script_vec *q;
    const float *v;
    sc_vec_elem elem;
    SC_TRY(vec_args(ctx, args, "l1norm", &q, &v, &elem, NULL, err));
    float s = 0;
    for (uint32_t i = 0; i < q->dims; i++)
        s += fabsf(q->v[i] - v[i]);
    *out = sc_script_double(s);
    return SC_OK;
}

static sc_status v_hamming(void *ctx, const sc_script_value *args, size_t n, sc_script_value *out,
                           sc_script_error *err)
{
    (void)n;
    const sc_score_script_vec *q;
    const float *v;
    sc_vec_elem elem;
    bool packed;
    SC_TRY(vec_args(ctx, args, "hamming", &q, &v, &elem, &packed, err));
    if (elem == SC_VEC_ELEM_FLOAT)
        return sc_script_fail(err, "hamming distance is only supported for byte or bit vectors");
    int64_t d = 0;
    if (packed) { /* Elasticsearch's form: the query's bytes, most significant bit first */
        for (uint32_t i = 0; i < q->dims; i++) {
            if (q->v[i] != rintf(q->v[i]) || q->v[i] < -128 || q->v[i] > 127)
                return sc_script_fail(err, "hamming needs a query vector of bytes (-128..127)");
            uint8_t x = (uint8_t)(int8_t)q->v[i];
            for (int b = 0; b < 8; b++)
                d += ((x >> (7 - b)) & 1) != (v[i * 8 + (uint32_t)b] != 0);
        }
        *out = sc_script_long(d);
        return SC_OK;
    }
    for (uint32_t i = 0; i < q->dims; i++) {
        if (elem == SC_VEC_ELEM_BIT) {
            d += (q->v[i] != 0) != (v[i] != 0);
        } else {
            if (q->v[i] != rintf(q->v[i]) || q->v[i] < -128 || q->v[i] > 127)
                return sc_script_fail(err, "hamming needs a query vector of bytes (-128..127)");
            uint8_t x = (uint8_t)(int8_t)q->v[i] ^ (uint8_t)(int8_t)v[i];
            d += __builtin_popcount(x);
        }
    }
    *out = sc_script_long(d);
    return SC_OK;
}

static sc_script_env *env;

static void env_build(void)
{
    sc_script_env *e = sc_script_env_new();
    if (!e)
        return;
    if (sc_script_env_add(e, "cosineSimilarity", 2, 2, v_cosine) != SC_OK ||
        sc_script_env_add(e, "dotProduct", 2, 2, v_dot) != SC_OK ||
        sc_script_env_add(e, "l1norm", 2, 2, v_l1) != SC_OK ||
        sc_script_env_add(e, "l2norm", 2, 2, v_l2) != SC_OK ||
        sc_script_env_add(e, "hamming", 2, 2, v_hamming) != SC_OK) {
        sc_script_env_free(e);
        return;
    }
    env = e;
}

const sc_script_env *sc_score_script_env(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, env_build);
    return env;
}

sc_status sc_score_script_seg_open(sc_arena *a, const sc_score_script *ss, const sc_segment *seg,
                                   sc_score_script_seg **out)
{
    size_t n = sc_script_n_vars(ss->script), cap = n ? n : 1;
    sc_score_script_seg *st = sc_arena_calloc(a, 1, sizeof *st);
    if (!st || !(st->vals = sc_arena_calloc(a, cap, sizeof *st->vals)) ||
        !(st->dv = sc_arena_calloc(a, cap, sizeof *st->dv)) ||
        !(st->has_dv = sc_arena_calloc(a, cap, sizeof *st->has_dv)))
        return SC_ENOMEM;
    st->ss = ss;
    st->seg = seg;
    st->k = sc_vec_kernels_get(SC_VEC_IMPL_AUTO);
    for (size_t i = 0; i < n; i++) {
        st->vals[i] = ss->vals[i];
        if (sc_script_var_get(ss->script, i)->kind == SC_SCRIPT_VAR_PARAM)
            continue;
        const sc_field_info *fi = sc_segment_field(seg, ss->fields[i]);
        st->has_dv[i] =
            fi && fi->kind == SC_FIELD_NUMERIC && sc_dv_numeric_open(seg, fi, &st->dv[i]) == SC_OK;
    }
    *out = st;
    return SC_OK;
}

static void bind_doc(sc_score_script_seg *st, size_t i, uint32_t doc)
{
    const sc_score_script *ss = st->ss;
    int64_t raw = 0;
    uint32_t count = st->has_dv[i] ? sc_dv_numeric_count(&st->dv[i], doc) : 0;
    switch (sc_script_var_get(ss->script, i)->kind) {
    case SC_SCRIPT_VAR_DOC_SIZE: st->vals[i] = sc_script_long(count); break;
    case SC_SCRIPT_VAR_DOC_EMPTY: st->vals[i] = sc_script_bool(count == 0); break;
    case SC_SCRIPT_VAR_DOC_VALUE:
        if (!count || !sc_dv_numeric_first(&st->dv[i], doc, &raw)) {
            st->vals[i] = sc_script_null();
        } else {
            sc_score_function f = {.value = ss->dv_value[i], .scaling = ss->dv_scaling[i]};
            st->vals[i] = ss->dv_value[i] == SC_SF_VALUE_LONG
                              ? sc_script_long(raw)
                              : sc_script_double(sc_sf_value_of(&f, raw));
        }
        break;
    default: break;
    }
}

sc_status sc_score_script_run(sc_score_script_seg *st, uint32_t doc, float score, double *out,
                              sc_script_error *err)
{
    const sc_score_script *ss = st->ss;
    size_t n = sc_script_n_vars(ss->script);
    st->doc = doc;
    for (size_t i = 0; i < n; i++)
        if (ss->fields[i].len)
            bind_doc(st, i, doc);
    if (ss->score_var >= 0)
        st->vals[ss->score_var] = sc_script_double(score);
    sc_script_value v;
    SC_TRY(sc_script_eval(ss->script, st->vals, st, &v, err));
    double d;
    if (!sc_script_number(&v, &d))
        return sc_script_fail(err, "script_score script must return a number");
    if (isnan(d) || d < 0)
        return sc_script_fail(err,
                        "script score function must not produce negative scores, but got: [%g]", d);
    *out = d;
    return SC_OK;
}
