/* sc_mapping: an index's field mapping as Elasticsearch defines it (the `mappings` JSON of
 * PUT /{index} and PUT /{index}/_mapping). Parses and validates the JSON, serializes it back in
 * Elasticsearch's shape (GET /{index}/_mapping), merges updates with conflicts as errors, turns
 * a document's _source into the typed, analyzed sc_index_doc the index layer stores (with
 * Elasticsearch's dynamic-mapping rules), and encodes query values for a field.
 *
 * A mapping is immutable once built and refcounted: readers share it freely across threads.
 * A change (merge, or a document introducing dynamic fields) produces a NEW mapping that the
 * owner of the index installs in place of the old one. */
#ifndef SC_MAPPING_MAPPING_H
#define SC_MAPPING_MAPPING_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/jsonw.h"
#include "base/slice.h"
#include "base/status.h"
#include "index/doc.h"
#include "mapping/date.h"

typedef enum sc_mapping_type {
    SC_MAPPING_OBJECT, /* the root and every object field; has properties, no values */
    SC_MAPPING_TEXT,
    SC_MAPPING_KEYWORD,
    SC_MAPPING_LONG,
    SC_MAPPING_INTEGER,
    SC_MAPPING_SHORT,
    SC_MAPPING_BYTE,
    SC_MAPPING_DOUBLE,
    SC_MAPPING_FLOAT,
    SC_MAPPING_HALF_FLOAT,
    SC_MAPPING_SCALED_FLOAT,
    SC_MAPPING_UNSIGNED_LONG,
    SC_MAPPING_BOOLEAN,
    SC_MAPPING_DATE,
    SC_MAPPING_IP,
    SC_MAPPING_GEO_POINT,
    SC_MAPPING_DATE_NANOS,
    SC_MAPPING_DENSE_VECTOR, /* one vector per doc (mapping/vector.c), SC_FIELD_VECTOR */
    SC_MAPPING_COMPLETION,   /* completion suggester inputs (mapping/completion.c) */
    SC_MAPPING_RANK_FEATURE, /* one positive float per doc for the rank_feature query */
    SC_MAPPING_RANK_FEATURES, /* {feature: positive float}; each feature a hidden column */
} sc_mapping_type;

/* `dynamic` of an object; INHERIT means "not set here, use the parent's" (root: TRUE). */
typedef enum sc_mapping_dynamic {
    SC_MAPPING_DYNAMIC_INHERIT,
    SC_MAPPING_DYNAMIC_TRUE,
    SC_MAPPING_DYNAMIC_FALSE,
    SC_MAPPING_DYNAMIC_STRICT,
} sc_mapping_dynamic;

/* How a field's values are encoded for the index and for queries:
 *  - TEXT: analyzed tokens (SC_FIELD_TEXT);
 *  - KEYWORD: the (normalized) string bytes as one term (SC_FIELD_KEYWORD);
 *  - IP: 16 bytes (IPv4 as IPv4-mapped IPv6), so byte order is address order (SC_FIELD_KEYWORD);
 *  - LONG/INTEGER/SHORT/BYTE: the value (SC_FIELD_NUMERIC);
 *  - UNSIGNED_LONG: value XOR 2^63 reinterpreted as int64, order-preserving;
 *  - DOUBLE/FLOAT/HALF_FLOAT: sc_mapping_double_to_sortable of the value rounded to the type's
 *    precision;
 *  - SCALED_FLOAT: round(value * scaling_factor);
 *  - BOOLEAN: 0 or 1;  DATE: UTC epoch milliseconds;  DATE_NANOS: UTC epoch nanoseconds
 *    (1677-09-21 .. 2262-04-11, as Elasticsearch);
 *  - GEO_POINT: Lucene's LatLonPoint encoding packed in one value:
 *    (encodeLatitude(lat) << 32) | (uint32)encodeLongitude(lon); see sc_mapping_geo_encode.
 *    Accepted shapes: {"lat":..,"lon":..}, [lon, lat(, z)], "lat,lon", "POINT (lon lat)",
 *    GeoJSON {"type": "Point", "coordinates": [lon, lat(, z)]}.
 *  - RANK_FEATURE: numeric doc values only (no points) holding Lucene's FeatureField
 *    frequency: the float bits of the value (1 / value with positive_score_impact false)
 *    shifted right by 15 (sc_mapping_rank_feature_encode); RANK_FEATURES: each feature `k` of
 *    field `f` is such a column named "f.k", with no mapping entry of its own. */

