/* Private pieces shared by the files of src/mapping: the mapping object itself, field
 * construction (used by parsing, merging and dynamic mapping) and error helpers. */
#ifndef SC_MAPPING_INTERNAL_H
#define SC_MAPPING_INTERNAL_H

#include <stdatomic.h>

#include "mapping/mapping.h"

struct sc_mapping {
    _Atomic int refs;
    sc_mapping_field *root;
    sc_mapping_field **by_ord; /* ord -> field */
    size_t n_fields;
    size_t cap_fields;
    sc_mapping_field **sorted; /* by path, for lookups */
    bool date_detection;       /* default true */
    bool numeric_detection;    /* default false */
    bool set_date_detection, set_numeric_detection;
    json_t *root_extra;        /* _source, _routing, _meta, dynamic_templates... kept verbatim */
};

/* Formats err (type static, reason printf-style). */
void sc__mapping_err(sc_mapping_error *err, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void sc__mapping_cause(sc_mapping_error *err, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A new empty mapping (root object only). NULL on out of memory. */
sc_mapping *sc__mapping_alloc(void);
/* The type named s (mapping.c); 0 when unknown. */
int sc__mapping_type_from_name(const char *s, sc_mapping_type *out);

/* Deep copy. NULL on out of memory. */
sc_mapping *sc__mapping_clone(const sc_mapping *m);

/* Parses one field definition (`def` is the JSON object under the field's name) as a child of
 * parent named `name`; multi=true when declared under `fields`. *out is owned (free with
 * sc__mapping_field_free); ords are not assigned yet. */
sc_status sc__mapping_field_parse(const json_t *def, const char *name, sc_mapping_field *parent,
                                  bool multi, sc_mapping_field **out, sc_mapping_error *err);

/* A field of `type` with default parameters, named name under parent (path computed). */
sc_mapping_field *sc__mapping_field_new(const char *name, sc_mapping_field *parent,
                                        sc_mapping_type type);

void sc__mapping_field_free(sc_mapping_field *f);

/* Inserts child into parent's children (sorted by name); takes ownership (freed on failure). */
sc_status sc__mapping_add_child(sc_mapping_field *parent, sc_mapping_field *child);

/* Moves a parsed field under parent (fixing the paths of its subtree); takes ownership. */
sc_status sc__mapping_adopt(sc_mapping_field *parent, sc_mapping_field *child);

/* The child of parent named (name, len), or NULL. */
sc_mapping_field *sc__mapping_child(const sc_mapping_field *parent, const char *name, size_t len);

/* Assigns ords to every field of the tree and rebuilds the lookup tables. */
sc_status sc__mapping_reindex(sc_mapping *m);

/* Effective dynamic setting of an object field (walks up INHERIT; root default TRUE). */
sc_mapping_dynamic sc__mapping_effective_dynamic(const sc_mapping_field *obj);

/* index_options.type not given (yet): resolved by sc__mapping_vector_finish. */
#define SC__VEC_TYPE_UNSET ((sc_vec_index)0xff)

/* dense_vector (vector.c): one mapping parameter (dims, element_type, similarity, index,
 * index_options), then the defaults and cross-checks once all are read. SC_EINVAL with err. */
sc_status sc__mapping_vector_param(const char *k, const json_t *v, sc_mapping_field *f,
                                   sc_mapping_error *err);
sc_status sc__mapping_vector_finish(sc_mapping_field *f, sc_mapping_error *err);
/* A document's vector for f (JSON array v of exactly dims numbers; bytes: integers in
 * -128..127): finite, non-zero for cosine (then normalized), unit length for float
 * dot_product. *out in the arena. SC_EINVAL with err's cause set; SC_ELIMIT (arena). */
struct sc__jd;
sc_status sc__mapping_vector_value(const sc_mapping_field *f, const struct sc__jd *v, uint32_t dims,
                                   sc_arena *arena, float **out, sc_mapping_error *err);
/* Writes the dense_vector parameters into a GET _mapping object. */
void sc__mapping_vector_json(const sc_mapping_field *f, json_t *o);
/* Whether two dense_vector definitions may merge (dims may go from unset to set); err filled. */
sc_status sc__mapping_vector_merge(sc_mapping_field *cur, const sc_mapping_field *upd,
                                   sc_mapping_error *err);

/* A scalar value independent of the JSON reader it came from. text: the string's bytes, a
 * number's JSON text, or "true"/"false". */
typedef enum sc__scalar_kind { SC__S_STRING, SC__S_INT, SC__S_REAL, SC__S_BOOL } sc__scalar_kind;
typedef struct sc__scalar {
    sc__scalar_kind kind;
    sc_slice text;
    int64_t i; /* SC__S_INT */
    double d;  /* SC__S_INT and SC__S_REAL */
    bool b;    /* SC__S_BOOL */
} sc__scalar;

/* Fills *s from a jansson scalar (number text formatted into buf, cap >= 32); 0 for null,
 * arrays and objects. */
int sc__scalar_from_json(const json_t *v, sc__scalar *s, char *buf, size_t cap);

void sc__scalar_preview(const sc__scalar *v, char *buf, size_t cap);

/* Encodes one scalar for a non-text, non-object field (see sc__mapping_encode_scalar). Keyword
 * terms may borrow v->text. */
sc_status sc__mapping_encode(const sc_mapping_field *f, const sc__scalar *v,
                             const sc_mapping_analysis *an, sc_arena *arena, sc_slice *term,
                             int64_t *num, sc_mapping_error *err);

/* A rank_feature value (a number or numeric string) as its stored frequency
 * (sc_mapping_rank_feature_encode), inverted first for positive_score_impact false. SC_EINVAL
 * with a cause in err. */
sc_status sc__mapping_rank_feature_value(const sc_mapping_field *f, const sc__scalar *v,
                                         int64_t *out, sc_mapping_error *err);

/* Range-checks and encodes one geo point. */
sc_status sc__mapping_geo_latlon(double lat, double lon, int64_t *num, sc_mapping_error *err);

/* Encodes a scalar JSON value (not null/array/object) for a non-text, non-object field. Sets
 * *kind of the result: numeric -> *num; keyword/ip -> *term (arena or borrowed). On a value that
 * does not fit: SC_EINVAL with err->cause_* set (the caller writes the main reason). */
sc_status sc__mapping_encode_scalar(const sc_mapping_field *f, const json_t *v,
                                    const sc_mapping_analysis *an, sc_arena *arena,
                                    sc_slice *term, int64_t *num, sc_mapping_error *err);

/* Built-in fallback analysis (see sc_mapping_analysis). */
sc_status sc__mapping_analyze(const sc_mapping_analysis *an, const char *analyzer, sc_slice text,
                              sc_arena *arena, sc_index_token **toks, size_t *n);
sc_status sc__mapping_normalize(const sc_mapping_analysis *an, const char *normalizer,
                                sc_slice text, sc_arena *arena, sc_slice *out);

/* A short preview of a JSON value for error messages into buf (cap bytes). */
void sc__mapping_preview(const json_t *v, char *buf, size_t cap);

#endif
