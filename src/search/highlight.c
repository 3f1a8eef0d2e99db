/* The highlighter's matching half (highlight.h): a query tree compiled into per-field term
 * matchers and phrases, and one doc's field values re-analysed and matched, giving the marked
 * tokens with their offsets and per-term frequencies to highlight_passage.c. */
#include <stdlib.h>
#include <string.h>

#include "search/automaton.h"
#include "search/highlight_internal.h"

typedef enum hm_kind {
    HM_TERM,
    HM_PREFIX,
    HM_DFA,
    HM_FUZZY
} hm_kind;

typedef struct hl_matcher {
    hm_kind kind;
    sc_slice bytes; /* term, prefix, fuzzy term */
    sc_dfa dfa;     /* wildcard / regexp */
    uint32_t max_edits;
    size_t prefix_bytes; /* fuzzy: bytes of the exact prefix_length code points */
    bool transpositions;
} hl_matcher;

typedef struct hl_phrase {
    const sc_slice *terms;
    const uint32_t *pos;
    size_t n;
    uint32_t slop;
    bool prefix_last; /* match_phrase_prefix: the last word is a prefix */
} hl_phrase;

/* Whether token t can stand for word i of phrase ph. */
static bool phrase_term_ok(const hl_phrase *ph, size_t i, sc_slice t)
{
    return ph->prefix_last && i + 1 == ph->n ? sc_slice_starts_with(t, ph->terms[i])
                                             : sc_slice_eq(ph->terms[i], t);
}

struct sc_hl_query {
    hl_matcher *m;
    size_t n_m, cap_m;
    hl_phrase *ph;
    size_t n_ph, cap_ph;
};

#define HL_MAX_DFA_STATES 10000
#define HL_VALUE_SEP "\xE2\x80\xA9" /* U+2029 PARAGRAPH SEPARATOR between values */
#define HL_VALUE_SEP_LEN 3
#define HL_POSITION_GAP 100

static sc_status oom(sc_arena *a)
{
    return a->over_budget ? SC_ELIMIT : SC_ENOMEM;
}

void sc_hl_options_init(sc_hl_options *o)
{
    memset(o, 0, sizeof *o);
    o->pre_tag = sc_slice_cstr("<em>");
    o->post_tag = sc_slice_cstr("</em>");
    o->fragment_size = 100;
    o->number_of_fragments = 5;
    o->boundary = SC_HL_BOUNDARY_SENTENCE;
    o->boundary_chars = sc_slice_cstr(".,!? \t\n");
    o->max_analyzed_offset = -1;
}

static hl_matcher *add_matcher(sc_hl_query *hq, sc_arena *a)
{
    if (hq->n_m == hq->cap_m) {
        size_t cap = hq->cap_m ? hq->cap_m * 2 : 8;
        hl_matcher *m = sc_arena_alloc(a, cap * sizeof *m);
        if (!m)
            return NULL;
        if (hq->n_m)
            memcpy(m, hq->m, hq->n_m * sizeof *m);
        hq->m = m;
        hq->cap_m = cap;
    }
    hl_matcher *m = &hq->m[hq->n_m++];
    memset(m, 0, sizeof *m);
    return m;
}

static sc_status add_phrase(sc_hl_query *hq, sc_arena *a, const sc_query *q)
{
    if (hq->n_ph == hq->cap_ph) {
        size_t cap = hq->cap_ph ? hq->cap_ph * 2 : 4;
        hl_phrase *p = sc_arena_alloc(a, cap * sizeof *p);
        if (!p)
            return oom(a);
        if (hq->n_ph)
            memcpy(p, hq->ph, hq->n_ph * sizeof *p);
        hq->ph = p;
        hq->cap_ph = cap;
    }
    hq->ph[hq->n_ph++] = (hl_phrase){.terms = q->u.phrase.terms,
                                     .pos = q->u.phrase.positions,
                                     .n = q->u.phrase.n_terms,
                                     .slop = q->u.phrase.slop,
                                     .prefix_last = q->u.phrase.prefix_last};
    return SC_OK;
}

