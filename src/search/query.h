/* The query tree: what a search asks for, before planning. The API layer converts the
 * Elasticsearch query DSL into this tree (analyzing `match` text itself), the query_string
 * parser (search/query_parser.h) produces it from Lucene classic syntax, and the executor
 * (search/searcher.h) runs it. Every node lives in a caller's sc_arena; constructors copy the
 * bytes they are given into that arena, so the tree never borrows from the request JSON. */
#ifndef SC_SEARCH_QUERY_H
#define SC_SEARCH_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/slice.h"
#include "base/status.h"
#include "search/function_score.h"

typedef enum sc_query_kind {
    SC_QUERY_MATCH_ALL,      /* every live doc, score = boost */
    SC_QUERY_MATCH_NONE,     /* no doc */
    SC_QUERY_TERM,           /* one exact (already analyzed) term in a field, BM25 scored */
    SC_QUERY_TERMS,          /* any of several exact terms, constant score = boost (ES terms) */
    SC_QUERY_BOOL,           /* must / should / must_not / filter clauses */
    SC_QUERY_PHRASE,         /* terms at relative positions, with slop (Lucene PhraseQuery) */
    SC_QUERY_PREFIX,         /* terms starting with bytes; constant score */
    SC_QUERY_WILDCARD,       /* Lucene wildcard: `*` any string, `?` one char, `\` escape */
    SC_QUERY_REGEXP,         /* Lucene RegExp syntax (search/automaton.h), whole-term match */
    SC_QUERY_FUZZY,          /* Levenshtein within max_edits (0..2), top-terms scoring */
    SC_QUERY_CONSTANT_SCORE, /* inner as a filter, score = boost */
    SC_QUERY_BOOSTING,   /* positive, scores multiplied by negative_boost when negative matches */
    SC_QUERY_DIS_MAX,    /* max of children's scores + tie_breaker * sum of the others */
    SC_QUERY_IDS,        /* documents whose _id is one of the given ids, constant score */
    SC_QUERY_EXISTS,     /* documents with any value in the field, constant score */
    SC_QUERY_RANGE,      /* numeric values in inclusive ranges (search/range.h), constant */
    SC_QUERY_GEO,        /* geo points in a box or within a distance (search/geo.h), constant */
    SC_QUERY_TERM_RANGE, /* terms between two bounds in byte order (TermRangeQuery) */
    SC_QUERY_KNN,        /* the k nearest vectors of a dense_vector field (search/knn.c) */
    SC_QUERY_FUNCTION_SCORE, /* inner query's docs rescored by functions (function_score.h) */
    SC_QUERY_NESTED,         /* roots with a nested child (of `path`) matching inner (block join) */
} sc_query_kind;

/* How a nested query scores a root from its matching children (Lucene's ScoreMode). */
typedef enum sc_nested_score_mode {
    SC_NESTED_SCORE_AVG = 0, /* Elasticsearch's default */
    SC_NESTED_SCORE_SUM,
    SC_NESTED_SCORE_MIN,
    SC_NESTED_SCORE_MAX,
    SC_NESTED_SCORE_NONE, /* score 0 */
} sc_nested_score_mode;

/* A geo query's shape, in degrees (Elasticsearch's geo_bounding_box and geo_distance). */
typedef enum sc_geo_kind {
    SC_GEO_BOX,      /* bottom <= lat <= top; left <= lon <= right, or when left > right
                      * (crossing the dateline) lon >= left or lon <= right */
    SC_GEO_DISTANCE, /* arc (haversine) distance from (lat, lon) <= radius_m meters */
} sc_geo_kind;

typedef struct sc_geo_shape {
    sc_geo_kind kind;
    double top, bottom, left, right; /* BOX */
    double lat, lon, radius_m;       /* DISTANCE */
} sc_geo_shape;

/* How a bool clause participates (Elasticsearch's names). */
typedef enum sc_query_occur {
    SC_OCCUR_MUST,     /* required, scored */
    SC_OCCUR_SHOULD,   /* optional, scored; see minimum_should_match */
    SC_OCCUR_MUST_NOT, /* excluded, not scored */
    SC_OCCUR_FILTER,   /* required, not scored */
} sc_query_occur;

/* How a multi-term query (prefix, wildcard, regexp) scores its expansion. Elasticsearch's
 * default for these is constant_score (every match scores `boost`), which is also what
 * Lucene's classic QueryParser uses. Fuzzy always uses top-terms blended scoring as Lucene. */
