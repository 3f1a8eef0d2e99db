/* Private layout of sc_segment_builder, shared by builder.c (accumulating) and segwrite.c
 * (writing the segment file). */
#ifndef SC_INDEX_BUILDER_IMPL_H
#define SC_INDEX_BUILDER_IMPL_H

#include "base/hashmap.h"
#include "index/internal.h"

typedef struct sc__keychunk {
    struct sc__keychunk *prev;
    size_t cap;
    uint8_t data[];
} sc__keychunk;

typedef struct sc__bterm {
    uint64_t pfx; /* the key's first 8 bytes, zero padded: most equality checks end here */
    const uint8_t *key;
    uint32_t len;
    uint32_t field;
    uint32_t df;
    uint32_t last_doc;
    uint64_t ttf;
    uint32_t in_dv;    /* appears in sorted-set doc values */
    uint32_t rank;     /* set while writing: rank within its field */
    uint32_t cur_doc;  /* adding: doc + 1 of the doc being added when counted in it */
    uint32_t cur_freq; /* adding: occurrences in that doc */
    uint32_t cur_slot; /* adding: next free slot of its positions */
} sc__bterm;

typedef struct sc__brec {
    uint32_t gid, doc, freq, pos;
} sc__brec;

typedef struct sc__pair {
    uint32_t gid, pos;
} sc__pair;

typedef struct sc__dvn {
    int64_t value;
    uint32_t doc;
} sc__dvn;

typedef struct sc__dvs {
    uint32_t doc, gid;
} sc__dvs;

/* A field's term table: open addressing with linear probing over 8-byte slots (the high 32
 * bits of the term's hash and gid + 1, 0 = empty), at most half full. Keys are compared via
 * the builder's term entries (prefix, then the rest), which the caller touches anyway. */
typedef struct sc__tslot {
    uint32_t h32;
    uint32_t gid1;
} sc__tslot;

typedef struct sc__ttable {
    sc__tslot *slots;
    size_t cap; /* power of two, or 0 */
    size_t len;
} sc__ttable;

struct sc__bfield {
    char *name;
    size_t name_len;
    sc_field_kind kind;
    uint32_t flags;
    uint32_t number;
    sc__ttable terms;     /* term -> gid */
    sc_buf norms;         /* by doc; may be shorter than n_docs (missing = 0) */
    SC_VEC(uint64_t) has; /* docs with a value, bitset words */
    SC_VEC(sc__dvn) dvn;
    SC_VEC(sc__dvn) pts; /* NUMERIC + INDEXED: (value, doc) points for the BKD tree */
    SC_VEC(sc__dvs) dvs;
    uint64_t sum_ttf;
    /* VECTOR: params (dims 0 until the first vector), docs ascending, their vectors; a merge
     * may lend the largest input's graph (seed, borrowed until the write) whose node i is
     * vector seed_base + i here */
    sc_vec_params vp;
    SC_VEC(uint32_t) vdocs;
    SC_VEC(float) vecs;
    const struct sc_hnsw_graph *seed;
    uint32_t seed_base;
};

struct sc_segment_builder {
    sc_hashmap fields_by_name; /* name -> index in fields */
    SC_VEC(sc__bfield *) fields;
    SC_VEC(sc__bterm) terms;
    SC_VEC(sc__brec) recs;
    SC_VEC(uint32_t) positions;
    sc__keychunk *chunk;
    size_t chunk_used;
    size_t key_bytes;
    sc_buf stored;
    SC_VEC(uint64_t) stored_off;
    uint32_t n_docs;
    sc_status failed;       /* sticky: an add failed half-way; only reset recovers */
    SC_VEC(sc__pair) pairs; /* scratch */
    SC_VEC(uint32_t) gids;  /* scratch */
};

#endif
