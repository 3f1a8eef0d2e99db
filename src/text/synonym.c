/* Synonyms: the rule map (Solr format, each side analyzed by the chain before the filter) and
 * the filter stage. Matching is greedy longest-match from each input token, as Lucene's
 * SynonymGraphFilter does; a match is replaced by a small graph whose paths are the rule's
 * outputs (then the original tokens when the rule keeps them), flattened by start node:
 *   "ny" -> "new york" (+ original): new@0 ny@0 york@1;   "quick, fast": fast@0 quick@0.
 * Output tokens are typed SYNONYM and span the matched input; kept originals keep their own
 * type and offsets. The `synonym` filter (legacy SynonymFilter) orders each position's kept
 * original before the outputs instead (quick@0 fast@0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/internal.h"

typedef struct seq {
    uint8_t **terms;
    uint32_t *lens;
    size_t n;
} seq;

typedef struct rule {
    seq lhs;
    seq *outs;
    size_t n_outs;
    bool keep_orig;
} rule;

struct sc__synmap {
    rule *rules;
    size_t n, cap;
    size_t max_lhs;
};

static void seq_fini(seq *s)
{
    for (size_t i = 0; i < s->n; i++)
        sc_alloc_free(&sc__text_pool, s->terms[i]);
    sc_alloc_free(&sc__text_pool, s->terms);
    sc_alloc_free(&sc__text_pool, s->lens);
    memset(s, 0, sizeof(*s));
}

void sc__synmap_free(sc__synmap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        seq_fini(&m->rules[i].lhs);
        for (size_t j = 0; j < m->rules[i].n_outs; j++)
            seq_fini(&m->rules[i].outs[j]);
        sc_alloc_free(&sc__text_pool, m->rules[i].outs);
    }
    sc_alloc_free(&sc__text_pool, m->rules);
    sc_alloc_free(&sc__text_pool, m);
}

size_t sc__synmap_size(const sc__synmap *m)
{
    return m->n;
}

/* ---- building ------------------------------------------------------------------------------ */

typedef struct acc {
    seq s;
    size_t cap;
    bool bad_posinc;
    uint32_t last_pos;
} acc;

static sc_status acc_sink(void *ctx, const sc_token *t)
{
    acc *a = ctx;
    if (a->s.n > 0 && t->position != a->last_pos + 1)
        a->bad_posinc = true;
    a->last_pos = t->position;
    if (a->s.n == a->cap) {
        size_t nc = a->cap ? 2 * a->cap : 4;
        uint8_t **nt = sc_alloc_realloc(&sc__text_pool, a->s.terms, nc * sizeof(uint8_t *));
        if (!nt)
            return SC_ENOMEM;
        a->s.terms = nt;
        uint32_t *nl = sc_alloc_realloc(&sc__text_pool, a->s.lens, nc * sizeof(uint32_t));
        if (!nl)
            return SC_ENOMEM;
        a->s.lens = nl;
        a->cap = nc;
    }
    uint8_t *c = sc_alloc_malloc(&sc__text_pool, t->len + 1);
    if (!c)
        return SC_ENOMEM;
    memcpy(c, t->term, t->len);
    a->s.terms[a->s.n] = c;
    a->s.lens[a->s.n++] = t->len;
    return SC_OK;
}

static int seq_cmp(const seq *a, const seq *b)
{
    for (size_t i = 0; i < a->n && i < b->n; i++) {
        uint32_t n = a->lens[i] < b->lens[i] ? a->lens[i] : b->lens[i];
        int c = memcmp(a->terms[i], b->terms[i], n);
        if (c)
            return c;
        if (a->lens[i] != b->lens[i])
            return a->lens[i] < b->lens[i] ? -1 : 1;
    }
    return a->n < b->n ? -1 : a->n > b->n ? 1 : 0;
}

static bool seq_eq(const seq *a, const seq *b)
{
    return seq_cmp(a, b) == 0;
}

