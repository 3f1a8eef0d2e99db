/* The dense_vector field type: its mapping parameters as Elasticsearch 8.x defines them (dims
 * up to 4096, element_type float / byte, similarity l2_norm / cosine / dot_product /
 * max_inner_product, index, index_options type hnsw / int8_hnsw / flat / int8_flat with m and
 * ef_construction), their GET _mapping form and merge rules. Document values are checked and
 * turned into index vectors in parse_doc.c (sc__mapping_vector_value). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mapping/internal.h"
#include "mapping/jdoc.h"

static const char *const sim_names[] = {"l2_norm", "cosine", "dot_product", "max_inner_product"};
static const char *const type_names[] = {"hnsw", "int8_hnsw", "flat", "int8_flat"};

static sc_status bad(sc_mapping_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static sc_status bad(sc_mapping_error *err, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sc__mapping_err(err, "mapper_parsing_exception", "Failed to parse mapping: %s", msg);
    sc__mapping_cause(err, "mapper_parsing_exception", "%s", msg);
    return SC_EINVAL;
}

static int lookup(const char *const *names, size_t n, const json_t *v)
{
    if (!json_is_string(v))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], json_string_value(v)) == 0)
            return (int)i;
    return -1;
}

static bool int_of(const json_t *v, json_int_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    return json_is_string(v) && sscanf(json_string_value(v), "%lld", out) == 1;
}

static sc_status index_options(const json_t *v, sc_mapping_field *f, sc_mapping_error *err)
{
    if (!json_is_object(v))
        return bad(err, "[index_options] on mapper [%s] must be an object", f->path);
    const json_t *t = json_object_get(v, "type");
    int ti = lookup(type_names, 4, t);
    if (ti < 0)
        return bad(err, "Unknown vector index options type [%s] for field [%s]",
                   json_is_string(t) ? json_string_value(t) : "null", f->path);
    f->vec.type = (sc_vec_index)ti;
    const char *k;
    json_t *x;
    json_object_foreach ((json_t *)v, k, x) {
        json_int_t n;
        if (strcmp(k, "type") == 0)
            continue;
        bool graph = ti == SC_VEC_INDEX_HNSW || ti == SC_VEC_INDEX_INT8_HNSW;
        bool int8 = ti == SC_VEC_INDEX_INT8_HNSW || ti == SC_VEC_INDEX_INT8_FLAT;
        if (graph && (strcmp(k, "m") == 0 || strcmp(k, "ef_construction") == 0)) {
            if (!int_of(x, &n) || n < 1 || n > (k[0] == 'm' ? 512 : 3200))
                return bad(err, "[%s] must be an integer between 1 and %d for field [%s]", k,
                           k[0] == 'm' ? 512 : 3200, f->path);
            if (k[0] == 'm')
                f->vec.m = (uint32_t)(n < 2 ? 2 : n);
            else
                f->vec.ef_construction = (uint32_t)n;
        } else if (int8 && strcmp(k, "confidence_interval") == 0) {
            double c = json_number_value(x);
            if (!json_is_number(x) || !(c == 0 || (c >= 0.9 && c <= 1.0)))
                return bad(err,
                           "[confidence_interval] must be between 0.9 and 1.0 or 0 for "
                           "field [%s]",
                           f->path);
            f->vec_confidence = (float)c;
        } else if (int8 && strcmp(k, "rescore_vector") == 0) {
            /* Elasticsearch 8.18+/9.x: {"oversample": 0 or 1..10}, the knn default */
            const json_t *o = json_object_get(x, "oversample");
            double os = json_number_value(o);
            if (!json_is_object(x) || json_object_size(x) != 1 || !json_is_number(o) ||
                !(os == 0 || (os >= 1 && os <= 10)))
                return bad(err,
                           "[rescore_vector] must be {\"oversample\": F} with F between 1.0 "
                           "and 10.0 or exactly 0 for field [%s]",
                           f->path);
            f->vec_oversample = (float)os;
        } else {
            return bad(err,
                       "unknown parameter [%s] in [index_options] of type [%s] for field "
                       "[%s]",
                       k, type_names[ti], f->path);
        }
    }
    return SC_OK;
}

