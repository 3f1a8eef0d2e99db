/* kNN clauses of the search API (dsl.h: sc_dsl_parse_knn) and the `knn` query of the DSL:
 * Elasticsearch 8.x's field / query_vector / k / num_candidates / filter / similarity / boost
 * and rescore_vector (8.18+),
 * checked against the dense_vector mapping (through the env) and turned into SC_QUERY_KNN. */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "api/dsl_internal.h"

#define NUM_CANDIDATES_LIMIT 10000 /* Elasticsearch's NUM_CANDS_LIMIT */

static const char *const knn_keys[] = {
    "field", "query_vector", "k",          "num_candidates", "filter",         "similarity",
    "boost", "_name",        "inner_hits", "rescore_vector", NULL};
static const char *const rescore_keys[] = {"oversample", NULL};

static int hexval(int c)
{
    return isdigit(c)               ? c - '0'
           : (c >= 'a' && c <= 'f') ? c - 'a' + 10
           : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                    : -1;
}

/* A bit query vector (a hex string or an array of dims / 8 bytes) as 0/1 floats, most
 * significant bit first, as the documents' (mapping/vector.c). */
static sc_status bit_query(P *p, const json_t *qv, const sc_vec_params *vp, float **out)
{
    size_t nb = vp->dims / 8;
    bool hex = json_is_string(qv);
    size_t got = hex ? json_string_length(qv) / 2 : json_is_array(qv) ? json_array_size(qv) : 0;
    if ((hex && json_string_length(qv) % 2) || got != nb)
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "the query vector has a different number of dimensions [%zu] than "
                            "the document vectors [%u]",
                            got * 8, vp->dims);
    float *v = sc_arena_alloc(p->a, ((size_t)vp->dims + 1) * sizeof(float));
    if (!v)
        return sc__dsl_oom(p);
    for (size_t i = 0; i < nb; i++) {
        int byte;
        if (hex) {
            const char *s = json_string_value(qv);
            int hi = hexval((unsigned char)s[2 * i]), lo = hexval((unsigned char)s[2 * i + 1]);
            if (hi < 0 || lo < 0)
                return sc__dsl_fail(p, "illegal_argument_exception",
                                    "failed to parse field [query_vector] as a hex string");
            byte = hi * 16 + lo;
        } else {
            const json_t *e = json_array_get(qv, i);
            if (!json_is_integer(e) || json_integer_value(e) < -128 || json_integer_value(e) > 127)
                return sc__dsl_fail(p, "illegal_argument_exception",
                                    "element_type [bit] vectors only support bytes between "
                                    "[-128, 127] at byte [%zu]",
                                    i);
            byte = (int)(uint8_t)(int8_t)json_integer_value(e);
        }
        for (int b = 0; b < 8; b++)
            v[i * 8 + (size_t)b] = (float)((byte >> (7 - b)) & 1);
    }
    *out = v;
    return SC_OK;
}

/* The query vector as floats (a JSON array, or a hex string of bytes for byte vectors). */
static sc_status query_vector(P *p, const json_t *qv, const sc_vec_params *vp, float **out)
{
    if (vp->elem == SC_VEC_ELEM_BIT)
        return bit_query(p, qv, vp, out);
    size_t n = json_is_array(qv)    ? json_array_size(qv)
               : json_is_string(qv) ? json_string_length(qv) / 2
                                    : 0;
    if (!json_is_array(qv) && !(json_is_string(qv) && vp->elem == SC_VEC_ELEM_BYTE))
        return sc__dsl_fail(p, "parsing_exception",
                            "[knn] [query_vector] must be an array of numbers");
    if (n != vp->dims)
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "the query vector has a different number of dimensions [%zu] than "
                            "the document vectors [%u]",
                            n, vp->dims);
    float *v = sc_arena_alloc(p->a, (n + 1) * sizeof(float));
    if (!v)
        return sc__dsl_oom(p);
    double norm = 0;
    for (size_t i = 0; i < n; i++) {
        double d;
        if (json_is_string(qv)) {
            const char *s = json_string_value(qv);
            int hi = hexval((unsigned char)s[2 * i]), lo = hexval((unsigned char)s[2 * i + 1]);
            if (hi < 0 || lo < 0)
                return sc__dsl_fail(p, "illegal_argument_exception",
                                    "failed to parse field [query_vector] as a hex string");
            d = (double)(int8_t)(uint8_t)(hi * 16 + lo);
        } else {
            const json_t *e = json_array_get(qv, i);
            if (!json_is_number(e))
                return sc__dsl_fail(p, "parsing_exception",
                                    "[knn] [query_vector] must be an array of numbers");
            d = json_number_value(e);
            if (vp->elem == SC_VEC_ELEM_BYTE && (d != floor(d) || d < -128 || d > 127))
                return sc__dsl_fail(p, "illegal_argument_exception",
                                    "element_type [byte] vectors only support integers between "
                                    "[-128, 127] but found [%g] at dim [%zu]",
                                    d, i);
        }
        if (!isfinite((float)d))
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "element_type [float] vectors only support finite floating "
                                "point values, but found [%g] at dim [%zu]",
                                d, i);
        v[i] = (float)d;
        norm += d * d;
    }
    if (vp->sim == SC_VEC_SIM_COSINE) {
        if (norm == 0)
            return sc__dsl_fail(p, "illegal_argument_exception",
                                "The [cosine] similarity does not support vectors with zero "
                                "magnitude.");
        for (size_t i = 0; i < n; i++)
            v[i] = (float)(v[i] / sqrt(norm));
    }
    *out = v;
    return SC_OK;
}