static sc_status seq_dup(const seq *s, seq *out)
{
    memset(out, 0, sizeof(*out));
    out->terms = sc_alloc_calloc(&sc__text_pool, s->n ? s->n : 1, sizeof(uint8_t *));
    out->lens = sc_alloc_calloc(&sc__text_pool, s->n ? s->n : 1, sizeof(uint32_t));
    if (!out->terms || !out->lens) {
        seq_fini(out);
        return SC_ENOMEM;
    }
    for (size_t i = 0; i < s->n; i++) {
        out->terms[i] = sc_alloc_malloc(&sc__text_pool, s->lens[i] + 1);
        if (!out->terms[i]) {
            out->n = i;
            seq_fini(out);
            return SC_ENOMEM;
        }
        memcpy(out->terms[i], s->terms[i], s->lens[i]);
        out->lens[i] = s->lens[i];
    }
    out->n = s->n;
    return SC_OK;
}

/* Lucene SynonymMap.Builder.add with dedup: outputs of one input merge in order, keep_orig ORs. */
static sc_status map_add(sc__synmap *m, const seq *in, const seq *out, bool keep_orig)
{
    rule *r = NULL;
    for (size_t i = 0; i < m->n; i++)
        if (seq_eq(&m->rules[i].lhs, in)) {
            r = &m->rules[i];
            break;
        }
    if (!r) {
        if (m->n == m->cap) {
            size_t nc = m->cap ? 2 * m->cap : 16;
            rule *nr = sc_alloc_realloc(&sc__text_pool, m->rules, nc * sizeof(rule));
            if (!nr)
                return SC_ENOMEM;
            m->rules = nr;
            m->cap = nc;
        }
        r = &m->rules[m->n];
        memset(r, 0, sizeof(*r));
        SC_TRY(seq_dup(in, &r->lhs));
        m->n++;
        if (in->n > m->max_lhs)
            m->max_lhs = in->n;
    }
    r->keep_orig = r->keep_orig || keep_orig;
    for (size_t j = 0; j < r->n_outs; j++)
        if (seq_eq(&r->outs[j], out))
            return SC_OK;
    seq *no = sc_alloc_realloc(&sc__text_pool, r->outs, (r->n_outs + 1) * sizeof(seq));
    if (!no)
        return SC_ENOMEM;
    r->outs = no;
    SC_TRY(seq_dup(out, &r->outs[r->n_outs]));
    r->n_outs++;
    return SC_OK;
}

/* Splits s on unescaped commas into trimmed, unescaped items (written into buf, NUL-separated).
 * Returns the count. */
static size_t split_items(const char *s, size_t n, char *buf, const char **items, size_t max)
{
    size_t k = 0, o = 0;
    size_t i = 0;
    while (i <= n && k < max) {
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        size_t start_o = o;
        size_t last_non_space = o;
        while (i < n && s[i] != ',') {
            if (s[i] == '\\' && i + 1 < n) {
                buf[o++] = s[i + 1];
                last_non_space = o;
                i += 2;
                continue;
            }
            buf[o++] = s[i];
            if (s[i] != ' ' && s[i] != '\t')
                last_non_space = o;
            i++;
        }
        o = last_non_space;
        buf[o++] = '\0';
        if (o - 1 > start_o)
            items[k++] = buf + start_o;
        i++; /* past the comma (or the end) */
    }
    return k;
}

static sc_status analyze_item(const sc_analyzer *an, const char *item, acc *a)
{
    memset(a, 0, sizeof(*a));
    return sc_analyzer_analyze(an, sc_slice_cstr(item), acc_sink, a);
}

#define MAX_ITEMS 256