sc_status sc__mapping_vector_param(const char *k, const json_t *v, sc_mapping_field *f,
                                   sc_mapping_error *err)
{
    json_int_t n;
    if (strcmp(k, "dims") == 0) {
        /* the element type's bound is checked once every parameter is read */
        if (!int_of(v, &n) || n < 1 || n > SC_VEC_MAX_BIT_DIMS)
            return bad(err,
                       "The number of dimensions should be in the range [1, %d] but was "
                       "[%s] for field [%s]",
                       SC_VEC_MAX_DIMS, json_is_integer(v) ? "out of range" : "not a number",
                       f->path);
        f->vec.dims = (uint32_t)n;
        return SC_OK;
    }
    if (strcmp(k, "element_type") == 0) {
        const char *const elems[] = {"float", "byte", "bit"};
        int e = lookup(elems, 3, v);
        if (e < 0)
            return bad(err,
                       "invalid element_type [%s]; available types are [float, byte, bit] for "
                       "field [%s]",
                       json_is_string(v) ? json_string_value(v) : "?", f->path);
        f->vec.elem = (sc_vec_elem)e;
        return SC_OK;
    }
    if (strcmp(k, "similarity") == 0) {
        int si = lookup(sim_names, 4, v);
        if (si < 0)
            return bad(err,
                       "Unknown value [%s] for field [similarity] - accepted values are "
                       "[l2_norm, dot_product, cosine, max_inner_product]",
                       json_is_string(v) ? json_string_value(v) : "?");
        f->vec.sim = (sc_vec_sim)si;
        f->vec_sim_set = true;
        return SC_OK;
    }
    if (strcmp(k, "index") == 0) {
        if (!json_is_boolean(v))
            return bad(err, "[index] on mapper [%s] must be a boolean", f->path);
        f->index = json_is_true(v);
        return SC_OK;
    }
    if (strcmp(k, "index_options") == 0)
        return index_options(v, f, err);
    return bad(err, "unknown parameter [%s] on mapper [%s] of type [dense_vector]", k, f->name);
}

sc_status sc__mapping_vector_finish(sc_mapping_field *f, sc_mapping_error *err)
{
    if (f->is_multi_field)
        return bad(err, "Field [%s] of type [dense_vector] can't be used in multifields", f->name);
    if (f->vec.dims > sc_vec_max_dims(f->vec.elem))
        return bad(err,
                   "The number of dimensions should be in the range [1, %u] but was [%u] for "
                   "field [%s]",
                   sc_vec_max_dims(f->vec.elem), f->vec.dims, f->path);
    if (f->vec.elem == SC_VEC_ELEM_BIT) {
        if (f->vec.dims % 8)
            return bad(err,
                       "The number of dimensions should be a multiple of 8 for "
                       "[element_type:bit] but was [%u]",
                       f->vec.dims);
        if (f->vec_sim_set && f->vec.sim != SC_VEC_SIM_L2)
            return bad(err,
                       "similarity [%s] is not supported for [element_type:bit]; only "
                       "[l2_norm] (hamming)",
                       sim_names[f->vec.sim]);
        f->vec.sim = SC_VEC_SIM_L2;
    }
    if (f->vec.type == SC__VEC_TYPE_UNSET) /* 8.14+: int8_hnsw for float, hnsw for byte/bit */
        f->vec.type = f->vec.elem == SC_VEC_ELEM_FLOAT ? SC_VEC_INDEX_INT8_HNSW : SC_VEC_INDEX_HNSW;
    if (f->vec.elem != SC_VEC_ELEM_FLOAT &&
        (f->vec.type == SC_VEC_INDEX_INT8_HNSW || f->vec.type == SC_VEC_INDEX_INT8_FLAT))
        return bad(err, "[element_type] cannot be [%s] when using index type [%s]",
                   f->vec.elem == SC_VEC_ELEM_BIT ? "bit" : "byte", type_names[f->vec.type]);
    if (!f->index && (f->vec_confidence >= 0 || f->vec_oversample >= 0))
        return bad(err, "Field [index_options] can only be specified when [index] is true%s", "");
    return SC_OK;
}