/* The clause's filter: one query or an array of them (ANDed as bool filters). */
static sc_status knn_filter(P *p, const json_t *f, sc_query **out)
{
    *out = NULL;
    if (!f)
        return SC_OK;
    if (!json_is_array(f))
        return sc__dsl_parse_query(p, f, out);
    sc_query *b = NEW(p, sc_query_bool(p->a));
    size_t i;
    json_t *e;
    json_array_foreach (f, i, e) {
        sc_query *c;
        SC_TRY(sc__dsl_parse_query(p, e, &c));
        if (sc_query_bool_add(p->a, b, SC_OCCUR_FILTER, c) != SC_OK)
            return sc__dsl_oom(p);
    }
    *out = json_array_size(f) ? b : NULL;
    return SC_OK;
}

static sc_status uint_param(P *p, const json_t *body, const char *key, int64_t dflt, int64_t *out)
{
    const json_t *v = json_object_get(body, key);
    *out = dflt;
    if (!v)
        return SC_OK;
    if (!sc__dsl_get_int(v, out))
        return sc__dsl_fail(p, "parsing_exception", "[knn] [%s] must be an integer", key);
    return SC_OK;
}

/* rescore_vector {"oversample": F} (Elasticsearch 8.18+): F >= 1, or 0 as 9.1+ allows (there:
 * no rescoring; here scry's default, which rescores every candidate). *os stays 0 when absent. */
static sc_status rescore_vector(P *p, const json_t *rv, float *os)
{
    *os = 0;
    if (!rv)
        return SC_OK;
    if (!json_is_object(rv))
        return sc__dsl_fail(p, "parsing_exception", "[knn] [rescore_vector] must be an object");
    SC_TRY(sc__dsl_check_keys(p, "rescore_vector", rv, rescore_keys));
    const json_t *v = json_object_get(rv, "oversample");
    if (!v)
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "[rescore_vector] requires [oversample]");
    float f;
    if (!sc__dsl_get_float(v, &f) || !isfinite(f))
        return sc__dsl_fail(p, "parsing_exception",
                            "[rescore_vector] [oversample] must be a number");
    if (f < 1.0f && f != 0.0f)
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "[oversample] must be >= 1.0 (or 0 to disable it), found [%g]",
                            (double)f);
    *os = f;
    return SC_OK;
}

/* Resolves the field's vector parameters with Elasticsearch's messages. */
static sc_status knn_field(P *p, sc_slice field, sc_vec_params *vp)
{
    bool indexed = false;
    sc_status st = p->env && p->env->vector_field
                       ? p->env->vector_field(p->env->ctx, field, vp, &indexed)
                       : SC_EINVAL;
    if (st == SC_ENOTFOUND)
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "field [%.*s] does not exist in the mapping", (int)field.len,
                            (const char *)field.ptr);
    if (st != SC_OK)
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "[knn] queries are only supported on [dense_vector] fields");
    if (!indexed)
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "to perform knn search on field [%.*s], its mapping must have "
                            "[index] set to [true]",
                            (int)field.len, (const char *)field.ptr);
    return SC_OK;
}