typedef enum sc_query_rewrite {
    SC_REWRITE_CONSTANT_SCORE = 0, /* default */
    SC_REWRITE_SCORING_BOOLEAN,    /* OR of term queries, BM25 scored */
} sc_query_rewrite;

/* Lucene RegExp syntax flags (the `flags` of an ES regexp query). SC_REGEXP_ALL is the
 * default in Elasticsearch's regexp query and in query_string `/.../`. */
enum {
    SC_REGEXP_INTERSECTION = 1u << 0, /* a&b */
    SC_REGEXP_COMPLEMENT = 1u << 1,   /* ~a */
    SC_REGEXP_EMPTY = 1u << 2,        /* # (the empty language) */
    SC_REGEXP_ANYSTRING = 1u << 3,    /* @ */
    SC_REGEXP_AUTOMATON = 1u << 4,    /* <name> (named automata: unsupported, an error) */
    SC_REGEXP_INTERVAL = 1u << 5,     /* <n-m> numeric interval */
    SC_REGEXP_ALL = 0xffffu,
    SC_REGEXP_NONE = 0,
};

/* Defaults shared by the DSL and the parser. */
#define SC_QUERY_MAX_DETERMINIZED_STATES 10000u /* ES/Lucene default for regexp/wildcard */
#define SC_QUERY_FUZZY_MAX_EXPANSIONS 50u       /* ES fuzzy default */
#define SC_QUERY_MAX_CLAUSE_COUNT 1024u         /* Lucene BooleanQuery.maxClauseCount */

typedef struct sc_query sc_query;

typedef struct sc_query_clause {
    sc_query_occur occur;
    sc_query *query;
} sc_query_clause;