void sc__mapping_vector_json(const sc_mapping_field *f, json_t *o)
{
    if (f->vec.dims)
        json_object_set_new(o, "dims", json_integer(f->vec.dims));
    if (f->vec.elem != SC_VEC_ELEM_FLOAT)
        json_object_set_new(o, "element_type",
                            json_string(f->vec.elem == SC_VEC_ELEM_BIT ? "bit" : "byte"));
    json_object_set_new(o, "index", json_boolean(f->index));
    json_object_set_new(o, "similarity", json_string(sim_names[f->vec.sim]));
    if (!f->index)
        return;
    json_t *io = json_object();
    if (!io)
        return;
    json_object_set_new(io, "type", json_string(type_names[f->vec.type]));
    if (f->vec.type == SC_VEC_INDEX_HNSW || f->vec.type == SC_VEC_INDEX_INT8_HNSW) {
        json_object_set_new(io, "m", json_integer(f->vec.m));
        json_object_set_new(io, "ef_construction", json_integer(f->vec.ef_construction));
    }
    if (f->vec_confidence >= 0)
        json_object_set_new(io, "confidence_interval", json_real(f->vec_confidence));
    if (f->vec_oversample >= 0)
        json_object_set_new(io, "rescore_vector",
                            json_pack("{s:f}", "oversample", (double)f->vec_oversample));
    json_object_set_new(o, "index_options", io);
}

sc_status sc__mapping_vector_merge(sc_mapping_field *cur, const sc_mapping_field *upd,
                                   sc_mapping_error *err)
{
    sc_vec_params a = cur->vec, b = upd->vec;
    if (a.dims == 0 || b.dims == 0)
        a.dims = b.dims = a.dims | b.dims; /* dims may be set once */
    if (memcmp(&a, &b, sizeof(a)) != 0 || cur->index != upd->index) {
        sc__mapping_err(err, "illegal_argument_exception",
                        "Mapper for [%s] conflicts with existing mapper: Cannot update parameter "
                        "of a [dense_vector] field",
                        cur->path);
        return SC_ECONFLICT;
    }
    cur->vec = a;
    cur->vec_oversample = upd->vec_oversample; /* a search-time default: updatable */
    return SC_OK;
}