/* One field of a mapping. Read-only for everyone outside src/mapping; valid while the mapping
 * that returned it is referenced. */
typedef struct sc_mapping_field sc_mapping_field;
struct sc_mapping_field {
    char *name;            /* leaf name ("name"); "" for the root */
    char *path;            /* full dotted path ("user.name", "title.keyword"); "" for the root */
    sc_mapping_type type;
    char *type_alias;      /* declared type when it is an alias (match_only_text -> text,
                            * wildcard / constant_keyword -> keyword), for GET _mapping; else NULL */
    uint32_t ord;          /* dense index of the field within its mapping */
    bool index;            /* default true */
    bool doc_values;       /* default true, false for text */
    bool norms;            /* text: default true */
    bool store;            /* default false */
    bool enabled;          /* object: default true; false = keep in _source only */
    bool ignore_malformed; /* default false */
    bool coerce;           /* numerics: default true */
    bool is_multi_field;   /* declared under a parent field's `fields` */
    char *analyzer;        /* text: NULL = "standard" */
    char *search_analyzer; /* text: NULL = analyzer */
    char *search_quote_analyzer;
    char *normalizer;      /* keyword: NULL or e.g. "lowercase" */
    int32_t ignore_above;  /* keyword: -1 = unlimited */
    double scaling_factor; /* scaled_float */
    int32_t position_increment_gap; /* text: default 100 */
    /* completion: max_input_length (default 50), preserve_separators and
     * preserve_position_increments (default true) */
    int32_t max_input_length;
    bool preserve_separators, preserve_position_increments;
    /* search_as_you_type (a text field with type_alias "search_as_you_type"): shingle sizes
     * 2..max_shingle_size get subfields _2gram.., plus _index_prefix; those subfields are
     * created with the field (sayt_sub), not shown by GET _mapping */
    int32_t max_shingle_size;
    bool sayt_sub;
    bool positive_score_impact; /* rank_feature(s): default true */
    char *format;          /* date: NULL = SC_DATE_DEFAULT_FORMAT */
    sc_date_format *date_format; /* date: compiled `format` (never NULL for dates) */
    json_t *null_value;    /* NULL = none */
    char **copy_to;        /* target field paths */
    size_t n_copy_to;
    json_t *meta;          /* `meta` object or NULL */
    json_t *extra;         /* accepted parameters scry does not act on (boost, similarity,
                            * index_options, eager_global_ordinals, ...), kept for GET _mapping;
                            * NULL when none */
    /* dense_vector: dims (0 until the first document sets it), element_type, similarity,
     * index_options (type, m, ef_construction); `index` above says whether kNN may search it */
    sc_vec_params vec;
    float vec_confidence; /* index_options.confidence_interval as given (-1 = not set) */
    float vec_oversample; /* index_options.rescore_vector.oversample: the knn clauses' default
                           * (-1 = not set; 0 or 1..10) */
    bool vec_sim_set;     /* `similarity` given (bit vectors default to l2_norm) */
    sc_mapping_dynamic dynamic; /* objects */
    /* objects declared `"type": "nested"`: each object under it in a document is indexed as a
     * hidden child document of the root (mapping/parse_doc.c, sc_index_doc.children) */
    bool nested;
    sc_mapping_field *parent;   /* NULL for the root */
    /* For objects: the properties; for other fields: the multi-fields (`fields`). Sorted by
     * name. */
    sc_mapping_field **children;
    size_t n_children;
};

typedef struct sc_mapping sc_mapping;

/* Limits on dynamic mapping (Elasticsearch's index.mapping.total_fields.limit and
 * index.mapping.depth.limit defaults): a document that would exceed them fails. */
#define SC_MAPPING_MAX_FIELDS 1000
#define SC_MAPPING_MAX_DEPTH 20

/* A user-facing error: Elasticsearch's `type` (static string such as
 * "mapper_parsing_exception", "strict_dynamic_mapping_exception", "illegal_argument_exception")
 * and `reason`, optionally a cause (caused_by type and reason, cause_type NULL when none).
 * reason may contain user text: write it out with sc_jsonw, which escapes it. */
typedef struct sc_mapping_error {
    const char *type;
    char reason[512];
    const char *cause_type;
    char cause_reason[256];
} sc_mapping_error;

/* Writes err as Elasticsearch's error object body members: "type", "reason" and, if present,
 * "caused_by" {type, reason}. The caller has opened the object. */
void sc_mapping_error_write(const sc_mapping_error *err, sc_jsonw *w);

/* ---- building, sharing, serializing ---- */

