/* Phrases over token graphs (match_phrase with a synonym_graph or word_delimiter_graph search
 * analyzer): the analyzed text is a graph when a token spans several positions (Lucene's
 * positionLength). Each path through the graph (a token starting where the previous one ended,
 * holes kept) becomes a phrase, and the query is their disjunction: a document matches when
 * one path occurs as a phrase, as with Lucene's QueryBuilder.analyzeGraphPhrase. */
#include "api/dsl_internal.h"

#include <string.h>

/* More paths than this (a graph of many multi-way branches) and the phrase is built from the
 * flat token list as before. */
#define MAX_PATHS 64

typedef struct walk {
    P *p;
    sc_slice field;
    const sc_dsl_token *toks;
    size_t n;
    uint32_t base, end, slop;
    sc_slice *terms; /* the path being walked: terms and phrase positions */
    uint32_t *pos;
    size_t depth;
    sc_query *out; /* the disjunction */
    size_t n_paths;
    bool too_many;
} walk;

static uint32_t rel(const walk *w, size_t i)
{
    return w->toks[i].position - w->base;
}

static uint32_t len_of(const walk *w, size_t i)
{
    return w->toks[i].position_length ? w->toks[i].position_length : 1;
}

static sc_status add_path(walk *w)
{
    if (++w->n_paths > MAX_PATHS) {
        w->too_many = true;
        return SC_OK;
    }
    size_t n = w->depth;
    sc_slice *t = sc_arena_alloc(w->p->a, n * sizeof *t);
    uint32_t *ps = sc_arena_alloc(w->p->a, n * sizeof *ps);
    if (!t || !ps)
        return sc__dsl_oom(w->p);
    memcpy(t, w->terms, n * sizeof *t);
    memcpy(ps, w->pos, n * sizeof *ps);
    sc_query *q = n == 1 ? sc_query_term(w->p->a, w->field, t[0])
                         : sc_query_phrase(w->p->a, w->field, t, ps, n, w->slop);
    if (!q)
        return sc__dsl_oom(w->p);
    sc_status st = sc_query_bool_add(w->p->a, w->out, SC_OCCUR_SHOULD, q);
    if (st == SC_ELIMIT)
        return sc__dsl_fail(w->p, "illegal_argument_exception",
                            "too_many_clauses: maxClauseCount is set to 1024");
    return st == SC_OK ? SC_OK : sc__dsl_oom(w->p);
}

/* Extends the path at graph node x (next phrase position pp). */
static sc_status step(walk *w, uint32_t x, uint32_t pp)
{
    if (w->too_many)
        return SC_OK;
    /* the nearest node at or after x where tokens start (a hole: a removed stop word) */
    uint32_t y = UINT32_MAX;
    for (size_t i = 0; i < w->n; i++)
        if (rel(w, i) >= x && rel(w, i) < y)
            y = rel(w, i);
    if (y == UINT32_MAX)
        return x >= w->end && w->depth ? add_path(w) : SC_OK;
    pp += y - x;
    for (size_t i = 0; i < w->n && !w->too_many; i++) {
        if (rel(w, i) != y)
            continue;
        w->terms[w->depth] = w->toks[i].term;
        w->pos[w->depth] = pp;
        w->depth++;
        sc_status st = step(w, y + len_of(w, i), pp + 1);
        w->depth--;
        if (st != SC_OK)
            return st;
    }
    return SC_OK;
}

sc_status sc__dsl_graph_phrase(P *p, sc_slice field, const sc_dsl_token *toks, size_t n,
                               uint32_t slop, sc_query **out)
{
    *out = NULL;
    bool graph = false;
    uint32_t base = toks[0].position, end = 0;
    for (size_t i = 0; i < n; i++) {
        graph |= toks[i].position_length > 1;
        if (toks[i].position < base)
            base = toks[i].position;
    }
    if (!graph || n > 512) /* a long text: the flat phrase (the walk is quadratic) */
        return SC_OK;
    walk w = {.p = p, .field = field, .toks = toks, .n = n, .base = base, .slop = slop};
    for (size_t i = 0; i < n; i++)
        if (rel(&w, i) + len_of(&w, i) > end)
            end = rel(&w, i) + len_of(&w, i);
    w.end = end;
    w.terms = sc_arena_alloc(p->a, n * sizeof *w.terms);
    w.pos = sc_arena_alloc(p->a, n * sizeof *w.pos);
    w.out = sc_query_bool(p->a);
    if (!w.terms || !w.pos || !w.out)
        return sc__dsl_oom(p);
    SC_TRY(step(&w, 0, 0));
    if (w.too_many || !w.n_paths)
        return SC_OK; /* the caller builds the flat phrase */
    w.out->u.bool_.minimum_should_match = 1;
    *out = w.out;
    return SC_OK;
}