/* Bytes of the first n code points of s (all of s when shorter). */
static size_t cp_prefix_bytes(sc_slice s, uint32_t n)
{
    size_t i = 0;
    while (n > 0 && i < s.len) {
        i++;
        while (i < s.len && (s.ptr[i] & 0xC0) == 0x80)
            i++;
        n--;
    }
    return i;
}

static sc_status add_simple(sc_hl_query *hq, sc_arena *a, hm_kind kind, sc_slice bytes)
{
    hl_matcher *m = add_matcher(hq, a);
    if (!m)
        return oom(a);
    m->kind = kind;
    m->bytes = bytes;
    return SC_OK;
}

static sc_status add_dfa(sc_hl_query *hq, sc_arena *a, const sc_query *q)
{
    sc_dfa d;
    sc_status st =
        q->kind == SC_QUERY_WILDCARD
            ? sc_automaton_wildcard(q->u.wildcard.pattern, HL_MAX_DFA_STATES, a, &d, NULL)
            : sc_automaton_regexp(q->u.regexp.pattern, q->u.regexp.flags, HL_MAX_DFA_STATES, a, &d,
                                  NULL);
    if (st == SC_ENOMEM || (st != SC_OK && a->over_budget))
        return oom(a);
    if (st != SC_OK)
        return SC_OK; /* the query phase reported it; nothing to mark */
    hl_matcher *m = add_matcher(hq, a);
    if (!m)
        return oom(a);
    m->kind = HM_DFA;
    m->dfa = d;
    return SC_OK;
}

static sc_status walk(sc_hl_query *hq, sc_arena *a, const sc_query *q, sc_slice field, bool rfm);

static bool field_ok(sc_slice qf, sc_slice field, bool rfm)
{
    return !rfm || sc_slice_eq(qf, field);
}

static sc_status walk_leaf(sc_hl_query *hq, sc_arena *a, const sc_query *q, sc_slice field,
                           bool rfm)
{
    switch (q->kind) {
    case SC_QUERY_TERM:
        return field_ok(q->u.term.field, field, rfm) ? add_simple(hq, a, HM_TERM, q->u.term.term)
                                                     : SC_OK;
    case SC_QUERY_TERMS:
        for (size_t i = 0; field_ok(q->u.terms.field, field, rfm) && i < q->u.terms.n_terms; i++)
            SC_TRY(add_simple(hq, a, HM_TERM, q->u.terms.terms[i]));
        return SC_OK;
    case SC_QUERY_PHRASE:
        return field_ok(q->u.phrase.field, field, rfm) ? add_phrase(hq, a, q) : SC_OK;
    case SC_QUERY_PREFIX:
        return field_ok(q->u.prefix.field, field, rfm)
                   ? add_simple(hq, a, HM_PREFIX, q->u.prefix.prefix)
                   : SC_OK;
    case SC_QUERY_WILDCARD:
        return field_ok(q->u.wildcard.field, field, rfm) ? add_dfa(hq, a, q) : SC_OK;
    case SC_QUERY_REGEXP:
        return field_ok(q->u.regexp.field, field, rfm) ? add_dfa(hq, a, q) : SC_OK;
    case SC_QUERY_FUZZY: {
        if (!field_ok(q->u.fuzzy.field, field, rfm))
            return SC_OK;
        hl_matcher *m = add_matcher(hq, a);
        if (!m)
            return oom(a);
        m->kind = HM_FUZZY;
        m->bytes = q->u.fuzzy.term;
        m->max_edits = q->u.fuzzy.max_edits;
        m->prefix_bytes = cp_prefix_bytes(q->u.fuzzy.term, q->u.fuzzy.prefix_length);
        m->transpositions = q->u.fuzzy.transpositions;
        return SC_OK;
    }
    default: return SC_OK; /* match_all, ranges, ids, exists, geo: nothing to mark */
    }
}