/* Builds a mapping from the body of `mappings` ({"dynamic": ..., "properties": {...},
 * "date_detection": ..., "_source"/"_routing"/"_meta" accepted}). json may be NULL or {} for an
 * empty mapping (all fields dynamic). On success *out is owned with one reference
 * (sc_mapping_unref). SC_EINVAL with err filled (mapper_parsing_exception: unknown type or
 * parameter, bad value) when the JSON is not a valid mapping; SC_ENOMEM. */
sc_status sc_mapping_new(const json_t *json, sc_mapping **out, sc_mapping_error *err) SC_MUST_USE;

/* Shared ownership; thread-safe (atomic refcount). unref(NULL) is a no-op. */
sc_mapping *sc_mapping_ref(sc_mapping *m);
void sc_mapping_unref(sc_mapping *m);

/* Merges `update` (the same shape as for sc_mapping_new) into base and returns a new mapping in
 * *out (owned); base is unchanged. New fields and objects are added; existing objects merge
 * recursively; `fields` (multi-fields) may be added; ignore_above, search_analyzer, copy_to,
 * meta and dynamic may change. Any other change (a different type, analyzer, index, format...)
 * fails with SC_ECONFLICT and err (illegal_argument_exception, "mapper [f] cannot be changed
 * from type [long] to [text]" or "Mapper for [f] conflicts with existing mapper: Cannot update
 * parameter [analyzer] from [standard] to [english]"). SC_EINVAL for an invalid update. */
sc_status sc_mapping_merge(const sc_mapping *base, const json_t *update, sc_mapping **out,
                           sc_mapping_error *err) SC_MUST_USE;

/* Only what `updated` adds to `base`: a mappings body ({"properties":{...}}) holding the fields
 * (with their sub-fields) whose paths `base` does not have, nested in their parent objects.
 * Merging this (instead of all of `updated`) into the current index mapping cannot undo a
 * concurrent PUT _mapping. {} when nothing is new. New reference; NULL on out of memory. */
json_t *sc_mapping_added_json(const sc_mapping *base, const sc_mapping *updated);

/* The mapping as Elasticsearch returns it under "mappings" for GET _mapping: {} when empty,
 * else {"dynamic":..(if set), "properties":{name:{"type":..., non-default parameters...,
 * "fields":{...}}}} with properties sorted by name and parameters equal to their defaults left
 * out. New reference (json_decref); NULL only on out of memory. */
json_t *sc_mapping_to_json(const sc_mapping *m);

/* Same, written into a streaming writer as one value. */
void sc_mapping_write(const sc_mapping *m, sc_jsonw *w);

/* Lucene's FeatureField encoding of a rank_feature value (already inverted for a negative
 * score impact): the float's bits >> 15, which keeps 9 significant bits. SC_EINVAL (and a
 * cause in err) for a value that is not a finite positive normal float. */
sc_status sc_mapping_rank_feature_encode(float value, int64_t *out, sc_mapping_error *err);

/* ---- looking fields up (query side) ---- */

/* The field at a full dotted path ("title", "title.keyword", "user.name"), objects included;
 * NULL when unmapped. O(log n_fields). Borrowed from m. */
const sc_mapping_field *sc_mapping_find(const sc_mapping *m, sc_slice path);

/* The root object field (path ""). */
const sc_mapping_field *sc_mapping_root(const sc_mapping *m);

/* The mapping's `runtime` section as given (kept verbatim; the search layer compiles it, see
 * api.md "Runtime fields"), or NULL. Borrowed: valid while m is referenced. */
const json_t *sc_mapping_runtime(const sc_mapping *m);

/* Every field by ordinal: 0 <= ord < sc_mapping_n_fields(m); ordinal 0 is the root. */
size_t sc_mapping_n_fields(const sc_mapping *m);
const sc_mapping_field *sc_mapping_field_at(const sc_mapping *m, uint32_t ord);

/* Elasticsearch's type name ("long", "text", "object", ...). */
const char *sc_mapping_type_name(sc_mapping_type t);

/* The sc_field_kind a field's values are indexed as (objects: SC_FIELD_KEYWORD, unused). */
sc_field_kind sc_mapping_field_kind(const sc_mapping_field *f);

/* True for the types stored as SC_FIELD_NUMERIC. */
bool sc_mapping_type_is_numeric(sc_mapping_type t);

/* The analyzer to use for a query on a text field: search_analyzer, else analyzer, else
 * "standard". For a quoted (phrase) query pass quoted=true to prefer search_quote_analyzer. */
const char *sc_mapping_search_analyzer(const sc_mapping_field *f, bool quoted);

