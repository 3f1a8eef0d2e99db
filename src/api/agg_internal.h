/* Private to the aggregation files of src/api: parsing the `aggs` JSON into the search layer's
 * spec tree (agg_parse.c: the tree; agg_parse_params.c, agg_parse_terms.c,
 * agg_parse_composite.c, agg_parse_pipeline.c, agg_parse_auto.c, agg_parse_sketch.c: each
 * kind's parameters),
 * running it through the shard query phase's collect hook (agg_exec.c) and writing a final
 * result as the response's "aggregations" (agg_write.c). */
#ifndef SC_API_AGG_INTERNAL_H
#define SC_API_AGG_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "api/internal.h"
#include "api/rest.h"
#include "base/jsonw.h"
#include "cluster/node.h"
#include "mapping/mapping.h"
#include "search/agg.h"
#include "shard/shard_search.h"

/* A user-facing parse error. shard_level errors (a field that cannot be aggregated) are
 * written as Elasticsearch does for them: search_phase_execution_exception "all shards failed"
 * with the cause as root_cause. */
typedef struct sc_agg_parse_error {
    int status;
    const char *type;      /* static */
    const char *caused_by; /* static caused_by type, or NULL */
    bool shard_level;
    char reason[512];
} sc_agg_parse_error;

/* Parsing context of one request and target index. */
typedef struct sc__agg_pctx {
    sc_rest_req *req;
    sc_index *ix;
    sc_mapping *m; /* may be NULL */
    sc_agg_parse_error *err;
    bool in_nested; /* parsing the sub-aggregations of a `nested` (not reversed since) */
} sc__agg_pctx;