static sc_status walk(sc_hl_query *hq, sc_arena *a, const sc_query *q, sc_slice field, bool rfm)
{
    if (!q)
        return SC_OK;
    switch (q->kind) {
    case SC_QUERY_BOOL:
        for (size_t i = 0; i < q->u.bool_.n_clauses; i++)
            if (q->u.bool_.clauses[i].occur != SC_OCCUR_MUST_NOT)
                SC_TRY(walk(hq, a, q->u.bool_.clauses[i].query, field, rfm));
        return SC_OK;
    case SC_QUERY_DIS_MAX:
        for (size_t i = 0; i < q->u.dis_max.n_queries; i++)
            SC_TRY(walk(hq, a, q->u.dis_max.queries[i], field, rfm));
        return SC_OK;
    case SC_QUERY_CONSTANT_SCORE: return walk(hq, a, q->u.constant_score.inner, field, rfm);
    case SC_QUERY_BOOSTING: return walk(hq, a, q->u.boosting.positive, field, rfm);
    case SC_QUERY_FUNCTION_SCORE: return walk(hq, a, q->u.function_score.inner, field, rfm);
    case SC_QUERY_NESTED: return walk(hq, a, q->u.nested.inner, field, rfm);
    default: return walk_leaf(hq, a, q, field, rfm);
    }
}

sc_status sc_hl_query_build(const sc_query *q, sc_slice field, bool require_field_match,
                            sc_arena *a, sc_hl_query **out)
{
    sc_hl_query *hq = sc_arena_calloc(a, 1, sizeof *hq);
    if (!hq)
        return oom(a);
    SC_TRY(walk(hq, a, q, field, require_field_match));
    *out = hq;
    return SC_OK;
}

bool sc_hl_query_empty(const sc_hl_query *hq)
{
    return hq->n_m == 0 && hq->n_ph == 0;
}

static bool matcher_hit(const hl_matcher *m, sc_slice t)
{
    switch (m->kind) {
    case HM_TERM: return sc_slice_eq(m->bytes, t);
    case HM_PREFIX: return sc_slice_starts_with(t, m->bytes);
    case HM_DFA: return sc_automaton_run(&m->dfa, t);
    case HM_FUZZY:
        return t.len >= m->prefix_bytes && memcmp(t.ptr, m->bytes.ptr, m->prefix_bytes) == 0 &&
               sc_automaton_edit_distance(m->bytes, t, m->transpositions, m->max_edits) <=
                   m->max_edits;
    }
    return false;
}

/* ---- one doc ---- */

/* A token kept for matching: marked, or a phrase word waiting for the phrase check. */
typedef struct rec {
    uint32_t start, end, pos, term;
    bool marked;
} rec;

typedef struct scan {
    const sc_hl_query *hq;
    sc_arena *a;
    rec *r;
    size_t n_r, cap_r;
    /* term intern table: open addressing over term ids */
    sc_slice *terms;
    uint32_t *freq;
    size_t n_terms, cap_terms;
    uint32_t *slots; /* term id + 1, 0 = empty; 2 * cap_terms slots */
    uint32_t base_off, base_pos, last_pos;
    int64_t limit; /* max_analyzed_offset in joined bytes, -1 none */
    bool stop;
} scan;

static uint32_t hash_bytes(sc_slice s)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < s.len; i++)
        h = (h ^ s.ptr[i]) * 16777619u;
    return h;
}

static sc_status grow_terms(scan *s)
{
    size_t cap = s->cap_terms ? s->cap_terms * 2 : 16;
    sc_slice *t = sc_arena_alloc(s->a, cap * sizeof *t);
    uint32_t *f = sc_arena_alloc(s->a, cap * sizeof *f);
    uint32_t *slots = sc_arena_calloc(s->a, cap * 2, sizeof *slots);
    if (!t || !f || !slots)
        return oom(s->a);
    if (s->n_terms) {
        memcpy(t, s->terms, s->n_terms * sizeof *t);
        memcpy(f, s->freq, s->n_terms * sizeof *f);
    }
    for (size_t i = 0; i < s->n_terms; i++) {
        size_t k = hash_bytes(t[i]) & (cap * 2 - 1);
        while (slots[k])
            k = (k + 1) & (cap * 2 - 1);
        slots[k] = (uint32_t)i + 1;
    }
    s->terms = t;
    s->freq = f;
    s->slots = slots;
    s->cap_terms = cap;
    return SC_OK;
}