static sc_status parse_clause(P *p, const json_t *body, sc_query **out)
{
    if (!json_is_object(body))
        return sc__dsl_fail(p, "parsing_exception", "[knn] must be an object");
    SC_TRY(sc__dsl_check_keys(p, "knn", body, knn_keys));
    if (json_object_get(body, "query_vector_builder") || json_object_get(body, "inner_hits"))
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "[knn] [query_vector_builder] and [inner_hits] are not supported");
    const json_t *fv = json_object_get(body, "field");
    if (!json_is_string(fv))
        return sc__dsl_fail(p, "parsing_exception", "[knn] requires [field]");
    const json_t *qv = json_object_get(body, "query_vector");
    if (!qv)
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "[knn] requires either [query_vector] or [query_vector_builder]");
    int64_t k, nc;
    /* k defaults to the request's size (Elasticsearch 8.14+, the top-level section and the
     * knn query alike); a defaulted k never exceeds an explicit num_candidates, which then
     * drives it (the 8.12 knn query had no k: each shard returned num_candidates hits) */
    int64_t dk = p->env && p->env->knn_default_k ? p->env->knn_default_k : 10;
    if (dk > NUM_CANDIDATES_LIMIT)
        dk = NUM_CANDIDATES_LIMIT;
    const json_t *ncj = json_object_get(body, "num_candidates");
    int64_t given_nc;
    if (!json_object_get(body, "k") && ncj && sc__dsl_get_int(ncj, &given_nc) && given_nc >= 1 &&
        given_nc < dk)
        dk = given_nc;
    SC_TRY(uint_param(p, body, "k", dk, &k));
    if (k < 1)
        return sc__dsl_fail(p, "illegal_argument_exception", "[k] must be greater than 0");
    int64_t dnc = k * 3 / 2 > NUM_CANDIDATES_LIMIT ? NUM_CANDIDATES_LIMIT : k * 3 / 2;
    SC_TRY(uint_param(p, body, "num_candidates", dnc < k ? k : dnc, &nc));
    if (nc > NUM_CANDIDATES_LIMIT)
        return sc__dsl_fail(p, "illegal_argument_exception", "[num_candidates] cannot exceed [%d]",
                            NUM_CANDIDATES_LIMIT);
    if (nc < k)
        return sc__dsl_fail(p, "illegal_argument_exception",
                            "[num_candidates] cannot be less than [k]");
    float sim = NAN;
    const json_t *sv = json_object_get(body, "similarity");
    if (sv && !sc__dsl_get_float(sv, &sim))
        return sc__dsl_fail(p, "parsing_exception", "[knn] [similarity] must be a number");
    float os;
    const json_t *rv = json_object_get(body, "rescore_vector");
    SC_TRY(rescore_vector(p, rv, &os));
    sc_slice field = sc__dsl_jstr(fv);
    sc_vec_params vp;
    SC_TRY(knn_field(p, field, &vp));
    if (!rv && p->env && p->env->vector_oversample) { /* the mapping's default */
        float dflt = p->env->vector_oversample(p->env->ctx, field);
        if (dflt > 0)
            os = dflt;
    }
    float *v;
    SC_TRY(query_vector(p, qv, &vp, &v));
    sc_query *filter;
    SC_TRY(knn_filter(p, json_object_get(body, "filter"), &filter));
    sc_query *q =
        NEW(p, sc_query_knn(p->a, field, v, vp.dims, (uint32_t)k, (uint32_t)nc, filter, sim));
    q->u.knn.oversample = os;
    SC_TRY(sc__dsl_apply_boost(p, "knn", body, q));
    *out = q;
    return SC_OK;
}

sc_status sc__dsl_q_knn(P *p, const json_t *body, sc_query **out)
{
    return parse_clause(p, body, out);
}

sc_status sc_dsl_parse_knn(const sc_dsl_env *env, sc_arena *a, const json_t *clause, sc_query **out,
                           sc_dsl_error *err)
{
    P p = {.env = env, .a = a, .err = err, .depth = 0};
    err->type = NULL;
    err->reason[0] = '\0';
    err->status = 400;
    *out = NULL;
    return parse_clause(&p, clause, out);
}