/* Fills c->err and returns false. */
bool sc__agg_fail(sc__agg_pctx *c, int status, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The arena is exhausted: 429 circuit_breaking_exception. */
bool sc__agg_oom_err(sc__agg_pctx *c);

/* Parses `aggs` (an object of named aggregations) with index ix's mapping (ix may be NULL:
 * every field unmapped) into *out (SC_AGG_ROOT, request arena). false with err filled. */
/* As sc__agg_parse with mapping m (borrowed) instead of ix's when m is not NULL: the search's
 * runtime fields resolve as mapped fields of their types. */
bool sc__agg_parse_mapped(sc_rest_req *req, sc_index *ix, sc_mapping *m, const json_t *aggs,
                          sc_agg_spec **out, sc_agg_parse_error *err);
bool sc__agg_parse(sc_rest_req *req, sc_index *ix, const json_t *aggs, sc_agg_spec **out,
                   sc_agg_parse_error *err);
/* Parses the parameters object of one aggregation of kind s->kind (named `type` in the
 * request) into s. */
bool sc__agg_parse_params(sc__agg_pctx *c, const char *type, const json_t *params, sc_agg_spec *s);
/* Parameter readers shared by the kinds' parsers (agg_parse_params.c); each fills c->err and
 * returns false on a bad value. */
bool sc__agg_known_keys(sc__agg_pctx *c, const char *type, const json_t *params,
                        const char *const *allowed);
bool sc__agg_get_uint(sc__agg_pctx *c, const json_t *params, const char *key, uint64_t *out,
                      const char *type);
bool sc__agg_get_double(sc__agg_pctx *c, const json_t *params, const char *key, double *out,
                        const char *type);
bool sc__agg_get_bool(sc__agg_pctx *c, const json_t *params, const char *key, bool *out,
                      const char *type);
/* `field` and its value type, `format`, `missing` of a field aggregation (*mf: its mapping, or
 * NULL when unmapped). */
bool sc__agg_field_common(sc__agg_pctx *c, const char *type, const json_t *params, sc_agg_spec *s,
                          const sc_mapping_field **mf);
/* A JSON value encoded as field f's doc value. */
bool sc__agg_encode_value(sc__agg_pctx *c, const sc_mapping_field *f, const json_t *v,
                          const char *what, sc_mapping_value *out);
/* A date (number of ms, or text in s's format / the field's, date math allowed). */
bool sc__agg_date_value(sc__agg_pctx *c, const sc_mapping_field *f, const sc_agg_spec *s,
                        const json_t *v, const char *what, double *out);
/* date_histogram's interval, time_zone and offset into s->rounding. */
bool sc__agg_date_rounding(sc__agg_pctx *c, const json_t *p, sc_agg_spec *s);
/* terms' parameters (agg_parse_terms.c). */
bool sc__agg_parse_terms(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);
/* rare_terms' parameters (agg_parse_terms.c). */
bool sc__agg_parse_rare(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);
/* significant_terms' parameters (agg_parse_terms.c). */
bool sc__agg_parse_significant(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);
/* A terms-style `order` ({"_count"|"_key"|"<sub>[.stat]": dir}, or an array: its first). */
bool sc__agg_terms_order(sc__agg_pctx *c, const json_t *o, sc_agg_spec *s);
/* multi_terms' parameters (agg_parse_composite.c: its keys are composite keys). */
bool sc__agg_parse_multi_terms(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);
/* A pipeline's parameters (agg_parse_pipeline.c), and the resolution of the paths of the
 * pipelines among parent's subs once they are all parsed. */
bool sc__agg_parse_pipeline(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);
bool sc__agg_resolve_pipelines(sc__agg_pctx *c, sc_agg_spec *parent);
/* auto_date_histogram's parameters (agg_parse_auto.c). */
bool sc__agg_parse_auto(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);
/* ip_range's parameters (agg_parse_auto.c; kind SC_AGG_RANGE, vtype IP). */
bool sc__agg_parse_ip_range(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);
/* weighted_avg's parameters (agg_parse_auto.c). */
/* geo_bounds / geo_centroid (agg_parse_geo.c). */
bool sc__agg_parse_geo(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);
bool sc__agg_parse_weighted_avg(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);
/* composite's parameters (agg_parse_composite.c). */
bool sc__agg_parse_composite(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);
/* geotile_grid: a TERMS spec with `geotile` (agg_parse_composite.c) */
bool sc__agg_parse_geotile(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);
/* cardinality, percentiles, percentile_ranks and median_absolute_deviation's parameters
 * (agg_parse_sketch.c). */
bool sc__agg_parse_sketch(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);

/* top_hits / top_metrics parameters (agg_parse_hits.c). */
bool sc__agg_parse_hits(sc__agg_pctx *c, const char *type, const json_t *p, sc_agg_spec *s);
/* Writes the body members of a top_hits / top_metrics result (agg_write_hits.c). */
void sc__agg_write_hits(sc_jsonw *w, const sc_agg_spec *s, const sc_agg_result *r);

/* The request's name of s's kind ("terms", "date_range", ...). */
const char *sc__agg_kind_name(const sc_agg_spec *s);
/* Writes err as the response (status and Elasticsearch's error shape). */
void sc__agg_write_error(sc_rest_req *req, sc_rest_resp *resp, const sc_agg_parse_error *err);

/* Writes `"aggregations": {...}` for the final (finalized) result r of root. typed_keys
 * prefixes names with their type ("sterms#name"). */
void sc__agg_write(sc_jsonw *w, const sc_agg_spec *root, const sc_agg_result *r, bool typed_keys);

/* The aggregations of one search as the shard query phase's collect hook (agg_exec.c). */
typedef struct sc__agg_hook {
    sc_shard_collect_hook hook; /* ctx = this struct */
    const sc_agg_spec *spec;
    /* per target index: the hits query and, with a post_filter, the aggregations' query
     * (agg_queries NULL: the same) */
    sc_query *const *hit_queries;
    sc_query *const *agg_queries;
    size_t n_queries;
    uint32_t n_shards;                      /* shards searched (terms' default shard_size) */
    uint64_t max_buckets;                   /* 0 = 65,536 */
    const sc_slice *index_names;            /* per target index (top_hits' _index), or NULL */
    const struct sc_runtime_field *runtime; /* runtime_mappings (search/runtime.h), or NULL */
    size_t n_runtime;
} sc__agg_hook;
/* Sets h->hook's functions (the other fields are the caller's). */
void sc__agg_hook_init(sc__agg_hook *h);
/* The coordinator's final reduce + finalize of the search's reduced partial (NULL: an empty
 * result) into *out (a). SC_ELIMIT with err->too_many_buckets past max_buckets. */
sc_status sc__agg_final(const sc__agg_hook *h, void *reduced, sc_arena *a, sc_agg_result **out,
                        sc_agg_error *err) SC_MUST_USE;

/* Rendering data of a spec, kept in sc_agg_spec.user: the date format of key_as_string. */
typedef struct sc__agg_render {
    sc_date_format *date_format; /* owned by the request (freed by sc__agg_spec_free) */
    const json_t *meta;          /* the request's `meta`, echoed (borrowed from the body) */
    const json_t *pipeline;      /* a pipeline's parameters until its paths are resolved */
    const json_t *source_filter; /* top_hits: _source includes/excludes (borrowed), or NULL */
    sc_script_env *env;          /* moving_fn: its script functions (owned, freed with the
                                    tree), or NULL */
} sc__agg_render;
/* The rendering data of s, created on first use (request arena); NULL on exhaustion. */
sc__agg_render *sc__agg_render_of(sc_rest_req *req, sc_agg_spec *s);
/* Frees what parsing attached to a spec tree (date formats). NULL is a no-op. */
void sc__agg_spec_free(sc_agg_spec *root);

#endif