static sc_status parse_rule(sc__synmap *m, const char *line, bool expand, const sc_analyzer *an,
                            char *err, size_t err_size, const char *path, size_t idx)
{
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
        n--;
    size_t s0 = 0;
    while (s0 < n && (line[s0] == ' ' || line[s0] == '\t'))
        s0++;
    if (s0 == n || line[s0] == '#')
        return SC_OK;
    const char *arrow = NULL;
    for (size_t i = s0; i + 1 < n; i++) {
        if (line[i] == '\\') {
            i++;
            continue;
        }
        if (line[i] == '=' && line[i + 1] == '>') {
            arrow = line + i;
            break;
        }
    }
    char *buf = sc_alloc_malloc(&sc__text_pool, 2 * n + 4);
    const char **items = sc_alloc_calloc(&sc__text_pool, MAX_ITEMS, sizeof(char *));
    acc *accs = sc_alloc_calloc(&sc__text_pool, MAX_ITEMS, sizeof(acc));
    if (!buf || !items || !accs) {
        sc_alloc_free(&sc__text_pool, buf);
        sc_alloc_free(&sc__text_pool, items);
        sc_alloc_free(&sc__text_pool, accs);
        return SC_ENOMEM;
    }
    size_t n_left, n_right = 0;
    if (arrow) {
        size_t ln = (size_t)(arrow - (line + s0));
        n_left = split_items(line + s0, ln, buf, items, MAX_ITEMS);
        n_right = split_items(arrow + 2, (size_t)(line + n - (arrow + 2)), buf + ln + 2,
                              items + n_left, MAX_ITEMS - n_left);
    } else {
        n_left = split_items(line + s0, n - s0, buf, items, MAX_ITEMS);
    }
    sc_status st = SC_OK;
    size_t n_items = n_left + n_right;
    size_t done = 0;
    for (; done < n_items && st == SC_OK; done++) {
        st = analyze_item(an, items[done], &accs[done]);
        if (st == SC_OK && accs[done].s.n == 0) {
            snprintf(err, err_size, "%s[%zu]: term [%s] was completely eliminated by analyzer",
                     path, idx, items[done]);
            st = SC_EINVAL;
        } else if (st == SC_OK && accs[done].bad_posinc) {
            snprintf(err, err_size, "%s[%zu]: term [%s] analyzed to a token with posinc != 1", path,
                     idx, items[done]);
            st = SC_EINVAL;
        }
    }
    if (st == SC_OK && arrow && (n_left == 0 || n_right == 0)) {
        snprintf(err, err_size, "%s[%zu]: invalid synonym rule [%s]", path, idx, line);
        st = SC_EINVAL;
    }
    if (st == SC_OK) {
        if (arrow) {
            for (size_t i = 0; i < n_left && st == SC_OK; i++)
                for (size_t j = 0; j < n_right && st == SC_OK; j++)
                    st = map_add(m, &accs[i].s, &accs[n_left + j].s, false);
        } else if (expand) {
            for (size_t i = 0; i < n_left && st == SC_OK; i++)
                for (size_t j = 0; j < n_left && st == SC_OK; j++)
                    if (i != j)
                        st = map_add(m, &accs[i].s, &accs[j].s, true);
        } else {
            for (size_t i = 0; i < n_left && st == SC_OK; i++)
                st = map_add(m, &accs[i].s, &accs[0].s, false);
        }
    }
    for (size_t i = 0; i < done; i++)
        seq_fini(&accs[i].s);
    sc_alloc_free(&sc__text_pool, buf);
    sc_alloc_free(&sc__text_pool, items);
    sc_alloc_free(&sc__text_pool, accs);
    return st;
}

static int rule_cmp(const void *pa, const void *pb)
{
    return seq_cmp(&((const rule *)pa)->lhs, &((const rule *)pb)->lhs);
}

sc_status sc__synmap_new(const char *const *rules, size_t n, bool expand, bool lenient,
                         const sc_analyzer *an, const char *path, sc__synmap **out, char *err,
                         size_t err_size)
{
    *out = NULL;
    sc__synmap *m = sc_alloc_calloc(&sc__text_pool, 1, sizeof(*m));
    if (!m)
        return SC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        sc_status st = parse_rule(m, rules[i], expand, an, err, err_size, path, i);
        if (st == SC_EINVAL && lenient)
            continue;
        if (st != SC_OK) {
            sc__synmap_free(m);
            return st;
        }
    }
    if (m->n)
        qsort(m->rules, m->n, sizeof(rule), rule_cmp);
    *out = m;
    return SC_OK;
}