/* The first `keyword` multi-field of f (e.g. "title.keyword"), or NULL. */
const sc_mapping_field *sc_mapping_keyword_subfield(const sc_mapping_field *f);

/* ---- analysis hook ---- */

/* How text is analyzed. The index owner binds these to src/text analyzers (by the names used in
 * the mapping and the index's analysis settings). Tokens are appended with positions relative
 * to the start of the value (first token 0; equal positions for stacked tokens); term bytes must
 * live in `arena`. A NULL sc_mapping_analysis (or NULL function) uses a built-in fallback:
 * split on characters that are not ASCII letters or digits (bytes >= 0x80 count as letters)
 * and lowercase ASCII; the fallback normalizer lowercases ASCII. */
typedef struct sc_mapping_analysis {
    void *ctx;
    sc_status (*analyze)(void *ctx, const char *analyzer, sc_slice text, sc_arena *arena,
                         sc_index_token **tokens, size_t *n_tokens);
    sc_status (*normalize)(void *ctx, const char *normalizer, sc_slice text, sc_arena *arena,
                           sc_slice *out);
} sc_mapping_analysis;

/* ---- documents ---- */

/* Turns one document into the fields the index stores. `source` is the document's _source
 * JSON (an object); `id` its _id. The result in *doc (fields, tokens, values, names) is
 * allocated in `arena` and borrows `id` and `source`: keep all three alive while *doc is used.
 * The first field is always "_id" (KEYWORD, INDEXED). Each mapped leaf field appears once with
 * all its values (arrays flattened); text positions continue across array values with the
 * field's position_increment_gap; `length` counts tokens (stacked tokens excluded), as Lucene's
 * norms do; multi-fields and copy_to targets receive the values too; null values use
 * null_value or are skipped; fields with index and doc_values both false are omitted.
 *
 * Unknown fields follow `dynamic`: true maps them with Elasticsearch's rules (string ->
 * text + keyword sub-field with ignore_above 256, or date when it looks like
 * strict_date_optional_time; integer -> long; real -> float; boolean -> boolean; object ->
 * object), false keeps them in _source only, strict fails. When new fields were mapped,
 * *updated receives a NEW mapping (owned; m merged with the new fields) that the caller must
 * install for later documents; otherwise *updated is NULL. updated must not be NULL.
 *
 * Errors (err filled, nothing indexed): SC_EPARSE for _source that is not a JSON object
 * (mapper_parsing_exception "failed to parse"); SC_EINVAL for a value that does not fit its
 * field (mapper_parsing_exception naming field, type, id and a preview of the value, with a
 * caused_by) unless ignore_malformed; SC_ECONFLICT for strict dynamic
 * (strict_dynamic_mapping_exception); SC_ELIMIT when the arena budget is exceeded or a dynamic field
 * would pass SC_MAPPING_MAX_FIELDS / SC_MAPPING_MAX_DEPTH (err: illegal_argument_exception);
 * SC_ENOMEM.
 * Thread-safe for concurrent calls on the same m. O(size of source + tokens). */
sc_status sc_mapping_parse_doc(const sc_mapping *m, const sc_mapping_analysis *analysis,
                               sc_slice id, sc_slice source, sc_arena *arena, sc_index_doc *doc,
                               sc_mapping **updated, sc_mapping_error *err) SC_MUST_USE;

/* The values of the fields at dotted paths[0..n_paths) in a document's _source JSON (parsed
 * once), each in source order into values[i] / n_values[i] (the caller's arrays of n_paths):
 * strings decoded, numbers and booleans as their source text, arrays flattened, objects and
 * dotted keys followed ({"a": {"b": x}} and {"a.b": x} both give x for "a.b"). The values live
 * in `arena` (strings may borrow `source`). Source that is not JSON gives no values. Returns
 * SC_OK, SC_ELIMIT / SC_ENOMEM (arena). Thread-safe. O(size of source). */
sc_status sc_mapping_source_values(sc_slice source, const sc_slice *paths, size_t n_paths,
                                   sc_arena *arena, sc_slice **values, size_t *n_values)
    SC_MUST_USE;

/* ---- completion fields ---- */

/* A completion field indexes each input as one term of the field: the analyzed key (tokens
 * joined by SC_MAPPING_COMPLETION_SEP when preserve_separators, else concatenated; with
 * preserve_position_increments a removed token leaves one more separator), a 0 byte, the
 * weight as 4 big-endian bytes, then the input as given (the suggestion's text). So the terms
 * of a prefix are one contiguous range of the terms dictionary. */