struct sc_query {
    sc_query_kind kind;
    float boost; /* 1.0 unless set; every kind honours it (scores are multiplied by it) */
    union {
        /* SC_QUERY_TERM */
        struct {
            sc_slice field;
            sc_slice term;
        } term;
        /* SC_QUERY_TERMS: constant score (ES terms query). */
        struct {
            sc_slice field;
            sc_slice *terms;
            size_t n_terms;
        } terms;
        /* SC_QUERY_BOOL. minimum_should_match: number of should clauses that must match;
         * -1 means the default (0 if there is any must/filter clause, else 1 when there are
         * should clauses: Elasticsearch's and Lucene's rule). Use sc_query_bool_add. */
        struct {
            sc_query_clause *clauses;
            size_t n_clauses, cap_clauses;
            int32_t minimum_should_match;
        } bool_;
        /* SC_QUERY_PHRASE: terms[i] occurs at relative position positions[i] (positions come
         * from the analyzer, so gaps from removed tokens are kept; increasing). slop as
         * Lucene's PhraseQuery (0 = exact). */
        struct {
            sc_slice field;
            sc_slice *terms;
            uint32_t *positions;
            size_t n_terms;
            uint32_t slop;
            /* match_phrase_prefix: the last term is a prefix, expanded at planning into at
             * most max_expansions indexed terms (in term order) */
            bool prefix_last;
            uint32_t max_expansions;
        } phrase;
        /* SC_QUERY_PREFIX */
        struct {
            sc_slice field;
            sc_slice prefix;
            sc_query_rewrite rewrite;
        } prefix;
        /* SC_QUERY_WILDCARD: pattern in Lucene wildcard syntax. */
        struct {
            sc_slice field;
            sc_slice pattern;
            sc_query_rewrite rewrite;
            uint32_t max_determinized_states;
        } wildcard;
        /* SC_QUERY_REGEXP: Lucene RegExp syntax with SC_REGEXP_* flags. */
        struct {
            sc_slice field;
            sc_slice pattern;
            uint32_t flags;
            uint32_t max_determinized_states;
            sc_query_rewrite rewrite;
        } regexp;
        /* SC_QUERY_FUZZY: max_edits 0..2 (code points), prefix_length code points that must
         * match exactly, max_expansions = how many best terms are kept (Lucene's top-terms
         * rewrite; the selection is the query's meaning, not a truncation). */
        struct {
            sc_slice field;
            sc_slice term;
            uint32_t max_edits;
            uint32_t prefix_length;
            uint32_t max_expansions;
            bool transpositions;
        } fuzzy;
        /* SC_QUERY_CONSTANT_SCORE */
        struct {
            sc_query *inner;
        } constant_score;
        /* SC_QUERY_BOOSTING: score = positive's score, times negative_boost if negative
         * also matches. */
        struct {
            sc_query *positive;
            sc_query *negative;
            float negative_boost;
        } boosting;
        /* SC_QUERY_DIS_MAX */
        struct {
            sc_query **queries;
            size_t n_queries;
            float tie_breaker;
        } dis_max;
        /* SC_QUERY_IDS: matched against the KEYWORD field "_id". */
        struct {
            sc_slice *ids;
            size_t n_ids;
        } ids;
        /* SC_QUERY_EXISTS */
        struct {
            sc_slice field;
        } exists;
        /* SC_QUERY_RANGE: docs with a value in any [lo[i], hi[i]] of a NUMERIC field, values
         * as src/mapping encodes them (numeric term/terms are ranges [v, v]) */
        struct {
            sc_slice field;
            int64_t *lo, *hi;
            size_t n;
        } range;
        /* SC_QUERY_GEO: docs with a point of a geo_point field in the shape */
        struct {
            sc_slice field;
            sc_geo_shape shape;
        } geo;
        /* SC_QUERY_TERM_RANGE: terms t with lo <= t <= hi in byte order (< / > when not
         * inclusive; a missing bound is open); constant score unless rewritten. */
        struct {
            sc_slice field;
            sc_slice lo, hi;
            bool has_lo, has_hi, incl_lo, incl_hi;
            sc_query_rewrite rewrite;
        } term_range;
        /* SC_QUERY_KNN: the shard's k docs nearest to `vector` (dims floats, normalized by
         * the caller for cosine fields) among those `filter` accepts (NULL: all), searching
         * num_candidates per segment (the HNSW beam); hits whose raw similarity fails
         * `similarity` (NaN: none) are dropped. Scores are Elasticsearch's vector scores
         * times boost. min_score (-INFINITY unless a global kNN phase set it: the k-th best
         * score over all shards) drops the shard's hits scoring below it, boost included.
         * oversample: Elasticsearch's rescore_vector.oversample for quantized (int8) fields,
         * sc_vec_knn_opts.oversample (0, as sc_query_knn leaves it: scry's default). */
        struct {
            sc_slice field;
            float *vector;
            uint32_t dims;
            uint32_t k, num_candidates;
            sc_query *filter;
            float similarity;
            float min_score;
            float oversample;
        } knn;
        /* SC_QUERY_FUNCTION_SCORE: score = boost_mode(inner's score, min(score_mode over the
         * functions matching the doc, max_boost)); with has_min_score, docs scoring below
         * min_score do not match. Use sc_query_function_score_add. */
        struct {
            sc_query *inner;
            sc_score_function *fns;
            size_t n_fns, cap_fns;
            sc_sf_score_mode score_mode;
            sc_sf_boost_mode boost_mode;
            float max_boost; /* FLT_MAX unless given */
            bool has_min_score;
            float min_score;
        } function_score;
        /* SC_QUERY_NESTED: root docs having a child doc of nested path `path` that inner
         * matches; score = score_mode over those children's scores (times boost). inner's
         * fields are full paths ("comments.author"). */
        struct {
            sc_slice path;
            sc_query *inner;
            sc_nested_score_mode score_mode;
        } nested;
    } u;
};

/* Constructors. Each allocates one node (boost 1.0) in `a` and copies every byte string it is
 * given into `a`. They return NULL only when the arena is out of memory or over budget (the
 * caller reports SC_ENOMEM / SC_ELIMIT from a->over_budget). Not thread-safe (the arena). */
sc_query *sc_query_match_all(sc_arena *a);
sc_query *sc_query_match_none(sc_arena *a);
sc_query *sc_query_term(sc_arena *a, sc_slice field, sc_slice term);
sc_query *sc_query_terms(sc_arena *a, sc_slice field, const sc_slice *terms, size_t n_terms);
/* An empty bool; add clauses with sc_query_bool_add. minimum_should_match starts at -1. */
sc_query *sc_query_bool(sc_arena *a);
/* phrase: positions may be NULL for 0,1,2,... */
sc_query *sc_query_phrase(sc_arena *a, sc_slice field, const sc_slice *terms,
                          const uint32_t *positions, size_t n_terms, uint32_t slop);