/* ---- the filter stage ---------------------------------------------------------------------- */

/* Compares rule r's left side, first j terms, with the queue's first j tokens. */
static int prefix_cmp(const rule *r, const sc__syn_tok *q, size_t j)
{
    for (size_t i = 0; i < j; i++) {
        if (i >= r->lhs.n)
            return -1;
        uint32_t a = r->lhs.lens[i];
        size_t b = q[i].len;
        size_t n = a < b ? a : b;
        int c = memcmp(r->lhs.terms[i], q[i].term, n);
        if (c)
            return c;
        if (a != b)
            return a < b ? -1 : 1;
    }
    return 0;
}

/* First rule whose lhs prefix of length j is >= the queue's first j tokens. */
static size_t lower_bound(const sc__synmap *m, const sc__syn_tok *q, size_t j)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (prefix_cmp(&m->rules[mid], q, j) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The longest rule matching q[0..k); *more says a longer rule could still match if more
 * tokens came. */
static const rule *find(const sc__synmap *m, const sc__syn_tok *q, size_t n, size_t *k, bool *more)
{
    const rule *best = NULL;
    *k = 0;
    *more = false;
    for (size_t j = 1; j <= n; j++) {
        size_t lb = lower_bound(m, q, j);
        if (lb >= m->n || prefix_cmp(&m->rules[lb], q, j) != 0)
            return best;
        const rule *r = &m->rules[lb];
        if (r->lhs.n == j) {
            best = r;
            *k = j;
            if (lb + 1 < m->n && prefix_cmp(&m->rules[lb + 1], q, j) == 0)
                *more = j == n;
        } else {
            *more = j == n;
        }
    }
    return best;
}

typedef struct gtok {
    const uint8_t *term;
    size_t len;
    size_t node;
    uint32_t start, end;
    sc_token_type type;
    size_t order;
    size_t to; /* the node the token ends at (graph: position length = to - node) */
} gtok;

static int gtok_cmp(const void *pa, const void *pb)
{
    const gtok *a = pa, *b = pb;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order ? 1 : 0;
}

/* Emits the graph of a match of q[0..k) by rule r. */
static sc_status emit_match(bool legacy, const rule *r, const sc__syn_tok *q, size_t k,
                            sc__syn_emit emit, void *ctx)
{
    size_t total = 0;
    for (size_t i = 0; i < r->n_outs; i++)
        total += r->outs[i].n;
    if (r->keep_orig)
        total += k;
    gtok *g = sc_alloc_calloc(&sc__text_pool, total ? total : 1, sizeof(gtok));
    if (!g)
        return SC_ENOMEM;
    uint32_t span_start = q[0].start, span_end = q[k - 1].end;
    size_t n = 0, next_node = 1;
    size_t orig_first = legacy ? 0 : r->n_outs; /* legacy: the original path sorts first */
    /* the original's internal nodes come after the outputs' (graph); every path ends at the
     * node after all of them */
    size_t out_nodes = 0;
    for (size_t i = 0; i < r->n_outs; i++)
        out_nodes += r->outs[i].n - 1;
    size_t end_node = 1 + out_nodes + (r->keep_orig ? k - 1 : 0);
    if (r->keep_orig) {
        for (size_t t = 0; t < k; t++)
            g[n++] = (gtok){q[t].term,
                            q[t].len,
                            t == 0 ? 0 : 1 + out_nodes + (t - 1),
                            q[t].start,
                            q[t].end,
                            q[t].type,
                            orig_first * 1000000 + t,
                            t + 1 < k ? 1 + out_nodes + t : end_node};
    }
    for (size_t i = 0; i < r->n_outs; i++) {
        const seq *o = &r->outs[i];
        size_t base = next_node;
        for (size_t t = 0; t < o->n; t++) {
            size_t node = t == 0 ? 0 : next_node++;
            size_t order = (legacy ? i + 1 : i) * 1000000 + t;
            g[n++] = (gtok){o->terms[t],
                            o->lens[t],
                            node,
                            span_start,
                            span_end,
                            SC_TOKEN_SYNONYM,
                            order,
                            t + 1 < o->n ? base + t : end_node};
        }
    }
    if (legacy) {
        /* legacy SynonymFilter: output token t sits at input position t (stacked after the
         * original there, with that original's offsets when the rule keeps it) */
        for (size_t i = 0; i < n; i++) {
            if (g[i].type == SC_TOKEN_SYNONYM) {
                size_t t = g[i].order % 1000000;
                g[i].node = t;
                if (t > 0 && t < k) {
                    g[i].start = q[t].start;
                    g[i].end = q[t].end;
                }
            } else {
                g[i].node = g[i].order % 1000000;
            }
        }
    }
    qsort(g, n, sizeof(gtok), gtok_cmp);
    sc_status st = SC_OK;
    size_t last = 0;
    for (size_t i = 0; i < n && st == SC_OK; i++) {
        uint32_t posinc = i == 0 ? q[0].posinc : (uint32_t)(g[i].node - last);
        last = g[i].node;
        /* the legacy SynonymFilter's tokens each span one position */
        uint32_t poslen = legacy ? 1 : (uint32_t)(g[i].to - g[i].node);
        st = emit(ctx, g[i].term, g[i].len, posinc, g[i].start, g[i].end, g[i].type, poslen);
    }
    sc_alloc_free(&sc__text_pool, g);
    return st;
}

static void pop(sc__syn_state *s, size_t k)
{
    for (size_t i = 0; i < k; i++)
        sc_alloc_free(&sc__text_pool, s->q[i].term);
    if (s->n > k)
        memmove(s->q, s->q + k, (s->n - k) * sizeof(*s->q));
    s->n -= k;
}

static sc_status drain(const sc__filter *f, sc__syn_state *s, bool final, sc__syn_emit emit,
                       void *ctx)
{
    while (s->n > 0) {
        size_t k;
        bool more;
        const rule *r = find(f->syn, s->q, s->n, &k, &more);
        if (more && !final)
            return SC_OK;
        if (r) {
            SC_TRY(emit_match(f->flag, r, s->q, k, emit, ctx));
            pop(s, k);
        } else {
            const sc__syn_tok *t = &s->q[0];
            SC_TRY(emit(ctx, t->term, t->len, t->posinc, t->start, t->end, t->type, 1));
            pop(s, 1);
        }
    }
    return SC_OK;
}

sc_status sc__syn_push(const sc__filter *f, sc__syn_state *s, const uint8_t *term, size_t len,
                       uint32_t posinc, uint32_t start, uint32_t end, sc_token_type type,
                       sc__syn_emit emit, void *ctx)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 8;
        sc__syn_tok *nq = sc_alloc_realloc(&sc__text_pool, s->q, nc * sizeof(*nq));
        if (!nq)
            return SC_ENOMEM;
        s->q = nq;
        s->cap = nc;
    }
    uint8_t *c = sc_alloc_malloc(&sc__text_pool, len ? len : 1);
    if (!c)
        return SC_ENOMEM;
    memcpy(c, term, len);
    s->q[s->n++] = (sc__syn_tok){c, len, posinc, start, end, type};
    return drain(f, s, false, emit, ctx);
}

sc_status sc__syn_flush(const sc__filter *f, sc__syn_state *s, sc__syn_emit emit, void *ctx)
{
    return drain(f, s, true, emit, ctx);
}

void sc__syn_state_fini(sc__syn_state *s)
{
    pop(s, s->n);
    sc_alloc_free(&sc__text_pool, s->q);
    memset(s, 0, sizeof(*s));
}
