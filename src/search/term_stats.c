/* dfs_query_then_fetch statistics (term_stats.h): a walk of the query tree collecting scored
 * terms and their fields, local sums over a searcher's segments, and the sum over shards. */
#include "search/term_stats.h"

#include <string.h>

#include "base/vec.h"
#include "index/segment.h"
#include "index/terms.h"
#include "search/searcher.h"

typedef SC_VEC(sc_field_stat) field_vec;
typedef SC_VEC(sc_term_stat) term_vec;

typedef struct walk {
    const sc_searcher *s;
    sc_arena *a;
    field_vec fields;
    term_vec terms;
    sc_status st;
} walk;

static void add_field(walk *w, sc_slice field)
{
    for (size_t i = 0; i < w->fields.len; i++)
        if (sc_slice_eq(w->fields.ptr[i].field, field))
            return;
    sc_field_stat fs = {.field = field};
    for (size_t g = 0; g < w->s->n_segs; g++) {
        const sc_field_info *f = sc_segment_field(w->s->segs[g].seg, field);
        if (f) {
            fs.doc_count += f->doc_count;
            fs.sum_total_term_freq += f->sum_total_term_freq;
        }
    }
    if (sc_vec_push(&w->fields, fs) != SC_OK)
        w->st = SC_ENOMEM;
}

static void add_term(walk *w, sc_slice field, sc_slice term)
{
    if (w->st != SC_OK)
        return;
    add_field(w, field);
    for (size_t i = 0; i < w->terms.len; i++)
        if (sc_slice_eq(w->terms.ptr[i].field, field) && sc_slice_eq(w->terms.ptr[i].term, term))
            return;
    sc_term_stat ts = {.field = field, .term = term};
    for (size_t g = 0; g < w->s->n_segs; g++) {
        const sc_segment *seg = w->s->segs[g].seg;
        const sc_field_info *f = sc_segment_field(seg, field);
        if (!f)
            continue;
        sc_term_info ti;
        bool found;
        sc_status st = sc_terms_lookup(seg, f, term, &ti, &found);
        if (st != SC_OK) {
            w->st = st;
            return;
        }
        if (found) {
            ts.doc_freq += ti.doc_freq;
            ts.total_term_freq += ti.total_term_freq;
        }
    }
    if (sc_vec_push(&w->terms, ts) != SC_OK)
        w->st = SC_ENOMEM;
}

static void visit(walk *w, const sc_query *q)
{
    if (!q || w->st != SC_OK)
        return;
    switch (q->kind) {
    case SC_QUERY_TERM: add_term(w, q->u.term.field, q->u.term.term); break;
    case SC_QUERY_PHRASE:
        for (size_t i = 0; i < q->u.phrase.n_terms; i++)
            if (!(q->u.phrase.prefix_last && i + 1 == q->u.phrase.n_terms))
                add_term(w, q->u.phrase.field, q->u.phrase.terms[i]);
        break;
    case SC_QUERY_BOOL:
        for (size_t i = 0; i < q->u.bool_.n_clauses; i++)
            visit(w, q->u.bool_.clauses[i].query);
        break;
    case SC_QUERY_DIS_MAX:
        for (size_t i = 0; i < q->u.dis_max.n_queries; i++)
            visit(w, q->u.dis_max.queries[i]);
        break;
    case SC_QUERY_BOOSTING:
        visit(w, q->u.boosting.positive);
        visit(w, q->u.boosting.negative);
        break;
    case SC_QUERY_CONSTANT_SCORE: visit(w, q->u.constant_score.inner); break;
    case SC_QUERY_FUNCTION_SCORE: visit(w, q->u.function_score.inner); break;
    case SC_QUERY_NESTED: visit(w, q->u.nested.inner); break;
    default: break;
    }
}

/* Moves a heap vector's entries into the arena. */
static void *to_arena(sc_arena *a, const void *p, size_t n, size_t size)
{
    void *out = sc_arena_alloc(a, (n ? n : 1) * size);
    if (out && n)
        memcpy(out, p, n * size);
    return out;
}