sc_query *sc_query_prefix(sc_arena *a, sc_slice field, sc_slice prefix);
sc_query *sc_query_wildcard(sc_arena *a, sc_slice field, sc_slice pattern);
/* flags SC_REGEXP_ALL is Elasticsearch's default. */
sc_query *sc_query_regexp(sc_arena *a, sc_slice field, sc_slice pattern, uint32_t flags);
/* Lucene/ES defaults: max_edits 2, prefix_length 0, max_expansions 50, transpositions true. */
sc_query *sc_query_fuzzy(sc_arena *a, sc_slice field, sc_slice term, uint32_t max_edits,
                         uint32_t prefix_length, uint32_t max_expansions, bool transpositions);
sc_query *sc_query_constant_score(sc_arena *a, sc_query *inner);
sc_query *sc_query_boosting(sc_arena *a, sc_query *positive, sc_query *negative,
                            float negative_boost);
/* An empty dis_max; add children with sc_query_dis_max_add. */
sc_query *sc_query_dis_max(sc_arena *a, float tie_breaker);
sc_query *sc_query_ids(sc_arena *a, const sc_slice *ids, size_t n_ids);
sc_query *sc_query_exists(sc_arena *a, sc_slice field);
/* Inclusive ranges over encoded values (n >= 1; arrays copied); see search/range.h for the
 * bounds helper (gt/lt) and the points / doc-values choice. */
sc_query *sc_query_range(sc_arena *a, sc_slice field, const int64_t *lo, const int64_t *hi,
                         size_t n);

/* A geo query (shape copied); see sc_geo_shape. */
sc_query *sc_query_geo(sc_arena *a, sc_slice field, const sc_geo_shape *shape);
/* A term range (lo / hi NULL: open). */
sc_query *sc_query_term_range(sc_arena *a, sc_slice field, const sc_slice *lo, const sc_slice *hi,
                              bool incl_lo, bool incl_hi);

/* A kNN query (vector copied; filter borrowed from the same arena, may be NULL;
 * similarity NaN for none). */
sc_query *sc_query_knn(sc_arena *a, sc_slice field, const float *vector, uint32_t dims, uint32_t k,
                       uint32_t num_candidates, sc_query *filter, float similarity);
/* A function_score over inner with no functions yet (score_mode multiply, boost_mode
 * multiply, no max_boost, no min_score). */
sc_query *sc_query_function_score(sc_arena *a, sc_query *inner);

/* A nested query on `path` (copied) over inner (borrowed). */
sc_query *sc_query_nested(sc_arena *a, sc_slice path, sc_query *inner,
                          sc_nested_score_mode score_mode);

/* Appends a copy of *f (its filter borrowed, its field copied) to a function_score node.
 * SC_ENOMEM / SC_ELIMIT (arena), SC_EINVAL if q is not a function_score. */
sc_status sc_query_function_score_add(sc_arena *a, sc_query *q, const sc_score_function *f)
    SC_MUST_USE;

/* Appends a clause to a bool node (child is borrowed: it must live in the same arena).
 * SC_ENOMEM when the arena is exhausted, SC_ELIMIT past SC_QUERY_MAX_CLAUSE_COUNT clauses
 * (Lucene's "maxClauseCount is set to 1024"), SC_EINVAL if q is not a bool. Amortized O(1). */
sc_status sc_query_bool_add(sc_arena *a, sc_query *q, sc_query_occur occur, sc_query *child)
    SC_MUST_USE;

/* Appends a child to a dis_max node. SC_ENOMEM / SC_EINVAL as above. */
sc_status sc_query_dis_max_add(sc_arena *a, sc_query *q, sc_query *child) SC_MUST_USE;

/* The DSL name of a kind ("term", "bool", ...). Never NULL. */
const char *sc_query_kind_name(sc_query_kind kind);

/* Writes a compact, deterministic, human-readable form of the tree into buf (at most cap
 * bytes including the NUL; truncated output ends with "..."), in the style of Lucene's
 * Query.toString: `+body:foo -body:bar (body:a body:b)~1 body:"x y"~2 body:ab* ^2.0`.
 * Returns the length the full string would have. For tests and debugging. */
size_t sc_query_to_string(const sc_query *q, char *buf, size_t cap);

#endif
