/* The document the index layer receives: already typed and analyzed by the mapping layer.
 * This header is the contract between mapping (producer) and index (consumer). All pointers
 * are borrowed for the duration of the call that receives the document. */
#ifndef SC_INDEX_DOC_H
#define SC_INDEX_DOC_H

#include <stddef.h>
#include <stdint.h>

#include "base/slice.h"

typedef enum sc_field_kind {
    /* Analyzed text: postings with frequencies and positions, a norm (field length). */
    SC_FIELD_TEXT,
    /* Exact terms (keyword, ip as text form, _id): postings of doc ids only (freq 1) and, when
     * SC_FIELD_DOCVALUES is set, sorted-set ordinals. */
    SC_FIELD_KEYWORD,
    /* 64-bit integers (long, integer, date millis, boolean 0/1, doubles as sortable longs):
     * numeric doc values when SC_FIELD_DOCVALUES, points when SC_FIELD_INDEXED. */
    SC_FIELD_NUMERIC,
    /* A dense vector (dense_vector): one float vector per doc of the field's dims, stored raw
     * (plus int8 codes and an HNSW graph per sc_vec_params); no postings. */
    SC_FIELD_VECTOR,
} sc_field_kind;

/* Vector similarity (Elasticsearch's `similarity`). */
typedef enum sc_vec_sim {
    SC_VEC_SIM_L2 = 0,     /* l2_norm: score 1 / (1 + d^2) */
    SC_VEC_SIM_COSINE = 1, /* cosine: vectors normalized at index time; (1 + cos) / 2 */
    SC_VEC_SIM_DOT = 2,    /* dot_product: (1 + dot) / 2 (float), 0.5 + dot / (dims 2^15) (byte) */
    SC_VEC_SIM_MIP = 3,    /* max_inner_product: dot + 1 if dot >= 0 else 1 / (1 - dot) */
} sc_vec_sim;

typedef enum sc_vec_elem {
    SC_VEC_ELEM_FLOAT = 0,
    SC_VEC_ELEM_BYTE = 1, /* integers -128..127, kept as floats */
    SC_VEC_ELEM_BIT = 2,  /* dims bits, kept as 0/1 floats: l2_norm is the hamming distance */
} sc_vec_elem;

/* index_options.type: a graph or not, raw floats or int8 codes for the search. */
typedef enum sc_vec_index {
    SC_VEC_INDEX_HNSW = 0,
    SC_VEC_INDEX_INT8_HNSW = 1,
    SC_VEC_INDEX_FLAT = 2,
    SC_VEC_INDEX_INT8_FLAT = 3,
} sc_vec_index;

/* How a vector field is stored and searched (from the mapping). */
typedef struct sc_vec_params {
    uint32_t dims; /* 1..SC_VEC_MAX_DIMS */
    sc_vec_sim sim;
    sc_vec_elem elem;
    sc_vec_index type;
    uint32_t m;               /* hnsw links per node (level 0: 2m); default 16 */
    uint32_t ef_construction; /* default 100 */
} sc_vec_params;

#define SC_VEC_MAX_DIMS 4096
#define SC_VEC_MAX_BIT_DIMS (4096 * 8) /* element_type bit: dims counts bits */

/* The largest dims of an element type. */
static inline uint32_t sc_vec_max_dims(sc_vec_elem e)
{
    return e == SC_VEC_ELEM_BIT ? SC_VEC_MAX_BIT_DIMS : SC_VEC_MAX_DIMS;
}

enum {
    SC_FIELD_INDEXED = 1u << 0,   /* searchable (postings or points) */
    SC_FIELD_DOCVALUES = 1u << 1, /* columnar values for sort/aggregations */
    SC_FIELD_NORMS = 1u << 2,     /* TEXT only: store a one-byte length norm */
    SC_FIELD_POSITIONS = 1u << 3, /* TEXT only: store positions (phrases) */
    /* NUMERIC only: each value is a geo point packed as ((uint32)lat << 32) | (uint32)lon of
     * Lucene's quantized coordinates (index/bkd2.h); points are a 2-D tree (sc_bkd2). */
    SC_FIELD_GEO = 1u << 4,
};

typedef struct sc_index_token {
    sc_slice term;     /* bytes of the term, after analysis */
    uint32_t position; /* absolute position within the field (gaps allowed) */
} sc_index_token;

/* One field of one document. A multi-valued field is one sc_index_field holding all values
 * (for text, the mapping layer continues positions across values with a gap). Field names are
 * full dotted paths ("user.name", "title.keyword"). */
typedef struct sc_index_field {
    sc_slice name;
    sc_field_kind kind;
    uint32_t flags;
    const sc_index_token *tokens; /* TEXT and KEYWORD */
    size_t n_tokens;
    uint32_t length;       /* TEXT: field length for the norm (tokens counted) */
    const int64_t *values; /* NUMERIC */
    size_t n_values;
    const float *vector;          /* VECTOR: vparams->dims floats (normalized for cosine) */
    const sc_vec_params *vparams; /* VECTOR */
} sc_index_field;

/* Name of the KEYWORD field a hidden nested child document carries (the path of its nested
 * object, "comments"); root documents never have it. */
#define SC_NESTED_PATH_FIELD "_nested_path"

typedef struct sc_index_doc sc_index_doc;
struct sc_index_doc {
    sc_slice id;     /* the document's _id (also present as a KEYWORD field named "_id") */
    sc_slice source; /* the original _source JSON bytes, stored compressed (children: empty) */
    const sc_index_field *fields;
    size_t n_fields;
    /* The objects of the document's `nested` fields, one hidden child document each, in
     * source order (Lucene's block join): the shard adds them immediately before this doc in
     * the same segment, each carrying _id (the root's) and SC_NESTED_PATH_FIELD. Children
     * have no children of their own. n_children 0 for documents without nested objects. */
    const sc_index_doc *children;
    size_t n_children;
};

#endif