#define SC_MAPPING_COMPLETION_SEP 0x1f

/* The key of tokens[0..n) (positions as the analyzer gave them) for field f into the arena.
 * SC_ELIMIT / SC_ENOMEM. */
sc_status sc_mapping_completion_key(const sc_mapping_field *f, const sc_index_token *tokens,
                                    size_t n, sc_arena *arena, sc_slice *key) SC_MUST_USE;

/* Splits an indexed completion term; false when it is not one. */
bool sc_mapping_completion_decode(sc_slice term, sc_slice *key, uint32_t *weight, sc_slice *text);

/* ---- query values ---- */

/* One encoded value: for KEYWORD-kind fields (keyword, ip) `term` (bytes in the arena or
 * borrowed from the input), for NUMERIC-kind fields `num`. */
typedef struct sc_mapping_value {
    sc_field_kind kind;
    sc_slice term;
    int64_t num;
} sc_mapping_value;

/* Encodes a query value (a JSON string, number or boolean as a term/terms query carries it) for
 * field f exactly as documents are encoded, so equal values match: keyword values are
 * normalized, numbers parsed and range-checked, dates parsed with the field's format (and date
 * math, with now_ms), ips packed. Text fields are not handled here (analyze them with
 * sc_mapping_search_analyzer): SC_EINVAL. Errors as for documents but with type
 * "query_shard_exception"-style reasons in err (type "illegal_argument_exception"/
 * "number_format_exception"). */
sc_status sc_mapping_encode_value(const sc_mapping_field *f, const json_t *value,
                                  const sc_mapping_analysis *analysis, int64_t now_ms,
                                  sc_arena *arena, sc_mapping_value *out,
                                  sc_mapping_error *err) SC_MUST_USE;

/* A range query on a numeric-kind field turned into inclusive encoded bounds [*lo, *hi].
 * from/to may be NULL (unbounded); include_lower/upper say gte vs gt and lte vs lt. For
 * integer types fractional bounds round inward (gt 5.5 -> >= 6); for dates `format` (NULL = the
 * field's), `time_zone` offset and date math with rounding (round up for lte and gt) apply.
 * *empty is set when the range can match nothing (lo > hi). SC_EINVAL with err on bad values. */
sc_status sc_mapping_encode_range(const sc_mapping_field *f, const json_t *from, const json_t *to,
                                  bool include_lower, bool include_upper,
                                  const sc_date_format *format, int64_t tz_offset_ms,
                                  int64_t now_ms, int64_t *lo, int64_t *hi, bool *empty,
                                  sc_mapping_error *err) SC_MUST_USE;

/* Writes an encoded numeric doc value of field f as Elasticsearch shows it in `sort` values
 * and docvalue_fields: longs as integers, doubles/floats as numbers, booleans as true/false
 * in docvalue_fields (sort: 0/1 integers when for_sort), dates as epoch millis (sort) or
 * formatted with the field's format (docvalue_fields), unsigned_long as an integer. */
void sc_mapping_write_value(const sc_mapping_field *f, int64_t v, bool for_sort, sc_jsonw *w);

/* Lucene's NumericUtils.doubleToSortableLong and its inverse. */
int64_t sc_mapping_double_to_sortable(double d);
double sc_mapping_sortable_to_double(int64_t v);

/* Lucene's GeoEncodingUtils encodeLatitude/encodeLongitude packed as described above, and the
 * inverse (decoded values are the lower-left corner of the encoded cell, as Lucene's). */
int64_t sc_mapping_geo_encode(double lat, double lon);
void sc_mapping_geo_decode(int64_t v, double *lat, double *lon);

/* Parses an IPv4 or IPv6 address into 16 bytes (IPv4-mapped). SC_EINVAL if malformed. */
sc_status sc_mapping_ip_parse(sc_slice text, uint8_t out[16]) SC_MUST_USE;

/* Parses a CIDR block "addr/prefix" (IPv4 prefix 0..32, IPv6 0..128) into its first and last
 * address (16 bytes each, IPv4-mapped for IPv4). SC_ENOTFOUND when the text has no '/';
 * SC_EINVAL when malformed. */
sc_status sc_mapping_ip_cidr(sc_slice text, uint8_t lo[16], uint8_t hi[16]) SC_MUST_USE;

/* Formats 16 address bytes as Elasticsearch prints them (dotted quad for IPv4-mapped) into buf
 * (>= 46 bytes); returns the length. */
size_t sc_mapping_ip_format(const uint8_t in[16], char *buf);

#endif