/* Fills the cause of a rejected vector and returns SC_EINVAL. */
static sc_status bad_value(sc_mapping_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static sc_status bad_value(sc_mapping_error *err, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sc__mapping_cause(err, "illegal_argument_exception", "%s", msg);
    return SC_EINVAL;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* A bit vector: a hex string or an array of dims / 8 bytes (-128..127), each bit (most
 * significant first) a 0/1 float. */
static sc_status bit_value(const sc_mapping_field *f, const sc__jd *v, uint32_t dims,
                           sc_arena *arena, float **out, sc_mapping_error *err)
{
    uint32_t nb = dims / 8;
    bool hex = v->type == SC__JD_STRING;
    if ((hex && v->str.len != 2 * (size_t)nb) || (!hex && (v->type != SC__JD_ARRAY || v->n != nb)))
        return bad_value(err,
                         "The [dense_vector] field [%s] of element_type [bit] expects [%u] bytes "
                         "(%u bits), as a hex string or an array of bytes",
                         f->path, nb, dims);
    float *x = sc_arena_alloc(arena, (size_t)dims * sizeof(float));
    if (!x)
        return SC_ELIMIT;
    const sc__jd *e = hex ? NULL : v->child;
    for (uint32_t i = 0; i < nb; i++) {
        int byte;
        if (hex) {
            int hi = hexval(v->str.ptr[2 * i]), lo = hexval(v->str.ptr[2 * i + 1]);
            if (hi < 0 || lo < 0)
                return bad_value(err, "[dense_vector] field [%s]: not a hex string", f->path);
            byte = hi * 16 + lo;
        } else {
            if (e->type != SC__JD_INT || e->i < -128 || e->i > 127)
                return bad_value(err,
                                 "element_type [bit] vectors only support bytes between [-128, "
                                 "127] but found [%.*s] at byte [%u]",
                                 (int)(e->raw.len > 40 ? 40 : e->raw.len), (const char *)e->raw.ptr,
                                 i);
            byte = (int)(uint8_t)(int8_t)e->i;
            e = e->next;
        }
        for (int b = 0; b < 8; b++)
            x[i * 8 + (uint32_t)b] = (float)((byte >> (7 - b)) & 1);
    }
    *out = x;
    return SC_OK;
}

sc_status sc__mapping_vector_value(const sc_mapping_field *f, const sc__jd *v, uint32_t dims,
                                   sc_arena *arena, float **out, sc_mapping_error *err)
{
    *out = NULL;
    if (f->vec.elem == SC_VEC_ELEM_BIT)
        return bit_value(f, v, dims, arena, out, err);
    if (v->type != SC__JD_ARRAY)
        return bad_value(err, "[dense_vector] field [%s] expects an array of numbers", f->path);
    if (v->n != dims)
        return bad_value(err,
                         "The [dense_vector] field [%s] has a different number of dimensions "
                         "[%u] than defined in the mapping [%u]",
                         f->path, v->n, dims);
    float *x = sc_arena_alloc(arena, (size_t)dims * sizeof(float));
    if (!x)
        return SC_ELIMIT;
    double norm = 0;
    uint32_t i = 0;
    for (const sc__jd *e = v->child; e; e = e->next, i++) {
        if (e->type != SC__JD_INT && e->type != SC__JD_REAL)
            return bad_value(err, "[dense_vector] field [%s] expects numbers, got a [%s]", f->path,
                             e->type == SC__JD_STRING ? "string" : "non-number");
        double d = e->d;
        if (f->vec.elem == SC_VEC_ELEM_BYTE && (e->type != SC__JD_INT || e->i < -128 || e->i > 127))
            return bad_value(err,
                             "element_type [byte] vectors only support integers between [-128, "
                             "127] but found [%.*s] at dim [%u]",
                             (int)(e->raw.len > 40 ? 40 : e->raw.len), (const char *)e->raw.ptr, i);
        if (!isfinite((float)d))
            return bad_value(err,
                             "element_type [float] vectors only support finite floating point "
                             "values, but found [%.*s] at dim [%u]",
                             (int)(e->raw.len > 40 ? 40 : e->raw.len), (const char *)e->raw.ptr, i);
        x[i] = (float)d;
        norm += (double)x[i] * x[i];
    }
    if (f->vec.sim == SC_VEC_SIM_COSINE) {
        if (norm == 0)
            return bad_value(err,
                             "The [cosine] similarity does not support vectors with zero "
                             "magnitude. Preview of invalid vector: [%s]",
                             "0.0, ...");
        float inv = (float)(1.0 / sqrt(norm));
        for (uint32_t j = 0; j < dims; j++)
            x[j] *= inv;
    } else if (f->vec.sim == SC_VEC_SIM_DOT && f->vec.elem == SC_VEC_ELEM_FLOAT &&
               fabs(norm - 1.0) > 1e-4) {
        return bad_value(err,
                         "The [dot_product] similarity can only be used with unit-length "
                         "vectors. Preview of invalid vector: [%g, ...]",
                         (double)x[0]);
    }
    *out = x;
    return SC_OK;
}