sc_status sc_term_stats_collect(const sc_searcher *s, const sc_query *q, sc_arena *a,
                                sc_term_stats *out)
{
    memset(out, 0, sizeof *out);
    walk w = {.s = s, .a = a, .st = SC_OK};
    visit(&w, q);
    if (w.st == SC_OK) {
        out->fields = to_arena(a, w.fields.ptr, w.fields.len, sizeof *w.fields.ptr);
        out->terms = to_arena(a, w.terms.ptr, w.terms.len, sizeof *w.terms.ptr);
        if (!out->fields || !out->terms)
            w.st = a->over_budget ? SC_ELIMIT : SC_ENOMEM;
        out->n_fields = w.fields.len;
        out->n_terms = w.terms.len;
    }
    sc_vec_free(&w.fields);
    sc_vec_free(&w.terms);
    return w.st;
}

static sc_slice copy(sc_arena *a, sc_slice s, bool *ok)
{
    uint8_t *p = sc_arena_alloc(a, s.len ? s.len : 1);
    if (!p) {
        *ok = false;
        return s;
    }
    if (s.len)
        memcpy(p, s.ptr, s.len);
    return sc_slice_make(p, s.len);
}

sc_status sc_term_stats_add(sc_term_stats *into, const sc_term_stats *add, sc_arena *a)
{
    bool ok = true;
    size_t nf = into->n_fields, nt = into->n_terms;
    sc_field_stat *f = sc_arena_alloc(a, (nf + add->n_fields + 1) * sizeof *f);
    sc_term_stat *t = sc_arena_alloc(a, (nt + add->n_terms + 1) * sizeof *t);
    if (!f || !t)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    if (nf)
        memcpy(f, into->fields, nf * sizeof *f);
    if (nt)
        memcpy(t, into->terms, nt * sizeof *t);
    for (size_t i = 0; i < add->n_fields; i++) {
        size_t j = 0;
        while (j < nf && !sc_slice_eq(f[j].field, add->fields[i].field))
            j++;
        if (j == nf)
            f[nf++] = (sc_field_stat){.field = copy(a, add->fields[i].field, &ok)};
        f[j].doc_count += add->fields[i].doc_count;
        f[j].sum_total_term_freq += add->fields[i].sum_total_term_freq;
    }
    for (size_t i = 0; i < add->n_terms; i++) {
        const sc_term_stat *x = &add->terms[i];
        size_t j = 0;
        while (j < nt && !(sc_slice_eq(t[j].field, x->field) && sc_slice_eq(t[j].term, x->term)))
            j++;
        if (j == nt)
            t[nt++] =
                (sc_term_stat){.field = copy(a, x->field, &ok), .term = copy(a, x->term, &ok)};
        t[j].doc_freq += x->doc_freq;
        t[j].total_term_freq += x->total_term_freq;
    }
    if (!ok)
        return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
    *into = (sc_term_stats){.fields = f, .n_fields = nf, .terms = t, .n_terms = nt};
    return SC_OK;
}

bool sc_term_stats_field(const sc_term_stats *ts, sc_slice field, sc_bm25_field_stats *out)
{
    for (size_t i = 0; ts && i < ts->n_fields; i++)
        if (sc_slice_eq(ts->fields[i].field, field)) {
            out->doc_count = ts->fields[i].doc_count;
            out->sum_total_term_freq = ts->fields[i].sum_total_term_freq;
            return true;
        }
    return false;
}

bool sc_term_stats_term(const sc_term_stats *ts, sc_slice field, sc_slice term, uint64_t *df)
{
    for (size_t i = 0; ts && i < ts->n_terms; i++)
        if (sc_slice_eq(ts->terms[i].field, field) && sc_slice_eq(ts->terms[i].term, term)) {
            *df = ts->terms[i].doc_freq;
            return true;
        }
    return false;
}