/* The id of term t (copied in on first sight), its frequency counted. */
static sc_status intern(scan *s, sc_slice t, uint32_t *id)
{
    if (s->n_terms == s->cap_terms)
        SC_TRY(grow_terms(s));
    size_t mask = s->cap_terms * 2 - 1, k = hash_bytes(t) & mask;
    while (s->slots[k]) {
        uint32_t i = s->slots[k] - 1;
        if (sc_slice_eq(s->terms[i], t)) {
            s->freq[i]++;
            *id = i;
            return SC_OK;
        }
        k = (k + 1) & mask;
    }
    uint8_t *copy = sc_arena_alloc(s->a, t.len ? t.len : 1);
    if (!copy)
        return oom(s->a);
    memcpy(copy, t.ptr, t.len);
    uint32_t i = (uint32_t)s->n_terms++;
    s->terms[i] = sc_slice_make(copy, t.len);
    s->freq[i] = 1;
    s->slots[k] = i + 1;
    *id = i;
    return SC_OK;
}

static bool phrase_word(const sc_hl_query *hq, sc_slice t)
{
    for (size_t p = 0; p < hq->n_ph; p++)
        for (size_t i = 0; i < hq->ph[p].n; i++)
            if (phrase_term_ok(&hq->ph[p], i, t))
                return true;
    return false;
}

static sc_status sink(void *ctx, const sc_token *tok)
{
    scan *s = ctx;
    uint32_t start = s->base_off + tok->start_offset, end = s->base_off + tok->end_offset;
    if (s->limit >= 0 && end > s->limit) {
        s->stop = true;
        return SC_ECANCELLED; /* past max_analyzed_offset: stop analysing */
    }
    uint32_t pos = s->base_pos + tok->position;
    if (pos > s->last_pos)
        s->last_pos = pos;
    sc_slice t = sc_slice_make(tok->term, tok->len);
    bool marked = false;
    size_t hit = 0;
    for (; hit < s->hq->n_m && !marked; hit++)
        marked = matcher_hit(&s->hq->m[hit], t);
    bool word = phrase_word(s->hq, t);
    if (!marked && !word)
        return SC_OK;
    /* A multi-term matcher's hits are one "term" for scoring, as Lucene names their offsets
     * after the automaton and sums their frequencies: key 0xFF + matcher number (never UTF-8). */
    uint8_t vkey[1 + sizeof(size_t)];
    if (marked && !word && s->hq->m[hit - 1].kind != HM_TERM) {
        vkey[0] = 0xFF;
        memcpy(vkey + 1, &hit, sizeof hit);
        t = sc_slice_make(vkey, sizeof vkey);
    }
    if (s->n_r == s->cap_r) {
        size_t cap = s->cap_r ? s->cap_r * 2 : 64;
        rec *r = sc_arena_alloc(s->a, cap * sizeof *r);
        if (!r)
            return oom(s->a);
        if (s->n_r)
            memcpy(r, s->r, s->n_r * sizeof *r);
        s->r = r;
        s->cap_r = cap;
    }
    rec *r = &s->r[s->n_r];
    SC_TRY(intern(s, t, &r->term));
    r->start = start;
    r->end = end;
    r->pos = pos;
    r->marked = marked;
    s->n_r++;
    return SC_OK;
}

/* The record index of phrase word k at a position within [lo, hi], or -1. Records are in
 * position order (the analyzer's order, positions never decrease). */
static long find_at(const scan *s, const hl_phrase *ph, size_t k, int64_t lo, int64_t hi)
{
    size_t a = 0, b = s->n_r;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if ((int64_t)s->r[mid].pos < lo)
            a = mid + 1;
        else
            b = mid;
    }
    for (size_t i = a; i < s->n_r && (int64_t)s->r[i].pos <= hi; i++)
        if (phrase_term_ok(ph, k, s->terms[s->r[i].term]))
            return (long)i;
    return -1;
}

/* Marks the words of every occurrence of each phrase (whole phrases only). */
static void mark_phrases(scan *s)
{
    for (size_t p = 0; p < s->hq->n_ph; p++) {
        const hl_phrase *ph = &s->hq->ph[p];
        long found[64];
        if (ph->n == 0 || ph->n > 64)
            continue;
        for (size_t i = 0; i < s->n_r; i++) {
            if (!phrase_term_ok(ph, 0, s->terms[s->r[i].term]))
                continue;
            int64_t p0 = (int64_t)s->r[i].pos - ph->pos[0];
            size_t k = 0;
            for (; k < ph->n; k++) {
                int64_t want = p0 + ph->pos[k];
                found[k] = k == 0 ? (long)i : find_at(s, ph, k, want - ph->slop, want + ph->slop);
                if (found[k] < 0)
                    break;
            }
            if (k == ph->n)
                for (k = 0; k < ph->n; k++)
                    s->r[found[k]].marked = true;
        }
    }
}

static int cmp_match(const void *x, const void *y)
{
    const sc__hl_match *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->end < b->end ? -1 : a->end > b->end;
}

/* Joins the values with the separator; *ends gets each value's end offset. */
static sc_status join_values(const sc_slice *values, size_t n, sc_arena *a, sc_slice *text,
                             uint32_t **ends)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += values[i].len + (i ? HL_VALUE_SEP_LEN : 0);
    if (len > UINT32_MAX / 2)
        return SC_ELIMIT;
    uint8_t *buf = sc_arena_alloc(a, len ? len : 1);
    uint32_t *e = sc_arena_alloc(a, (n ? n : 1) * sizeof *e);
    if (!buf || !e)
        return oom(a);
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        if (i) {
            memcpy(buf + off, HL_VALUE_SEP, HL_VALUE_SEP_LEN);
            off += HL_VALUE_SEP_LEN;
        }
        if (values[i].len)
            memcpy(buf + off, values[i].ptr, values[i].len);
        off += values[i].len;
        e[i] = (uint32_t)off;
    }
    *text = sc_slice_make(buf, len);
    *ends = e;
    return SC_OK;
}

static sc_status analyze_values(scan *s, const sc_analyzer *an, sc_slice text, const uint32_t *ends,
                                size_t n)
{
    uint32_t off = 0;
    for (size_t i = 0; i < n && !s->stop; i++) {
        s->base_off = off;
        sc_slice v = sc_slice_make(text.ptr + off, ends[i] - off);
        sc_status st = sc_analyzer_analyze(an, v, sink, s);
        if (st != SC_OK && !(st == SC_ECANCELLED && s->stop))
            return st;
        s->base_pos = s->last_pos + HL_POSITION_GAP + 1;
        off = ends[i] + HL_VALUE_SEP_LEN;
    }
    return SC_OK;
}

sc_status sc_highlight_field(const sc_hl_query *hq, const sc_analyzer *an, const sc_hl_options *o,
                             const sc_slice *values, size_t n_values, sc_hl_scratch *scratch,
                             sc_arena *a, sc_slice **frags, size_t *n_frags)
{
    *frags = NULL;
    *n_frags = 0;
    if (n_values == 0)
        return SC_OK;
    sc__hl_doc d = {.n_values = n_values};
    uint32_t *ends;
    SC_TRY(join_values(values, n_values, a, &d.text, &ends));
    d.value_ends = ends;
    scan s = {.hq = hq, .a = a, .limit = o->max_analyzed_offset};
    if (!sc_hl_query_empty(hq))
        SC_TRY(analyze_values(&s, an, d.text, ends, n_values));
    if (hq->n_ph)
        mark_phrases(&s);
    /* A term's frequency is its marked occurrences: all of them for a plain term, those inside
     * a matched phrase for a phrase's word (Lucene counts the phrase-filtered offsets). */
    size_t nm = 0;
    for (size_t i = 0; i < s.n_terms; i++)
        s.freq[i] = 0;
    for (size_t i = 0; i < s.n_r; i++) {
        nm += s.r[i].marked;
        s.freq[s.r[i].term] += s.r[i].marked;
    }
    sc__hl_match *m = sc_arena_alloc(a, (nm ? nm : 1) * sizeof *m);
    if (!m)
        return oom(a);
    nm = 0;
    for (size_t i = 0; i < s.n_r; i++)
        if (s.r[i].marked)
            m[nm++] = (sc__hl_match){.start = s.r[i].start, .end = s.r[i].end, .term = s.r[i].term};
    qsort(m, nm, sizeof *m, cmp_match);
    d.m = m;
    d.n_m = nm;
    d.term_freq = s.freq;
    return sc__hl_snippets(&d, o, scratch, a, frags, n_frags);
}
